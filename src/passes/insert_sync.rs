//! insert_sync (paper Alg. 4): a worker is a whole Triton program whose threads run
//! asynchronously, so a store that another statement of the worker may read back is fenced by
//! barriers before and after. Elided when no other statement reads the array and the store is
//! not repeated by a loop (a statement's own loads happen before its store, lane by lane).

use crate::frontend::source::Span;
use crate::ir::*;
use std::collections::HashMap;

pub fn run(k: &mut Kernel) {
    // How many statements load each array, counted once per statement.
    let mut loads: HashMap<String, Vec<Span>> = HashMap::new();
    for s in &k.body {
        s.walk(&mut |st| {
            for e in st.exprs() {
                let is_target =
                    matches!(&st.kind, StmtKind::Assign { target, .. } if std::ptr::eq(e, target));
                e.walk(&mut |x| {
                    if let ExprKind::Subscript { array, indices } = &x.kind {
                        // The target's own subscript is a store, but its index expressions load.
                        if is_target && std::ptr::eq(x, e) && !indices.is_empty() {
                            return;
                        }
                        let v = loads.entry(array.clone()).or_default();
                        if !v.contains(&st.span) {
                            v.push(st.span);
                        }
                    }
                });
            }
        });
    }
    k.body = fence(std::mem::take(&mut k.body), &loads, false);
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
}

fn fence(stmts: Vec<Stmt>, loads: &HashMap<String, Vec<Span>>, in_loop: bool) -> Vec<Stmt> {
    let mut out = Vec::with_capacity(stmts.len());
    for s in stmts {
        let needs = match &s.kind {
            StmtKind::Assign {
                target:
                    Expr {
                        kind: ExprKind::Subscript { array, .. },
                        ..
                    },
                ..
            } => match loads.get(array) {
                None => false,
                Some(readers) => in_loop || readers.iter().any(|r| *r != s.span),
            },
            _ => false,
        };
        let mut s = s;
        match &mut s.kind {
            StmtKind::For { body, .. } => {
                *body = fence(std::mem::take(body), loads, true);
            }
            StmtKind::If { body, orelse, .. } => {
                *body = fence(std::mem::take(body), loads, in_loop);
                *orelse = fence(std::mem::take(orelse), loads, in_loop);
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
