//! docs/pragmas.md is generated from the embedded spec (`appyc --print-reference`); this test
//! fails when the checked-in file is stale. `APPYC_BLESS=1 cargo test --test reference`
//! rewrites it.

use std::path::Path;
use std::process::Command;

#[test]
fn docs_pragmas_md_is_up_to_date() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/pragmas.md");
    let out = Command::new(env!("CARGO_BIN_EXE_appyc"))
        .arg("--print-reference")
        .output()
        .expect("appyc runs");
    assert!(out.status.success());
    let generated = String::from_utf8(out.stdout).unwrap();
    assert_eq!(generated, appyc::reference::markdown());
    if std::env::var_os("APPYC_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &generated).unwrap();
        return;
    }
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    if on_disk != generated {
        let diff = similar::TextDiff::from_lines(&on_disk, &generated)
            .unified_diff()
            .header("docs/pragmas.md", "appyc --print-reference")
            .to_string();
        panic!(
            "docs/pragmas.md is stale:\n{diff}\n(run `APPYC_BLESS=1 cargo test --release --test reference` to regenerate it)"
        );
    }
}
