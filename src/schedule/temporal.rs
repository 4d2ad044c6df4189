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

use crate::ir::python;
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
    stencil_expr(e, &|n| n == var || !bound.contains(n), &mut |a, indices| {
        offset(indices, var).map(|c| read(a, c)).is_some()
    })
}

/// The shape both stencil analyses accept: numbers, names `name_ok` allows, elements
/// `element(array, indices)` accepts, `+ - *`, `/` with a float side, unary minus.
fn stencil_expr(
    e: &Expr,
    name_ok: &dyn Fn(&str) -> bool,
    element: &mut dyn FnMut(&str, &[Index]) -> bool,
) -> bool {
    let floating = |x: &Expr| {
        x.any(&mut |y| matches!(y.kind, ExprKind::Float(_) | ExprKind::Subscript { .. }))
    };
    match &e.kind {
        ExprKind::Int(_) | ExprKind::Float(_) => true,
        ExprKind::Name(n) => name_ok(n),
        ExprKind::Subscript { array, indices } => element(array, indices),
        ExprKind::Unary {
            op: UnaryOp::Neg,
            operand,
        } => stencil_expr(operand, name_ok, element),
        ExprKind::Binary { op, left, right } => {
            let op_ok = match op {
                BinOp::Add | BinOp::Sub | BinOp::Mul => true,
                // Triton divides integers in fp32, NumPy in fp64: a float side decides.
                BinOp::Div => floating(left) || floating(right),
                _ => false,
            };
            op_ok && stencil_expr(left, name_ok, element) && stencil_expr(right, name_ok, element)
        }
        _ => false,
    }
}

/// A temporally blockable 2-D loop (`codegen::triton::gluon2d`): two arrays the phases
/// alternate between, each phase one stencil over a rectangle of `(i, j)`.
///
/// The blocked kernel keeps one array's tile in one buffer and overwrites it phase after phase
/// (the Gluon probe's single-buffer scheme, bench/temporal2d_gluon_probe.md), so what it needs
/// is exactly: an even number of phases, phase `k` writing `X_k` and reading only `X_{k-1}`
/// (cyclically: phase 0 reads what the last phase writes), `X_k != X_{k-1}`. The points of
/// `X_k` outside its rectangle are then never written, and every phase writing `X_k` must have
/// the same rectangle, so the kernel can take them from global memory, where they never change.
#[derive(Debug, Clone, PartialEq)]
pub struct Stencil2d {
    pub phases: Vec<Phase2d>,
    /// Whether some element is read at a diagonal offset (`Y[i + a, j + b]`, `a, b != 0`):
    /// the tile's windows then reach one element past its guard rows (a second guard row).
    pub diagonal: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Phase2d {
    pub target: String,
    /// The one array the value reads (the previous phase's target); `None` when it reads none.
    pub source: Option<String>,
    /// The value; its index variables are `rows` and `cols`.
    pub value: Expr,
    pub rows: (String, Expr, Expr),
    pub cols: (String, Expr, Expr),
    /// 1 when the value reads away from `(i, j)`, else 0: how far the tile's valid part shrinks.
    pub radius: i64,
}

impl Stencil2d {
    /// The two arrays: the one phase 0 reads (the state, which the kernel loads) first.
    pub fn arrays(&self) -> (&str, &str) {
        let n = self.phases.len();
        (&self.phases[n - 1].target, &self.phases[0].target)
    }

    /// How far one iteration's phases read, together: the halo of one step.
    pub fn reach(&self) -> i64 {
        self.phases.iter().map(|p| p.radius).sum()
    }
}

/// The 2-D stencil of a persistent loop over `var` whose phases are `regions`, or why not (the
/// first region that fails and how).
pub fn stencil_2d(var: &str, regions: &[&Kernel]) -> Result<Stencil2d, String> {
    let mut bound: HashSet<String> = HashSet::from([var.to_string()]);
    for k in regions {
        bound.extend(k.bound_names());
    }
    let host_value = |e: &Expr| {
        !e.any(&mut |x| match &x.kind {
            ExprKind::Name(n) => bound.contains(n),
            ExprKind::Shape { dim, .. } => *dim > 1,
            ExprKind::Int(_) => false,
            ExprKind::Binary { op, .. } => !matches!(op, BinOp::Add | BinOp::Sub | BinOp::Mul),
            _ => true,
        })
    };
    let mut phases: Vec<Phase2d> = vec![];
    let mut diagonal = false;
    for (n, k) in regions.iter().enumerate() {
        let why = |s: &str| format!("phase {n} ({}): {s}", k.name);
        let plain = k.checks.is_empty()
            && k.temps.is_empty()
            && k.tiles.is_none()
            && k.shared.is_empty()
            && k.comm.is_none()
            && k.absorbed.is_empty();
        if !plain {
            return Err(why("launch checks, temporaries, tiles or shared scalars"));
        }
        let ([r, c], [stmt]) = (k.dims.as_slice(), k.body.as_slice()) else {
            return Err(why("not two grid dimensions around one statement"));
        };
        let dims_ok = [r, c].iter().all(|d| {
            matches!(d.range.step.kind, ExprKind::Int(1))
                && host_value(&d.range.start)
                && host_value(&d.range.stop)
        });
        if !dims_ok {
            return Err(why("a bound the loop changes, or a step other than 1"));
        }
        let StmtKind::Assign {
            target,
            value,
            atomic: false,
        } = &stmt.kind
        else {
            return Err(why("not one assignment"));
        };
        let vars = (r.var.as_str(), c.var.as_str());
        let written = match &target.kind {
            ExprKind::Subscript { array, indices } if offset_2d(indices, vars) == Some((0, 0)) => {
                array
            }
            _ => return Err(why("the target is not `X[i, j]`")),
        };
        let mut sources: Vec<String> = vec![];
        let mut radius = 0;
        let mut far = false;
        let ok = stencil_value_2d(value, vars, &bound, &mut |a, (di, dj)| {
            far |= di.abs() > 1 || dj.abs() > 1;
            diagonal |= di != 0 && dj != 0;
            radius = radius.max(di.abs()).max(dj.abs());
            if !sources.iter().any(|s| s == a) {
                sources.push(a.to_string());
            }
        });
        if !ok {
            return Err(why(
                "a value other than `Y[i + a, j + b]`, host scalars, numbers, + - * /",
            ));
        }
        if far {
            return Err(why("an offset past 1"));
        }
        if sources.len() > 1 {
            return Err(why("it reads two arrays"));
        }
        let dim = |d: &ParallelDim| (d.var.clone(), d.range.start.clone(), d.range.stop.clone());
        phases.push(Phase2d {
            target: written.clone(),
            source: sources.pop(),
            value: value.clone(),
            rows: dim(r),
            cols: dim(c),
            radius: radius.min(1),
        });
    }
    alternation(&phases)?;
    Ok(Stencil2d { phases, diagonal })
}

/// The single-buffer condition (see `Stencil2d`): an even number of phases, each reading only
/// the previous one's target, never its own, over one rectangle per array.
fn alternation(phases: &[Phase2d]) -> Result<(), String> {
    let n = phases.len();
    if n == 0 || n % 2 == 1 {
        return Err(format!("{n} phases: the two arrays must alternate"));
    }
    for (k, p) in phases.iter().enumerate() {
        let before = &phases[(k + n - 1) % n];
        if p.target == before.target {
            return Err(format!("phase {k} writes what the phase before it wrote"));
        }
        if p.source.as_ref().is_some_and(|s| *s != before.target) {
            return Err(format!(
                "phase {k} reads an array the phase before it did not write"
            ));
        }
        let other = &phases[(k + 2) % n];
        // As text: spans differ between phases.
        let same_box = |a: &(String, Expr, Expr), b: &(String, Expr, Expr)| {
            (python::expr(&a.1), python::expr(&a.2)) == (python::expr(&b.1), python::expr(&b.2))
        };
        if other.target != p.target
            || !same_box(&p.rows, &other.rows)
            || !same_box(&p.cols, &other.cols)
        {
            return Err(format!(
                "phase {k}'s array is written over another rectangle"
            ));
        }
    }
    Ok(())
}

/// `(a, b)` when `indices` are `i + a, j + b` (`vars` = `(i, j)`).
fn offset_2d(indices: &[Index], vars: (&str, &str)) -> Option<(i64, i64)> {
    let [i, j] = indices else {
        return None;
    };
    Some((
        offset(std::slice::from_ref(i), vars.0)?,
        offset(std::slice::from_ref(j), vars.1)?,
    ))
}

/// Whether `e` is a 2-D stencil value over `vars` (`i`, `j` themselves excluded: the kernel
/// computes no global index per element); `read(array, offsets)` for each element it reads.
fn stencil_value_2d(
    e: &Expr,
    vars: (&str, &str),
    bound: &HashSet<String>,
    read: &mut dyn FnMut(&str, (i64, i64)),
) -> bool {
    stencil_expr(e, &|n| !bound.contains(n), &mut |a, indices| {
        offset_2d(indices, vars).map(|c| read(a, c)).is_some()
    })
}
