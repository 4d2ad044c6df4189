//! The output's imports and decorators. The output never imports `appy`: every import of it,
//! however spelled and wherever it stands (`import appy`, `import appy as ap`, `from appy import
//! jit as j`, `import numpy as np, appy`, an import inside a function), and every decorator from
//! it (`@appy.jit`, `@appy.jit(...)`, `@ap.jit`, `@jit`), on any function or class, is dropped;
//! a use of an appy name that the output would keep (anywhere outside the regions appyc
//! compiles, which consume `appy.vidx` and `appy.MVL`) is an error at that use. `import numpy`
//! goes when nothing outside the compiled functions uses it, and `from appyc_aot import
//! nvshmem` (the reference module, replaced by the generated runtime) when only compiled
//! functions use it.

use super::host::Edit;
use crate::diag::{Diagnostic, Result};
use crate::frontend::lower::dotted_name;
use crate::frontend::source::{SourceFile, Span};
use rustpython_ast as ast;
use rustpython_ast::Ranged;
use std::collections::HashSet;

/// What of the source becomes kernels: the spans of the compiled functions (their host code is
/// rewritten, so NumPy names in them need no import) and of the regions inside them (replaced
/// by launches, so appy names in them vanish).
pub struct Compiled<'a> {
    pub functions: &'a [Span],
    pub regions: &'a [Span],
}

/// The edits that drop appy's imports and decorators and the imports nothing needs any more;
/// an error where a use of appy would remain in the output.
pub fn edits(file: &SourceFile, module: &[ast::Stmt], compiled: &Compiled) -> Result<Vec<Edit>> {
    let mut appy = HashSet::from(["appy".to_string()]);
    let mut imports: Vec<Span> = vec![];
    for block in blocks(module) {
        for s in block.stmts {
            if matches!(s, ast::Stmt::Import(_) | ast::Stmt::ImportFrom(_)) {
                imports.push(s.range().into());
                appy.extend(appy_bindings(s)?);
            }
        }
    }
    imports.sort_by_key(|s| s.start);
    let names = names(file);
    // Names outside the compiled functions (sorted, disjoint) and the imports: what NumPy's
    // import must still serve.
    let outside: HashSet<&str> = names
        .iter()
        .filter(|(_, at, _)| !inside_any(compiled.functions, *at) && !inside_any(&imports, *at))
        .map(|(n, _, _)| n.as_str())
        .collect();
    let mut edits = vec![];
    let mut decorators: Vec<Span> = vec![];
    for block in blocks(module) {
        let mut changed = vec![];
        for s in block.stmts {
            decorators.extend(drop_decorators(file, s, &appy, &mut edits));
            let keep = kept_aliases(s, block.top_level, &outside);
            if let Some(keep) = keep {
                changed.push((s, keep));
            }
        }
        // A block whose every statement goes keeps a `pass` in the first one's place.
        let gone = changed.iter().filter(|(_, keep)| keep.is_empty()).count();
        let emptied = !block.top_level && gone == block.stmts.len();
        for (k, (s, keep)) in changed.into_iter().enumerate() {
            edits.push(statement_edit(file, s, &keep, emptied && k == 0));
        }
    }
    decorators.sort_by_key(|s| s.start);
    let regions = union(compiled.regions);
    if let Some((name, at, _)) = names.iter().find(|(name, at, after_dot)| {
        !after_dot
            && appy.contains(name)
            && !inside_any(&imports, *at)
            && !inside_any(&decorators, *at)
            && !inside_any(&regions, *at)
    }) {
        return Err(leftover_use(name, *at));
    }
    Ok(edits)
}

/// A block of statements, and whether it is the module's.
struct Block<'a> {
    stmts: &'a [ast::Stmt],
    top_level: bool,
}

/// The module and every block nested in it (bodies of functions, classes, loops, ifs, withs,
/// tries, match cases), outermost first.
fn blocks(module: &[ast::Stmt]) -> Vec<Block<'_>> {
    let mut out = vec![Block {
        stmts: module,
        top_level: true,
    }];
    let mut k = 0;
    while k < out.len() {
        for s in out[k].stmts {
            let inner: Vec<&[ast::Stmt]> = match s {
                ast::Stmt::FunctionDef(d) => vec![&d.body],
                ast::Stmt::AsyncFunctionDef(d) => vec![&d.body],
                ast::Stmt::ClassDef(c) => vec![&c.body],
                ast::Stmt::For(x) => vec![&x.body, &x.orelse],
                ast::Stmt::AsyncFor(x) => vec![&x.body, &x.orelse],
                ast::Stmt::While(x) => vec![&x.body, &x.orelse],
                ast::Stmt::If(x) => vec![&x.body, &x.orelse],
                ast::Stmt::With(x) => vec![&x.body],
                ast::Stmt::AsyncWith(x) => vec![&x.body],
                ast::Stmt::Match(x) => x.cases.iter().map(|c| c.body.as_slice()).collect(),
                ast::Stmt::Try(x) => try_blocks(&x.body, &x.handlers, &x.orelse, &x.finalbody),
                ast::Stmt::TryStar(x) => try_blocks(&x.body, &x.handlers, &x.orelse, &x.finalbody),
                _ => vec![],
            };
            let nested = inner.into_iter().filter(|b| !b.is_empty());
            out.extend(nested.map(|stmts| Block {
                stmts,
                top_level: false,
            }));
        }
        k += 1;
    }
    out
}

fn try_blocks<'a>(
    body: &'a [ast::Stmt],
    handlers: &'a [ast::ExceptHandler],
    orelse: &'a [ast::Stmt],
    finalbody: &'a [ast::Stmt],
) -> Vec<&'a [ast::Stmt]> {
    let mut out = vec![body];
    out.extend(handlers.iter().map(|h| {
        let ast::ExceptHandler::ExceptHandler(h) = h;
        h.body.as_slice()
    }));
    out.extend([orelse, finalbody]);
    out
}

/// Whether an `import` names appy or a module of it (`appy.utils`).
fn is_appy_module(name: &str) -> bool {
    name == "appy" || name.starts_with("appy.")
}

/// The names an import statement binds to appy (or to something from it).
fn appy_bindings(s: &ast::Stmt) -> Result<Vec<String>> {
    match s {
        ast::Stmt::Import(imp) => Ok(imp
            .names
            .iter()
            .filter(|a| is_appy_module(a.name.as_str()))
            .map(|a| match &a.asname {
                Some(n) => n.to_string(),
                None => a
                    .name
                    .as_str()
                    .split('.')
                    .next()
                    .unwrap_or("appy")
                    .to_string(),
            })
            .collect()),
        ast::Stmt::ImportFrom(f) if imports_from_appy(f) => {
            if let Some(star) = f.names.iter().find(|a| a.name.as_str() == "*") {
                return Err(Diagnostic::error(
                    star.range.into(),
                    "`from appy import *`: appyc cannot tell which names come from appy",
                )
                .with_help("import the names the code uses, e.g. `from appy import jit`"));
            }
            Ok(f.names
                .iter()
                .map(|a| a.asname.as_ref().unwrap_or(&a.name).to_string())
                .collect())
        }
        _ => Ok(vec![]),
    }
}

/// `from appy import ...` or `from appy.x import ...`, not a relative import.
fn imports_from_appy(f: &ast::StmtImportFrom) -> bool {
    f.level.as_ref().is_none_or(|l| l.to_u32() == 0)
        && f.module.as_deref().is_some_and(is_appy_module)
}

/// For an import statement losing some of its names, the `name [as alias]` texts it keeps
/// (empty: the whole statement goes); None for a statement that stays as it is. appy goes
/// everywhere; at module level `numpy` goes when nothing outside the compiled functions uses
/// it, and so does `from appyc_aot import nvshmem`.
fn kept_aliases(s: &ast::Stmt, top_level: bool, outside: &HashSet<&str>) -> Option<Vec<String>> {
    let used_outside = |alias: &str| outside.contains(alias);
    let spelled = |a: &ast::Alias| match &a.asname {
        Some(n) => format!("{} as {n}", a.name),
        None => a.name.to_string(),
    };
    match s {
        ast::Stmt::Import(imp) => {
            let keep: Vec<String> = imp
                .names
                .iter()
                .filter(|a| {
                    let bound = a.asname.as_ref().unwrap_or(&a.name).as_str();
                    let numpy = top_level && a.name.as_str() == "numpy" && !used_outside(bound);
                    !is_appy_module(a.name.as_str()) && !numpy
                })
                .map(spelled)
                .collect();
            (keep.len() < imp.names.len()).then_some(keep)
        }
        ast::Stmt::ImportFrom(f) if imports_from_appy(f) => Some(vec![]),
        // The nvshmem reference module: compiled functions use the generated runtime.
        ast::Stmt::ImportFrom(f) if top_level && f.module.as_deref() == Some("appyc_aot") => {
            let reference = f.names.iter().all(|a| {
                a.name.as_str() == "nvshmem"
                    && !used_outside(a.asname.as_ref().map_or("nvshmem", |n| n.as_str()))
            });
            reference.then(Vec::new)
        }
        _ => None,
    }
}

/// Drops a statement (its lines, when nothing else stands on them; else its text, for a
/// `pass`), leaves `pass` when its block would be empty, or rewrites an import to the names it
/// keeps.
fn statement_edit(file: &SourceFile, s: &ast::Stmt, keep: &[String], keep_pass: bool) -> Edit {
    let span: Span = s.range().into();
    let range = span.start as usize..span.end as usize;
    if !keep.is_empty() {
        return Edit {
            range,
            text: format!("import {}", keep.join(", ")),
        };
    }
    let (first, last) = (
        file.line_of(range.start),
        file.line_of(range.end.saturating_sub(1).max(range.start)),
    );
    let before = &file.text[file.line_start(first)..range.start];
    let after = file.text[range.end..file.line_end(last)].trim();
    let alone = before.trim().is_empty() && (after.is_empty() || after.starts_with('#'));
    if alone && !keep_pass {
        Edit {
            range: file.line_start(first)..file.line_end(last),
            text: String::new(),
        }
    } else {
        Edit {
            range,
            text: "pass".to_string(),
        }
    }
}

/// Drops the decorators of `s` that come from appy (`@appy.jit`, `@appy.jit(...)`, `@ap.jit`,
/// `@jit` after `from appy import jit`), whole lines; returns their spans.
fn drop_decorators(
    file: &SourceFile,
    s: &ast::Stmt,
    appy: &HashSet<String>,
    edits: &mut Vec<Edit>,
) -> Vec<Span> {
    let list = match s {
        ast::Stmt::FunctionDef(d) => &d.decorator_list,
        ast::Stmt::AsyncFunctionDef(d) => &d.decorator_list,
        ast::Stmt::ClassDef(c) => &c.decorator_list,
        _ => return vec![],
    };
    let mut spans = vec![];
    for d in list {
        let name = match d {
            ast::Expr::Call(c) => dotted_name(&c.func),
            other => dotted_name(other),
        };
        let head = name.as_deref().and_then(|n| n.split('.').next());
        if head.is_some_and(|h| appy.contains(h)) {
            let span: Span = d.range().into();
            let (first, last) = (
                file.line_of(span.start as usize),
                file.line_of(span.end as usize),
            );
            edits.push(Edit {
                range: file.line_start(first)..file.line_end(last),
                text: String::new(),
            });
            spans.push(span);
        }
    }
    spans
}

/// Every name token of the source: the name, its span, and whether it follows a `.` (an
/// attribute, not a variable).
fn names(file: &SourceFile) -> Vec<(String, Span, bool)> {
    use rustpython_parser::Tok;
    let mut out = vec![];
    let mut after_dot = false;
    for (tok, range) in
        rustpython_parser::lexer::lex(&file.text, rustpython_parser::Mode::Module).flatten()
    {
        match tok {
            Tok::Comment(_) | Tok::NonLogicalNewline => continue,
            Tok::Name { name } => {
                out.push((name, range.into(), after_dot));
                after_dot = false;
            }
            Tok::Dot => after_dot = true,
            _ => after_dot = false,
        }
    }
    out
}

/// The spans (which may nest: a persistent loop holds its regions) as sorted, disjoint spans
/// covering the same text.
fn union(spans: &[Span]) -> Vec<Span> {
    let mut sorted = spans.to_vec();
    sorted.sort_by_key(|s| (s.start, std::cmp::Reverse(s.end)));
    let mut out: Vec<Span> = vec![];
    for s in sorted {
        match out.last_mut() {
            Some(last) if s.start <= last.end => last.end = last.end.max(s.end),
            _ => out.push(s),
        }
    }
    out
}

/// Whether `at` lies inside one of `spans` (sorted by start, disjoint).
fn inside_any(spans: &[Span], at: Span) -> bool {
    let i = spans.partition_point(|s| s.start <= at.start);
    i > 0 && at.end <= spans[i - 1].end
}

fn leftover_use(name: &str, at: Span) -> Diagnostic {
    let what = if name == "appy" {
        "`appy`".to_string()
    } else {
        format!("`{name}` (from appy)")
    };
    Diagnostic::error(
        at,
        format!(
            "{what} is used outside the code appyc compiles, and the output does not import appy"
        ),
    )
    .with_label("this use would stay in the output")
    .with_help(
        "appyc drops `import appy` and `@appy.jit`, and compiles appy's names (`appy.vidx`, \
         `appy.MVL`) only inside the loops and statements a pragma annotates: remove this use, \
         or move it into such a region",
    )
}

#[cfg(test)]
mod tests {
    use crate::driver::{compile, Options};
    use crate::frontend::source::SourceFile;

    fn out(src: &str) -> String {
        compile(&SourceFile::new("t.py", src), &Options::default())
            .unwrap_or_else(|e| panic!("{}\n{src}", e.message))
            .text
    }

    fn error(src: &str) -> crate::diag::Diagnostic {
        compile(&SourceFile::new("t.py", src), &Options::default()).unwrap_err()
    }

    /// A function with a pragma (`f`) and one without (`g`), both under `decorator`.
    fn two_functions(imports: &str, decorator: &str) -> String {
        format!(
            "{imports}\n\n{decorator}\ndef f(a, b):\n    #pragma parallel for simd\n    for i in range(a.shape[0]):\n        b[i] = 2.0 * a[i]\n\n\n{decorator}\ndef g(a):\n    return a\n"
        )
    }

    /// A generated module is valid Python, with no import of appy and no decorator but
    /// `@triton.jit` and the runtime's own (`@_appyc_replayed`).
    fn assert_no_appy(text: &str) {
        rustpython_parser::ast::Suite::parse(text, "out.py")
            .unwrap_or_else(|e| panic!("invalid Python: {e}\n{text}"));
        for line in text.lines() {
            let l = line.trim();
            assert!(
                !l.starts_with('@') || l.starts_with("@triton.jit") || l.starts_with("@_appyc_"),
                "decorator kept: {l}\n{text}"
            );
            let imports_appy = (l.starts_with("import ") || l.starts_with("from "))
                && l.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .any(|w| w == "appy");
            assert!(!imports_appy, "appy imported: {l}\n{text}");
        }
    }
    use rustpython_parser::Parse;

    #[test]
    fn every_spelling_of_the_import_and_the_decorator_goes() {
        for (imports, decorator) in [
            ("import numpy as np\nimport appy", "@appy.jit"),
            ("import appy", "@appy.jit(auto_simd=True)"),
            ("import appy", "@appy.jit(\n    auto_simd=True,\n)"),
            ("import appy as ap", "@ap.jit"),
            ("import appy as ap", "@ap.jit(auto_simd=False)"),
            ("from appy import jit", "@jit"),
            ("from appy import jit as j", "@j"),
            ("from appy import jit as j", "@j(auto_simd=True)"),
            ("import numpy as np, appy", "@appy.jit"),
            ("import appy, numpy as np", "@appy.jit"),
            ("import appy.utils", "@appy.jit"),
            ("from appy import (\n    jit,\n)", "@jit"),
        ] {
            let src = two_functions(imports, decorator);
            let text = out(&src);
            assert_no_appy(&text);
            assert!(text.contains("def g(a):\n    return a\n"), "{text}");
        }
    }

    #[test]
    fn a_numpy_import_beside_appy_stays_when_used() {
        let src =
            two_functions("import numpy as np, appy", "@appy.jit") + "\n\nZERO = np.zeros(3)\n";
        let text = out(&src);
        assert_no_appy(&text);
        assert!(text.contains("\nimport numpy as np\n"), "{text}");
        // Unused, it goes too.
        let text = out(&two_functions("import appy, numpy as np", "@appy.jit"));
        assert!(!text.contains("import numpy"), "{text}");
    }

    #[test]
    fn imports_inside_functions_go_and_leave_valid_blocks() {
        let src = "import appy\n\n\ndef f(a, b):\n    import appy\n    #pragma parallel for simd\n    for i in range(a.shape[0]):\n        b[i] = 2.0 * a[i]\n\n\ndef g(a):\n    from appy import jit\n    return a\n\n\ndef h():\n    import appy as ap\n\n\ntry:\n    import appy\nexcept ImportError:\n    pass\n\n\ndef k(a):\n    x = 1; import appy\n    return a + x\n";
        let text = out(src);
        assert_no_appy(&text);
        assert!(text.contains("def h():\n    pass\n"), "{text}");
        assert!(
            text.contains("try:\n    pass\nexcept ImportError:"),
            "{text}"
        );
        assert!(text.contains("    x = 1; pass\n"), "{text}");
        assert!(text.contains("def g(a):\n    return a\n"), "{text}");
    }

    #[test]
    fn a_file_without_pragmas_loses_appy_too() {
        let text = out("import appy\n\n\n@appy.jit\ndef g(a):\n    return a\n");
        assert_no_appy(&text);
    }

    #[test]
    fn a_use_of_appy_that_would_stay_is_an_error_at_the_use() {
        for (src, at) in [
            // `appy.vidx` in a function without a pragma: appyc does not compile it.
            (
                "import appy\n\n\ndef g(a, i):\n    return a[appy.vidx(i, 4, 9)]\n",
                "appy.vidx",
            ),
            // Host code of a compiled function.
            (
                "import appy\n\n\ndef f(a, b):\n    n = appy.MVL\n    #pragma parallel for simd\n    for i in range(n):\n        b[i] = a[i]\n",
                "appy.MVL",
            ),
            ("from appy import jit\n\n\ndef g(a):\n    return a\n\n\nh = jit(g)\n", "jit(g)"),
            ("import appy as ap\n\nMVL = ap.MVL\n", "ap.MVL"),
        ] {
            let e = error(src);
            assert!(
                e.message.contains("is used outside the code appyc compiles"),
                "{src}: {}",
                e.message
            );
            assert_eq!(e.span.start as usize, src.find(at).unwrap(), "{src}");
            assert!(e.help[0].contains("remove this use"), "{:?}", e.help);
        }
        let e = error("from appy import *\n\n\ndef g(a):\n    return a\n");
        assert!(e.message.contains("from appy import *"), "{}", e.message);
    }

    #[test]
    fn appy_names_inside_regions_and_attributes_elsewhere_are_fine() {
        let src = "import appy\n\n\ndef f(x, y, N):\n    #pragma parallel for\n    for i0 in range(0, N, appy.MVL):\n        vi = appy.vidx(i0, appy.MVL, N)\n        y[vi] = x[vi] + 1.0\n\n\ndef g(o):\n    return o.appy\n";
        let text = out(src);
        assert_no_appy(&text);
        assert!(text.contains("return o.appy"), "{text}");
    }
}
