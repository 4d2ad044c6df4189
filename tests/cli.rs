//! The command line on bad input: `file:line:col: error: ...`, the source line with a caret,
//! exit 1 for compile errors and 2 for usage/IO, no panic, and the output file left untouched.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn appyc(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_appyc"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("appyc runs")
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("appyc-cli-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Compiles a bad input over an existing output file; checks the diagnostic and the file.
fn expect_error(input: &str, code: i32, position: &str, message: &str) -> String {
    let out_dir = scratch(Path::new(input).file_stem().unwrap().to_str().unwrap());
    let out = out_dir.join("out.py");
    std::fs::write(&out, "sentinel\n").unwrap();
    let r = appyc(&[input, "-o", out.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&r.stderr).to_string();
    assert_eq!(
        r.status.code(),
        Some(code),
        "exit status for {input}: {stderr}"
    );
    assert!(
        stderr.starts_with(&format!("{input}:{position}: error: {message}")),
        "diagnostic for {input}:\n{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        "sentinel\n",
        "output touched"
    );
    stderr
}

fn has_caret_under(stderr: &str, source_line: &str) {
    let lines: Vec<&str> = stderr.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.ends_with(source_line))
        .unwrap_or_else(|| panic!("source line `{source_line}` not shown:\n{stderr}"));
    assert!(
        lines[at + 1..].iter().any(|l| l.contains('^')),
        "no caret:\n{stderr}"
    );
}

#[test]
fn typo_in_directive_suggests_the_name() {
    let e = expect_error(
        "tests/bad/typo_directive.py",
        1,
        "2:13",
        "unknown directive `paralel for`",
    );
    has_caret_under(&e, "#pragma paralel for");
    assert!(e.contains("help: did you mean `parallel for`?"), "{e}");
}

#[test]
fn unknown_clause_suggests_the_name() {
    let e = expect_error(
        "tests/bad/unknown_clause.py",
        1,
        "2:26",
        "unknown clause `smid`",
    );
    has_caret_under(&e, "#pragma parallel for smid");
    assert!(e.contains("did you mean `simd`?"), "{e}");
}

#[test]
fn pragma_not_followed_by_a_loop() {
    let e = expect_error(
        "tests/bad/pragma_without_loop.py",
        1,
        "2:5",
        "`#pragma parallel for` is not followed by a loop",
    );
    has_caret_under(&e, "#pragma parallel for");
}

#[test]
fn parallel_for_needs_range() {
    let e = expect_error(
        "tests/bad/parallel_non_range.py",
        1,
        "3:5",
        "`#pragma parallel for` needs a `for ... in range(...)` loop",
    );
    has_caret_under(&e, "for i in items:");
}

#[test]
fn python_syntax_error() {
    let e = expect_error(
        "tests/bad/syntax_error.py",
        1,
        "3:21",
        "invalid Python syntax",
    );
    assert!(e.contains('^'), "{e}");
}

#[test]
fn atomic_needs_an_update() {
    expect_error(
        "tests/bad/atomic_not_update.py",
        1,
        "5:9",
        "`#pragma atomic` needs an update",
    );
}

#[test]
fn numpy_in_host_code_that_cannot_run_on_gpu() {
    let e = expect_error(
        "tests/bad/host_numpy_call.py",
        1,
        "5:9",
        "`np.linalg.norm` in host code of a compiled function cannot run on GPU tensors",
    );
    has_caret_under(&e, "B = np.linalg.norm(A)");
}

#[test]
fn simd_width_must_be_a_power_of_two() {
    expect_error(
        "tests/bad/bad_simd_width.py",
        1,
        "4:22",
        "directive `simd`: 100 is not allowed",
    );
}

#[test]
fn non_utf8_file() {
    let dir = scratch("utf8");
    let src = dir.join("latin1.py");
    std::fs::write(&src, b"def f(A, N):\n    x = '\xe9'\n").unwrap();
    let src_s = src.to_str().unwrap().to_string();
    let out = dir.join("out.py");
    std::fs::write(&out, "sentinel\n").unwrap();
    let r = appyc(&[&src_s, "-o", out.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.starts_with(&format!(
            "{src_s}:2:10: error: source file is not valid UTF-8"
        )),
        "{stderr}"
    );
    assert!(stderr.contains('^'), "{stderr}");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "sentinel\n");
}

#[test]
fn missing_file_is_a_usage_error() {
    let r = appyc(&["tests/bad/does_not_exist.py", "-o", "/dev/null"]);
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("cannot read `tests/bad/does_not_exist.py`"),
        "{stderr}"
    );
}

#[test]
fn bad_mvl_is_a_usage_error() {
    let r = appyc(&["samples/vector_add.py", "--mvl", "100", "-o", "-"]);
    assert_eq!(r.status.code(), Some(2));
}

#[test]
fn stdin_to_stdout_and_several_files_to_a_directory() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_appyc"))
        .args(["-", "-o", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(
            b"def f(A, N):\n    #pragma parallel for\n    for i in range(N):\n        A[i] = 1.0\n",
        )
        .unwrap();
    let r = child.wait_with_output().unwrap();
    assert!(r.status.success());
    let out = String::from_utf8(r.stdout).unwrap();
    assert!(
        out.contains("@triton.jit") && out.contains("def f(A, N):"),
        "{out}"
    );

    let dir = scratch("multi");
    let r = appyc(&[
        "samples/vector_add.py",
        "samples/spmv_csr.py",
        "-o",
        dir.to_str().unwrap(),
    ]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert!(dir.join("vector_add.py").exists() && dir.join("spmv_csr.py").exists());
}

#[test]
fn pragma_slice_that_names_no_dimension() {
    let e = expect_error(
        "tests/bad/pragma_slice_unmatched.py",
        1,
        "2:26",
        "the pragma slice `:K` matches no slice in the statement",
    );
    has_caret_under(&e, "#pragma :M=>parallel :K=>simd");
}

#[test]
fn le_needs_a_power_of_two() {
    expect_error(
        "tests/bad/le_not_power_of_two.py",
        1,
        "2:33",
        "property `le`: 100 is not allowed",
    );
}

#[test]
fn sorting_and_reshaping_are_not_kernel_operations() {
    let e = expect_error(
        "tests/bad/sort_in_kernel.py",
        1,
        "7:20",
        "`np.sort` is not supported inside a parallel region",
    );
    has_caret_under(&e, "B[i, :N] = np.sort(A[i, :N])");
    expect_error(
        "tests/bad/reshape_in_kernel.py",
        1,
        "4:20",
        "method `.reshape()` is not supported inside a parallel region",
    );
}

#[test]
fn conflicting_dimension_properties() {
    expect_error(
        "tests/bad/conflicting_properties.py",
        1,
        "2:26",
        "conflicting properties on one dimension: `simd` and `parallel`",
    );
    expect_error(
        "tests/bad/reduce_kept_dimension.py",
        1,
        "5:13",
        "this dimension is not reduced by the statement",
    );
}

#[test]
fn slices_of_different_lengths() {
    let e = expect_error(
        "tests/bad/slice_length_mismatch.py",
        1,
        "4:26",
        "this slice's length (N - 0) differs from the slice it is combined with (N - 1)",
    );
    has_caret_under(&e, "B[i, 1:N] = A[i, :N]");
}
