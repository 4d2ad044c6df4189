//! The Triton printer: an outlined `Kernel` (after strip-mining) → a `@triton.jit` function and
//! the facts its launcher needs (`KernelCode`). One file per kernel form, over printing that all
//! forms share:
//!
//! - `grid`: a region as a kernel of its own, one program per point of its grid (`kernel`).
//! - `persistent`: a host time loop as one persistent kernel of phases (`persistent_kernel`).
//! - `cx`: the printer's context for one kernel (`Cx`) and the statements; `expr` the
//!   expressions, loads and masks; `strips` strip-mined loops; `rows` row tiles and split rows;
//!   `comm` the NVSHMEM communication phases; `steps` a time loop's host statements as the
//!   scalars every program of its persistent kernel computes.
//! - `blocked`, `gluon2d` and `gluon3d`: temporally blocked 1-D, 2-D and 3-D stencil loops,
//!   each a Gluon kernel for the GPU and a Triton twin for the interpreter; `dialect` names the
//!   two languages.
//!
//! The tiled (`tl.dot`) form prints in `codegen::tiles`, which borrows `cx::Cx` for its
//! expressions.
//!
//! Design decisions:
//! - One context, `Cx`, whose `impl` is split over the files by what it prints: each file adds
//!   the methods of its statements, so a form calls into all of them through one value.
//! - Files import downward only (forms → `strips` → `rows` → `cx`; `expr` and `comm` → `cx`),
//!   never this module, which only declares them and re-exports the forms' entry points.
//! - A form prints its body before its head: whether its signature takes `ROW_BLOCK` and
//!   `ONE_STRIP` depends on the strip loops printed in the body.

mod blocked;
mod comm;
pub(super) mod cx;
mod dialect;
mod expr;
mod gluon2d;
mod gluon3d;
mod grid;
mod loop_state;
mod persistent;
mod rows;
mod stencil_print;
mod steps;
mod strips;
mod virtual_grid;

pub use blocked::blocked_kernels;
pub use gluon2d::blocked_2d_kernels;
pub use gluon3d::blocked_3d_kernels;
pub use grid::kernel;
pub use persistent::{persistent_kernel, PersistentLoop};
