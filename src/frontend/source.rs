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
