//! The shape of `src/` that ARCHITECTURE.md's map draws, kept true: no function outside
//! `#[cfg(test)]` longer than 150 lines, no two files of `src/` importing each other (directly
//! or around a loop), and no file importing from a floor above its own.
//!
//! Read from the text, not from rustc: comments, strings and `#[cfg(test)]` items are blanked
//! first, then every `crate::a::b`, `super::x` and `self::x` path (in `use` lines and inline)
//! is resolved to the longest prefix that is a file of `src/`. A doc link is a comment and
//! does not count; test code may reach anywhere.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const MAX_FUNCTION_LINES: usize = 150;

/// The floors, bottom first: a file may import files of its own floor (acyclically) and of the
/// floors below. The first matching prefix of a module path decides its floor.
const FLOORS: &[(&str, &[&str])] = &[
    ("text", &["frontend::source", "diag"]),
    ("ir", &["ir"]),
    ("frontend", &["frontend"]),
    ("passes", &["passes"]),
    ("schedule", &["schedule"]),
    ("codegen", &["codegen"]),
    ("driver", &["driver"]),
    ("settings", &["config", "reference"]),
    ("entry", &["cli", "python", "main", ""]),
];

fn floor_of(module: &str) -> usize {
    FLOORS
        .iter()
        .position(|(_, prefixes)| {
            prefixes
                .iter()
                .any(|p| module == *p || (!p.is_empty() && module.starts_with(&format!("{p}::"))))
        })
        .unwrap_or_else(|| panic!("module `{module}` has no floor in tests/structure.rs"))
}

/// Blanks comments, string and char literals (keeping newlines, so line numbers hold).
fn code_only(text: &str) -> Vec<u8> {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to.min(b.len())] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut i = 0;
    while i < b.len() {
        let rest = &b[i..];
        if rest.starts_with(b"//") {
            let end = rest
                .iter()
                .position(|&c| c == b'\n')
                .map_or(b.len(), |e| i + e);
            blank(&mut out, i, end);
            i = end;
        } else if rest.starts_with(b"/*") {
            let (mut depth, mut j) = (0, i);
            while j < b.len() {
                if b[j..].starts_with(b"/*") {
                    depth += 1;
                    j += 2;
                } else if b[j..].starts_with(b"*/") {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            blank(&mut out, i, j);
            i = j;
        } else if let Some(len) = raw_string_len(b, i).filter(|_| i == 0 || !ident(b[i - 1])) {
            blank(&mut out, i, i + len);
            i += len;
        } else if b[i] == b'"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            blank(&mut out, i, j + 1);
            i = j + 1;
        } else if b[i] == b'\'' && rest.get(1) == Some(&b'\\') {
            let end = rest[2..].iter().position(|&c| c == b'\'').unwrap() + i + 3;
            blank(&mut out, i, end);
            i = end;
        } else if b[i] == b'\'' && rest.get(2) == Some(&b'\'') {
            blank(&mut out, i, i + 3);
            i += 3;
        } else {
            // A lifetime, or a char literal of several bytes (non-ASCII): neither holds braces.
            i += 1;
        }
    }
    out
}

/// `r"…"`, `r#"…"#`, `br"…"` starting at `i`: the literal's length.
fn raw_string_len(b: &[u8], i: usize) -> Option<usize> {
    let mut j = i;
    if b.get(j) == Some(&b'b') {
        j += 1;
    }
    if b.get(j) != Some(&b'r') {
        return None;
    }
    j += 1;
    let hashes = b[j..].iter().take_while(|&&c| c == b'#').count();
    j += hashes;
    if b.get(j) != Some(&b'"') {
        return None;
    }
    let mut close = vec![b'"'];
    close.extend(std::iter::repeat_n(b'#', hashes));
    let end = b[j + 1..].windows(close.len()).position(|w| w == close)?;
    Some(j + 1 + end + close.len() - i)
}

fn matching_brace(code: &[u8], open: usize) -> usize {
    let mut depth = 0;
    for (j, &c) in code.iter().enumerate().skip(open) {
        match c {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return j;
                }
            }
            _ => {}
        }
    }
    code.len() - 1
}

/// The end of the item that starts at `from`: its `;`, or its body's closing brace.
fn item_end(code: &[u8], from: usize) -> Option<usize> {
    let semi = code[from..].iter().position(|&c| c == b';');
    let brace = code[from..].iter().position(|&c| c == b'{');
    match (semi, brace) {
        (Some(s), Some(b)) if s < b => Some(from + s),
        (_, Some(b)) => Some(matching_brace(code, from + b)),
        (Some(s), None) => Some(from + s),
        (None, None) => None,
    }
}

fn find(code: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    code.get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|p| p + from)
}

/// Blanks every item marked `#[cfg(test)]`.
fn without_tests(mut code: Vec<u8>) -> Vec<u8> {
    let mark = b"#[cfg(test)]";
    while let Some(at) = find(&code, mark, 0) {
        let end = item_end(&code, at + mark.len()).unwrap_or(code.len() - 1);
        for c in &mut code[at..=end] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    }
    code
}

struct SourceModule {
    file: String,
    code: Vec<u8>,
}

fn module_path(rel: &Path) -> String {
    let mut parts: Vec<String> = rel
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    parts.join("::")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn modules() -> BTreeMap<String, SourceModule> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = vec![];
    rust_files(&src, &mut files);
    files
        .into_iter()
        .map(|path| {
            let rel = path.strip_prefix(&src).unwrap().to_path_buf();
            let text = std::fs::read_to_string(&path).unwrap();
            let module = SourceModule {
                file: format!("src/{}", rel.display()),
                code: without_tests(code_only(&text)),
            };
            (module_path(&rel), module)
        })
        .collect()
}

fn words(code: &[u8]) -> Vec<(usize, String)> {
    let mut out = vec![];
    let mut i = 0;
    while i < code.len() {
        if code[i].is_ascii_alphabetic() || code[i] == b'_' {
            let start = i;
            while i < code.len() && (code[i].is_ascii_alphanumeric() || code[i] == b'_') {
                i += 1;
            }
            out.push((start, String::from_utf8_lossy(&code[start..i]).into_owned()));
        } else {
            i += 1;
        }
    }
    out
}

fn line_of(code: &[u8], at: usize) -> usize {
    code[..at].iter().filter(|&&c| c == b'\n').count() + 1
}

/// The module a path names: the longest prefix that is a file of src/.
fn resolve(path: &[String], known: &BTreeMap<String, SourceModule>) -> Option<String> {
    (0..=path.len())
        .rev()
        .map(|n| path[..n].join("::"))
        .find(|m| known.contains_key(m))
}

/// Every module that `module`'s code names through `crate::`, `super::` or `self::`, or
/// through `use child::…` in a parent.
fn imports(
    module: &str,
    m: &SourceModule,
    known: &BTreeMap<String, SourceModule>,
) -> BTreeSet<String> {
    let own: Vec<String> = if module.is_empty() {
        vec![]
    } else {
        module.split("::").map(String::from).collect()
    };
    let is_dir_module = m.file.ends_with("mod.rs") || m.file.ends_with("lib.rs");
    // `super` of a file `a/b.rs` (module a::b) is `a`; of `a/mod.rs` (module a) it is the root.
    let parent: Vec<String> = own[..own.len().saturating_sub(1)].to_vec();
    let text = String::from_utf8_lossy(&m.code).into_owned();
    let mut out = BTreeSet::new();
    let mut push = |path: Vec<String>| {
        if let Some(target) = resolve(&path, known) {
            if target != module {
                out.insert(target);
            }
        }
    };
    for (at, word) in words(&m.code) {
        let base = match word.as_str() {
            "crate" => vec![],
            "super" => parent.clone(),
            "self" => own.clone(),
            _ => continue,
        };
        let rest = &text[at + word.len()..];
        if !rest.starts_with("::") {
            continue;
        }
        let segments: Vec<String> = rest[2..]
            .split("::")
            .map(|s| {
                s.chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect::<String>()
            })
            .take_while(|s| !s.is_empty())
            .collect();
        // `a::{b, c}` groups: each name after the prefix is its own path.
        let after = rest[2..].split_once('{');
        let mut path = base.clone();
        path.extend(segments.iter().cloned());
        push(path);
        if let Some((head, tail)) = after {
            if head
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
            {
                let group = tail.split('}').next().unwrap_or("");
                for name in group.split(',') {
                    let mut p = base.clone();
                    p.extend(head.split("::").filter(|s| !s.is_empty()).map(String::from));
                    p.extend(name.trim().split("::").map(|s| s.trim().to_string()));
                    push(p);
                }
            }
        }
    }
    if is_dir_module {
        for line in text.lines() {
            let Some(rest) = line.trim_start().strip_prefix("use ").or_else(|| {
                line.trim_start()
                    .strip_prefix("pub use ")
                    .or_else(|| line.trim_start().strip_prefix("pub(crate) use "))
            }) else {
                continue;
            };
            let head = rest.split("::").next().unwrap_or("").trim();
            let mut path = own.clone();
            path.push(head.to_string());
            if known.contains_key(&path.join("::")) {
                push(path);
            }
        }
    }
    out
}

#[test]
fn no_function_outside_tests_is_longer_than_150_lines() {
    let mut long = vec![];
    for m in modules().values() {
        for (at, word) in words(&m.code) {
            if word != "fn" {
                continue;
            }
            let Some(end) = item_end(&m.code, at) else {
                continue;
            };
            if m.code[end] != b'}' {
                continue; // a declaration without a body
            }
            let lines = line_of(&m.code, end) - line_of(&m.code, at) + 1;
            if lines > MAX_FUNCTION_LINES {
                let name: String = String::from_utf8_lossy(&m.code[at + 2..])
                    .trim_start()
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                long.push(format!(
                    "{}:{}: fn {name} is {lines} lines",
                    m.file,
                    line_of(&m.code, at)
                ));
            }
        }
    }
    assert!(
        long.is_empty(),
        "functions over {MAX_FUNCTION_LINES} lines (split them into named steps):\n{}",
        long.join("\n")
    );
}

/// Tarjan's strongly connected components of more than one module, or a module importing
/// itself through `self::`, which `imports` already leaves out.
fn cycles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct State<'a> {
        edges: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        for w in s.edges[v].iter() {
            if !s.index.contains_key(w.as_str()) {
                visit(s, w);
                let lw = s.low[w.as_str()];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if s.stack.contains(&w.as_str()) {
                let iw = s.index[w.as_str()];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = vec![];
            while let Some(w) = s.stack.pop() {
                component.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                s.out.push(component);
            }
        }
    }
    let mut s = State {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: vec![],
        out: vec![],
    };
    for v in edges.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.out
}

fn import_graph() -> BTreeMap<String, BTreeSet<String>> {
    let known = modules();
    known
        .iter()
        .map(|(name, m)| (name.clone(), imports(name, m, &known)))
        .collect()
}

#[test]
fn no_two_files_of_src_import_each_other() {
    let found = cycles(&import_graph());
    assert!(
        found.is_empty(),
        "import cycles among the files of src/ (move what both sides need one floor down):\n{}",
        found
            .iter()
            .map(|c| c.join(" <-> "))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn every_import_goes_to_the_same_floor_or_one_below() {
    let mut upward = vec![];
    for (module, targets) in import_graph() {
        for target in targets {
            let (from, to) = (floor_of(&module), floor_of(&target));
            if to > from {
                upward.push(format!(
                    "{} ({}) imports {} ({})",
                    if module.is_empty() { "crate" } else { &module },
                    FLOORS[from].0,
                    target,
                    FLOORS[to].0
                ));
            }
        }
    }
    assert!(
        upward.is_empty(),
        "imports against the floors of ARCHITECTURE.md's map:\n{}",
        upward.join("\n")
    );
}

#[test]
fn the_checks_see_what_they_look_for() {
    // A long function, a cycle and the blanking of literals, on made-up code: a checker that
    // finds nothing anywhere would pass the tests above.
    let body = "    x += 1;\n".repeat(MAX_FUNCTION_LINES);
    let code = without_tests(code_only(&format!(
        "fn long() {{\n{body}}}\n#[cfg(test)]\nmod tests {{ fn t() {{ \"{{\"; }} }}\nfn f() {{ let c = '{{'; let s = r#\"}}\"#; }}\n"
    )));
    let fns: Vec<_> = words(&code)
        .into_iter()
        .filter(|(_, w)| w == "fn")
        .collect();
    assert_eq!(fns.len(), 2, "the test module is blanked");
    let end = item_end(&code, fns[0].0).unwrap();
    assert_eq!(
        line_of(&code, end) - line_of(&code, fns[0].0) + 1,
        MAX_FUNCTION_LINES + 2
    );
    let end = item_end(&code, fns[1].0).unwrap();
    assert_eq!(code[end], b'}', "braces in literals are not counted");
    let edges: BTreeMap<String, BTreeSet<String>> = [
        ("a", vec!["b"]),
        ("b", vec!["c"]),
        ("c", vec!["a"]),
        ("d", vec!["a"]),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.into_iter().map(String::from).collect()))
    .collect();
    assert_eq!(cycles(&edges), vec![vec!["a", "b", "c"]]);
    // The real graph has edges, resolved to files: the driver reaches codegen and passes.
    let graph = import_graph();
    assert!(graph["driver"].iter().any(|t| t.starts_with("codegen::")));
    assert!(graph["driver"].iter().any(|t| t.starts_with("passes")));
}
