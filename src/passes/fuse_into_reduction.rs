//! Contract: a region that updates a matrix element by element, row by row, directly followed
//! by a column reduction that reads that matrix only at the element its row loop and lanes
//! name, over the same rows and columns, becomes one region: the reduction's row loop computes
//! each element first (`t = f(...)`, `A[r, j] = t`) and reads `t` where it read `A[r, j]`. Each
//! element is still computed once, stored once and read once, so the results are the
//! sequential program's; the matrix crosses memory once less.
//!
//! Why: gemver's rank-2 update (`A[i, :N] += u1[i] * v1[:N] + ...`) and its `x = A^T y` each
//! stream the 512 MB matrix at paper size; the second kernel reads back what the first wrote.
//!
//! Runs on lowered kernels (after `lower_tensor::lower`, before strip-mining), on pairs of
//! regions that are consecutive statements of the function's own body (not inside a host loop:
//! `schedule` decides those). The update region `U`:
//! - one grid loop `i` (no `simd`), no shared scalars, temporaries, tiles, communication or
//!   `num_warps`; its body one column loop `for c in range(lo, hi)` (step 1, bounds free of
//!   `i`) holding one statement `A[i, c] = f`;
//! - `f` is element-wise (arithmetic, library calls, array elements), reads `A` only at
//!   `A[i, c]` and reads no array the reduction writes.
//!
//! The reduction region `R`:
//! - one `simd` grid loop `j` over the same `range(lo, hi)`, no shared scalars, temporaries,
//!   tiles or communication; exactly one top-level loop `for r in` the update's row range
//!   (step 1) whose body is assignments, reading `A` only at `A[r, j]`;
//! - `A` is written nowhere in `R` and read nowhere else in it;
//! - `f`'s names (other than `i`, `c`) are not bound by `R` (so they mean the same there).
//!
//! Anything else leaves both regions as they are.

use crate::ir::*;
use std::collections::HashSet;

/// Fuses every qualifying (update, reduction) pair of consecutive top-level regions.
pub fn run(func: &Function, kernels: &mut Vec<Kernel>) {
    let mut at = 0;
    while at + 1 < kernels.len() {
        if consecutive(func, &kernels[at], &kernels[at + 1]) {
            if let Some(fused) = fuse(&kernels[at], &kernels[at + 1]) {
                kernels[at + 1] = fused;
                kernels.remove(at);
                continue;
            }
        }
        at += 1;
    }
}

/// `a` and `b` are the regions of two consecutive statements of the function's body.
fn consecutive(func: &Function, a: &Kernel, b: &Kernel) -> bool {
    let region = |s: &Stmt| s.pragma.as_ref().map_or(s.span, |p| p.span.to(s.span));
    func.body
        .windows(2)
        .any(|w| region(&w[0]) == a.span && region(&w[1]) == b.span)
}

/// The update `A[i, c] = f` of a qualifying update region: (array, row var, column var,
/// column range, the statement's target and value).
struct Update<'a> {
    array: &'a str,
    row: &'a str,
    col: &'a str,
    cols: &'a Range,
    target: &'a Expr,
    value: &'a Expr,
}

fn update(u: &Kernel) -> Option<Update<'_>> {
    if u.dims.len() != 1
        || u.dims[0].simd.is_some()
        || !plain_region(u)
        || u.num_warps.is_some()
        || !u.checks.is_empty()
    {
        return None;
    }
    let row = u.dims[0].var.as_str();
    let [Stmt {
        kind:
            StmtKind::For {
                var: col,
                range: cols,
                body,
                kind: LoopKind::Simd(_) | LoopKind::Plain,
                ..
            },
        ..
    }] = u.body.as_slice()
    else {
        return None;
    };
    let [Stmt {
        kind:
            StmtKind::Assign {
                target,
                value,
                atomic: false,
            },
        ..
    }] = body.as_slice()
    else {
        return None;
    };
    let ExprKind::Subscript { array, indices } = &target.kind else {
        return None;
    };
    let is_var = |ix: &Index, v: &str| matches!(ix, Index::At(Expr { kind: ExprKind::Name(n), .. }) if n == v);
    let unit_step = matches!(cols.step.kind, ExprKind::Int(1));
    let free_of_row = !cols.start.mentions(row) && !cols.stop.mentions(row);
    if indices.len() != 2 || !is_var(&indices[0], row) || !is_var(&indices[1], col) {
        return None;
    }
    if !unit_step || !free_of_row || !elementwise(value) {
        return None;
    }
    let other_reads = value.any(&mut |x| {
        matches!(&x.kind, ExprKind::Subscript { array: a, .. } if a == array)
            && !same_place(x, target)
    });
    (!other_reads).then_some(Update {
        array,
        row,
        col,
        cols,
        target,
        value,
    })
}

/// No shared scalars, temporaries, tiles, communication or splits: a region the passes so far
/// left as plain statements.
fn plain_region(k: &Kernel) -> bool {
    k.shared.is_empty()
        && k.temps.is_empty()
        && k.tiles.is_none()
        && k.comm.is_none()
        && k.bound.is_empty()
        && k.split_rows.is_none()
        && k.absorbed.is_empty()
}

/// Arithmetic, library calls and array elements: each element of the result depends only on
/// the elements at its own position.
fn elementwise(e: &Expr) -> bool {
    !e.any(&mut |x| match &x.kind {
        ExprKind::Subscript { indices, .. } => indices.iter().any(|i| !matches!(i, Index::At(_))),
        ExprKind::Name(n) => n.starts_with("appy."),
        ExprKind::Call { func, .. } => func.starts_with("appy."),
        ExprKind::Vidx { .. }
        | ExprKind::Reduce { .. }
        | ExprKind::ReduceRows { .. }
        | ExprKind::Broadcast { .. }
        | ExprKind::Shape { .. }
        | ExprKind::Unsupported(_) => true,
        _ => false,
    })
}

fn fuse(u: &Kernel, r: &Kernel) -> Option<Kernel> {
    let up = update(u)?;
    if r.dims.len() != 1 || r.dims[0].simd.is_none() || !plain_region(r) {
        return None;
    }
    let lanes = r.dims[0].var.as_str();
    let same_range = |a: &Range, b: &Range| {
        same_place(&a.start, &b.start)
            && same_place(&a.stop, &b.stop)
            && same_place(&a.step, &b.step)
    };
    if !same_range(&r.dims[0].range, up.cols) {
        return None;
    }
    let touches = |s: &Stmt| {
        let mut found = false;
        s.walk(&mut |st| {
            for e in st.exprs() {
                found |= e.any(&mut |x| matches!(&x.kind, ExprKind::Subscript { array, .. } if array == up.array));
            }
        });
        found
    };
    let mut loops = r.body.iter().enumerate().filter(|(_, s)| touches(s));
    let (at, row_loop) = loops.next()?;
    if loops.next().is_some() {
        return None;
    }
    let StmtKind::For {
        var: row,
        range: rows,
        body,
        kind: LoopKind::Plain,
        ..
    } = &row_loop.kind
    else {
        return None;
    };
    if !same_range(rows, &u.dims[0].range) || !matches!(rows.step.kind, ExprKind::Int(1)) {
        return None;
    }
    // The element the reduction reads: `A[r, j]`.
    let element = rename(up.target, &[(up.row, row), (up.col, lanes)]);
    let mut written: HashSet<&str> = HashSet::new();
    let mut bound: HashSet<&str> = HashSet::from([row.as_str(), lanes]);
    for s in &r.body {
        s.walk(&mut |st| match &st.kind {
            StmtKind::Assign { target, .. } => match &target.kind {
                ExprKind::Name(n) => {
                    bound.insert(n);
                }
                ExprKind::Subscript { array, .. } => {
                    written.insert(array);
                }
                _ => {}
            },
            StmtKind::For { var, .. } => {
                bound.insert(var);
            }
            _ => {}
        });
    }
    if written.contains(up.array) {
        return None;
    }
    for s in body {
        let StmtKind::Assign { target, value, .. } = &s.kind else {
            return None;
        };
        let stray = [target, value].into_iter().any(|e| {
            e.any(&mut |x| {
                matches!(&x.kind, ExprKind::Subscript { array, .. } if array == up.array)
                    && !same_place(x, &element)
            })
        });
        if stray {
            return None;
        }
    }
    let mut clash = false;
    up.value.walk(&mut |x| match &x.kind {
        ExprKind::Name(n) if n != up.row && n != up.col => clash |= bound.contains(n.as_str()),
        ExprKind::Subscript { array, .. } => clash |= written.contains(array.as_str()),
        _ => {}
    });
    if clash {
        return None;
    }

    let mut used = r.names();
    used.extend(u.names());
    let local = fresh(&used, &format!("_{}_{row}{lanes}", up.array));
    let span = row_loop.span;
    let value = rename(up.value, &[(up.row, row), (up.col, lanes)]);
    // As stored: `A[r, j]` read back has A's dtype, whatever `f` computes in.
    let stored = Expr::new(
        ExprKind::Call {
            func: STORED_IN.into(),
            args: vec![value, element.clone()],
        },
        span,
    );
    let mut fused_body = vec![
        Stmt::assign(Expr::name(&local, span), stored, span),
        Stmt::assign(element.clone(), Expr::name(&local, span), span),
    ];
    fused_body.extend(body.iter().map(|s| {
        let mut s = s.clone();
        if let StmtKind::Assign { value, .. } = &mut s.kind {
            *value = value.clone().rewrite(&mut |x| {
                if same_place(&x, &element) {
                    Expr::name(&local, x.span)
                } else {
                    x
                }
            });
        }
        s
    }));
    let mut fused = r.clone();
    let StmtKind::For { body, .. } = &mut fused.body[at].kind else {
        unreachable!("matched above");
    };
    *body = fused_body;
    fused.checks.extend(u.checks.iter().cloned());
    fused.absorbed.push(Absorbed::region(u.span));
    Some(fused)
}

/// `e` with the names `from` replaced by `to`.
fn rename(e: &Expr, pairs: &[(&str, &str)]) -> Expr {
    e.clone().rewrite(&mut |x| match &x.kind {
        ExprKind::Name(n) => match pairs.iter().find(|(from, _)| from == n) {
            Some((_, to)) => Expr::name(to, x.span),
            None => x,
        },
        _ => x,
    })
}

fn fresh(used: &HashSet<String>, base: &str) -> String {
    (0..)
        .map(|k| {
            if k == 0 {
                base.to_string()
            } else {
                format!("{base}{k}")
            }
        })
        .find(|n| !used.contains(n))
        .expect("some name is free")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::attach_pragmas::tests::attached;

    /// The kernels of `src` after `run`, each with its body printed.
    pub(super) fn fused(src: &str) -> Vec<(Kernel, String)> {
        let f = attached(src).unwrap();
        let mut kernels = crate::passes::outline::run(&f).unwrap();
        for k in kernels.iter_mut() {
            crate::passes::promote_updates::run(k);
            crate::passes::lower_tensor::split(k).unwrap();
            crate::passes::insert_sync::run(k);
            let opts = crate::passes::lower_tensor::Options { auto_simd: true };
            crate::passes::lower_tensor::lower(k, &opts).unwrap();
        }
        run(&f, &mut kernels);
        kernels
            .into_iter()
            .map(|k| {
                let mut w = crate::codegen::writer::Writer::new(0);
                crate::codegen::python::stmts(&mut w, &k.body);
                (k, w.finish())
            })
            .collect()
    }

    pub(super) const UPDATE: &str =
        "    #pragma parallel for\n    for i in range(N):\n        A[i, :N] += u[i] * v[:N]\n";
    pub(super) const REDUCE: &str = "    #pragma parallel for simd\n    for j in range(N):\n        s = 0.0\n        for i in range(N):\n            s += y[i] * A[i, j]\n        x[j] = beta * s\n";
    pub(super) const HEAD: &str = "def f(beta, A, u, v, x, y, N):\n";

    #[test]
    fn an_element_wise_update_runs_inside_the_column_reduction_that_reads_it() {
        let k = fused(&format!("{HEAD}{UPDATE}{REDUCE}"));
        assert_eq!(k.len(), 1);
        let (kernel, body) = &k[0];
        assert_eq!(kernel.absorbed.len(), 1);
        assert!(
            body.contains(
                "    _A_ij = A.dtype.type(A[i, j] + u[i] * v[j])\n    A[i, j] = _A_ij\n    s = s + y[i] * _A_ij\n"
            ),
            "{body}"
        );
        // No fence: every access to A is the lane's own element.
        assert!(!body.contains("barrier"), "{body}");
    }

    #[test]
    fn anything_else_keeps_two_regions() {
        let cases = [
            // The reduction reads another element.
            (UPDATE.to_string(), REDUCE.replace("A[i, j]", "A[i, j - 1]")),
            // Other rows or other columns.
            (UPDATE.replace("range(N)", "range(N - 1)"), REDUCE.to_string()),
            (UPDATE.replace(":N]", ":N - 1]"), REDUCE.to_string()),
            // The update reads what the reduction writes.
            (UPDATE.replace("u[i] * v[:N]", "u[i] * x[:N]"), REDUCE.to_string()),
            // The update reads another element of its own array.
            (UPDATE.replace("u[i] * v[:N]", "A[0, :N]"), REDUCE.to_string()),
            // The update's scalar is a local of the reduction.
            (UPDATE.replace("u[i] * v[:N]", "s * v[:N]"), REDUCE.to_string()),
            // The reduction writes the array too.
            (UPDATE.to_string(), REDUCE.replace("x[j] = beta * s", "A[0, j] = beta * s")),
            (UPDATE.replace("+=", "="), REDUCE.replace("A[i, j]\n", "A[i, j]\n            A[i, j] = s\n")),
            // A host statement between them.
            (format!("{UPDATE}    beta = beta * 2\n"), REDUCE.to_string()),
            // Rows reduced by a `simd` loop, not walked by the lanes.
            (UPDATE.to_string(), "    #pragma parallel for\n    for j in range(N):\n        x[j] = np.sum(y[:N] * A[:N, j])\n".to_string()),
        ];
        for (update, reduce) in cases {
            let src = format!("{HEAD}{update}{reduce}");
            assert_eq!(fused(&src).len(), 2, "{src}");
        }
        // Inside a host time loop (the schedule's business).
        let src = format!(
            "def f(T, beta, A, u, v, x, y, N):\n    for t in range(T):\n{}{}",
            UPDATE
                .replace("\n    ", "\n        ")
                .replacen("    ", "        ", 1),
            REDUCE
                .replace("\n    ", "\n        ")
                .replacen("    ", "        ", 1)
        );
        assert_eq!(fused(&src).len(), 2, "{src}");
    }
}
