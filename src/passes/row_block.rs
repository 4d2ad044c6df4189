//! row_block: a region whose innermost `parallel for` holds nothing but one element-wise
//! `simd` loop over host bounds runs `ROW_BLOCK` of its rows per program, as axis 0 of a 2-D
//! tile whose axis 1 is that loop's strip of `MVL // ROW_BLOCK` lanes. When no lane touches
//! another lane's element of an array the loop writes, the strip loop itself becomes the
//! innermost grid dimension (each program one tile, as the tensor form `:M=>parallel
//! :N=>parallel` has it); otherwise it stays a loop whose strips run in order. Likewise a region of
//! element statements whose innermost `parallel for` runs MVL iterations a program
//! (`vectorize_parallel`) inside another `parallel for`: `ROW_BLOCK` iterations of the outer
//! loop by `MVL // ROW_BLOCK` of the inner one.
//!
//! Why: a program walks one row's strip at a time, and when rows are shorter than MVL (heat_3d
//! at N = 120: 118 elements, MVL 128 or more) most of the vector is masked off and each program
//! has one short row of loads in flight. The launcher picks `ROW_BLOCK` per launch as MVL over
//! the row's extent rounded up to a power of two and capped at `_APPYC_ROW_LANES_MAX` lanes (a
//! row of at least that many lanes gets MVL over the cap), so the tile keeps MVL lanes and the
//! tuned MVL still says how much work a program holds. A hand-written heat_3d with 2 rows a
//! program ran at 95 % of copy bandwidth against 79 % for one row, and a hand-written fdtd_2d
//! with 4 rows of 256 lanes 8.3 against 9.1 ms for one row of 1024
//! (bench/layout_probe_h100.log, heat_blocks and fdtd_shapes): rows read their neighbours
//! within one program. A strip loop inside each program, where the tensor form has a grid
//! dimension, left APPy's loop-form jacobi_2d at 0.87x the tensor form on the H200 (whole
//! rows of 11 strips are too coarse to balance over the programs; bench/npbench_natural.md).
//!
//! Semantics: iterations of a `parallel for` are independent by contract, so running several
//! of them as lanes of one tile keeps the result, as `vectorize_parallel` does for bodies
//! without vector loops. The body must be only that loop, of assignments, so nothing runs
//! once per row outside the tile; the driver keeps the result only if strip-mining accepts
//! it (a reduction inside a 2-D tile, for one, it does not).

use crate::ir::*;
use std::collections::HashSet;

/// Marks a region that qualifies, in one of two shapes, and returns whether it did:
/// - the innermost grid dimension is a plain `parallel for` whose body is one `simd` loop:
///   the dimension becomes `RowBlock`, the loop `RowBlockLanes`;
/// - the innermost grid dimension runs MVL iterations a program (`vectorize_parallel`) and the
///   one outside it is a plain `parallel for`: they become `RowBlock` and `RowBlockLanes`.
pub fn run(k: &mut Kernel) -> bool {
    if k.tiles.is_some() || k.comm.is_some() || !k.shared.is_empty() || k.split_rows.is_some() {
        return false;
    }
    let n = k.dims.len();
    if n == 0 || !k.dims.iter().all(|d| positive_literal_step(&d.range.step)) {
        return false;
    }
    if k.dims[n - 1].simd == Some(Width::Mvl) {
        if n < 2 || k.dims[n - 2].simd.is_some() || !k.body.iter().all(element_statement) {
            return false;
        }
        k.dims[n - 2].simd = Some(Width::RowBlock);
        k.dims[n - 1].simd = Some(Width::RowBlockLanes);
        return true;
    }
    if k.dims[n - 1].simd.is_some() {
        return false;
    }
    let bound = k.bound_names();
    let [Stmt {
        kind:
            StmtKind::For {
                kind: kind @ LoopKind::Simd(Width::Mvl),
                var,
                range,
                body,
                ..
            },
        span,
        ..
    }] = k.body.as_mut_slice()
    else {
        return false;
    };
    let unit_step = matches!(range.step.kind, ExprKind::Int(1));
    if !unit_step
        || !host_bound(&range.start, &bound)
        || !host_bound(&range.stop, &bound)
        || !body.iter().all(element_statement)
    {
        return false;
    }
    k.dims[n - 1].simd = Some(Width::RowBlock);
    if !lanes_independent(var, body) {
        *kind = LoopKind::Simd(Width::RowBlockLanes);
        return true;
    }
    // Every strip of the row is its own work item: the strip loop becomes a grid dimension,
    // so a row's strips spread over programs as the tensor form's columns do.
    let lanes = ParallelDim {
        var: var.clone(),
        range: range.clone(),
        simd: Some(Width::RowBlockLanes),
        span: *span,
    };
    k.body = std::mem::take(body);
    k.dims.push(lanes);
    true
}

/// Whether the strips of an element-wise `simd` loop over `var` may run in any order, on any
/// programs: every array the body writes is written and read at one element only, whose
/// indices include `var` itself, so no lane touches another lane's element. (In a strip loop
/// a later strip would see an earlier strip's stores; spread over programs it would not.)
fn lanes_independent(var: &str, body: &[Stmt]) -> bool {
    let mut written: Vec<(String, Expr)> = vec![];
    for s in body {
        if let StmtKind::Assign { target, .. } = &s.kind {
            if let ExprKind::Subscript { array, indices } = &target.kind {
                let own_lane = indices
                    .iter()
                    .any(|ix| matches!(ix, Index::At(e) if matches!(&e.kind, ExprKind::Name(v) if v == var)));
                if !own_lane {
                    return false;
                }
                written.push((array.clone(), target.clone()));
            }
        }
    }
    body.iter().all(|s| {
        let StmtKind::Assign { target, value, .. } = &s.kind else {
            return false;
        };
        [target, value].iter().all(|e| {
            !e.any(&mut |x| {
                let ExprKind::Subscript { array, .. } = &x.kind else {
                    return false;
                };
                written
                    .iter()
                    .any(|(w, place)| w == array && !same_place(place, x))
            })
        })
    })
}

fn positive_literal_step(step: &Expr) -> bool {
    matches!(step.kind, ExprKind::Int(s) if s > 0)
}

/// A bound the launcher can evaluate: no array element and no name the kernel binds (the
/// launcher sizes `ROW_BLOCK` from it, and it is the same for every row).
fn host_bound(e: &Expr, bound: &HashSet<String>) -> bool {
    !e.any(&mut |x| match &x.kind {
        ExprKind::Name(n) => bound.contains(n) || n == "appy.MVL",
        ExprKind::Subscript { .. } | ExprKind::Call { .. } | ExprKind::Vidx { .. } => true,
        _ => false,
    })
}

/// A plain assignment whose value is computed lane by lane: no reduction, no user vector index,
/// nothing that depends on MVL, no atomic.
fn element_statement(s: &Stmt) -> bool {
    let StmtKind::Assign {
        target,
        value,
        atomic,
    } = &s.kind
    else {
        return false;
    };
    !*atomic
        && [target, value].iter().all(|e| {
            !e.any(&mut |x| match &x.kind {
                ExprKind::Reduce { .. }
                | ExprKind::ReduceRows { .. }
                | ExprKind::Vidx { .. }
                | ExprKind::Unsupported(_) => true,
                ExprKind::Call { func, .. } => func == "appy.vidx",
                ExprKind::Name(n) => n == "appy.MVL",
                ExprKind::Subscript { indices, .. } => indices
                    .iter()
                    .any(|i| matches!(i, Index::Slice { .. } | Index::NewAxis)),
                _ => false,
            })
        })
}

#[cfg(test)]
mod tests {
    use crate::ir::*;
    use crate::passes::attach_pragmas::tests::attached;

    /// The grid's widths and the kinds of the body's loops after the pass (on the outlined
    /// region, with explicit loops as `lower_tensor` would make of slices).
    fn blocked(src: &str) -> (bool, Option<Width>, Vec<LoopKind>) {
        let f = attached(src).unwrap();
        let mut k = crate::passes::outline::run(&f).unwrap().remove(0);
        let done = super::run(&mut k);
        let mut kinds = vec![];
        for s in &k.body {
            s.walk(&mut |st| {
                if let StmtKind::For { kind, .. } = &st.kind {
                    kinds.push(*kind);
                }
            });
        }
        (done, k.dims.last().unwrap().simd, kinds)
    }

    const GRID: &str =
        "def f(A, B, L, M, N, lo):\n    #pragma parallel for\n    for i in range(1, L - 1):\n        #pragma parallel for\n        for j in range(1, M - 1):\n";

    #[test]
    fn one_element_wise_strip_over_host_bounds_takes_a_block_of_rows() {
        // Lanes that touch only their own element of what they write: the strip loop becomes
        // the innermost grid dimension, the rows' block the one outside it.
        let body = "            #pragma simd\n            for k in range(1, N - 1):\n                t = A[i, j, k - 1] + A[i, j, k + 1]\n                B[i, j, k] = 0.5 * t\n                C[i, j, k] = B[i, j, k] * t\n";
        let f = attached(&format!("{GRID}{body}")).unwrap();
        let mut k = crate::passes::outline::run(&f).unwrap().remove(0);
        assert!(super::run(&mut k));
        let grid: Vec<_> = k.dims.iter().map(|d| (d.var.as_str(), d.simd)).collect();
        assert_eq!(
            grid,
            [
                ("i", None),
                ("j", Some(Width::RowBlock)),
                ("k", Some(Width::RowBlockLanes))
            ]
        );
        assert_eq!(k.body.len(), 3);
        // A lane that reads or writes another lane's element of a written array keeps the
        // strip loop, whose strips run in order in one program.
        for body in [
            "            #pragma simd\n            for k in range(1, N - 1):\n                B[i, j, k] = B[i, j, k - 1] + A[i, j, k]\n",
            "            #pragma simd\n            for k in range(1, N - 1):\n                B[i, j, k + 1] = A[i, j, k]\n",
            "            #pragma simd\n            for k in range(1, N - 1):\n                B[i, j, k] = A[i, j, k]\n                C[i, j, k] = B[i, j + 1, k]\n",
        ] {
            assert_eq!(
                blocked(&format!("{GRID}{body}")),
                (
                    true,
                    Some(Width::RowBlock),
                    vec![LoopKind::Simd(Width::RowBlockLanes)]
                ),
                "{body}"
            );
        }
        // A parameter and an extent are host values too; so is a 1-D grid.
        let src = "def f(A, B, M, lo):\n    #pragma parallel for\n    for j in range(M):\n        #pragma simd\n        for k in range(lo, A.shape[1]):\n            B[j, k] = A[j, k]\n";
        assert!(blocked(src).0);
    }

    /// The grid's widths after `vectorize_parallel` and the pass.
    fn lane_blocks(src: &str) -> Vec<Option<Width>> {
        let f = attached(src).unwrap();
        let mut k = crate::passes::outline::run(&f).unwrap().remove(0);
        crate::passes::vectorize_parallel::run(&mut k);
        super::run(&mut k);
        k.dims.iter().map(|d| d.simd).collect()
    }

    #[test]
    fn vectorised_lanes_inside_another_parallel_loop_take_a_block_of_its_rows() {
        let head = "def f(A, B, M, N):\n    #pragma parallel for\n    for i in range(1, M):\n        #pragma parallel for\n        for j in range(N):\n";
        assert_eq!(
            lane_blocks(&format!(
                "{head}            t = A[i, j] - A[i - 1, j]\n            B[i, j] = 0.5 * t\n"
            )),
            vec![Some(Width::RowBlock), Some(Width::RowBlockLanes)]
        );
        // An inner loop (a reduction per lane) keeps one row of lanes; so does a 1-D grid.
        assert_eq!(
            lane_blocks(&format!("{head}            s = 0.0\n            for k in range(N):\n                s += A[k, j]\n            B[i, j] = s\n")),
            vec![None, Some(Width::Mvl)]
        );
        assert_eq!(
            lane_blocks("def f(A, B, N):\n    #pragma parallel for\n    for j in range(N):\n        B[j] = A[j]\n"),
            vec![Some(Width::Mvl)]
        );
    }

    #[test]
    fn anything_but_one_element_wise_strip_over_host_bounds_keeps_one_row_a_program() {
        for body in [
            // Bounds the rows compute, or read from memory: each row has its own extent.
            "            #pragma simd\n            for k in range(j, N):\n                B[i, j, k] = A[i, j, k]\n",
            "            #pragma simd\n            for k in range(0, B[i, j, 0]):\n                B[i, j, k] = A[i, j, k]\n",
            // Something else runs once per row.
            "            c = A[i, j, 0]\n            #pragma simd\n            for k in range(N):\n                B[i, j, k] = c\n",
            "            #pragma simd\n            for k in range(N):\n                B[i, j, k] = A[i, j, k]\n            B[i, j, 0] = 0.0\n",
            // Control flow or a loop inside the strip.
            "            #pragma simd\n            for k in range(N):\n                if lo > 0:\n                    B[i, j, k] = A[i, j, k]\n",
            "            #pragma simd\n            for k in range(N):\n                for q in range(lo):\n                    B[i, j, k] = A[i, j, q]\n",
            // A fixed width is the user's.
            "            #pragma simd(64)\n            for k in range(N):\n                B[i, j, k] = A[i, j, k]\n",
            // A reduction across the strip.
            "            s = 0.0\n            #pragma simd\n            for k in range(N):\n                s += A[i, j, k]\n            B[i, j, 0] = s\n",
        ] {
            let (done, simd, _) = blocked(&format!("{GRID}{body}"));
            assert!(!done && simd.is_none(), "{body}");
        }
        // A grid dimension stepping backwards.
        let backwards = "def f(A, B, M, N):\n    #pragma parallel for\n    for j in range(M, 0, -1):\n        #pragma simd\n        for k in range(N):\n            B[j, k] = A[j, k]\n";
        assert!(!blocked(backwards).0);
    }
}
