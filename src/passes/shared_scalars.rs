//! shared_scalars: a `parallel for shared(x)` scalar that the loop updates becomes a one-element
//! device buffer the workers update atomically (`x += v` → `_x_shared[0] += v`, atomic), which
//! the launcher fills with x's value and reads back after the launch (APPy 0.3's `shared`).
//! A `reduction(op:x)` variable (OpenMP's clause) is lowered the same way, after checking that
//! the loop updates it only by `op` and reads it nowhere else, so the result is the sequential
//! loop's.
//! *After*: no statement of the kernel names a shared scalar it writes; every written one has a
//! `SharedScalar` entry saying how (`Reduce(op)` or `Store`); read-only ones are `ReadOnly`;
//! every `reduction(op:x)` variable of the region's pragma has an entry, `Reduce(op)` or, when
//! the loop never mentions it, `ReadOnly`.

use crate::diag::{Diagnostic, Result};
use crate::frontend::pragma::reduction_spelling as spelling;
use crate::frontend::source::Span;
use crate::ir::pragma::{Directive, Pragma, ReductionVar};
use crate::ir::*;
use std::collections::HashSet;

/// What the pragma said of a scalar: `shared(x)` (one reduction, any operator, or plain
/// stores) or `reduction(op:x)` (updates by `op` only).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Declared {
    Shared,
    Reduction(ReduceOp),
    /// Not in the pragma: the host reads the region's value after it (`passes::live_out`), so
    /// it is taken as `shared(x)` would be.
    ReadAfter,
}

impl Declared {
    /// "`x` is ..." in messages.
    fn what(self, var: &str) -> String {
        match self {
            Declared::Shared => "shared(...)".to_string(),
            Declared::Reduction(op) => format!("in `reduction({}:{var})`", spelling(op)),
            Declared::ReadAfter => "read by the host after this region".to_string(),
        }
    }
}

/// `pragmas`: the function's; the region's own (at `k.pragma_span`) may name `reduction`
/// variables, which join `k.shared`.
pub fn run(k: &mut Kernel, pragmas: &[Pragma], warnings: &mut Vec<Diagnostic>) -> Result<()> {
    let mut declared: Vec<Declared> = k
        .shared
        .iter()
        .map(|s| match s.implicit {
            Some(_) => Declared::ReadAfter,
            None => Declared::Shared,
        })
        .collect();
    for r in reductions_of(k, pragmas) {
        k.shared.push(SharedScalar {
            var: r.var.clone(),
            buffer: String::new(),
            update: SharedUpdate::ReadOnly,
            like: None,
            span: r.span,
            implicit: None,
            passed: r.start.as_ref().map(crate::ir::python::expr),
        });
        declared.push(Declared::Reduction(r.op));
    }
    if k.shared.is_empty() {
        return Ok(());
    }
    let mut used = k.names();
    let mut shared = std::mem::take(&mut k.shared);
    for (s, &d) in shared.iter_mut().zip(&declared) {
        if d == Declared::ReadAfter && !s.buffer.is_empty() {
            continue; // one program: `live_out` stores its last value
        }
        commute_sums(&mut k.body, &s.var);
        classify(k, s, d)?;
        if let (Declared::ReadAfter, SharedUpdate::Store, Some(at)) =
            (d, s.update, unconditional_store(&k.body, &s.var))
        {
            warnings.push(
                Diagnostic::warning(
                    at,
                    format!(
                        "`{}` is stored by every worker of this region and read after it: the host gets the value of whichever worker stored last, not the last iteration's",
                        s.var
                    ),
                )
                .with_help("store it under a test one iteration passes (`if i == N - 1:`), or keep each iteration's value in an array"),
            );
        }
        if let (Declared::ReadAfter, SharedUpdate::Reduce(op)) = (d, s.update) {
            // The sequential program's value, but a race as written: say what it was taken for.
            warnings.push(
                Diagnostic::warning(
                    s.span,
                    format!(
                        "`{}` is updated by the workers of this region and read after it: reduced as `reduction({}:{})` would",
                        s.var,
                        spelling(op),
                        s.var
                    ),
                )
                .with_help(format!("say so in the pragma: `reduction({}:{})`", spelling(op), s.var)),
            );
        }
        if s.update != SharedUpdate::ReadOnly {
            s.buffer = fresh_name(&format!("{}_shared", s.var), &mut used);
            s.like = first_array_read(k, &s.var);
            let slot = Expr::new(
                ExprKind::Subscript {
                    array: s.buffer.clone(),
                    indices: vec![Index::At(Expr::int(0, s.span))],
                },
                s.span,
            );
            match s.update {
                SharedUpdate::Reduce(op) if updated_in_loop(&k.body, &s.var) => {
                    privatize(k, s, op, slot, &mut used)
                }
                update => rewrite_updates(
                    &mut k.body,
                    &s.var,
                    &slot,
                    matches!(update, SharedUpdate::Reduce(_)),
                ),
            }
        }
    }
    k.shared = shared;
    Ok(())
}

/// A store of `var` that no `if` guards (every worker runs it).
fn unconditional_store(body: &[Stmt], var: &str) -> Option<Span> {
    body.iter().find_map(|st| match &st.kind {
        StmtKind::Assign { target, .. }
            if matches!(&target.kind, ExprKind::Name(n) if n == var) =>
        {
            Some(st.span)
        }
        StmtKind::For { body, .. } => unconditional_store(body, var),
        _ => None,
    })
}

/// The `reduction(op:x)` variables of the region's own pragma.
fn reductions_of<'a>(k: &Kernel, pragmas: &'a [Pragma]) -> &'a [ReductionVar] {
    pragmas
        .iter()
        .find(|p| p.span == k.pragma_span)
        .and_then(|p| match &p.directive {
            Directive::ParallelFor { reduction, .. } => Some(reduction.as_slice()),
            _ => None,
        })
        .unwrap_or(&[])
}

/// A `reduction(...)` clause names scalars of the whole region: on a `parallel for` that is no
/// region's outermost loop (a nested one), it would be ignored, so it is an error.
pub fn check_reduction_placement(pragmas: &[Pragma], kernels: &[Kernel]) -> Result<()> {
    for p in pragmas {
        let Directive::ParallelFor { reduction, .. } = &p.directive else {
            continue;
        };
        if !reduction.is_empty() && !kernels.iter().any(|k| k.pragma_span == p.span) {
            return Err(Diagnostic::error(
                p.span,
                "`reduction(...)` on a nested `parallel for`: the variables are reduced over the whole region",
            )
            .with_help("name them in the outermost `parallel for` of the region"));
        }
    }
    Ok(())
}

/// `x = v + x` as `x = x + v` (a sum is commutative; `v` not reading `x`), so that it reads as
/// a reduction.
fn commute_sums(body: &mut [Stmt], var: &str) {
    let is_var = |e: &Expr| matches!(&e.kind, ExprKind::Name(n) if n == var);
    for st in body.iter_mut() {
        match &mut st.kind {
            StmtKind::Assign { target, value, .. } if is_var(target) => {
                if let ExprKind::Binary {
                    op: BinOp::Add,
                    left,
                    right,
                } = &mut value.kind
                {
                    if is_var(right) && !left.mentions(var) {
                        std::mem::swap(left, right);
                    }
                }
            }
            StmtKind::For { body, .. } | StmtKind::HostBlock { body, .. } => {
                commute_sums(body, var)
            }
            StmtKind::If { body, orelse, .. } => {
                commute_sums(body, var);
                commute_sums(orelse, var);
            }
            _ => {}
        }
    }
}

/// Decides how the loop writes `s.var`: never, by one reduction operator, or by plain stores.
/// Anything else (two operators, a read outside the updates) is an error: the value of a shared
/// scalar in the middle of a parallel loop is not defined. A `reduction(op:x)` variable takes
/// only updates by `op`, and no reads at all.
fn classify(k: &Kernel, s: &mut SharedScalar, declared: Declared) -> Result<()> {
    let var = s.var.as_str();
    let what = declared.what(var);
    if let (Declared::Reduction(_), Some(at)) = (declared, array_use(k, var)) {
        return Err(
            Diagnostic::error(at, format!("`{var}` is {what}: a scalar, not an array")).with_help(
                "`reduction(op:x)` names scalars; an array's elements reduce with `#pragma atomic`",
            ),
        );
    }
    let is_var = |e: &Expr| matches!(&e.kind, ExprKind::Name(n) if n == var);
    let mut update = SharedUpdate::ReadOnly;
    let mut error: Option<Diagnostic> = None;
    let mut reads_elsewhere: Option<Span> = None;
    for st in &k.body {
        st.walk(&mut |st| {
            if error.is_some() {
                return;
            }
            if let StmtKind::For { var: v, .. } = &st.kind {
                if v == var {
                    error = Some(Diagnostic::error(
                        st.span,
                        format!("`{var}` is {what} and cannot be a loop variable"),
                    ));
                }
            }
            let this = match &st.kind {
                StmtKind::Assign { target, value, .. } if is_var(target) => {
                    let operand = as_reduction(target, value).map(|(op, operand)| {
                        let v = match operand {
                            ReductionOperand::Plain(v) | ReductionOperand::Negated(v) => v,
                        };
                        (op, v)
                    });
                    match operand {
                        Some((op, v)) if !v.mentions(var) => Some(SharedUpdate::Reduce(op)),
                        None if !value.mentions(var) => Some(SharedUpdate::Store),
                        _ => {
                            // `s = s * 2`, `s = s + s * v`: neither one reduction nor a store.
                            error = Some(
                                Diagnostic::error(
                                    value.span,
                                    format!("`{var}` is {what} and this update of it is not a reduction"),
                                )
                                .with_help(updates_allowed(var, declared)),
                            );
                            return;
                        }
                    }
                }
                StmtKind::Assign { target, .. } if target.mentions(var) => {
                    error = Some(Diagnostic::error(
                        target.span,
                        format!("`{var}` is {what}: a scalar, not an array"),
                    ));
                    return;
                }
                _ => None,
            };
            if let Some(this) = this {
                if let Declared::Reduction(op) = declared {
                    if this != SharedUpdate::Reduce(op) {
                        error = Some(mismatch(st.span, var, op, this));
                        return;
                    }
                }
                if update != SharedUpdate::ReadOnly && update != this {
                    error = Some(
                        Diagnostic::error(
                            st.span,
                            format!(
                                "`{var}` is {what} and updated in two ways ({} and {})",
                                update.describe(),
                                this.describe()
                            ),
                        )
                        .with_help(if declared == Declared::ReadAfter {
                            format!("each worker holds its own `{var}`, and the host reads one value after the region: keep the workers' values in an array, or read it after the loop only where one reduction computes it (`reduction(op:{var})`)")
                        } else {
                            "a shared scalar takes one reduction (`+=`, `max`, `min`) or plain stores".to_string()
                        }),
                    );
                }
                update = this;
                return;
            }
            if !matches!(&st.kind, StmtKind::Assign { target, .. } if is_var(target)) {
                for e in st.exprs() {
                    if e.mentions(var) {
                        reads_elsewhere = reads_elsewhere.or(Some(e.span));
                    }
                }
            }
        });
    }
    if let Some(e) = error {
        return Err(e);
    }
    if let (Some(span), Declared::Reduction(_)) = (reads_elsewhere, declared) {
        return Err(Diagnostic::error(
            span,
            format!("`{var}` is {what}, so the loop cannot read it"),
        )
        .with_label("read here")
        .with_help(format!(
            "each worker combines its own updates of `{var}`; its value is known after the loop"
        )));
    }
    if let (Some(span), true) = (reads_elsewhere, update != SharedUpdate::ReadOnly) {
        let help = if declared == Declared::ReadAfter {
            format!("workers would each hold their own `{var}`, and the host reads one value after the region: keep the workers' values in an array, or compute `{var}` by a reduction (`reduction(op:{var})`)")
        } else {
            format!("workers update `{var}` concurrently; its value is known after the loop")
        };
        return Err(Diagnostic::error(
            span,
            format!("`{var}` is {what} and written by the loop, so it cannot be read in it"),
        )
        .with_label("read here")
        .with_help(help));
    }
    s.update = update;
    Ok(())
}

/// Where the kernel indexes `var` as an array (or takes its shape).
fn array_use(k: &Kernel, var: &str) -> Option<Span> {
    let mut found = None;
    for st in &k.body {
        st.walk(&mut |st| {
            for e in st.exprs() {
                e.walk(&mut |x| {
                    if let ExprKind::Subscript { array, .. } | ExprKind::Shape { array, .. } =
                        &x.kind
                    {
                        if array == var {
                            found = found.or(Some(x.span));
                        }
                    }
                });
            }
        });
    }
    found
}

/// The updates a scalar may take, for the help of an error.
fn updates_allowed(var: &str, declared: Declared) -> String {
    let tail = format!("with `v` not reading `{var}`");
    match declared {
        Declared::Shared | Declared::ReadAfter => format!(
            "a shared scalar takes `{var} += v`, `{var} -= v`, `{var} = max({var}, v)`, `{var} = min({var}, v)` or `{var} = v` {tail}"
        ),
        Declared::Reduction(ReduceOp::Sum) => format!(
            "a `reduction(+:{var})` variable takes `{var} += v`, `{var} -= v` or `{var} = {var} + v` {tail}"
        ),
        Declared::Reduction(op) => {
            let f = op.name();
            format!(
                "a `reduction({f}:{var})` variable takes `{var} = {f}({var}, v)` or `{var} = np.{f}imum({var}, v)` {tail}"
            )
        }
    }
}

/// An update of a `reduction(op:x)` variable by something else than `op`.
fn mismatch(at: Span, var: &str, op: ReduceOp, this: SharedUpdate) -> Diagnostic {
    let how = match this {
        SharedUpdate::Reduce(other) => format!("by `{}`", spelling(other)),
        _ => "by a plain store".to_string(),
    };
    Diagnostic::error(
        at,
        format!(
            "`{var}` is in `reduction({}:{var})`, but this statement updates it {how}",
            spelling(op)
        ),
    )
    .with_help(updates_allowed(var, Declared::Reduction(op)))
}

/// The first array a statement that writes `var` reads: with `var`'s value it decides the
/// buffer's dtype, as NumPy's promotion of `var op array[i]` would.
pub(crate) fn first_array_read(k: &Kernel, var: &str) -> Option<String> {
    let mut found = None;
    for st in &k.body {
        st.walk(&mut |st| {
            if found.is_some() {
                return;
            }
            if let StmtKind::Assign { target, value, .. } = &st.kind {
                if matches!(&target.kind, ExprKind::Name(n) if n == var) {
                    found = value_array(value);
                }
            }
        });
    }
    found
}

/// The first array whose elements become part of the value (not one only tested, as in
/// `1 if x[i] > 0 else 0`, or used as an index).
fn value_array(e: &Expr) -> Option<String> {
    match &e.kind {
        ExprKind::Subscript { array, .. } => Some(array.clone()),
        ExprKind::IfExp { body, orelse, .. } => value_array(body).or_else(|| value_array(orelse)),
        ExprKind::Compare { .. } | ExprKind::BoolOp { .. } => None,
        ExprKind::Binary { left, right, .. } => value_array(left).or_else(|| value_array(right)),
        ExprKind::Unary { operand, .. } => value_array(operand),
        ExprKind::Call { args, .. } => args.iter().find_map(value_array),
        _ => None,
    }
}

/// Some update of `var` lies inside a loop of the worker's body (not only at its top level).
fn updated_in_loop(body: &[Stmt], var: &str) -> bool {
    fn updates(st: &Stmt, var: &str) -> bool {
        let mut found = false;
        st.walk(&mut |st| {
            found |= matches!(&st.kind, StmtKind::Assign { target, .. }
                if matches!(&target.kind, ExprKind::Name(n) if n == var));
        });
        found
    }
    body.iter().any(|st| match &st.kind {
        StmtKind::For { .. } | StmtKind::While { .. } | StmtKind::HostBlock { .. } => {
            updates(st, var)
        }
        StmtKind::If { body, orelse, .. } => {
            updated_in_loop(body, var) || updated_in_loop(orelse, var)
        }
        _ => false,
    })
}

/// OpenMP's private copy: a reduction updated inside the worker's loops accumulates in a local
/// `_x_part` (from the operator's identity, typed by its updates), and the worker combines it
/// into the buffer once, atomically, at its end. Why: updated in place, every iteration of a
/// `simd` loop (a 2-D sweep's convergence test) was an atomic on one address, fenced by two
/// barriers since the loop repeats the store. Known difference: the partial has the updates'
/// dtype, so an int32 array's sum accumulates a worker's share in int32 before the atomic adds
/// it into the buffer's (NumPy's) dtype; each strip's own sum was int32 before too.
fn privatize(
    k: &mut Kernel,
    s: &SharedScalar,
    op: ReduceOp,
    slot: Expr,
    used: &mut HashSet<String>,
) {
    let part = fresh_name(&format!("_{}_part", s.var), used);
    let name = Expr::name(&part, s.span);
    rewrite_updates(&mut k.body, &s.var, &name, false);
    let identity = match op {
        ReduceOp::Sum => ExprKind::Int(0),
        ReduceOp::Max => ExprKind::FloatSpecial("-inf"),
        ReduceOp::Min => ExprKind::FloatSpecial("inf"),
    };
    k.body.insert(
        0,
        Stmt::assign(name.clone(), Expr::new(identity, s.span), s.span),
    );
    let combined = match op {
        ReduceOp::Sum => Expr::binary(BinOp::Add, slot.clone(), name),
        ReduceOp::Max | ReduceOp::Min => Expr::new(
            ExprKind::Call {
                func: op.name().to_string(),
                args: vec![slot.clone(), name],
            },
            s.span,
        ),
    };
    k.body.push(Stmt::new(
        StmtKind::Assign {
            target: slot,
            value: combined,
            atomic: true,
        },
        s.span,
    ));
}

fn rewrite_updates(body: &mut [Stmt], var: &str, slot: &Expr, atomic: bool) {
    for st in body.iter_mut() {
        match &mut st.kind {
            StmtKind::Assign {
                target,
                value,
                atomic: a,
            } if matches!(&target.kind, ExprKind::Name(n) if n == var) => {
                let replace = |e: Expr| {
                    e.rewrite(&mut |x| match &x.kind {
                        ExprKind::Name(n) if n == var => slot.clone(),
                        _ => x,
                    })
                };
                *target = replace(target.clone());
                *value = replace(value.clone());
                *a = atomic;
            }
            StmtKind::For { body, .. }
            | StmtKind::HostBlock { body, .. }
            | StmtKind::While { body, .. } => rewrite_updates(body, var, slot, atomic),
            StmtKind::If { body, orelse, .. } => {
                rewrite_updates(body, var, slot, atomic);
                rewrite_updates(orelse, var, slot, atomic);
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::attach_pragmas::tests::attached;

    fn shared_kernel(src: &str) -> Result<Kernel> {
        let f = attached(src)?;
        let pragmas = crate::frontend::pragma::collect_pragmas(
            &crate::frontend::source::SourceFile::new("t.py", src),
        )?;
        let mut kernels = crate::passes::outline::run(&f)?;
        check_reduction_placement(&pragmas, &kernels)?;
        let mut k = kernels.remove(0);
        run(&mut k, &pragmas, &mut vec![])?;
        Ok(k)
    }

    /// `f(x)` with `init` before a `parallel for simd <clauses>` loop over `x` whose body is
    /// `body` (lines at the loop body's indentation).
    fn reduction_kernel(init: &str, clauses: &str, body: &[&str]) -> Result<Kernel> {
        let body: String = body.iter().map(|l| format!("        {l}\n")).collect();
        shared_kernel(&format!(
            "def f(x, y):\n    {init}\n    #pragma parallel for simd {clauses}\n    for i in range(x.shape[0]):\n{body}"
        ))
    }

    #[test]
    fn reduction_variables_become_atomic_buffers_like_shared_ones() {
        let k = reduction_kernel(
            "s, t, m, lo = 0.0, 0.0, 0.0, 0.0",
            "reduction(+:s, t) reduction(max:m) reduction(min:lo)",
            &[
                "s += x[i]",
                "t = y[i] + t",
                "m = np.maximum(m, x[i])",
                "lo = min(x[i], lo)",
            ],
        )
        .unwrap();
        let got: Vec<(&str, SharedUpdate, &str)> = k
            .shared
            .iter()
            .map(|s| (s.var.as_str(), s.update, s.buffer.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                ("s", SharedUpdate::Reduce(ReduceOp::Sum), "_s_shared"),
                ("t", SharedUpdate::Reduce(ReduceOp::Sum), "_t_shared"),
                ("m", SharedUpdate::Reduce(ReduceOp::Max), "_m_shared"),
                ("lo", SharedUpdate::Reduce(ReduceOp::Min), "_lo_shared"),
            ]
        );
        // `t = y[i] + t` reads as `t = t + y[i]`: its buffer's dtype follows `y`.
        assert_eq!(k.shared[1].like.as_deref(), Some("y"));
        for st in &k.body {
            let StmtKind::Assign { target, atomic, .. } = &st.kind else {
                panic!("{st:?}")
            };
            assert!(*atomic, "{st:?}");
            assert!(matches!(&target.kind, ExprKind::Subscript { .. }), "{st:?}");
        }
        // `-=` and `s = s + v` are `+` updates too; a variable the loop never mentions stays.
        let k = reduction_kernel(
            "s, u = 0.0, 1.0",
            "reduction(sum:s, u)",
            &["s -= x[i]", "s = s + y[i]"],
        )
        .unwrap();
        assert_eq!(k.shared[0].update, SharedUpdate::Reduce(ReduceOp::Sum));
        assert_eq!(k.shared[1].update, SharedUpdate::ReadOnly);
    }

    #[test]
    fn an_update_by_another_operator_than_the_clause_is_an_error() {
        let cases: &[(&str, &str, &str)] = &[
            (
                "reduction(+:s)",
                "s = max(s, x[i])",
                "`s` is in `reduction(+:s)`, but this statement updates it by `max`",
            ),
            (
                "reduction(max:s)",
                "s += x[i]",
                "`s` is in `reduction(max:s)`, but this statement updates it by `+`",
            ),
            (
                "reduction(min:s)",
                "s = np.maximum(s, x[i])",
                "`s` is in `reduction(min:s)`, but this statement updates it by `max`",
            ),
            (
                "reduction(+:s)",
                "s = x[i]",
                "`s` is in `reduction(+:s)`, but this statement updates it by a plain store",
            ),
            (
                "reduction(+:s)",
                "s = s * x[i]",
                "`s` is in `reduction(+:s)` and this update of it is not a reduction",
            ),
            (
                "reduction(+:s)",
                "s = s + s * x[i]",
                "`s` is in `reduction(+:s)` and this update of it is not a reduction",
            ),
        ];
        for (clause, update, message) in cases {
            let src = format!(
                "def f(x, y):\n    s = 0.0\n    #pragma parallel for simd {clause}\n    for i in range(x.shape[0]):\n        y[i] = x[i]\n        {update}\n"
            );
            let e = shared_kernel(&src).unwrap_err();
            assert_eq!(e.message, *message, "{clause} {update}");
            // At the offending line (the sixth), with the updates the clause takes.
            let line = src[..e.span.start as usize].matches('\n').count() + 1;
            assert_eq!(line, 6, "{clause} {update}");
            assert!(e.help[0].contains("variable takes"), "{:?}", e.help);
        }
        let e = shared_kernel(
            "def f(x):\n    m = 0.0\n    #pragma parallel for reduction(max:m)\n    for i in range(x.shape[0]):\n        m += x[i]\n",
        )
        .unwrap_err();
        assert_eq!(
            e.help,
            ["a `reduction(max:m)` variable takes `m = max(m, v)` or `m = np.maximum(m, v)` with `v` not reading `m`"]
        );
    }

    #[test]
    fn reading_a_reduction_variable_in_the_loop_is_an_error() {
        // Also when the loop never updates it: each worker's copy is not the host's value.
        for body in [&["s += x[i]", "y[i] = s"][..], &["y[i] = x[i] * s"][..]] {
            let e = reduction_kernel("s = 0.0", "reduction(+:s)", body).unwrap_err();
            assert_eq!(
                e.message, "`s` is in `reduction(+:s)`, so the loop cannot read it",
                "{body:?}"
            );
        }
        let e = reduction_kernel("s = 0.0", "reduction(+:s)", &["if s > 0:", "    s += x[i]"])
            .unwrap_err();
        assert!(e.message.contains("cannot read it"), "{}", e.message);
        let e = reduction_kernel("s = 0.0", "reduction(+:y)", &["y[i] += x[i]"]).unwrap_err();
        assert_eq!(
            e.message,
            "`y` is in `reduction(+:y)`: a scalar, not an array"
        );
    }

    #[test]
    fn a_reduction_on_a_nested_parallel_for_is_an_error() {
        let e = shared_kernel(
            "def f(A):\n    s = 0.0\n    #pragma parallel for\n    for i in range(A.shape[0]):\n        #pragma parallel for reduction(+:s)\n        for j in range(A.shape[1]):\n            s += A[i, j]\n    return s\n",
        )
        .unwrap_err();
        assert!(
            e.message.contains("on a nested `parallel for`"),
            "{}",
            e.message
        );
        // On the outermost loop, the whole grid reduces.
        let k = shared_kernel(
            "def f(A):\n    s = 0.0\n    #pragma parallel for reduction(+:s)\n    for i in range(A.shape[0]):\n        #pragma parallel for\n        for j in range(A.shape[1]):\n            s += A[i, j]\n    return s\n",
        )
        .unwrap();
        assert_eq!(k.dims.len(), 2);
        assert_eq!(k.shared[0].update, SharedUpdate::Reduce(ReduceOp::Sum));
    }

    #[test]
    fn a_sum_becomes_an_atomic_update_of_a_buffer() {
        let k = shared_kernel(
            "def f(x):\n    s = 0.0\n    #pragma parallel for simd shared(s)\n    for i in range(x.shape[0]):\n        s += x[i]\n    return s\n",
        )
        .unwrap();
        assert_eq!(k.shared.len(), 1);
        assert_eq!(k.shared[0].update, SharedUpdate::Reduce(ReduceOp::Sum));
        assert_eq!(k.shared[0].buffer, "_s_shared");
        assert_eq!(k.shared[0].like.as_deref(), Some("x"));
        let StmtKind::Assign { target, atomic, .. } = &k.body[0].kind else {
            panic!("{:?}", k.body[0]);
        };
        assert!(*atomic);
        assert!(matches!(&target.kind, ExprKind::Subscript { array, .. } if array == "_s_shared"));
    }

    #[test]
    fn a_reduction_inside_the_workers_loop_accumulates_privately_and_combines_once() {
        let k = shared_kernel(
            "def f(x, N):\n    m = 0.0\n    #pragma parallel for reduction(max:m)\n    for i in range(N):\n        #pragma simd\n        for j in range(N):\n            m = max(m, x[i, j])\n    return m\n",
        )
        .unwrap();
        let mut w = crate::codegen::writer::Writer::new(0);
        crate::codegen::python::stmts(&mut w, &k.body);
        let text = w.finish();
        // The identity first, the loop's updates of the local, one atomic combine at the end.
        assert!(text.starts_with("_m_part = float('-inf')\n"), "{text}");
        assert!(
            text.contains("    _m_part = max(_m_part, x[i, j])"),
            "{text}"
        );
        assert!(
            text.ends_with("#pragma atomic\n_m_shared[0] = max(_m_shared[0], _m_part)\n"),
            "{text}"
        );
        assert_eq!(text.matches("atomic").count(), 1, "{text}");
    }

    #[test]
    fn a_read_only_shared_name_stays_a_scalar() {
        let k = shared_kernel(
            "def f(x, y, step):\n    #pragma parallel for shared(step)\n    for i in range(x.shape[0]):\n        y[i] = x[i] * step\n",
        )
        .unwrap();
        assert_eq!(k.shared[0].update, SharedUpdate::ReadOnly);
    }

    #[test]
    fn max_updates_and_plain_stores_are_told_apart() {
        let k = shared_kernel(
            "def f(x):\n    m = 0.0\n    #pragma parallel for shared(m)\n    for i in range(x.shape[0]):\n        m = max(m, x[i])\n",
        )
        .unwrap();
        assert_eq!(k.shared[0].update, SharedUpdate::Reduce(ReduceOp::Max));
        let k = shared_kernel(
            "def f(x):\n    a = 0\n    #pragma parallel for shared(a)\n    for i in range(x.shape[0]):\n        if i == 3:\n            a = 1\n",
        )
        .unwrap();
        assert_eq!(k.shared[0].update, SharedUpdate::Store);
    }

    #[test]
    fn reading_a_reduced_scalar_in_the_loop_is_an_error() {
        let e = shared_kernel(
            "def f(x, y):\n    s = 0.0\n    #pragma parallel for shared(s)\n    for i in range(x.shape[0]):\n        s += x[i]\n        y[i] = s\n",
        )
        .unwrap_err();
        assert!(e.message.contains("cannot be read in it"), "{}", e.message);
    }

    #[test]
    fn an_update_that_is_not_a_reduction_is_an_error() {
        for update in ["s = s * x[i]", "s = s + s * x[i]"] {
            let e = shared_kernel(&format!(
                "def f(x):\n    s = 1.0\n    #pragma parallel for shared(s)\n    for i in range(x.shape[0]):\n        {update}\n"
            ))
            .unwrap_err();
            assert!(
                e.message.contains("not a reduction"),
                "{update}: {}",
                e.message
            );
        }
    }

    #[test]
    fn two_operators_on_one_scalar_are_an_error() {
        let e = shared_kernel(
            "def f(x):\n    s = 0.0\n    #pragma parallel for shared(s)\n    for i in range(x.shape[0]):\n        s += x[i]\n        s = max(s, x[i])\n",
        )
        .unwrap_err();
        assert!(e.message.contains("two ways"), "{}", e.message);
    }
}
