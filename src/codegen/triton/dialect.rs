//! The two languages a kernel is printed in: Triton (`@triton.jit`, `tl`) and Gluon
//! (`@gluon.jit`, `gl`), whose shared memory the temporally blocked kernels keep their tiles in.
//! Every blocked kernel is printed in both, the Gluon one for the GPU and a Triton twin over a
//! scratch in global memory for the interpreter, which cannot run Gluon.
//!
//! Gluon takes Triton's operators and most of `tl`'s builtins on scalars; it differs in what
//! carries a layout: `full` needs one (`None` for a scalar), and the decorator and constexpr
//! annotations are its own.

#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum Dialect {
    #[default]
    Triton,
    Gluon,
}

impl Dialect {
    /// The module its builtins come from.
    pub fn ns(self) -> &'static str {
        match self {
            Dialect::Triton => "tl",
            Dialect::Gluon => "gl",
        }
    }

    /// The decorator's module (`@triton.jit`, `@gluon.jit`).
    pub fn decorator(self) -> &'static str {
        match self {
            Dialect::Triton => "triton",
            Dialect::Gluon => "gluon",
        }
    }

    /// A block-wide barrier.
    pub fn barrier(self) -> &'static str {
        match self {
            Dialect::Triton => "tl.debug_barrier()",
            Dialect::Gluon => "gl.thread_barrier()",
        }
    }

    /// A scalar tensor holding `value` (Python text) of `dtype` (`tl.float64`, ...).
    pub fn full(self, value: &str, dtype: &str) -> String {
        match self {
            Dialect::Triton => format!("tl.full((), {value}, {dtype})"),
            Dialect::Gluon => format!("gl.full((), {value}, {dtype}, None)"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scalar_carries_no_layout_in_gluon_and_none_in_triton() {
        assert_eq!(
            Dialect::Triton.full("0", "tl.int64"),
            "tl.full((), 0, tl.int64)"
        );
        assert_eq!(
            Dialect::Gluon.full("0", "tl.int64"),
            "gl.full((), 0, tl.int64, None)"
        );
    }
}
