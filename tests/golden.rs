//! Golden tests: every sample compiled (as Python and as lowered APPy) and compared with
//! `golden/`. On a mismatch the test prints a unified diff; `APPYC_BLESS=1 cargo test` rewrites
//! the golden files instead.

use appyc::driver::{compile, Emit, Options};
use appyc::frontend::source::SourceFile;
use similar::TextDiff;
use std::path::Path;

fn samples() -> Vec<String> {
    let mut names: Vec<String> =
        std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("samples"))
            .unwrap()
            .filter_map(|e| {
                let name = e.unwrap().file_name().to_string_lossy().to_string();
                name.ends_with(".py").then_some(name)
            })
            .collect();
    names.sort();
    names
}

fn check(emit: Emit, golden_dir: &str) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bless = std::env::var_os("APPYC_BLESS").is_some();
    let mut failures = vec![];
    let names = samples();
    assert!(
        names.len() >= 12,
        "expected at least 12 samples, found {}",
        names.len()
    );
    for name in names {
        let rel = format!("samples/{name}");
        let text = std::fs::read_to_string(root.join(&rel)).unwrap();
        let file = SourceFile::new(rel.clone(), text);
        let opts = Options {
            emit,
            ..Options::default()
        };
        let out = match compile(&file, &opts) {
            Ok(out) => {
                assert!(
                    out.warnings.is_empty(),
                    "{rel}: warnings: {:?}",
                    out.warnings
                );
                out.text
            }
            Err(d) => {
                failures.push(format!("{rel} does not compile:\n{}", d.render(&file)));
                continue;
            }
        };
        // Output must not depend on the run.
        assert_eq!(
            out,
            compile(&file, &opts).unwrap().text,
            "{rel}: output differs run to run"
        );
        let golden = root.join(golden_dir).join(&name);
        if bless {
            std::fs::create_dir_all(golden.parent().unwrap()).unwrap();
            std::fs::write(&golden, &out).unwrap();
            continue;
        }
        let expected = std::fs::read_to_string(&golden).unwrap_or_default();
        if expected != out {
            let diff = TextDiff::from_lines(&expected, &out)
                .unified_diff()
                .header(&golden.display().to_string(), "appyc output")
                .to_string();
            failures.push(format!("{rel} differs from {}:\n{diff}", golden.display()));
        }
    }
    assert!(
        failures.is_empty(),
        "{}\n(run `APPYC_BLESS=1 cargo test --test golden` to accept the new output)",
        failures.join("\n")
    );
}

#[test]
fn python_output_matches_golden() {
    check(Emit::Python, "golden");
}

#[test]
fn lowered_output_matches_golden() {
    check(Emit::Lowered, "golden/lowered");
}

/// The held-out multi-GPU program (bench/nvshmem_heldout, issue 24) is timed from its committed
/// module on machines without Rust: that module must be what the compiler writes now.
#[test]
fn held_out_nvshmem_module_is_current() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let rel = "bench/nvshmem_heldout/heat_rows.py";
    let file = SourceFile::new(
        rel.to_string(),
        std::fs::read_to_string(root.join(rel)).unwrap(),
    );
    let out = compile(&file, &Options::default())
        .unwrap_or_else(|d| panic!("{}", d.render(&file)))
        .text;
    let generated = root.join("bench/nvshmem_heldout/heat_rows_gen.py");
    if std::env::var_os("APPYC_BLESS").is_some() {
        std::fs::write(&generated, &out).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&generated).unwrap_or_default();
    assert!(
        expected == out,
        "{} is stale (APPYC_BLESS=1 cargo test --test golden rewrites it):\n{}",
        generated.display(),
        TextDiff::from_lines(&expected, &out).unified_diff()
    );
}
