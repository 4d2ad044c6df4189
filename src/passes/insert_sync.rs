//! insert_sync (paper Alg. 4): a worker is a whole Triton program whose threads run
//! asynchronously, so a store that another statement of the worker may read back is fenced by
//! barriers before and after. Elided when no other statement reads the array and the store is
//! not repeated by a loop (a statement's own loads happen before its store, lane by lane), and
//! for arrays every statement touches only at one element of each lane (`lane_aligned`).

use crate::ir::*;
use std::collections::{HashMap, HashSet};

pub fn run(k: &mut Kernel) {
    // Statements are numbered in pre-order (the order of `Stmt::walk`); `fence` counts the same way.
    let mut readers: HashMap<String, Vec<usize>> = HashMap::new();
    let mut id = 0;
    for s in &k.body {
        s.walk(&mut |st| {
            for e in st.exprs() {
                let is_target =
                    matches!(&st.kind, StmtKind::Assign { target, .. } if std::ptr::eq(e, target));
                // `_appyc_stored_in(v, X[idx])` names the element for its type, loading nothing.
                let mut named: Vec<*const Expr> = vec![];
                e.walk(&mut |x| {
                    if let ExprKind::Call { func, args } = &x.kind {
                        if func == STORED_IN {
                            named.extend(args.get(1).map(|a| a as *const Expr));
                        }
                    }
                });
                e.walk(&mut |x| {
                    if let ExprKind::Subscript { array, .. } = &x.kind {
                        // The target's own subscript is the store; its index expressions load.
                        if is_target && std::ptr::eq(x, e) || named.contains(&(x as *const Expr)) {
                            return;
                        }
                        let v = readers.entry(array.clone()).or_default();
                        if !v.contains(&id) {
                            v.push(id);
                        }
                    }
                });
            }
            id += 1;
        });
    }
    for array in lane_aligned(k) {
        readers.remove(&array);
    }
    let mut counter = 0;
    k.body = fence(std::mem::take(&mut k.body), &readers, false, &mut counter);
    // Nothing precedes the first statement of a worker: a leading barrier orders nothing.
    if matches!(
        k.body.first(),
        Some(Stmt {
            kind: StmtKind::Barrier,
            ..
        })
    ) {
        k.body.remove(0);
    }
    // Nor does one at the end: the kernel's end orders everything before the next launch.
    if matches!(
        k.body.last(),
        Some(Stmt {
            kind: StmtKind::Barrier,
            ..
        })
    ) {
        k.body.pop();
    }
}

/// Arrays that need no fence at all: every access (loads and stores) is the same subscript,
/// in statements of one block (so after lowering all have one shape), and its indices are
/// variables of the grid or of loops that nothing reassigns, one of them a lane (a `simd` grid
/// variable or a `simd` loop's variable). Each element is then touched only by the lane that owns it, through one pointer
/// expression, so Triton gives every access the same layout and the same thread loads, stores
/// and loads again in program order, as it does for one statement's read-modify-write. (A
/// scalar element is not enough: every thread loads it and one stores.)
fn lane_aligned(k: &Kernel) -> Vec<String> {
    let mut lanes: HashSet<&str> = k
        .dims
        .iter()
        .filter(|d| d.simd.is_some())
        .map(|d| d.var.as_str())
        .collect();
    let mut assigned: HashSet<String> = HashSet::new();
    for s in &k.body {
        s.walk(&mut |st| match &st.kind {
            StmtKind::Assign { target, .. } => {
                if let ExprKind::Name(n) = &target.kind {
                    assigned.insert(n.clone());
                }
            }
            // A `simd` loop's variable is a lane too once strip-mined: each strip's lanes own
            // their elements (loop-form updates, `for j: A[i, j] = A[i, j] + ...`).
            StmtKind::For {
                var,
                kind: LoopKind::Simd(_),
                ..
            } => {
                lanes.insert(var);
            }
            _ => {}
        });
    }
    // Every subscript of each array: (block number, the subscript).
    let mut accesses: HashMap<String, Vec<(usize, Expr)>> = HashMap::new();
    fn visit(
        stmts: &[Stmt],
        block: usize,
        next: &mut usize,
        out: &mut HashMap<String, Vec<(usize, Expr)>>,
    ) {
        for s in stmts {
            for e in s.exprs() {
                e.walk(&mut |x| {
                    if let ExprKind::Subscript { array, .. } = &x.kind {
                        out.entry(array.clone())
                            .or_default()
                            .push((block, x.clone()));
                    }
                });
            }
            let mut inner = |body: &[Stmt], out: &mut HashMap<String, Vec<(usize, Expr)>>| {
                *next += 1;
                visit(body, *next, next, out);
            };
            match &s.kind {
                StmtKind::For { body, .. }
                | StmtKind::HostBlock { body, .. }
                | StmtKind::While { body, .. } => inner(body, out),
                StmtKind::If { body, orelse, .. } => {
                    inner(body, out);
                    inner(orelse, out);
                }
                _ => {}
            }
        }
    }
    visit(&k.body, 0, &mut 0, &mut accesses);
    accesses
        .into_iter()
        .filter(|(_, uses)| {
            let (block, first) = &uses[0];
            let ExprKind::Subscript { indices, .. } = &first.kind else {
                unreachable!("only subscripts are collected");
            };
            let fixed_vars = indices.iter().all(|i| {
                matches!(i, Index::At(Expr { kind: ExprKind::Name(n), .. }) if !assigned.contains(n))
            });
            let has_lane = indices.iter().any(|i| {
                matches!(i, Index::At(Expr { kind: ExprKind::Name(n), .. }) if lanes.contains(n.as_str()))
            });
            fixed_vars
                && has_lane
                && uses.iter().all(|(b, e)| b == block && same_place(e, first))
        })
        .map(|(array, _)| array)
        .collect()
}

fn fence(
    stmts: Vec<Stmt>,
    readers: &HashMap<String, Vec<usize>>,
    in_loop: bool,
    counter: &mut usize,
) -> Vec<Stmt> {
    let mut out = Vec::with_capacity(stmts.len());
    for mut s in stmts {
        let id = *counter;
        *counter += 1;
        let needs = match &s.kind {
            StmtKind::Assign {
                target:
                    Expr {
                        kind: ExprKind::Subscript { array, .. },
                        ..
                    },
                ..
            } => readers
                .get(array)
                .is_some_and(|r| in_loop || r.iter().any(|other| *other != id)),
            _ => false,
        };
        match &mut s.kind {
            StmtKind::For { body, .. } => {
                *body = fence(std::mem::take(body), readers, true, counter);
            }
            StmtKind::If { body, orelse, .. } => {
                *body = fence(std::mem::take(body), readers, in_loop, counter);
                *orelse = fence(std::mem::take(orelse), readers, in_loop, counter);
            }
            _ => {}
        }
        if needs {
            let span = s.span;
            if !matches!(
                out.last(),
                Some(Stmt {
                    kind: StmtKind::Barrier,
                    ..
                })
            ) {
                out.push(Stmt::new(StmtKind::Barrier, span));
            }
            out.push(s);
            out.push(Stmt::new(StmtKind::Barrier, span));
        } else {
            out.push(s);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::build::{assign, elem, int, kernel, name as n};

    fn barriers(k: &Kernel) -> Vec<bool> {
        k.body
            .iter()
            .map(|s| matches!(s.kind, StmtKind::Barrier))
            .collect()
    }

    #[test]
    fn store_read_by_another_statement_is_fenced() {
        let mut k = kernel(vec![
            assign(n("a"), int(1)),
            assign(elem("y", "i"), n("a")),
            assign(n("t"), elem("y", "i")),
        ]);
        run(&mut k);
        assert_eq!(barriers(&k), vec![false, true, false, true, false]);
    }

    #[test]
    fn store_never_read_back_is_not_fenced() {
        let mut k = kernel(vec![
            assign(
                elem("C", "i"),
                Expr::binary(BinOp::Add, elem("A", "i"), elem("C", "i")),
            ),
            assign(elem("D", "i"), elem("A", "i")),
        ]);
        run(&mut k);
        assert_eq!(barriers(&k), vec![false, false]);
    }

    /// The barriers `run` leaves in the kernel of `src` (anywhere in its body).
    fn barrier_count(src: &str) -> usize {
        let f = crate::passes::attach_pragmas::tests::attached(src).unwrap();
        let mut k = crate::passes::outline::run(&f).unwrap().remove(0);
        run(&mut k);
        let mut n = 0;
        for s in &k.body {
            s.walk(&mut |st| n += matches!(st.kind, StmtKind::Barrier) as usize);
        }
        n
    }

    #[test]
    fn an_array_touched_only_at_each_lane_s_own_element_needs_no_fence() {
        let head = "def f(A, y, x, N):\n    #pragma parallel for simd\n    for j in range(N):\n        s = 0.0\n        for i in range(N):\n";
        // Loaded, stored and used through a local: one element per lane and row.
        let fused = "            a = A[i, j] + y[i]\n            A[i, j] = a\n            s += y[i] * a\n        x[j] = s\n";
        assert_eq!(barrier_count(&format!("{head}{fused}")), 0);
        // Read back after the store, still at the same element.
        let back =
            "            A[i, j] = A[i, j] * 2.0\n            s += A[i, j]\n        x[j] = s\n";
        assert_eq!(barrier_count(&format!("{head}{back}")), 0);
        // Another element (the previous row): fenced.
        let shifted =
            "            A[i, j] = A[i, j] * 2.0\n            s += A[i - 1, j]\n        x[j] = s\n";
        assert_eq!(barrier_count(&format!("{head}{shifted}")), 2);
        // Read in another block (after the loop): fenced.
        let other_block =
            "            A[i, j] = A[i, j] * 2.0\n            s += y[i]\n        x[j] = s + A[i, j]\n";
        assert_eq!(barrier_count(&format!("{head}{other_block}")), 2);
        // No lane among the indices (every thread loads a scalar, one stores): fenced.
        let scalar = "def f(A, y, N):\n    #pragma parallel for\n    for j in range(N):\n        for i in range(N):\n            a = A[i, j] + y[i]\n            A[i, j] = a\n";
        assert_eq!(barrier_count(scalar), 2);
        // An index the kernel reassigns names another element after the reassignment.
        let moved = "            k = i\n            a = A[k, j]\n            k = i + 1\n            A[k, j] = a\n        x[j] = s\n";
        assert_eq!(barrier_count(&format!("{head}{moved}")), 2);
    }

    #[test]
    fn identical_spans_do_not_hide_a_reader() {
        // Two compiler-made statements share a span: the store still needs its fence.
        let mut k = kernel(vec![
            assign(n("x"), int(0)),
            assign(n("e"), elem("y", "i")),
            assign(elem("y", "i"), n("e")),
        ]);
        run(&mut k);
        assert_eq!(barriers(&k), vec![false, false, true, false]);
    }
}
