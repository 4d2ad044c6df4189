//! The expressions of a temporally blocked stencil (`schedule::temporal` admits numbers, names,
//! elements, `+ - * /` and unary minus), printed fully parenthesised for the blocked kernels,
//! each form spelling the leaves it knows (an element from its scratch or tile, a bound).

use crate::ir::*;

/// `e` fully parenthesised, with `leaf` spelling what it knows.
pub(super) fn print(e: &Expr, leaf: &mut dyn FnMut(&Expr) -> Option<String>) -> String {
    if let Some(s) = leaf(e) {
        return s;
    }
    match &e.kind {
        ExprKind::Name(n) => n.clone(),
        ExprKind::Int(v) => v.to_string(),
        ExprKind::Float(v) => format!("{v:?}"),
        ExprKind::Unary { operand, .. } => format!("(-{})", print(operand, leaf)),
        ExprKind::Binary { op, left, right } => {
            let o = match op {
                BinOp::Add => "+",
                BinOp::Sub => "-",
                BinOp::Mul => "*",
                BinOp::Div => "/",
                _ => unreachable!("schedule::temporal allows + - * /"),
            };
            format!("({} {o} {})", print(left, leaf), print(right, leaf))
        }
        _ => unreachable!("schedule::temporal allows no other expression"),
    }
}
