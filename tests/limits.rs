//! Huge inputs: a 20,000-term expression compiles; an expression nested deeper than the
//! documented limit (50,000 levels) is a clean error, not a stack overflow.

use std::process::Command;

fn compile(name: &str, source: &str) -> (Option<i32>, String, bool) {
    let dir = std::env::temp_dir().join(format!("appyc-limits-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join(format!("{name}.py"));
    std::fs::write(&src, source).unwrap();
    let out = dir.join("out.py");
    let _ = std::fs::remove_file(&out);
    let r = Command::new(env!("CARGO_BIN_EXE_appyc"))
        .args([src.to_str().unwrap(), "-o", out.to_str().unwrap()])
        .output()
        .expect("appyc runs");
    let stderr = String::from_utf8_lossy(&r.stderr).to_string();
    (r.status.code(), stderr, out.exists())
}

fn kernel(value: &str) -> String {
    format!("def f(A, B, N):\n    #pragma parallel for\n    for i in range(N):\n        B[i] = {value}\n")
}

#[test]
fn a_sum_of_20000_terms_compiles() {
    let sum = vec!["A[i]"; 20_000].join(" + ");
    let (code, stderr, written) = compile("sum20k", &kernel(&sum));
    assert_eq!(code, Some(0), "{}", &stderr[..stderr.len().min(2000)]);
    assert!(written);
}

#[test]
fn nesting_past_the_limit_is_an_error() {
    // A million levels in a release build; in a debug build (slow to parse that much) enough
    // to pass the limit.
    let depth = if cfg!(debug_assertions) {
        60_000
    } else {
        1_000_000
    };
    let nested = format!("{}A[i]{}", "(A[i] + ".repeat(depth), ")".repeat(depth));
    let (code, stderr, written) = compile("deep", &kernel(&nested));
    assert_eq!(code, Some(1), "{}", &stderr[..stderr.len().min(2000)]);
    assert!(!written);
    assert!(!stderr.contains("panicked") && !stderr.contains("overflow"));
    // The position is the first level past the limit: after `B[i] = ` and 50,000 levels of
    // `(A[i] + `, the inside of the next parenthesis.
    let col = "        B[i] = ".len() + 50_000 * "(A[i] + ".len() + 2;
    let head = format!(":4:{col}: error: expression nested deeper than 50000 levels\n");
    assert!(
        stderr
            .lines()
            .next()
            .is_some_and(|l| format!("{l}\n").ends_with(&head)),
        "{}",
        &stderr[..stderr.len().min(2000)]
    );
    // The line is shown as a window around the caret, not 8 MB of it.
    assert!(stderr.len() < 2000, "{} bytes of diagnostics", stderr.len());
    assert!(stderr.contains('^'));
}
