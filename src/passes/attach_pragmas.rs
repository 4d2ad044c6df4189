//! attach_pragmas: binds each `#pragma` to the statement on the next code line of the same
//! function and sets loop kinds / atomic flags from it; a pragma that binds to nothing, or to
//! the wrong kind of statement, is an error.

use crate::diag::{Diagnostic, Result};
use crate::frontend::source::SourceFile;
use crate::frontend::spec::AppliesTo;
use crate::ir::pragma::{Directive, Pragma};
use crate::ir::*;
use std::collections::HashMap;

pub fn run(func: &mut Function, pragmas: &[Pragma], file: &SourceFile) -> Result<()> {
    run_with_warnings(func, pragmas, file, &mut vec![])
}

/// `run`, with the warnings of loop pragmas bound past scalar assignments.
pub fn run_with_warnings(
    func: &mut Function,
    pragmas: &[Pragma],
    file: &SourceFile,
    warnings: &mut Vec<Diagnostic>,
) -> Result<()> {
    // Resolve each pragma to the line of the statement it binds to.
    let mut targets: HashMap<usize, &Pragma> = HashMap::new();
    for p in pragmas {
        let mut line = next_code_line(file, p.line + 1);
        if p.directive.applies_to() == AppliesTo::Loop {
            if let Some(loop_line) = loop_after_assignments(file, line) {
                warnings.push(
                    Diagnostic::warning(
                        p.span,
                        format!(
                            "`#pragma {}` annotates the loop on line {loop_line}, past the assignments below it",
                            p.directive.spelling()
                        ),
                    )
                    .with_help("put the pragma on the line above the `for` (APPy 0.3 bound it there too)"),
                );
                line = loop_line;
            }
        }
        let stacked = file
            .line_text(line.min(file.line_count()))
            .trim()
            .starts_with("#pragma")
            && line <= file.line_count();
        if stacked {
            return Err(
                Diagnostic::error(p.span, "two pragmas for one statement").with_help(
                    "combine the clauses into one pragma, e.g. `#pragma parallel for simd`",
                ),
            );
        }
        if let Some(prev) = targets.insert(line, p) {
            return Err(Diagnostic::error(p.span, "two pragmas for one statement")
                .with_label(format!(
                    "`{}` was already given on line {}",
                    prev.directive.spelling(),
                    prev.line
                ))
                .with_help(
                    "combine the clauses into one pragma, e.g. `#pragma parallel for simd`",
                ));
        }
    }
    let mut used = vec![false; pragmas.len()];
    attach_block(&mut func.body, &targets, pragmas, &mut used, file)?;
    if let Some(i) = used.iter().position(|u| !u) {
        let p = &pragmas[i];
        return Err(Diagnostic::error(
            p.span,
            format!(
                "`#pragma {}` is not followed by {}",
                p.directive.spelling(),
                match p.directive.applies_to() {
                    AppliesTo::Loop => "a loop",
                    AppliesTo::Assignment => "an assignment",
                }
            ),
        )
        .with_help("a pragma annotates the statement on the next line"));
    }
    Ok(())
}

/// The first line from `line` on that is code (not blank, not a plain comment).
fn next_code_line(file: &SourceFile, mut line: usize) -> usize {
    while line <= file.line_count() {
        let t = file.line_text(line).trim();
        if !(t.is_empty() || t.starts_with('#') && !t.starts_with("#pragma")) {
            break;
        }
        line += 1;
    }
    line
}

/// APPy 0.3 let a loop pragma stand above a scalar initialisation (`#pragma simd`, `s = 0.0`,
/// then the `for`). When `line` holds one-line `name = ...` assignments followed, at the same
/// indentation, by a `for`, that loop's line.
fn loop_after_assignments(file: &SourceFile, mut line: usize) -> Option<usize> {
    let indent = |l: usize| file.line_text(l).len() - file.line_text(l).trim_start().len();
    let first = line;
    let is_scalar_assignment = |text: &str| {
        let Some((lhs, rhs)) = text.split_once('=') else {
            return false;
        };
        let lhs = lhs.trim();
        !rhs.starts_with('=')
            && !lhs.is_empty()
            && lhs
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ',' || c == ' ')
            && !text.trim_end().ends_with(['(', '[', '{', '\\', ','])
    };
    while line <= file.line_count() && indent(line) == indent(first) {
        let t = file.line_text(line).trim();
        if t.starts_with("for ") {
            return (line != first).then_some(line);
        }
        if !is_scalar_assignment(t) {
            return None;
        }
        line = next_code_line(file, line + 1);
    }
    None
}

fn attach_block(
    stmts: &mut [Stmt],
    targets: &HashMap<usize, &Pragma>,
    pragmas: &[Pragma],
    used: &mut [bool],
    file: &SourceFile,
) -> Result<()> {
    for s in stmts.iter_mut() {
        let line = file.line_of(s.span.start as usize);
        if let Some(p) = targets.get(&line) {
            let idx = pragmas
                .iter()
                .position(|q| std::ptr::eq(q, *p))
                .expect("pragma comes from the list");
            if !used[idx] {
                used[idx] = true;
                apply(s, p)?;
            }
        }
        match &mut s.kind {
            StmtKind::For { body, .. }
            | StmtKind::HostBlock { body, .. }
            | StmtKind::While { body, .. } => attach_block(body, targets, pragmas, used, file)?,
            StmtKind::If { body, orelse, .. } => {
                attach_block(body, targets, pragmas, used, file)?;
                attach_block(orelse, targets, pragmas, used, file)?;
            }
            _ => {}
        }
    }
    Ok(())
}

fn apply(s: &mut Stmt, p: &Pragma) -> Result<()> {
    let d = &p.directive;
    match (&mut s.kind, d) {
        (
            StmtKind::For {
                kind, num_warps, ..
            },
            _,
        ) => {
            *kind = match d {
                Directive::ParallelFor {
                    simd, num_warps: w, ..
                } => {
                    *num_warps = *w;
                    LoopKind::Parallel { simd: *simd }
                }
                Directive::SequentialFor { num_warps: w } => {
                    *num_warps = *w;
                    LoopKind::Sequential
                }
                Directive::Simd(w) => LoopKind::Simd(*w),
                // A host loop stays a host loop; `schedule` reads the pragma.
                Directive::Persistent => *kind,
                Directive::Distribute { .. } if *kind == LoopKind::Plain => *kind,
                Directive::Distribute { .. } => {
                    return Err(Diagnostic::error(
                        p.span,
                        "`#pragma distribute` annotates a host time loop, not a parallel loop",
                    )
                    .with_help("put it on the `for t in range(...)` loop around the regions"))
                }
                Directive::Atomic | Directive::Dimensions(_) => {
                    return Err(Diagnostic::error(
                        p.span,
                        format!(
                            "`#pragma {}` annotates an assignment, not a loop",
                            d.spelling()
                        ),
                    ))
                }
            };
        }
        (
            StmtKind::HostBlock { what, .. },
            Directive::ParallelFor { .. }
            | Directive::SequentialFor { .. }
            | Directive::Simd(_)
            | Directive::Persistent
            | Directive::Distribute { .. },
        ) => {
            return Err(Diagnostic::error(
                s.span,
                format!("`#pragma {}` needs a `for ... in range(...)` loop", d.spelling()),
            )
            .with_label(format!("this is a {what}"))
            .with_help("loops over lists, arrays or iterators cannot be split among workers; iterate over `range(len(...))`"));
        }
        // `schedule` reads it: the loop runs on the device or the pragma is an error there.
        (StmtKind::While { .. }, Directive::Persistent) => {}
        (StmtKind::While { .. }, Directive::Distribute { .. }) => {
            return Err(Diagnostic::error(
                s.span,
                "`#pragma distribute` needs a `for ... in range(...)` loop",
            )
            .with_label("this is a while loop")
            .with_help("the PEs exchange halos once an iteration, counted by the loop variable"));
        }
        (
            StmtKind::While { .. },
            Directive::ParallelFor { .. } | Directive::SequentialFor { .. } | Directive::Simd(_),
        ) => {
            return Err(Diagnostic::error(
                s.span,
                format!("`#pragma {}` needs a `for ... in range(...)` loop", d.spelling()),
            )
            .with_label("this is a while loop")
            .with_help("a while loop's iterations depend on each other; `#pragma persistent for` runs it on the device"));
        }
        (StmtKind::Assign { atomic, .. }, Directive::Atomic) => *atomic = true,
        // The dimensions are read from `Stmt::pragma` by the tensor passes.
        (StmtKind::Assign { .. }, Directive::Dimensions(_)) => {}
        (StmtKind::AugAssign { .. }, Directive::Atomic) => {
            unreachable!("normalize runs before attach_pragmas")
        }
        _ => {
            return Err(Diagnostic::error(
                p.span,
                format!(
                    "`#pragma {}` is not followed by {}",
                    d.spelling(),
                    match d.applies_to() {
                        AppliesTo::Loop => "a loop",
                        AppliesTo::Assignment => "an assignment",
                    }
                ),
            )
            .with_help("a pragma annotates the statement on the next line"))
        }
    }
    s.pragma = Some(p.clone());
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::frontend::lower::lower_function;
    use crate::frontend::pragma::collect_pragmas;
    use rustpython_parser::ast;
    use rustpython_parser::Parse;

    /// The first function of `src` through normalize and attach_pragmas.
    pub(crate) fn attached(src: &str) -> Result<Function> {
        attached_in(src).map(|(func, _)| func)
    }

    /// `attached`, with the file for passes that read the source's text.
    pub(crate) fn attached_in(src: &str) -> Result<(Function, SourceFile)> {
        let file = SourceFile::new("t.py", src);
        let module = ast::Suite::parse(src, "t.py").expect("valid Python");
        let ast::Stmt::FunctionDef(f) = &module[0] else {
            panic!("no function")
        };
        let mut func = lower_function(f);
        crate::passes::normalize::run(&mut func);
        run(&mut func, &collect_pragmas(&file)?, &file)?;
        Ok((func, file))
    }

    #[test]
    fn a_loop_pragma_above_a_scalar_initialisation_binds_to_the_loop_with_a_warning() {
        let src = "def f(a, b):\n    #pragma parallel for\n    for i in range(a.shape[0]):\n        #pragma simd\n        s = 0.0\n        for j in range(a.shape[1]):\n            s += a[i, j]\n        b[i] = s\n";
        let file = SourceFile::new("t.py", src);
        let module = ast::Suite::parse(src, "t.py").unwrap();
        let ast::Stmt::FunctionDef(f) = &module[0] else {
            panic!()
        };
        let mut func = lower_function(f);
        crate::passes::normalize::run(&mut func);
        let mut warnings = vec![];
        run_with_warnings(
            &mut func,
            &collect_pragmas(&file).unwrap(),
            &file,
            &mut warnings,
        )
        .unwrap();
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].message.contains("annotates the loop on line 6"));
        let StmtKind::For { body, .. } = &func.body[0].kind else {
            panic!()
        };
        assert!(matches!(
            body[1].kind,
            StmtKind::For {
                kind: LoopKind::Simd(_),
                ..
            }
        ));
        // Without a loop after the assignments it stays an error.
        assert!(attached(
            "def f(a):\n    #pragma parallel for\n    for i in range(a.shape[0]):\n        #pragma simd\n        s = 0.0\n        a[i] = s\n"
        )
        .is_err());
    }

    #[test]
    fn binds_across_blank_and_comment_lines() {
        let f = attached(
            "def f(A, N):\n    #pragma parallel for simd\n\n    # why\n    for i in range(N):\n        #pragma atomic\n        A[0] += A[i]\n",
        )
        .unwrap();
        let StmtKind::For { kind, body, .. } = &f.body[0].kind else {
            panic!()
        };
        assert_eq!(
            *kind,
            LoopKind::Parallel {
                simd: Some(Width::Mvl)
            }
        );
        assert!(matches!(
            body[0].kind,
            StmtKind::Assign { atomic: true, .. }
        ));
    }

    #[test]
    fn rejects_wrong_targets() {
        let e = attached(
            "def f(A, N):\n    #pragma atomic\n    for i in range(N):\n        A[i] = 0\n",
        )
        .unwrap_err();
        assert!(
            e.message.contains("annotates an assignment"),
            "{}",
            e.message
        );
        let e = attached("def f(A, N):\n    #pragma simd\n    A[0] = 1\n").unwrap_err();
        assert!(
            e.message.contains("is not followed by a loop"),
            "{}",
            e.message
        );
        let e = attached("def f(A, N):\n    #pragma parallel for\n    #pragma simd\n    for i in range(N):\n        A[i] = 0\n")
            .unwrap_err();
        assert!(e.message.contains("two pragmas"), "{}", e.message);
        let e = attached("def f(A, N):\n    x = 1\n    #pragma parallel for\n").unwrap_err();
        assert!(
            e.message.contains("not followed by a loop"),
            "{}",
            e.message
        );
    }
}
