//! Tensor statements in sliced index notation: which dimensions a statement has, how its slices
//! map onto them, and what it reduces. Shared by `split_tensor` and `lower_tensor`.
//!
//! Every slice (`lo:hi` of an array dimension) is an occurrence; broadcasting (right-aligned,
//! as in NumPy) and the assignment unify occurrences into dimensions. Occurrences of one
//! dimension must have the same length, decided symbolically; each is then indexed as the
//! dimension's variable plus its constant (or symbolic) offset from the dimension's first slice.

use super::affine::Affine;
use crate::diag::{Diagnostic, Result};
use crate::frontend::source::Span;
use crate::ir::*;

/// One dimension of a tensor statement.
#[derive(Debug, Clone)]
pub struct Dim {
    /// The canonical slice: the target's, or the first one seen.
    pub lo: Expr,
    pub hi: Expr,
    pub span: Span,
    /// Every slice of the statement that names this dimension.
    pub slices: Vec<(Expr, Expr)>,
}

impl Dim {
    pub fn extent(&self) -> Affine {
        Affine::of(&self.hi).sub(&Affine::of(&self.lo))
    }

    /// Does the slice `lo:hi` name this dimension, possibly shifted by a constant?
    pub fn matches(&self, lo: &Expr, hi: &Expr) -> Option<Affine> {
        self.matches_affine(&Affine::of(lo), &Affine::of(hi))
    }

    pub fn matches_affine(&self, lo: &Affine, hi: &Affine) -> Option<Affine> {
        let shift = lo.sub(&Affine::of(&self.lo));
        let len = hi.sub(lo);
        (shift.as_constant().is_some() && len == self.extent()).then_some(shift)
    }
}

/// The analysed statement: slices replaced by `dim_var(d) + offset`, reductions by
/// `Call { func: "__reduce_<op>:<d>,<d>" }`.
#[derive(Debug, Clone)]
pub struct TensorStmt {
    pub dims: Vec<Dim>,
    pub target: Expr,
    pub value: Expr,
    /// The target's dimensions, in order.
    pub output: Vec<usize>,
    /// Dimensions reduced somewhere in the value.
    pub reduced: Vec<usize>,
    /// Pairs of slice lengths that must be equal at run time (see `Analyser::assumed`).
    pub assumed: Vec<(Expr, Expr, Span)>,
}

/// `hi - lo`, or `hi` when `lo` is 0: the length of a slice, for messages and launch checks.
pub fn extent_expr(lo: &Expr, hi: &Expr) -> Expr {
    match lo.kind {
        ExprKind::Int(0) => hi.clone(),
        _ => Expr::binary(BinOp::Sub, hi.clone(), lo.clone()),
    }
}

/// The placeholder name of dimension `d` in an analysed statement.
pub fn dim_var(d: usize) -> String {
    format!("__dim{d}")
}

pub const REDUCE_PREFIX: &str = "__reduce_";

/// Parses the reduction marker `__reduce_sum:0,2` back into its operator and dimensions.
pub fn reduce_marker(func: &str) -> Option<(ReduceOp, Vec<usize>)> {
    let rest = func.strip_prefix(REDUCE_PREFIX)?;
    let (op, dims) = rest.split_once(':')?;
    let op = match op {
        "sum" => ReduceOp::Sum,
        "max" => ReduceOp::Max,
        "min" => ReduceOp::Min,
        _ => return None,
    };
    let dims = dims
        .split(',')
        .filter(|d| !d.is_empty())
        .map(|d| d.parse().ok())
        .collect::<Option<Vec<usize>>>()?;
    Some((op, dims))
}

/// The reduction a call performs on tensors: `np.sum(x)`, `sum(x)`, `np.max(x, axis)`, ...
pub fn reduction_call(func: &str, nargs: usize) -> Option<ReduceOp> {
    let name = func
        .strip_prefix("np.")
        .or_else(|| func.strip_prefix("numpy."))
        .map(|n| (n, true))
        .unwrap_or((func, false));
    match name {
        ("sum", _) if nargs <= 2 => Some(ReduceOp::Sum),
        ("max" | "amax", true) if nargs <= 2 => Some(ReduceOp::Max),
        ("min" | "amin", true) if nargs <= 2 => Some(ReduceOp::Min),
        // The builtins with one argument reduce it; with two they are element-wise.
        ("max", false) if nargs == 1 => Some(ReduceOp::Max),
        ("min", false) if nargs == 1 => Some(ReduceOp::Min),
        _ => None,
    }
}

pub fn is_product_call(func: &str) -> bool {
    matches!(func, "np.matmul" | "np.dot" | "numpy.matmul" | "numpy.dot")
}

/// Is this assignment a tensor statement (slices, new axes, or tensor reductions)?
pub fn is_tensor_stmt(target: &Expr, value: &Expr) -> bool {
    is_tensor_expr(target) || is_tensor_expr(value)
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Axis {
    Occ(usize),
    One,
}

struct Occ {
    lo: Expr,
    hi: Expr,
    span: Span,
    in_target: bool,
}

struct Analyser {
    occs: Vec<Occ>,
    parent: Vec<usize>,
    /// Extents that cannot be compared symbolically (`A.shape[1] - 2` against `B.shape[1] - 2`):
    /// NumPy requires them equal at run time, so the launcher checks them.
    assumed: Vec<(Expr, Expr, Span)>,
}

impl Analyser {
    fn find(&mut self, mut o: usize) -> usize {
        while self.parent[o] != o {
            self.parent[o] = self.parent[self.parent[o]];
            o = self.parent[o];
        }
        o
    }

    fn unify(&mut self, a: usize, b: usize) -> Result<()> {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra == rb {
            return Ok(());
        }
        let len = |o: &Occ| Affine::of(&o.hi).sub(&Affine::of(&o.lo));
        let diff = len(&self.occs[ra]).sub(&len(&self.occs[rb]));
        if !diff.is_zero() && diff.as_constant().is_none() {
            let ext = |o: &Occ| extent_expr(&o.lo, &o.hi);
            let (x, y) = (&self.occs[ra], &self.occs[rb]);
            self.assumed.push((ext(x), ext(y), y.span));
        } else if !diff.is_zero() {
            let (x, y) = (&self.occs[a], &self.occs[b]);
            return Err(Diagnostic::error(
                y.span,
                format!(
                    "this slice's length ({}) differs from the slice it is combined with ({})",
                    crate::ir::python::expr(&Expr::binary(BinOp::Sub, y.hi.clone(), y.lo.clone())),
                    crate::ir::python::expr(&Expr::binary(BinOp::Sub, x.hi.clone(), x.lo.clone())),
                ),
            )
            .with_help("slices that meet in one expression must have the same length (they may be shifted)"));
        }
        // Keep a target occurrence as the root: it defines the dimension's loop bounds.
        if self.occs[rb].in_target && !self.occs[ra].in_target {
            self.parent[ra] = rb;
        } else {
            self.parent[rb] = ra;
        }
        Ok(())
    }

    /// Replaces every slice by an occurrence placeholder `__occ<k>`.
    fn mark(&mut self, e: Expr, in_target: bool) -> Expr {
        e.rewrite(&mut |mut x| {
            if let ExprKind::Subscript { array, indices } = &mut x.kind {
                for (d, ix) in indices.iter_mut().enumerate() {
                    if let Index::Slice { lo, hi, span } = ix {
                        let lo = lo.clone().unwrap_or_else(|| Expr::int(0, *span));
                        let hi = hi.clone().unwrap_or_else(|| {
                            Expr::new(
                                ExprKind::Shape {
                                    array: array.clone(),
                                    dim: d,
                                },
                                *span,
                            )
                        });
                        let k = self.occs.len();
                        self.occs.push(Occ {
                            lo,
                            hi,
                            span: *span,
                            in_target,
                        });
                        self.parent.push(k);
                        *ix = Index::At(Expr::name(&format!("__occ{k}"), *span));
                    }
                }
            }
            x
        })
    }

    fn broadcast(&mut self, lists: Vec<Vec<Axis>>) -> Result<Vec<Axis>> {
        let len = lists.iter().map(Vec::len).max().unwrap_or(0);
        let mut out = vec![Axis::One; len];
        for l in &lists {
            let pad = len - l.len();
            for (i, a) in l.iter().enumerate() {
                if let Axis::Occ(o) = a {
                    match out[pad + i] {
                        Axis::One => out[pad + i] = Axis::Occ(*o),
                        Axis::Occ(p) => self.unify(p, *o)?,
                    }
                }
            }
        }
        Ok(out)
    }

    /// The axes of a marked expression; reductions are rewritten to markers over occurrences.
    fn axes(&mut self, e: &mut Expr) -> Result<Vec<Axis>> {
        let span = e.span;
        match &mut e.kind {
            ExprKind::Subscript { indices, .. } => self.index_axes(indices),
            ExprKind::Binary { left, right, .. } | ExprKind::Compare { left, right, .. } => {
                let l = self.axes(left)?;
                let r = self.axes(right)?;
                self.broadcast(vec![l, r])
            }
            ExprKind::Unary { operand, .. } => self.axes(operand),
            ExprKind::BoolOp { values, .. } => {
                let lists = values
                    .iter_mut()
                    .map(|v| self.axes(v))
                    .collect::<Result<Vec<_>>>()?;
                self.broadcast(lists)
            }
            ExprKind::IfExp { test, body, orelse } => {
                let lists = vec![self.axes(test)?, self.axes(body)?, self.axes(orelse)?];
                self.broadcast(lists)
            }
            ExprKind::Broadcast { value, keep } => {
                let out = self.kept_axes(value, keep, span)?;
                // The axes say where the value's own go: the marker has done its job.
                let inner_value = std::mem::replace(value.as_mut(), Expr::int(0, span));
                *e = inner_value;
                Ok(out)
            }
            ExprKind::Call { func, args } => {
                if let Some(op) = reduction_call(func, args.len()) {
                    let (reduced, kept) = self.reduction_axes(op, args, span)?;
                    *e = reduced;
                    return Ok(kept);
                }
                if is_product_call(func) {
                    let (product, kept) = self.product_axes(func, args, span)?;
                    *e = product;
                    return Ok(kept);
                }
                let lists = args
                    .iter_mut()
                    .map(|a| self.axes(a))
                    .collect::<Result<Vec<_>>>()?;
                self.broadcast(lists)
            }
            _ => Ok(vec![]),
        }
    }

    /// A subscript's axes: one per slice (its occurrence) or new axis, and a gather's index's.
    fn index_axes(&mut self, indices: &mut [Index]) -> Result<Vec<Axis>> {
        let mut out = vec![];
        for ix in indices.iter_mut() {
            match ix {
                Index::At(x) => {
                    if let ExprKind::Name(n) = &x.kind {
                        if let Some(k) = n.strip_prefix("__occ") {
                            out.push(Axis::Occ(k.parse().expect("marker")));
                            continue;
                        }
                    }
                    // A gather through a tensor index takes the index's axes.
                    out.extend(self.axes(x)?);
                }
                Index::NewAxis => out.push(Axis::One),
                Index::Slice { .. } => unreachable!("marked"),
            }
        }
        Ok(out)
    }

    /// `value[:, None]`: the value's axes where `keep` is true, new ones elsewhere; none for a
    /// scalar, which broadcasts to anything.
    fn kept_axes(&mut self, value: &mut Expr, keep: &[bool], span: Span) -> Result<Vec<Axis>> {
        let inner = self.axes(value)?;
        if inner.is_empty() {
            return Ok(vec![]);
        }
        let kept = keep.iter().filter(|k| **k).count();
        if kept != inner.len() {
            return Err(Diagnostic::error(
                span,
                format!(
                    "`[...]` keeps {kept} axes of a value that has {}",
                    inner.len()
                ),
            ));
        }
        let mut it = inner.into_iter();
        Ok(keep
            .iter()
            .map(|k| {
                if *k {
                    it.next().unwrap_or(Axis::One)
                } else {
                    Axis::One
                }
            })
            .collect())
    }

    /// `np.sum(x)`, `x.max(axis=k)`: the reduction as a marker over the occurrences of the
    /// reduced axes, and the axes kept.
    fn reduction_axes(
        &mut self,
        op: ReduceOp,
        args: &mut Vec<Expr>,
        span: Span,
    ) -> Result<(Expr, Vec<Axis>)> {
        let mut arg = args.remove(0);
        let ax = self.axes(&mut arg)?;
        let axis = reduction_axis(args.first(), ax.len())?;
        type Positioned = Vec<(usize, Axis)>;
        let (reduced, kept): (Positioned, Positioned) = ax
            .into_iter()
            .enumerate()
            .partition(|(i, _)| axis.is_none_or(|k| k == *i));
        if ax_is_empty(&reduced) && axis.is_none() {
            // A reduction of a scalar is the scalar (sum(x) of one element).
            return Ok((arg, vec![]));
        }
        let occs: Vec<usize> = reduced
            .iter()
            .filter_map(|(_, a)| match a {
                Axis::Occ(o) => Some(*o),
                Axis::One => None,
            })
            .collect();
        let kept = kept.into_iter().map(|(_, a)| a).collect();
        Ok((reduce_node(op, &occs, arg, span), kept))
    }

    /// `a @ b`, `np.dot(a, b)`: the product as a sum over the contracted occurrence, and the
    /// axes left (a vector times a vector, a matrix times a vector, a vector times a matrix,
    /// a matrix times a matrix).
    fn product_axes(
        &mut self,
        func: &str,
        args: &mut Vec<Expr>,
        span: Span,
    ) -> Result<(Expr, Vec<Axis>)> {
        if args.len() != 2 {
            return Err(Diagnostic::error(
                span,
                format!("`{func}` takes two arguments"),
            ));
        }
        let mut b = args.pop().expect("two");
        let mut a = args.pop().expect("two");
        let (aa, ba) = (self.axes(&mut a)?, self.axes(&mut b)?);
        let contracted = match (aa.as_slice(), ba.as_slice()) {
            ([.., Axis::Occ(k)], [Axis::Occ(l)]) => {
                self.unify(*k, *l)?;
                (*k, aa[..aa.len() - 1].to_vec())
            }
            ([Axis::Occ(k)], [Axis::Occ(l), rest @ ..]) if rest.len() == 1 => {
                self.unify(*k, *l)?;
                // `x @ B`: x becomes a column so the product broadcasts.
                a = Expr::new(
                    ExprKind::Broadcast {
                        value: Box::new(a),
                        keep: vec![true, false],
                    },
                    span,
                );
                (*k, rest.to_vec())
            }
            ([row @ Axis::Occ(_), Axis::Occ(k)], [Axis::Occ(l), col @ Axis::Occ(_)]) => {
                // Matrix times matrix: each (row, col) element sums over k, as a
                // row times a matrix does for each row (tile_dot makes it tiles).
                self.unify(*k, *l)?;
                (*k, vec![*row, *col])
            }
            _ => {
                return Err(Diagnostic::error(
                    span,
                    "only products of vectors and matrices of plain slices are compiled (a 3-D or broadcast operand is not); at function level without a pragma the product stays in torch",
                ))
            }
        };
        let product = Expr::binary(BinOp::Mul, a, b);
        // The column broadcast above has done its job in the axes already.
        let product = product.rewrite(&mut |x| match x.kind {
            ExprKind::Broadcast { value, .. } => *value,
            _ => x,
        });
        Ok((
            reduce_node(ReduceOp::Sum, &[contracted.0], product, span),
            contracted.1,
        ))
    }
}

/// A reduction's `axis` argument (after the value) over a value of `n` axes: none, or a
/// constant in range (negative counts from the end).
fn reduction_axis(axis: Option<&Expr>, n: usize) -> Result<Option<usize>> {
    match axis.map(|a| &a.kind) {
        None => Ok(None),
        Some(ExprKind::Int(k)) => {
            let n = n as i64;
            let k = if *k < 0 { *k + n } else { *k };
            if !(0..n).contains(&k) {
                return Err(Diagnostic::error(
                    axis.expect("matched").span,
                    format!("axis {k} is out of range for a value with {n} axes"),
                ));
            }
            Ok(Some(k as usize))
        }
        Some(_) => Err(Diagnostic::error(
            axis.expect("matched").span,
            "a reduction's axis must be an integer constant",
        )),
    }
}

fn ax_is_empty(v: &[(usize, Axis)]) -> bool {
    v.is_empty()
}

fn reduce_node(op: ReduceOp, occs: &[usize], value: Expr, span: Span) -> Expr {
    let list: Vec<String> = occs.iter().map(|o| format!("o{o}")).collect();
    Expr::new(
        ExprKind::Call {
            func: format!("{REDUCE_PREFIX}{}:{}", op.name(), list.join(",")),
            args: vec![value],
        },
        span,
    )
}

/// Analyses `target = value`. `bound` lists slices that are grid dimensions of the kernel
/// (a function-level statement's `parallel` dimensions): such a dimension may appear in the
/// value without appearing in a scalar target.
pub fn analyse(target: &Expr, value: &Expr, bound: &[(Expr, Expr)]) -> Result<TensorStmt> {
    let mut an = Analyser {
        occs: vec![],
        parent: vec![],
        assumed: vec![],
    };
    let mut t = an.mark(target.clone(), true);
    let mut v = an.mark(value.clone(), false);
    let t_axes = an.axes(&mut t)?;
    let v_axes = an.axes(&mut v)?;
    if v_axes.len() > t_axes.len() {
        // Extra leading value axes are fine only where they are bound grid dimensions.
        for a in &v_axes[..v_axes.len() - t_axes.len()] {
            if let Axis::Occ(o) = a {
                let occ = &an.occs[*o];
                let is_bound = bound.iter().any(|(lo, hi)| {
                    Dim {
                        lo: lo.clone(),
                        hi: hi.clone(),
                        span: occ.span,
                        slices: vec![],
                    }
                    .matches(&occ.lo, &occ.hi)
                    .is_some()
                });
                if !is_bound {
                    return Err(Diagnostic::error(
                        value.span,
                        "the value has more dimensions than the assigned target",
                    )
                    .with_help("reduce it (np.sum, np.max, ...) or slice the target"));
                }
            }
        }
    }
    // The value broadcasts to the target: right-aligned, as in NumPy.
    for (va, ta) in v_axes.iter().rev().zip(t_axes.iter().rev()) {
        if let (Axis::Occ(vo), Axis::Occ(to)) = (va, ta) {
            an.unify(*to, *vo)?;
        }
    }
    // Dimensions: one per union-find root, in order of first occurrence.
    let mut root_dim: Vec<Option<usize>> = vec![None; an.occs.len()];
    let mut dims: Vec<Dim> = vec![];
    let mut occ_dim = Vec::with_capacity(an.occs.len());
    for o in 0..an.occs.len() {
        let r = an.find(o);
        let d = match root_dim[r] {
            Some(d) => d,
            None => {
                dims.push(Dim {
                    lo: an.occs[r].lo.clone(),
                    hi: an.occs[r].hi.clone(),
                    span: an.occs[r].span,
                    slices: vec![],
                });
                root_dim[r] = Some(dims.len() - 1);
                dims.len() - 1
            }
        };
        occ_dim.push(d);
        dims[d]
            .slices
            .push((an.occs[o].lo.clone(), an.occs[o].hi.clone()));
    }
    let offsets: Vec<Affine> = (0..an.occs.len())
        .map(|o| Affine::of(&an.occs[o].lo).sub(&Affine::of(&dims[occ_dim[o]].lo)))
        .collect();
    let resolve = |e: Expr| {
        e.rewrite(&mut |mut x| {
            // New axes only shaped the broadcast; the loops index without them.
            if let ExprKind::Subscript { indices, .. } = &mut x.kind {
                indices.retain(|i| !matches!(i, Index::NewAxis));
            }
            x
        })
        .rewrite(&mut |x| match &x.kind {
            ExprKind::Name(n) if n.starts_with("__occ") => {
                let o: usize = n["__occ".len()..].parse().expect("marker");
                offsets[o].added_to(Expr::name(&dim_var(occ_dim[o]), x.span))
            }
            ExprKind::Call { func, args } if func.starts_with(REDUCE_PREFIX) => {
                let (op, _) = func[REDUCE_PREFIX.len()..].split_once(':').expect("marker");
                let ds: Vec<String> = func
                    .split(':')
                    .nth(1)
                    .unwrap_or("")
                    .split(',')
                    .filter(|s| !s.is_empty())
                    .map(|s| occ_dim[s[1..].parse::<usize>().expect("marker")].to_string())
                    .collect();
                Expr::new(
                    ExprKind::Call {
                        func: format!("{REDUCE_PREFIX}{op}:{}", ds.join(",")),
                        args: args.clone(),
                    },
                    x.span,
                )
            }
            _ => x,
        })
    };
    let target = resolve(t);
    let value = resolve(v);
    let output: Vec<usize> = t_axes
        .iter()
        .filter_map(|a| match a {
            Axis::Occ(o) => Some(occ_dim[*o]),
            Axis::One => None,
        })
        .collect();
    let mut reduced: Vec<usize> = vec![];
    value.walk(&mut |x| {
        if let ExprKind::Call { func, .. } = &x.kind {
            if let Some((_, ds)) = reduce_marker(func) {
                for d in ds {
                    if !reduced.contains(&d) {
                        reduced.push(d);
                    }
                }
            }
        }
    });
    if let Some(d) = reduced.iter().find(|d| output.contains(d)) {
        return Err(Diagnostic::error(
            dims[*d].span,
            "this dimension is reduced in one part of the statement and kept in another",
        )
        .with_help("split the statement: compute the reduction into its own array first"));
    }
    Ok(TensorStmt {
        dims,
        target,
        value,
        output,
        reduced,
        assumed: an.assumed,
    })
}

/// The shift of dimension `d` relative to the pragma slice `p`, if `p` names it (an open upper
/// bound names any dimension with the same start).
pub fn pragma_matches(
    p: &crate::ir::pragma::DimPragma,
    t: &TensorStmt,
    d: usize,
) -> Option<Affine> {
    let dim = &t.dims[d];
    // A negative constant counts from the end of this dimension's array, as in the statement.
    let end = Affine::of(&dim.hi).with_constant(0);
    let bound = |b: &Option<Expr>, default: Affine| match b.as_ref() {
        None => default,
        Some(Expr {
            kind: ExprKind::Int(v),
            ..
        }) if *v < 0 => end.with_constant(*v),
        Some(e) => Affine::of(e),
    };
    let lo = bound(&p.lo, Affine::default());
    let hi = bound(&p.hi, Affine::of(&dim.hi));
    dim.matches_affine(&lo, &hi)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::attach_pragmas::tests::attached;

    fn first_assign(src: &str) -> (Expr, Expr, Option<crate::ir::pragma::Pragma>) {
        let f = attached(src).unwrap();
        let s = f.body.into_iter().next().unwrap();
        let StmtKind::Assign { target, value, .. } = s.kind else {
            panic!()
        };
        (target, value, s.pragma)
    }

    #[test]
    fn shifted_and_open_slices_form_one_dimension() {
        let (t, v, p) = first_assign(
            "def f(A, B):\n    #pragma 1:-1=>parallel 1:-1=>simd\n    B[1:-1, 1:-1] = A[:-2, 1:-1] + A[2:, 1:-1]\n",
        );
        let ts = analyse(&t, &v, &[]).unwrap();
        assert_eq!(ts.dims.len(), 2, "{:#?}", ts.dims);
        assert_eq!(ts.output, vec![0, 1]);
        // Different arrays' shapes cannot be compared: checked at launch.
        assert!(!ts.assumed.is_empty());
        let crate::ir::pragma::Directive::Dimensions(pd) = p.unwrap().directive else {
            panic!()
        };
        assert!(
            pragma_matches(&pd[0], &ts, 0).is_some(),
            "{:?} vs {:?}",
            pd[0],
            ts.dims[0]
        );
        assert!(pragma_matches(&pd[1], &ts, 1).is_some());
    }

    #[test]
    fn reductions_name_their_dimensions() {
        let (t, v, _) = first_assign("def f(A, x, y, M, N):\n    y[:M] = A[:M, :N] @ x[:N]\n");
        let ts = analyse(&t, &v, &[]).unwrap();
        assert_eq!(ts.output, vec![0]);
        assert_eq!(ts.reduced, vec![1]);
        let (t, v, _) = first_assign("def f(A, c, M, N):\n    c[:N] = np.max(A[:M, :N], axis=0)\n");
        let ts = analyse(&t, &v, &[]).unwrap();
        assert_eq!(ts.reduced.len(), 1);
        assert_ne!(ts.output, ts.reduced);
        let (t, v, _) = first_assign("def f(A, B, M, N):\n    B[:M, :N] = A[:M, :N-1]\n");
        assert!(analyse(&t, &v, &[]).unwrap_err().message.contains("length"));
    }
}
