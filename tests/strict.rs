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

/// Compiles `source` (written to a scratch file `name`.py) over an existing output; returns
/// the exit status, stderr and whether the output was left alone.
fn compile(name: &str, source: &str, extra: &[&str]) -> (Option<i32>, String, bool) {
    let dir = scratch(name);
    let src = dir.join(format!("{name}.py"));
    std::fs::write(&src, source).unwrap();
    let out = dir.join("out.py");
    std::fs::write(&out, "sentinel\n").unwrap();
    let mut args = vec![src.to_str().unwrap(), "-o", out.to_str().unwrap()];
    args.extend(extra);
    let r = appyc(&args);
    let stderr = String::from_utf8_lossy(&r.stderr).replace(&format!("{}/", dir.display()), "");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let untouched = std::fs::read_to_string(&out).unwrap() == "sentinel\n";
    (r.status.code(), stderr, untouched)
}

/// A function whose annotated loop carries `pragma` (one line, indented).
fn with_pragma(pragma: &str) -> String {
    format!("def f(A, B, N, M):\n    {pragma}\n    for i in range(N):\n        A[i] = B[i]\n")
}

/// A function-level tensor statement annotated with `pragma`.
fn with_dim_pragma(pragma: &str) -> String {
    format!("def f(A, B, N, M):\n    {pragma}\n    A[:M, :N] = B[:M, :N] * 2.0\n")
}

/// Asserts an error at `2:col` (the pragma's line) with `message`, the pragma shown and a
/// caret under column `col`.
fn expect_error(name: &str, source: &str, col: usize, message: &str) {
    let (code, stderr, untouched) = compile(name, source, &[]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(untouched, "output written for {name}");
    let head = format!("{name}.py:2:{col}: error: {message}\n");
    assert!(
        stderr.starts_with(&head),
        "expected `{head}`, got:\n{stderr}"
    );
    let lines: Vec<&str> = stderr.lines().collect();
    let shown = lines
        .iter()
        .position(|l| l.contains("#pragma"))
        .unwrap_or_else(|| panic!("pragma line not shown:\n{stderr}"));
    // The caret line has the same gutter as the source line: the caret's column in it, less
    // the gutter, is the pragma's column.
    let source_line = lines[shown];
    let gutter = source_line.find("    #pragma").expect("indented pragma");
    let caret = lines[shown + 1];
    let at = caret
        .find('^')
        .unwrap_or_else(|| panic!("no caret:\n{stderr}"));
    assert_eq!(at - gutter + 1, col, "caret column:\n{stderr}");
}

#[test]
fn unclosed_parenthesis_in_a_dimension_pragma() {
    // The M dimension used to become a sequential loop without a word.
    expect_error(
        "unclosed_le",
        &with_dim_pragma("#pragma :M=>parallel,le(16 :N=>simd"),
        32,
        "expected `)` to close `le(`, found `:`",
    );
}

#[test]
fn unclosed_simd_parenthesis() {
    expect_error(
        "unclosed_simd",
        &with_pragma("#pragma parallel for simd("),
        30,
        "expected an argument in `simd(`, found the end of the line",
    );
    expect_error(
        "unclosed_simd_arg",
        &with_pragma("#pragma parallel for simd(4"),
        31,
        "expected `)` to close `simd(`, found the end of the line",
    );
}

#[test]
fn trailing_comma_is_an_empty_item() {
    expect_error(
        "trailing_comma",
        &with_dim_pragma("#pragma :M=>parallel, :N=>simd"),
        26,
        "expected a property after `,`, found a space",
    );
    expect_error(
        "trailing_comma_end",
        &with_dim_pragma("#pragma :M=>parallel :N=>simd,"),
        34,
        "expected a property after `,`, found the end of the line",
    );
    expect_error(
        "trailing_comma_clause",
        &with_pragma("#pragma parallel for simd,"),
        30,
        "expected a clause after `,`, found the end of the line",
    );
}

#[test]
fn empty_items() {
    expect_error(
        "double_comma",
        &with_dim_pragma("#pragma :M=>parallel,,le(16) :N=>simd"),
        26,
        "expected a property after `,`, found `,`",
    );
    expect_error(
        "no_property",
        &with_dim_pragma("#pragma :M=> :N=>simd"),
        17,
        "expected a property after `=>`, found a space",
    );
    expect_error(
        "double_comma_clause",
        &with_pragma("#pragma parallel for simd,,num_warps(4)"),
        31,
        "expected a clause after `,`, found `,`",
    );
}

#[test]
fn repeated_properties_and_clauses() {
    expect_error(
        "parallel_twice",
        &with_dim_pragma("#pragma :M=>parallel,parallel :N=>simd"),
        26,
        "property `parallel` given twice",
    );
    expect_error(
        "simd_block",
        &with_dim_pragma("#pragma :M=>parallel :N=>simd,block(4)"),
        35,
        "property `simd` given twice",
    );
    expect_error(
        "simd_twice",
        &with_pragma("#pragma parallel for simd simd(4)"),
        31,
        "clause `simd` given twice",
    );
}

#[test]
fn unexpected_characters() {
    expect_error(
        "stray_paren",
        &with_pragma("#pragma parallel for )"),
        26,
        "expected a clause, found `)`",
    );
    expect_error(
        "junk_after_argument",
        &with_pragma("#pragma parallel for num_warps(4)x"),
        38,
        "expected a space, `,` or the end of the line, found `x`",
    );
    expect_error(
        "space_before_arrow",
        &with_dim_pragma("#pragma :M =>parallel"),
        15,
        "expected `=>` after the slice `:M`, found a space",
    );
}

#[test]
fn unknown_names_keep_their_suggestions() {
    expect_error(
        "typo_property",
        &with_dim_pragma("#pragma :M=>paralel :N=>simd"),
        17,
        "unknown dimension property `paralel`",
    );
    let (_, stderr, _) = compile(
        "typo_property2",
        &with_dim_pragma("#pragma :M=>paralel :N=>simd"),
        &[],
    );
    assert!(
        stderr.contains("help: did you mean `parallel`?"),
        "{stderr}"
    );
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

#[test]
fn malformed_pragma_files() {
    for (file, position, message) in [
        (
            "tests/bad/pragma_unclosed_paren.py",
            "2:32",
            "expected `)` to close `le(`, found `:`",
        ),
        (
            "tests/bad/pragma_trailing_comma.py",
            "2:26",
            "expected a property after `,`, found a space",
        ),
        (
            "tests/bad/pragma_repeated_property.py",
            "2:26",
            "property `parallel` given twice",
        ),
        (
            "tests/bad/pragma_unclosed_simd.py",
            "2:30",
            "expected an argument in `simd(`, found the end of the line",
        ),
    ] {
        let r = appyc(&[file, "-o", "-"]);
        let stderr = String::from_utf8_lossy(&r.stderr);
        assert_eq!(r.status.code(), Some(1), "{stderr}");
        assert!(r.stdout.is_empty());
        assert!(
            stderr.starts_with(&format!("{file}:{position}: error: {message}\n")),
            "{stderr}"
        );
        assert!(stderr.contains('^'), "{stderr}");
    }
}

#[test]
fn a_racy_parallel_loop_warns_with_the_iterations_involved() {
    let input = "tests/warn/racy_triangle.py";
    let dir = scratch("race");
    let out = dir.join("out.py");
    let r = appyc(&[input, "-o", out.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(0), "{stderr}");
    assert!(out.exists(), "a warning does not stop the output");
    assert!(
        stderr.starts_with(&format!(
            "{input}:10:13: warning: possible race on `B`: iteration i = 1 writes `B[i, j]`, and iteration i = 0 reads the same element as `B[k, j]` (line 9)\n"
        )),
        "{stderr}"
    );
    assert!(stderr.contains("B[i, j] += s\n"), "{stderr}");
    assert_eq!(stderr.matches("warning:").count(), 1, "{stderr}");
    let r = appyc(&[input, "-o", out.to_str().unwrap(), "--deny-warnings"]);
    assert_eq!(r.status.code(), Some(1));
}

/// The race test has no false alarm on the samples or the NPBench kernels of the benchmark
/// (Floyd-Warshall's pivot row, stencils that read a neighbour array, triangular syrk).
#[test]
fn samples_and_npbench_kernels_compile_without_warnings() {
    let dir = scratch("quiet");
    let mut checked = 0;
    for folder in ["samples", "scripts/npbench"] {
        for entry in std::fs::read_dir(folder).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|e| e != "py") {
                continue;
            }
            let out = dir.join("out.py");
            let r = appyc(&[
                path.to_str().unwrap(),
                "-o",
                out.to_str().unwrap(),
                "--deny-warnings",
            ]);
            let stderr = String::from_utf8_lossy(&r.stderr);
            assert_eq!(r.status.code(), Some(0), "{}: {stderr}", path.display());
            checked += 1;
        }
    }
    assert!(checked > 30, "only {checked} files");
}

/// A parallel loop's scalar read after it without a clause: a sum becomes the clause's reduction
/// with a warning that says so; a plain store by every worker warns that no iteration's value is
/// sure to come back.
#[test]
fn results_of_parallel_loops_read_after_them_warn() {
    let input = "tests/warn/region_results.py";
    let out = scratch("region_results").join("out.py");
    let r = appyc(&[input, "-o", out.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.starts_with(&format!(
            "{input}:8:9: warning: `s` is updated by the workers of this region and read after it: reduced as `reduction(+:s)` would\n"
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "{input}:16:9: warning: `last` is stored by every worker of this region and read after it"
        )),
        "{stderr}"
    );
    assert_eq!(stderr.matches("warning:").count(), 2, "{stderr}");
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(
        text.contains("s = _launch_forgot_the_clause_kernel0(A, N, s)"),
        "{text}"
    );
}
