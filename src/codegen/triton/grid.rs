//! A region as a kernel of its own (`kernel`): one program per point of its grid, its
//! coordinate on each axis `tl.program_id(axis)`, the innermost loop on axis 0.
//!
//! Design decisions:
//! - The signature is the analysis' parameters, then only the constexprs the kernel uses
//!   (`MVL`, `ROW_BLOCK`, `ONE_STRIP`); its launcher passes the same ones, by name.
//! - A region with split rows (`passes::split_rows`) takes grid axis 1 for the splits and
//!   `SPLIT_PARAMS` after its own parameters.

use super::cx::Cx;
use super::strips::{ONE_STRIP_PARAM, ROW_BLOCK_PARAM};
use crate::codegen::analysis::analyse;
use crate::codegen::kernel_code::{signature, KernelCode, SPLIT_PARAMS};
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
    let grid: Vec<String> = (0..k.dims.len())
        .map(|axis| format!("tl.program_id({axis})"))
        .collect();
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
    if !cx.one_strip.is_empty() {
        sig.push(ONE_STRIP_PARAM.into());
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
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codegen::kernel_code::Param;

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
}
