//! Virtual programs: a grid of several axes numbered by one index, which each program splits
//! back into its coordinate on every axis (axis 0, the innermost loop, varies fastest).
//!
//! Design decisions:
//! - The counts per axis are computed in the kernel from the dimensions' bounds (literal
//!   steps only), so the host passes nothing new and a persistent kernel can recount a region
//!   whose bounds move with its time loop.
//! - Used by persistent kernels (a grid-stride loop over every region's virtual programs) and
//!   by kernels of their own with two or more dimensions: Triton caps grid axes 1 and 2 at
//!   65535 programs, axis 0 at 2**31 - 1, so one axis holds them all.

use super::cx::{width_text, Cx};
use crate::codegen::writer::Writer;
use crate::diag::Result;
use crate::ir::*;

/// The number of programs on each grid axis of region `r` (an extent of a literal step, over
/// the lanes' width for a `simd` dimension), named and indexed by axis.
pub(super) fn program_counts(
    w: &mut Writer,
    cx: &mut Cx,
    k: &Kernel,
    r: usize,
    fresh: &mut dyn FnMut(&str) -> String,
) -> Result<Vec<String>> {
    let ndims = k.dims.len();
    let mut counts = vec![String::new(); ndims];
    for (d, dim) in k.dims.iter().enumerate() {
        let axis = ndims - 1 - d;
        let count = fresh(&format!("n{r}_{axis}"));
        let ExprKind::Int(s) = dim.range.step.kind else {
            unreachable!("schedule keeps regions with literal steps only")
        };
        let (from, to) = (cx.expr(&dim.range.start)?, cx.expr(&dim.range.stop)?);
        let span = if s > 0 {
            format!("({to}) - ({from})")
        } else {
            format!("({from}) - ({to})")
        };
        let trips = if s.abs() == 1 {
            span
        } else {
            format!("tl.cdiv({span}, {})", s.abs())
        };
        let programs = match dim.simd {
            None => trips,
            Some(wd) => format!("tl.cdiv({trips}, {})", width_text(wd)),
        };
        w.line(format!("{count} = tl.maximum({programs}, 0)"));
        counts[axis] = count;
    }
    Ok(counts)
}

/// The coordinates of virtual program `vp` on each axis (axis 0 varies fastest).
pub(super) fn program_ids(
    w: &mut Writer,
    vp: &str,
    counts: &[String],
    r: usize,
    fresh: &mut dyn FnMut(&str) -> String,
) -> Vec<String> {
    let ndims = counts.len();
    let mut ids = vec![String::new(); ndims];
    if ndims == 1 {
        ids[0] = vp.to_string();
    } else {
        let mut rest = vp.to_string();
        for axis in 0..ndims {
            let id = fresh(&format!("pid{r}_{axis}"));
            if axis + 1 == ndims {
                w.line(format!("{id} = {rest}"));
            } else {
                w.line(format!("{id} = {rest} % {}", counts[axis]));
                let next = fresh(&format!("rest{r}_{axis}"));
                w.line(format!("{next} = {rest} // {}", counts[axis]));
                rest = next;
            }
            ids[axis] = id;
        }
    }
    ids
}
