//! strip_mine (paper Alg. 6 and the 1-D case of Alg. 7): turns `simd` loops and slice
//! statements into strip-mined loops over vector indices (`vidx`), marks which names hold
//! vectors, and rewrites reductions of vectors into scalars (`s += v` → `s += sum(v)`). A plain
//! loop in vector lanes whose body reduces into lane vectors (after element-wise locals and
//! stores of each row's own elements) becomes a row tile (`row_tile_body`, `Cx::row_tile`):
//! strips of rows reduced into the lanes.
//! After this pass every vector in a kernel comes from a `StripMined` loop, the program's own
//! `parallel for simd` index, or a user's `appy.vidx`.

use crate::diag::{Diagnostic, Result};
use crate::frontend::source::Span;
use crate::ir::*;
use std::collections::{HashMap, HashSet};

pub fn run(k: &mut Kernel) -> Result<()> {
    let mut scope = Scope::default();
    for d in &k.dims {
        scope.defined.insert(d.var.clone());
    }
    match k.dims.last() {
        // A row block (`passes::row_block`): the program's rows are axis 0 of a 2-D tile
        // whose axis 1 is the one `simd` loop of the body.
        Some(d) if d.simd == Some(Width::RowBlock) => {
            scope.vectors.insert(d.var.clone());
            scope.in_vector_loop = true;
            scope.tile_slot = true;
            scope.in_tile = true;
        }
        Some(d) if d.simd.is_some() => {
            scope.vectors.insert(d.var.clone());
            scope.program_lanes = true;
            // Lanes blocked with the rows of the loop outside them (`passes::row_block`).
            for outer in k.dims.iter().filter(|o| o.simd == Some(Width::RowBlock)) {
                scope.vectors.insert(outer.var.clone());
            }
        }
        _ => {}
    }
    let mut cx = Cx {
        used: k.names(),
        read_after_loops: read_outside_their_loops(&k.body),
        reads: name_reads(&k.body),
    };
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
    /// Names read somewhere outside every loop that binds them (a loop variable read after its
    /// loop): such a loop keeps its scalar variable.
    read_after_loops: HashSet<String>,
    /// How often each name is read in the kernel.
    reads: HashMap<String, usize>,
}

/// The rows of one strip of a row tile (`row_tile`). Fixed rather than tuned: with the lanes
/// such kernels are tuned over (MVL 32 to 256, `launch::ROW_TILE_MVLS`) a strip is 1,024 to
/// 8,192 elements, 4 to 64 KB of fp64 in flight per program per iteration, which covers the
/// latency of a memory-bound column walk without pushing a 4-warp program's registers into
/// spills; one more constexpr in every launch would buy little.
pub const TILE_ROWS: u32 = 32;

fn width_expr(w: Width, span: Span) -> Expr {
    match w {
        Width::Mvl => Expr::name("appy.MVL", span),
        Width::Fixed(n) => Expr::int(n as i64, span),
        Width::RowBlock => Expr::name(ROW_BLOCK_NAME, span),
        Width::RowBlockLanes => Expr::new(
            ExprKind::Binary {
                op: BinOp::FloorDiv,
                left: Box::new(Expr::name("appy.MVL", span)),
                right: Box::new(Expr::name(ROW_BLOCK_NAME, span)),
            },
            span,
        ),
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
        user_vidx_in(&mut s)?;
        let span = s.span;
        if let Some(tiled) = self.row_tile_of(&s, scope, out) {
            out.push(Stmt {
                pragma: s.pragma,
                ..tiled
            });
            return Ok(());
        }
        let kind = match s.kind {
            StmtKind::For {
                var,
                range,
                body,
                kind: LoopKind::Simd(width),
                ..
            } => self.simd_loop(var, range, body, width, span, scope, out)?,
            StmtKind::For {
                var,
                range,
                body,
                kind,
                vector,
                num_warps,
            } => {
                let body = self.loop_body(&var, &range, body, span, scope)?;
                StmtKind::For {
                    var,
                    range,
                    body,
                    kind,
                    vector,
                    num_warps,
                }
            }
            StmtKind::If { test, body, orelse } => self.if_stmt(test, body, orelse, scope)?,
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
            } => self.assign(target, value, atomic, span, scope)?,
            kind => kind,
        };
        out.push(Stmt {
            kind,
            span,
            pragma: s.pragma,
        });
        Ok(())
    }

    /// A plain loop that `row_tile_body` accepts, as a row tile (bounds it hoists go to `out`).
    fn row_tile_of(&mut self, s: &Stmt, scope: &mut Scope, out: &mut Vec<Stmt>) -> Option<Stmt> {
        let StmtKind::For {
            var,
            range,
            body,
            kind: LoopKind::Plain,
            ..
        } = &s.kind
        else {
            return None;
        };
        let tile = row_tile_body(var, range, body, scope, &self.read_after_loops, &self.reads)?;
        Some(self.row_tile(var, range.clone(), tile, s.span, scope, out))
    }

    /// A `simd` loop as a strip-mined loop over `var`'s vector (a 2-D tile's outer axis when
    /// it holds just another `simd` loop, the inner one when it is that loop).
    // The loop's parts, as `stmt` takes them apart, plus where it is and where hoisted bounds go.
    #[allow(clippy::too_many_arguments)]
    fn simd_loop(
        &mut self,
        var: String,
        range: Range,
        body: Vec<Stmt>,
        width: Width,
        span: Span,
        scope: &mut Scope,
        out: &mut Vec<Stmt>,
    ) -> Result<StmtKind> {
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
        let mut body = self.block(body, &mut inner)?;
        if tile.is_none() {
            accumulate_lanes(&mut body, &mut |base| self.fresh_name(base));
        }
        scope
            .defined
            .extend(inner.defined.into_iter().filter(|n| n != &var));
        Ok(StmtKind::For {
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
        })
    }

    /// The body of a scalar loop over `var` (which holds no vector inside it); its bounds
    /// must be scalars.
    fn loop_body(
        &mut self,
        var: &str,
        range: &Range,
        body: Vec<Stmt>,
        span: Span,
        scope: &mut Scope,
    ) -> Result<Vec<Stmt>> {
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
        inner.defined.insert(var.to_string());
        inner.vectors.remove(var);
        let body = self.block(body, &mut inner)?;
        scope.defined.extend(inner.defined);
        Ok(body)
    }

    /// An `if` whose test is the same in every lane; what either branch defines (or makes a
    /// vector) is so after it.
    fn if_stmt(
        &mut self,
        test: Expr,
        body: Vec<Stmt>,
        orelse: Vec<Stmt>,
        scope: &mut Scope,
    ) -> Result<StmtKind> {
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
        Ok(StmtKind::If { test, body, orelse })
    }

    /// A row tile: the loop over `var` as strips of `TILE_ROWS` rows (axis 0 of a 2-D tile, the
    /// lanes on axis 1; `row_tile_body` decided it). Element statements stay as they are, over
    /// the strip's rows; each update becomes `s = s + ReduceRows(e)`, with a fresh name for the
    /// partial accumulator of each `s` (shared by its updates).
    fn row_tile(
        &mut self,
        var: &str,
        range: Range,
        tile: Vec<Stmt>,
        span: Span,
        scope: &mut Scope,
        out: &mut Vec<Stmt>,
    ) -> Stmt {
        let (start, stop) = self.hoist_bounds(var, range.start, range.stop, scope, out);
        let base = self.fresh_name(&format!("{var}_base"));
        let mut accs: Vec<(String, String)> = vec![];
        let body = tile
            .into_iter()
            .map(|mut st| {
                if let StmtKind::Assign { target, value, .. } = &mut st.kind {
                    let ExprKind::Name(n) = &target.kind else {
                        return st; // a store of the strip's elements
                    };
                    scope.vectors.insert(n.clone());
                    scope.defined.insert(n.clone());
                    if as_reduction(target, value).is_none() {
                        return st; // a local of the strip's elements
                    }
                    let acc = match accs.iter().find(|(s, _)| s == n) {
                        Some((_, acc)) => acc.clone(),
                        None => {
                            let acc = self.fresh_name(&format!("{n}_rows"));
                            accs.push((n.clone(), acc.clone()));
                            acc
                        }
                    };
                    *value = reduction(target, value.clone(), st.span, Some(acc))
                        .expect("row_tile_body checked the update");
                }
                st
            })
            .collect();
        Stmt::new(
            StmtKind::For {
                var: base,
                range: Range {
                    start,
                    stop,
                    step: Expr::int(TILE_ROWS as i64, span),
                },
                body,
                kind: LoopKind::StripMined {
                    width: Width::Fixed(TILE_ROWS),
                    tile: Some(0),
                },
                vector: Some(var.to_string()),
                num_warps: None,
            },
            span,
        )
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

/// A lane strip's body: the updates `s = s ⊕ Reduce(e)` of each carried scalar that the body
/// touches only through such updates, at its top level and by one operator, reduce into a lane
/// vector across the strips (`Reduce::lanes`, a fresh name per scalar). Nothing in the loop can
/// then see a partial value, and the printer reduces the lanes once after the loop.
fn accumulate_lanes(body: &mut [Stmt], fresh: &mut dyn FnMut(&str) -> String) {
    /// (s, op) of `s = s ⊕ Reduce(e)` whose `e` does not read `s`.
    fn update_of(s: &Stmt) -> Option<(&str, ReduceOp)> {
        let (target, n, value) = s.name_assignment()?;
        let (op, operand) = as_reduction(target, value)?;
        let (ReductionOperand::Plain(r) | ReductionOperand::Negated(r)) = operand;
        match &r.kind {
            ExprKind::Reduce {
                value, lanes: None, ..
            } if !value.mentions(n) => Some((n, op)),
            _ => None,
        }
    }
    let mut candidates: Vec<(String, ReduceOp)> = vec![];
    for s in body.iter() {
        if let Some((n, op)) = update_of(s) {
            if !candidates.iter().any(|(c, _)| c == n) {
                candidates.push((n.to_string(), op));
            }
        }
    }
    for (n, op) in candidates {
        let only_updates = body.iter().all(|s| match update_of(s) {
            Some((m, o)) if m == n => o == op,
            _ => !s.names().contains(&n),
        });
        if !only_updates {
            continue;
        }
        let acc = fresh(&format!("{n}_lanes"));
        for s in body.iter_mut() {
            if !matches!(update_of(s), Some((m, _)) if m == n) {
                continue;
            }
            let StmtKind::Assign { value, .. } = &mut s.kind else {
                unreachable!("update_of matched an assignment")
            };
            *value = std::mem::replace(value, Expr::int(0, Span::DUMMY)).rewrite(&mut |x| match x
                .kind
            {
                ExprKind::Reduce {
                    op,
                    value,
                    lanes: None,
                } => Expr::new(
                    ExprKind::Reduce {
                        op,
                        value,
                        lanes: Some(acc.clone()),
                    },
                    x.span,
                ),
                kind => Expr::new(kind, x.span),
            });
        }
    }
}

/// `t = t + v` with vector `v` → `t = t + sum(v)`; max/min likewise; anything else is an error.
fn reduce_update(target: &Expr, value: Expr, span: Span) -> Result<Expr> {
    reduction(target, value, span, None)
}

/// `reduce_update`, the reduction being `Reduce` (every lane) or, given the partial
/// accumulator `rows_acc`, `ReduceRows` (the rows of a row tile, one value per lane).
fn reduction(target: &Expr, value: Expr, span: Span, rows_acc: Option<String>) -> Result<Expr> {
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
    let value_box = Box::new(v);
    let reduced = Expr::new(
        match rows_acc {
            Some(acc) => ExprKind::ReduceRows {
                op,
                value: value_box,
                acc,
            },
            None => ExprKind::Reduce {
                op,
                value: value_box,
                lanes: None,
            },
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

/// The body of a row tile, when a plain loop qualifies: it runs in vector lanes (a `parallel
/// for simd` program or a 1-D `simd` loop), steps by 1 over scalar bounds, its variable is not
/// read after it, and its body is element statements, then updates:
/// - element statements (optional): a new local `t = e` (not defined before the loop, assigned
///   once, read nowhere outside the loop), or a store `X[..., var, ...] = e` to an element of the lanes that
///   has the loop variable as one of its indices (each row writes its own elements), `X` stored
///   once and read in the body only at the stored element (each element is then loaded and
///   stored by the one thread that holds it: `insert_sync::lane_aligned`);
/// - updates `s = s + e` / `s - e` / `max(s, e)` / `min(s, e)` of lane vectors `s` defined
///   before the loop, each `e` a vector of the lanes, every update of one `s` with one operator
///   (`+`/`-`, `max` or `min`: mixed, the order of the rows would matter);
/// - no `e` reads an accumulator or a local assigned after it (each row's statements then only
///   see that row's values, so strips of rows may run at once).
///
/// `None` otherwise.
fn row_tile_body(
    var: &str,
    range: &Range,
    body: &[Stmt],
    scope: &Scope,
    read_after_loops: &HashSet<String>,
    kernel_reads: &HashMap<String, usize>,
) -> Option<Vec<Stmt>> {
    let lanes = scope.program_lanes || (scope.in_vector_loop && !scope.in_tile);
    if !lanes
        || body.is_empty()
        || read_after_loops.contains(var)
        || !matches!(range.step.kind, ExprKind::Int(1))
        || scope.is_vector(&range.start)
        || scope.is_vector(&range.stop)
    {
        return None;
    }
    let accumulators: HashSet<&str> = body
        .iter()
        .filter_map(|s| match &s.kind {
            StmtKind::Assign { target, value, .. } => match &target.kind {
                ExprKind::Name(n) if as_reduction(target, value).is_some() => Some(n.as_str()),
                _ => None,
            },
            _ => None,
        })
        .collect();
    // Locals assigned so far (readable by later statements) and all of them (a read of one
    // assigned later would see the previous row's value).
    let all_locals: HashSet<&str> = body
        .iter()
        .filter_map(|s| match &s.kind {
            StmtKind::Assign { target, .. } => match &target.kind {
                ExprKind::Name(n) if !accumulators.contains(n.as_str()) => Some(n.as_str()),
                _ => None,
            },
            _ => None,
        })
        .collect();
    let mut scope = scope.clone();
    let mut locals: HashSet<&str> = HashSet::new();
    let mut stored: Vec<(&str, &Expr)> = vec![];
    let mut ops: Vec<(&str, ReduceOp)> = vec![];
    let mut in_updates = false;
    let elementwise = |e: &Expr, locals: &HashSet<&str>| {
        !e.any(&mut |x| match &x.kind {
            ExprKind::Name(n) => {
                accumulators.contains(n.as_str())
                    || (all_locals.contains(n.as_str()) && !locals.contains(n.as_str()))
                    || n == "appy.MVL"
            }
            ExprKind::Call { func, .. } => func == "appy.vidx",
            ExprKind::Vidx { .. } | ExprKind::Reduce { .. } | ExprKind::ReduceRows { .. } => true,
            ExprKind::Subscript { indices, .. } => indices
                .iter()
                .any(|i| matches!(i, Index::Slice { .. } | Index::NewAxis)),
            _ => false,
        })
    };
    for s in body {
        let StmtKind::Assign {
            target,
            value,
            atomic: false,
        } = &s.kind
        else {
            return None;
        };
        match &target.kind {
            ExprKind::Name(acc) if accumulators.contains(acc.as_str()) => {
                in_updates = true;
                // A name defined before an enclosing `simd` loop reduces to a scalar there:
                // today's route.
                if acc == var
                    || !scope.defined.contains(acc)
                    || (scope.in_vector_loop && scope.strip_outer.contains(acc))
                {
                    return None;
                }
                let (op, ReductionOperand::Plain(e) | ReductionOperand::Negated(e)) =
                    as_reduction(target, value)?;
                if !elementwise(e, &locals) {
                    return None;
                }
                match ops.iter().find(|(n, _)| n == acc) {
                    Some((_, first)) if *first != op => return None,
                    Some(_) => {}
                    None => ops.push((acc, op)),
                }
                // Lanes without rows would reduce a column of one value per row: not a lane
                // vector.
                if !scope.is_vector(e) {
                    return None;
                }
            }
            ExprKind::Name(t) => {
                if in_updates
                    || !elementwise(value, &locals)
                    || t == var
                    || scope.defined.contains(t)
                    || name_reads(body).get(t) != kernel_reads.get(t)
                    || !locals.insert(t)
                {
                    return None;
                }
                if scope.is_vector(value) {
                    scope.vectors.insert(t.clone());
                }
            }
            ExprKind::Subscript { array, indices } => {
                let own_row = indices
                    .iter()
                    .any(|i| matches!(i, Index::At(e) if matches!(&e.kind, ExprKind::Name(n) if n == var)));
                let plain = indices.iter().all(|i| matches!(i, Index::At(_)));
                if in_updates
                    || !elementwise(value, &locals)
                    || !own_row
                    || !plain
                    || !scope.is_vector(target)
                    || stored.iter().any(|(a, _)| a == array)
                {
                    return None;
                }
                stored.push((array, target));
            }
            _ => return None,
        }
    }
    if !in_updates {
        return None;
    }
    // A stored array is read only at the stored element (by the lane and row that store it).
    for s in body {
        for e in s.exprs() {
            for (array, at) in &stored {
                if e.any(&mut |x| {
                    matches!(&x.kind, ExprKind::Subscript { array: a, .. } if a == array)
                        && !same_place(x, at)
                }) {
                    return None;
                }
            }
        }
    }
    Some(body.to_vec())
}

/// How often each name is read in `stmts` (a name assigned is not read; loop bounds are).
fn name_reads(stmts: &[Stmt]) -> HashMap<String, usize> {
    let mut out: HashMap<String, usize> = HashMap::new();
    for s in stmts {
        s.walk(&mut |st| {
            for e in st.exprs() {
                if matches!(&st.kind, StmtKind::Assign { target, .. } if std::ptr::eq(e, target))
                    && matches!(e.kind, ExprKind::Name(_))
                {
                    continue;
                }
                e.walk(&mut |x| {
                    if let ExprKind::Name(n) = &x.kind {
                        *out.entry(n.clone()).or_default() += 1;
                    }
                });
            }
        });
    }
    out
}

/// Names read (outside `for` headers that bind them) where no enclosing loop binds them.
fn read_outside_their_loops(body: &[Stmt]) -> HashSet<String> {
    fn visit(stmts: &[Stmt], bound: &mut Vec<String>, out: &mut HashSet<String>) {
        for s in stmts {
            for e in s.exprs() {
                e.walk(&mut |x| {
                    if let ExprKind::Name(n) = &x.kind {
                        if !bound.contains(n) {
                            out.insert(n.clone());
                        }
                    }
                });
            }
            match &s.kind {
                StmtKind::For { var, body, .. } => {
                    bound.push(var.clone());
                    visit(body, bound, out);
                    bound.pop();
                }
                StmtKind::If { body, orelse, .. } => {
                    visit(body, bound, out);
                    visit(orelse, bound, out);
                }
                _ => {}
            }
        }
    }
    let mut out = HashSet::new();
    visit(body, &mut vec![], &mut out);
    out
}

/// `appy.vidx(start, width, bound)` written by the user, in the expressions of `s` itself (not
/// its body), as the IR's vector index.
fn user_vidx_in(s: &mut Stmt) -> Result<()> {
    for e in match &mut s.kind {
        StmtKind::Assign { target, value, .. } => vec![target, value],
        StmtKind::If { test, .. } => vec![test],
        _ => vec![],
    } {
        *e = user_vidx(e.clone())?;
    }
    Ok(())
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
    use crate::passes::attach_pragmas::tests::attached;

    /// The kernel of `src` after strip-mining (with `parallel for` vectorised as the driver
    /// does), and its row tiles: (loop variable, rows, update values printed).
    fn row_tiles(src: &str) -> Vec<(String, Vec<String>)> {
        let f = attached(src).unwrap();
        let mut k = crate::passes::outline::run(&f).unwrap().remove(0);
        crate::passes::vectorize_parallel::run(&mut k);
        run(&mut k).unwrap();
        let mut out = vec![];
        for s in &k.body {
            s.walk(&mut |st| {
                if let StmtKind::For {
                    kind:
                        LoopKind::StripMined {
                            width: Width::Fixed(TILE_ROWS),
                            tile: Some(0),
                        },
                    vector: Some(v),
                    body,
                    ..
                } = &st.kind
                {
                    let values = body
                        .iter()
                        .map(|b| match &b.kind {
                            StmtKind::Assign { value, .. } => crate::ir::python::expr(value),
                            _ => panic!("a row tile holds only updates"),
                        })
                        .collect();
                    out.push((v.clone(), values));
                }
            });
        }
        out
    }

    const HEAD: &str =
        "def f(A, y, x, P, lo, M, N):\n    #pragma parallel for simd\n    for j in range(N):\n";

    #[test]
    fn a_column_walk_of_sums_in_lanes_is_a_row_tile() {
        let t = row_tiles(&format!("{HEAD}        s = 0.0\n        for i in range(M):\n            s += y[i] * A[i, j]\n        x[j] = s\n"));
        assert_eq!(
            t,
            vec![(
                "i".to_string(),
                vec!["s + sum(y[i] * A[i, j], axis=0)".to_string()]
            )]
        );
        // Several accumulators, `-=`, max and min, a start: one tile.
        let t = row_tiles(&format!("{HEAD}        s = 0.0\n        m = A[0, j]\n        for i in range(lo, M):\n            s -= A[i, j]\n            m = max(m, A[i, j])\n        x[j] = s + m\n"));
        assert_eq!(t.len(), 1);
        assert_eq!(
            t[0].1,
            vec!["s - sum(A[i, j], axis=0)", "max(m, max(A[i, j], axis=0))"]
        );
        // A `parallel for` vectorised into lanes, and a `simd` loop's lanes.
        let t = row_tiles("def f(A, r, M, N):\n    #pragma parallel for\n    for i in range(M):\n        s = 0.0\n        for k in range(N):\n            s += A[i, k]\n        r[i] = s\n");
        assert_eq!(t.len(), 1);
        let t = row_tiles("def f(A, C, M, N):\n    #pragma parallel for\n    for i in range(N):\n        #pragma simd\n        for j in range(N):\n            s = 0.0\n            for k in range(M):\n                s += A[k, i] * A[k, j]\n            C[i, j] = s\n");
        assert_eq!(t.len(), 1);
    }

    #[test]
    fn locals_and_stores_of_each_row_s_own_elements_ride_in_the_row_tile() {
        // gemver's update fused into `A^T y`: the element computed, stored, then reduced.
        let t = row_tiles(&format!("{HEAD}        s = 0.0\n        for i in range(M):\n            a = A[i, j] + y[i] * x[j]\n            A[i, j] = a\n            s += y[i] * a\n        x[j] = s\n"));
        assert_eq!(
            t,
            vec![(
                "i".to_string(),
                vec![
                    "A[i, j] + y[i] * x[j]".to_string(),
                    "a".to_string(),
                    "s + sum(y[i] * a, axis=0)".to_string()
                ]
            )]
        );
        // A store's own read-modify-write, and locals that read earlier locals.
        let t = row_tiles(&format!("{HEAD}        s = 0.0\n        for i in range(M):\n            P[i, j] = P[i, j] * 2.0\n            u = A[i, j]\n            v = u * u\n            s += v\n        x[j] = s\n"));
        assert_eq!(t.len(), 1);
    }

    #[test]
    fn each_accumulator_of_a_row_tile_gets_one_fresh_partial_accumulator() {
        // `_s_rows` is taken by the user: the fresh name steps past it. The two updates of `s`
        // share one; `m` has its own.
        let f = attached(&format!("{HEAD}        _s_rows = 0\n        s = 0.0\n        m = A[0, j]\n        for i in range(M):\n            s += A[i, j]\n            m = max(m, A[i, j])\n            s -= y[i] * A[i, j]\n        x[j] = s + m + _s_rows\n")).unwrap();
        let mut k = crate::passes::outline::run(&f).unwrap().remove(0);
        run(&mut k).unwrap();
        let mut accs = vec![];
        for s in &k.body {
            s.walk(&mut |st| {
                for e in st.exprs() {
                    e.walk(&mut |x| {
                        if let ExprKind::ReduceRows { acc, .. } = &x.kind {
                            accs.push(acc.clone());
                        }
                    });
                }
            });
        }
        assert_eq!(accs, ["_s_rows1", "_m_rows", "_s_rows1"]);
    }

    /// Each lane reduction of the kernel of `src` after strip-mining: (the update printed, its
    /// lane accumulator).
    fn lane_reductions(src: &str) -> Vec<(String, Option<String>)> {
        let f = attached(src).unwrap();
        let mut k = crate::passes::outline::run(&f).unwrap().remove(0);
        run(&mut k).unwrap();
        let mut out = vec![];
        for s in &k.body {
            s.walk(&mut |st| {
                if let StmtKind::Assign { value, .. } = &st.kind {
                    value.walk(&mut |x| {
                        if let ExprKind::Reduce { lanes, .. } = &x.kind {
                            out.push((crate::ir::python::expr(value), lanes.clone()));
                        }
                    });
                }
            });
        }
        out
    }

    const ROWS: &str = "def f(A, B, r, c, M, N):\n    #pragma parallel for\n    for i in range(M):\n        s = 0.0\n        #pragma simd\n        for j in range(N):\n";

    #[test]
    fn a_strip_loop_s_carried_scalar_touched_only_by_its_updates_reduces_in_lanes() {
        // `+=` and `-=` of one scalar share one lane vector; a max has its own.
        let r = lane_reductions(&format!("{ROWS}            B[i, j] = A[i, j] * 2.0\n            s += A[i, j]\n            m = max(m, A[i, j])\n            s -= B[i, j]\n        r[i] = s + m\n").replace("        s = 0.0\n", "        s = 0.0\n        m = A[i, 0]\n"));
        let lanes: Vec<_> = r.iter().map(|(_, l)| l.as_deref()).collect();
        assert_eq!(
            lanes,
            [Some("_s_lanes"), Some("_m_lanes"), Some("_s_lanes")],
            "{r:?}"
        );
    }

    #[test]
    fn a_scalar_the_strip_loop_reads_or_updates_otherwise_reduces_each_strip() {
        for body in [
            // read by another statement of the loop: it must see every strip's sum so far
            "            s += A[i, j]\n            B[i, j] = A[i, j] + s\n",
            // two operators on one scalar
            "            s += A[i, j]\n            s = max(s, A[i, j])\n",
            // an update under an `if`: not at the loop's top level
            "            if c > 0:\n                s += A[i, j]\n",
        ] {
            let r = lane_reductions(&format!("{ROWS}{body}        r[i] = s\n"));
            assert!(
                !r.is_empty() && r.iter().all(|(_, l)| l.is_none()),
                "{body}: {r:?}"
            );
        }
    }

    #[test]
    fn other_loops_keep_today_s_lowering() {
        for body in [
            // A store in the body.
            "        s = 0.0\n        for i in range(M):\n            s += A[i, j]\n            P[i, j] = s\n",
            // The update reads its accumulator besides adding to it.
            "        s = 0.0\n        for i in range(M):\n            s = s + s * A[i, j]\n",
            // One accumulator read by another's update.
            "        s = 0.0\n        t = 0.0\n        for i in range(M):\n            s += A[i, j]\n            t += s * A[i, j]\n",
            // A local read after the loop (it would hold the last row's value).
            "        s = 0.0\n        for i in range(M):\n            u = A[i, j]\n            s += u\n        x[j] = u\n",
            // A local read before it is assigned (the previous row's value).
            "        s = 0.0\n        u = 0.0\n        for i in range(M):\n            s += u\n            u = A[i, j]\n",
            // A store of an element the next row would read.
            "        s = 0.0\n        for i in range(1, M):\n            P[i, j] = A[i, j]\n            s += P[i - 1, j]\n",
            // A store without the row among its indices: every row writes it.
            "        s = 0.0\n        for i in range(M):\n            P[0, j] = A[i, j]\n            s += A[i, j]\n",
            // A store after an update.
            "        s = 0.0\n        for i in range(M):\n            s += A[i, j]\n            P[i, j] = A[i, j]\n",
            // A product is no sum.
            "        s = 1.0\n        for i in range(M):\n            s = s * A[i, j]\n",
            // Not a vector of the lanes: a scalar sum per program.
            "        s = 0.0\n        for i in range(M):\n            s += y[i]\n        x[j] = s\n",
            // A step other than 1.
            "        s = 0.0\n        for i in range(0, M, 2):\n            s += A[i, j]\n",
            // The loop variable read after the loop.
            "        s = 0.0\n        for i in range(M):\n            s += A[i, j]\n        x[j] = s + i\n",
            // One accumulator both added to and maxed: the order of the rows matters.
            "        s = 0.0\n        for i in range(M):\n            s += A[i, j]\n            s = max(s, y[i] * A[i, j])\n",
        ] {
            assert!(row_tiles(&format!("{HEAD}{body}        x[j] = s\n")).is_empty(), "{body}");
        }
        // Outside lanes: a scalar program's loop.
        let src = "def f(A, x, M, N):\n    #pragma parallel for\n    for j in range(N):\n        s = 0.0\n        for i in range(M):\n            s += A[i, j]\n        if s > 0:\n            x[j] = s\n";
        assert!(row_tiles(src).is_empty());
        // An accumulator defined before the enclosing `simd` loop reduces to a scalar there.
        let src = "def f(A, x, M, N):\n    #pragma parallel for\n    for r in range(N):\n        s = 0.0\n        #pragma simd\n        for j in range(N):\n            for i in range(M):\n                s += A[i, j]\n        x[r] = s\n";
        assert!(row_tiles(src).is_empty());
    }

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
