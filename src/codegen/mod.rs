//! Back end: the Triton kernel printer, the Python ("assembly APPy") printer, launchers from
//! templates, and host code spliced from the source text.

mod analysis;
pub mod host;
pub mod launch;
pub mod python;
pub mod templates;
pub mod tiles;
pub mod triton;
pub mod writer;
