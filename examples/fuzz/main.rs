//! The fuzzer's command: mutated samples compiled in-process, panics caught and reported.
//!
//!     cargo run --release --example fuzz -- --iterations 1000000 --seed 1
//!
//! Options: `--iterations N` (default 100000), `--seed S` (default 1), `--start K` (the first
//! iteration, to resume or to replay one: `--start K --iterations 1`), `--out DIR` (where the
//! inputs that panicked are written, default `fuzz-crashes`), `--dump` (write the inputs of the
//! range to `--out` without compiling them). Exit 1 when something panicked. Inputs slower than
//! 2 s to compile are named too.
//! Each input is a function of (seed, iteration); the report names both.

// The fuzzer itself (inputs, mutations, the run), shared with tests/fuzz.rs.
mod fuzzer;

use std::path::{Path, PathBuf};
use std::time::Instant;

fn main() {
    let mut iterations: u64 = 100_000;
    let mut seed: u64 = 1;
    let mut start: u64 = 0;
    let mut out = PathBuf::from("fuzz-crashes");
    let mut dump = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || {
            args.next().unwrap_or_else(|| {
                eprintln!("fuzz: {a} needs a value");
                std::process::exit(2)
            })
        };
        let number = |v: String| {
            v.replace('_', "").parse::<u64>().unwrap_or_else(|_| {
                eprintln!("fuzz: `{v}` is not a number");
                std::process::exit(2)
            })
        };
        match a.as_str() {
            "--iterations" | "-n" => iterations = number(value()),
            "--seed" | "-s" => seed = number(value()),
            "--start" => start = number(value()),
            "--out" => out = PathBuf::from(value()),
            "--dump" => dump = true,
            "--help" | "-h" => {
                println!(
                    "usage: fuzz [--iterations N] [--seed S] [--start K] [--out DIR] [--dump]"
                );
                return;
            }
            other => {
                eprintln!("fuzz: unknown argument `{other}`");
                std::process::exit(2)
            }
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let corpus = fuzzer::corpus(root);
    eprintln!(
        "fuzz: seed {seed}, iterations {start}..{}, corpus of {} inputs",
        start + iterations,
        corpus.len()
    );
    if dump {
        // The inputs themselves, not compiled: to look at one (a slow one, say).
        std::fs::create_dir_all(&out).expect("output directory");
        for i in start..start + iterations {
            let (text, opts) = fuzzer::input(seed, i, &corpus);
            let path = out.join(format!("seed{seed}-iter{i}.py"));
            std::fs::write(&path, format!("# {opts:?}\n{text}")).expect("input file");
        }
        return;
    }
    let begun = Instant::now();
    let (mut inputs, mut compiled, mut crashes) = (0u64, 0u64, 0usize);
    // Chunks, so that progress shows and a hard abort (which no catch_unwind can stop) is
    // located within a chunk: rerun it with --start.
    let chunk = 10_000;
    let mut at = start;
    while at < start + iterations {
        let end = (at + chunk).min(start + iterations);
        let report = fuzzer::run(seed, at..end, &corpus);
        inputs += report.inputs;
        compiled += report.compiled;
        for c in &report.crashes {
            crashes += 1;
            std::fs::create_dir_all(&out).expect("crash directory");
            let path = out.join(format!("seed{}-iter{}.py", c.seed, c.iteration));
            let header: String = c.message.lines().map(|l| format!("# {l}\n")).collect();
            std::fs::write(&path, format!("{header}{}", c.input)).expect("crash file");
            eprintln!(
                "fuzz: PANIC at seed {} iteration {}: {} (input: {})",
                c.seed,
                c.iteration,
                c.message,
                path.display()
            );
        }
        for (i, secs) in &report.slow {
            eprintln!("fuzz: slow: seed {seed} iteration {i} took {secs:.1} s");
        }
        at = end;
        eprintln!(
            "fuzz: {inputs} inputs ({compiled} compiled), {crashes} panics, {:.1} s",
            begun.elapsed().as_secs_f64()
        );
    }
    println!(
        "fuzz: seed {seed}: {inputs} inputs, {compiled} compiled, {crashes} panics in {:.1} s",
        begun.elapsed().as_secs_f64()
    );
    if crashes > 0 {
        std::process::exit(1);
    }
}
