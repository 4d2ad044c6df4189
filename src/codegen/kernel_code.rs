//! What a printed kernel is to the rest of the back end: its parameters, in order, and the facts
//! its launcher needs. The printers (`triton`, `tiles`, `blocked`), `analysis` and the
//! launchers all read these types; they depend on nothing of codegen, so each of those files
//! can import them without importing another printer.

use crate::ir::{Expr, Width};

/// A kernel parameter, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Param {
    /// An array: a pointer in the kernel, a tensor in the launcher.
    Array(String),
    /// A host scalar used as an integer (index, bound): Triton infers i32/i64.
    IntScalar(String),
    /// Any other host scalar: passed as fp64 so float parameters keep their precision.
    FloatScalar(String),
    /// `A.stride(d)`.
    Stride(String, usize),
    /// `A.shape[d]`.
    Shape(String, usize),
}

impl Param {
    pub fn kernel_name(&self) -> String {
        match self {
            Param::Array(n) | Param::IntScalar(n) | Param::FloatScalar(n) => n.clone(),
            Param::Stride(a, d) => format!("{a}_stride{d}"),
            Param::Shape(a, d) => format!("{a}_shape{d}"),
        }
    }
    /// The launch argument. Scalars go through `int()`/`float()`: a host reduction on a tensor
    /// (`rmax = radius.max()`) is a 0-d tensor, which Triton would take for a pointer.
    pub fn host_value(&self) -> String {
        match self {
            Param::Array(n) => n.clone(),
            Param::IntScalar(n) => format!("int({n})"),
            Param::FloatScalar(n) => format!("float({n})"),
            Param::Stride(a, d) => format!("{a}.stride({d})"),
            Param::Shape(a, d) => format!("{a}.shape[{d}]"),
        }
    }
}

/// A printed kernel: its text and what its launcher needs to know of it.
pub struct KernelCode {
    pub text: String,
    pub params: Vec<Param>,
    /// The launcher's own parameters: arrays and scalars from the host scope, in order.
    pub host_args: Vec<String>,
    pub uses_mvl: bool,
    pub written_arrays: Vec<String>,
    /// `(start, stop, width)` of each strip loop printed with the `ONE_STRIP` switch (bounds
    /// of host values only): the launcher sets `ONE_STRIP` when every one of them fits one
    /// strip of its width.
    pub one_strip: Vec<(Expr, Expr, Width)>,
    /// The strip of each row block (`passes::row_block`): `(start, stop)` when both are host
    /// values, and the launcher sizes `ROW_BLOCK` from the longest; `None` when a bound is not
    /// (the host loop's variable in a persistent kernel), and the launcher passes 1, which is
    /// as correct as any size. Empty when the kernel takes no `ROW_BLOCK`.
    pub row_block: Vec<Option<(Expr, Expr)>>,
    /// A persistent kernel's registers (its time loop's host statements), in order after its
    /// phase parameters, then the pointer `_carried` they are stored to at the end. Empty for
    /// every other kernel.
    pub state: Vec<StateParam>,
    /// The kernel numbers its programs on grid axis 0 alone (`triton::grid::flat_grid`): the
    /// launcher's grid is the product of its dimensions' program counts.
    pub flat_grid: bool,
}

/// One register of a persistent kernel: its parameter's name, the launcher's first value for
/// it, and its kind (`f` fp64, `i` an integer, `b` a bool passed as an integer).
#[derive(Debug, Clone, PartialEq)]
pub struct StateParam {
    pub name: String,
    pub initial: String,
    pub kind: char,
}

/// The parameter list of a kernel: float scalars are annotated fp64 (Triton would pass a
/// Python float as fp32).
pub(super) fn signature(params: &[Param]) -> Vec<String> {
    params
        .iter()
        .map(|p| match p {
            Param::FloatScalar(n) => format!("{n}: \"fp64\""),
            other => other.kernel_name(),
        })
        .collect()
}

/// What a kernel with split rows takes after its own parameters: scratch for the splits'
/// partial results (8 bytes an element, any accumulator dtype fits), one arrival counter per
/// column block (zero between launches: the combining program resets its own), and the rows
/// each split walks.
pub const SPLIT_PARAMS: [&str; 3] = ["_appyc_partials", "_appyc_arrivals", "_appyc_split_rows"];
