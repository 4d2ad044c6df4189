//! Contract: marks a kernel whose lanes are a few column blocks and whose one row tile walks many
//! rows (a column reduction such as `x = A^T y`) so that its rows may be split over a second
//! grid axis. Changes nothing else: the printer and the launcher do the split (the last program
//! of a column block to finish combines the partial results in split order, then runs the rest).
//!
//! Why: such a kernel launches one program per block of MVL columns, which is a few dozen to a
//! few hundred programs for NumPy-sized matrices. Each streams a whole column block, so the GPU
//! holds too few loads in flight: gemver's `A^T y` at N = 8000 read 795-1412 GB/s against a
//! 2935 GB/s copy, and 2224 GB/s with the rows split eight ways (bench/gaps_h100.log).
//!
//! When it is safe (otherwise the kernel is left as it is):
//! - the grid is one `simd` dimension (the lanes) and the kernel has no communication or shared
//!   scalars;
//! - exactly one row tile, at the top level of the body, folding into one accumulator: splitting
//!   its rows reassociates that reduction, as a reduction may be;
//! - its bounds are host-computable: they read parameters only, no array and no name the kernel
//!   assigns, so the launcher can count the rows;
//! - the statements before it only assign locals (every split runs them; a store there would
//!   happen once per split). What follows it runs once, in the program that combines. Stores
//!   inside the tile (`strip_mine::row_tile_body`: each row's own elements) are made by the
//!   split that owns the row.

use crate::ir::*;
use std::collections::HashSet;

/// Marks `k.split_rows` when the conditions above hold.
pub fn run(k: &mut Kernel) {
    k.split_rows = splittable(k);
}

fn splittable(k: &Kernel) -> Option<SplitRows> {
    if k.dims.len() != 1 || k.dims[0].simd.is_none() || k.comm.is_some() || !k.shared.is_empty() {
        return None;
    }
    let at = k.body.iter().position(is_row_tile)?;
    let StmtKind::For { range, body, .. } = &k.body[at].kind else {
        unreachable!("is_row_tile matched a loop")
    };
    if k.body.iter().filter(|s| contains_row_tile(s)).count() != 1 {
        return None;
    }
    let mut accumulators = HashSet::new();
    for s in body {
        s.walk(&mut |st| {
            for e in st.exprs() {
                e.walk(&mut |x| {
                    if let ExprKind::ReduceRows { acc, .. } = &x.kind {
                        accumulators.insert(acc.clone());
                    }
                });
            }
        });
    }
    if accumulators.len() != 1 {
        return None;
    }
    let assigned = k.bound_names();
    let host_computable = |e: &Expr| {
        !e.any(&mut |x| match &x.kind {
            ExprKind::Name(n) => assigned.contains(n),
            ExprKind::Subscript { .. } | ExprKind::Call { .. } => true,
            _ => false,
        })
    };
    if ![&range.start, &range.stop, &range.step]
        .into_iter()
        .all(host_computable)
    {
        return None;
    }
    let only_locals = k.body[..at].iter().all(|s| {
        matches!(&s.kind, StmtKind::Assign { target, atomic: false, .. }
            if matches!(target.kind, ExprKind::Name(_)))
    });
    only_locals.then_some(SplitRows { at })
}

fn is_row_tile(s: &Stmt) -> bool {
    matches!(
        s.kind,
        StmtKind::For {
            kind: LoopKind::StripMined { tile: Some(0), .. },
            ..
        }
    )
}

fn contains_row_tile(s: &Stmt) -> bool {
    let mut found = false;
    s.walk(&mut |st| found |= is_row_tile(st));
    found
}

#[cfg(test)]
mod tests {
    use crate::ir::Kernel;

    /// The first kernel of `src` after the passes that run before this one.
    fn kernel(src: &str) -> Kernel {
        let f = crate::passes::attach_pragmas::tests::attached(src).unwrap();
        let mut k = crate::passes::outline::run(&f).unwrap().remove(0);
        crate::passes::strip_mine::run(&mut k).unwrap();
        super::run(&mut k);
        k
    }

    const COLUMN_SUMS: &str = "def f(A, x, y, N, M):
    #pragma parallel for simd
    for j in range(M):
        s = 0.0
        for i in range(N):
            s += y[i] * A[i, j]
        x[j] += s
";

    #[test]
    fn a_column_reduction_over_parameter_bounds_is_split() {
        let k = kernel(COLUMN_SUMS);
        assert_eq!(k.split_rows.as_ref().map(|s| s.at), Some(1));
    }

    #[test]
    fn a_store_before_the_rows_keeps_one_program_per_block() {
        let src = COLUMN_SUMS.replace("        s = 0.0\n", "        s = 0.0\n        x[j] = 0.0\n");
        assert!(kernel(&src).split_rows.is_none());
    }

    #[test]
    fn rows_bounded_by_a_local_or_by_a_load_are_not_split() {
        let by_local = COLUMN_SUMS
            .replace("        s = 0.0\n", "        s = 0.0\n        n = N // 2\n")
            .replace("range(N)", "range(n)");
        assert!(kernel(&by_local).split_rows.is_none());
        let by_load = COLUMN_SUMS.replace("range(N)", "range(x[0])");
        assert!(kernel(&by_load).split_rows.is_none());
    }

    #[test]
    fn two_accumulators_or_row_reductions_are_not_split() {
        let two = "def f(A, x, w, y, N, M):
    #pragma parallel for simd
    for j in range(M):
        s = 0.0
        t = 0.0
        for i in range(N):
            s += y[i] * A[i, j]
            t += A[i, j]
        x[j] += s
        w[j] = t
";
        assert!(kernel(two).split_rows.is_none());
        let rows = "def f(A, w, N, M):
    #pragma parallel for
    for i in range(N):
        s = 0.0
        #pragma simd
        for j in range(M):
            s += A[i, j]
        w[i] = s
";
        assert!(kernel(rows).split_rows.is_none());
    }
}
