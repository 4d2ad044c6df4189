//! shared_scalars: a `parallel for shared(x)` scalar that the loop updates becomes a one-element
//! device buffer the workers update atomically (`x += v` → `_x_shared[0] += v`, atomic), which
//! the launcher fills with x's value and reads back after the launch (APPy 0.3's `shared`).
//! *After*: no statement of the kernel names a shared scalar it writes; every written one has a
//! `SharedScalar` entry saying how (`Reduce(op)` or `Store`); read-only ones are `ReadOnly`.

use crate::diag::{Diagnostic, Result};
use crate::frontend::source::Span;
use crate::ir::*;

pub fn run(k: &mut Kernel) -> Result<()> {
    if k.shared.is_empty() {
        return Ok(());
    }
    let mut used = k.names();
    let mut shared = std::mem::take(&mut k.shared);
    for s in shared.iter_mut() {
        classify(k, s)?;
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
            let atomic = matches!(s.update, SharedUpdate::Reduce(_));
            rewrite_updates(&mut k.body, &s.var, &slot, atomic);
        }
    }
    k.shared = shared;
    Ok(())
}

/// Decides how the loop writes `s.var`: never, by one reduction operator, or by plain stores.
/// Anything else (two operators, a read outside the updates) is an error: the value of a shared
/// scalar in the middle of a parallel loop is not defined.
fn classify(k: &Kernel, s: &mut SharedScalar) -> Result<()> {
    let var = s.var.as_str();
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
                        format!("`{var}` is shared(...) and cannot be a loop variable"),
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
                                    format!("`{var}` is shared(...) and this update of it is not a reduction"),
                                )
                                .with_help(format!(
                                    "a shared scalar takes `{var} += v`, `{var} -= v`, `{var} = max({var}, v)`, `{var} = min({var}, v)` or `{var} = v` with `v` not reading `{var}`"
                                )),
                            );
                            return;
                        }
                    }
                }
                StmtKind::Assign { target, .. } if target.mentions(var) => {
                    error = Some(Diagnostic::error(
                        target.span,
                        format!("`{var}` is shared(...): a scalar, not an array"),
                    ));
                    return;
                }
                _ => None,
            };
            if let Some(this) = this {
                if update != SharedUpdate::ReadOnly && update != this {
                    error = Some(
                        Diagnostic::error(
                            st.span,
                            format!(
                                "`{var}` is shared(...) and updated in two ways ({} and {})",
                                update.describe(),
                                this.describe()
                            ),
                        )
                        .with_help("a shared scalar takes one reduction (`+=`, `max`, `min`) or plain stores"),
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
    if let (Some(span), true) = (reads_elsewhere, update != SharedUpdate::ReadOnly) {
        return Err(Diagnostic::error(
            span,
            format!("`{var}` is shared(...) and written by the loop, so it cannot be read in it"),
        )
        .with_label("read here")
        .with_help(format!(
            "workers update `{var}` concurrently; its value is known after the loop"
        )));
    }
    s.update = update;
    Ok(())
}

/// The first array a statement that writes `var` reads: with `var`'s value it decides the
/// buffer's dtype, as NumPy's promotion of `var op array[i]` would.
fn first_array_read(k: &Kernel, var: &str) -> Option<String> {
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
        let mut k = crate::passes::outline::run(&f)?.remove(0);
        run(&mut k)?;
        Ok(k)
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
