//! A region as a kernel of its own (`kernel`): one program per point of its grid, its
//! coordinate on each axis `tl.program_id(axis)`, the innermost loop on axis 0.
//!
//! Design decisions:
//! - The signature is the analysis' parameters, then only the constexprs the kernel uses
//!   (`MVL`, `ROW_BLOCK`, `ONE_STRIP`); its launcher passes the same ones, by name.
//! - A region with split rows (`passes::split_rows`) takes grid axis 1 for the splits and
//!   `SPLIT_PARAMS` after its own parameters.
//! - A grid of two or more dimensions with literal steps can be flat (`flat_grid`): when an
//!   axis would pass Triton's 65535-program cap on axes 1 and 2 (a block of rows whose strip
//!   is a grid dimension, `passes::row_block`, has as many row blocks as a tall array has),
//!   its programs are numbered on axis 0 and split into coordinates (`virtual_grid`). The
//!   launcher decides (`FLAT_GRID`, a constexpr): the split costs integer divisions in every
//!   program, 6 % of softmax's time on the H200, so grids that fit keep one axis a dimension.

use super::cx::Cx;
use super::strips::{ONE_STRIP_PARAM, ROW_BLOCK_PARAM};
use super::virtual_grid::{program_counts, program_ids};
use crate::codegen::analysis::analyse;
use crate::codegen::kernel_code::{signature, KernelCode, Param, SPLIT_PARAMS};
use crate::codegen::writer::Writer;
use crate::diag::Result;
use crate::frontend::source::SourceFile;
use crate::ir::*;

/// The kernel of a region launched on its own grid.
pub fn kernel(k: &Kernel, file: &SourceFile) -> Result<KernelCode> {
    let analysis = analyse(k);
    // The body first: whether the signature takes `ONE_STRIP` depends on its strip loops.
    let mut body = Writer::new(1);
    let mut cx = Cx::new(file, k, &analysis);
    cx.pragma_comment(&mut body, k);
    let grid: Vec<String> = if flat_grid(k) {
        let mut used = k.names();
        used.extend(analysis.params.iter().map(Param::kernel_name));
        let fresh = &mut |base: &str| fresh_name(base, &mut used);
        body.line(format!("if {FLAT_GRID}:"));
        body.indent();
        let counts = program_counts(&mut body, &mut cx, k, 0, fresh)?;
        let ids = program_ids(&mut body, "tl.program_id(0)", &counts, 0, fresh);
        body.dedent();
        body.line("else:");
        body.indented(|w| {
            for (axis, id) in ids.iter().enumerate() {
                w.line(format!("{id} = tl.program_id({axis})"));
            }
        });
        ids
    } else {
        (0..k.dims.len())
            .map(|axis| format!("tl.program_id({axis})"))
            .collect()
    };
    match &k.split_rows {
        Some(split) => {
            cx.dims(&mut body, k, &grid)?;
            cx.split_body(&mut body, &k.body, split.at)?;
        }
        None => cx.region(&mut body, k, &grid)?,
    }
    let mut sig = signature(&analysis.params);
    if k.split_rows.is_some() {
        sig.extend(SPLIT_PARAMS.map(String::from));
    }
    if analysis.uses_mvl {
        sig.push("MVL: tl.constexpr".into());
    }
    if !cx.row_block.is_empty() {
        sig.push(ROW_BLOCK_PARAM.into());
    }
    if flat_grid(k) {
        sig.push(format!("{FLAT_GRID}: tl.constexpr"));
    }
    if !cx.one_strip.is_empty() {
        sig.push(ONE_STRIP_PARAM.into()); // last: it has a default
    }
    let mut w = Writer::new(0);
    w.line("@triton.jit");
    w.line(format!("def {}({}):", k.name, sig.join(", ")));
    Ok(KernelCode {
        text: w.finish() + &body.finish(),
        params: analysis.params,
        host_args: analysis.host_args,
        uses_mvl: analysis.uses_mvl,
        written_arrays: analysis.written,
        one_strip: cx.one_strip,
        row_block: cx.row_block,
        state: vec![],
        flat_grid: flat_grid(k),
    })
}

/// The constexpr of a flat-grid kernel: its programs are numbered on axis 0 alone (a grid axis
/// past Triton's caps) rather than on one axis a dimension.
const FLAT_GRID: &str = "FLAT_GRID";

/// Whether the kernel can number its programs on one axis: two or more dimensions, every step a
/// literal (the kernel counts each axis's programs itself), no split rows (which take axis 1).
pub fn flat_grid(k: &Kernel) -> bool {
    k.split_rows.is_none()
        && k.dims.len() >= 2
        && k.dims
            .iter()
            .all(|d| matches!(d.range.step.kind, ExprKind::Int(s) if s != 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn barriers_and_empty_bodies_print_as_such() {
        use crate::ir::build;
        let file = SourceFile::new("t.py", "#pragma parallel for\n");
        let k = build::kernel(vec![
            Stmt::new(StmtKind::Barrier, crate::frontend::source::Span::DUMMY),
            Stmt::new(
                StmtKind::If {
                    test: build::name("c"),
                    body: vec![],
                    orelse: vec![],
                },
                crate::frontend::source::Span::DUMMY,
            ),
        ]);
        let code = kernel(&k, &file).unwrap();
        let lines: Vec<&str> = code.text.lines().collect();
        assert_eq!(lines[1], "def k(c: \"fp64\"):", "{}", code.text);
        assert_eq!(lines[2], "    # t.py:1: #pragma parallel for");
        assert_eq!(lines[3], "    tl.debug_barrier()");
        assert_eq!(lines[4], "    if c:  # t.py:1");
        assert_eq!(lines[5], "        pass");
        assert_eq!(code.params, [Param::FloatScalar("c".into())]);
    }

    #[test]
    fn a_grid_of_literal_steps_is_numbered_on_one_axis_when_an_axis_would_not_fit() {
        use crate::codegen::test_support::{function, generated, has_line};
        // Rows in blocks by strips of lanes, both grid dimensions: a tall array has more row
        // blocks than grid axis 1 takes, so the programs can be numbered on axis 0 and split;
        // the launcher decides (FLAT_GRID), since the split costs divisions in every program.
        let module = generated(
            "def f(A, B, M, N):\n    #pragma parallel for\n    for i in range(1, M):\n        #pragma simd\n        for j in range(N):\n            B[i, j] = A[i - 1, j] + 1.0\n",
        );
        let k = function(&module, "_f_kernel0");
        for line in [
            "_n0_1 = tl.maximum(tl.cdiv((M) - (1), ROW_BLOCK), 0)",
            "_n0_0 = tl.maximum(tl.cdiv((N) - (0), MVL // ROW_BLOCK), 0)",
            "_pid0_0 = tl.program_id(0) % _n0_0",
            "_rest0_0 = tl.program_id(0) // _n0_0",
            "_pid0_1 = _rest0_0",
            "if FLAT_GRID:",
            "else:",
            "_pid0_0 = tl.program_id(0)",
            "_pid0_1 = tl.program_id(1)",
            "i = 1 + _pid0_1 * ROW_BLOCK + tl.arange(0, ROW_BLOCK)",
            "j = _pid0_0 * (MVL // ROW_BLOCK) + tl.arange(0, MVL // ROW_BLOCK)",
        ] {
            assert!(has_line(k, line), "{line}\n{k}");
        }
        let launcher = function(&module, "_launch_f_kernel0");
        assert!(!launcher.contains("65535"), "{launcher}");
        for line in [
            "_appyc_grid, _appyc_flat = _appyc_grid_axes(((n_j + (_appyc_mvl // _appyc_row_block) - 1) // (_appyc_mvl // _appyc_row_block), (n_i + _appyc_row_block - 1) // _appyc_row_block,))",
            "_f_kernel0, _appyc_grid,",
            "{\"MVL\": _appyc_mvl, \"ROW_BLOCK\": _appyc_row_block, \"FLAT_GRID\": _appyc_flat}, num_warps=_appyc_warps,",
        ] {
            assert!(has_line(launcher, line), "{line}\n{launcher}");
        }
        assert!(k.contains("FLAT_GRID: tl.constexpr"), "{k}");
        // A step known only at run time keeps an axis a dimension, and its cap's check.
        let module = generated(
            "def f(A, M, N, s):\n    #pragma parallel for\n    for i in range(0, M, s):\n        #pragma parallel for\n        for j in range(N):\n            A[i, j] = 1.0\n",
        );
        let k = function(&module, "_f_kernel0");
        assert!(k.contains("tl.program_id(1)"), "{k}");
        assert!(function(&module, "_launch_f_kernel0").contains("65535"));
    }
}
