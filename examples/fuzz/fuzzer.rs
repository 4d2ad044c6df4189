//! An in-process fuzzer on stable Rust: mutations of the samples (bytes, tokens, lines, pragma
//! lines, deep expressions) compiled with [`appyc::driver::compile`], panics caught. Every
//! input is a function of `(seed, iteration)`, so a failure is reproduced by its pair.
//! `examples/fuzz/main.rs` is the command (`cargo run --release --example fuzz -- --help`);
//! `tests/fuzz.rs` runs a short round in CI, and this module's own tests, by including this
//! file. It uses the library's public API only: the fuzzer is no part of the library.

use appyc::driver::{compile, Emit, Options};
use appyc::frontend::source::SourceFile;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex};

/// xorshift64*: small, fast and reproducible; not for anything but choosing mutations.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        // splitmix64 of the seed, so nearby seeds start far apart (and never at 0).
        let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        Rng((z ^ (z >> 31)) | 1)
    }
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
    pub fn chance(&mut self, one_in: usize) -> bool {
        self.below(one_in) == 0
    }
}

/// Words a mutation may insert into a pragma line.
const PRAGMA_WORDS: &[&str] = &[
    "parallel",
    "for",
    "simd",
    "simd(4)",
    "simd(",
    "block(64)",
    "sequential",
    "persistent",
    "atomic",
    "num_warps(8)",
    "num_warps(3)",
    "le(16)",
    "le(",
    "reduce(sum)",
    "reduce(max:y)",
    "reduction(+:x)",
    "shared(s)",
    ",",
    ",,",
    "=>",
    ":",
    ":N",
    "1:N-1",
    ":M=>parallel",
    ":N=>simd",
    "(",
    ")",
    "[",
    "]",
    " ",
    "\t",
];

/// Characters and fragments a byte or token mutation may insert.
const FRAGMENTS: &[&str] = &[
    "(",
    ")",
    "[",
    "]",
    ":",
    ",",
    "=",
    "+",
    "-",
    "*",
    "/",
    "//",
    "%",
    "**",
    "@",
    ".",
    "#",
    "\n",
    " ",
    "    ",
    "\t",
    "0",
    "1",
    "-1",
    "2",
    "65536",
    "4294967296",
    "1e308",
    "0.5",
    "N",
    "M",
    "i",
    "j",
    "A",
    "x",
    "np",
    "np.sum",
    "None",
    "lambda",
    "if",
    "else",
    "for",
    "in",
    "range",
    "not",
    "and",
    "+=",
    "max",
    "min",
    "appy.vidx",
    "appy.MVL",
    "'",
    "\"",
    "\\",
    "é",
    "\u{0}",
    "#pragma parallel for\n",
    "#pragma simd\n",
    "#pragma atomic\n",
];

/// Interesting replacement numbers.
const NUMBERS: &[&str] = &[
    "0",
    "1",
    "-1",
    "2",
    "3",
    "7",
    "-7",
    "65535",
    "65536",
    "131072",
    "2147483648",
    "18446744073709551616",
    "0.0",
    "-0.5",
    "1e-300",
    "1e308",
];

fn char_boundary_at(text: &str, mut i: usize) -> usize {
    i = i.min(text.len());
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Byte offsets of the start of each line.
fn line_starts(text: &str) -> Vec<usize> {
    std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .filter(|&i| i < text.len())
        .collect()
}

/// Spans of identifier-or-number tokens (approximately: runs of word characters).
fn words(text: &str) -> Vec<(usize, usize)> {
    let mut out = vec![];
    let mut start = None;
    for (i, c) in text.char_indices() {
        let w = c.is_ascii_alphanumeric() || c == '_' || c == '.';
        match (w, start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                out.push((s, i));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push((s, text.len()));
    }
    out
}

/// A nested expression `depth` levels deep, of one of several shapes.
fn deep_expr(rng: &mut Rng, depth: usize) -> String {
    match rng.below(5) {
        // a long left-associated sum
        0 => vec!["A[i]"; depth.max(1)].join(" + "),
        // right-nested parentheses
        1 => format!("{}A[i]{}", "(A[i] + ".repeat(depth), ")".repeat(depth)),
        // unary chain
        2 => format!("{}A[i]", "-".repeat(depth)),
        // nested calls
        3 => format!("{}A[i]{}", "abs(".repeat(depth), ")".repeat(depth)),
        // nested subscripts
        _ => format!("{}i{}", "A[".repeat(depth), "]".repeat(depth)),
    }
}

/// One mutation of `text`, in place. `corpus` provides lines to splice from.
pub fn mutate(rng: &mut Rng, text: &mut String, corpus: &[String]) {
    let len = text.len();
    match rng.below(16) {
        0 if len > 0 => delete_char(rng, text),
        1 => insert_fragment(rng, text),
        2 | 3 => replace_word(rng, text),
        4 | 5 => shuffle_lines(rng, text),
        6 => reindent_line(rng, text),
        7 => splice_line(rng, text, corpus),
        8..=11 => edit_pragma(rng, text),
        12 => deepen_element(rng, text),
        13 if len > 0 => truncate(rng, text),
        14 => misspell_pragma(rng, text),
        // (also 0 and 13 on an empty text, where it does nothing)
        _ => duplicate_region(rng, text),
    }
}

/// Deletes a character (`text` not empty).
fn delete_char(rng: &mut Rng, text: &mut String) {
    let at = char_boundary_at(text, rng.below(text.len()));
    if let Some(c) = text[at..].chars().next() {
        text.replace_range(at..at + c.len_utf8(), "");
    }
}

/// Inserts a fragment anywhere.
fn insert_fragment(rng: &mut Rng, text: &mut String) {
    let at = char_boundary_at(text, rng.below(text.len() + 1));
    let fragment = *rng.pick::<&str>(FRAGMENTS);
    text.insert_str(at, fragment);
}

/// Replaces a word with a fragment, a number or another word of the text.
fn replace_word(rng: &mut Rng, text: &mut String) {
    let ws = words(text);
    if ws.is_empty() {
        return;
    }
    let (s, e) = *rng.pick(&ws);
    let with = match rng.below(3) {
        0 => rng.pick(FRAGMENTS).to_string(),
        1 => rng.pick(NUMBERS).to_string(),
        _ => {
            let (s2, e2) = *rng.pick(&ws);
            text[s2..e2].to_string()
        }
    };
    text.replace_range(s..e, &with);
}

/// Deletes, duplicates or swaps lines.
fn shuffle_lines(rng: &mut Rng, text: &mut String) {
    let mut lines: Vec<String> = text.split_inclusive('\n').map(String::from).collect();
    if lines.is_empty() {
        return;
    }
    let a = rng.below(lines.len());
    let b = rng.below(lines.len());
    match rng.below(3) {
        0 => {
            lines.remove(a);
        }
        1 => {
            let l = lines[a].clone();
            lines.insert(b, l);
        }
        _ => lines.swap(a, b),
    }
    *text = lines.concat();
}

/// Indents a line by four spaces more, or less.
fn reindent_line(rng: &mut Rng, text: &mut String) {
    let starts = line_starts(text);
    if starts.is_empty() {
        return;
    }
    let at = *rng.pick(&starts);
    if rng.chance(2) {
        text.insert_str(at, "    ");
    } else if text[at..].starts_with("    ") {
        text.replace_range(at..at + 4, "");
    }
}

/// Inserts a line of another input of the corpus.
fn splice_line(rng: &mut Rng, text: &mut String, corpus: &[String]) {
    let other = rng.pick(corpus);
    let lines: Vec<&str> = other.split_inclusive('\n').collect();
    if lines.is_empty() {
        return;
    }
    let line = rng.pick(&lines).to_string();
    let starts = line_starts(text);
    let at = if starts.is_empty() {
        0
    } else {
        *rng.pick(&starts)
    };
    text.insert_str(at, &line);
}

/// Pragma-aware: inside a pragma line, deletes or duplicates a character, inserts a pragma
/// word or replaces the words; without a pragma, adds one.
fn edit_pragma(rng: &mut Rng, text: &mut String) {
    let pragmas: Vec<(usize, usize)> = line_starts(text)
        .into_iter()
        .filter_map(|s| {
            let line = &text[s..];
            let end = s + line.find('\n').unwrap_or(line.len());
            let p = text[s..end].find("#pragma")?;
            Some((s + p + "#pragma".len(), end))
        })
        .collect();
    let Some(&(s, e)) = (!pragmas.is_empty()).then(|| rng.pick(&pragmas)) else {
        let starts = line_starts(text);
        let at = starts
            .get(rng.below(starts.len().max(1)))
            .copied()
            .unwrap_or(0);
        text.insert_str(at, "    #pragma parallel for\n");
        return;
    };
    let at = char_boundary_at(text, s + rng.below(e - s + 1));
    match rng.below(4) {
        0 if at < e => {
            if let Some(c) = text[at..].chars().next() {
                text.replace_range(at..at + c.len_utf8(), "");
            }
        }
        1 if at < e => {
            if let Some(c) = text[at..].chars().next() {
                text.insert(at, c);
            }
        }
        2 => {
            let word = *rng.pick::<&str>(PRAGMA_WORDS);
            text.insert_str(at, word)
        }
        _ => {
            let n = 1 + rng.below(4);
            let words: Vec<&str> = (0..n).map(|_| *rng.pick(PRAGMA_WORDS)).collect();
            text.replace_range(s..e, &format!(" {}", words.join(" ")));
        }
    }
}

/// Puts a deep or long expression in place of an array element (one in 500 deeper than
/// 20,000 levels).
fn deepen_element(rng: &mut Rng, text: &mut String) {
    let Some(at) = text.find("A[i]").or_else(|| text.find("[i]")) else {
        return;
    };
    let depth = if rng.chance(500) {
        20_000 + rng.below(60_000)
    } else {
        1 + rng.below(300)
    };
    let e = deep_expr(rng, depth);
    let end = at + if text[at..].starts_with("A[i]") { 4 } else { 3 };
    text.replace_range(at..end, &e);
}

/// Cuts the text short (`text` not empty).
fn truncate(rng: &mut Rng, text: &mut String) {
    let at = char_boundary_at(text, rng.below(text.len()));
    text.truncate(at);
}

/// Respells the first `#pragma` as a comment-like near miss (`# pragma`, `#PRAGMA`, ...).
fn misspell_pragma(rng: &mut Rng, text: &mut String) {
    if let Some(p) = text.find("#pragma") {
        let with = *rng.pick(&["#PRAGMA", "# pragma", "#pragma", "#Pragma", "#  pragma"]);
        text.replace_range(p..p + 7, with);
        if rng.chance(3) {
            let after = p + with.len();
            if text[after..].starts_with(' ') {
                text.replace_range(after..after + 1, "");
            }
        }
    }
}

/// Inserts a copy of up to 200 bytes of the text anywhere in it.
fn duplicate_region(rng: &mut Rng, text: &mut String) {
    let len = text.len();
    if len == 0 {
        return;
    }
    let a = char_boundary_at(text, rng.below(len));
    let b = char_boundary_at(text, a + rng.below(200).min(len - a));
    let chunk = text[a..b].to_string();
    let at = char_boundary_at(text, rng.below(len + 1));
    text.insert_str(at, &chunk);
}

/// The input and options of iteration `i` of a run with `seed`.
pub fn input(seed: u64, i: u64, corpus: &[String]) -> (String, Options) {
    let mut rng = Rng::new(seed ^ i.wrapping_mul(0xD1B5_4A32_D192_ED03));
    let mut text = rng.pick(corpus).clone();
    let n = 1 + rng.below(4);
    for _ in 0..n {
        mutate(&mut rng, &mut text, corpus);
    }
    let opts = Options {
        emit: if rng.chance(8) {
            Emit::Lowered
        } else {
            Emit::Python
        },
        mvl: rng.chance(8).then_some(256),
        auto_simd: !rng.chance(6),
        autotune: !rng.chance(6),
        persistent: !rng.chance(6),
        deny_warnings: false,
    };
    (text, opts)
}

#[derive(Debug, Clone)]
pub struct Crash {
    pub seed: u64,
    pub iteration: u64,
    pub message: String,
    pub input: String,
}

#[derive(Debug, Default)]
pub struct Report {
    pub inputs: u64,
    /// Inputs that compiled (the rest were rejected with a diagnostic).
    pub compiled: u64,
    pub crashes: Vec<Crash>,
    /// Iterations that took longer than [`SLOW`], with their seconds.
    pub slow: Vec<(u64, f64)>,
}

/// An input slower than this to compile is reported (a blow-up, not a crash).
pub const SLOW: std::time::Duration = std::time::Duration::from_secs(2);

/// Runs iterations `range` of `seed` over `corpus`; panics are caught and reported (the panic
/// hook is silenced meanwhile and restored after).
pub fn run(seed: u64, range: std::ops::Range<u64>, corpus: &[String]) -> Report {
    let last_panic: Arc<Mutex<String>> = Arc::default();
    let hook = std::panic::take_hook();
    {
        let last = last_panic.clone();
        std::panic::set_hook(Box::new(move |info| {
            let at = info
                .location()
                .map(|l| format!(" at {}:{}", l.file(), l.line()))
                .unwrap_or_default();
            let msg = info
                .payload()
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| info.payload().downcast_ref::<String>().cloned())
                .unwrap_or_default();
            *last.lock().unwrap_or_else(|e| e.into_inner()) = format!("{msg}{at}");
        }));
    }
    let mut report = Report::default();
    for i in range {
        let (text, opts) = input(seed, i, corpus);
        let file = SourceFile::new("fuzz.py", text);
        report.inputs += 1;
        let begun = std::time::Instant::now();
        // Rendering the diagnostics is part of the contract too.
        let outcome = catch_unwind(AssertUnwindSafe(|| match compile(&file, &opts) {
            Ok(out) => {
                for w in &out.warnings {
                    let _ = w.render(&file);
                }
                true
            }
            Err(d) => {
                let _ = d.render(&file);
                false
            }
        }));
        if begun.elapsed() > SLOW {
            report.slow.push((i, begun.elapsed().as_secs_f64()));
        }
        match outcome {
            Ok(true) => report.compiled += 1,
            Ok(false) => {}
            Err(_) => report.crashes.push(Crash {
                seed,
                iteration: i,
                message: last_panic.lock().unwrap_or_else(|e| e.into_inner()).clone(),
                input: file.text.clone(),
            }),
        }
    }
    std::panic::set_hook(hook);
    report
}

/// The samples, the bad inputs and the examples of the pragma spec (wrapped in a function), as
/// read from the repository at `root`.
pub fn corpus(root: &std::path::Path) -> Vec<String> {
    let mut out = vec![];
    for dir in ["samples", "tests/bad", "tests/warn"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        let mut paths: Vec<_> = entries.flatten().map(|e| e.path()).collect();
        paths.sort();
        for p in paths {
            if p.extension().is_some_and(|e| e == "py") {
                if let Ok(text) = std::fs::read_to_string(&p) {
                    out.push(text);
                }
            }
        }
    }
    let spec = appyc::frontend::spec::spec();
    let examples = spec
        .directives
        .iter()
        .map(|d| &d.example)
        .chain(spec.clauses.iter().map(|c| &c.example))
        .chain(spec.dimension_pragma.properties.iter().map(|p| &p.example));
    for ex in examples {
        let body: String = ex.lines().map(|l| format!("    {l}\n")).collect();
        out.push(format!("def example(A, B, C, M, N, T, x, y, s):\n{body}"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_are_reproducible() {
        let corpus = vec![
            "def f(A, N):\n    #pragma parallel for\n    for i in range(N):\n        A[i] = 0.0\n"
                .to_string(),
        ];
        for i in 0..200 {
            let (a, _) = input(7, i, &corpus);
            let (b, _) = input(7, i, &corpus);
            assert_eq!(a, b);
        }
    }
}
