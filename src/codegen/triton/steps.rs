//! A time loop's host statements as device scalars (`schedule::host_steps`): every program of
//! a persistent kernel computes them alike, in registers.
//!
//! Design decisions:
//! - Values have Python's types, not Triton's: a float is fp64 and an integer int64 whatever
//!   the literals (Triton would make `1.0` an fp32 constant and `t` an int32), so every float
//!   literal is an fp64 scalar and integers widen before they meet a float.
//! - Integer `//` and `%` round toward negative infinity as Python's do (Triton's truncate).
//! - Every assignment ends in the carried type, so a loop-carried register keeps one dtype.

use super::dialect::Dialect;
use crate::ir::python::float_literal;
use crate::ir::*;
use crate::schedule::host_steps::{short_call, ScalarType};

/// A printed scalar: its text, its type, and whether it is a bare Python literal (which has no
/// `.to`).
#[derive(Clone)]
struct Scalar {
    text: String,
    ty: ScalarType,
    literal: bool,
}

/// Prints `e` for a step, with `env` giving each name's type.
pub(super) struct StepPrinter<'a> {
    pub env: &'a dyn Fn(&str) -> ScalarType,
    pub dialect: Dialect,
}

impl StepPrinter<'_> {
    /// `e` converted to `ty`, ready to assign to a register of that type.
    pub fn value_as(&self, e: &Expr, ty: ScalarType) -> String {
        let s = self.scalar(e);
        self.convert(s, ty)
    }

    fn scalar(&self, e: &Expr) -> Scalar {
        use ScalarType::*;
        match &e.kind {
            ExprKind::Int(v) => Scalar {
                text: if *v < 0 {
                    format!("({v})")
                } else {
                    v.to_string()
                },
                ty: Int,
                literal: true,
            },
            ExprKind::Float(v) => Scalar {
                text: self.dialect.full(&float_literal(*v), "tl.float64"),
                ty: Float,
                literal: false,
            },
            ExprKind::FloatSpecial(s) => Scalar {
                text: self.dialect.full(&format!("float(\"{s}\")"), "tl.float64"),
                ty: Float,
                literal: false,
            },
            ExprKind::Bool(b) => Scalar {
                text: self.dialect.full(&i32::from(*b).to_string(), "tl.int1"),
                ty: Bool,
                literal: false,
            },
            ExprKind::Name(n) => Scalar {
                text: n.clone(),
                ty: (self.env)(n),
                literal: false,
            },
            ExprKind::Shape { array, dim } => Scalar {
                text: format!("{array}_shape{dim}"),
                ty: Int,
                literal: false,
            },
            ExprKind::Binary { op, left, right } => self.binary(*op, left, right),
            ExprKind::Unary { op, operand } => {
                let o = self.scalar(operand);
                match op {
                    UnaryOp::Not => tensor(format!("({}) == 0", o.text), Bool),
                    UnaryOp::Neg => {
                        let ty = if o.ty == Bool { Int } else { o.ty };
                        Scalar {
                            text: format!("(-{})", o.text),
                            ty,
                            literal: o.literal,
                        }
                    }
                    UnaryOp::Invert => tensor(format!("(~{})", as_int(o)), Int),
                }
            }
            ExprKind::Compare { op, left, right } => {
                let (l, r) = self.promoted(left, right);
                tensor(format!("({} {} {})", l.text, op.python(), r.text), Bool)
            }
            ExprKind::BoolOp { op, values } => self.bool_op(*op, values),
            ExprKind::IfExp { test, body, orelse } => {
                let c = self.convert(self.scalar(test), Bool);
                let (a, b) = self.promoted(body, orelse);
                tensor(format!("tl.where({c}, {}, {})", a.text, b.text), a.ty)
            }
            ExprKind::Call { func, args } => self.call(func, args),
            _ => unreachable!("schedule::host_steps admits scalar expressions only"),
        }
    }

    /// `a or b`, `a and b`: Python's operand, not a bool. Of bools, a bool (`&`, `|`); else the
    /// operands at their common type, chosen right to left by truth (`a or b` is `a` when `a`
    /// is true, `a and b` is `a` when `a` is false). Both sides are computed (scalars, no side
    /// effects); the one Python skips is not chosen.
    fn bool_op(&self, op: BoolOp, values: &[Expr]) -> Scalar {
        use ScalarType::*;
        let parts: Vec<Scalar> = values.iter().map(|v| self.scalar(v)).collect();
        if parts.iter().all(|p| p.ty == Bool) {
            let sym = match op {
                BoolOp::And => " & ",
                BoolOp::Or => " | ",
            };
            let texts: Vec<String> = parts.into_iter().map(|p| format!("({})", p.text)).collect();
            return tensor(texts.join(sym), Bool);
        }
        let ty = if parts.iter().any(|p| p.ty == Float) {
            Float
        } else {
            Int
        };
        let mut parts = parts.into_iter().rev();
        let mut acc = self.convert(parts.next().expect("a BoolOp has operands"), ty);
        for p in parts {
            let truth = format!("({})", self.convert(p.clone(), Bool));
            let own = self.convert(p, ty);
            acc = match op {
                BoolOp::Or => format!("tl.where({truth}, {own}, {acc})"),
                BoolOp::And => format!("tl.where({truth}, {acc}, {own})"),
            };
        }
        tensor(acc, ty)
    }

    /// Both operands at their common type (a float if either is one).
    fn promoted(&self, a: &Expr, b: &Expr) -> (Scalar, Scalar) {
        let (a, b) = (self.scalar(a), self.scalar(b));
        if a.ty == ScalarType::Float || b.ty == ScalarType::Float {
            (self.as_float(a), self.as_float(b))
        } else {
            (a, b)
        }
    }

    fn binary(&self, op: BinOp, left: &Expr, right: &Expr) -> Scalar {
        use ScalarType::*;
        match op {
            BinOp::Div => {
                let (l, r) = (
                    self.as_float(self.scalar(left)),
                    self.as_float(self.scalar(right)),
                );
                tensor(format!("({} / {})", l.text, r.text), Float)
            }
            BinOp::Pow => {
                let (l, r) = (self.scalar(left), self.scalar(right));
                let ints = l.ty != Float && r.ty != Float;
                let text = format!(
                    "libdevice.pow({}, {})",
                    self.as_float(l).text,
                    self.as_float(r).text
                );
                if ints {
                    tensor(format!("{text}.to(tl.int64)"), Int)
                } else {
                    tensor(text, Float)
                }
            }
            BinOp::FloorDiv | BinOp::Mod => {
                let (l, r) = self.promoted(left, right);
                if l.ty == Float {
                    let q = format!("libdevice.floor({} / {})", l.text, r.text);
                    return tensor(
                        if op == BinOp::FloorDiv {
                            q
                        } else {
                            format!("({} - {q} * {})", l.text, r.text)
                        },
                        Float,
                    );
                }
                let (a, b) = (as_int(l), as_int(r));
                // Python rounds toward -inf: a truncated quotient is one too high when the
                // remainder is not zero and its sign differs from the divisor's.
                let off = format!("((({a} % {b}) != 0) & ((({a} % {b}) < 0) != ({b} < 0)))");
                tensor(
                    if op == BinOp::FloorDiv {
                        format!("({a} // {b} - {off}.to(tl.int64))")
                    } else {
                        format!("({a} % {b} + tl.where({off}, {b}, 0))")
                    },
                    Int,
                )
            }
            _ => {
                let (l, r) = self.promoted(left, right);
                let ty = if l.ty == Float { Float } else { Int };
                Scalar {
                    literal: l.literal && r.literal,
                    text: format!("({} {} {})", l.text, op.python(), r.text),
                    ty,
                }
            }
        }
    }

    fn call(&self, func: &str, args: &[Expr]) -> Scalar {
        use ScalarType::*;
        let name = short_call(func);
        let a: Vec<Scalar> = args.iter().map(|x| self.scalar(x)).collect();
        match name {
            "float" | "float64" => self.as_float(one(a)),
            "int" | "int64" => tensor(format!("{}.to(tl.int64)", self.tensor_of(one(a))), Int),
            "bool" => tensor(self.convert(one(a), Bool), Bool),
            "abs" | "absolute" | "fabs" => {
                let x = one(a);
                let ty = if x.ty == Bool { Int } else { x.ty };
                tensor(format!("tl.abs({})", self.tensor_of(x)), ty)
            }
            "min" | "max" | "minimum" | "maximum" | "fmin" | "fmax" => {
                let float = a.iter().any(|x| x.ty == Float);
                let f = if matches!(name, "max" | "maximum" | "fmax") {
                    "tl.maximum"
                } else {
                    "tl.minimum"
                };
                let mut parts = a.into_iter().map(|x| {
                    if float {
                        self.as_float(x).text
                    } else {
                        self.tensor_of(x)
                    }
                });
                let mut acc = parts.next().expect("min/max of one argument is rejected");
                for p in parts {
                    acc = format!("{f}({acc}, {p})");
                }
                tensor(acc, if float { Float } else { Int })
            }
            "pow" | "power" => {
                let mut it = a.into_iter();
                let (l, r) = (
                    self.as_float(it.next().unwrap()),
                    self.as_float(it.next().unwrap()),
                );
                tensor(format!("libdevice.pow({}, {})", l.text, r.text), Float)
            }
            f => tensor(
                format!("libdevice.{f}({})", self.as_float(one(a)).text),
                Float,
            ),
        }
    }
}

fn tensor(text: String, ty: ScalarType) -> Scalar {
    Scalar {
        text,
        ty,
        literal: false,
    }
}

fn one(mut a: Vec<Scalar>) -> Scalar {
    a.remove(0)
}

impl StepPrinter<'_> {
    /// A literal as a tensor (a bare Python number has no `.to`).
    fn tensor_of(&self, s: Scalar) -> String {
        if s.literal {
            let dtype = match s.ty {
                ScalarType::Float => "tl.float64",
                ScalarType::Bool => "tl.int1",
                ScalarType::Int => "tl.int64",
            };
            self.dialect.full(&s.text, dtype)
        } else {
            s.text
        }
    }

    fn as_float(&self, s: Scalar) -> Scalar {
        if s.ty == ScalarType::Float {
            return s;
        }
        let text = if s.literal {
            self.dialect.full(&s.text, "tl.float64")
        } else {
            format!("({}).to(tl.float64)", s.text)
        };
        tensor(text, ScalarType::Float)
    }

    /// `s` as a value of type `ty` (what a register of that type holds).
    fn convert(&self, s: Scalar, ty: ScalarType) -> String {
        match ty {
            ScalarType::Float => {
                let f = self.as_float(s);
                f.text
            }
            ScalarType::Int => format!("({}).to(tl.int64)", self.tensor_of(s)),
            ScalarType::Bool if s.ty == ScalarType::Bool => self.tensor_of(s),
            ScalarType::Bool => format!("({} != 0)", self.tensor_of(s)),
        }
    }
}

fn as_int(s: Scalar) -> String {
    match s.ty {
        ScalarType::Int if s.literal => s.text,
        ScalarType::Bool => format!("({}).to(tl.int64)", s.text),
        _ => s.text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontend::source::Span;

    fn n(s: &str) -> Expr {
        Expr::name(s, Span::DUMMY)
    }
    fn int(v: i64) -> Expr {
        Expr::int(v, Span::DUMMY)
    }

    fn env(n: &str) -> ScalarType {
        match n {
            "dt" => ScalarType::Float,
            _ => ScalarType::Int,
        }
    }

    #[test]
    fn floats_are_fp64_and_integers_widen_before_they_meet_one() {
        let p = StepPrinter {
            env: &env,
            dialect: Dialect::Triton,
        };
        let e = Expr::binary(
            BinOp::Div,
            Expr::new(ExprKind::Float(1.0), Span::DUMMY),
            Expr::binary(BinOp::Add, n("t"), int(1)),
        );
        assert_eq!(
            p.value_as(&e, ScalarType::Float),
            "(tl.full((), 1.0, tl.float64) / ((t + 1)).to(tl.float64))"
        );
        assert_eq!(
            p.value_as(&Expr::binary(BinOp::Add, n("it"), int(1)), ScalarType::Int),
            "((it + 1)).to(tl.int64)"
        );
        assert_eq!(
            p.value_as(&int(0), ScalarType::Int),
            "(tl.full((), 0, tl.int64)).to(tl.int64)"
        );
    }

    #[test]
    fn or_and_and_of_numbers_give_python_s_operand() {
        let p = StepPrinter {
            env: &env,
            dialect: Dialect::Triton,
        };
        let op = |op, a, b| {
            Expr::new(
                ExprKind::BoolOp {
                    op,
                    values: vec![a, b],
                },
                Span::DUMMY,
            )
        };
        let dt_or = op(
            BoolOp::Or,
            n("dt"),
            Expr::new(ExprKind::Float(0.5), Span::DUMMY),
        );
        assert_eq!(
            p.value_as(&dt_or, ScalarType::Float),
            "tl.where(((dt != 0)), dt, tl.full((), 0.5, tl.float64))"
        );
        let t_and = op(BoolOp::And, n("t"), int(3));
        assert_eq!(
            p.value_as(&t_and, ScalarType::Int),
            "(tl.where(((t != 0)), (tl.full((), 3, tl.int64)).to(tl.int64), (t).to(tl.int64))).to(tl.int64)"
        );
        // Of bools, a bool.
        let lt = |a: Expr, b: Expr| {
            Expr::new(
                ExprKind::Compare {
                    op: CmpOp::Lt,
                    left: Box::new(a),
                    right: Box::new(b),
                },
                Span::DUMMY,
            )
        };
        let both = op(BoolOp::And, lt(n("a"), n("b")), lt(n("b"), n("c")));
        assert_eq!(p.value_as(&both, ScalarType::Bool), "((a < b)) & ((b < c))");
    }

    #[test]
    fn integer_floor_division_rounds_toward_minus_infinity() {
        let p = StepPrinter {
            env: &env,
            dialect: Dialect::Triton,
        };
        let q = p.value_as(
            &Expr::binary(BinOp::FloorDiv, n("a"), n("b")),
            ScalarType::Int,
        );
        assert!(
            q.contains("(a // b - (((a % b) != 0) & (((a % b) < 0) != (b < 0))).to(tl.int64))"),
            "{q}"
        );
    }
}
