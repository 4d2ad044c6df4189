//! The parsed form of `#pragma` comments, as the passes read it. The frontend
//! (`frontend::pragma`) parses and validates comments into these types.

use super::expr::{Expr, ReduceOp, Width};
use crate::frontend::source::Span;

/// A validated pragma.
#[derive(Debug, Clone, PartialEq)]
pub struct Pragma {
    pub directive: Directive,
    /// The whole comment.
    pub span: Span,
    /// 1-based line of the comment.
    pub line: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Directive {
    ParallelFor {
        simd: Option<Width>,
        num_warps: Option<u32>,
        /// `shared(x, ...)`: host scalars the iterations share (see `passes::shared_scalars`).
        shared: Vec<(String, Span)>,
        /// `reduction(op:x, ...)` clauses, one entry per variable in the order written
        /// (OpenMP's meaning; lowered like a `shared` reduction, see `passes::shared_scalars`).
        reduction: Vec<ReductionVar>,
        /// `tf32`: float32 `tl.dot` tiles may round operands to TF32.
        tf32: bool,
    },
    Simd(Width),
    SequentialFor {
        num_warps: Option<u32>,
    },
    Atomic,
    /// `persistent for` on a host loop: run it as one persistent kernel (see `schedule`).
    Persistent,
    /// `distribute(A, B) axis(0)` on a host loop: the loop runs SPMD on every PE, each holding a
    /// block of the named arrays along `axis` (see `passes::distribute`).
    Distribute {
        arrays: Vec<(String, Span)>,
        axis: u32,
    },
    /// `lo:up=>props ...` on a tensor assignment.
    Dimensions(Vec<DimPragma>),
}

/// One variable of a `reduction(op:x, ...)` clause on `parallel for`.
#[derive(Debug, Clone, PartialEq)]
pub struct ReductionVar {
    pub op: ReduceOp,
    pub var: String,
    /// The name in the pragma.
    pub span: Span,
    /// The value the reduction starts from where it is not the variable's (OpenMP's): the
    /// operator's identity, for a reduction that assigns the variable afresh
    /// (`passes::scalar_reductions`).
    pub start: Option<Expr>,
}

/// One `lo:up=>props` item of a dimension pragma.
#[derive(Debug, Clone, PartialEq)]
pub struct DimPragma {
    pub lo: Option<Expr>,
    pub hi: Option<Expr>,
    pub parallel: bool,
    pub vector: Option<VectorProp>,
    /// `reduce`, `reduce(op)`, `reduce(op:var)`: the operator (None: the statement's own) and
    /// the variable it names.
    pub reduce: Option<(Option<ReduceOp>, Option<String>)>,
    /// The whole item.
    pub span: Span,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VectorProp {
    /// `simd` / `simd(N)`: strip-mined.
    Simd(Width),
    /// `le(N)`: one vector of N lanes, no loop.
    Le(u32),
}
