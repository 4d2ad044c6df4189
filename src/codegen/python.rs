//! Python printer: IR expressions and statements in APPy's Python spelling. Used for host-side
//! launcher expressions and for `--emit lowered` ("assembly APPy": strip-mined loops, vidx).

use super::writer::Writer;
use crate::ir::*;

/// Operator binding strengths (higher binds tighter), after Python's grammar.
pub(crate) mod prec {
    pub const IFEXP: u8 = 1;
    pub const OR: u8 = 2;
    pub const AND: u8 = 3;
    pub const NOT: u8 = 4;
    pub const CMP: u8 = 5;
    pub const UNARY: u8 = 13;
    pub const ATOM: u8 = 16;
}

pub(crate) fn binop_prec(op: BinOp) -> u8 {
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

pub(crate) fn float_literal(v: f64) -> String {
    if v.is_finite() && v == v.trunc() && v.abs() < 1e16 {
        format!("{v:.1}")
    } else {
        format!("{v:?}")
    }
}

pub(crate) fn width(w: Width) -> String {
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
        ExprKind::Call { func, args } if func == crate::passes::fuse_into_reduction::STORED_IN => {
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
        ExprKind::Reduce { op, value } => format!("{}({})", op.name(), expr(value)),
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

/// Prints statements as assembly APPy (the `--emit lowered` form).
pub fn stmts(w: &mut Writer, body: &[Stmt]) {
    for s in body {
        stmt(w, s);
    }
    if body.is_empty() {
        w.line("pass");
    }
}

fn stmt(w: &mut Writer, s: &Stmt) {
    match &s.kind {
        StmtKind::Assign {
            target,
            value,
            atomic,
        } => {
            if *atomic {
                w.line("#pragma atomic");
            }
            w.line(format!("{} = {}", expr(target), expr(value)));
        }
        StmtKind::AugAssign { target, op, value } => {
            w.line(format!("{} {}= {}", expr(target), op.python(), expr(value)))
        }
        StmtKind::For {
            var,
            range,
            body,
            kind,
            vector,
            ..
        } => {
            match kind {
                LoopKind::Parallel { simd: None } => w.line("#pragma parallel for"),
                LoopKind::Parallel { simd: Some(_) } => w.line("#pragma parallel for simd"),
                LoopKind::Sequential => w.line("#pragma sequential for"),
                LoopKind::Simd(_) => w.line("#pragma simd"),
                _ => {}
            }
            w.line(format!(
                "for {var} in range({}, {}, {}):",
                expr(&range.start),
                expr(&range.stop),
                expr(&range.step)
            ));
            w.indented(|w| {
                if let (Some(v), LoopKind::StripMined { width: wd, .. }) = (vector, kind) {
                    w.line(format!(
                        "{v} = appy.vidx({var}, {}, {})",
                        width(*wd),
                        expr(&range.stop)
                    ));
                }
                stmts(w, body);
            });
        }
        StmtKind::If { test, body, orelse } => {
            w.line(format!("if {}:", expr(test)));
            w.indented(|w| stmts(w, body));
            if !orelse.is_empty() {
                w.line("else:");
                w.indented(|w| stmts(w, orelse));
            }
        }
        StmtKind::HostBlock { what, body } => {
            w.line(format!("# {what}"));
            stmts(w, body);
        }
        StmtKind::Expr(e) => w.line(expr(e)),
        StmtKind::Pass => w.line("pass"),
        StmtKind::Barrier => w.line("appy.syncthreads()"),
        StmtKind::Other(what) => w.line(format!("# {what}")),
    }
}

/// A kernel as one assembly-APPy loop nest.
pub fn kernel(w: &mut Writer, k: &Kernel) {
    w.line(format!("# {}", k.name));
    let depth = k.dims.len();
    if depth == 0 {
        w.line("#pragma sequential for");
    }
    for d in &k.dims {
        let stmt = Stmt::new(
            StmtKind::For {
                var: d.var.clone(),
                range: d.range.clone(),
                body: vec![],
                kind: LoopKind::Parallel { simd: d.simd },
                vector: None,
                num_warps: None,
            },
            d.span,
        );
        // Print only the header of each nest level.
        let mut tmp = Writer::new(0);
        super::python::stmt(&mut tmp, &stmt);
        let text = tmp.finish();
        for l in text.lines().filter(|l| !l.trim_start().starts_with("pass")) {
            w.line(l);
        }
        w.indent();
        if let Some(wd) = d.simd {
            w.line(format!(
                "{0} = appy.vidx({0}, {1}, {2})",
                d.var,
                width(wd),
                expr(&d.range.stop)
            ));
        }
    }
    if depth == 0 {
        // The sequential loop is the body's only statement, minus its pragma line.
        let mut tmp = Writer::new(0);
        stmts(&mut tmp, &k.body);
        for l in tmp.finish().lines() {
            w.line(l);
        }
    } else {
        stmts(w, &k.body);
    }
    for _ in 0..depth {
        w.dedent();
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
