//! Expressions, for every form: names as the tiles spell them, loads masked by the lanes of
//! their indices, arithmetic, calls, reductions, and the dtypes of values.
//!
//! Design decisions:
//! - Printed by precedence (`expr_prec`), parenthesised only where needed; a left-associated
//!   chain prints in linear time.
//! - NumPy's float64 arithmetic on integers is kept: an integer operand meeting a float
//!   literal, or a true division of integers, is converted to fp64 first. An array element
//!   meeting a float literal, and the array elements of a true division, go through
//!   `_appyc_np_float`, which does that for integer arrays and nothing for float ones: the
//!   dtype is known only at launch (`K[i] * 0.1` with int64 `K` lost 1e-7 in fp32).
//! - Transcendentals go through libdevice, correct in fp32 and fp64 alike.
//! - A dtype decided by several arrays is left to Triton's promotion
//!   (`(tl.zeros((), a) + tl.zeros((), b)).dtype`): the arrays' dtypes are known only at launch.
//!   Where NumPy's differs (a float32 element plus an int64 element is float64 in NumPy,
//!   float32 in Triton) results differ by float32's rounding: not handled.

use super::cx::{mask_arg, width_text, Cx};
use crate::diag::{Diagnostic, Result};
use crate::ir::python::{binop_prec, float_literal, prec};
use crate::ir::*;
use std::collections::{BTreeSet, HashMap, HashSet};

/// How an operand of a float operation is converted to compute as NumPy does.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Widen {
    Keep,
    /// A known integer (a loop variable, an integer parameter): to fp64.
    ToFloat64,
    /// A value loaded from an array whose dtype is known only at launch: `_appyc_np_float`.
    NumpyFloat,
}

/// A true division's value is a float already (`_appyc_np_float` on it would do nothing).
fn is_true_division(e: &Expr) -> bool {
    matches!(e.kind, ExprKind::Binary { op: BinOp::Div, .. })
}

/// Whether `e`'s value (not an index of it) comes from an array element.
fn loads_array_value(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Subscript { .. } => true,
        ExprKind::Binary { left, right, .. } => loads_array_value(left) || loads_array_value(right),
        ExprKind::Unary { operand, .. } => loads_array_value(operand),
        ExprKind::IfExp { body, orelse, .. } => {
            loads_array_value(body) || loads_array_value(orelse)
        }
        ExprKind::Reduce { value, .. } | ExprKind::ReduceRows { value, .. } => {
            loads_array_value(value)
        }
        _ => false,
    }
}

impl Cx<'_> {
    /// Whether `e` is an integer: literals, loop variables, integer parameters, extents and
    /// integer arithmetic on them.
    pub(super) fn is_int(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Int(_) | ExprKind::Shape { .. } => true,
            ExprKind::Name(n) => self.int_names.contains(n),
            ExprKind::Binary {
                op: BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::FloorDiv | BinOp::Mod,
                left,
                right,
            } => self.is_int(left) && self.is_int(right),
            ExprKind::Unary {
                op: UnaryOp::Neg,
                operand,
            } => self.is_int(operand),
            _ => false,
        }
    }

    /// Whether `e` is the same in every program and computable by the launcher: integer
    /// literals, extents and parameters the kernel never binds, under `+ - *` and negation.
    pub(super) fn host_value(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Int(_) | ExprKind::Shape { .. } => true,
            ExprKind::Name(n) => self.host_ints.contains(n),
            ExprKind::Binary {
                op: BinOp::Add | BinOp::Sub | BinOp::Mul,
                left,
                right,
            } => self.host_value(left) && self.host_value(right),
            ExprKind::Unary {
                op: UnaryOp::Neg,
                operand,
            } => self.host_value(operand),
            _ => false,
        }
    }

    /// NumPy computes `i + 0.5` and `i / n` on Python ints in float64; Triton would give fp32
    /// (an int32 vector meets a weak float literal). The integer side is converted to fp64
    /// first. An array's element meets the same rule when the array holds integers, which is
    /// known only at launch: such an operand goes through `_appyc_np_float`, which converts
    /// integers and bools to fp64 and leaves floats as they are (`K[i] * 0.5`, `K[i] / n`).
    fn float64_operands(&self, op: BinOp, left: &Expr, right: &Expr) -> (Widen, Widen) {
        let literal = |e: &Expr| matches!(e.kind, ExprKind::Float(_) | ExprKind::FloatSpecial(_));
        // A Triton value, not a constant the JIT folds (`(1).to(...)` would not compile).
        let int_value = |e: &Expr| {
            self.is_int(e)
                && e.any(&mut |x| matches!(x.kind, ExprKind::Name(_) | ExprKind::Shape { .. }))
        };
        let widen = |e: &Expr, other_float: bool| {
            if int_value(e) && other_float {
                Widen::ToFloat64
            } else if other_float && loads_array_value(e) && !is_true_division(e) {
                Widen::NumpyFloat
            } else {
                Widen::Keep
            }
        };
        match op {
            BinOp::Div if self.is_int(left) && self.is_int(right) => {
                if int_value(left) {
                    (Widen::ToFloat64, Widen::Keep)
                } else if int_value(right) {
                    (Widen::Keep, Widen::ToFloat64)
                } else {
                    (Widen::Keep, Widen::Keep)
                }
            }
            // A true division of array elements: integer arrays divide in fp64. A Python int
            // meeting a float array keeps the array's type, so it is left as it is.
            BinOp::Div => {
                let side = |e: &Expr| match loads_array_value(e) {
                    true => Widen::NumpyFloat,
                    false => Widen::Keep,
                };
                (side(left), side(right))
            }
            BinOp::Add | BinOp::Sub | BinOp::Mul => {
                (widen(left, literal(right)), widen(right, literal(left)))
            }
            _ => (Widen::Keep, Widen::Keep),
        }
    }

    /// `e` as its lanes see it: a reduction to a scalar is a constant, and a reduction over the
    /// rows of a row tile is its value without the rows (one value per lane).
    pub(super) fn lanes_view(&self, e: &Expr) -> Expr {
        e.clone().rewrite(&mut |x| match x.kind {
            ExprKind::Reduce { .. } => Expr::int(0, x.span),
            ExprKind::ReduceRows { value, .. } => value.rewrite(&mut |y| match &y.kind {
                ExprKind::Name(n) if self.rows.contains(n) => Expr::int(0, y.span),
                _ => y,
            }),
            _ => x,
        })
    }

    /// The masks guarding the lanes of a vector expression (empty for scalars).
    pub(super) fn mask_of(&self, e: &Expr) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        // A reduction's result is a scalar: the masks inside it are consumed there.
        // (Copied only when there is one: a long chain of gathers asks for the masks of every
        // load in it, and copying each subtree made that cubic.)
        let pruned;
        let e = if e.any(&mut |x| {
            matches!(
                x.kind,
                ExprKind::Reduce { .. } | ExprKind::ReduceRows { .. }
            )
        }) {
            pruned = self.lanes_view(e);
            &pruned
        } else {
            e
        };
        e.walk(&mut |x| match &x.kind {
            ExprKind::Name(n) => {
                if let Some(m) = self.masks.get(n) {
                    out.extend(m.iter().cloned());
                }
            }
            ExprKind::Vidx { .. } => {
                // An inline vidx: its bound check is spelled out where it is used.
                if let Ok(m) = self.inline_vidx_mask(x) {
                    out.insert(m);
                }
            }
            _ => {}
        });
        out
    }

    fn inline_vidx_mask(&self, e: &Expr) -> Result<String> {
        let ExprKind::Vidx { bound, .. } = &e.kind else {
            unreachable!()
        };
        let mut me = Cx {
            file: self.file,
            masks: self.masks.clone(),
            float_params: self.float_params.clone(),
            carried: HashMap::new(),
            carried_dtype: HashMap::new(),
            lane_vectors: HashSet::new(),
            lane_width: self.lane_width,
            tile_names: self.tile_names.clone(),
            int_names: self.int_names.clone(),
            rows: self.rows.clone(),
            strips: self.strips.clone(),
            splitting: false,
            host_ints: self.host_ints.clone(),
            one_strip: vec![],
            row_block: vec![],
            load_waves: false,
            preloaded: vec![],
        };
        Ok(format!("({}) < {}", me.expr(e)?, me.expr(bound)?))
    }

    pub(crate) fn pointer(&mut self, e: &Expr) -> Result<String> {
        let ExprKind::Subscript { array, indices } = &e.kind else {
            unreachable!()
        };
        let mut parts = vec![array.clone()];
        for (d, ix) in indices.iter().enumerate() {
            let Index::At(i) = ix else {
                return Err(Diagnostic::error(
                    e.span,
                    "internal: slice left after strip-mining",
                ));
            };
            let t = self.expr_prec(i, binop_prec(BinOp::Mul) + 1)?;
            parts.push(format!("{t} * {array}_stride{d}"));
        }
        Ok(parts.join(" + "))
    }

    pub(crate) fn expr(&mut self, e: &Expr) -> Result<String> {
        self.expr_prec(e, 0)
    }

    pub(super) fn expr_prec(&mut self, e: &Expr, ctx: u8) -> Result<String> {
        let paren = |s: String, own: u8| if own < ctx { format!("({s})") } else { s };
        Ok(match &e.kind {
            ExprKind::Name(n) if n == "appy.MVL" => "MVL".into(),
            ExprKind::Name(n) => self.tile_names.get(n).cloned().unwrap_or_else(|| n.clone()),
            ExprKind::Int(v) => paren(v.to_string(), if *v < 0 { prec::UNARY } else { prec::ATOM }),
            ExprKind::Float(v) => paren(
                float_literal(*v),
                if *v < 0.0 { prec::UNARY } else { prec::ATOM },
            ),
            ExprKind::Bool(b) => if *b { "True" } else { "False" }.into(),
            ExprKind::FloatSpecial(s) => format!("float(\"{s}\")"),
            ExprKind::Subscript { .. } if self.preloaded.iter().any(|(x, _)| x == e) => {
                let (_, name) = self.preloaded.iter().find(|(x, _)| x == e).unwrap();
                name.clone()
            }
            ExprKind::Subscript { .. } => {
                let ptr = self.pointer(e)?;
                let mask = self.mask_of(e);
                format!("tl.load({ptr}{})", mask_arg(&mask))
            }
            ExprKind::Shape { array, dim } => format!("{array}_shape{dim}"),
            ExprKind::Binary {
                op: BinOp::Pow,
                left,
                right,
            } => match right.kind {
                ExprKind::Int(2) => {
                    let l = self.expr_prec(left, binop_prec(BinOp::Mul) + 1)?;
                    paren(format!("{l} * {l}"), binop_prec(BinOp::Mul))
                }
                _ => format!("libdevice.pow({}, {})", self.expr(left)?, self.expr(right)?),
            },
            ExprKind::Binary { op, left, right } => {
                let p = binop_prec(*op);
                let (wide_left, wide_right) = self.float64_operands(*op, left, right);
                // Appended to the left operand's text, not formatted anew: a long
                // left-associated chain (`a + b + c + ...`) then prints in linear time.
                let mut l = match wide_left {
                    Widen::Keep => self.expr_prec(left, p)?,
                    Widen::ToFloat64 => {
                        format!("{}.to(tl.float64)", self.expr_prec(left, prec::ATOM)?)
                    }
                    Widen::NumpyFloat => format!("_appyc_np_float({})", self.expr(left)?),
                };
                let r = match wide_right {
                    Widen::Keep => self.expr_prec(right, p + 1)?,
                    Widen::ToFloat64 => {
                        format!("{}.to(tl.float64)", self.expr_prec(right, prec::ATOM)?)
                    }
                    Widen::NumpyFloat => format!("_appyc_np_float({})", self.expr(right)?),
                };
                l.reserve(r.len() + 5);
                l.push(' ');
                l.push_str(op.python());
                l.push(' ');
                l.push_str(&r);
                paren(l, p)
            }
            ExprKind::Unary { op, operand } => {
                let o = self.expr_prec(operand, prec::UNARY)?;
                match op {
                    UnaryOp::Neg => paren(format!("-{o}"), prec::UNARY),
                    UnaryOp::Invert => paren(format!("~{o}"), prec::UNARY),
                    UnaryOp::Not => format!("({o} == 0)"),
                }
            }
            ExprKind::Compare { op, left, right } => {
                let l = self.expr_prec(left, prec::CMP + 1)?;
                let r = self.expr_prec(right, prec::CMP + 1)?;
                paren(format!("{l} {} {r}", op.python()), prec::CMP)
            }
            ExprKind::BoolOp { op, values } => {
                // Element-wise on vectors: `&`/`|` over comparisons (which bind looser, hence parens).
                let sym = match op {
                    BoolOp::And => " & ",
                    BoolOp::Or => " | ",
                };
                let parts = values
                    .iter()
                    .map(|v| self.expr_prec(v, prec::ATOM))
                    .collect::<Result<Vec<_>>>()?;
                paren(parts.join(sym), binop_prec(BinOp::BitAnd))
            }
            ExprKind::IfExp { test, body, orelse } => format!(
                "tl.where({}, {}, {})",
                self.expr(test)?,
                self.expr(body)?,
                self.expr(orelse)?
            ),
            ExprKind::Call { func, args } => self.call(e, func, args)?,
            ExprKind::Vidx { start, width, .. } => {
                let s = self.expr_prec(start, binop_prec(BinOp::Add))?;
                let wd = width_text(*width);
                paren(format!("{s} + tl.arange(0, {wd})"), binop_prec(BinOp::Add))
            }
            ExprKind::ReduceRows { .. } => {
                return Err(Diagnostic::error(
                    e.span,
                    "internal: a reduction over rows outside the updates of its row tile",
                ))
            }
            ExprKind::Reduce { lanes: Some(_), .. } => {
                return Err(Diagnostic::error(
                    e.span,
                    "internal: a reduction into lanes outside the updates of its strip loop",
                ))
            }
            ExprKind::Reduce { op, value, .. } => {
                let mask = self.mask_of(value);
                let v = self.expr(value)?;
                let m = if mask.is_empty() {
                    "True".to_string()
                } else {
                    mask.iter().cloned().collect::<Vec<_>>().join(" & ")
                };
                match op {
                    ReduceOp::Sum => format!("tl.sum(tl.where({m}, {v}, 0), axis=0)"),
                    ReduceOp::Max => format!("_appyc_masked_max({v}, {m})"),
                    ReduceOp::Min => format!("_appyc_masked_min({v}, {m})"),
                }
            }
            ExprKind::Unsupported(what) => {
                return Err(Diagnostic::error(
                    e.span,
                    format!("{what} is not supported inside a parallel region"),
                ))
            }
            ExprKind::Broadcast { .. } => {
                return Err(Diagnostic::error(
                    e.span,
                    "internal: a broadcast left after tensor lowering",
                ))
            }
        })
    }

    fn call(&mut self, e: &Expr, func: &str, args: &[Expr]) -> Result<String> {
        if func == STORED_IN {
            let [value, Expr {
                kind: ExprKind::Subscript { array, .. },
                ..
            }] = args
            else {
                unreachable!("fuse_into_reduction makes (value, element)");
            };
            let value = self.cast_operand(value)?;
            return Ok(format!("{value}.to({array}.dtype.element_ty)"));
        }
        let name = func
            .strip_prefix("np.")
            .or_else(|| func.strip_prefix("numpy."))
            .or_else(|| func.strip_prefix("math."))
            .unwrap_or(func);
        let a = args
            .iter()
            .map(|x| self.expr(x))
            .collect::<Result<Vec<_>>>()?;
        let arity = |n: usize| -> Result<()> {
            if a.len() == n {
                Ok(())
            } else {
                Err(Diagnostic::error(
                    e.span,
                    format!("`{func}` takes {n} argument(s) here, not {}", a.len()),
                ))
            }
        };
        Ok(match name {
            // Transcendentals go through libdevice: correct in fp32 and fp64 alike.
            // (The prelude gives the interpreter a stand-in for each one listed here.)
            "exp" | "log" | "sin" | "cos" | "tan" | "tanh" | "sinh" | "cosh" | "exp2" | "log2"
            | "log10" | "log1p" | "expm1" | "erf" | "floor" | "ceil" => {
                arity(1)?;
                format!("libdevice.{name}({})", a[0])
            }
            "sqrt" => {
                arity(1)?;
                format!("libdevice.sqrt({})", a[0])
            }
            "abs" | "absolute" | "fabs" => {
                arity(1)?;
                format!("tl.abs({})", a[0])
            }
            "power" | "pow" => {
                arity(2)?;
                format!("libdevice.pow({}, {})", a[0], a[1])
            }
            "where" => {
                arity(3)?;
                format!("tl.where({}, {}, {})", a[0], a[1], a[2])
            }
            "maximum" | "max" | "fmax" | "minimum" | "min" | "fmin" => {
                if a.len() < 2 {
                    return Err(Diagnostic::error(
                        e.span,
                        format!("`{func}` of one argument is a reduction; not supported inside a parallel loop yet"),
                    ));
                }
                let f = if matches!(name, "maximum" | "max" | "fmax") {
                    "tl.maximum"
                } else {
                    "tl.minimum"
                };
                let mut acc = a[0].clone();
                for x in &a[1..] {
                    acc = format!("{f}({acc}, {x})");
                }
                acc
            }
            "float" | "float64" => {
                arity(1)?;
                format!("{}.to(tl.float64)", self.cast_operand(&args[0])?)
            }
            "float32" => {
                arity(1)?;
                format!("{}.to(tl.float32)", self.cast_operand(&args[0])?)
            }
            "int" | "int64" => {
                arity(1)?;
                format!("{}.to(tl.int64)", self.cast_operand(&args[0])?)
            }
            "int32" => {
                arity(1)?;
                format!("{}.to(tl.int32)", self.cast_operand(&args[0])?)
            }
            _ => {
                return Err(Diagnostic::error(
                    e.span,
                    format!("`{func}` is not supported inside a parallel region"),
                )
                .with_help("kernels support arithmetic, np.exp/exp2/expm1/log/log2/log10/log1p/sqrt/abs/sin/cos/tan/sinh/cosh/tanh/erf/floor/ceil/power, np.where, np.maximum/minimum, min/max/abs/float/int"))
            }
        })
    }

    /// `x.to(...)` needs a tensor: literals are wrapped with `tl.full`.
    fn cast_operand(&mut self, e: &Expr) -> Result<String> {
        Ok(match e.kind {
            ExprKind::Int(v) => format!("tl.full((), {v}, tl.int64)"),
            ExprKind::Float(v) => format!("tl.full((), {}, tl.float64)", float_literal(v)),
            _ => self.expr_prec(e, prec::ATOM)?,
        })
    }

    /// A Triton expression for the dtype that `update` has, when the kernel's arrays and
    /// parameters decide it; `None` leaves the literal's own type.
    pub(super) fn dtype_of(&self, update: &Expr, target: &str) -> Option<String> {
        self.promoted_dtype(update, target, &|_| None)
    }

    /// `dtype_of`, with also the dtypes that `named` gives to names (locals already defined).
    pub(super) fn promoted_dtype(
        &self,
        update: &Expr,
        target: &str,
        named: &dyn Fn(&str) -> Option<String>,
    ) -> Option<String> {
        struct Leaves<'c> {
            target: &'c str,
            floats: &'c HashSet<String>,
            named: &'c dyn Fn(&str) -> Option<String>,
        }
        // The value's dtype comes from the arrays it loads (not from arrays used as indices),
        // from fp64 parameters and from the names `named` knows.
        fn leaves(e: &Expr, cx: &Leaves, out: &mut Vec<String>) {
            let mut add = |t: String| {
                if !out.contains(&t) {
                    out.push(t)
                }
            };
            match &e.kind {
                ExprKind::Subscript { array, .. } => add(format!("{array}.dtype.element_ty")),
                ExprKind::Name(n) if n != cx.target && cx.floats.contains(n) => {
                    add("tl.float64".into())
                }
                ExprKind::Name(n) if n != cx.target => {
                    if let Some(t) = (cx.named)(n) {
                        add(t)
                    }
                }
                ExprKind::Binary { left, right, .. } => {
                    leaves(left, cx, out);
                    leaves(right, cx, out);
                }
                ExprKind::Unary { operand, .. } => leaves(operand, cx, out),
                ExprKind::IfExp { body, orelse, .. } => {
                    leaves(body, cx, out);
                    leaves(orelse, cx, out);
                }
                // A value converted to an element type has that type.
                ExprKind::Call { func, args } if func == STORED_IN => leaves(&args[1], cx, out),
                ExprKind::Call { args, .. } => args.iter().for_each(|a| leaves(a, cx, out)),
                ExprKind::Reduce { value, .. } | ExprKind::ReduceRows { value, .. } => {
                    leaves(value, cx, out)
                }
                _ => {}
            }
        }
        let cx = Leaves {
            target,
            floats: &self.float_params,
            named,
        };
        let mut strong: Vec<String> = vec![];
        leaves(update, &cx, &mut strong);
        match strong.len() {
            0 => None,
            1 => strong.pop(),
            _ => Some(format!(
                "({}).dtype",
                strong
                    .iter()
                    .map(|t| format!("tl.zeros((), {t})"))
                    .collect::<Vec<_>>()
                    .join(" + ")
            )),
        }
    }
}
