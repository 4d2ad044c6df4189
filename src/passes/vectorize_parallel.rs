//! vectorize_parallel: the innermost `parallel for` of a kernel runs MVL iterations per
//! program (as if written `parallel for simd`) when its body allows it. Iterations of a parallel
//! loop are independent by contract, so running them as lanes of one vector keeps the
//! semantics; it turns one Triton program per element into one per MVL elements.
//!
//! Kept scalar: bodies with vectorised inner loops, slices or `appy.vidx` (that would need 2-D
//! vectors), and bodies whose control flow depends on the iteration (`if`s and loop bounds
//! computed from the loop variable), which lanes cannot follow separately.

use crate::ir::*;
use std::collections::HashSet;

/// Returns whether it vectorised the loop.
pub fn run(k: &mut Kernel) -> bool {
    let Some(dim) = k.dims.last() else {
        return false;
    };
    if dim.simd.is_some() || !vectorizable(&dim.var, &k.body) {
        return false;
    }
    if let Some(d) = k.dims.last_mut() {
        d.simd = Some(Width::Mvl);
    }
    true
}

fn vectorizable(var: &str, body: &[Stmt]) -> bool {
    // Names whose value depends on the loop variable, directly or through other locals.
    let mut lane_dependent: HashSet<String> = HashSet::from([var.to_string()]);
    loop {
        let before = lane_dependent.len();
        for s in body {
            s.walk(&mut |st| {
                if let StmtKind::Assign {
                    target:
                        Expr {
                            kind: ExprKind::Name(n),
                            ..
                        },
                    value,
                    ..
                } = &st.kind
                {
                    if lane_dependent.iter().any(|d| value.mentions(d)) {
                        lane_dependent.insert(n.clone());
                    }
                }
            });
        }
        if lane_dependent.len() == before {
            break;
        }
    }
    let depends = |e: &Expr| lane_dependent.iter().any(|d| e.mentions(d));
    let mut ok = true;
    for s in body {
        s.walk(&mut |st| {
            match &st.kind {
                StmtKind::For { kind, range, .. } => {
                    ok &= *kind == LoopKind::Plain
                        && !depends(&range.start)
                        && !depends(&range.stop)
                        && !depends(&range.step);
                }
                StmtKind::If { test, .. } => ok &= !depends(test),
                _ => {}
            }
            for e in st.exprs() {
                ok &= !e.any(&mut |x| match &x.kind {
                    ExprKind::Subscript { indices, .. } => {
                        indices.iter().any(|i| matches!(i, Index::Slice { .. }))
                    }
                    ExprKind::Call { func, .. } => func == "appy.vidx",
                    ExprKind::Name(n) => n == "appy.MVL",
                    ExprKind::Vidx { .. } => true,
                    _ => false,
                });
            }
        });
    }
    ok
}

#[cfg(test)]
mod tests {
    use crate::ir::*;
    use crate::passes::attach_pragmas::tests::attached;

    fn simd_of(src: &str) -> Option<Width> {
        let f = attached(src).unwrap();
        let mut k = crate::passes::outline::run(&f).unwrap().remove(0);
        super::run(&mut k);
        k.dims.last().unwrap().simd
    }

    #[test]
    fn element_wise_loops_are_vectorised() {
        assert_eq!(
            simd_of("def f(A, B, N):\n    #pragma parallel for\n    for i in range(N):\n        t = A[i] * 2\n        B[i] = t + 1\n"),
            Some(Width::Mvl)
        );
        // Inner sequential loops with lane-independent bounds are fine.
        assert_eq!(
            simd_of("def f(A, B, M, N):\n    #pragma parallel for\n    for i in range(M):\n        s = 0.0\n        for k in range(N):\n            s += A[i, k]\n        B[i] = s\n"),
            Some(Width::Mvl)
        );
    }

    #[test]
    fn lane_dependent_control_flow_stays_scalar() {
        assert_eq!(
            simd_of("def f(A, B, p, N):\n    #pragma parallel for\n    for i in range(N):\n        lo = p[i]\n        for k in range(lo, p[i + 1]):\n            B[i] += A[k]\n"),
            None
        );
        assert_eq!(
            simd_of("def f(A, B, N):\n    #pragma parallel for\n    for i in range(N):\n        if A[i] > 0:\n            B[i] = 1\n"),
            None
        );
        assert_eq!(
            simd_of("def f(A, B, N, M):\n    #pragma parallel for\n    for i in range(N):\n        B[i, :M] = A[i, :M]\n"),
            None
        );
    }
}
