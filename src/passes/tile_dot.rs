//! tile_dot: a region whose every output element `C[i, j]` is a sum over `k` of products of an
//! `(i, k)` factor and a `(k, j)` factor gets a `TileNest` (2-D output tiles, `tl.dot` over
//! k-blocks); `body` is left for the general lowering, which the launcher falls back to.
//!
//! Contract: `tiles` is set only when the iterations `(i, j)` are independent — the region
//! writes one array, only at `C[i, j]` (one index `i`, one `j`), reads it nowhere else, and every
//! term reads only arrays the region does not write — so that computing them tile by tile, in
//! any order, with the sum reassociated, gives the sequential program's result. The decision is
//! made on dependences and index variables, never on names of kernels.
//!
//! Two loop shapes carry such nests (after `normalize`, so `+=` is `x = x + v`):
//! - a scalar accumulator: `for j: s = 0; for k: s = s + X ...; C[i, j] = E(s, C[i, j])`
//!   (several `k` loops may add into `s`);
//! - rank-1 updates: `for j: C[i, j] = P(C[i, j]) ...` (optional), then
//!   `for k: for j: C[i, j] = C[i, j] + X ...`, all over one `j` range.
//!
//! Tensor statements (row slices, `@`, `np.dot`, a function-level statement) are read as the
//! loops `lower_tensor` makes of them (`loop_view`), so slice notation has one reading.

use crate::diag::Diagnostic;
use crate::ir::*;

pub fn run(k: &mut Kernel, warnings: &mut Vec<Diagnostic>) {
    if k.tiles.is_none() {
        k.tiles = nest(k);
    }
    if k.tf32 && k.tiles.is_none() {
        warnings.push(
            Diagnostic::warning(
                k.pragma_span,
                "`tf32` has no effect here: the loop is not computed as tl.dot tiles",
            )
            .with_help(
                "tiles need each C[i, j] to be a sum over k of an (i, k) factor times a (k, j) factor (see ARCHITECTURE.md, tile_dot)",
            ),
        );
    }
}

fn nest(k: &Kernel) -> Option<TileNest> {
    if !k.shared.is_empty() || k.comm.is_some() {
        return None;
    }
    let view = loop_view(k)?;
    let [dim] = view.dims.as_slice() else {
        return None;
    };
    if dim.simd.is_some() || !is_int(&dim.range.step, 1) {
        return None;
    }
    let row = TileAxis {
        var: dim.var.clone(),
        start: dim.range.start.clone(),
        stop: dim.range.stop.clone(),
    };
    if row.start.mentions(&row.var) || row.stop.mentions(&row.var) {
        return None;
    }
    let mut used = view.names();
    let body: Vec<&Stmt> = view
        .body
        .iter()
        .filter(|s| !matches!(s.kind, StmtKind::Pass))
        .collect();
    let shape = scalar_accumulator(&body).or_else(|| rank_one_updates(&body, &mut used))?;
    check(row, shape)
}

/// `k` as loops: its tensor statements (`C[i, :i + 1] += alpha * A[i, k] * A[:i + 1, k]`,
/// `C[i, :N] += A[i, :K] @ B[:K, :N]`, a function-level `C[:M, :N] = A[:M, :K] @ B[:K, :N]`) as
/// the loop nests `lower_tensor` makes of them, on a copy (the kernel keeps its statements for
/// the general lowering), `split`'s copies of sums forwarded, and a function-level statement's
/// second grid dimension made a loop around the body. The loop shapes then decide on the same
/// dependences, with no second reading of slice notation.
fn loop_view(k: &Kernel) -> Option<Kernel> {
    let mut view = k.clone();
    let mut tensor = false;
    for s in &view.body {
        s.walk(&mut |st| tensor |= st.exprs().iter().any(|e| is_tensor_expr(e)));
    }
    if !tensor {
        return Some(view);
    }
    if view.dims.is_empty() || view.dims.len() > 2 || (view.bound.is_empty() && view.dims.len() > 1)
    {
        return None;
    }
    super::lower_tensor::split(&mut view).ok()?;
    super::lower_tensor::lower(
        &mut view,
        &super::lower_tensor::Options { auto_simd: false },
    )
    .ok()?;
    if !view.temps.is_empty() {
        return None;
    }
    view.body = without_copies(std::mem::take(&mut view.body));
    if let Some(col) = view.dims.get(1).cloned() {
        view.dims.truncate(1);
        let span = view.body[0].span;
        view.body = vec![Stmt::new(
            StmtKind::For {
                var: col.var,
                range: col.range,
                body: std::mem::take(&mut view.body),
                kind: LoopKind::Plain,
                vector: None,
                num_warps: None,
            },
            span,
        )];
    }
    view.bound.clear();
    Some(view)
}

/// `body` with each copy `r = a` of one name into another removed and `r` read as `a` after
/// it, inside loops too; kept when either name is assigned again later.
fn without_copies(body: Vec<Stmt>) -> Vec<Stmt> {
    let mut out: Vec<Stmt> = vec![];
    let mut rest = body.into_iter().peekable();
    while let Some(mut s) = rest.next() {
        if let StmtKind::For { body, .. } = &mut s.kind {
            *body = without_copies(std::mem::take(body));
        }
        let copy = match &s.kind {
            StmtKind::Assign {
                target,
                value,
                atomic: false,
            } => match (&target.kind, &value.kind) {
                (ExprKind::Name(r), ExprKind::Name(a)) => Some((r.clone(), a.clone())),
                _ => None,
            },
            _ => None,
        };
        let Some((r, a)) = copy else {
            out.push(s);
            continue;
        };
        let later: Vec<Stmt> = rest.collect();
        let assigned_later = later.iter().any(|t| {
            let mut hit = false;
            t.walk(&mut |st| {
                if let StmtKind::Assign { target, .. } = &st.kind {
                    hit |= matches!(&target.kind, ExprKind::Name(n) if *n == r || *n == a);
                }
                if let StmtKind::For { var, .. } = &st.kind {
                    hit |= *var == r || *var == a;
                }
            });
            hit
        });
        if assigned_later {
            out.push(s);
            out.extend(later);
            return out;
        }
        let by = Expr::name(&a, s.span);
        let mut renamed = later;
        for t in &mut renamed {
            t.rewrite_exprs(&mut |e| {
                e.rewrite(&mut |x| match &x.kind {
                    ExprKind::Name(n) if *n == r => by.clone(),
                    _ => x,
                })
            });
        }
        out.extend(without_copies(renamed));
        return out;
    }
    out
}

/// What a loop shape yields before the checks every shape shares.
struct Shape {
    col: TileAxis,
    /// Each reduction loop with the value it adds (`X`) and whether it subtracts it.
    sums: Vec<(TileAxis, Vec<(Expr, bool)>)>,
    target: Expr,
    acc: String,
    epilogue: Expr,
}

/// `for j: s = 0; for k: s = s + X; ...; C[i, j] = E(s, C[i, j])`.
fn scalar_accumulator(body: &[&Stmt]) -> Option<Shape> {
    let [outer] = body else { return None };
    let (col, inner) = unit_loop(outer)?;
    let [init, loops @ .., store] = inner.as_slice() else {
        return None;
    };
    let StmtKind::Assign {
        target: acc_target,
        value: zero,
        atomic: false,
    } = &init.kind
    else {
        return None;
    };
    let ExprKind::Name(acc) = &acc_target.kind else {
        return None;
    };
    if !matches!(zero.kind, ExprKind::Int(0))
        && !matches!(zero.kind, ExprKind::Float(v) if v == 0.0)
    {
        return None;
    }
    let mut sums = vec![];
    for l in loops {
        let (axis, lbody) = unit_loop(l)?;
        let mut adds = vec![];
        for s in lbody {
            let (t, x) = assignment(s)?;
            if !same_place(t, acc_target) {
                return None;
            }
            adds.push(sum_update(t, x)?);
        }
        if adds.is_empty() {
            return None;
        }
        sums.push((axis, adds));
    }
    let (target, epilogue) = assignment(store)?;
    if sums.is_empty()
        || !epilogue.mentions(acc)
        || !matches!(target.kind, ExprKind::Subscript { .. })
    {
        return None;
    }
    Some(Shape {
        col,
        sums,
        target: target.clone(),
        acc: acc.clone(),
        epilogue: epilogue.clone(),
    })
}

/// `for j: C[i, j] = P(C[i, j])` (any number), then `for k: for j: C[i, j] = C[i, j] + X`.
fn rank_one_updates(body: &[&Stmt], used: &mut std::collections::HashSet<String>) -> Option<Shape> {
    let split = body.iter().position(|s| {
        unit_loop(s)
            .is_some_and(|(_, b)| matches!(b.as_slice(), [inner] if unit_loop(inner).is_some()))
    })?;
    let (prologue, updates) = body.split_at(split);
    let mut col: Option<TileAxis> = None;
    let mut target: Option<Expr> = None;
    // `e` of a loop over `axis`, in terms of the column variable: every loop must run over the
    // column range (its own variable read as the column's; lower_tensor names each statement's
    // loop afresh), and must not read the column variable itself (stale after its loop).
    let mut on_column = |axis: TileAxis, e: &Expr| -> Option<Expr> {
        let c = col.get_or_insert_with(|| axis.clone());
        if !same_place(&c.start, &axis.start) || !same_place(&c.stop, &axis.stop) {
            return None;
        }
        if axis.var == c.var {
            return Some(e.clone());
        }
        if e.mentions(&c.var) {
            return None;
        }
        let by = Expr::name(&c.var, e.span);
        Some(e.clone().rewrite(&mut |x| match &x.kind {
            ExprKind::Name(n) if *n == axis.var => by.clone(),
            _ => x,
        }))
    };
    let mut same_target = |t: &Expr| match &target {
        None => {
            target = Some(t.clone());
            matches!(t.kind, ExprKind::Subscript { .. })
        }
        Some(c) => same_place(c, t),
    };
    // The element's value before the updates, as an expression of its old value.
    let mut before: Option<Expr> = None;
    for p in prologue {
        let (axis, pbody) = unit_loop(p)?;
        let [stmt] = pbody.as_slice() else {
            return None;
        };
        let (t, value) = assignment(stmt)?;
        let (t, value) = (on_column(axis.clone(), t)?, on_column(axis, value)?);
        if !same_target(&t) {
            return None;
        }
        let previous = before.clone().unwrap_or_else(|| t.clone());
        before = Some(substitute_place(&value, &t, &previous));
    }
    let mut sums = vec![];
    for u in updates {
        let (axis, ubody) = unit_loop(u)?;
        let [inner] = ubody.as_slice() else {
            return None;
        };
        let (jaxis, jbody) = unit_loop(inner)?;
        let mut adds = vec![];
        for s in &jbody {
            let (t, x) = assignment(s)?;
            let (t, x) = (on_column(jaxis.clone(), t)?, on_column(jaxis.clone(), x)?);
            if !same_target(&t) {
                return None;
            }
            adds.push(sum_update(&t, &x)?);
        }
        if adds.is_empty() {
            return None;
        }
        sums.push((axis, adds));
    }
    let target = target?;
    let acc = fresh_name("acc", used);
    let span = target.span;
    let epilogue = Expr::binary(
        BinOp::Add,
        before.unwrap_or_else(|| target.clone()),
        Expr::name(&acc, span),
    );
    Some(Shape {
        col: col?,
        sums,
        target,
        acc,
        epilogue,
    })
}

/// The checks every shape shares, and the split of each added value into dot terms.
fn check(row: TileAxis, shape: Shape) -> Option<TileNest> {
    let Shape {
        col,
        sums,
        target,
        acc,
        epilogue,
    } = shape;
    let (i, j) = (row.var.as_str(), col.var.as_str());
    if i == j || acc == i || acc == j {
        return None;
    }
    // The target: `C[..., i, ..., j, ...]`, the other indices mention no loop variable.
    let ExprKind::Subscript {
        array: out,
        indices,
    } = &target.kind
    else {
        return None;
    };
    let reduction_vars: Vec<String> = sums.iter().map(|(a, _)| a.var.clone()).collect();
    let loop_vars = |e: &Expr| {
        [i, j].iter().any(|v| e.mentions(v))
            || reduction_vars.iter().any(|v| e.mentions(v))
            || e.mentions(&acc)
    };
    let (mut rows, mut cols) = (0, 0);
    for ix in indices {
        let Index::At(e) = ix else { return None };
        match &e.kind {
            ExprKind::Name(n) if n == i => rows += 1,
            ExprKind::Name(n) if n == j => cols += 1,
            _ if loop_vars(e) || reads_array(e) => return None,
            _ => {}
        }
    }
    if rows != 1 || cols != 1 {
        return None;
    }
    // Column bounds: affine in `i` (so their extremes over rows are at the ends), nothing else.
    for b in [&col.start, &col.stop] {
        if b.mentions(j) || reduction_vars.iter().any(|k| b.mentions(k)) || !affine_in(b, i) {
            return None;
        }
    }
    // The epilogue reads the target only at its own element and no other loop variable.
    if reduction_vars.iter().any(|k| epilogue.mentions(k))
        || reads_other_element(&epilogue, out, &target)
        || is_tensor_expr(&epilogue)
    {
        return None;
    }
    let mut arrays = vec![out.clone()];
    collect_arrays(&epilogue, &mut arrays);
    let mut reductions = vec![];
    for (axis, adds) in sums {
        let k = axis.var.as_str();
        if k == i || k == j || k == acc {
            return None;
        }
        // A bound may mention `i` or `j` (the mask goes to that operand), not both.
        for b in [&axis.start, &axis.stop] {
            if (b.mentions(i) && b.mentions(j))
                || reduction_vars.iter().any(|v| b.mentions(v))
                || b.mentions(&acc)
                || reads_array(b)
            {
                return None;
            }
        }
        let mut terms = vec![];
        for (value, negated) in adds {
            if value.mentions(&acc) || is_tensor_expr(&value) {
                return None;
            }
            let mut arrays_read = vec![];
            collect_arrays(&value, &mut arrays_read);
            if arrays_read.contains(out) {
                return None;
            }
            for a in arrays_read {
                if !arrays.contains(&a) {
                    arrays.push(a);
                }
            }
            for (product, sign) in sum_terms(&value, negated)? {
                terms.push(dot_term(product, sign, i, j, k)?);
            }
        }
        reductions.push(TileReduction { axis, terms });
    }
    Some(TileNest {
        row,
        col,
        reductions,
        target,
        acc,
        epilogue,
        arrays,
    })
}

/// `for v in range(start, stop, 1)` (a plain or `simd` loop) and its body.
fn unit_loop(s: &Stmt) -> Option<(TileAxis, Vec<&Stmt>)> {
    let StmtKind::For {
        var,
        range,
        body,
        kind: LoopKind::Plain | LoopKind::Simd(_),
        ..
    } = &s.kind
    else {
        return None;
    };
    if !is_int(&range.step, 1) || range.start.mentions(var) || range.stop.mentions(var) {
        return None;
    }
    let body = body
        .iter()
        .filter(|s| !matches!(s.kind, StmtKind::Pass))
        .collect();
    Some((
        TileAxis {
            var: var.clone(),
            start: range.start.clone(),
            stop: range.stop.clone(),
        },
        body,
    ))
}

/// A plain (non-atomic) assignment's target and value.
fn assignment(s: &Stmt) -> Option<(&Expr, &Expr)> {
    match &s.kind {
        StmtKind::Assign {
            target,
            value,
            atomic: false,
        } => Some((target, value)),
        _ => None,
    }
}

/// `t = t + x` / `t = t - x`: `x` and whether it is subtracted.
fn sum_update(t: &Expr, value: &Expr) -> Option<(Expr, bool)> {
    match as_reduction(t, value)? {
        (ReduceOp::Sum, ReductionOperand::Plain(x)) => Some((x.clone(), false)),
        (ReduceOp::Sum, ReductionOperand::Negated(x)) => Some((x.clone(), true)),
        _ => None,
    }
}

/// `e` as a sum of signed products: `a*b - c*d` is `[(a*b, +), (c*d, -)]`.
fn sum_terms(e: &Expr, negated: bool) -> Option<Vec<(Expr, bool)>> {
    match &e.kind {
        ExprKind::Binary {
            op: op @ (BinOp::Add | BinOp::Sub),
            left,
            right,
        } => {
            let mut out = sum_terms(left, negated)?;
            out.extend(sum_terms(right, negated ^ (*op == BinOp::Sub))?);
            Some(out)
        }
        ExprKind::Unary {
            op: UnaryOp::Neg,
            operand,
        } => sum_terms(operand, !negated),
        _ => Some(vec![(e.clone(), negated)]),
    }
}

/// Splits a product into its `(i, k)` side, its `(k, j)` side and a scale (factors with no loop
/// variable, kept out of the operands so that their loads feed `tl.dot` directly). A factor
/// with `k` alone goes left; a factor with both `i` and `j`, or an empty side, is not a dot.
fn dot_term(product: Expr, negated: bool, i: &str, j: &str, k: &str) -> Option<DotTerm> {
    let mut factors = vec![];
    flatten_product(product, false, &mut factors)?;
    let (mut left, mut right, mut scale): (Option<Expr>, Option<Expr>, Option<Expr>) =
        (None, None, None);
    let mut has_k = false;
    for (f, divides) in factors {
        let (mi, mj, mk) = (f.mentions(i), f.mentions(j), f.mentions(k));
        has_k |= mk;
        let side = match (mi, mj, mk) {
            (true, true, _) => return None,
            (false, true, _) => &mut right,
            (false, false, false) => &mut scale,
            _ => &mut left,
        };
        let op = if divides { BinOp::Div } else { BinOp::Mul };
        *side = Some(match side.take() {
            None if divides => Expr::binary(BinOp::Div, Expr::new(ExprKind::Float(1.0), f.span), f),
            None => f,
            Some(acc) => Expr::binary(op, acc, f),
        });
    }
    match (left, right) {
        (Some(left), Some(right)) if has_k => Some(DotTerm {
            left,
            right,
            scale,
            negated,
        }),
        _ => None,
    }
}

/// The factors of `a * b / c` (with `true` for divisors); a quotient's divisor is one factor.
fn flatten_product(e: Expr, divides: bool, out: &mut Vec<(Expr, bool)>) -> Option<()> {
    match e.kind {
        ExprKind::Binary {
            op: BinOp::Mul,
            left,
            right,
        } if !divides => {
            flatten_product(*left, false, out)?;
            flatten_product(*right, false, out)
        }
        ExprKind::Binary {
            op: BinOp::Div,
            left,
            right,
        } if !divides => {
            flatten_product(*left, false, out)?;
            out.push((*right, true));
            Some(())
        }
        kind => {
            out.push((Expr { kind, span: e.span }, divides));
            Some(())
        }
    }
}

/// `e` is `a * var + b` with `a`, `b` free of `var` (so over a range of `var` its extremes are
/// at the ends).
fn affine_in(e: &Expr, var: &str) -> bool {
    if !e.mentions(var) {
        return true;
    }
    match &e.kind {
        ExprKind::Name(n) => n == var,
        ExprKind::Binary {
            op: BinOp::Add | BinOp::Sub,
            left,
            right,
        } => affine_in(left, var) && affine_in(right, var),
        ExprKind::Binary {
            op: BinOp::Mul,
            left,
            right,
        } => {
            (!left.mentions(var) && affine_in(right, var) && !reads_array(left))
                || (!right.mentions(var) && affine_in(left, var) && !reads_array(right))
        }
        ExprKind::Unary {
            op: UnaryOp::Neg,
            operand,
        } => affine_in(operand, var),
        _ => false,
    }
}

fn is_int(e: &Expr, v: i64) -> bool {
    matches!(e.kind, ExprKind::Int(x) if x == v)
}

fn reads_array(e: &Expr) -> bool {
    e.any(&mut |x| matches!(x.kind, ExprKind::Subscript { .. }))
}

fn collect_arrays(e: &Expr, out: &mut Vec<String>) {
    e.walk(&mut |x| {
        if let ExprKind::Subscript { array, .. } | ExprKind::Shape { array, .. } = &x.kind {
            if !out.contains(array) {
                out.push(array.clone());
            }
        }
    });
}

/// Whether `e` reads `array` anywhere but at `place`.
fn reads_other_element(e: &Expr, array: &str, place: &Expr) -> bool {
    e.any(&mut |x| {
        matches!(&x.kind, ExprKind::Subscript { array: a, .. } if a == array)
            && !same_place(x, place)
    })
}

/// `value` with every occurrence of `place` replaced by `by`.
fn substitute_place(value: &Expr, place: &Expr, by: &Expr) -> Expr {
    value
        .clone()
        .rewrite(&mut |x| if same_place(&x, place) { by.clone() } else { x })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::attach_pragmas::tests::attached;

    /// The first region of `src`'s first function, with this pass run on it.
    fn region(src: &str) -> Kernel {
        region_and_warnings(src).0
    }

    fn region_and_warnings(src: &str) -> (Kernel, Vec<Diagnostic>) {
        let f = attached(src).unwrap();
        let mut k = crate::passes::outline::run(&f).unwrap().remove(0);
        let mut warnings = vec![];
        run(&mut k, &mut warnings);
        (k, warnings)
    }

    fn text(e: &Expr) -> String {
        crate::ir::python::expr(e)
    }

    const GEMM_ACC: &str = "
def f(alpha, beta, C, A, B, NI, NJ, NK):
    #pragma parallel for
    for i in range(NI):
        for j in range(NJ):
            s = 0.0
            #pragma simd
            for k in range(NK):
                s += A[i, k] * B[k, j]
            C[i, j] = beta * C[i, j] + alpha * s
";

    #[test]
    fn a_scalar_accumulator_nest_becomes_one_dot() {
        let t = region(GEMM_ACC).tiles.expect("tiled");
        assert_eq!((t.row.var.as_str(), t.col.var.as_str()), ("i", "j"));
        assert_eq!(t.acc, "s");
        assert_eq!(text(&t.epilogue), "beta * C[i, j] + alpha * s");
        let [r] = t.reductions.as_slice() else {
            panic!()
        };
        let [term] = r.terms.as_slice() else { panic!() };
        assert_eq!(
            (text(&term.left), text(&term.right)),
            ("A[i, k]".into(), "B[k, j]".into())
        );
        assert_eq!(t.arrays, ["C", "A", "B"]);
    }

    #[test]
    fn rank_one_updates_with_a_prologue_fold_into_the_epilogue() {
        let t = region(
            "
def f(alpha, beta, C, A, N, M):
    #pragma parallel for
    for i in range(N):
        #pragma simd
        for j in range(i + 1):
            C[i, j] *= beta
        for k in range(M):
            #pragma simd
            for j in range(i + 1):
                C[i, j] += A[j, k] * alpha * B[i, k] - B[j, k] * alpha * A[i, k]
",
        )
        .tiles
        .expect("tiled");
        assert_eq!(text(&t.col.stop), "i + 1");
        assert_eq!(text(&t.epilogue), format!("C[i, j] * beta + {}", t.acc));
        let terms = &t.reductions[0].terms;
        assert_eq!(terms.len(), 2);
        // Factors with `i` go left, with `j` right, the others (alpha) to the scale.
        assert_eq!(text(&terms[0].left), "B[i, k]");
        assert_eq!(text(&terms[0].right), "A[j, k]");
        assert_eq!(terms[0].scale.as_ref().map(text).as_deref(), Some("alpha"));
        assert!(!terms[0].negated && terms[1].negated);
    }

    #[test]
    fn triangular_reduction_bounds_are_kept() {
        let t = region(
            "
def f(A, B, out, M, N):
    #pragma parallel for
    for i in range(M):
        for j in range(N):
            s = 0.0
            for k in range(i + 1, M):
                s += A[k, i] * B[k, j]
            out[i, j] = B[i, j] + s
",
        )
        .tiles
        .expect("tiled");
        assert_eq!(text(&t.reductions[0].axis.start), "i + 1");
    }

    #[test]
    fn reading_the_written_array_in_a_term_keeps_the_general_lowering() {
        // trmm in place: row i reads rows k > i that other iterations write.
        let k = region(
            "
def f(A, B, M, N):
    #pragma parallel for
    for i in range(M):
        for j in range(N):
            s = 0.0
            for k in range(i + 1, M):
                s += A[k, i] * B[k, j]
            B[i, j] += s
",
        );
        assert!(k.tiles.is_none());
    }

    #[test]
    fn shapes_that_are_not_a_product_of_two_sides_are_not_tiled() {
        for body in [
            // A factor with both i and j.
            "s += A[i, k] * B[k, j] * D[i, j]",
            // No factor with j: a row sum, not a dot.
            "s += A[i, k] * A[i, k]",
            // A max, not a sum.
            "s = max(s, A[i, k] * B[k, j])",
        ] {
            let src = GEMM_ACC.replace("s += A[i, k] * B[k, j]", body);
            assert!(region(&src).tiles.is_none(), "{body}");
        }
        // A transposed output is still one element per iteration; reading another is not.
        let src = GEMM_ACC.replace("C[i, j] = beta * C[i, j]", "C[j, i] = beta * C[j, i]");
        assert!(region(&src).tiles.is_some());
        let src = GEMM_ACC.replace("C[i, j] = beta * C[i, j]", "C[j, i] = beta * C[i, j]");
        assert!(region(&src).tiles.is_none());
        let src = GEMM_ACC.replace("C[i, j] = beta * C[i, j]", "C[i, j] = beta * C[i, 0]");
        assert!(region(&src).tiles.is_none());
    }

    #[test]
    fn row_slices_are_read_as_a_column_loop() {
        // APPy's tensor style of syrk: the slices `:i + 1` are the column loop.
        let t = region(
            "
def f(alpha, beta, C, A, N, M):
    #pragma parallel for
    for i in range(N):
        C[i, :i + 1] *= beta
        for k in range(M):
            C[i, :i + 1] += alpha * A[i, k] * A[:i + 1, k]
",
        )
        .tiles
        .expect("tiled");
        assert_eq!(text(&t.col.stop), "i + 1");
        assert_eq!(
            text(&t.reductions[0].terms[0].right),
            format!("A[{}, k]", t.col.var)
        );
        // A slice of another length, or one inside a reduction, is not followed.
        let k = region(
            "
def f(C, A, N, M):
    #pragma parallel for
    for i in range(N):
        for k in range(M):
            C[i, :N] += A[i, k] * A[1:N, k]
",
        );
        assert!(k.tiles.is_none());
        let k = region(
            "
def f(C, A, N, M):
    #pragma parallel for
    for i in range(N):
        for k in range(M):
            C[i, :N] += A[i, k] * np.sum(A[:N, k])
",
        );
        assert!(k.tiles.is_none());
    }

    #[test]
    fn a_function_level_matrix_product_statement_is_read_as_its_loop_nest() {
        // Both output dimensions on the grid, or only the rows (then a product alone: an
        // epilogue around a row of products would need a temporary in the general lowering).
        let cases = [
            (
                ":M=>parallel :N=>parallel",
                "beta * C[:M, :N] + alpha * np.dot(A[:M, 1:K + 1], B[:K, :N])",
                "beta * C[{row}, {col}] + alpha * {acc}",
            ),
            (":M=>parallel", "A[:M, 1:K + 1] @ B[:K, :N]", "{acc}"),
        ];
        for (pragma, value, epilogue) in cases {
            let src = format!(
                "
def f(alpha, beta, C, A, B, M, N, K):
    #pragma {pragma}
    C[:M, :N] = {value}
"
            );
            let t = region(&src).tiles.expect(pragma);
            let (row, col, k) = (&t.row.var, &t.col.var, &t.reductions[0].axis.var);
            assert_eq!(
                (text(&t.row.stop), text(&t.col.stop)),
                ("M".into(), "N".into()),
                "{pragma}"
            );
            let term = &t.reductions[0].terms[0];
            // The reduction runs over A's slice, B's index follows it.
            assert_eq!(text(&t.reductions[0].axis.start), "1", "{pragma}");
            assert_eq!(text(&term.left), format!("A[{row}, {k}]"), "{pragma}");
            assert_eq!(text(&term.right), format!("B[{k} - 1, {col}]"), "{pragma}");
            let epilogue = epilogue
                .replace("{row}", row)
                .replace("{col}", col)
                .replace("{acc}", &t.acc);
            assert_eq!(text(&t.epilogue), epilogue, "{pragma}");
        }
        // A product that reads the array it writes stays general (the loop nest's rule).
        let src = "
def f(C, A, M, N):
    #pragma :M=>parallel :N=>parallel
    C[:M, :N] = A[:M, :N] @ C[:N, :N]
";
        assert!(region(src).tiles.is_none());
    }

    #[test]
    fn a_row_times_a_matrix_is_a_scalar_accumulator_nest() {
        let t = region(
            "
def f(alpha, C, A, B, M, N, K):
    #pragma parallel for
    for i in range(M):
        C[i, :N] += A[i, 1:K + 1] @ B[:K, 2:N + 2]
",
        )
        .tiles
        .expect("tiled");
        let (col, k) = (&t.col.var, &t.reductions[0].axis.var);
        assert_eq!(text(&t.reductions[0].axis.start), "1");
        let term = &t.reductions[0].terms[0];
        assert_eq!(text(&term.left), format!("A[i, {k}]"));
        assert_eq!(text(&term.right), format!("B[{k} - 1, {col} + 2]"));
        assert_eq!(text(&t.epilogue), format!("C[i, {col}] + {}", t.acc));
        // A matrix times a row is the same sum with the matrix's rows as the columns.
        let row = |value: &str| {
            let src = format!(
                "def f(C, A, B, M, N, K):\n    #pragma parallel for\n    for i in range(M):\n        C[i, :N] = {value}\n"
            );
            region(&src).tiles
        };
        let t = row("B[:N, :K] @ A[i, :K]").expect("tiled");
        let term = &t.reductions[0].terms[0];
        let (col, k) = (&t.col.var, &t.reductions[0].axis.var);
        assert_eq!(text(&term.left), format!("A[i, {k}]"));
        assert_eq!(text(&term.right), format!("B[{col}, {k}]"));
        // Lengths that differ are not a product.
        assert!(row("A[i, :K] @ B[:K + 1, :N]").is_none());
    }

    #[test]
    fn tf32_on_a_loop_without_tiles_is_a_warning() {
        let src = "def f(A, B, N):\n    #pragma parallel for tf32\n    for i in range(N):\n        B[i] = A[i] * 2.0\n";
        let (_, warnings) = region_and_warnings(src);
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].is_warning());
        // A tiled loop takes it silently.
        let (k, warnings) =
            region_and_warnings(&GEMM_ACC.replace("parallel for", "parallel for tf32"));
        assert!(k.tiles.is_some() && warnings.is_empty());
    }

    #[test]
    fn column_bounds_must_be_affine_in_the_row() {
        let src = GEMM_ACC.replace("range(NJ)", "range(i * i)");
        assert!(region(&src).tiles.is_none());
        let src = GEMM_ACC.replace("range(NJ)", "range(2 * i + 1)");
        assert!(region(&src).tiles.is_some());
    }

    #[test]
    fn a_reduction_bound_with_both_row_and_column_is_not_tiled() {
        let src = GEMM_ACC.replace("range(NK)", "range(i + j)");
        assert!(region(&src).tiles.is_none());
    }
}
