//! Expressions of the IR: operators, subscripts, vector widths and `Expr` itself.

use crate::frontend::source::Span;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    FloorDiv,
    Mod,
    Pow,
    BitAnd,
    BitOr,
    BitXor,
    LShift,
    RShift,
}

impl BinOp {
    pub fn python(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::FloorDiv => "//",
            BinOp::Mod => "%",
            BinOp::Pow => "**",
            BinOp::BitAnd => "&",
            BinOp::BitOr => "|",
            BinOp::BitXor => "^",
            BinOp::LShift => "<<",
            BinOp::RShift => ">>",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmpOp {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

impl CmpOp {
    pub fn python(self) -> &'static str {
        match self {
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
            CmpOp::Eq => "==",
            CmpOp::Ne => "!=",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnaryOp {
    Neg,
    Not,
    Invert,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BoolOp {
    And,
    Or,
}

/// The reduction operators APPy knows: `+=`/`-=` updates, `max`/`min` updates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReduceOp {
    Sum,
    Max,
    Min,
}

impl ReduceOp {
    pub fn name(self) -> &'static str {
        match self {
            ReduceOp::Sum => "sum",
            ReduceOp::Max => "max",
            ReduceOp::Min => "min",
        }
    }
}

/// One subscript position.
#[derive(Debug, Clone, PartialEq)]
pub enum Index {
    /// A scalar or vector index expression.
    At(Expr),
    /// `lo:hi` (step 1). `None` bounds are open; only the auto-simd pass removes slices.
    Slice {
        lo: Option<Expr>,
        hi: Option<Expr>,
        span: Span,
    },
    /// `None`: a new axis of length one, for broadcasting.
    NewAxis,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ExprKind {
    Name(String),
    Int(i64),
    Float(f64),
    Bool(bool),
    /// `float('inf')` / `-inf` / `nan` literals, kept symbolic for printing.
    FloatSpecial(&'static str),
    Subscript {
        array: String,
        indices: Vec<Index>,
    },
    /// `A.shape[d]`.
    Shape {
        array: String,
        dim: usize,
    },
    Binary {
        op: BinOp,
        left: Box<Expr>,
        right: Box<Expr>,
    },
    Unary {
        op: UnaryOp,
        operand: Box<Expr>,
    },
    Compare {
        op: CmpOp,
        left: Box<Expr>,
        right: Box<Expr>,
    },
    BoolOp {
        op: BoolOp,
        values: Vec<Expr>,
    },
    IfExp {
        test: Box<Expr>,
        body: Box<Expr>,
        orelse: Box<Expr>,
    },
    /// A call by dotted name (`np.exp`, `max`, `appy.vidx`); keywords are not allowed in kernels.
    Call {
        func: String,
        args: Vec<Expr>,
    },
    /// A vector of indices `start + arange(0, width)` masked by `< bound` (the paper's `vidx`).
    /// Produced by strip-mining; printed as `appy.vidx` in lowered form.
    Vidx {
        start: Box<Expr>,
        width: Width,
        bound: Box<Expr>,
    },
    /// A cross-lane reduction of a vector to a scalar; masked-off lanes never contribute.
    /// Produced by strip-mining from `s += v`, `m = max(m, v)` and reductions into memory.
    /// With `lanes`, the update `s = s ⊕ Reduce(e)` of a strip loop's carried scalar that no
    /// other statement of the loop reads (`strip_mine::accumulate_lanes`): the printer folds
    /// each strip element-wise into the kernel-unique lane vector `lanes` and reduces it into
    /// `s` once after the loop, instead of a cross-lane reduction every strip.
    Reduce {
        op: ReduceOp,
        value: Box<Expr>,
        lanes: Option<String>,
    },
    /// A reduction over the rows (axis 0) of a row tile, the lanes kept on the other axis: one
    /// value per lane, masked-off rows never contributing. Produced by strip-mining a plain
    /// loop whose body only reduces into lane vectors (`strip_mine::row_tile`), as the update
    /// `s = s + ReduceRows(e)` of each strip. How the strips are combined is the printer's:
    /// `acc` names the kernel-unique [rows, lanes] partial accumulator that it keeps across
    /// the strips for `s` (every update of one `s` shares it), reducing its rows once after
    /// the loop.
    ReduceRows {
        op: ReduceOp,
        value: Box<Expr>,
        acc: String,
    },
    /// `(expr)[:, None]`: a tensor result with axes kept (`true`) or inserted (`false`).
    Broadcast {
        value: Box<Expr>,
        keep: Vec<bool>,
    },
    /// Anything the kernel language does not have; an error if it reaches a kernel.
    Unsupported(String),
}

/// A vector width: the tunable machine vector length or a fixed power of two; or, in a row
/// block (`passes::row_block`), the rows a program takes and the lanes left to each of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Width {
    Mvl,
    Fixed(u32),
    /// `ROW_BLOCK` rows of a grid dimension per program, chosen by the launcher.
    RowBlock,
    /// A strip's lanes inside a row block: `MVL // ROW_BLOCK`, so the tile keeps MVL lanes.
    RowBlockLanes,
}

/// The name that stands for `ROW_BLOCK` in IR expressions (a row block strip's step), as
/// `appy.MVL` stands for MVL.
pub const ROW_BLOCK_NAME: &str = "appy.ROW_BLOCK";

/// `_appyc_stored_in(value, A[...])`: `value` converted to the element type of `A` (the
/// element is not loaded). Made only by `passes::fuse_into_reduction`.
pub const STORED_IN: &str = "_appyc_stored_in";

#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

impl Expr {
    pub fn new(kind: ExprKind, span: Span) -> Self {
        Expr { kind, span }
    }
    pub fn name(name: &str, span: Span) -> Self {
        Expr::new(ExprKind::Name(name.to_string()), span)
    }
    pub fn int(v: i64, span: Span) -> Self {
        Expr::new(ExprKind::Int(v), span)
    }
    pub fn binary(op: BinOp, left: Expr, right: Expr) -> Self {
        let span = left.span.to(right.span);
        Expr::new(
            ExprKind::Binary {
                op,
                left: Box::new(left),
                right: Box::new(right),
            },
            span,
        )
    }

    /// Visits this expression and every sub-expression, parents first.
    pub fn walk<'a>(&'a self, f: &mut dyn FnMut(&'a Expr)) {
        f(self);
        match &self.kind {
            ExprKind::Subscript { indices, .. } => {
                for ix in indices {
                    match ix {
                        Index::At(e) => e.walk(f),
                        Index::Slice { lo, hi, .. } => {
                            for e in [lo, hi].into_iter().flatten() {
                                e.walk(f)
                            }
                        }
                        Index::NewAxis => {}
                    }
                }
            }
            ExprKind::Binary { left, right, .. } | ExprKind::Compare { left, right, .. } => {
                left.walk(f);
                right.walk(f);
            }
            ExprKind::Unary { operand, .. } => operand.walk(f),
            ExprKind::BoolOp { values, .. } => values.iter().for_each(|v| v.walk(f)),
            ExprKind::IfExp { test, body, orelse } => {
                test.walk(f);
                body.walk(f);
                orelse.walk(f);
            }
            ExprKind::Call { args, .. } => args.iter().for_each(|a| a.walk(f)),
            ExprKind::Vidx { start, bound, .. } => {
                start.walk(f);
                bound.walk(f);
            }
            ExprKind::Reduce { value, .. }
            | ExprKind::ReduceRows { value, .. }
            | ExprKind::Broadcast { value, .. } => value.walk(f),
            _ => {}
        }
    }

    /// Rewrites this expression bottom-up: `f` sees each node after its children.
    pub fn rewrite(self, f: &mut dyn FnMut(Expr) -> Expr) -> Expr {
        let Expr { kind, span } = self;
        let kind = match kind {
            ExprKind::Subscript { array, indices } => ExprKind::Subscript {
                array,
                indices: indices
                    .into_iter()
                    .map(|ix| match ix {
                        Index::At(e) => Index::At(e.rewrite(f)),
                        Index::Slice { lo, hi, span } => Index::Slice {
                            lo: lo.map(|e| e.rewrite(f)),
                            hi: hi.map(|e| e.rewrite(f)),
                            span,
                        },
                        Index::NewAxis => Index::NewAxis,
                    })
                    .collect(),
            },
            ExprKind::Binary { op, left, right } => ExprKind::Binary {
                op,
                left: Box::new(left.rewrite(f)),
                right: Box::new(right.rewrite(f)),
            },
            ExprKind::Compare { op, left, right } => ExprKind::Compare {
                op,
                left: Box::new(left.rewrite(f)),
                right: Box::new(right.rewrite(f)),
            },
            ExprKind::Unary { op, operand } => ExprKind::Unary {
                op,
                operand: Box::new(operand.rewrite(f)),
            },
            ExprKind::BoolOp { op, values } => ExprKind::BoolOp {
                op,
                values: values.into_iter().map(|v| v.rewrite(f)).collect(),
            },
            ExprKind::IfExp { test, body, orelse } => ExprKind::IfExp {
                test: Box::new(test.rewrite(f)),
                body: Box::new(body.rewrite(f)),
                orelse: Box::new(orelse.rewrite(f)),
            },
            ExprKind::Call { func, args } => ExprKind::Call {
                func,
                args: args.into_iter().map(|a| a.rewrite(f)).collect(),
            },
            ExprKind::Vidx {
                start,
                width,
                bound,
            } => ExprKind::Vidx {
                start: Box::new(start.rewrite(f)),
                width,
                bound: Box::new(bound.rewrite(f)),
            },
            ExprKind::Reduce { op, value, lanes } => ExprKind::Reduce {
                op,
                value: Box::new(value.rewrite(f)),
                lanes,
            },
            ExprKind::ReduceRows { op, value, acc } => ExprKind::ReduceRows {
                op,
                value: Box::new(value.rewrite(f)),
                acc,
            },
            ExprKind::Broadcast { value, keep } => ExprKind::Broadcast {
                value: Box::new(value.rewrite(f)),
                keep,
            },
            other => other,
        };
        f(Expr { kind, span })
    }

    /// True if any sub-expression satisfies `pred`.
    pub fn any(&self, pred: &mut dyn FnMut(&Expr) -> bool) -> bool {
        let mut found = false;
        self.walk(&mut |e| {
            if !found && pred(e) {
                found = true
            }
        });
        found
    }

    pub fn mentions(&self, name: &str) -> bool {
        self.any(&mut |e| matches!(&e.kind, ExprKind::Name(n) if n == name))
    }

    /// A comparison or a logical combination of them: a boolean whatever its operands are.
    pub fn is_boolean(&self) -> bool {
        match &self.kind {
            ExprKind::Compare { .. } | ExprKind::BoolOp { .. } => true,
            ExprKind::Unary {
                op: UnaryOp::Not, ..
            } => true,
            ExprKind::Binary {
                op: BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor,
                left,
                right,
            } => left.is_boolean() && right.is_boolean(),
            _ => false,
        }
    }
}
