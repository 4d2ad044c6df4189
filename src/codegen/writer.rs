//! An indent-aware line writer for the printers.

#[derive(Default)]
pub struct Writer {
    out: String,
    level: usize,
    unit: &'static str,
}

impl Writer {
    pub fn new(base_level: usize) -> Self {
        Writer {
            out: String::new(),
            level: base_level,
            unit: "    ",
        }
    }

    /// Writes one line at the current indentation.
    pub fn line(&mut self, text: impl AsRef<str>) {
        let text = text.as_ref();
        if text.is_empty() {
            self.out.push('\n');
            return;
        }
        for _ in 0..self.level {
            self.out.push_str(self.unit);
        }
        self.out.push_str(text);
        self.out.push('\n');
    }

    /// Runs `f` one level deeper.
    pub fn indented(&mut self, f: impl FnOnce(&mut Writer)) {
        self.level += 1;
        f(self);
        self.level -= 1;
    }

    pub fn indent(&mut self) {
        self.level += 1;
    }

    pub fn dedent(&mut self) {
        self.level -= 1;
    }

    pub fn finish(self) -> String {
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indents_nested_blocks() {
        let mut w = Writer::new(0);
        w.line("for i in range(3):");
        w.indented(|w| {
            w.line("x = i");
            w.line("");
        });
        w.line("y = 1");
        assert_eq!(w.finish(), "for i in range(3):\n    x = i\n\ny = 1\n");
    }
}
