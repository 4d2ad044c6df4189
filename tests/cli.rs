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
    // A source that starts with its function: the prelude (imports, helpers) still comes
    // first, and carries the helpers the kernel after it calls.
    assert!(out.starts_with("# Generated by appyc"), "{out}");
    let (import, kernel) = (
        out.find("import triton\n").unwrap(),
        out.find("@triton.jit").unwrap(),
    );
    assert!(import < kernel, "{out}");
    assert!(out.contains("class _AppycTuning"), "{out}");

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

// ------------------------------------------------------------------ trees, --check, config

/// A scratch project: `src/` holds two samples (one in a subdirectory), a file without pragmas
/// and a package `__init__.py`; `pyproject` (when given) is written at its top.
fn project(name: &str, pyproject: Option<&str>) -> PathBuf {
    let dir = scratch(name);
    let _ = std::fs::remove_dir_all(&dir);
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    std::fs::create_dir_all(dir.join("src/sub")).unwrap();
    std::fs::copy(
        root.join("samples/vector_add.py"),
        dir.join("src/vector_add.py"),
    )
    .unwrap();
    std::fs::copy(
        root.join("samples/spmv_csr.py"),
        dir.join("src/sub/spmv_csr.py"),
    )
    .unwrap();
    std::fs::write(
        dir.join("src/plain.py"),
        "# #pragma in a comment's text is not one\nx = '#pragma parallel for'\n",
    )
    .unwrap();
    std::fs::write(dir.join("src/sub/__init__.py"), "").unwrap();
    if let Some(text) = pyproject {
        std::fs::write(dir.join("pyproject.toml"), text).unwrap();
    }
    dir
}

fn appyc_in(cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_appyc"))
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("appyc runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).to_string()
}

/// Every file under `dir`, relative, with its contents.
fn tree(dir: &Path) -> Vec<(String, String)> {
    let mut out = vec![];
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(dir).unwrap().display().to_string();
                out.push((rel, std::fs::read_to_string(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn a_directory_compiles_every_file_with_a_pragma_into_the_same_paths() {
    let p = project("tree", None);
    let r = appyc_in(&p, &["src", "-o", "gen", "-v"]);
    let stderr = text(&r.stderr);
    assert!(r.status.success(), "{stderr}");
    let names: Vec<String> = tree(&p.join("gen")).into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["sub/spmv_csr.py", "vector_add.py"]);
    assert!(
        stderr.contains("skipped src/plain.py (no pragma)"),
        "{stderr}"
    );
    assert!(
        stderr.contains("skipped src/sub/__init__.py (no pragma)"),
        "{stderr}"
    );
    // The same text as compiling the file alone.
    let alone = appyc_in(&p, &["src/sub/spmv_csr.py", "-o", "-"]);
    assert_eq!(
        text(&alone.stdout),
        std::fs::read_to_string(p.join("gen/sub/spmv_csr.py")).unwrap()
    );

    // Files and directories mixed; the output directory inside the input tree is not an input.
    let r = appyc_in(&p, &["src/sub", "src/vector_add.py", "-o", "src/gen"]);
    assert!(r.status.success(), "{}", text(&r.stderr));
    let names: Vec<String> = tree(&p.join("src/gen"))
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert_eq!(names, ["spmv_csr.py", "vector_add.py"]);
    let r = appyc_in(&p, &["src", "-o", "src/gen"]);
    assert!(r.status.success(), "{}", text(&r.stderr));
    let r = appyc_in(&p, &["src", "-o", "src/gen", "--check", "-v"]);
    assert!(r.status.success(), "{}", text(&r.stderr));
    assert!(!text(&r.stderr).contains("src/gen/vector_add.py (no pragma)"));

    // Without -o, outputs go next to their sources with the naming pattern; a second run finds
    // no pragma in them.
    let r = appyc_in(&p, &["src/sub", "--naming", "{stem}_gpu.py"]);
    assert!(r.status.success(), "{}", text(&r.stderr));
    assert!(p.join("src/sub/spmv_csr_gpu.py").exists());
    let r = appyc_in(
        &p,
        &["src/sub", "--naming", "{stem}_gpu.py", "--check", "-v"],
    );
    assert!(r.status.success(), "{}", text(&r.stderr));
    assert!(text(&r.stderr).contains("skipped src/sub/spmv_csr_gpu.py"));
}

#[test]
fn one_failing_file_in_a_tree_writes_nothing_and_reports_every_file() {
    let p = project("tree-fail", None);
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    std::fs::copy(
        root.join("tests/bad/typo_directive.py"),
        p.join("src/a_typo.py"),
    )
    .unwrap();
    std::fs::copy(
        root.join("tests/bad/unknown_clause.py"),
        p.join("src/sub/z_clause.py"),
    )
    .unwrap();
    let r = appyc_in(&p, &["src", "-o", "gen"]);
    let stderr = text(&r.stderr);
    assert_eq!(r.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("src/a_typo.py:2:13: error: unknown directive"),
        "{stderr}"
    );
    assert!(
        stderr.contains("src/sub/z_clause.py:2:26: error: unknown clause"),
        "{stderr}"
    );
    assert!(!p.join("gen").exists(), "a failed run wrote outputs");
}

#[test]
fn check_and_diff_compare_without_writing() {
    let p = project("check", None);
    let r = appyc_in(&p, &["src", "-o", "gen", "--check"]);
    let stderr = text(&r.stderr);
    assert_eq!(r.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("gen/vector_add.py is missing"), "{stderr}");
    assert!(
        stderr.contains("gen/sub/spmv_csr.py is missing"),
        "{stderr}"
    );
    assert!(!p.join("gen").exists(), "--check wrote");

    assert!(appyc_in(&p, &["src", "-o", "gen"]).status.success());
    let fresh = tree(&p.join("gen"));
    let r = appyc_in(&p, &["src", "-o", "gen", "--check"]);
    assert_eq!(r.status.code(), Some(0), "{}", text(&r.stderr));
    assert!(r.stdout.is_empty() && r.stderr.is_empty());

    // Stale: an edited source.
    let src = p.join("src/vector_add.py");
    let edited = std::fs::read_to_string(&src)
        .unwrap()
        .replace("C[i] = A[i] + B[i]", "C[i] = A[i] - B[i]");
    std::fs::write(&src, edited).unwrap();
    let r = appyc_in(&p, &["src", "-o", "gen", "--check"]);
    let stderr = text(&r.stderr);
    assert_eq!(r.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("gen/vector_add.py is stale"), "{stderr}");
    assert!(
        !stderr.contains("spmv_csr"),
        "only stale outputs are named: {stderr}"
    );

    let r = appyc_in(&p, &["src", "-o", "gen", "--diff"]);
    assert_eq!(r.status.code(), Some(0), "--diff alone reports, like black");
    let diff = text(&r.stdout);
    assert!(
        diff.starts_with("--- a/gen/vector_add.py\n+++ b/gen/vector_add.py\n@@"),
        "{diff}"
    );
    assert!(
        diff.contains("\n-    tl.store") && diff.contains(") - tl.load(B"),
        "{diff}"
    );
    let r = appyc_in(&p, &["src", "-o", "gen", "--diff", "--check"]);
    assert_eq!(r.status.code(), Some(1));
    assert_eq!(text(&r.stdout), diff);
    assert_eq!(tree(&p.join("gen")), fresh, "--diff wrote");

    let r = appyc_in(&p, &["src/vector_add.py", "-o", "-", "--check"]);
    assert_eq!(r.status.code(), Some(2));
}

/// The generated text, and so `--check`, does not depend on the working directory or on how
/// the paths are spelled: names are taken relative to the project root (pyproject.toml or
/// .git); outside any project a source is named by its file name.
#[test]
fn output_does_not_depend_on_working_directory_or_path_spelling() {
    for (name, marker) in [
        ("indep-py", Some("[project]\nname = \"k\"\n")),
        ("indep-none", None),
    ] {
        let p = project(name, marker);
        let abs_src = p.join("src").display().to_string();
        let abs_gen = p.join("gen").display().to_string();
        assert!(appyc_in(&p, &["src", "-o", "gen"]).status.success());
        let first = tree(&p.join("gen"));
        assert!(!first.is_empty());
        for (cwd, args) in [
            (p.join("src/sub"), vec!["..", "-o", "../../gen", "--check"]),
            (
                p.join("src"),
                vec![abs_src.as_str(), "-o", abs_gen.as_str(), "--check"],
            ),
            (
                std::env::temp_dir(),
                vec![abs_src.as_str(), "-o", abs_gen.as_str(), "--check"],
            ),
            (p.clone(), vec!["./src/", "-o", "./gen/", "--check"]),
        ] {
            let r = appyc_in(&cwd, &args);
            assert!(
                r.status.success(),
                "{name}: stale from {} with {args:?}:\n{}",
                cwd.display(),
                text(&r.stderr)
            );
        }
        // --diff names outputs root-relative (or as given outside a project): the same report
        // from the project and from a subdirectory.
        std::fs::write(p.join("gen/vector_add.py"), "stale\n").unwrap();
        let a = appyc_in(&p, &["src", "-o", "gen", "--diff"]);
        let b = appyc_in(&p.join("src"), &[".", "-o", "../gen", "--diff"]);
        assert!(text(&a.stdout).contains("+++ b/"), "{}", text(&a.stdout));
        if marker.is_some() {
            assert_eq!(text(&a.stdout), text(&b.stdout), "{name}");
        }
        // Rewritten from elsewhere with absolute paths: byte-identical.
        assert!(appyc_in(&std::env::temp_dir(), &[&abs_src, "-o", &abs_gen])
            .status
            .success());
        assert_eq!(tree(&p.join("gen")), first, "{name}");
        // One file: the same text from any directory, relative or absolute.
        let one = p.join("src/sub/spmv_csr.py").display().to_string();
        let a = appyc_in(&p, &["src/sub/spmv_csr.py", "-o", "-"]);
        let b = appyc_in(&std::env::temp_dir(), &[&one, "-o", "-"]);
        assert!(a.status.success() && !a.stdout.is_empty());
        assert_eq!(text(&a.stdout), text(&b.stdout), "{name}");
        let header = text(&a.stdout)
            .lines()
            .find(|l| l.starts_with("# Generated"))
            .unwrap()
            .to_string();
        let expected = if marker.is_some() {
            "from src/sub/spmv_csr.py."
        } else {
            "from spmv_csr.py."
        };
        assert!(header.contains(expected), "{header}");
    }
}

#[test]
fn pyproject_settings_and_command_line_overrides() {
    let p = project(
        "config",
        Some("[project]\nname = \"k\"\n\n[tool.appyc]\nsource = [\"src\"]\noutput = \"gen\"\nmvl = 256\nauto-simd = false\ndeny-warnings = false\n"),
    );
    // From a subdirectory with no arguments: the configuration names everything.
    let r = appyc_in(&p.join("src/sub"), &[]);
    assert!(r.status.success(), "{}", text(&r.stderr));
    let gen = std::fs::read_to_string(p.join("gen/vector_add.py")).unwrap();
    let expected = appyc_in(
        &p,
        &[
            "src/vector_add.py",
            "--no-config",
            "--mvl",
            "256",
            "--no-auto-simd",
            "-o",
            "-",
        ],
    );
    assert_eq!(
        gen,
        text(&expected.stdout),
        "mvl and auto-simd from [tool.appyc]"
    );
    let r = appyc_in(&p, &["--check"]);
    assert!(r.status.success(), "{}", text(&r.stderr));
    // The command line wins, key by key.
    let over = appyc_in(&p, &["src/vector_add.py", "--mvl", "512", "-o", "-"]);
    let expected = appyc_in(
        &p,
        &[
            "src/vector_add.py",
            "--no-config",
            "--mvl",
            "512",
            "--no-auto-simd",
            "-o",
            "-",
        ],
    );
    assert_eq!(text(&over.stdout), text(&expected.stdout));
    let on = appyc_in(
        &p,
        &[
            "src/vector_add.py",
            "--auto-simd",
            "--mvl",
            "256",
            "-o",
            "-",
        ],
    );
    let expected = appyc_in(
        &p,
        &[
            "src/vector_add.py",
            "--no-config",
            "--mvl",
            "256",
            "-o",
            "-",
        ],
    );
    assert_eq!(text(&on.stdout), text(&expected.stdout));
    assert_ne!(text(&on.stdout), gen);

    // An unknown key: the file and line, exit 2.
    std::fs::write(
        p.join("pyproject.toml"),
        "[project]\nname = \"k\"\n\n[tool.appyc]\nsource = \"src\"\nmvl = 256\nauto_simd = false\n",
    )
    .unwrap();
    let r = appyc_in(&p, &[]);
    let stderr = text(&r.stderr);
    assert_eq!(r.status.code(), Some(2), "{stderr}");
    let at = format!(
        "{}:7:1: error: unknown field `auto_simd`",
        p.join("pyproject.toml").display()
    );
    assert!(stderr.starts_with(&at), "{stderr}");
    assert!(!stderr.contains("panicked"));
    // --no-config ignores it; no inputs at all is a usage error.
    assert!(
        appyc_in(&p, &["src", "-o", "gen", "--no-config", "--check"])
            .status
            .code()
            == Some(1)
    );
    let r = appyc_in(&p, &["--no-config"]);
    assert_eq!(r.status.code(), Some(2));
    assert!(text(&r.stderr).contains("no inputs"));
}

#[test]
fn exit_non_zero_on_write_names_what_it_wrote() {
    let p = project("on-write", None);
    let r = appyc_in(&p, &["src", "-o", "gen", "--exit-non-zero-on-write"]);
    assert_eq!(r.status.code(), Some(1));
    let stderr = text(&r.stderr);
    assert!(
        stderr.contains("wrote gen/vector_add.py") && stderr.contains("wrote gen/sub/spmv_csr.py"),
        "{stderr}"
    );
    // Nothing to write: success, and the file keeps its time stamp.
    let before = std::fs::metadata(p.join("gen/vector_add.py"))
        .unwrap()
        .modified()
        .unwrap();
    let r = appyc_in(&p, &["src", "-o", "gen", "--exit-non-zero-on-write"]);
    assert_eq!(r.status.code(), Some(0), "{}", text(&r.stderr));
    let after = std::fs::metadata(p.join("gen/vector_add.py"))
        .unwrap()
        .modified()
        .unwrap();
    assert_eq!(before, after, "an unchanged output was rewritten");
}

#[test]
fn a_pragma_in_a_nested_function_says_what_is_unsupported() {
    let e = expect_error(
        "tests/bad/nested_function_pragma.py",
        1,
        "3:9",
        "a pragma inside the nested function `inner`",
    );
    has_caret_under(&e, "#pragma parallel for");
    assert!(e.contains("define `inner` at module level"), "{e}");
}

#[test]
fn a_shared_reduction_read_inside_its_loop_is_an_error() {
    let e = expect_error(
        "tests/bad/shared_read_in_loop.py",
        1,
        "6:16",
        "`s` is shared(...) and written by the loop, so it cannot be read in it",
    );
    has_caret_under(&e, "y[i] = s");
}

#[test]
fn a_reduction_updated_by_another_operator_is_an_error_at_the_update() {
    let e = expect_error(
        "tests/bad/reduction_wrong_operator.py",
        1,
        "5:9",
        "`m` is in `reduction(max:m)`, but this statement updates it by `+`",
    );
    has_caret_under(&e, "m += x[i]");
    assert!(
        e.contains("help: a `reduction(max:m)` variable takes"),
        "{e}"
    );
}

#[test]
fn a_misspelt_reduction_clause_suggests_the_name() {
    let e = expect_error(
        "tests/bad/reduction_typo.py",
        1,
        "3:31",
        "unknown clause `reductoin`",
    );
    assert!(e.contains("help: did you mean `reduction`?"), "{e}");
}

#[test]
fn a_product_reduction_is_refused_with_the_reason() {
    let e = expect_error(
        "tests/bad/reduction_prod.py",
        1,
        "3:36",
        "`reduction(*:...)`: appyc has no product reduction across workers",
    );
    assert!(e.contains("no atomic multiply"), "{e}");
}

#[test]
fn a_use_of_appy_the_output_would_keep_is_an_error_at_the_use() {
    let e = expect_error(
        "tests/bad/appy_outside_region.py",
        1,
        "7:12",
        "`appy` is used outside the code appyc compiles, and the output does not import appy",
    );
    has_caret_under(&e, "return appy.vidx(i0, appy.MVL, N)");
    assert!(e.contains("help: appyc drops `import appy`"), "{e}");
}

#[test]
fn verbose_says_which_statement_keeps_a_time_loop_on_the_host() {
    let dir = scratch("host-loop-note");
    let src = dir.join("loop.py");
    std::fs::write(
        &src,
        "def f(A, N, T):\n    for t in range(T):\n        #pragma parallel for simd\n        for i in range(N):\n            A[i] = A[i] * 0.5\n        print(t)\n",
    )
    .unwrap();
    let out = dir.join("out.py");
    let args = [src.to_str().unwrap(), "-o", out.to_str().unwrap()];
    let quiet = appyc(&args);
    assert!(quiet.status.success());
    assert!(!String::from_utf8_lossy(&quiet.stderr).contains("note:"));
    let verbose = appyc(&[args[0], args[1], args[2], "-v"]);
    assert!(verbose.status.success());
    let stderr = String::from_utf8_lossy(&verbose.stderr);
    assert!(
        stderr.contains("loop.py:6:9: note: this loop stays on the host"),
        "{stderr}"
    );
    has_caret_under(&stderr, "        print(t)");
    assert!(
        stderr.contains("a call needs the host between iterations"),
        "{stderr}"
    );
    // A loop the device runs says nothing.
    std::fs::write(
        &src,
        std::fs::read_to_string(&src)
            .unwrap()
            .replace("        print(t)\n", ""),
    )
    .unwrap();
    let verbose = appyc(&[args[0], args[1], args[2], "-v"]);
    assert!(!String::from_utf8_lossy(&verbose.stderr).contains("note:"));
}

#[test]
fn an_if_of_scalars_keeps_a_time_loop_persistent_and_a_swap_in_an_if_says_why_not() {
    let dir = scratch("if-steps-note");
    let src = dir.join("loop.py");
    let text = "def f(A, B, N, T, dt):\n    for t in range(T):\n        #pragma parallel for simd\n        for i in range(N):\n            B[i] = A[i] * dt\n        if t % 2 == 0:\n            dt = dt * 0.5\n        else:\n            dt = dt + 1.0\n    return dt\n";
    std::fs::write(&src, text).unwrap();
    let out = dir.join("out.py");
    let args = [src.to_str().unwrap(), "-o", out.to_str().unwrap(), "-v"];
    let verbose = appyc(&args);
    assert!(verbose.status.success());
    let stderr = String::from_utf8_lossy(&verbose.stderr);
    assert!(!stderr.contains("stays on the host"), "{stderr}");
    let module = std::fs::read_to_string(&out).unwrap();
    assert!(module.contains("_launch_f_persistent0("), "{module}");
    // A swap on some paths only stays host-driven, and `-v` names it.
    let swapped = text.replace("            dt = dt + 1.0\n", "            A, B = B, A\n");
    std::fs::write(&src, swapped).unwrap();
    let verbose = appyc(&args);
    assert!(verbose.status.success());
    let stderr = String::from_utf8_lossy(&verbose.stderr);
    assert!(
        stderr.contains("loop.py:9:13: note: this loop stays on the host"),
        "{stderr}"
    );
    assert!(
        stderr.contains("is rebound inside an `if`: a rebinding (a swap) on some paths only needs the host between iterations"),
        "{stderr}"
    );
    assert!(!std::fs::read_to_string(&out)
        .unwrap()
        .contains("_persistent0"));
}

#[test]
fn verbose_says_which_statement_keeps_an_accumulation_loop_from_being_gathered() {
    let dir = scratch("gather-note");
    let src = dir.join("acc.py");
    std::fs::write(
        &src,
        "def f(C):\n    for i in range(1, C.shape[0]):\n        #pragma parallel for simd\n        for j in range(C.shape[1]):\n            C[i, j] += C[i - 1, j]\n",
    )
    .unwrap();
    let out = dir.join("out.py");
    let args = [src.to_str().unwrap(), "-o", out.to_str().unwrap(), "-v"];
    let verbose = appyc(&args);
    assert!(verbose.status.success());
    let stderr = String::from_utf8_lossy(&verbose.stderr);
    assert!(
        stderr
            .contains("acc.py:5:13: note: the host loop at line 2 is not gathered into one region"),
        "{stderr}"
    );
    has_caret_under(&stderr, "            C[i, j] += C[i - 1, j]");
    assert!(
        stderr.contains("reads `C`, which the loop writes"),
        "{stderr}"
    );
    // Gathered, it says nothing and the loop is one region.
    std::fs::write(
        &src,
        std::fs::read_to_string(&src)
            .unwrap()
            .replace("C[i - 1, j]", "2.0"),
    )
    .unwrap();
    let verbose = appyc(&args);
    assert!(!String::from_utf8_lossy(&verbose.stderr).contains("note:"));
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(
        text.ends_with("def f(C):\n    _launch_f_kernel0(C)\n"),
        "{text}"
    );
}

#[test]
fn a_parallel_for_pragma_on_a_while_loop_is_an_error_at_the_loop() {
    let dir = scratch("while-pragma");
    let src = dir.join("w.py");
    std::fs::write(
        &src,
        "def f(A, n):\n    i = 0\n    #pragma parallel for\n    while i < n:\n        A[i] = 0.0\n        i += 1\n",
    )
    .unwrap();
    let out = dir.join("out.py");
    std::fs::write(&out, "untouched\n").unwrap();
    let r = appyc(&[src.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert_eq!(r.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert!(
        stderr.contains(
            "w.py:4:5: error: `#pragma parallel for` needs a `for ... in range(...)` loop"
        ),
        "{stderr}"
    );
    assert!(stderr.contains("this is a while loop"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "untouched\n");
}

#[test]
fn distribute_refuses_accesses_a_row_split_cannot_serve_and_other_axes() {
    let e = expect_error(
        "tests/bad/distribute_transposed.py",
        1,
        "8:27",
        "`A` is split by rows among the PEs, but this access's row follows `j`, while the region writes the rows of `i`",
    );
    has_caret_under(&e, "B[i, j] = A[j, i]");
    let e = expect_error(
        "tests/bad/distribute_axis.py",
        1,
        "2:35",
        "`distribute` splits axis 0 (rows) only for now, not axis 1",
    );
    has_caret_under(&e, "#pragma distribute(A, B) axis(1)");
}

#[test]
fn verbose_says_why_a_host_update_stays_on_the_host() {
    let dir = scratch("fold-note");
    let src = dir.join("upd.py");
    let text = "def f(beta, C, B):\n    C *= beta\n    #pragma parallel for\n    for i in range(1, C.shape[0]):\n        #pragma simd\n        for j in range(C.shape[1]):\n            C[i, j] = C[i, j] + B[i, j]\n";
    std::fs::write(&src, text).unwrap();
    let out = dir.join("out.py");
    let args = [src.to_str().unwrap(), "-o", out.to_str().unwrap()];
    let quiet = appyc(&args);
    assert!(quiet.status.success());
    assert!(!String::from_utf8_lossy(&quiet.stderr).contains("note:"));
    let verbose = appyc(&[args[0], args[1], args[2], "-v"]);
    assert!(verbose.status.success());
    let stderr = String::from_utf8_lossy(&verbose.stderr);
    assert!(
        stderr.contains("upd.py:2:5: note: `C *= beta` stays on the host"),
        "{stderr}"
    );
    has_caret_under(&stderr, "    C *= beta");
    assert!(
        stderr.contains("the region does not store every element of `C`"),
        "{stderr}"
    );
    assert!(std::fs::read_to_string(&out)
        .unwrap()
        .contains("\n    C *= beta\n"));
    // Folded, it says nothing, and the host binds the operand the kernel applies.
    std::fs::write(
        &src,
        text.replace("range(1, C.shape[0])", "range(C.shape[0])"),
    )
    .unwrap();
    let verbose = appyc(&[args[0], args[1], args[2], "-v"]);
    assert!(!String::from_utf8_lossy(&verbose.stderr).contains("note:"));
    let module = std::fs::read_to_string(&out).unwrap();
    assert!(
        module.contains("    _C_operand = _appyc_fold_operand(C, \"*=\", beta)\n"),
        "{module}"
    );
}

/// A named pipe (as `/dev/null` or a process substitution) is written in place: renaming a temp
/// file over it would leave a regular file where the pipe was.
#[cfg(unix)]
#[test]
fn a_pipe_as_the_output_stays_a_pipe() {
    use std::os::unix::fs::FileTypeExt;
    let fifo = scratch("fifo").join("out.pipe");
    let _ = std::fs::remove_file(&fifo);
    let made = Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    let r = appyc(&["samples/vector_add.py", "-o", fifo.to_str().unwrap()]);
    assert_eq!(
        r.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&r.stderr)
    );
    // Before joining: a reader of a replaced pipe would wait forever.
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
    let text = reader.join().unwrap();
    assert!(text.contains("@triton.jit"), "{text}");
}

/// A scalar each worker of a parallel loop holds its own copy of, read by the host after the
/// loop: no one value is the sequential program's, so it is an error that says so.
#[test]
fn a_per_worker_scalar_read_after_its_region_is_an_error() {
    let e = expect_error(
        "tests/bad/region_result_per_worker.py",
        1,
        "9:13",
        "`s` is read by the host after this region and updated in two ways (plain stores and a sum reduction)",
    );
    has_caret_under(&e, "s += A[i, j]");
    assert!(e.contains("keep the workers' values in an array"), "{e}");
}

/// A joined region's other half leaves a note where it stood, pointing at the launch ("above"
/// where the joined region kept the first loop's place), and `-v` says why a pair stays apart.
#[test]
fn joined_regions_leave_notes_and_v_says_why_a_pair_does_not_join() {
    let r = appyc(&[
        "samples/joined_regions.py",
        "-o",
        "-",
        "--no-persistent",
        "-v",
    ]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let out = String::from_utf8_lossy(&r.stdout);
    let energy = &out[out.find("def decayed_energy(").expect("decayed_energy")..];
    assert!(
        energy.contains("        e = _launch_decayed_energy_kernel0(")
            && energy.contains("        scale = scale * 0.5\n        # appyc: this region runs inside _launch_decayed_energy_kernel0 above"),
        "{energy}"
    );
    let dot = &out[out.find("def filled_dot(").expect("filled_dot")..];
    assert!(
        dot.contains("# appyc: this region runs inside _launch_filled_dot_kernel0 below"),
        "{dot}"
    );
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(
        err.contains("this region stays a pass of its own after the one before it")
            && err.contains("`A`, which one region writes, is used by the other not only at the element each iteration writes"),
        "{err}"
    );
}
