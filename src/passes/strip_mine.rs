//! strip_mine (paper Alg. 6 and the 1-D case of Alg. 7): turns `simd` loops and slice
//! statements into strip-mined loops over vector indices (`vidx`), marks which names hold
//! vectors, and rewrites reductions of vectors into scalars (`s += v` → `s += sum(v)`).
//! After this pass every vector in a kernel comes from a `StripMined` loop, the program's own
//! `parallel for simd` index, or a user's `appy.vidx`.

use crate::diag::{Diagnostic, Result};
use crate::frontend::source::Span;
use crate::ir::*;
use std::collections::HashSet;

pub fn run(k: &mut Kernel) -> Result<()> {
    let mut scope = Scope::default();
    for d in &k.dims {
        scope.defined.insert(d.var.clone());
    }
    if let Some(d) = k.dims.last().filter(|d| d.simd.is_some()) {
        scope.vectors.insert(d.var.clone());
        scope.program_lanes = true;
    }
    let mut cx = Cx { used: k.names() };
    let body = std::mem::take(&mut k.body);
    k.body = cx.block(body, &mut scope)?;
    Ok(())
}

#[derive(Default, Clone)]
struct Scope {
    /// Names that hold vectors here.
    vectors: HashSet<String>,
    /// Scalar and vector names assigned so far (kernel locals and loop variables).
    defined: HashSet<String>,
    /// Names defined before the enclosing strip-mined loop: assigning them a vector of that
    /// loop's lanes is a reduction, not a new vector. (In a `parallel for simd` kernel the lanes
    /// are separate iterations: names there are per-lane vectors, never reductions.)
    strip_outer: HashSet<String>,
    in_vector_loop: bool,
    /// The kernel's programs are vectors of iterations (`parallel for simd`).
    program_lanes: bool,
    /// The next `simd` loop is the inner axis of a 2-D tile.
    tile_slot: bool,
    /// Inside a 2-D tile: no reductions (they would need a reduction axis).
    in_tile: bool,
}

struct Cx {
    used: HashSet<String>,
}

fn width_expr(w: Width, span: Span) -> Expr {
    match w {
        Width::Mvl => Expr::name("appy.MVL", span),
        Width::Fixed(n) => Expr::int(n as i64, span),
    }
}

/// Bounds that are not plain names, constants or shapes are computed once before the loop.
fn is_simple(e: &Expr) -> bool {
    !e.any(&mut |x| matches!(x.kind, ExprKind::Subscript { .. } | ExprKind::Call { .. }))
}

impl Scope {
    fn is_vector(&self, e: &Expr) -> bool {
        e.any(&mut |x| match &x.kind {
            ExprKind::Name(n) => self.vectors.contains(n),
            ExprKind::Vidx { .. } => true,
            ExprKind::Subscript { indices, .. } => {
                indices.iter().any(|i| matches!(i, Index::Slice { .. }))
            }
            _ => false,
        })
    }
}

fn has_slice(e: &Expr) -> bool {
    e.any(&mut |x| match &x.kind {
        ExprKind::Subscript { indices, .. } => {
            indices.iter().any(|i| matches!(i, Index::Slice { .. }))
        }
        _ => false,
    })
}

impl Cx {
    fn fresh_name(&mut self, base: &str) -> String {
        fresh_name(base, &mut self.used)
    }

    fn block(&mut self, stmts: Vec<Stmt>, scope: &mut Scope) -> Result<Vec<Stmt>> {
        let mut out = vec![];
        for s in stmts {
            self.stmt(s, scope, &mut out)?;
        }
        Ok(out)
    }

    fn stmt(&mut self, mut s: Stmt, scope: &mut Scope, out: &mut Vec<Stmt>) -> Result<()> {
        // `appy.vidx(start, width, bound)` written by the user is the IR's vector index.
        for e in match &mut s.kind {
            StmtKind::Assign { target, value, .. } => vec![target, value],
            StmtKind::If { test, .. } => vec![test],
            _ => vec![],
        } {
            *e = user_vidx(e.clone())?;
        }
        let span = s.span;
        match s.kind {
            StmtKind::For {
                var,
                range,
                body,
                kind: LoopKind::Simd(width),
                ..
            } => {
                // A `simd` loop directly inside another, alone in its body, forms a 2-D tile.
                let tile_inner = scope.tile_slot;
                if (scope.in_vector_loop && !tile_inner) || scope.program_lanes {
                    return Err(Diagnostic::error(
                        span,
                        "a `simd` loop inside a vectorised loop is supported only as the single statement of a `simd` loop (a 2-D tile)",
                    ));
                }
                let tile_outer = !scope.in_vector_loop
                    && body.len() == 1
                    && matches!(
                        body[0].kind,
                        StmtKind::For {
                            kind: LoopKind::Simd(_),
                            ..
                        }
                    );
                let tile = if tile_inner {
                    Some(1)
                } else if tile_outer {
                    Some(0)
                } else {
                    None
                };
                if scope.is_vector(&range.start) || scope.is_vector(&range.stop) {
                    return Err(Diagnostic::error(
                        range.stop.span,
                        "a `simd` loop's bounds must be scalars",
                    ));
                }
                let (start, stop) = self.hoist_bounds(&var, range.start, range.stop, scope, out);
                let base = self.fresh_name(&format!("{var}_base"));
                let mut inner = scope.clone();
                inner.strip_outer = scope.defined.clone();
                inner.vectors.insert(var.clone());
                inner.defined.insert(var.clone());
                inner.in_vector_loop = true;
                inner.tile_slot = tile_outer;
                inner.in_tile = tile.is_some();
                let body = self.block(body, &mut inner)?;
                scope
                    .defined
                    .extend(inner.defined.into_iter().filter(|n| n != &var));
                out.push(Stmt {
                    kind: StmtKind::For {
                        var: base,
                        range: Range {
                            start,
                            stop,
                            step: width_expr(width, span),
                        },
                        body,
                        kind: LoopKind::StripMined { width, tile },
                        vector: Some(var),
                        num_warps: None,
                    },
                    span,
                    pragma: s.pragma,
                });
            }
            StmtKind::For {
                var,
                range,
                body,
                kind,
                vector,
                num_warps,
            } => {
                if scope.is_vector(&range.start)
                    || scope.is_vector(&range.stop)
                    || scope.is_vector(&range.step)
                {
                    return Err(Diagnostic::error(
                        span,
                        "a loop inside a vectorised region needs scalar bounds",
                    ));
                }
                let mut inner = scope.clone();
                inner.defined.insert(var.clone());
                inner.vectors.remove(&var);
                let body = self.block(body, &mut inner)?;
                scope.defined.extend(inner.defined);
                out.push(Stmt {
                    kind: StmtKind::For {
                        var,
                        range,
                        body,
                        kind,
                        vector,
                        num_warps,
                    },
                    span,
                    pragma: s.pragma,
                });
            }
            StmtKind::If { test, body, orelse } => {
                if scope.is_vector(&test) {
                    return Err(Diagnostic::error(
                        test.span,
                        "an `if` whose condition differs between vector lanes is not supported",
                    )
                    .with_help("select values with `np.where(cond, a, b)` instead"));
                }
                let mut a = scope.clone();
                let body = self.block(body, &mut a)?;
                let mut b = scope.clone();
                let orelse = self.block(orelse, &mut b)?;
                scope.defined.extend(a.defined.into_iter().chain(b.defined));
                scope.vectors.extend(a.vectors.into_iter().chain(b.vectors));
                out.push(Stmt {
                    kind: StmtKind::If { test, body, orelse },
                    span,
                    pragma: s.pragma,
                });
            }
            StmtKind::Assign { target, value, .. } if has_slice(&target) || has_slice(&value) => {
                return Err(Diagnostic::error(
                    span,
                    "internal: a slice statement reached strip-mining (lower_tensor lowers them)",
                ));
            }
            StmtKind::Assign {
                target,
                value,
                atomic,
            } => {
                let stmt = self.assign(target, value, atomic, span, scope)?;
                out.push(Stmt {
                    kind: stmt,
                    span,
                    pragma: s.pragma,
                });
            }
            kind => out.push(Stmt {
                kind,
                span,
                pragma: s.pragma,
            }),
        }
        Ok(())
    }

    fn hoist_bounds(
        &mut self,
        var: &str,
        start: Expr,
        stop: Expr,
        scope: &mut Scope,
        out: &mut Vec<Stmt>,
    ) -> (Expr, Expr) {
        let mut hoist = |e: Expr, what: &str, this: &mut Self| {
            if is_simple(&e) {
                return e;
            }
            let name = this.fresh_name(&format!("{var}_{what}"));
            let span = e.span;
            scope.defined.insert(name.clone());
            out.push(Stmt::new(
                StmtKind::Assign {
                    target: Expr::name(&name, span),
                    value: e,
                    atomic: false,
                },
                span,
            ));
            Expr::name(&name, span)
        };
        let start = hoist(start, "lo", self);
        let stop = hoist(stop, "hi", self);
        (start, stop)
    }

    fn assign(
        &mut self,
        target: Expr,
        value: Expr,
        atomic: bool,
        span: Span,
        scope: &mut Scope,
    ) -> Result<StmtKind> {
        let value_vec = scope.is_vector(&value);
        if scope.in_tile && value_vec && !scope.is_vector(&target) {
            return Err(Diagnostic::error(
                span,
                "a reduction inside a 2-D vectorised loop nest is not supported yet",
            )
            .with_help("vectorise only the reduced dimension"));
        }
        match &target.kind {
            ExprKind::Name(n) => {
                if atomic {
                    return Err(Diagnostic::error(
                        span,
                        "`#pragma atomic` needs an array element as its target",
                    )
                    .with_help(
                        "worker-private names need no atomics; shared results live in arrays",
                    ));
                }
                if value_vec && scope.in_vector_loop && scope.strip_outer.contains(n) {
                    let value = reduce_update(&target, value, span)?;
                    return Ok(StmtKind::Assign {
                        target,
                        value,
                        atomic,
                    });
                }
                if value_vec {
                    scope.vectors.insert(n.clone());
                } else {
                    scope.vectors.remove(n);
                }
                scope.defined.insert(n.clone());
                Ok(StmtKind::Assign {
                    target,
                    value,
                    atomic,
                })
            }
            ExprKind::Subscript { .. } => {
                let target_vec = scope.is_vector(&target);
                let value = if value_vec && !target_vec {
                    reduce_update(&target, value, span)?
                } else {
                    value
                };
                Ok(StmtKind::Assign {
                    target,
                    value,
                    atomic,
                })
            }
            _ => unreachable!("outline checks assignment targets"),
        }
    }
}

/// `t = t + v` with vector `v` → `t = t + sum(v)`; max/min likewise; anything else is an error.
fn reduce_update(target: &Expr, value: Expr, span: Span) -> Result<Expr> {
    let Some((op, operand)) = as_reduction(target, &value) else {
        return Err(Diagnostic::error(
            span,
            "a vector value is assigned to a single location",
        )
        .with_help("only updates `x += v`, `x -= v`, `x = max(x, v)`, `x = min(x, v)` reduce a vector into one value"));
    };
    let (v, negated) = match operand {
        ReductionOperand::Plain(v) => (v.clone(), false),
        ReductionOperand::Negated(v) => (v.clone(), true),
    };
    let vspan = v.span;
    let reduced = Expr::new(
        ExprKind::Reduce {
            op,
            value: Box::new(v),
        },
        vspan,
    );
    Ok(match op {
        ReduceOp::Sum => Expr::binary(
            if negated { BinOp::Sub } else { BinOp::Add },
            target.clone(),
            reduced,
        ),
        ReduceOp::Max | ReduceOp::Min => Expr::new(
            ExprKind::Call {
                func: if op == ReduceOp::Max { "max" } else { "min" }.into(),
                args: vec![target.clone(), reduced],
            },
            value.span,
        ),
    })
}

/// `appy.vidx(start, width, bound)` → `Vidx`; width must be `appy.MVL` or a power of two.
fn user_vidx(e: Expr) -> Result<Expr> {
    let mut err = None;
    let out = e.rewrite(&mut |x| match &x.kind {
        ExprKind::Call { func, args } if func == "appy.vidx" => {
            if args.len() != 3 {
                err.get_or_insert(Diagnostic::error(
                    x.span,
                    "`appy.vidx` takes (start, width, bound)",
                ));
                return x;
            }
            let width = match &args[1].kind {
                ExprKind::Name(n) if n == "appy.MVL" => Width::Mvl,
                ExprKind::Int(n) if *n > 0 && (*n as u64).is_power_of_two() => {
                    Width::Fixed(*n as u32)
                }
                _ => {
                    err.get_or_insert(Diagnostic::error(
                        args[1].span,
                        "the width of `appy.vidx` must be `appy.MVL` or a power-of-two constant",
                    ));
                    return x;
                }
            };
            Expr::new(
                ExprKind::Vidx {
                    start: Box::new(args[0].clone()),
                    width,
                    bound: Box::new(args[2].clone()),
                },
                x.span,
            )
        }
        _ => x,
    });
    err.map_or(Ok(out), Err)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(s: &str) -> Expr {
        Expr::name(s, Span::DUMMY)
    }

    #[test]
    fn reduction_rewrites_to_sum() {
        let t = n("acc");
        let v = Expr::binary(BinOp::Add, t.clone(), n("x"));
        let r = reduce_update(&t, v, Span::DUMMY).unwrap();
        let ExprKind::Binary {
            op: BinOp::Add,
            right,
            ..
        } = r.kind
        else {
            panic!()
        };
        assert!(matches!(
            right.kind,
            ExprKind::Reduce {
                op: ReduceOp::Sum,
                ..
            }
        ));
        // A plain vector assignment to one place is rejected.
        assert!(reduce_update(&t, n("x"), Span::DUMMY).is_err());
    }
}
