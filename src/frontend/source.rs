//! Source text, byte spans and their `line:col` positions.

/// A byte range in the one source file being compiled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    /// For nodes the compiler makes up; never shown to users.
    pub const DUMMY: Span = Span { start: 0, end: 0 };

    pub fn new(start: usize, end: usize) -> Self {
        Span {
            start: start as u32,
            end: end as u32,
        }
    }

    /// The smallest span covering both.
    pub fn to(self, other: Span) -> Span {
        if self == Span::DUMMY {
            return other;
        }
        if other == Span::DUMMY {
            return self;
        }
        Span {
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }

    /// The same span in a text that starts `by` bytes earlier.
    pub fn shifted(self, by: usize) -> Span {
        Span::new(self.start as usize + by, self.end as usize + by)
    }

    pub fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }
}

impl From<rustpython_parser::text_size::TextRange> for Span {
    fn from(r: rustpython_parser::text_size::TextRange) -> Self {
        Span {
            start: r.start().into(),
            end: r.end().into(),
        }
    }
}

/// The file being compiled: its display name, text, and where each line starts.
pub struct SourceFile {
    pub name: String,
    pub text: String,
    line_starts: Vec<usize>,
}

impl SourceFile {
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> Self {
        let text = text.into();
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        SourceFile {
            name: name.into(),
            text,
            line_starts,
        }
    }

    /// 1-based line of a byte offset.
    pub fn line_of(&self, offset: usize) -> usize {
        match self.line_starts.binary_search(&offset) {
            Ok(i) => i + 1,
            Err(i) => i,
        }
    }

    /// Byte offset where 1-based `line` starts.
    pub fn line_start(&self, line: usize) -> usize {
        self.line_starts
            .get(line - 1)
            .copied()
            .unwrap_or(self.text.len())
    }

    /// Byte offset just past the end of 1-based `line`, including its newline.
    pub fn line_end(&self, line: usize) -> usize {
        self.line_starts
            .get(line)
            .copied()
            .unwrap_or(self.text.len())
    }

    pub fn line_count(&self) -> usize {
        self.line_starts.len()
    }

    /// The text of 1-based `line`, without its line break.
    pub fn line_text(&self, line: usize) -> &str {
        let s = &self.text[self.line_start(line)..self.line_end(line)];
        s.trim_end_matches(['\n', '\r'])
    }

    pub fn slice(&self, span: Span) -> &str {
        &self.text[span.range()]
    }

    /// Nothing but `span` (and a trailing comment) stands on the lines it covers: replacing
    /// those lines replaces exactly it (`a = 1; b = 2` shares a line).
    pub fn alone_on_lines(&self, span: Span) -> bool {
        let (start, end) = (span.start as usize, span.end as usize);
        let before = &self.text[self.line_start(self.line_of(start))..start];
        let after = &self.text[end..self.line_end(self.line_of(end))];
        let after = after.trim_start_matches([' ', '\t']);
        before.trim().is_empty() && (after.is_empty() || after.starts_with(['\n', '\r', '#']))
    }

    /// The name tokens of the lines `span` covers (a function: its `def` line to its end), each
    /// with where it starts. Tokens, not the IR, are what decides whether a name is used at all:
    /// `return v` or a host call the IR keeps as `Other` still names `v`.
    pub fn name_tokens(&self, span: Span) -> Vec<(String, u32)> {
        use rustpython_parser::{lexer::lex, Mode, Tok};
        let base = self.line_start(self.line_of(span.start as usize));
        let text = &self.text[base..(span.end as usize).min(self.text.len())];
        lex(text, Mode::Module)
            .flatten()
            .filter_map(|(tok, range)| match tok {
                Tok::Name { name } => Some((name, Span::from(range).shifted(base).start)),
                _ => None,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_statement_sharing_its_line_is_not_alone_on_it() {
        let f = SourceFile::new(
            "x.py",
            "    a = 1\n    b = 2; c = 3\n    d = 4  # why\n    e = 5",
        );
        let at = |s: &str| {
            let start = f.text.find(s).unwrap();
            Span::new(start, start + s.len())
        };
        assert!(f.alone_on_lines(at("a = 1")));
        assert!(f.alone_on_lines(at("d = 4")));
        assert!(f.alone_on_lines(at("e = 5")));
        assert!(!f.alone_on_lines(at("b = 2")));
        assert!(!f.alone_on_lines(at("c = 3")));
    }

    #[test]
    fn lines_are_one_based() {
        let f = SourceFile::new("x.py", "a\nbc\n\nd");
        assert_eq!(f.line_of(0), 1);
        assert_eq!(f.line_of(2), 2);
        assert_eq!(f.line_of(3), 2);
        assert_eq!(f.line_of(5), 3);
        assert_eq!(f.line_text(2), "bc");
        assert_eq!(f.line_text(4), "d");
        assert_eq!(f.line_count(), 4);
    }
}
