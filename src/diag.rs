//! Diagnostics: `file:line:col: error: message` (or `warning:`), the source line and a caret,
//! rustc style.

use crate::frontend::source::{SourceFile, Span};
use codespan_reporting::diagnostic::{Diagnostic as CsDiagnostic, Label};
use codespan_reporting::files::SimpleFile;
use codespan_reporting::term::{self, Config};

/// Errors stop the compilation; warnings are returned beside a successful compile
/// ([`crate::driver::Compiled::warnings`]) and only fail a run under `--deny-warnings`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
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
        let line = file.line_of(self.span.start as usize);
        let mut span = self.span;
        let line_start = file.line_start(line);
        // The line's text without its line break: carets stay on this one line.
        let line_stop = line_start + file.line_text(line).len();
        if span.start as usize >= line_stop && line_stop > line_start {
            // At the end of the line (an unexpected newline): point at its last character.
            span.start = (line_stop - 1) as u32;
        }
        span.end = span.end.min(line_stop as u32);
        if span.end <= span.start {
            span.end = (span.start as usize + 1).min(file.text.len()) as u32;
        }
        let col = file.text[file.line_start(line)..span.start as usize]
            .chars()
            .count()
            + 1;
        let severity = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        let mut out = format!(
            "{}:{}:{}: {severity}: {}\n",
            file.name, line, col, self.message
        );
        let cs_file = SimpleFile::new(&file.name, &file.text);
        let mut label = Label::primary((), span.range());
        if let Some(l) = &self.label {
            label = label.with_message(l);
        }
        let diag = match self.severity {
            Severity::Error => CsDiagnostic::error(),
            Severity::Warning => CsDiagnostic::warning(),
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
