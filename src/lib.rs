//! appyc: an ahead-of-time compiler from APPy-annotated NumPy to Triton.
//!
//! Pipeline (see ARCHITECTURE.md): `frontend` (parse, pragmas, spans) → `passes` (normalize,
//! attach_pragmas, outline, insert_sync, strip_mine) → `codegen` (Triton kernels, launchers,
//! host code spliced from the source) → `driver` / CLI.

pub mod cli;
pub mod codegen;
pub mod config;
pub mod diag;
pub mod driver;
pub mod frontend;
pub mod ir;
pub mod passes;
#[cfg(feature = "python")]
pub mod python;
pub mod reference;
pub mod schedule;
