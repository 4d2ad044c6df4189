//! Settings shared by the command line and `[tool.appyc]` in `pyproject.toml`, and the search
//! for the project root that both the configuration and the output's path independence use.

use crate::diag::Diagnostic;
use crate::driver::Emit;
use crate::frontend::source::{SourceFile, Span};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// Every setting a run can take, each `None` when not given. The command line's values are laid
/// over the configuration's with [`Settings::over`]; a new flag or key is one more field here.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Settings {
    /// Source files and directories.
    pub source: Option<Vec<PathBuf>>,
    /// The output file, or directory for trees and several inputs.
    pub output: Option<PathBuf>,
    /// The output file name pattern, `{stem}` being the source's file stem.
    pub naming: Option<String>,
    pub emit: Option<Emit>,
    pub mvl: Option<u32>,
    pub auto_simd: Option<bool>,
    /// Warnings become errors. Read from `deny-warnings`; the driver option it maps onto comes
    /// with the `--deny-warnings` flag.
    pub deny_warnings: Option<bool>,
    /// Tune launch configurations on the GPU (`autotune`, `--no-autotune`).
    pub autotune: Option<bool>,
    /// Run eligible host loops as persistent kernels (`persistent`, `--no-persistent`).
    pub persistent: Option<bool>,
}

impl Settings {
    /// `self`'s values where given, `base`'s otherwise.
    pub fn over(self, base: Settings) -> Settings {
        Settings {
            source: self.source.or(base.source),
            output: self.output.or(base.output),
            naming: self.naming.or(base.naming),
            emit: self.emit.or(base.emit),
            mvl: self.mvl.or(base.mvl),
            auto_simd: self.auto_simd.or(base.auto_simd),
            deny_warnings: self.deny_warnings.or(base.deny_warnings),
            autotune: self.autotune.or(base.autotune),
            persistent: self.persistent.or(base.persistent),
        }
    }
}

/// The directory that names are taken relative to: the nearest ancestor holding a
/// `pyproject.toml` (which is then the configuration) or a `.git`.
#[derive(Debug, Clone)]
pub struct Root {
    pub dir: PathBuf,
    pub pyproject: Option<PathBuf>,
}

/// Searches from `start` (an absolute directory) upwards.
pub fn find_root(start: &Path) -> Option<Root> {
    for dir in start.ancestors() {
        let pyproject = dir.join("pyproject.toml");
        if pyproject.is_file() {
            return Some(Root {
                dir: dir.to_path_buf(),
                pyproject: Some(pyproject),
            });
        }
        // `.git` is a directory in a clone and a file in a worktree.
        if dir.join(".git").exists() {
            return Some(Root {
                dir: dir.to_path_buf(),
                pyproject: None,
            });
        }
    }
    None
}

/// `MVL` must be a power of two up to this (the command line's rule as well).
pub const MAX_MVL: u32 = 65536;

pub fn check_mvl(n: i64) -> Result<u32, String> {
    if n <= 0 || n > MAX_MVL as i64 || !(n as u64).is_power_of_two() {
        return Err(format!("{n} is not a power of two up to {MAX_MVL}"));
    }
    Ok(n as u32)
}

/// A file name pattern must name one file in the output directory and depend on the source.
pub fn check_naming(pattern: &str) -> Result<(), String> {
    if !pattern.contains("{stem}") {
        return Err(format!(
            "naming pattern `{pattern}` does not contain `{{stem}}`"
        ));
    }
    if pattern.contains('/') || pattern.contains('\\') {
        return Err(format!(
            "naming pattern `{pattern}` must be a file name, without directories"
        ));
    }
    if !pattern.ends_with(".py") {
        return Err(format!("naming pattern `{pattern}` must end in `.py`"));
    }
    Ok(())
}

#[derive(Deserialize)]
struct Pyproject {
    #[serde(default)]
    tool: Option<Tools>,
}

#[derive(Deserialize)]
struct Tools {
    #[serde(default)]
    appyc: Option<toml::Spanned<Table>>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

// Unknown keys are errors: a misspelt option must not be ignored silently.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct Table {
    source: Option<toml::Spanned<OneOrMany>>,
    output: Option<String>,
    naming: Option<toml::Spanned<String>>,
    mvl: Option<toml::Spanned<i64>>,
    auto_simd: Option<bool>,
    deny_warnings: Option<bool>,
    autotune: Option<bool>,
    persistent: Option<bool>,
}

#[derive(Debug)]
pub enum LoadError {
    /// The file cannot be read: a message.
    Unreadable(String),
    /// Bad TOML, an unknown key or a bad value: a rendered `file:line:col: error:` diagnostic.
    Invalid(String),
}

/// Reads `[tool.appyc]` from a `pyproject.toml`; relative paths in it are relative to the
/// file's directory. A missing table gives empty settings.
pub fn load(path: &Path) -> Result<Settings, LoadError> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|e| LoadError::Unreadable(format!("cannot read `{name}`: {e}")))?;
    parse(path, name, text).map_err(LoadError::Invalid)
}

fn parse(path: &Path, name: String, text: String) -> Result<Settings, String> {
    let file = SourceFile::new(name, text);
    let error = |span: std::ops::Range<usize>, msg: String| {
        Diagnostic::error(Span::new(span.start, span.end.max(span.start)), msg).render(&file)
    };
    let doc: Pyproject = toml::from_str(&file.text).map_err(|e| {
        let span = e.span().unwrap_or(0..0);
        error(span, e.message().trim_end().to_string())
    })?;
    let Some(table) = doc.tool.and_then(|t| t.appyc) else {
        return Ok(Settings::default());
    };
    let table = table.into_inner();
    let base = path.parent().unwrap_or(Path::new("."));
    let mut s = Settings {
        output: table.output.map(|o| base.join(o)),
        auto_simd: table.auto_simd,
        deny_warnings: table.deny_warnings,
        autotune: table.autotune,
        persistent: table.persistent,
        ..Settings::default()
    };
    if let Some(src) = table.source {
        let span = src.span();
        let list = match src.into_inner() {
            OneOrMany::One(one) => vec![one],
            OneOrMany::Many(many) => many,
        };
        if list.is_empty() {
            return Err(error(span, "`source` is an empty list".to_string()));
        }
        s.source = Some(list.into_iter().map(|p| base.join(p)).collect());
    }
    if let Some(naming) = table.naming {
        check_naming(naming.get_ref()).map_err(|m| error(naming.span(), m))?;
        s.naming = Some(naming.into_inner());
    }
    if let Some(mvl) = table.mvl {
        s.mvl =
            Some(check_mvl(*mvl.get_ref()).map_err(|m| error(mvl.span(), format!("mvl: {m}")))?);
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load_text(text: &str) -> Result<Settings, String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pyproject.toml");
        std::fs::write(&path, text).unwrap();
        load(&path).map_err(|e| match e {
            LoadError::Invalid(e) => e.replace(&path.display().to_string(), "pyproject.toml"),
            LoadError::Unreadable(e) => panic!("{e}"),
        })
    }

    #[test]
    fn every_key_maps_onto_a_setting() {
        let s = load_text(
            "[project]\nname = \"x\"\n[tool.black]\nline-length = 99\n[tool.appyc]\n\
             source = [\"src\", \"more/k.py\"]\noutput = \"gen\"\nnaming = \"{stem}_gpu.py\"\n\
             mvl = 256\nauto-simd = false\ndeny-warnings = true\n",
        )
        .unwrap();
        let src = s.source.unwrap();
        assert!(src[0].ends_with("src") && src[1].ends_with("more/k.py"));
        assert!(
            src[0].is_absolute(),
            "relative to the pyproject's directory"
        );
        assert!(s.output.unwrap().ends_with("gen"));
        assert_eq!(s.naming.as_deref(), Some("{stem}_gpu.py"));
        assert_eq!(s.mvl, Some(256));
        assert_eq!(s.auto_simd, Some(false));
        assert_eq!(s.deny_warnings, Some(true));
        assert_eq!(s.emit, None);
    }

    #[test]
    fn no_table_no_settings() {
        assert_eq!(
            load_text("[project]\nname = \"x\"\n").unwrap(),
            Settings::default()
        );
        let one = load_text("[tool.appyc]\nsource = \"k.py\"\n").unwrap();
        assert_eq!(one.source.unwrap().len(), 1);
    }

    #[test]
    fn unknown_key_is_an_error_at_its_line() {
        let e =
            load_text("[project]\nname = \"x\"\n\n[tool.appyc]\nmvl = 128\nauto_simd = false\n")
                .unwrap_err();
        assert!(
            e.starts_with("pyproject.toml:6:1: error: unknown field `auto_simd`"),
            "{e}"
        );
        assert!(e.contains("auto-simd"), "the known keys are listed: {e}");
    }

    #[test]
    fn bad_values_are_errors_at_their_line() {
        let e = load_text("[tool.appyc]\nmvl = 100\n").unwrap_err();
        assert!(
            e.starts_with("pyproject.toml:2:7: error: mvl: 100 is not a power of two"),
            "{e}"
        );
        let e = load_text("[tool.appyc]\nnaming = \"gen.py\"\n").unwrap_err();
        assert!(
            e.starts_with("pyproject.toml:2:10: error: naming pattern"),
            "{e}"
        );
        let e = load_text("[tool.appyc]\nauto-simd = \"no\"\n").unwrap_err();
        assert!(e.starts_with("pyproject.toml:2:13: error:"), "{e}");
        let e = load_text("[tool.appyc\n").unwrap_err();
        assert!(e.starts_with("pyproject.toml:1:"), "{e}");
    }

    #[test]
    fn command_line_overrides_key_by_key() {
        let config = Settings {
            mvl: Some(256),
            auto_simd: Some(false),
            output: Some("gen".into()),
            ..Settings::default()
        };
        let cli = Settings {
            mvl: Some(512),
            ..Settings::default()
        };
        let s = cli.over(config);
        assert_eq!(s.mvl, Some(512));
        assert_eq!(s.auto_simd, Some(false));
        assert_eq!(s.output, Some(PathBuf::from("gen")));
    }

    #[test]
    fn root_is_the_nearest_pyproject_or_git() {
        let dir = tempfile::tempdir().unwrap();
        let top = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(top.join("a/b/c")).unwrap();
        std::fs::create_dir_all(top.join(".git")).unwrap();
        std::fs::write(top.join("a/pyproject.toml"), "").unwrap();
        let r = find_root(&top.join("a/b/c")).unwrap();
        assert_eq!(r.dir, top.join("a"));
        assert_eq!(r.pyproject, Some(top.join("a/pyproject.toml")));
        let r = find_root(&top).unwrap();
        assert_eq!((r.dir, r.pyproject), (top.clone(), None));
    }
}
