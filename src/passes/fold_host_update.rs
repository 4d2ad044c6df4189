//! Contract: a function-level host statement `X op= s` (`op` one of `+ - * /`, `s` a scalar)
//! directly before a region that stores every element of `X` exactly once, and reads `X` only
//! at the element it stores and only in that store, runs inside the region: the store reads
//! `stored_in(X[idx] op s, X[idx])` where it read `X[idx]`, and the kernel records the
//! statement as absorbed so the host no longer runs it. Each element is scaled once, before
//! its one use, and rounded to `X`'s dtype as NumPy's in-place operator rounds it, so the
//! results are the sequential program's.
//!
//! Why: symm's `C *= beta` before its one region was a launch of its own (8-12 us of host
//! time and 4.4 us of device time at the `paper` size, a tenth of the call) and a second pass
//! over C; folded, the region's store reads C once and writes it once.
//!
//! Runs on lowered kernels (after `fuse_into_reduction`, before strip-mining), on statements of
//! the function's own body: inside a host loop the schedule decides what runs where.
//! What qualifies:
//! - the statement stands alone on its lines (the host's text loses them) and is written in place (`X op= s`: `X = X * s` binds a new array and leaves the
//!   caller's untouched, so the source's text decides, not the normalised IR);
//! - `s` reads only numbers and names that hold scalars (`device_statements::scalar_names`);
//! - the region has no shared scalars, communication, temporaries, launch slices or fused
//!   regions; it stores `X` in one statement `X[v0, .., vn] = f`, one index a variable per
//!   dimension of `X` (its rank where every subscript of it agrees), each bound by a grid
//!   dimension or a loop around the store over `range(0, X.shape[d], 1)`; no other loop and no
//!   `if` encloses the store, so it runs exactly once per element;
//! - `X` appears nowhere else in the region, and in `f` only as `X[v0, .., vn]`.
//!
//! A tile nest (`passes::tile_dot`) stores the same element from its epilogue: the epilogue's
//! reads of its target are rewritten the same way.

use crate::frontend::source::{SourceFile, Span};
use crate::ir::*;
use crate::passes::device_statements::{ranks, scalar_names};
use std::collections::HashSet;

/// Folds every qualifying statement into the region after it.
pub fn run(file: &SourceFile, func: &Function, kernels: &mut [Kernel]) {
    let ranks = ranks(&func.body);
    let scalars = scalar_names(func, &ranks.keys().cloned().collect());
    let region = |s: &Stmt| s.pragma.as_ref().map_or(s.span, |p| p.span.to(s.span));
    for pair in func.body.windows(2) {
        let Some(k) = kernels.iter_mut().find(|k| k.span == region(&pair[1])) else {
            continue;
        };
        let Some(update) = in_place_update(file, &pair[0], &scalars) else {
            continue;
        };
        let Some(&rank) = ranks.get(update.array) else {
            continue;
        };
        if let Some(folded) = fold(k, &update, rank) {
            *k = folded;
        }
    }
}

/// `X op= s`: the array, the operator and the scalar.
struct Update<'a> {
    array: &'a str,
    op: BinOp,
    scalar: &'a Expr,
    span: Span,
}

fn in_place_update<'a>(
    file: &SourceFile,
    s: &'a Stmt,
    scalars: &HashSet<String>,
) -> Option<Update<'a>> {
    let StmtKind::Assign {
        target,
        value,
        atomic: false,
    } = &s.kind
    else {
        return None;
    };
    let (ExprKind::Name(array), ExprKind::Binary { op, left, right }) = (&target.kind, &value.kind)
    else {
        return None;
    };
    let symbol = match op {
        BinOp::Add => "+=",
        BinOp::Sub => "-=",
        BinOp::Mul => "*=",
        BinOp::Div => "/=",
        _ => return None,
    };
    // normalize made `X op= s` into `X = X op s`; only the text still tells the two apart.
    let text = &file.text[target.span.end as usize..s.span.end as usize];
    let in_place = text.trim_start().starts_with(symbol);
    let reads_itself = matches!(&left.kind, ExprKind::Name(n) if n == array);
    let scalar = right.as_ref();
    let only_scalars = !scalar.any(&mut |x| match &x.kind {
        ExprKind::Name(n) => n == array || !scalars.contains(n),
        ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::Binary { .. } => false,
        ExprKind::Unary { .. } => false,
        _ => true,
    });
    // The host text loses the statement's lines: nothing else may stand on them.
    let alone = file.alone_on_lines(s.span);
    (in_place && reads_itself && only_scalars && alone).then_some(Update {
        array,
        op: *op,
        scalar,
        span: s.span,
    })
}

fn fold(k: &Kernel, update: &Update, rank: usize) -> Option<Kernel> {
    let plain = k.shared.is_empty()
        && k.comm.is_none()
        && k.temps.is_empty()
        && k.bound.is_empty()
        && k.absorbed.is_empty();
    if !plain {
        return None;
    }
    let mut ranges: Vec<(&str, &Range)> =
        k.dims.iter().map(|d| (d.var.as_str(), &d.range)).collect();
    let element = the_store(&k.body, update.array, &mut ranges)?;
    let ExprKind::Subscript { indices, .. } = &element.kind else {
        unreachable!("the store's target is a subscript");
    };
    let mut seen = HashSet::new();
    let covers = indices.len() == rank
        && indices.iter().enumerate().all(|(dim, ix)| {
            let Index::At(Expr {
                kind: ExprKind::Name(v),
                ..
            }) = ix
            else {
                return false;
            };
            let whole = |r: &Range| {
                matches!(r.start.kind, ExprKind::Int(0))
                    && matches!(r.step.kind, ExprKind::Int(1))
                    && matches!(&r.stop.kind, ExprKind::Shape { array, dim: d } if array == update.array && *d == dim)
            };
            seen.insert(v.as_str())
                && ranges.iter().any(|(var, r)| var == v && whole(r))
        });
    // Every grid dimension and loop around the store binds one of its indices, each its own
    // (an inner loop that rebinds a name would repeat the store): the store runs once per
    // element.
    let distinct = ranges
        .iter()
        .map(|(var, _)| *var)
        .collect::<HashSet<_>>()
        .len()
        == ranges.len();
    let once = distinct && ranges.iter().all(|(var, _)| seen.contains(var));
    if !covers || !once {
        return None;
    }
    let scaled = |x: &Expr| {
        Expr::new(
            ExprKind::Call {
                func: STORED_IN.into(),
                args: vec![
                    Expr::binary(update.op, x.clone(), update.scalar.clone()),
                    x.clone(),
                ],
            },
            x.span,
        )
    };
    let rewrite = |e: Expr| {
        e.rewrite(&mut |x| {
            if same_place(&x, &element) {
                scaled(&x)
            } else {
                x
            }
        })
    };
    let mut folded = k.clone();
    for s in folded.body.iter_mut() {
        rewrite_store(s, update.array, &rewrite);
    }
    if let Some(t) = folded.tiles.as_mut() {
        let target = t.target.clone();
        t.epilogue = t.epilogue.clone().rewrite(&mut |x| {
            if same_place(&x, &target) {
                scaled(&x)
            } else {
                x
            }
        });
    }
    folded.absorbed.push(Absorbed::statement(update.span));
    Some(folded)
}

/// The one statement of `body` that stores `array`, if `array` appears nowhere else but in its
/// value at the same element; `ranges` gets the loops around it, outermost first.
fn the_store<'a>(
    body: &'a [Stmt],
    array: &str,
    ranges: &mut Vec<(&'a str, &'a Range)>,
) -> Option<Expr> {
    let mut found = None;
    for s in body {
        if !touches(s, array) {
            continue;
        }
        if found.is_some() {
            return None;
        }
        found = Some(match &s.kind {
            StmtKind::For {
                var, range, body, ..
            } => {
                ranges.push((var, range));
                the_store(body, array, ranges)?
            }
            StmtKind::Assign {
                target,
                value,
                atomic: false,
            } => {
                let is_store =
                    matches!(&target.kind, ExprKind::Subscript { array: a, .. } if a == array);
                let stray = value.any(&mut |x| {
                    matches!(&x.kind, ExprKind::Subscript { array: a, .. } if a == array)
                        && !same_place(x, target)
                });
                let bare = value.any(&mut |x| matches!(&x.kind, ExprKind::Name(n) if n == array));
                if !is_store || stray || bare || target.any(&mut |x| index_reads(x, array)) {
                    return None;
                }
                target.clone()
            }
            _ => return None,
        });
    }
    found
}

/// `x` is a subscript whose indices mention `array` (`X[X[i]]`).
fn index_reads(x: &Expr, array: &str) -> bool {
    let ExprKind::Subscript { indices, .. } = &x.kind else {
        return false;
    };
    indices.iter().any(|ix| match ix {
        Index::At(e) => e.any(&mut |y| y.mentions(array)),
        _ => true,
    })
}

/// `s` names `array` anywhere (subscript, shape or bare name).
fn touches(s: &Stmt, array: &str) -> bool {
    let mut found = false;
    s.walk(&mut |st| {
        if let StmtKind::For { range, .. } = &st.kind {
            for e in [&range.start, &range.stop, &range.step] {
                found |= mentions_array(e, array) && !shape_only(e, array);
            }
        }
        for e in st.exprs() {
            found |= mentions_array(e, array) && !shape_only(e, array);
        }
    });
    found
}

fn mentions_array(e: &Expr, array: &str) -> bool {
    e.any(&mut |x| match &x.kind {
        ExprKind::Name(n) => n == array,
        ExprKind::Subscript { array: a, .. } | ExprKind::Shape { array: a, .. } => a == array,
        _ => false,
    })
}

/// Every mention of `array` in `e` is its shape (a loop bound): no data of it is read.
fn shape_only(e: &Expr, array: &str) -> bool {
    !e.any(&mut |x| match &x.kind {
        ExprKind::Name(n) => n == array,
        ExprKind::Subscript { array: a, .. } => a == array,
        _ => false,
    })
}

/// Applies `rewrite` to the value of the store of `array` under `s`.
fn rewrite_store(s: &mut Stmt, array: &str, rewrite: &dyn Fn(Expr) -> Expr) {
    match &mut s.kind {
        StmtKind::For { body, .. } => body
            .iter_mut()
            .for_each(|s| rewrite_store(s, array, rewrite)),
        StmtKind::Assign { target, value, .. } => {
            if matches!(&target.kind, ExprKind::Subscript { array: a, .. } if a == array) {
                *value = rewrite(value.clone());
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::attach_pragmas::tests::attached_in;

    /// The kernels of `src` after `run`, each with its body printed.
    fn folded(src: &str) -> Vec<(Kernel, String)> {
        let (f, file) = attached_in(src).unwrap();
        let mut kernels = crate::passes::outline::run(&f).unwrap();
        for k in kernels.iter_mut() {
            crate::passes::tile_dot::run(k, &mut vec![]);
            crate::passes::promote_updates::run(k);
            crate::passes::lower_tensor::split(k).unwrap();
            crate::passes::insert_sync::run(k);
            let opts = crate::passes::lower_tensor::Options { auto_simd: true };
            crate::passes::lower_tensor::lower(k, &opts).unwrap();
        }
        run(&file, &f, &mut kernels);
        kernels
            .into_iter()
            .map(|k| {
                let mut w = crate::codegen::writer::Writer::new(0);
                crate::codegen::python::stmts(&mut w, &k.body);
                (k, w.finish())
            })
            .collect()
    }

    const HEAD: &str = "def f(alpha, beta, C, A, B):\n";
    const SCALE: &str = "    C *= beta\n";
    const REGION: &str = "    #pragma parallel for\n    for i in range(C.shape[0]):\n        #pragma simd\n        for j in range(C.shape[1]):\n            C[i, j] = C[i, j] + alpha * B[i, j]\n";

    #[test]
    fn an_in_place_scaling_runs_in_the_store_of_the_region_after_it() {
        let k = folded(&format!("{HEAD}{SCALE}{REGION}"));
        let [(kernel, body)] = k.as_slice() else {
            panic!("one kernel")
        };
        assert_eq!(kernel.absorbed.len(), 1, "{body}");
        assert_eq!(kernel.absorbed[0].what, AbsorbedKind::Statement);
        assert!(
            body.contains("C[i, j] = C.dtype.type(C[i, j] * beta) + alpha * B[i, j]"),
            "{body}"
        );
        // Every operator, and a scalar expression of numbers and scalar names.
        for (op, printed) in [("+=", "+"), ("-=", "-"), ("/=", "/")] {
            let src = format!("{HEAD}    C {op} 2.0 * beta\n{REGION}");
            let (kernel, body) = &folded(&src)[0];
            assert_eq!(kernel.absorbed.len(), 1, "{src}");
            let scaled = format!("C.dtype.type(C[i, j] {printed} ");
            assert!(
                body.contains(&scaled) && body.contains("2.0 * beta"),
                "{body}"
            );
        }
    }

    #[test]
    fn a_matmul_tile_nest_scales_its_target_in_the_epilogue() {
        let src = format!(
            "{HEAD}{SCALE}    #pragma parallel for\n    for i in range(C.shape[0]):\n        #pragma simd\n        for j in range(C.shape[1]):\n            s = 0.0\n            for k in range(A.shape[1]):\n                s += A[i, k] * B[k, j]\n            C[i, j] = C[i, j] + alpha * s\n"
        );
        let (kernel, _) = &folded(&src)[0];
        let tiles = kernel.tiles.as_ref().expect("a tile nest");
        let epilogue = crate::ir::python::expr(&tiles.epilogue);
        assert!(
            epilogue.contains("C.dtype.type(C[i, j] * beta)"),
            "{epilogue}"
        );
    }

    #[test]
    fn anything_else_stays_a_host_statement() {
        let cases = [
            // Rebinding, not in place: the caller's array must stay as it was.
            (
                SCALE.replace("C *= beta", "C = C * beta"),
                REGION.to_string(),
            ),
            // An array, not a scalar.
            (SCALE.replace("beta", "B"), REGION.to_string()),
            (SCALE.replace("beta", "B[0, 0]"), REGION.to_string()),
            // Not every row or column is stored.
            (
                SCALE.to_string(),
                REGION.replace("range(C.shape[0])", "range(1, C.shape[0])"),
            ),
            (
                SCALE.to_string(),
                REGION.replace("range(C.shape[1])", "range(C.shape[1] - 1)"),
            ),
            (
                SCALE.to_string(),
                REGION.replace("range(C.shape[1])", "range(A.shape[1])"),
            ),
            // Another element, another statement, a bare read of the array.
            (
                SCALE.to_string(),
                REGION.replace("= C[i, j] +", "= C[j, i] +"),
            ),
            (
                SCALE.to_string(),
                REGION.replace(
                    "C[i, j] = C[i, j] +",
                    "A[i, j] = C[i, j]\n            C[i, j] = A[i, j] +",
                ),
            ),
            // The store runs more than once per element.
            (
                SCALE.to_string(),
                REGION.replace(
                    "            C[i, j]",
                    "            for t in range(3):\n                C[i, j]",
                ),
            ),
            (
                SCALE.to_string(),
                REGION.replace(
                    "            C[i, j]",
                    "            for j in range(C.shape[1]):\n                C[i, j]",
                ),
            ),
            // Another statement on its line, which the host must still run.
            (
                SCALE.replace("C *= beta", "alpha = 2.0; C *= beta"),
                REGION.to_string(),
            ),
            // A statement between them.
            (
                format!("{SCALE}    alpha = alpha * 2\n"),
                REGION.to_string(),
            ),
        ];
        for (update, region) in cases {
            let src = format!("{HEAD}{update}{region}");
            let k = folded(&src);
            assert!(k.iter().all(|(k, _)| k.absorbed.is_empty()), "{src}");
        }
    }
}
