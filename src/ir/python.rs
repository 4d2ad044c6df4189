//! IR expressions in Python spelling: what host launchers evaluate, what `--emit lowered`
//! prints, and the text passes use as a key or in a message. The statement printer
//! (`codegen::python`) builds on it.

use super::*;

/// Operator binding strengths (higher binds tighter), after Python's grammar.
pub mod prec {
    pub const IFEXP: u8 = 1;
    pub const OR: u8 = 2;
    pub const AND: u8 = 3;
    pub const NOT: u8 = 4;
    pub const CMP: u8 = 5;
    pub const UNARY: u8 = 13;
    pub const ATOM: u8 = 16;
}

pub fn binop_prec(op: BinOp) -> u8 {
    match op {
        BinOp::BitOr => 6,
        BinOp::BitXor => 7,
        BinOp::BitAnd => 8,
        BinOp::LShift | BinOp::RShift => 9,
        BinOp::Add | BinOp::Sub => 10,
        BinOp::Mul | BinOp::Div | BinOp::FloorDiv | BinOp::Mod => 11,
        BinOp::Pow => 14,
    }
}

pub fn float_literal(v: f64) -> String {
    if v.is_finite() && v == v.trunc() && v.abs() < 1e16 {
        format!("{v:.1}")
    } else {
        format!("{v:?}")
    }
}

pub fn width(w: Width) -> String {
    match w {
        Width::Mvl => "appy.MVL".into(),
        Width::Fixed(n) => n.to_string(),
        Width::RowBlock => ROW_BLOCK_NAME.into(),
        Width::RowBlockLanes => format!("appy.MVL // {ROW_BLOCK_NAME}"),
    }
}

pub fn expr(e: &Expr) -> String {
    expr_prec(e, 0)
}

fn paren(s: String, own: u8, ctx: u8) -> String {
    if own < ctx {
        format!("({s})")
    } else {
        s
    }
}

fn expr_prec(e: &Expr, ctx: u8) -> String {
    match &e.kind {
        ExprKind::Name(n) => n.clone(),
        ExprKind::Int(v) => paren(
            v.to_string(),
            if *v < 0 { prec::UNARY } else { prec::ATOM },
            ctx,
        ),
        ExprKind::Float(v) => paren(
            float_literal(*v),
            if *v < 0.0 { prec::UNARY } else { prec::ATOM },
            ctx,
        ),
        ExprKind::Bool(b) => if *b { "True" } else { "False" }.into(),
        ExprKind::FloatSpecial(s) => format!("float('{s}')"),
        ExprKind::Subscript { array, indices } => {
            let ix: Vec<String> = indices
                .iter()
                .map(|i| match i {
                    Index::At(e) => expr(e),
                    Index::Slice { lo, hi, .. } => format!(
                        "{}:{}",
                        lo.as_ref().map(expr).unwrap_or_default(),
                        hi.as_ref().map(expr).unwrap_or_default()
                    ),
                    Index::NewAxis => "None".into(),
                })
                .collect();
            format!("{array}[{}]", ix.join(", "))
        }
        ExprKind::Shape { array, dim } => format!("{array}.shape[{dim}]"),
        ExprKind::Binary { op, left, right } => {
            let p = binop_prec(*op);
            // Left-associative, except `**`.
            let (lp, rp) = if *op == BinOp::Pow {
                (p + 1, p)
            } else {
                (p, p + 1)
            };
            paren(
                format!(
                    "{} {} {}",
                    expr_prec(left, lp),
                    op.python(),
                    expr_prec(right, rp)
                ),
                p,
                ctx,
            )
        }
        ExprKind::Unary { op, operand } => match op {
            UnaryOp::Neg => paren(
                format!("-{}", expr_prec(operand, prec::UNARY)),
                prec::UNARY,
                ctx,
            ),
            UnaryOp::Invert => paren(
                format!("~{}", expr_prec(operand, prec::UNARY)),
                prec::UNARY,
                ctx,
            ),
            UnaryOp::Not => paren(
                format!("not {}", expr_prec(operand, prec::NOT)),
                prec::NOT,
                ctx,
            ),
        },
        ExprKind::Compare { op, left, right } => paren(
            format!(
                "{} {} {}",
                expr_prec(left, prec::CMP + 1),
                op.python(),
                expr_prec(right, prec::CMP + 1)
            ),
            prec::CMP,
            ctx,
        ),
        ExprKind::BoolOp { op, values } => {
            let (word, p) = match op {
                BoolOp::And => (" and ", prec::AND),
                BoolOp::Or => (" or ", prec::OR),
            };
            let parts: Vec<String> = values.iter().map(|v| expr_prec(v, p + 1)).collect();
            paren(parts.join(word), p, ctx)
        }
        ExprKind::IfExp { test, body, orelse } => paren(
            format!(
                "{} if {} else {}",
                expr_prec(body, prec::IFEXP + 1),
                expr_prec(test, prec::IFEXP + 1),
                expr_prec(orelse, prec::IFEXP)
            ),
            prec::IFEXP,
            ctx,
        ),
        ExprKind::Call { func, args } if func == STORED_IN => {
            let ExprKind::Subscript { array, .. } = &args[1].kind else {
                unreachable!("fuse_into_reduction makes (value, element)");
            };
            format!("{array}.dtype.type({})", expr(&args[0]))
        }
        ExprKind::Call { func, args } => {
            let a: Vec<String> = args.iter().map(expr).collect();
            format!("{func}({})", a.join(", "))
        }
        ExprKind::Vidx {
            start,
            width: w,
            bound,
        } => {
            format!("appy.vidx({}, {}, {})", expr(start), width(*w), expr(bound))
        }
        ExprKind::Reduce { op, value, .. } => format!("{}({})", op.name(), expr(value)),
        ExprKind::ReduceRows { op, value, .. } => {
            format!("{}({}, axis=0)", op.name(), expr(value))
        }
        ExprKind::Broadcast { value, keep } => {
            let ix: Vec<&str> = keep.iter().map(|k| if *k { ":" } else { "None" }).collect();
            format!("{}[{}]", expr_prec(value, prec::ATOM), ix.join(", "))
        }
        ExprKind::Unsupported(what) => format!("<{what}>"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontend::source::Span;

    fn n(s: &str) -> Expr {
        Expr::name(s, Span::DUMMY)
    }

    #[test]
    fn parenthesises_by_precedence() {
        let e = Expr::binary(
            BinOp::Mul,
            Expr::binary(BinOp::Add, n("a"), n("b")),
            Expr::binary(BinOp::Sub, n("c"), Expr::binary(BinOp::Sub, n("d"), n("e"))),
        );
        assert_eq!(expr(&e), "(a + b) * (c - (d - e))");
        assert_eq!(float_literal(1.0), "1.0");
        assert_eq!(float_literal(0.1), "0.1");
        assert_eq!(float_literal(1e-30), "1e-30");
    }
}
