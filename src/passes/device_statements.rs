//! device_statements: in a host loop that holds a parallel region, a bare assignment to the
//! regions' arrays becomes a region of its own: slices as if annotated `lo:hi=>parallel` on
//! every sliced dimension of the target, one element as a `sequential for` of one iteration.
//! *After*: such statements carry a pragma (spanning the statement itself); nothing else
//! changes.
//!
//! Why: APPy users leave lines like `ey[0, :] = fict[t]` bare in a time loop; as host code each
//! is a torch launch per step and keeps the loop off the persistent kernel. As a region the
//! statement runs on the device like the annotated ones, with the same meaning: the tensor
//! model's lowering copies through a temporary when the value reads the target elsewhere, as
//! NumPy's right-hand side does.
//!
//! Only statements the tensor model can run become regions: every array the statement reads or
//! writes is a parameter of the function or one that a region indexes (so it is a tensor the
//! launcher receives, not a list made on the host), no reduction (a whole reduction into a
//! name is `scalar_reductions`'), nothing the kernel language lacks.
//! Anything else stays host code, as before.

use crate::frontend::source::Span;
use crate::ir::pragma::{DimPragma, Directive, Pragma};
use crate::ir::*;
use std::collections::HashSet;

pub fn run(func: &mut Function, file_line_of: impl Fn(Span) -> usize) {
    let Some(arrays) = Arrays::of(func) else {
        return;
    };
    let mut used = func.names();
    convert_in_host_loops(&mut func.body, &arrays, &file_line_of, &mut used);
}

/// The names that may be device arrays, the rank each is subscripted with, and the names known
/// to hold scalars.
pub(crate) struct Arrays {
    names: HashSet<String>,
    ranks: std::collections::HashMap<String, usize>,
    scalars: HashSet<String>,
}

impl Arrays {
    /// The function's, or None when no region indexes an array (nothing runs on the device).
    pub(crate) fn of(func: &Function) -> Option<Arrays> {
        let region = region_arrays(&func.body);
        if region.is_empty() {
            return None;
        }
        let ranks = ranks(&func.body);
        let mut arrays = Arrays {
            scalars: scalar_names(func, &ranks.keys().cloned().collect()),
            names: region,
            ranks,
        };
        arrays.names.extend(func.params.iter().cloned());
        Some(arrays)
    }
}

/// Parameters never subscripted, loop variables, and names assigned only numbers and
/// arithmetic of such names: what a bare name in a device statement may be (anything else
/// may be an array made on the host).
pub(crate) fn scalar_names(func: &Function, arrays: &HashSet<String>) -> HashSet<String> {
    let mut assigned: Vec<(&str, &Expr)> = vec![];
    let mut out: HashSet<String> = func
        .params
        .iter()
        .filter(|p| !arrays.contains(*p))
        .cloned()
        .collect();
    for s in &func.body {
        s.walk(&mut |st| match &st.kind {
            StmtKind::For { var, .. } => {
                out.insert(var.clone());
            }
            StmtKind::Assign { target, value, .. } => {
                if let ExprKind::Name(n) = &target.kind {
                    assigned.push((n, value));
                }
            }
            _ => {}
        });
    }
    let mut changed = true;
    while changed {
        changed = false;
        for (n, _) in &assigned {
            if out.contains(*n) {
                continue;
            }
            let others = assigned.iter().filter(|(m, _)| m == n);
            let scalar = others.clone().all(|(_, v)| {
                !v.any(&mut |x| match &x.kind {
                    ExprKind::Subscript { .. } | ExprKind::Call { .. } => true,
                    ExprKind::Name(m) => m != n && !out.contains(m),
                    _ => false,
                })
            });
            if scalar {
                out.insert(n.to_string());
                changed = true;
            }
        }
    }
    out
}

/// The number of indices each array is subscripted with, where all its subscripts agree.
pub(crate) fn ranks(body: &[Stmt]) -> std::collections::HashMap<String, usize> {
    let mut seen: std::collections::HashMap<String, Option<usize>> = Default::default();
    for s in body {
        s.walk(&mut |st| {
            for e in st.exprs() {
                e.walk(&mut |x| {
                    if let ExprKind::Subscript { array, indices } = &x.kind {
                        let n = indices
                            .iter()
                            .filter(|i| !matches!(i, Index::NewAxis))
                            .count();
                        let entry = seen.entry(array.clone()).or_insert(Some(n));
                        if *entry != Some(n) {
                            *entry = None;
                        }
                    }
                });
            }
        });
    }
    seen.into_iter()
        .filter_map(|(a, n)| n.map(|n| (a, n)))
        .collect()
}

/// `B` read whole (`A[:] = B`) as `B[:, ...]` over its rank; None when a whole array's rank is
/// not known.
pub(crate) fn whole_arrays_sliced(value: &Expr, arrays: &Arrays) -> Option<Expr> {
    let mut unknown = false;
    let out = value.clone().rewrite(&mut |x| match &x.kind {
        ExprKind::Name(n) if arrays.names.contains(n) && !is_scalar_param(n, arrays) => {
            let Some(&rank) = arrays.ranks.get(n) else {
                unknown = true;
                return x;
            };
            let all = Index::Slice {
                lo: None,
                hi: None,
                span: x.span,
            };
            Expr::new(
                ExprKind::Subscript {
                    array: n.clone(),
                    indices: vec![all; rank],
                },
                x.span,
            )
        }
        _ => x,
    });
    (!unknown).then_some(out)
}

/// A parameter never subscripted is a scalar (a size, a coefficient).
fn is_scalar_param(n: &str, arrays: &Arrays) -> bool {
    !arrays.ranks.contains_key(n)
}

/// Arrays subscripted inside any region (an annotated loop or tensor statement).
fn region_arrays(body: &[Stmt]) -> HashSet<String> {
    let mut out = HashSet::new();
    for s in body {
        s.walk(&mut |st| {
            if !is_region(st) {
                return;
            }
            st.walk(&mut |inner| {
                for e in inner.exprs() {
                    e.walk(&mut |x| {
                        if let ExprKind::Subscript { array, .. } = &x.kind {
                            out.insert(array.clone());
                        }
                    });
                }
            });
        });
    }
    out
}

pub(crate) fn is_region(s: &Stmt) -> bool {
    match &s.kind {
        StmtKind::For { kind, .. } => {
            matches!(kind, LoopKind::Parallel { .. } | LoopKind::Sequential)
        }
        StmtKind::Assign { .. } => {
            matches!(&s.pragma, Some(p) if matches!(p.directive, Directive::Dimensions(_)))
        }
        _ => false,
    }
}

/// Walks host code (never into regions); in the body of a host loop that holds a region, each
/// convertible statement gets its pragma.
fn convert_in_host_loops(
    body: &mut [Stmt],
    arrays: &Arrays,
    line_of: &impl Fn(Span) -> usize,
    used: &mut HashSet<String>,
) {
    for s in body.iter_mut() {
        if is_region(s) {
            continue;
        }
        match &mut s.kind {
            StmtKind::For {
                kind: LoopKind::Plain,
                body,
                ..
            }
            | StmtKind::HostBlock { body, .. }
            | StmtKind::While { body, .. } => {
                if body.iter().any(is_region) {
                    for inner in body.iter_mut() {
                        convert(inner, arrays, line_of, used);
                    }
                }
                convert_in_host_loops(body, arrays, line_of, used);
            }
            StmtKind::If { body, orelse, .. } => {
                convert_in_host_loops(body, arrays, line_of, used);
                convert_in_host_loops(orelse, arrays, line_of, used);
            }
            _ => {}
        }
    }
}

/// The statement as a region, if it is a bare assignment the tensor model can run.
fn convert(
    s: &mut Stmt,
    arrays: &Arrays,
    line_of: &impl Fn(Span) -> usize,
    used: &mut HashSet<String>,
) {
    if s.pragma.is_some() {
        return;
    }
    let StmtKind::Assign {
        target,
        value,
        atomic: false,
    } = &s.kind
    else {
        return;
    };
    let ExprKind::Subscript { array, indices } = &target.kind else {
        return;
    };
    if !arrays.names.contains(array) || !device_value(value, arrays) {
        return;
    }
    let Some(value) = whole_arrays_sliced(value, arrays) else {
        return;
    };
    let line = line_of(s.span);
    let pragma = |directive| Pragma {
        directive,
        span: s.span,
        line,
    };
    let slices: Vec<DimPragma> = indices
        .iter()
        .filter_map(|i| match i {
            Index::Slice { lo, hi, span } => Some(DimPragma {
                lo: lo.clone(),
                hi: hi.clone(),
                parallel: true,
                vector: None,
                reduce: None,
                span: *span,
            }),
            _ => None,
        })
        .collect();
    let target = target.clone();
    if !slices.is_empty() {
        let runs = crate::passes::tensor::analyse(&target, &value, &[])
            .is_ok_and(|t| t.reduced.is_empty() && t.dims.len() == slices.len());
        if runs {
            s.pragma = Some(pragma(Directive::Dimensions(slices)));
            s.kind = StmtKind::Assign {
                target,
                value,
                atomic: false,
            };
        }
        return;
    }
    let sliced = |x: &Expr| {
        matches!(&x.kind, ExprKind::Subscript { indices, .. }
            if indices.iter().any(|i| matches!(i, Index::Slice { .. } | Index::NewAxis)))
    };
    if value.any(&mut |x| sliced(x)) {
        return; // one element from slices is a reduction
    }
    // One element: a `sequential for` of one iteration, which one program runs.
    let one = Stmt::assign(target, value, s.span);
    let sequential = pragma(Directive::SequentialFor { num_warps: None });
    *s = Stmt {
        kind: StmtKind::For {
            var: fresh_name("_once", used),
            range: Range {
                start: Expr::int(0, s.span),
                stop: Expr::int(1, s.span),
                step: Expr::int(1, s.span),
            },
            body: vec![one],
            kind: LoopKind::Sequential,
            vector: None,
            num_warps: None,
        },
        span: s.span,
        pragma: Some(sequential),
    };
}

/// Reads only region arrays, and nothing a kernel cannot compute.
pub(crate) fn device_value(value: &Expr, arrays: &Arrays) -> bool {
    !value.any(&mut |x| match &x.kind {
        ExprKind::Subscript { array, .. } => !arrays.names.contains(array),
        ExprKind::Name(n) => !arrays.scalars.contains(n) && !arrays.ranks.contains_key(n),
        ExprKind::Unsupported(_) => true,
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::attach_pragmas::tests::attached;

    fn converted(src: &str) -> Function {
        let mut f = attached(src).expect("pragmas attach");
        run(&mut f, |_| 1);
        f
    }

    fn loop_body(f: &Function) -> &[Stmt] {
        let StmtKind::For { body, .. } = &f.body[0].kind else {
            panic!("{:?}", f.body[0])
        };
        body
    }

    const FDTD_LIKE: &str = "def f(T, ey, hz, fict):
    for t in range(T):
        ey[0, :] = fict[t]
        #pragma 1:=>parallel :=>parallel
        ey[1:, :] -= 0.5 * (hz[1:, :] - hz[:-1, :])
        hz[0, 0] = ey[0, 0] + 1.0
        s = fict[t]
";

    #[test]
    fn a_bare_slice_assignment_in_a_time_loop_becomes_a_region_over_its_slices() {
        let f = converted(FDTD_LIKE);
        let body = loop_body(&f);
        let Some(Pragma {
            directive: Directive::Dimensions(d),
            ..
        }) = &body[0].pragma
        else {
            panic!("{:?}", body[0].pragma)
        };
        assert_eq!(d.len(), 1);
        assert!(d[0].parallel && d[0].lo.is_none() && d[0].hi.is_none());
        // One element: a sequential region of one iteration around the statement.
        assert!(matches!(
            &body[2].kind,
            StmtKind::For { kind: LoopKind::Sequential, body, .. } if body.len() == 1
        ));
        // A scalar assignment stays host code.
        assert!(body[3].pragma.is_none());
        assert!(matches!(body[3].kind, StmtKind::Assign { .. }));
    }

    #[test]
    fn statements_stay_host_code_outside_loops_with_regions_or_on_other_arrays() {
        // No region in the loop.
        let f = converted(
            "def f(T, A, B):\n    for t in range(T):\n        A[:] = B\n    #pragma parallel for\n    for i in range(4):\n        A[i] = 0.0\n",
        );
        assert!(loop_body(&f)[0].pragma.is_none());
        // `L` is no parameter and no array of a region; `np.sum` is a reduction.
        let f = converted(
            "def f(T, A):\n    L = [0, 1]\n    for t in range(T):\n        L[0:2] = A[0:2]\n        A[0] = np.sum(A[1:])\n        #pragma parallel for\n        for i in range(4):\n            A[i] = 0.0\n",
        );
        let StmtKind::For { body, .. } = &f.body[1].kind else {
            panic!()
        };
        assert!(body[0].pragma.is_none() && body[1].pragma.is_none());
    }

    #[test]
    fn an_array_read_whole_is_read_as_slices_of_its_rank() {
        let f = converted(
            "def f(T, A, B):\n    for t in range(T):\n        #pragma parallel for\n        for i in range(4):\n            B[i, 0] = A[i, 0]\n        A[:, :] = B\n        A[:] = C\n",
        );
        let body = loop_body(&f);
        let StmtKind::Assign { value, .. } = &body[1].kind else {
            panic!()
        };
        assert_eq!(crate::ir::python::expr(value), "B[:, :]");
        assert!(body[1].pragma.is_some());
        // `C` is no parameter and no region's array: host code.
        assert!(body[2].pragma.is_none());
    }

    #[test]
    fn extents_unpacked_from_a_shape_are_scalars() {
        let f = converted(
            "def f(T, A, B):\n    M, N = A.shape\n    for t in range(T):\n        #pragma parallel for\n        for i in range(M):\n            B[i, 0] = A[i, 0]\n        B[M - 1, :] = A[M - 1, :]\n",
        );
        let StmtKind::For { body, .. } = &f.body[2].kind else {
            panic!("{:?}", f.body[2])
        };
        assert!(body[1].pragma.is_some(), "{:?}", body[1]);
    }
}
