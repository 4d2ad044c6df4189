//! Tensor statements (paper Sec. 4, Alg. 5, 7, 8), in two steps around `insert_sync`:
//!
//! * `split` — a reduction used inside a larger expression is computed first into a worker-private
//!   scalar (`b[i, :N] = a[i, :N] / np.sum(a[i, :N])`); an assignment whose target is read at a
//!   shifted slice (`A[i, 1:N] = A[i, :N-1] + ...`) goes through a temporary array (Alg. 5).
//! * `lower` — each tensor statement becomes a loop nest (Alg. 7/8): one loop per dimension in
//!   the pragma's order, `simd` dimensions as `simd` loops (strip-mined later), `le(N)` as one
//!   strip of N lanes, `parallel` dimensions as the kernel's grid. Element-wise chains are fused
//!   into the reduction they feed (reduction-bounded fusion): the reduction accumulates in a
//!   register and intermediates are never stored.

use super::affine::Affine;
use super::tensor::{
    analyse, is_product_call, pragma_matches, reduce_marker, reduction_call, TensorStmt,
};
use crate::diag::{Diagnostic, Result};
use crate::frontend::source::Span;
use crate::ir::pragma::{DimPragma, Directive, VectorProp};
use crate::ir::*;
use std::collections::HashSet;

/// Rows of a 2-D tile whose outer dimension says plain `simd`: with MVL columns, up to
/// 8 x 1024 elements per vector statement.
const TILE_ROWS: u32 = 8;

pub struct Options {
    /// Vectorise the last dimension of statements inside parallel loops by default.
    pub auto_simd: bool,
}

fn dim_pragmas(s: &Stmt) -> Option<&Vec<DimPragma>> {
    match &s.pragma {
        Some(p) => match &p.directive {
            Directive::Dimensions(d) => Some(d),
            _ => None,
        },
        None => None,
    }
}

fn is_tensor_assign(s: &Stmt) -> bool {
    match &s.kind {
        StmtKind::Assign { target, value, .. } => super::tensor::is_tensor_stmt(target, value),
        _ => false,
    }
}

// ------------------------------------------------------------------------------------- split

pub fn split(k: &mut Kernel) -> Result<()> {
    let mut used = k.names();
    let bound: Vec<(Expr, Expr)> = k
        .bound
        .iter()
        .map(|(_, lo, hi)| (lo.clone(), hi.clone()))
        .collect();
    let mut temps = vec![];
    k.body = split_block(std::mem::take(&mut k.body), &bound, &mut used, &mut temps)?;
    k.temps.extend(temps);
    Ok(())
}

/// Replaces every tensor statement of `stmts`, at any nesting depth, by what `f` makes of it.
fn map_tensor_stmts(
    stmts: Vec<Stmt>,
    f: &mut dyn FnMut(Stmt) -> Result<Vec<Stmt>>,
) -> Result<Vec<Stmt>> {
    let mut out = vec![];
    for mut s in stmts {
        if is_tensor_assign(&s) {
            out.extend(f(s)?);
            continue;
        }
        match &mut s.kind {
            StmtKind::For { body, .. } => *body = map_tensor_stmts(std::mem::take(body), f)?,
            StmtKind::If { body, orelse, .. } => {
                *body = map_tensor_stmts(std::mem::take(body), f)?;
                *orelse = map_tensor_stmts(std::mem::take(orelse), f)?;
            }
            _ => {}
        }
        out.push(s);
    }
    Ok(out)
}

fn split_block(
    stmts: Vec<Stmt>,
    bound: &[(Expr, Expr)],
    used: &mut HashSet<String>,
    temps: &mut Vec<(String, String)>,
) -> Result<Vec<Stmt>> {
    map_tensor_stmts(stmts, &mut |s| {
        let mut out = vec![];
        for st in split_reductions(s, bound, used)? {
            out.extend(split_temp(st, bound, used, temps)?);
        }
        Ok(out)
    })
}

fn is_reduction(e: &Expr) -> bool {
    matches!(&e.kind, ExprKind::Call { func, args } if reduction_call(func, args.len()).is_some() || is_product_call(func))
}

/// Hoists reductions nested in larger expressions into their own statements.
fn split_reductions(
    s: Stmt,
    bound: &[(Expr, Expr)],
    used: &mut HashSet<String>,
) -> Result<Vec<Stmt>> {
    let StmtKind::Assign {
        target,
        value,
        atomic,
    } = &s.kind
    else {
        unreachable!()
    };
    // Forms that lower directly (accumulated in a register per output element, stored once
    // through the rest of the value): `t = red(...)`, `t = t op red(...)`, and a value whose one
    // reduction keeps dimensions (`C[i, :N] = beta * C[i, :N] + alpha * (A[i, :K] @ B[:K, :N])`),
    // which hoisting would need a temporary array for. A reduction to a scalar inside a larger
    // value is hoisted instead: computed once, not once per output element.
    let mut reductions = vec![];
    value.walk(&mut |x| {
        if is_reduction(x) {
            reductions.push(x);
        }
    });
    let keeps_dims = |x: &Expr| analyse(&Expr::name("_", x.span), x, bound).is_err();
    let direct = is_reduction(value)
        || matches!(&value.kind, ExprKind::Binary { left, right, .. } if same_place(left, target) && is_reduction(right))
        || matches!(&value.kind, ExprKind::Call { func, args } if matches!(func.as_str(), "max" | "min" | "np.maximum" | "np.minimum") && args.len() == 2 && same_place(&args[0], target) && is_reduction(&args[1]))
        || matches!(reductions.as_slice(), [x] if keeps_dims(x));
    let mut hoisted = vec![];
    let mut err = None;
    let new_value = if direct {
        value.clone()
    } else {
        value.clone().rewrite(&mut |x| {
            if err.is_some() || !is_reduction(&x) {
                return x;
            }
            let name = fresh_name("r", used);
            let tmp = Expr::name(&name, x.span);
            match analyse(&tmp, &x, bound) {
                Ok(_) => {
                    let mut st = Stmt::new(
                        StmtKind::Assign {
                            target: tmp.clone(),
                            value: x,
                            atomic: false,
                        },
                        s.span,
                    );
                    st.pragma = s.pragma.clone();
                    hoisted.push(st);
                    tmp
                }
                Err(_) => {
                    err = Some(Diagnostic::error(
                        x.span,
                        "this reduction's result is a vector used inside a larger expression; that needs a temporary array, which is not supported yet",
                    )
                    .with_help("assign the reduction to an array of its own in a separate statement, or mark the kept dimension `parallel`"));
                    x
                }
            }
        })
    };
    if let Some(e) = err {
        return Err(e);
    }
    let mut main = s.clone();
    main.kind = StmtKind::Assign {
        target: target.clone(),
        value: new_value,
        atomic: *atomic,
    };
    hoisted.push(main);
    Ok(hoisted)
}

/// `A[i, 1:N] = f(A[i, :N-1])`: reads of the target array at other places than the written one
/// go through a temporary (Alg. 5). No temporary when every read of the target array in the value
/// is lane-aligned with the written index (see `lane_aligned`: each lane reads only its own
/// element or one the statement never writes), or reads one element (hoisted into a scalar before
/// the statement, so it is read before any store), or when every dimension is one strip of
/// `le(N)` lanes (all loads happen before the one store).
fn split_temp(
    s: Stmt,
    bound: &[(Expr, Expr)],
    used: &mut HashSet<String>,
    temps: &mut Vec<(String, String)>,
) -> Result<Vec<Stmt>> {
    let StmtKind::Assign {
        target,
        value,
        atomic,
    } = &s.kind
    else {
        unreachable!()
    };
    let ExprKind::Subscript { array, .. } = &target.kind else {
        return Ok(vec![s]);
    };
    let t = analyse(target, value, bound)?;
    let mut conflict = false;
    let mut single_elements: Vec<Expr> = vec![];
    t.value.walk(&mut |x| {
        if let ExprKind::Subscript { array: a, indices } = &x.kind {
            if a != array || lane_aligned(x, &t.target) {
                return;
            }
            if indices.iter().all(|ix| !mentions_dim(ix)) {
                single_elements.push(x.clone());
            } else {
                conflict = true;
            }
        }
    });
    let single_strip = dim_pragmas(&s).is_some_and(|ds| {
        t.output.iter().chain(t.reduced.iter()).all(|d| {
            ds.iter().any(|p| {
                matches!(p.vector, Some(VectorProp::Le(_))) && pragma_matches(p, &t, *d).is_some()
            })
        })
    });
    if single_strip || *atomic {
        return Ok(vec![s]);
    }
    if !conflict {
        return Ok(hoist_single_elements(s, single_elements, used));
    }
    let tmp = fresh_name("tmp", used);
    temps.push((tmp.clone(), array.clone()));
    let rename = |e: &Expr| {
        let mut e = e.clone();
        if let ExprKind::Subscript { array, .. } = &mut e.kind {
            *array = tmp.clone();
        }
        e
    };
    let mut compute = s.clone();
    compute.kind = StmtKind::Assign {
        target: rename(target),
        value: value.clone(),
        atomic: false,
    };
    let mut copy = s.clone();
    copy.kind = StmtKind::Assign {
        target: target.clone(),
        value: rename(target),
        atomic: false,
    };
    Ok(vec![compute, copy])
}

/// Whether an index of an analysed statement moves with a dimension (mentions a `dim_var`).
fn mentions_dim(ix: &Index) -> bool {
    match ix {
        Index::At(e) => {
            e.any(&mut |x| matches!(&x.kind, ExprKind::Name(n) if n.starts_with("__dim")))
        }
        _ => true,
    }
}

/// A read of the target array that cannot see another lane's store: in every index position
/// where the read or the write moves with a dimension, both are the same `dim + offset`; the
/// positions that do not move may differ (`path[k, j]` against the written `path[i, j]`). Such a
/// read touches the lane's own element (when the fixed indices agree at run time) or an element
/// in a part of the array this statement never writes (when they do not).
fn lane_aligned(read: &Expr, written: &Expr) -> bool {
    let (ExprKind::Subscript { indices: r, .. }, ExprKind::Subscript { indices: w, .. }) =
        (&read.kind, &written.kind)
    else {
        return false;
    };
    r.len() == w.len()
        && r.iter()
            .zip(w)
            .all(|(ri, wi)| match (mentions_dim(ri), mentions_dim(wi)) {
                (false, false) => true,
                (true, true) => match (ri, wi) {
                    (Index::At(a), Index::At(b)) => same_place(a, b),
                    _ => false,
                },
                _ => false,
            })
}

/// Reads of one element of the target array (`path[i, k]` in `path[i, :] = ... path[i, k] ...`)
/// become scalars assigned before the statement: a later strip's store may overwrite that
/// element, and NumPy reads it before any store.
fn hoist_single_elements(s: Stmt, reads: Vec<Expr>, used: &mut HashSet<String>) -> Vec<Stmt> {
    let mut out = vec![];
    let mut s = s;
    for read in reads {
        if out.iter().any(|h: &Stmt| {
            matches!(&h.kind, StmtKind::Assign { value, .. } if same_place(value, &read))
        }) {
            continue;
        }
        let name = fresh_name("elem", used);
        let mut hoisted = s.clone();
        hoisted.pragma = None;
        hoisted.kind = StmtKind::Assign {
            target: Expr::new(ExprKind::Name(name.clone()), read.span),
            value: read.clone(),
            atomic: false,
        };
        if let StmtKind::Assign { value, .. } = &mut s.kind {
            *value = value.clone().rewrite(&mut |x| {
                if same_place(&x, &read) {
                    Expr::new(ExprKind::Name(name.clone()), x.span)
                } else {
                    x
                }
            });
        }
        out.push(hoisted);
    }
    out.push(s);
    out
}

// ------------------------------------------------------------------------------------- lower

/// A dimension's `reduce(op:var)` property and where the pragma said it.
type ReduceProp = (Option<ReduceOp>, Option<String>, Span);

#[derive(Clone, Copy, PartialEq, Debug)]
enum Run {
    Sequential,
    Vector(VectorProp),
    /// A grid dimension of the kernel: index `k` of `Kernel::dims`.
    Grid(usize),
}

pub fn lower(k: &mut Kernel, opts: &Options) -> Result<()> {
    let mut used = k.names();
    let mut matched: HashSet<Span> = HashSet::new();
    let mut all_pragma_dims: Vec<(Span, String)> = vec![];
    for s in &k.body {
        s.walk(&mut |st| {
            if let (true, Some(ds)) = (is_tensor_assign(st), dim_pragmas(st)) {
                for p in ds {
                    let text = format!(
                        "{}:{}",
                        p.lo.as_ref()
                            .map(crate::ir::python::expr)
                            .unwrap_or_default(),
                        p.hi.as_ref()
                            .map(crate::ir::python::expr)
                            .unwrap_or_default()
                    );
                    all_pragma_dims.push((p.span, text));
                }
            }
        });
    }
    let cx = LowerCx::of(k, opts);
    k.body = cx.block(
        std::mem::take(&mut k.body),
        &mut used,
        &mut matched,
        &mut k.checks,
    )?;
    if let Some((span, text)) = all_pragma_dims.iter().find(|(s, _)| !matched.contains(s)) {
        return Err(Diagnostic::error(
            *span,
            format!("the pragma slice `{text}` matches no slice in the statement"),
        )
        .with_help("name each dimension by a slice written in the statement (or one shifted from it by a constant)"));
    }
    Ok(())
}

struct LowerCx {
    bound: Vec<(usize, Expr, Expr)>,
    grid_vars: Vec<String>,
    /// Where each grid variable starts: the canonical slice of its dimension.
    grid_los: Vec<Expr>,
    auto_simd: bool,
}

/// How the dimensions of one analysed statement run, decided before any loop is built.
struct DimOrder {
    /// `run[d]`: how dimension `d` runs (every dimension has one once ordered).
    run: Vec<Option<Run>>,
    /// The dimensions that become loops, outermost first (grid dimensions are not among them).
    order: Vec<usize>,
    /// The `reduce(op:var)` property a pragma gave each dimension.
    reduce_ops: Vec<Option<ReduceProp>>,
}

impl LowerCx {
    /// The lowering context of kernel `k`: its bound slices and grid variables.
    fn of(k: &Kernel, opts: &Options) -> LowerCx {
        LowerCx {
            bound: k.bound.clone(),
            grid_vars: k.dims.iter().map(|d| d.var.clone()).collect(),
            grid_los: k.dims.iter().map(|d| d.range.start.clone()).collect(),
            auto_simd: opts.auto_simd,
        }
    }

    fn block(
        &self,
        stmts: Vec<Stmt>,
        used: &mut HashSet<String>,
        matched: &mut HashSet<Span>,
        checks: &mut Vec<LaunchCheck>,
    ) -> Result<Vec<Stmt>> {
        map_tensor_stmts(stmts, &mut |s| self.statement(s, used, matched, checks))
    }

    /// One tensor statement → its loop nest: analyse, order the dimensions, check the order,
    /// build the innermost statements and wrap them in the output loops.
    fn statement(
        &self,
        s: Stmt,
        used: &mut HashSet<String>,
        matched: &mut HashSet<Span>,
        checks: &mut Vec<LaunchCheck>,
    ) -> Result<Vec<Stmt>> {
        let StmtKind::Assign {
            target,
            value,
            atomic,
        } = &s.kind
        else {
            unreachable!()
        };
        let t = self.analyse_statement(target, value, checks)?;
        let pragmas: Vec<DimPragma> = dim_pragmas(&s).cloned().unwrap_or_default();
        let mut dims = self.order_dimensions(&t, &pragmas, matched)?;
        shape_tile(&t, &dims.order, &mut dims.run)?;
        check_reduced_innermost(&t, &dims.order, &dims.run)?;
        check_reduce_props(&t, &dims.reduce_ops, target)?;
        let nest = Nest::new(self, &t, &dims, s.span, used);
        let inner = nest.innermost(*atomic, used, checks);
        Ok(nest.wrap(&nest.outputs, inner, checks))
    }

    /// The statement's dimensions (`tensor::analyse` against the kernel's bound slices); the
    /// slice lengths it could only assume equal become launch checks.
    fn analyse_statement(
        &self,
        target: &Expr,
        value: &Expr,
        checks: &mut Vec<LaunchCheck>,
    ) -> Result<TensorStmt> {
        let bound_slices: Vec<(Expr, Expr)> = self
            .bound
            .iter()
            .map(|(_, lo, hi)| (lo.clone(), hi.clone()))
            .collect();
        let t = analyse(target, value, &bound_slices)?;
        for (a, b, at) in &t.assumed {
            checks.push(LaunchCheck::Equal(a.clone(), b.clone(), *at));
        }
        Ok(t)
    }

    /// How each dimension runs and in which order: grid dimensions first, then the pragma's
    /// order, then the unlisted ones; auto-simd vectorises the innermost when nothing else is.
    fn order_dimensions(
        &self,
        t: &TensorStmt,
        pragmas: &[DimPragma],
        matched: &mut HashSet<Span>,
    ) -> Result<DimOrder> {
        let mut run = self.grid_runs(t);
        let (mut order, reduce_ops) = claim_pragma_dims(t, pragmas, &mut run, matched)?;
        complete_order(t, &mut order, &mut run);
        if self.auto_simd {
            auto_vectorise(&order, &mut run);
        }
        Ok(DimOrder {
            run,
            order,
            reduce_ops,
        })
    }

    /// `Run::Grid(g)` for the dimension each bound slice `g` of the kernel runs, `None` elsewhere.
    fn grid_runs(&self, t: &TensorStmt) -> Vec<Option<Run>> {
        let mut run: Vec<Option<Run>> = vec![None; t.dims.len()];
        // A grid dimension runs one dimension of the statement: when two dimensions have the
        // same slice (`B[:N, :N]`), the first takes the grid variable and the second runs as a
        // dimension of its own (giving both the grid variable would compute the diagonal).
        for (g, lo, hi) in &self.bound {
            if run.contains(&Some(Run::Grid(*g))) {
                continue;
            }
            if let Some(r) =
                t.dims.iter().zip(run.iter_mut()).find_map(|(dim, r)| {
                    (r.is_none() && dim.matches(lo, hi).is_some()).then_some(r)
                })
            {
                *r = Some(Run::Grid(*g));
            }
        }
        run
    }
}

/// Each pragma slice claims a dimension and sets how it runs (marking the slice `matched`);
/// returns the claimed dimensions in pragma order and each dimension's `reduce` property.
fn claim_pragma_dims(
    t: &TensorStmt,
    pragmas: &[DimPragma],
    run: &mut [Option<Run>],
    matched: &mut HashSet<Span>,
) -> Result<(Vec<usize>, Vec<Option<ReduceProp>>)> {
    let ndims = t.dims.len();
    let mut order: Vec<usize> = vec![];
    let mut reduce_ops: Vec<Option<ReduceProp>> = vec![None; ndims];
    let mut claimed: Vec<usize> = vec![];
    for p in pragmas {
        // A pragma slice names the first dimension it matches that no earlier slice named
        // (`1:-1=>parallel 1:-1=>simd` names the rows, then the columns).
        // An open slice (`:`) can match several dimensions: prefer one whose role fits
        // the properties (a grid dimension for `parallel`, a reduced one for `reduce`).
        let candidates: Vec<usize> = (0..ndims)
            .filter(|d| !claimed.contains(d) && pragma_matches(p, t, *d).is_some())
            .collect();
        let fits = |d: &usize| {
            (p.parallel == matches!(run[*d], Some(Run::Grid(_))))
                && (p.reduce.is_none() || t.reduced.contains(d))
        };
        let Some(d) = candidates
            .iter()
            .copied()
            .find(fits)
            .or(candidates.first().copied())
        else {
            continue; // checked once for the whole original statement by `lower`
        };
        claimed.push(d);
        matched.insert(p.span);
        if p.parallel {
            if !matches!(run[d], Some(Run::Grid(_))) {
                return Err(Diagnostic::error(
                    p.span,
                    "`parallel` dimensions are only allowed on function-level statements",
                )
                .with_help("inside a parallel loop, the loop itself is the parallel dimension"));
            }
        } else if let Some(v) = p.vector {
            run[d] = Some(Run::Vector(v));
        } else if run[d].is_none() {
            run[d] = Some(Run::Sequential);
        }
        if let Some((op, var)) = &p.reduce {
            reduce_ops[d] = Some((*op, var.clone(), p.span));
        }
        if !order.contains(&d) {
            order.push(d);
        }
    }
    Ok((order, reduce_ops))
}

/// Appends the dimensions no pragma listed (outputs in target order, then reduced ones), drops
/// the grid dimensions from the loop order and makes every other unset dimension sequential.
fn complete_order(t: &TensorStmt, order: &mut Vec<usize>, run: &mut [Option<Run>]) {
    for d in t
        .output
        .iter()
        .chain(t.reduced.iter())
        .copied()
        .chain(0..t.dims.len())
    {
        if !order.contains(&d) {
            order.push(d);
        }
    }
    order.retain(|d| !matches!(run[*d], Some(Run::Grid(_))));
    for d in order.iter() {
        if run[*d].is_none() {
            run[*d] = Some(Run::Sequential);
        }
    }
}

/// auto-simd: the innermost loop becomes an MVL-wide `simd` loop unless the pragma already
/// vectorised some dimension.
fn auto_vectorise(order: &[usize], run: &mut [Option<Run>]) {
    let has_vector = run.iter().any(|r| matches!(r, Some(Run::Vector(_))));
    if !has_vector {
        if let Some(last) = order.last() {
            run[*last] = Some(Run::Vector(VectorProp::Simd(Width::Mvl)));
        }
    }
}

/// The vectorised dimensions, in loop order.
fn vector_dims(order: &[usize], run: &[Option<Run>]) -> Vec<usize> {
    order
        .iter()
        .copied()
        .filter(|d| matches!(run[*d], Some(Run::Vector(_))))
        .collect()
}

/// At most two vectorised dimensions; two form a 2-D tile, which must be element-wise and
/// innermost, and whose rows get `TILE_ROWS` lanes when the pragma said plain `simd`.
fn shape_tile(t: &TensorStmt, order: &[usize], run: &mut [Option<Run>]) -> Result<()> {
    let vectors = vector_dims(order, run);
    if vectors.len() > 2 {
        return Err(Diagnostic::error(
            t.dims[vectors[2]].span,
            "at most two vectorised dimensions (a 2-D tile) per statement",
        ));
    }
    if vectors.len() == 2 {
        // A 2-D tile: the two vector dimensions are the innermost loops, element-wise only.
        if !t.reduced.is_empty() {
            return Err(Diagnostic::error(
                t.dims[vectors[1]].span,
                "a reduction with two vectorised dimensions is not supported yet",
            )
            .with_help("vectorise only the reduced dimension"));
        }
        if order[order.len() - 2..] != vectors[..] {
            return Err(Diagnostic::error(
                t.dims[vectors[0]].span,
                "the two vectorised dimensions of a 2-D tile must be the innermost ones",
            ));
        }
        // Tile rows: MVL lanes across and a few rows down, unless the pragma says.
        if let Some(Run::Vector(VectorProp::Simd(Width::Mvl))) = run[vectors[0]] {
            run[vectors[0]] = Some(Run::Vector(VectorProp::Simd(Width::Fixed(TILE_ROWS))));
        }
    }
    Ok(())
}

/// Reduced dimensions must be the innermost loops (the accumulation happens in a register),
/// and a vectorised dimension next to a reduction must be a reduced one.
fn check_reduced_innermost(t: &TensorStmt, order: &[usize], run: &[Option<Run>]) -> Result<()> {
    let vectors = vector_dims(order, run);
    if let Some(pos) = order.iter().position(|d| t.reduced.contains(d)) {
        if let Some(d) = order[pos..].iter().find(|d| !t.reduced.contains(d)) {
            return Err(Diagnostic::error(
                t.dims[*d].span,
                "a kept dimension is ordered inside a reduced one",
            )
            .with_help("list the reduced dimensions last in the pragma"));
        }
        if let Some(v) = vectors.first().filter(|v| !t.reduced.contains(v)) {
            return Err(Diagnostic::error(
                t.dims[*v].span,
                "a vectorised kept dimension with a reduction is not supported yet",
            )
            .with_help("vectorise the reduced dimension instead (the default)"));
        }
    }
    Ok(())
}

/// A pragma's `reduce(op:var)` must name a reduced dimension, the statement's operator and
/// the statement's target.
fn check_reduce_props(
    t: &TensorStmt,
    reduce_ops: &[Option<ReduceProp>],
    target: &Expr,
) -> Result<()> {
    let stmt_op = root_reduction_op(&t.value);
    for (d, r) in reduce_ops.iter().enumerate() {
        let Some((op, var, pspan)) = r else { continue };
        if !t.reduced.contains(&d) {
            return Err(Diagnostic::error(
                *pspan,
                "this dimension is not reduced by the statement",
            ));
        }
        if let (Some(op), Some(actual)) = (op, stmt_op) {
            if *op != actual {
                return Err(Diagnostic::error(
                    *pspan,
                    format!(
                        "the pragma says `{}` but the statement reduces with `{}`",
                        op.name(),
                        actual.name()
                    ),
                ));
            }
        }
        if let Some(v) = var.as_deref().filter(|v| !v.is_empty()) {
            let tname = match &target.kind {
                ExprKind::Name(n) | ExprKind::Subscript { array: n, .. } => n.as_str(),
                _ => "",
            };
            if v != tname {
                return Err(Diagnostic::error(
                    *pspan,
                    format!("the pragma reduces into `{v}` but the statement assigns `{tname}`"),
                ));
            }
        }
    }
    Ok(())
}

/// The loop nest of one ordered statement: its loop variables, and how dimension placeholders
/// become indices. Builds the innermost statements and the loops around them.
struct Nest<'a> {
    cx: &'a LowerCx,
    t: &'a TensorStmt,
    run: &'a [Option<Run>],
    /// The loop variable of each dimension that is a loop (`None` for grid dimensions).
    vars: Vec<Option<String>>,
    /// Output and reduced dimensions, each in loop order.
    outputs: Vec<usize>,
    reduced: Vec<usize>,
    span: Span,
}

impl<'a> Nest<'a> {
    /// Fresh loop variables for the ordered dimensions (grid dimensions use the kernel's).
    fn new(
        cx: &'a LowerCx,
        t: &'a TensorStmt,
        dims: &'a DimOrder,
        span: Span,
        used: &mut HashSet<String>,
    ) -> Nest<'a> {
        let mut vars: Vec<Option<String>> = vec![None; t.dims.len()];
        for &d in &dims.order {
            vars[d] = Some(fresh_name("i", used));
        }
        let (reduced, outputs): (Vec<usize>, Vec<usize>) = dims
            .order
            .iter()
            .copied()
            .partition(|d| t.reduced.contains(d));
        Nest {
            cx,
            t,
            run: &dims.run,
            vars,
            outputs,
            reduced,
            span,
        }
    }

    /// Dimension `d`'s index: its loop variable, or the grid variable shifted to its slice.
    fn index_of(&self, d: usize, span: Span) -> Expr {
        match self.run[d] {
            // The grid variable runs over the bound slice; this dimension may be shifted.
            Some(Run::Grid(g)) => Affine::of(&self.t.dims[d].lo)
                .sub(&Affine::of(&self.cx.grid_los[g]))
                .added_to(Expr::name(&self.cx.grid_vars[g], span)),
            _ => Expr::name(
                self.vars[d]
                    .as_ref()
                    .expect("every dimension has a variable"),
                span,
            ),
        }
    }

    /// `e` with each dimension placeholder replaced by the dimension's index, or by the
    /// expression `fixed` gives for it.
    fn subst(&self, e: &Expr, fixed: &[(usize, Expr)]) -> Expr {
        e.clone().rewrite(&mut |x| match &x.kind {
            ExprKind::Name(n) if n.starts_with("__dim") => {
                let d: usize = n["__dim".len()..].parse().expect("placeholder");
                match fixed.iter().find(|(fd, _)| *fd == d) {
                    Some((_, e)) => e.clone(),
                    None => self.index_of(d, x.span),
                }
            }
            _ => x,
        })
    }

    /// The loop over dimension `d` around `body`; a `le(N)` strip adds its launch check.
    fn make_loop(&self, d: usize, body: Vec<Stmt>, checks: &mut Vec<LaunchCheck>) -> Stmt {
        let dim = &self.t.dims[d];
        let kind = match self.run[d] {
            Some(Run::Vector(VectorProp::Simd(w))) => LoopKind::Simd(w),
            Some(Run::Vector(VectorProp::Le(n))) => {
                checks.push(LaunchCheck::AtMost(
                    super::tensor::extent_expr(&dim.lo, &dim.hi),
                    n,
                    dim.span,
                ));
                LoopKind::Simd(Width::Fixed(n))
            }
            _ => LoopKind::Plain,
        };
        Stmt::new(
            StmtKind::For {
                var: self.vars[d].clone().expect("loop variable"),
                range: Range {
                    start: dim.lo.clone(),
                    stop: dim.hi.clone(),
                    step: Expr::int(1, dim.span),
                },
                body,
                kind,
                vector: None,
                num_warps: None,
            },
            self.span,
        )
    }

    /// `body` inside the loops of `dims` (the first outermost); checks are pushed innermost
    /// first.
    fn wrap(&self, dims: &[usize], body: Vec<Stmt>, checks: &mut Vec<LaunchCheck>) -> Vec<Stmt> {
        let mut nest = body;
        for d in dims.iter().rev() {
            nest = vec![self.make_loop(*d, nest, checks)];
        }
        nest
    }

    /// What runs inside the output loops: the element-wise assignment, or a reduction
    /// accumulated in a register and stored once.
    fn innermost(
        &self,
        atomic: bool,
        used: &mut HashSet<String>,
        checks: &mut Vec<LaunchCheck>,
    ) -> Vec<Stmt> {
        match split_root(&self.t.value) {
            RootForm::Plain => vec![Stmt::new(
                StmtKind::Assign {
                    target: self.subst(&self.t.target, &[]),
                    value: self.subst(&self.t.value, &[]),
                    atomic,
                },
                self.span,
            )],
            RootForm::Reduce {
                op,
                operand,
                marker,
            } => self.reduction(op, &operand, &marker, atomic, used, checks),
        }
    }

    /// `_acc = init`, the reduced loops around `_acc = _acc op e`, then one store of the value
    /// with the reduction (`marker`) read as `_acc`.
    fn reduction(
        &self,
        op: ReduceOp,
        operand: &Expr,
        marker: &Expr,
        atomic: bool,
        used: &mut HashSet<String>,
        checks: &mut Vec<LaunchCheck>,
    ) -> Vec<Stmt> {
        let span = self.span;
        let target_l = self.subst(&self.t.target, &[]);
        let acc = fresh_name("acc", used);
        let acc_e = Expr::name(&acc, span);
        let operand_l = self.subst(operand, &[]);
        let init = match op {
            ReduceOp::Sum => Expr::int(0, span),
            // The first element: max/min have no identity valid for every dtype.
            ReduceOp::Max | ReduceOp::Min => {
                let firsts: Vec<(usize, Expr)> = self
                    .reduced
                    .iter()
                    .map(|d| (*d, self.t.dims[*d].lo.clone()))
                    .collect();
                self.subst(operand, &firsts)
            }
        };
        let update = match op {
            ReduceOp::Sum => Expr::binary(BinOp::Add, acc_e.clone(), operand_l),
            ReduceOp::Max | ReduceOp::Min => Expr::new(
                ExprKind::Call {
                    func: op.name().into(),
                    args: vec![acc_e.clone(), operand_l],
                },
                span,
            ),
        };
        let accumulate = Stmt::new(
            StmtKind::Assign {
                target: acc_e.clone(),
                value: update,
                atomic: false,
            },
            span,
        );
        let nest = self.wrap(&self.reduced, vec![accumulate], checks);
        let with_acc = self.t.value.clone().rewrite(&mut |x| {
            if same_place(&x, marker) {
                acc_e.clone()
            } else {
                x
            }
        });
        let result = self.subst(&with_acc, &[]);
        let mut stmts = vec![Stmt::new(
            StmtKind::Assign {
                target: acc_e,
                value: init,
                atomic: false,
            },
            span,
        )];
        stmts.extend(nest);
        stmts.push(Stmt::new(
            StmtKind::Assign {
                target: target_l,
                value: result,
                atomic,
            },
            span,
        ));
        stmts
    }
}

enum RootForm {
    Plain,
    /// One reduction over the statement's reduced dimensions; the store is the value with
    /// `marker` (the reduction) replaced by the accumulator.
    Reduce {
        op: ReduceOp,
        operand: Expr,
        marker: Expr,
    },
}

fn as_marker(e: &Expr) -> Option<(ReduceOp, Vec<usize>, Expr)> {
    match &e.kind {
        ExprKind::Call { func, args } => {
            reduce_marker(func).map(|(op, dims)| (op, dims, args[0].clone()))
        }
        _ => None,
    }
}

/// The value's one reduction over some dimensions (`t = red(v)`, `t = t op red(v)`, `t =
/// beta * t + alpha * red(v)`), or a plain element-wise value.
fn split_root(value: &Expr) -> RootForm {
    let mut found = vec![];
    value.walk(&mut |x| {
        if let Some((op, dims, v)) = as_marker(x) {
            if !dims.is_empty() {
                found.push((op, v, x.clone()));
            }
        }
    });
    // Only the outermost: a reduction inside another's operand is lowered with that operand.
    let inside = |m: &Expr, n: &Expr| {
        let mut hit = false;
        if let ExprKind::Call { args, .. } = &n.kind {
            args.iter()
                .for_each(|a| a.walk(&mut |x| hit |= same_place(x, m)));
        }
        hit
    };
    let outer: Vec<_> = found
        .iter()
        .filter(|(_, _, m)| !found.iter().any(|(_, _, n)| inside(m, n)))
        .cloned()
        .collect();
    match <[_; 1]>::try_from(outer) {
        Ok([(op, operand, marker)]) => RootForm::Reduce {
            op,
            operand,
            marker,
        },
        Err(_) => RootForm::Plain,
    }
}

fn root_reduction_op(value: &Expr) -> Option<ReduceOp> {
    let mut op = None;
    value.walk(&mut |x| {
        if let Some((o, _, _)) = as_marker(x) {
            op.get_or_insert(o);
        }
    });
    op
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::attach_pragmas::tests::attached;

    /// The first kernel of `src` after `split` (and `lower` when asked).
    fn kernel(src: &str, lowered: bool) -> Kernel {
        let f = attached(src).unwrap();
        let mut k = crate::passes::outline::run(&f).unwrap().remove(0);
        split(&mut k).unwrap();
        if lowered {
            lower(&mut k, &Options { auto_simd: true }).unwrap();
        }
        k
    }

    fn assigned_names(k: &Kernel) -> Vec<String> {
        let mut out = vec![];
        for s in &k.body {
            s.walk(&mut |st| {
                if let StmtKind::Assign { target, .. } = &st.kind {
                    out.push(crate::ir::python::expr(target));
                }
            });
        }
        out
    }

    #[test]
    fn shifted_self_read_goes_through_a_temporary() {
        let k = kernel(
            "def f(A, M, N):\n    #pragma parallel for\n    for i in range(M):\n        A[i, 1:N] = 0.5 * (A[i, :N-1] + A[i, 1:N])\n",
            false,
        );
        assert_eq!(k.temps, vec![("_tmp".to_string(), "A".to_string())]);
        assert_eq!(assigned_names(&k), ["_tmp[i, 1:N]", "A[i, 1:N]"]);
    }

    #[test]
    fn same_element_self_read_needs_no_temporary() {
        let k = kernel(
            "def f(A, M, N):\n    #pragma parallel for\n    for i in range(M):\n        A[i, 1:N] = A[i, 1:N] * 2.0\n",
            false,
        );
        assert!(k.temps.is_empty());
    }

    #[test]
    fn another_row_at_the_same_columns_needs_no_temporary() {
        let k = kernel(
            "def f(P, N, k):\n    #pragma parallel for\n    for i in range(N):\n        P[i, :N] = np.minimum(P[i, :N], P[k, :N])\n",
            false,
        );
        assert!(k.temps.is_empty());
    }

    #[test]
    fn one_element_of_the_target_is_read_into_a_scalar_first() {
        let k = kernel(
            "def f(A, M, N, p):\n    #pragma parallel for\n    for i in range(M):\n        A[i, :N] = A[i, :N] - A[i, p]\n",
            false,
        );
        assert!(k.temps.is_empty());
        assert_eq!(assigned_names(&k), ["_elem", "A[i, :N]"]);
    }

    #[test]
    fn a_transposed_read_still_goes_through_a_temporary() {
        let k = kernel(
            "def f(A, N):\n    #pragma parallel for\n    for i in range(N):\n        A[i, :N] = A[:N, i] + A[i, 0]\n",
            false,
        );
        assert_eq!(k.temps, vec![("_tmp".to_string(), "A".to_string())]);
    }

    #[test]
    fn a_reduction_that_keeps_a_dimension_inside_a_larger_value_is_fused() {
        // A row times a matrix, scaled and added: one accumulator per element of the row,
        // stored once through the rest of the value (hoisting it would need a vector temporary).
        let k = kernel(
            "def f(alpha, beta, C, A, B, M, N, K):\n    #pragma parallel for\n    for i in range(M):\n        C[i, :N] = beta * C[i, :N] + alpha * (A[i, :K] @ B[:K, :N])\n",
            true,
        );
        let mut stores = vec![];
        for s in &k.body {
            s.walk(&mut |st| {
                if let StmtKind::Assign { target, value, .. } = &st.kind {
                    stores.push(format!(
                        "{} = {}",
                        crate::ir::python::expr(target),
                        crate::ir::python::expr(value)
                    ));
                }
            });
        }
        assert_eq!(stores.len(), 3, "{stores:?}");
        assert!(stores[0].starts_with("_acc = 0"), "{stores:?}");
        assert!(stores[1].starts_with("_acc = _acc + A[i, "), "{stores:?}");
        assert!(
            stores[2].ends_with("= beta * C[i, _i] + alpha * _acc"),
            "{stores:?}"
        );
        // Two such reductions still need the temporary, which is an error.
        let f = attached(
            "def f(C, A, B, M, N, K):\n    #pragma parallel for\n    for i in range(M):\n        C[i, :N] = (A[i, :K] @ B[:K, :N]) * (A[i, :K] @ B[:K, :N])\n",
        )
        .unwrap();
        let mut k = crate::passes::outline::run(&f).unwrap().remove(0);
        assert!(split(&mut k)
            .unwrap_err()
            .message
            .contains("temporary array"));
    }

    #[test]
    fn nested_reduction_is_split_and_fused() {
        let k = kernel(
            "def f(a, b, M, N):\n    #pragma parallel for\n    for i in range(M):\n        b[i, :N] = a[i, :N] / np.sum(a[i, :N])\n",
            true,
        );
        // `_r` accumulates in a register (`_acc`) over a simd loop, then the row is divided.
        let names = assigned_names(&k);
        assert_eq!(names[0], "_acc", "{names:?}");
        assert!(names.contains(&"_r".to_string()), "{names:?}");
        assert_eq!(names.last().unwrap(), "b[i, _i1]", "{names:?}");
    }

    #[test]
    fn reduced_dimension_must_be_innermost() {
        let f = attached(
            "def f(A, r, M, N):\n    #pragma parallel for\n    for i in range(M):\n        #pragma :N=>reduce(sum)\n        r[i] = np.sum(A[i, :N])\n",
        )
        .unwrap();
        let mut k = crate::passes::outline::run(&f).unwrap().remove(0);
        split(&mut k).unwrap();
        lower(&mut k, &Options { auto_simd: true }).unwrap();
        let f = attached(
            "def f(A, r, M, N):\n    #pragma :M=>parallel :N=>reduce(max)\n    r[:M] = np.sum(A[:M, :N], axis=1)\n",
        )
        .unwrap();
        let mut k = crate::passes::outline::run(&f).unwrap().remove(0);
        split(&mut k).unwrap();
        let e = lower(&mut k, &Options { auto_simd: true }).unwrap_err();
        assert!(
            e.message
                .contains("says `max` but the statement reduces with `sum`"),
            "{}",
            e.message
        );
    }

    // ----------------------------------------------------------- the steps of `statement`

    /// The first tensor statement of `src`'s first kernel (after `split`), its analysis and
    /// the kernel's lowering context.
    fn analysed(src: &str, auto_simd: bool) -> (Stmt, TensorStmt, LowerCx) {
        let k = kernel(src, false);
        let cx = LowerCx::of(&k, &Options { auto_simd });
        let mut found = None;
        for s in &k.body {
            s.walk(&mut |st| {
                if found.is_none() && is_tensor_assign(st) {
                    found = Some(st.clone());
                }
            });
        }
        let s = found.expect("a tensor statement");
        let StmtKind::Assign { target, value, .. } = &s.kind else {
            unreachable!()
        };
        let t = cx.analyse_statement(target, value, &mut vec![]).unwrap();
        (s, t, cx)
    }

    /// `analysed`, with the dimensions ordered by the statement's pragma.
    fn ordered(src: &str) -> (Stmt, TensorStmt, LowerCx, DimOrder) {
        let (s, t, cx) = analysed(src, true);
        let pragmas = dim_pragmas(&s).cloned().unwrap_or_default();
        let dims = cx
            .order_dimensions(&t, &pragmas, &mut HashSet::new())
            .unwrap();
        (s, t, cx, dims)
    }

    /// The message of the error `lower` reports for `src`.
    fn lower_error(src: &str) -> String {
        let f = attached(src).unwrap();
        let mut k = crate::passes::outline::run(&f).unwrap().remove(0);
        split(&mut k).unwrap();
        lower(&mut k, &Options { auto_simd: true })
            .unwrap_err()
            .message
    }

    fn py(e: &Expr) -> String {
        crate::ir::python::expr(e)
    }

    const ROW_SUM: &str = "def f(A, y, L, M, N):\n    #pragma parallel for\n    for i in range(L):\n        y[i, :M] = np.sum(A[i, :M, :N], axis=1)\n";

    #[test]
    fn lengths_assumed_equal_become_launch_checks() {
        let (s, _, cx) = analysed(
            "def f(A, B, M):\n    #pragma parallel for\n    for i in range(M):\n        A[i, 2:] = B[i, 2:]\n",
            true,
        );
        let StmtKind::Assign { target, value, .. } = &s.kind else {
            unreachable!()
        };
        let mut checks = vec![];
        cx.analyse_statement(target, value, &mut checks).unwrap();
        assert!(
            matches!(checks.as_slice(), [LaunchCheck::Equal(..)]),
            "{checks:?}"
        );
    }

    #[test]
    fn a_bound_slice_runs_only_the_first_dimension_it_matches() {
        let (_, t, cx) = analysed(
            "def f(A, B, N):\n    #pragma :N=>parallel\n    B[:N, :N] = A[:N, :N]\n",
            true,
        );
        assert_eq!(cx.grid_runs(&t), [Some(Run::Grid(0)), None]);
    }

    #[test]
    fn pragma_slices_claim_dimensions_in_order() {
        let (s, t, cx) = analysed(
            "def f(A, B):\n    #pragma 1:-1=>parallel 1:-1=>simd\n    B[1:-1, 1:-1] = A[:-2, 1:-1] + A[2:, 1:-1]\n",
            true,
        );
        let mut run = cx.grid_runs(&t);
        let mut matched = HashSet::new();
        let (order, reduce_ops) =
            claim_pragma_dims(&t, dim_pragmas(&s).unwrap(), &mut run, &mut matched).unwrap();
        assert_eq!(order, [0, 1]);
        assert_eq!(
            run,
            [
                Some(Run::Grid(0)),
                Some(Run::Vector(VectorProp::Simd(Width::Mvl)))
            ]
        );
        assert!(reduce_ops.iter().all(Option::is_none));
        assert_eq!(matched.len(), 2);
    }

    #[test]
    fn parallel_inside_a_parallel_loop_is_an_error() {
        let e = lower_error(
            "def f(A, B, M, N):\n    #pragma parallel for\n    for i in range(M):\n        #pragma :N=>parallel\n        B[i, :N] = A[i, :N]\n",
        );
        assert!(
            e.contains("only allowed on function-level statements"),
            "{e}"
        );
    }

    #[test]
    fn unlisted_dimensions_are_outputs_then_reduced_ones_and_grid_ones_leave_the_nest() {
        let (_, t, cx) = analysed(ROW_SUM, true);
        let mut run = cx.grid_runs(&t);
        let mut order = vec![];
        complete_order(&t, &mut order, &mut run);
        assert_eq!(order, [t.output[0], t.reduced[0]]);
        assert!(run.iter().all(|r| *r == Some(Run::Sequential)), "{run:?}");

        let (_, t, cx) = analysed(
            "def f(A, B, N):\n    #pragma :N=>parallel\n    B[:N] = A[:N]\n",
            true,
        );
        let mut run = cx.grid_runs(&t);
        let mut order = vec![];
        complete_order(&t, &mut order, &mut run);
        assert!(order.is_empty(), "{order:?}");
        assert_eq!(run, [Some(Run::Grid(0))]);
    }

    #[test]
    fn auto_simd_vectorises_the_innermost_loop_unless_a_vector_was_chosen() {
        let mut run = vec![Some(Run::Sequential), Some(Run::Sequential)];
        auto_vectorise(&[1, 0], &mut run);
        assert_eq!(
            run,
            [
                Some(Run::Vector(VectorProp::Simd(Width::Mvl))),
                Some(Run::Sequential)
            ]
        );
        let chosen = vec![Some(Run::Vector(VectorProp::Le(16))), Some(Run::Sequential)];
        let mut run = chosen.clone();
        auto_vectorise(&[0, 1], &mut run);
        assert_eq!(run, chosen);
    }

    #[test]
    fn a_2d_tile_gets_tile_rows_and_must_be_innermost() {
        let (_, t, _) = analysed(
            "def f(A, B, L, M, N):\n    #pragma parallel for\n    for i in range(L):\n        B[i, :L, :M, :N] = A[i, :L, :M, :N]\n",
            true,
        );
        let mvl = Some(Run::Vector(VectorProp::Simd(Width::Mvl)));
        let mut run = vec![Some(Run::Sequential), mvl, mvl];
        shape_tile(&t, &[0, 1, 2], &mut run).unwrap();
        assert_eq!(
            run[1],
            Some(Run::Vector(VectorProp::Simd(Width::Fixed(TILE_ROWS))))
        );
        assert_eq!(run[2], mvl);

        let mut run = vec![mvl, mvl, Some(Run::Sequential)];
        let e = shape_tile(&t, &[0, 1, 2], &mut run).unwrap_err();
        assert!(
            e.message.contains("must be the innermost ones"),
            "{}",
            e.message
        );

        let mut run = vec![mvl, mvl, mvl];
        let e = shape_tile(&t, &[0, 1, 2], &mut run).unwrap_err();
        assert!(e.message.contains("at most two"), "{}", e.message);
    }

    #[test]
    fn a_reduction_takes_no_2d_tile() {
        let (_, t, _) = analysed(ROW_SUM, true);
        let mvl = Some(Run::Vector(VectorProp::Simd(Width::Mvl)));
        let mut run = vec![mvl, mvl];
        let order = [t.output[0], t.reduced[0]];
        let e = shape_tile(&t, &order, &mut run).unwrap_err();
        assert!(
            e.message
                .contains("two vectorised dimensions is not supported"),
            "{}",
            e.message
        );
    }

    #[test]
    fn reduced_dimensions_are_the_innermost_loops() {
        let (_, t, _) = analysed(ROW_SUM, true);
        let (kept, reduced) = (t.output[0], t.reduced[0]);
        let mut run = vec![Some(Run::Sequential); 2];
        run[reduced] = Some(Run::Vector(VectorProp::Simd(Width::Mvl)));
        check_reduced_innermost(&t, &[kept, reduced], &run).unwrap();
        let e = check_reduced_innermost(&t, &[reduced, kept], &run).unwrap_err();
        assert!(
            e.message.contains("kept dimension is ordered inside"),
            "{}",
            e.message
        );
        let mut run = vec![Some(Run::Sequential); 2];
        run[kept] = Some(Run::Vector(VectorProp::Simd(Width::Mvl)));
        let e = check_reduced_innermost(&t, &[kept, reduced], &run).unwrap_err();
        assert!(
            e.message.contains("vectorised kept dimension"),
            "{}",
            e.message
        );
    }

    #[test]
    fn reduce_properties_must_name_the_statement_s_reduction() {
        let e = lower_error(
            "def f(A, r, M, N):\n    #pragma parallel for\n    for i in range(M):\n        #pragma :N=>reduce(sum:tmp)\n        r[i] = np.sum(A[i, :N])\n",
        );
        assert!(
            e.contains("reduces into `tmp` but the statement assigns `r`"),
            "{e}"
        );
        let e = lower_error(
            "def f(A, B, M, N):\n    #pragma parallel for\n    for i in range(M):\n        #pragma :N=>reduce(sum)\n        B[i, :N] = A[i, :N]\n",
        );
        assert!(e.contains("not reduced by the statement"), "{e}");
    }

    #[test]
    fn an_le_strip_is_a_fixed_width_loop_with_a_launch_check() {
        let (s, t, cx, dims) = ordered(
            "def f(A, B, M, N):\n    #pragma parallel for\n    for i in range(M):\n        #pragma :N=>le(64)\n        B[i, :N] = A[i, :N] * 2.0\n",
        );
        let nest = Nest::new(&cx, &t, &dims, s.span, &mut HashSet::new());
        let mut checks = vec![];
        let l = nest.make_loop(dims.order[0], vec![], &mut checks);
        let StmtKind::For { var, kind, .. } = &l.kind else {
            panic!("{l:?}")
        };
        assert_eq!(
            (var.as_str(), *kind),
            ("_i", LoopKind::Simd(Width::Fixed(64)))
        );
        assert!(
            matches!(checks.as_slice(), [LaunchCheck::AtMost(e, 64, _)] if py(e) == "N"),
            "{checks:?}"
        );
    }

    #[test]
    fn grid_dimensions_index_with_the_kernel_s_variable_shifted_by_the_slice() {
        let (s, t, cx, dims) = ordered(
            "def f(A, B, N):\n    #pragma 1:N-1=>parallel\n    B[1:N-1] = A[:N-2] + A[2:N]\n",
        );
        let nest = Nest::new(&cx, &t, &dims, s.span, &mut HashSet::new());
        let inner = nest.innermost(false, &mut HashSet::new(), &mut vec![]);
        let [Stmt {
            kind: StmtKind::Assign { target, value, .. },
            ..
        }] = inner.as_slice()
        else {
            panic!("{inner:?}")
        };
        let g = &cx.grid_vars[0];
        assert_eq!(py(target), format!("B[{g}]"));
        assert_eq!(py(value), format!("A[{g} - 1] + A[{g} + 1]"));
    }

    #[test]
    fn max_accumulates_from_the_first_element_and_stores_once() {
        let (s, t, cx, dims) = ordered(
            "def f(A, r, M, N):\n    #pragma parallel for\n    for i in range(M):\n        r[i] = np.max(A[i, 1:N])\n",
        );
        let mut used = HashSet::new();
        let nest = Nest::new(&cx, &t, &dims, s.span, &mut used);
        let inner = nest.innermost(false, &mut used, &mut vec![]);
        let text: Vec<String> = inner
            .iter()
            .map(|st| match &st.kind {
                StmtKind::Assign { target, value, .. } => format!("{} = {}", py(target), py(value)),
                StmtKind::For { var, body, .. } => format!("for {var}: {body:?}"),
                _ => panic!("{st:?}"),
            })
            .collect();
        assert_eq!(text[0], "_acc = A[i, 1]");
        assert!(text[1].starts_with("for _i: "), "{text:?}");
        assert_eq!(text[2], "r[i] = _acc");
    }

    #[test]
    fn an_update_by_a_reduction_combines_with_the_target() {
        let (s, t, cx, dims) = ordered(
            "def f(A, r, M, N):\n    #pragma parallel for\n    for i in range(M):\n        r[i] = r[i] + np.sum(A[i, :N])\n",
        );
        let mut used = HashSet::new();
        let nest = Nest::new(&cx, &t, &dims, s.span, &mut used);
        let inner = nest.innermost(false, &mut used, &mut vec![]);
        let StmtKind::Assign { target, value, .. } = &inner.last().unwrap().kind else {
            panic!("{inner:?}")
        };
        assert_eq!(
            format!("{} = {}", py(target), py(value)),
            "r[i] = r[i] + _acc"
        );
        let StmtKind::Assign { value, .. } = &inner[0].kind else {
            panic!("{inner:?}")
        };
        assert_eq!(py(value), "0");
    }
}
