//! Back end: the Triton kernel printer, the Python ("assembly APPy") printer, launchers from
//! templates, and host code spliced from the source text.

mod analysis;
pub mod blocked;
mod hash;
pub mod host;
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
}
