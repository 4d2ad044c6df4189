//! Diagnostics: `file:line:col: error: message` (or `warning:`), the source line and a caret,
//! rustc style.

use crate::frontend::source::{SourceFile, Span};
use codespan_reporting::diagnostic::{Diagnostic as CsDiagnostic, Label};
use codespan_reporting::term::{self, Config};

/// Errors stop the compilation; warnings are returned beside a successful compile
/// ([`crate::driver::Compiled::warnings`]) and only fail a run under `--deny-warnings`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
    /// What a run did, said only when asked (`-v`): never fails a run.
    Note,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Diagnostic {
    pub severity: Severity,
    pub span: Span,
    pub message: String,
    /// Short text under the caret.
    pub label: Option<String>,
    /// `help: ...` lines (suggestions).
    pub help: Vec<String>,
}

impl Diagnostic {
    pub fn error(span: Span, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Error,
            span,
            message: message.into(),
            label: None,
            help: vec![],
        }
    }

    pub fn warning(span: Span, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(span, message)
        }
    }

    pub fn note(span: Span, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Note,
            ..Diagnostic::error(span, message)
        }
    }

    pub fn is_warning(&self) -> bool {
        self.severity == Severity::Warning
    }

    pub fn with_label(mut self, label: impl Into<String>) -> Self {
        self.label = Some(label.into());
        self
    }

    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help.push(help.into());
        self
    }

    /// Renders as `file:line:col: error: message` (or `warning:`) followed by the annotated
    /// source line.
    pub fn render(&self, file: &SourceFile) -> String {
        // Spans are byte ranges that may (from a bad position) fall inside a character or past
        // the end: snap them to character boundaries of the text.
        let floor = |mut i: usize| {
            i = i.min(file.text.len());
            while !file.text.is_char_boundary(i) {
                i -= 1;
            }
            i
        };
        let mut span = Span::new(
            floor(self.span.start as usize),
            floor(self.span.end as usize),
        );
        let line = file.line_of(span.start as usize);
        let line_start = file.line_start(line);
        // The line's text without its line break: carets stay on this one line.
        let line_stop = line_start + file.line_text(line).len();
        if span.start as usize >= line_stop && line_stop > line_start {
            // At the end of the line (an unexpected newline): point at its last character.
            span.start = floor(line_stop - 1) as u32;
        }
        span.end = span.end.min(line_stop as u32);
        if span.end <= span.start {
            // One character: the one at the start.
            let len = file.text[span.start as usize..]
                .chars()
                .next()
                .map_or(0, char::len_utf8);
            span.end = span.start + len as u32;
        }
        let col = file.text[file.line_start(line)..span.start as usize]
            .chars()
            .count()
            + 1;
        let severity = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
        };
        let mut out = format!(
            "{}:{}:{}: {severity}: {}\n",
            file.name, line, col, self.message
        );
        // Only the line is handed to codespan (which would index the whole file each time),
        // and of a long line only a window around the span.
        let (from, to) = window(&file.text, line_start, line_stop, span);
        let cs_file = LineFile {
            name: &file.name,
            text: &file.text[from..to],
            line,
            columns_before: file.text[line_start..from].chars().count(),
        };
        let span = Span::new(
            span.start as usize - from,
            (span.end as usize).clamp(span.start as usize, to) - from,
        );
        let mut label = Label::primary((), span.range());
        if let Some(l) = &self.label {
            label = label.with_message(l);
        }
        let diag = match self.severity {
            Severity::Error => CsDiagnostic::error(),
            Severity::Warning => CsDiagnostic::warning(),
            Severity::Note => CsDiagnostic::note(),
        };
        let diag = diag.with_labels(vec![label]).with_notes(
            self.help
                .iter()
                .map(|h| format!("help: {h}"))
                .collect::<Vec<_>>(),
        );
        let mut buf = String::new();
        let config = Config {
            start_context_lines: 0,
            end_context_lines: 0,
            ..Config::default()
        };
        if term::emit_to_string(&mut buf, &config, &cs_file, &diag).is_ok() {
            let snippet = buf;
            // codespan prints an empty "error" header line first; our own header replaces it.
            for l in snippet.lines().skip(1) {
                out.push_str(l);
                out.push('\n');
            }
        }
        out
    }
}

pub type Result<T> = std::result::Result<T, Diagnostic>;

/// Lines longer than this are shown as a window of about this many bytes around the span.
const MAX_SHOWN: usize = 160;

/// The bytes of the line `line_start..line_stop` to show for `span`.
fn window(text: &str, line_start: usize, line_stop: usize, span: Span) -> (usize, usize) {
    if line_stop - line_start <= MAX_SHOWN {
        return (line_start, line_stop);
    }
    let boundary = |mut i: usize| {
        while !text.is_char_boundary(i) {
            i -= 1;
        }
        i
    };
    let from = boundary(
        (span.start as usize)
            .saturating_sub(MAX_SHOWN / 2)
            .max(line_start),
    );
    (from, boundary((from + MAX_SHOWN).min(line_stop)))
}

/// One line (or a window of it) as codespan sees a file: line and column numbers are the
/// real ones.
struct LineFile<'a> {
    name: &'a str,
    text: &'a str,
    line: usize,
    columns_before: usize,
}

impl<'a> codespan_reporting::files::Files<'a> for LineFile<'a> {
    type FileId = ();
    type Name = &'a str;
    type Source = &'a str;
    fn name(&'a self, (): ()) -> std::result::Result<&'a str, codespan_reporting::files::Error> {
        Ok(self.name)
    }
    fn source(&'a self, (): ()) -> std::result::Result<&'a str, codespan_reporting::files::Error> {
        Ok(self.text)
    }
    fn line_index(
        &'a self,
        (): (),
        _byte_index: usize,
    ) -> std::result::Result<usize, codespan_reporting::files::Error> {
        Ok(self.line - 1)
    }
    fn column_number(
        &'a self,
        (): (),
        _line_index: usize,
        byte_index: usize,
    ) -> std::result::Result<usize, codespan_reporting::files::Error> {
        let i = byte_index.min(self.text.len());
        Ok(self.columns_before + self.text[..i].chars().count() + 1)
    }
    fn line_range(
        &'a self,
        (): (),
        _line_index: usize,
    ) -> std::result::Result<std::ops::Range<usize>, codespan_reporting::files::Error> {
        Ok(0..self.text.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_position_line_and_caret() {
        let f = SourceFile::new("k.py", "def f():\n    #pragma paralel for\n");
        let start = f.text.find("paralel").unwrap();
        let d = Diagnostic::error(Span::new(start, start + 7), "unknown directive `paralel`")
            .with_help("did you mean `parallel`?");
        let text = d.render(&f);
        assert!(
            text.starts_with("k.py:2:13: error: unknown directive `paralel`\n"),
            "{text}"
        );
        assert!(text.contains("#pragma paralel for"), "{text}");
        assert!(text.contains("^^^^^^^"), "{text}");
        assert!(text.contains("help: did you mean `parallel`?"), "{text}");
    }

    #[test]
    fn warnings_render_like_errors() {
        let f = SourceFile::new("k.py", "def f():\n    #PRAGMA parallel for\n");
        let start = f.text.find("#PRAGMA").unwrap();
        let d = Diagnostic::warning(Span::new(start, start + 7), "not a pragma")
            .with_help("write `#pragma parallel for`");
        assert!(d.is_warning());
        let text = d.render(&f);
        assert!(
            text.starts_with("k.py:2:5: warning: not a pragma\n"),
            "{text}"
        );
        assert!(text.contains("#PRAGMA parallel for"), "{text}");
        assert!(text.contains("^^^^^^^"), "{text}");
        assert!(
            text.contains("help: write `#pragma parallel for`"),
            "{text}"
        );
    }
}
