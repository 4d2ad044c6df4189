//! Back end: the Triton kernel printer, the Python ("assembly APPy") printer, launchers from
//! templates, and host code spliced from the source text (`host`; `imports`: the imports and
//! decorators the output drops).
//!
//! Files import downward only: launchers (`launch`) → the printers of each kernel form
//! (`triton`, `tiles`, `blocked`) → `analysis` → the shared types (`kernel_code`, `hash`).

mod analysis;
pub mod distribute_host;
mod hash;
pub mod host;
pub mod imports;
pub mod kernel_code;
pub mod launch;
pub mod python;
pub mod templates;
pub mod tiles;
pub mod triton;
pub mod writer;

/// Helpers for the printers' tests: a source compiled with the defaults, one function of it.
#[cfg(test)]
pub(crate) mod test_support {
    use crate::driver::{compile, Options};
    use crate::frontend::source::SourceFile;

    /// The generated module for `src`, with defaults.
    pub fn generated(src: &str) -> String {
        compile(&SourceFile::new("t.py", src), &Options::default())
            .unwrap()
            .text
    }

    /// The text of one `def` in the generated module, up to the next top-level line.
    pub fn function<'a>(module: &'a str, name: &str) -> &'a str {
        let start = module
            .find(&format!("def {name}("))
            .unwrap_or_else(|| panic!("no {name} in:\n{module}"));
        let rest = &module[start..];
        let end = rest[1..].find("\n\n\n").map_or(rest.len(), |e| e + 1);
        &rest[..end]
    }

    /// The kernel `_{f}_kernel0` of the module compiled from `src`.
    pub fn kernel_of(src: &str, f: &str) -> String {
        function(&generated(src), &format!("_{f}_kernel0")).to_string()
    }

    /// Whether `k` has a line that is `line` followed by its `# t.py:N` comment, or `line` alone.
    pub fn has_line(k: &str, line: &str) -> bool {
        k.lines().any(|l| {
            let l = l.trim();
            l == line
                || l.strip_prefix(line)
                    .is_some_and(|rest| rest.starts_with("  # t.py:"))
        })
    }

    /// The lines of `k` without their `# t.py:N` comments, indentation kept.
    pub fn code_lines(k: &str) -> Vec<&str> {
        k.lines()
            .map(|l| l.split("  # t.py:").next().unwrap_or(l))
            .collect()
    }

    /// The position of the line of `lines` that is `line` (indentation aside).
    pub fn line_at(lines: &[&str], line: &str) -> usize {
        lines
            .iter()
            .position(|l| l.trim() == line)
            .unwrap_or_else(|| panic!("no `{line}` in:\n{}", lines.join("\n")))
    }
}
