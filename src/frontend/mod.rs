//! Front end: source text, the Python parser, `#pragma` comments and the pragma spec.

pub mod depth;
pub mod libcalls;
pub mod lower;
pub mod pragma;
pub mod source;
pub mod spec;
