//! Contract: decides whether a persistent loop is a 1-D stencil that may run temporally blocked
//! (`codegen::blocked`): every phase writes one array at the element its index names, from
//! arrays read at that index plus a constant, over loop-invariant bounds. It changes nothing;
//! the launcher still checks the arrays at run time (one length, 1-D, contiguous, floating)
//! and falls back to the plain persistent kernel otherwise.
//!
//! Why: a phase of such a loop is a grid barrier's round trip (1.2 us on the H100), so
//! jacobi_1d's 8000 phases are barrier-bound. Blocked, each program keeps its chunk plus a halo
//! of `radius x phases` in a scratch of its own, runs `G` steps there with block barriers only
//! and writes its chunk back: two grid barriers every `G` steps (bench/gaps_h100.log,
//! temporal: 0.39-0.73 us a phase).
//!
//! Every phase (region) must have:
//! - one grid dimension `i` over `range(lo, hi, 1)`, `lo` and `hi` host values (names the
//!   regions never bind, integers, shapes), not the loop variable;
//! - a body of one plain assignment `X[i] = e`, and no launch checks, temporaries, tiles,
//!   shared scalars or communication;
//! - `e` made of `Y[i + c]` (`c` an integer), `i` itself, host scalars, numbers, `+ - *`, `/`
//!   where a side holds an array element or a float, and unary minus.

use crate::ir::*;
use std::collections::HashSet;

/// A temporally blockable loop: its phases in order and how far a phase reads.
#[derive(Debug, Clone, PartialEq)]
pub struct Stencil {
    pub phases: Vec<StencilPhase>,
    /// The largest `|c|` of any `Y[i + c]`.
    pub radius: i64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct StencilPhase {
    pub target: String,
    /// The value, its index variable spelled `index`.
    pub value: Expr,
    pub index: String,
    pub lo: Expr,
    pub hi: Expr,
    /// The value reads the target away from the written element: all its loads must finish
    /// before any store.
    pub reads_target: bool,
}

/// The stencil of a persistent loop over `var` whose phases are `regions`, or `None`.
pub fn stencil(var: &str, regions: &[&Kernel]) -> Option<Stencil> {
    let mut bound: HashSet<String> = HashSet::from([var.to_string()]);
    for k in regions {
        bound.extend(k.bound_names());
    }
    let host_value = |e: &Expr| {
        !e.any(&mut |x| match &x.kind {
            ExprKind::Name(n) => bound.contains(n),
            ExprKind::Shape { dim, .. } => *dim != 0,
            ExprKind::Int(_) => false,
            ExprKind::Binary { op, .. } => !matches!(op, BinOp::Add | BinOp::Sub | BinOp::Mul),
            _ => true,
        })
    };
    let mut phases = vec![];
    let mut radius = 0;
    for k in regions {
        let plain = k.checks.is_empty()
            && k.temps.is_empty()
            && k.tiles.is_none()
            && k.shared.is_empty()
            && k.comm.is_none()
            && k.absorbed.is_empty();
        let ([d], [stmt]) = (k.dims.as_slice(), k.body.as_slice()) else {
            return None;
        };
        let StmtKind::Assign {
            target,
            value,
            atomic: false,
        } = &stmt.kind
        else {
            return None;
        };
        let unit_step = matches!(d.range.step.kind, ExprKind::Int(1));
        if !plain || !unit_step || !host_value(&d.range.start) || !host_value(&d.range.stop) {
            return None;
        }
        let ExprKind::Subscript { array, indices } = &target.kind else {
            return None;
        };
        if offset(indices, &d.var) != Some(0) {
            return None;
        }
        let mut reads_target = false;
        if !stencil_value(value, &d.var, &bound, &mut |a, c| {
            radius = radius.max(c.abs());
            reads_target |= a == array && c != 0;
        }) {
            return None;
        }
        phases.push(StencilPhase {
            target: array.clone(),
            value: value.clone(),
            index: d.var.clone(),
            lo: d.range.start.clone(),
            hi: d.range.stop.clone(),
            reads_target,
        });
    }
    Some(Stencil { phases, radius })
}

/// `c` when `indices` is one index `var + c` / `var - c` / `var`.
fn offset(indices: &[Index], var: &str) -> Option<i64> {
    let [Index::At(e)] = indices else {
        return None;
    };
    let is_var = |x: &Expr| matches!(&x.kind, ExprKind::Name(n) if n == var);
    match &e.kind {
        _ if is_var(e) => Some(0),
        ExprKind::Binary { op, left, right } if is_var(left) => match (op, &right.kind) {
            (BinOp::Add, ExprKind::Int(c)) => Some(*c),
            (BinOp::Sub, ExprKind::Int(c)) => Some(-*c),
            _ => None,
        },
        _ => None,
    }
}

/// Whether `e` is a stencil value over `var` (see the module's list); `read(array, c)` for
/// each element it reads.
fn stencil_value(
    e: &Expr,
    var: &str,
    bound: &HashSet<String>,
    read: &mut dyn FnMut(&str, i64),
) -> bool {
    let floating = |x: &Expr| {
        x.any(&mut |y| matches!(y.kind, ExprKind::Float(_) | ExprKind::Subscript { .. }))
    };
    match &e.kind {
        ExprKind::Int(_) | ExprKind::Float(_) => true,
        ExprKind::Name(n) => n == var || !bound.contains(n),
        ExprKind::Subscript { array, indices } => match offset(indices, var) {
            Some(c) => {
                read(array, c);
                true
            }
            None => false,
        },
        ExprKind::Unary {
            op: UnaryOp::Neg,
            operand,
        } => stencil_value(operand, var, bound, read),
        ExprKind::Binary { op, left, right } => {
            let op_ok = match op {
                BinOp::Add | BinOp::Sub | BinOp::Mul => true,
                // Triton divides integers in fp32, NumPy in fp64: a float side decides.
                BinOp::Div => floating(left) || floating(right),
                _ => false,
            };
            op_ok && stencil_value(left, var, bound, read) && stencil_value(right, var, bound, read)
        }
        _ => false,
    }
}
