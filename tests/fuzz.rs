//! A short round of the fuzzer (examples/fuzz/main.rs runs long ones): mutated samples must
//! compile or be rejected with a diagnostic, never panic. 20,000 inputs in a release build
//! (`cargo test --release`, as scripts/test.sh runs it), 2,000 in a debug build. The fuzzer's
//! own unit tests run here too, with the file that holds them.

// The example's module, compiled into this test too (it is no part of the library).
#[path = "../examples/fuzz/fuzzer.rs"]
mod fuzzer;

#[test]
fn mutated_samples_never_panic() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let corpus = fuzzer::corpus(root);
    assert!(corpus.len() > 30, "corpus of {}", corpus.len());
    let n = if cfg!(debug_assertions) {
        2_000
    } else {
        20_000
    };
    let report = fuzzer::run(20_26, 0..n, &corpus);
    assert_eq!(report.inputs, n);
    let crashes: Vec<String> = report
        .crashes
        .iter()
        .map(|c| {
            format!(
                "seed {} iteration {}: {}\n--- input ---\n{}",
                c.seed, c.iteration, c.message, c.input
            )
        })
        .collect();
    assert!(crashes.is_empty(), "{}", crashes.join("\n\n"));
    // The mutations are not all fatal: some inputs still compile.
    assert!(
        report.compiled > n / 50,
        "only {} compiled",
        report.compiled
    );
}
