//! The strict pragma grammar and warnings on the command line: each malformed pragma is an
//! error at the first unexpected character (`file:line:col`, the line, a caret; exit 1, the
//! output untouched); a comment that looks like a pragma but is not one is a warning (exit 0)
//! unless `--deny-warnings` (exit 1, nothing written).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn appyc_in(cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_appyc"))
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("appyc runs")
}

fn appyc(args: &[&str]) -> Output {
    appyc_in(Path::new(env!("CARGO_MANIFEST_DIR")), args)
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("appyc-strict-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

const NEAR_MISSES: &str = "tests/warn/near_miss_pragmas.py";

#[test]
fn near_miss_pragmas_warn_and_compile() {
    let dir = scratch("warn");
    let out = dir.join("out.py");
    let r = appyc(&[NEAR_MISSES, "-o", out.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(0), "{stderr}");
    assert!(out.exists(), "output written");
    let warn = |pos: &str| {
        format!("{NEAR_MISSES}:{pos}: warning: this comment looks like a pragma but is not one: appyc ignores it\n")
    };
    for pos in ["2:5", "5:5", "8:5"] {
        assert!(
            stderr.contains(&warn(pos)),
            "no warning at {pos}:\n{stderr}"
        );
    }
    assert_eq!(stderr.matches("warning:").count(), 3, "{stderr}");
    assert!(stderr.contains("#PRAGMA parallel for\n"), "{stderr}");
    assert!(stderr.contains("^^^^^^^"), "{stderr}");
    assert_eq!(
        stderr.matches("help: write `#pragma parallel for`").count(),
        3,
        "{stderr}"
    );
    assert!(!stderr.contains("error"), "{stderr}");
}

#[test]
fn deny_warnings_fails_and_writes_nothing() {
    let dir = scratch("deny");
    let out = dir.join("out.py");
    let r = appyc(&[NEAR_MISSES, "-o", out.to_str().unwrap(), "--deny-warnings"]);
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(1), "{stderr}");
    assert!(!out.exists(), "output written under --deny-warnings");
    assert_eq!(stderr.matches(": warning: ").count(), 3, "{stderr}");
    assert!(
        stderr.ends_with("appyc: error: 3 warnings denied (--deny-warnings); nothing written\n"),
        "{stderr}"
    );
    // A clean file is not affected.
    let r = appyc(&[
        "samples/vector_add.py",
        "-o",
        out.to_str().unwrap(),
        "--deny-warnings",
    ]);
    assert_eq!(r.status.code(), Some(0));
    assert!(out.exists());
}

#[test]
fn deny_warnings_from_pyproject() {
    let dir = scratch("deny_config");
    std::fs::write(
        dir.join("pyproject.toml"),
        "[tool.appyc]\nsource = [\"src\"]\noutput = \"gen\"\ndeny-warnings = true\n",
    )
    .unwrap();
    std::fs::create_dir_all(dir.join("src")).unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    std::fs::copy(root.join(NEAR_MISSES), dir.join("src/k.py")).unwrap();
    let r = appyc_in(&dir, &[]);
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("src/k.py:2:5: warning: "), "{stderr}");
    assert!(!dir.join("gen").exists(), "nothing written");
    // Without the key: a warning and the output.
    std::fs::write(
        dir.join("pyproject.toml"),
        "[tool.appyc]\nsource = [\"src\"]\noutput = \"gen\"\n",
    )
    .unwrap();
    let r = appyc_in(&dir, &[]);
    assert_eq!(r.status.code(), Some(0));
    assert!(dir.join("gen/k.py").exists());
}

#[test]
fn a_tree_file_with_only_near_misses_is_skipped_with_its_warning() {
    let dir = scratch("tree_near_miss");
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join(".git"), "").unwrap();
    std::fs::write(
        dir.join("src/k.py"),
        "def f(A, N):\n    # pragma parallel for\n    for i in range(N):\n        A[i] = 0.0\n",
    )
    .unwrap();
    let r = appyc_in(&dir, &["src", "-o", "gen"]);
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(0), "{stderr}");
    assert!(stderr.starts_with("src/k.py:2:5: warning: "), "{stderr}");
    assert!(!dir.join("gen/k.py").exists());
    let r = appyc_in(&dir, &["src", "-o", "gen", "--deny-warnings"]);
    assert_eq!(r.status.code(), Some(1));
}
