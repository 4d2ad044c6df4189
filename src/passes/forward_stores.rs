//! forward_stores: a read of an element the worker has just stored, with no store of any array
//! between, reads the stored value instead of loading it again: `X[idx] = e` becomes `_t =
//! _appyc_stored_in(e, X[idx])` (the value as X's element type, which is what the load would
//! return) and `X[idx] = _t`, and the later reads of `X[idx]` read `_t`.
//! *After*: no element subscript is read between its store and the next store of any array in
//! its block, unless the read sits in a nested loop or `if` that itself stores.
//!
//! Why: Triton cannot tell one pointer argument from another, so it reloads `B[i]` after
//! storing it; a sweep whose convergence test reads back what it wrote (`B[i] = ...; diff =
//! max(diff, abs(B[i] - A[i]))`, the clause form and what `join_regions` makes) paid a
//! second trip through the memory system per element (2-D Jacobi to a tolerance on one H200:
//! 15.0 ms, 12.2 ms without the reloads, 11.4 ms with no test at all;
//! bench/gpu_jacobi2d_variants.py).
//!
//! Legality: the same thread stored the element (the same subscript of names nothing between
//! reassigns, so the same address and mask), and any store between, to whatever array, could
//! alias it, so the forwarding stops at the first one (a storing statement's own value is read
//! before its store, so it is forwarded into). Reads under a nested loop or `if` that stores are
//! not forwarded (a later iteration would read after that store). Only element subscripts whose
//! indices are names, integers, shapes and `+ - *` qualify; slices (tensor statements) do not.

use crate::ir::*;
use std::collections::HashSet;

pub fn run(k: &mut Kernel) {
    let mut used = k.names();
    forward_block(&mut k.body, &mut used);
}

fn forward_block(body: &mut Vec<Stmt>, used: &mut HashSet<String>) {
    let mut p = 0;
    while p < body.len() {
        if let Some(target) = plain_store(&body[p]) {
            let reads = later_reads(&body[p + 1..], &target);
            if reads > 0 {
                let StmtKind::Assign { target, value, .. } = body[p].kind.clone() else {
                    unreachable!("a store")
                };
                let ExprKind::Subscript { array, .. } = &target.kind else {
                    unreachable!("a subscript")
                };
                let local = fresh_name(&format!("_{array}_stored"), used);
                let span = body[p].span;
                let converted = Expr::new(
                    ExprKind::Call {
                        func: STORED_IN.into(),
                        args: vec![value, target.clone()],
                    },
                    span,
                );
                body[p] = Stmt::assign(target.clone(), Expr::name(&local, span), span);
                body.insert(p, Stmt::assign(Expr::name(&local, span), converted, span));
                replace_reads(&mut body[p + 2..p + 2 + reads], &target, &local);
                p += 1;
            }
        }
        match &mut body[p].kind {
            StmtKind::For { body: inner, .. } | StmtKind::While { body: inner, .. } => {
                forward_block(inner, used)
            }
            StmtKind::If {
                body: b, orelse, ..
            } => {
                forward_block(b, used);
                forward_block(orelse, used);
            }
            _ => {}
        }
        p += 1;
    }
}

/// The element a statement stores, when it is a plain (non-atomic) element store whose
/// indices are names, integers, shapes and `+ - *`.
fn plain_store(s: &Stmt) -> Option<Expr> {
    let StmtKind::Assign {
        target,
        atomic: false,
        ..
    } = &s.kind
    else {
        return None;
    };
    let ExprKind::Subscript { indices, .. } = &target.kind else {
        return None;
    };
    let simple = indices.iter().all(|ix| match ix {
        Index::At(e) => super::affine::reads_exactly(e),
        _ => false,
    });
    simple.then(|| target.clone())
}

/// How many statements after the store its value may be forwarded into (0 when none reads
/// the element): up to and including the first that stores or rebinds an index name, but not
/// a nested loop or `if` that stores.
fn later_reads(after: &[Stmt], target: &Expr) -> usize {
    let names = index_names(target);
    let mut reach = 0;
    let mut reads = 0;
    for s in after {
        let (stores, rebinds) = effects(s, &names);
        let compound = !matches!(s.kind, StmtKind::Assign { .. });
        if rebinds || (stores && compound) || matches!(s.kind, StmtKind::Barrier) {
            break;
        }
        reach += 1;
        if reads_element(s, target) {
            reads = reach;
        }
        if stores {
            break;
        }
    }
    reads
}

fn index_names(target: &Expr) -> HashSet<String> {
    let mut out = HashSet::new();
    if let ExprKind::Subscript { indices, .. } = &target.kind {
        for ix in indices {
            if let Index::At(e) = ix {
                e.walk(&mut |x| {
                    if let ExprKind::Name(n) = &x.kind {
                        out.insert(n.clone());
                    }
                });
            }
        }
    }
    out
}

/// (stores an array element, assigns one of `names`) anywhere in `s`.
fn effects(s: &Stmt, names: &HashSet<String>) -> (bool, bool) {
    let (mut stores, mut rebinds) = (false, false);
    s.walk(&mut |st| match &st.kind {
        StmtKind::Assign { target, .. } => match &target.kind {
            ExprKind::Name(n) => rebinds |= names.contains(n),
            _ => stores = true,
        },
        StmtKind::For { var, vector, .. } => {
            rebinds |= names.contains(var) || vector.as_ref().is_some_and(|v| names.contains(v))
        }
        StmtKind::Expr(_) | StmtKind::Other(_) | StmtKind::HostBlock { .. } => stores = true,
        _ => {}
    });
    (stores, rebinds)
}

fn reads_element(s: &Stmt, target: &Expr) -> bool {
    let mut found = false;
    s.walk(&mut |st| {
        for e in st.exprs() {
            let is_target =
                matches!(&st.kind, StmtKind::Assign { target: t, .. } if std::ptr::eq(e, t));
            e.walk(&mut |x| {
                if !(is_target && std::ptr::eq(x, e)) && same_place(x, target) {
                    found = true;
                }
            });
        }
    });
    found
}

fn replace_reads(stmts: &mut [Stmt], target: &Expr, local: &str) {
    for s in stmts {
        let store = match &s.kind {
            StmtKind::Assign { target: t, .. } => Some(t.clone()),
            _ => None,
        };
        s.rewrite_exprs(&mut |e| {
            e.rewrite(&mut |x| {
                if same_place(&x, target) {
                    Expr::name(local, x.span)
                } else {
                    x
                }
            })
        });
        // A statement storing the same element keeps its target.
        if let (Some(t), StmtKind::Assign { target: now, .. }) = (store, &mut s.kind) {
            *now = t;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::attach_pragmas::tests::attached;

    fn forwarded(src: &str) -> String {
        let f = attached(src).expect("pragmas attach");
        let mut k = crate::passes::outline::run(&f).expect("outlined").remove(0);
        run(&mut k);
        let mut w = crate::codegen::writer::Writer::new(0);
        crate::codegen::python::stmts(&mut w, &k.body);
        w.finish()
    }

    #[test]
    fn a_read_after_the_store_reads_the_stored_value() {
        let text = forwarded("def f(A, B, C, N):\n    #pragma parallel for simd\n    for i in range(1, N - 1):\n        B[i] = A[i - 1] + A[i + 1]\n        C[i] = B[i] - A[i]\n");
        assert_eq!(
            text,
            "_B_stored = B.dtype.type(A[i - 1] + A[i + 1])\nB[i] = _B_stored\nC[i] = _B_stored - A[i]\n"
        );
    }

    #[test]
    fn a_store_between_or_another_element_keeps_the_load() {
        for src in [
            // C may be B: its store could change B[i].
            "def f(A, B, C, N):\n    #pragma parallel for simd\n    for i in range(N):\n        B[i] = A[i]\n        C[i] = 1.0\n        A[i] = B[i]\n",
            // Another element.
            "def f(A, B, N):\n    #pragma parallel for simd\n    for i in range(N - 1):\n        B[i] = A[i]\n        A[i] = B[i + 1]\n",
            // A nested loop that stores: its second iteration reads after that store.
            "def f(A, B, C, N, M):\n    #pragma parallel for\n    for i in range(N):\n        B[i] = A[i]\n        for j in range(M):\n            C[j] = B[i]\n",
        ] {
            assert!(!forwarded(src).contains("_stored"), "{src}");
        }
        // The index name is rebound between.
        let src = "def f(A, B, N):\n    #pragma sequential for\n    for i in range(N):\n        k = i\n        B[k] = A[i]\n        k = i + 1\n        A[i] = B[k]\n";
        assert!(!forwarded(src).contains("_stored"), "{src}");
    }

    #[test]
    fn a_reduction_update_reads_the_element_stored_before_it() {
        let text = forwarded("def f(A, B, N):\n    d = 0.0\n    #pragma parallel for simd reduction(max:d)\n    for i in range(N):\n        B[i] = 2.0 * A[i]\n        d = max(d, abs(B[i] - A[i]))\n    return d\n");
        assert!(text.contains("d = max(d, abs(_B_stored - A[i]))"), "{text}");
    }
}
