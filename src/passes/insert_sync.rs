//! insert_sync (paper Alg. 4): a worker is a whole Triton program whose threads run
//! asynchronously, so a store that another statement of the worker may read back is fenced by
//! barriers before and after. Elided when no other statement reads the array and the store is
//! not repeated by a loop (a statement's own loads happen before its store, lane by lane).

use crate::ir::*;
use std::collections::HashMap;

pub fn run(k: &mut Kernel) {
    // Statements are numbered in pre-order (the order of `Stmt::walk`); `fence` counts the same way.
    let mut readers: HashMap<String, Vec<usize>> = HashMap::new();
    let mut id = 0;
    for s in &k.body {
        s.walk(&mut |st| {
            for e in st.exprs() {
                let is_target =
                    matches!(&st.kind, StmtKind::Assign { target, .. } if std::ptr::eq(e, target));
                e.walk(&mut |x| {
                    if let ExprKind::Subscript { array, .. } = &x.kind {
                        // The target's own subscript is the store; its index expressions load.
                        if is_target && std::ptr::eq(x, e) {
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
