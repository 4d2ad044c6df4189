//! `nvshmem.*` calls on the command line: the spec's checks and the context rules, each a
//! `file:line:col: error` with the source line and a caret (exit 1).

use std::process::{Command, Output};

fn appyc(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_appyc"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("appyc runs")
}

fn expect_error(input: &str, position: &str, message: &str) -> String {
    let r = appyc(&[input, "-o", "-"]);
    let stderr = String::from_utf8_lossy(&r.stderr).to_string();
    assert_eq!(
        r.status.code(),
        Some(1),
        "exit status for {input}: {stderr}"
    );
    assert!(
        stderr.starts_with(&format!("{input}:{position}: error: {message}")),
        "diagnostic for {input}:\n{stderr}"
    );
    assert!(stderr.contains('^'), "no caret:\n{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    stderr
}

#[test]
fn unknown_call_suggests_the_close_name() {
    let e = expect_error(
        "tests/bad/nvshmem_unknown_call.py",
        "3:9",
        "unknown call `nvshmem.Putmen`",
    );
    assert!(e.contains("help: did you mean `nvshmem.Putmem`?"), "{e}");
}

#[test]
fn wrong_arity_names_the_missing_argument() {
    let e = expect_error(
        "tests/bad/nvshmem_arity.py",
        "3:9",
        "`nvshmem.SignalWait` is missing the argument `signal`",
    );
    assert!(e.contains("SignalWait(flag, signal)"), "{e}");
}
