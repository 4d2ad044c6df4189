//! normalize: `x op= v` becomes `x = x op v`, and constant negative indices `A[-k]` become
//! `A[A.shape[d] - k]`, so later passes see one assignment form and non-negative index math.

use crate::ir::*;

pub fn run(func: &mut Function) {
    for s in func.body.iter_mut() {
        normalize_stmt(s);
    }
}

fn normalize_stmt(s: &mut Stmt) {
    let kind = std::mem::replace(&mut s.kind, StmtKind::Pass);
    s.kind = match kind {
        StmtKind::AugAssign { target, op, value } => StmtKind::Assign {
            value: Expr::binary(op, target.clone(), value),
            target,
            atomic: false,
        },
        other => other,
    };
    match &mut s.kind {
        StmtKind::Assign { target, value, .. } => {
            *target = negative_indices(target.clone());
            *value = negative_indices(value.clone());
        }
        StmtKind::For { body, range, .. } => {
            range.start = negative_indices(range.start.clone());
            range.stop = negative_indices(range.stop.clone());
            body.iter_mut().for_each(normalize_stmt);
        }
        StmtKind::HostBlock { body, .. } | StmtKind::While { body, .. } => {
            body.iter_mut().for_each(normalize_stmt)
        }
        StmtKind::If { test, body, orelse } => {
            *test = negative_indices(test.clone());
            body.iter_mut()
                .chain(orelse.iter_mut())
                .for_each(normalize_stmt);
        }
        StmtKind::Expr(e) => *e = negative_indices(e.clone()),
        _ => {}
    }
}

pub(crate) fn negative_indices(e: Expr) -> Expr {
    e.rewrite(&mut |mut x| {
        if let ExprKind::Subscript { array, indices } = &mut x.kind {
            for (dim, ix) in indices.iter_mut().enumerate() {
                let from_end = |k: i64, span| {
                    Expr::binary(
                        BinOp::Sub,
                        Expr::new(
                            ExprKind::Shape {
                                array: array.clone(),
                                dim,
                            },
                            span,
                        ),
                        Expr::int(k, span),
                    )
                };
                match ix {
                    Index::At(Expr {
                        kind: ExprKind::Int(k),
                        span,
                    }) if *k < 0 => *ix = Index::At(from_end(-*k, *span)),
                    Index::Slice { lo, hi, .. } => {
                        for bound in [lo, hi] {
                            if let Some(Expr {
                                kind: ExprKind::Int(k),
                                span,
                            }) = bound
                            {
                                if *k < 0 {
                                    *bound = Some(from_end(-*k, *span));
                                }
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
        x
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontend::source::Span;

    fn sub(array: &str, idx: Vec<Index>) -> Expr {
        Expr::new(
            ExprKind::Subscript {
                array: array.into(),
                indices: idx,
            },
            Span::DUMMY,
        )
    }

    #[test]
    fn aug_assign_becomes_assign() {
        let target = sub("y", vec![Index::At(Expr::name("i", Span::DUMMY))]);
        let mut f = Function {
            name: "f".into(),
            params: vec![],
            span: Span::DUMMY,
            body: vec![Stmt::new(
                StmtKind::AugAssign {
                    target: target.clone(),
                    op: BinOp::Add,
                    value: Expr::int(1, Span::DUMMY),
                },
                Span::DUMMY,
            )],
        };
        run(&mut f);
        let StmtKind::Assign {
            target: t, value, ..
        } = &f.body[0].kind
        else {
            panic!("not an assignment: {:?}", f.body[0].kind)
        };
        assert_eq!(*t, target);
        assert!(as_reduction(t, value).is_some());
    }

    #[test]
    fn negative_index_counts_from_the_end() {
        let e = negative_indices(sub(
            "A",
            vec![
                Index::At(Expr::name("i", Span::DUMMY)),
                Index::At(Expr::int(-1, Span::DUMMY)),
            ],
        ));
        let ExprKind::Subscript { indices, .. } = e.kind else {
            panic!()
        };
        let Index::At(Expr {
            kind: ExprKind::Binary { op, left, right },
            ..
        }) = &indices[1]
        else {
            panic!("{:?}", indices[1])
        };
        assert_eq!(*op, BinOp::Sub);
        assert_eq!(
            left.kind,
            ExprKind::Shape {
                array: "A".into(),
                dim: 1
            }
        );
        assert_eq!(right.kind, ExprKind::Int(1));
    }
}
