//! promote_updates: an element updated by reduction inside a loop whose other statements do not
//! touch its array (`y[i] += A[i, j] * x[j]` in a `simd` loop) is kept in a scalar for the
//! loop's duration: one load before, one store after. Saves a load, a store and two barriers
//! per iteration, and lets strip-mining see a scalar reduction.

use crate::ir::*;
use std::collections::HashSet;

pub fn run(k: &mut Kernel) {
    let mut used = k.names();
    k.body = block(std::mem::take(&mut k.body), &mut used);
}

fn block(stmts: Vec<Stmt>, used: &mut HashSet<String>) -> Vec<Stmt> {
    let mut out = vec![];
    for mut s in stmts {
        match &mut s.kind {
            StmtKind::For { body, .. } => {
                *body = block(std::mem::take(body), used);
                promote_loop(s, used, &mut out);
            }
            StmtKind::If { body, orelse, .. } => {
                *body = block(std::mem::take(body), used);
                *orelse = block(std::mem::take(orelse), used);
                out.push(s);
            }
            _ => out.push(s),
        }
    }
    out
}

/// Names assigned anywhere in `body`, and the loop's own variable.
fn assigned_in(var: &str, body: &[Stmt]) -> HashSet<String> {
    let mut names = HashSet::from([var.to_string()]);
    for s in body {
        s.walk(&mut |st| match &st.kind {
            StmtKind::Assign {
                target:
                    Expr {
                        kind: ExprKind::Name(n),
                        ..
                    },
                ..
            } => {
                names.insert(n.clone());
            }
            StmtKind::For { var, .. } => {
                names.insert(var.clone());
            }
            _ => {}
        });
    }
    names
}

/// How many subscripts of `array` the statements hold (loads and stores).
fn accesses(array: &str, body: &[Stmt]) -> usize {
    let mut n = 0;
    for s in body {
        s.walk(&mut |st| {
            for e in st.exprs() {
                e.walk(&mut |x| {
                    if matches!(&x.kind, ExprKind::Subscript { array: a, .. } if a == array) {
                        n += 1;
                    }
                });
            }
        });
    }
    n
}

/// A non-atomic reduction update of one loop-invariant element whose array nothing else in
/// the loop touches.
fn promotable(st: &Stmt, body: &[Stmt], changing: &HashSet<String>) -> bool {
    let StmtKind::Assign {
        target,
        value,
        atomic: false,
    } = &st.kind
    else {
        return false;
    };
    let ExprKind::Subscript { array, indices } = &target.kind else {
        return false;
    };
    let index_loads = indices.iter().any(|ix| match ix {
        Index::At(e) => e.any(&mut |x| matches!(x.kind, ExprKind::Subscript { .. })),
        Index::Slice { .. } | Index::NewAxis => true,
    });
    let invariant = !index_loads && !changing.iter().any(|n| target.mentions(n));
    // `t = t op v`: the element is read once and stored once, and nowhere else in the loop.
    invariant && as_reduction(target, value).is_some() && accesses(array, body) == 2
}

fn promote_loop(mut s: Stmt, used: &mut HashSet<String>, out: &mut Vec<Stmt>) {
    let StmtKind::For { var, body, .. } = &mut s.kind else {
        unreachable!()
    };
    let changing = assigned_in(var, body);
    let candidates: Vec<usize> = (0..body.len())
        .filter(|&i| promotable(&body[i], body, &changing))
        .collect();
    let mut before = vec![];
    let mut after = vec![];
    for i in candidates {
        let StmtKind::Assign { target, value, .. } = &mut body[i].kind else {
            unreachable!()
        };
        let ExprKind::Subscript { array, .. } = &target.kind else {
            unreachable!()
        };
        let name = fresh_name(&format!("{array}_elem"), used);
        let span = target.span;
        let local = Expr::name(&name, span);
        before.push(Stmt::new(
            StmtKind::Assign {
                target: local.clone(),
                value: target.clone(),
                atomic: false,
            },
            span,
        ));
        after.push(Stmt::new(
            StmtKind::Assign {
                target: target.clone(),
                value: local.clone(),
                atomic: false,
            },
            span,
        ));
        let element = target.clone();
        *value = value.clone().rewrite(&mut |x| {
            if same_place(&x, &element) {
                local.clone()
            } else {
                x
            }
        });
        *target = local;
    }
    out.extend(before);
    out.push(s);
    out.extend(after);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontend::source::Span;
    use crate::ir::build::{assign, elem, name as n};

    fn simd_loop(body: Vec<Stmt>) -> Stmt {
        Stmt::new(
            StmtKind::For {
                var: "j".into(),
                range: Range {
                    start: Expr::int(0, Span::DUMMY),
                    stop: n("N"),
                    step: Expr::int(1, Span::DUMMY),
                },
                body,
                kind: LoopKind::Simd(Width::Mvl),
                vector: None,
                num_warps: None,
            },
            Span::DUMMY,
        )
    }

    #[test]
    fn invariant_update_moves_out_of_the_loop() {
        let update = assign(
            elem("y", "i"),
            Expr::binary(BinOp::Add, elem("y", "i"), elem("x", "j")),
        );
        let out = block(vec![simd_loop(vec![update])], &mut HashSet::new());
        assert_eq!(out.len(), 3, "load, loop, store: {out:#?}");
        let StmtKind::Assign { target, value, .. } = &out[0].kind else {
            panic!()
        };
        assert_eq!(target.kind, ExprKind::Name("_y_elem".into()));
        assert!(same_place(value, &elem("y", "i")));
        let StmtKind::Assign { target, .. } = &out[2].kind else {
            panic!()
        };
        assert!(same_place(target, &elem("y", "i")));
    }

    #[test]
    fn element_indexed_by_the_loop_stays() {
        let update = assign(
            elem("y", "j"),
            Expr::binary(BinOp::Add, elem("y", "j"), elem("x", "j")),
        );
        let out = block(vec![simd_loop(vec![update])], &mut HashSet::new());
        assert_eq!(out.len(), 1);
    }

    #[test]
    fn array_read_elsewhere_in_the_loop_stays() {
        let update = assign(
            elem("y", "i"),
            Expr::binary(BinOp::Add, elem("y", "i"), elem("x", "j")),
        );
        let other = assign(n("t"), elem("y", "j"));
        let out = block(vec![simd_loop(vec![update, other])], &mut HashSet::new());
        assert_eq!(out.len(), 1);
    }
}
