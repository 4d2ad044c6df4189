//! Contract: decides whether a persistent loop is a 1-D, 2-D or 3-D stencil that may run
//! temporally blocked (`codegen::blocked`, `gluon2d`, `gluon3d`): every phase writes one array
//! at the element its indices name, from arrays read at those indices plus constants, over
//! loop-invariant bounds (the 2-D and 3-D forms: two alternating arrays, `Stencil2d`,
//! `Stencil3d`). It changes nothing; the launcher still checks the arrays at run time (shape,
//! contiguous, floating) and falls back to the plain persistent kernel otherwise.
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

use super::bindings::Bindings;
use super::host_steps::{HostSteps, StepKind};
use crate::ir::python;
use crate::ir::*;
use crate::passes::affine::Affine;
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
        let plain = is_plain(k);
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
        if offset(indices, &d.var) != Some(0) || bound.contains(array) {
            return None;
        }
        let mut reads_target = false;
        let mut reads_bound = false;
        if !stencil_value(value, &d.var, &bound, &mut |a, c| {
            radius = radius.max(c.abs());
            reads_target |= a == array && c != 0;
            reads_bound |= bound.contains(a);
        }) || reads_bound
        {
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
pub fn offset(indices: &[Index], var: &str) -> Option<i64> {
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
    /// The loop steps one stencil and swaps its arrays (`A, B = B, A`): `phases` are two of
    /// its iterations, spelled with the arrays the names hold (`stencil_2d_swapped`).
    pub swapped: bool,
    /// Phases of the loop (indices into its regions) that copy the stencil's source into its
    /// target outside the written rectangle (`B[0, :] = A[0, :]`): the launcher runs them once
    /// before the blocked kernel, since every later iteration copies what is already there.
    pub peeled: Vec<usize>,
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
    let (phases, diagonal) = alternating(var, regions, &phase_2d)?;
    Ok(Stencil2d {
        phases,
        diagonal,
        swapped: false,
        peeled: vec![],
    })
}

/// The loop variable and every name a region binds: what a host value must not mention.
fn bound_names(var: &str, regions: &[&Kernel]) -> HashSet<String> {
    let mut bound: HashSet<String> = HashSet::from([var.to_string()]);
    for k in regions {
        bound.extend(k.bound_names());
    }
    bound
}

/// Whether `e` is a value the host computes once: no bound name, no shape past the region's
/// `dims` dimensions, integer `+ - *` only.
fn host_value(e: &Expr, bound: &HashSet<String>, dims: usize) -> bool {
    !e.any(&mut |x| match &x.kind {
        ExprKind::Name(n) => bound.contains(n),
        ExprKind::Shape { dim, .. } => *dim >= dims,
        ExprKind::Int(_) => false,
        ExprKind::Binary { op, .. } => !matches!(op, BinOp::Add | BinOp::Sub | BinOp::Mul),
        _ => true,
    })
}

/// A region with nothing but its grid and body: no launch checks, temporaries, tiles, shared
/// scalars, communication or absorbed statements, which a blocked kernel would have to carry.
fn is_plain(k: &Kernel) -> bool {
    k.checks.is_empty()
        && k.temps.is_empty()
        && k.tiles.is_none()
        && k.shared.is_empty()
        && k.comm.is_none()
        && k.absorbed.is_empty()
}

/// One region as a 2-D stencil phase (and whether it reads diagonally), or why not.
fn phase_2d(k: &Kernel, bound: &HashSet<String>) -> Result<(Phase2d, bool), String> {
    let plain = is_plain(k);
    if !plain {
        return Err("launch checks, temporaries, tiles or shared scalars".into());
    }
    let ([r, c], [stmt]) = (k.dims.as_slice(), k.body.as_slice()) else {
        return Err("not two grid dimensions around one statement".into());
    };
    let dims_ok = [r, c].iter().all(|d| {
        matches!(d.range.step.kind, ExprKind::Int(1))
            && host_value(&d.range.start, bound, 2)
            && host_value(&d.range.stop, bound, 2)
    });
    if !dims_ok {
        return Err("a bound the loop changes, or a step other than 1".into());
    }
    let StmtKind::Assign {
        target,
        value,
        atomic: false,
    } = &stmt.kind
    else {
        return Err("not one assignment".into());
    };
    let vars = (r.var.as_str(), c.var.as_str());
    let written = match &target.kind {
        ExprKind::Subscript { array, indices } if offset_2d(indices, vars) == Some((0, 0)) => array,
        _ => return Err("the target is not `X[i, j]`".into()),
    };
    let mut sources: Vec<String> = vec![];
    let (mut radius, mut far, mut diagonal) = (0, false, false);
    let ok = stencil_value_2d(value, vars, bound, &mut |a, (di, dj)| {
        far |= di.abs() > 1 || dj.abs() > 1;
        diagonal |= di != 0 && dj != 0;
        radius = radius.max(di.abs()).max(dj.abs());
        if !sources.iter().any(|s| s == a) {
            sources.push(a.to_string());
        }
    });
    if !ok {
        return Err("a value other than `Y[i + a, j + b]`, host scalars, numbers, + - * /".into());
    }
    if far {
        return Err("an offset past 1".into());
    }
    if sources.len() > 1 {
        return Err("it reads two arrays".into());
    }
    if sources.iter().chain([written]).any(|a| bound.contains(a)) {
        return Err("an array's name is bound in the loop".into());
    }
    let dim = |d: &ParallelDim| (d.var.clone(), d.range.start.clone(), d.range.stop.clone());
    let phase = Phase2d {
        target: written.clone(),
        source: sources.pop(),
        value: value.clone(),
        rows: dim(r),
        cols: dim(c),
        radius: radius.min(1),
    };
    Ok((phase, diagonal))
}

/// The 2-D stencil of a persistent loop that steps one stencil phase and swaps its two arrays
/// (`A, B = B, A`), or why not: two iterations of it, spelled with the arrays the names hold,
/// are the alternating pair `stencil_2d` takes (`B <- A`, then `A <- B`), so the same blocked
/// kernels run it, `steps` being pairs of iterations (the launcher runs an odd last one on the
/// plain kernel). Its other phases may only copy the stencil's source into its target outside
/// the written rectangle (`B[0, :] = A[0, :]`, the boundary a smoothing keeps): the first
/// iteration makes the two arrays agree there and nothing writes there again, so later copies
/// change nothing, and the launcher runs them once before the blocked kernel (`peeled`).
pub fn stencil_2d_swapped(
    var: &str,
    regions: &[&Kernel],
    steps: &HostSteps,
) -> Result<Stencil2d, String> {
    let (phases, diagonal, peeled) = swapped(var, regions, steps, 2, &phase_2d)?;
    Ok(Stencil2d {
        phases,
        diagonal,
        swapped: true,
        peeled,
    })
}

/// `stencil_2d_swapped`'s 3-D twin: a loop of one 3-D stencil and a swap of its arrays, as two
/// alternating phases (`Stencil3d`), its boundary copies peeled.
pub fn stencil_3d_swapped(
    var: &str,
    regions: &[&Kernel],
    steps: &HostSteps,
) -> Result<Stencil3d, String> {
    let (phases, diagonal, peeled) = swapped(var, regions, steps, 3, &phase_3d)?;
    Ok(Stencil3d {
        phases,
        diagonal,
        swapped: true,
        peeled,
    })
}

/// What a phase analysis gives: the phase and whether it reads diagonally, or why not.
type PhaseOf<'a, P> = &'a dyn Fn(&Kernel, &HashSet<String>) -> Result<(P, bool), String>;

/// Every region as a phase (`phase_of`), under the single-buffer condition (`alternation`),
/// and whether some phase reads diagonally; or why not (the first region that fails and how).
fn alternating<P: Alternating>(
    var: &str,
    regions: &[&Kernel],
    phase_of: PhaseOf<P>,
) -> Result<(Vec<P>, bool), String> {
    let bound = bound_names(var, regions);
    let mut phases: Vec<P> = vec![];
    let mut diagonal = false;
    for (n, k) in regions.iter().enumerate() {
        let (phase, diag) =
            phase_of(k, &bound).map_err(|s| format!("phase {n} ({}): {s}", k.name))?;
        diagonal |= diag;
        phases.push(phase);
    }
    alternation(&phases)?;
    Ok((phases, diagonal))
}

/// The swapped form over `dims`-dimensional stencils (see `stencil_2d_swapped`): two
/// iterations' phases, whether they read diagonally, the peeled copies.
fn swapped<P: Alternating>(
    var: &str,
    regions: &[&Kernel],
    steps: &HostSteps,
    dims: usize,
    phase_of: PhaseOf<P>,
) -> Result<(Vec<P>, bool, Vec<usize>), String> {
    let n = regions.len();
    let rebinds_only = steps.carried.is_empty()
        && steps.inputs.is_empty()
        && steps
            .steps
            .iter()
            .all(|s| s.kind == StepKind::Rebind && s.before == n);
    if !rebinds_only {
        return Err("host steps other than one swap of arrays at the end of the body".into());
    }
    let Some(held) = Bindings::of(steps, n) else {
        return Err("the names do not swap two arrays every iteration".into());
    };
    let stencils: Vec<usize> = (0..n).filter(|&r| regions[r].dims.len() == dims).collect();
    let [at] = stencils.as_slice() else {
        return Err(format!(
            "{} {dims}-dimensional phases: one stencil expected",
            stencils.len()
        ));
    };
    let bound = bound_names(var, regions);
    let (phase, diagonal) = phase_of(regions[*at], &bound)
        .map_err(|s| format!("phase {at} ({}): {s}", regions[*at].name))?;
    let Some(source) = phase
        .source()
        .filter(|s| *s != phase.target())
        .map(String::from)
    else {
        return Err("the stencil reads no other array".into());
    };
    let target = phase.target().to_string();
    // The arrays the stencil's names hold in each iteration state (states differ also in the
    // swap's temporaries, which the stencil does not read).
    let arrays = |k: usize| -> Option<(String, String)> {
        let at_phase = &held.phases[k][*at];
        Some((
            at_phase.get(&target)?.clone(),
            at_phase.get(&source)?.clone(),
        ))
    };
    let Some((x, y)) = arrays(0) else {
        return Err("the stencil's arrays are not the swapped names".into());
    };
    let swaps = (0..held.phases.len()).all(|k| {
        let (now, next) = (arrays(k), arrays(held.next[k]));
        matches!((now, next), (Some((a, b)), Some((c, d))) if a == d && b == c && a != b)
    });
    if !swaps {
        return Err("the swap does not exchange the stencil's two arrays every iteration".into());
    }
    let phases = vec![
        phase.spelled(&x, &y, &source),
        phase.spelled(&y, &x, &source),
    ];
    alternation(&phases)?;
    let mut peeled = vec![];
    for (r, k) in regions.iter().enumerate() {
        if r == *at {
            continue;
        }
        if !boundary_copy(k, &phase.extents(), &target, &source) {
            return Err(format!(
                "phase {r} ({}): not a copy of `{source}` into `{target}` outside the stencil's box",
                k.name
            ));
        }
        peeled.push(r);
    }
    Ok((phases, diagonal, peeled))
}

/// `e` with the arrays `from` read as `to`.
fn renamed(e: &Expr, pairs: &[(&str, &str)]) -> Expr {
    e.clone().rewrite(&mut |x| match x.kind {
        ExprKind::Subscript { array, indices } => {
            let array = pairs
                .iter()
                .find(|(from, _)| *from == array)
                .map_or(array, |(_, to)| to.to_string());
            Expr::new(ExprKind::Subscript { array, indices }, x.span)
        }
        kind => Expr::new(kind, x.span),
    })
}

/// Whether region `k` is `target[ix] = source[ix]` (the same indices), the stencil's arrays,
/// at points the stencil never writes: some index a fixed position outside the rectangle's
/// range of that dimension. A position below the range must be a non-negative constant (a
/// negative one counts from the end, into the range perhaps); one at or past its end is past
/// a non-negative constant start, so never negative while the range holds any row.
fn boundary_copy(
    k: &Kernel,
    extents: &[&(String, Expr, Expr)],
    target_array: &str,
    source: &str,
) -> bool {
    let simple = k.temps.is_empty()
        && k.tiles.is_none()
        && k.shared.is_empty()
        && k.comm.is_none()
        && k.absorbed.is_empty()
        && k.dims
            .iter()
            .all(|d| matches!(d.range.step.kind, ExprKind::Int(1)));
    let [stmt] = k.body.as_slice() else {
        return false;
    };
    let StmtKind::Assign {
        target,
        value,
        atomic: false,
    } = &stmt.kind
    else {
        return false;
    };
    let (
        ExprKind::Subscript { array: to, indices },
        ExprKind::Subscript {
            array: from,
            indices: read,
        },
    ) = (&target.kind, &value.kind)
    else {
        return false;
    };
    let same_place = indices.len() == extents.len()
        && read.len() == extents.len()
        && indices.iter().zip(read).all(|(a, b)| match (a, b) {
            (Index::At(a), Index::At(b)) => python::expr(a) == python::expr(b),
            _ => false,
        });
    let lanes: Vec<&str> = k.dims.iter().map(|d| d.var.as_str()).collect();
    let constant = |e: &Expr| {
        let a = Affine::of(e);
        a.terms().values().all(|c| *c == 0).then(|| a.constant())
    };
    let outside = |ix: &Index, (_, lo, hi): &(String, Expr, Expr)| {
        let Index::At(e) = ix else {
            return false;
        };
        if lanes.iter().any(|v| e.mentions(v)) {
            return false;
        }
        let below = matches!((constant(e), constant(lo)), (Some(p), Some(l)) if 0 <= p && p < l);
        let past = constant(lo).is_some_and(|l| l >= 0)
            && constant(&Expr::binary(BinOp::Sub, e.clone(), hi.clone())).is_some_and(|d| d >= 0);
        below || past
    };
    simple
        && same_place
        && *to == target_array
        && *from == source
        && indices
            .iter()
            .zip(extents)
            .any(|(ix, ext)| outside(ix, ext))
}

/// What `alternation` reads of a phase, 2-D or 3-D.
trait Alternating: Sized {
    fn target(&self) -> &str;
    fn source(&self) -> Option<&str>;
    /// Each grid dimension: its variable and range.
    fn extents(&self) -> Vec<&(String, Expr, Expr)>;
    /// The phase writing `target` and reading `from` where it read `source`.
    fn spelled(&self, target: &str, from: &str, source: &str) -> Self;
}

impl Alternating for Phase2d {
    fn target(&self) -> &str {
        &self.target
    }
    fn source(&self) -> Option<&str> {
        self.source.as_deref()
    }
    fn extents(&self) -> Vec<&(String, Expr, Expr)> {
        vec![&self.rows, &self.cols]
    }
    fn spelled(&self, target: &str, from: &str, source: &str) -> Self {
        Phase2d {
            target: target.to_string(),
            source: Some(from.to_string()),
            value: renamed(&self.value, &[(source, from)]),
            ..self.clone()
        }
    }
}

impl Alternating for Phase3d {
    fn target(&self) -> &str {
        &self.target
    }
    fn source(&self) -> Option<&str> {
        self.source.as_deref()
    }
    fn extents(&self) -> Vec<&(String, Expr, Expr)> {
        self.dims.iter().collect()
    }
    fn spelled(&self, target: &str, from: &str, source: &str) -> Self {
        Phase3d {
            target: target.to_string(),
            source: Some(from.to_string()),
            value: renamed(&self.value, &[(source, from)]),
            ..self.clone()
        }
    }
}

/// The single-buffer condition (see `Stencil2d`): an even number of phases, each reading only
/// the previous one's target, never its own, over one box per array.
fn alternation<P: Alternating>(phases: &[P]) -> Result<(), String> {
    let n = phases.len();
    if n == 0 || n % 2 == 1 {
        return Err(format!("{n} phases: the two arrays must alternate"));
    }
    for (k, p) in phases.iter().enumerate() {
        let before = &phases[(k + n - 1) % n];
        if p.target() == before.target() {
            return Err(format!("phase {k} writes what the phase before it wrote"));
        }
        if p.source().is_some_and(|s| s != before.target()) {
            return Err(format!(
                "phase {k} reads an array the phase before it did not write"
            ));
        }
        let other = &phases[(k + 2) % n];
        // As text: spans differ between phases.
        let same_box = p.extents().iter().zip(other.extents()).all(|(a, b)| {
            (python::expr(&a.1), python::expr(&a.2)) == (python::expr(&b.1), python::expr(&b.2))
        });
        if other.target() != p.target() || !same_box {
            return Err(format!(
                "phase {k}'s array is written over another rectangle"
            ));
        }
    }
    Ok(())
}

/// A temporally blockable 3-D loop (`codegen::triton::gluon3d`): two arrays the phases
/// alternate between (as `Stencil2d`, which see), each phase one stencil over a box of
/// `(i, j, k)`, streamed along `i` (bench/heat3d_zstream_probe.py, the AN5D-style scheme).
///
/// What the streamed kernel needs beyond the 2-D condition: a phase reads a neighbour plane
/// (`i +- 1`) only at `(j, k)` itself, since it holds the previous phase's planes `i - 1`,
/// `i`, `i + 1` in registers and only plane `i` in shared memory (the `(j, k)` windows); and
/// one iteration is two phases (the kernel carries two levels; deeper groups measured slower
/// at Heat-3D's size).
#[derive(Debug, Clone, PartialEq)]
pub struct Stencil3d {
    pub phases: Vec<Phase3d>,
    /// Whether some element is read at a diagonal `(j, k)` offset: a second guard row.
    pub diagonal: bool,
    /// The loop steps one stencil and swaps its arrays (as `Stencil2d::swapped`).
    pub swapped: bool,
    /// Its boundary copies, run once before the blocked kernel (as `Stencil2d::peeled`).
    pub peeled: Vec<usize>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Phase3d {
    pub target: String,
    /// The one array the value reads (the previous phase's target); `None` when it reads none.
    pub source: Option<String>,
    /// The value; its index variables are the dims' (planes, rows, columns).
    pub value: Expr,
    pub dims: [(String, Expr, Expr); 3],
    /// 1 when the value reads away from `(j, k)` within a plane, else 0: how far the tile's
    /// valid part shrinks.
    pub radius: i64,
}

impl Stencil3d {
    /// The two arrays: the one phase 0 reads (the state, which the kernel loads) first.
    pub fn arrays(&self) -> (&str, &str) {
        let n = self.phases.len();
        (&self.phases[n - 1].target, &self.phases[0].target)
    }

    /// How far one iteration's phases read within a plane, together: the tile's halo.
    pub fn reach(&self) -> i64 {
        self.phases.iter().map(|p| p.radius).sum()
    }
}

/// The 3-D stencil of a persistent loop over `var` whose phases are `regions`, or why not.
pub fn stencil_3d(var: &str, regions: &[&Kernel]) -> Result<Stencil3d, String> {
    if regions.len() != 2 {
        return Err(format!(
            "{} phases: the streamed kernel runs iterations of two",
            regions.len()
        ));
    }
    let (phases, diagonal) = alternating(var, regions, &phase_3d)?;
    Ok(Stencil3d {
        phases,
        diagonal,
        swapped: false,
        peeled: vec![],
    })
}

/// One region as a 3-D stencil phase (and whether it reads diagonally in a plane), or why not.
fn phase_3d(k: &Kernel, bound: &HashSet<String>) -> Result<(Phase3d, bool), String> {
    if !is_plain(k) {
        return Err("launch checks, temporaries, tiles or shared scalars".into());
    }
    let ([d0, d1, d2], [stmt]) = (k.dims.as_slice(), k.body.as_slice()) else {
        return Err("not three grid dimensions around one statement".into());
    };
    let dims_ok = [d0, d1, d2].iter().all(|d| {
        matches!(d.range.step.kind, ExprKind::Int(1))
            && host_value(&d.range.start, bound, 3)
            && host_value(&d.range.stop, bound, 3)
    });
    if !dims_ok {
        return Err("a bound the loop changes, or a step other than 1".into());
    }
    let StmtKind::Assign {
        target,
        value,
        atomic: false,
    } = &stmt.kind
    else {
        return Err("not one assignment".into());
    };
    let vars = [d0.var.as_str(), d1.var.as_str(), d2.var.as_str()];
    let written = match &target.kind {
        ExprKind::Subscript { array, indices } if offset_3d(indices, vars) == Some([0, 0, 0]) => {
            array
        }
        _ => return Err("the target is not `X[i, j, k]`".into()),
    };
    let mut sources: Vec<String> = vec![];
    let (mut radius, mut far, mut off_axis, mut diagonal) = (0, false, false, false);
    let ok = stencil_expr(value, &|n| !bound.contains(n), &mut |a, indices| {
        let Some([dz, dy, dx]) = offset_3d(indices, vars) else {
            return false;
        };
        far |= dz.abs() > 1 || dy.abs() > 1 || dx.abs() > 1;
        off_axis |= dz != 0 && (dy != 0 || dx != 0);
        diagonal |= dy != 0 && dx != 0;
        radius = radius.max(dy.abs()).max(dx.abs());
        if !sources.iter().any(|s| s == a) {
            sources.push(a.to_string());
        }
        true
    });
    if !ok {
        return Err(
            "a value other than `Y[i + a, j + b, k + c]`, host scalars, numbers, + - * /".into(),
        );
    }
    if far {
        return Err("an offset past 1".into());
    }
    if off_axis {
        return Err("a neighbour plane read away from `(j, k)`".into());
    }
    if sources.len() > 1 {
        return Err("it reads two arrays".into());
    }
    if sources.iter().chain([written]).any(|a| bound.contains(a)) {
        return Err("an array's name is bound in the loop".into());
    }
    let dim = |d: &ParallelDim| (d.var.clone(), d.range.start.clone(), d.range.stop.clone());
    let phase = Phase3d {
        target: written.clone(),
        source: sources.pop(),
        value: value.clone(),
        dims: [dim(d0), dim(d1), dim(d2)],
        radius: radius.min(1),
    };
    Ok((phase, diagonal))
}

/// `[a, b, c]` when `indices` are `i + a, j + b, k + c`.
pub fn offset_3d(indices: &[Index], vars: [&str; 3]) -> Option<[i64; 3]> {
    let [i, j, k] = indices else {
        return None;
    };
    Some([
        offset(std::slice::from_ref(i), vars[0])?,
        offset(std::slice::from_ref(j), vars[1])?,
        offset(std::slice::from_ref(k), vars[2])?,
    ])
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
