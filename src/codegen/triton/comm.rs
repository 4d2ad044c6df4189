//! The communication phases of a persistent kernel: NVSHMEM puts and waits (lowered as
//! pragma-spec/library-calls.yaml describes), and the array views they name.
//!
//! Design decisions:
//! - A put is issued by one program, the `slot` of its run of puts, so consecutive puts go out
//!   from different programs at once; a wait is made by every program.
//! - A view is passed as the pointer to its first element and the (length, stride) of each
//!   sliced dimension, one or two: what `_appyc_nvshmem_put` (templates/nvshmem.py.jinja) takes.
//! - A wait is bounded (the template says how): it is passed what it records if it gives up
//!   (the flag's element offset, the loop variable, its source line) and clears the kernel's
//!   `live` register then.

use super::cx::Cx;
use crate::codegen::writer::Writer;
use crate::diag::Result;
use crate::ir::python::binop_prec;
use crate::ir::*;

/// The persistent kernel's names a communication phase uses, and its source line.
pub(super) struct CommSite<'a> {
    pub pid: &'a str,
    pub nprog: &'a str,
    /// The launch's control block (the grid barrier's counter and a wait's record).
    pub control: &'a str,
    /// The loop variable, recorded by a wait that gives up.
    pub step: &'a str,
    /// The register a wait clears when it gives up.
    pub live: &'a str,
    pub line: usize,
}

impl Cx<'_> {
    /// A communication phase (see pragma-spec/library-calls.yaml for the lowering): a put is
    /// issued by one program (`slot` of a run of puts, so consecutive puts go out from
    /// different programs at once), a wait is made by every program.
    pub(super) fn comm(&mut self, w: &mut Writer, c: &Comm, site: &CommSite) -> Result<()> {
        let (pid, nprog) = (site.pid, site.nprog);
        match c {
            Comm::Put {
                dest,
                src,
                pe,
                flag,
                blocking,
                slot,
            } => {
                let (dptr, dsl) = self.view(dest)?;
                let (sptr, ssl) = self.view(src)?;
                let (rows, n, drs, ds, srs, ss) = match (dsl.as_slice(), ssl.as_slice()) {
                    ([(n, ds)], [(_, ss)]) => (
                        "1".into(),
                        n.clone(),
                        "0".into(),
                        ds.clone(),
                        "0".into(),
                        ss.clone(),
                    ),
                    ([(r, drs), (n, ds)], [(_, srs), (_, ss)]) => (
                        r.clone(),
                        n.clone(),
                        drs.clone(),
                        ds.clone(),
                        srs.clone(),
                        ss.clone(),
                    ),
                    _ => unreachable!("comm checks the views"),
                };
                let sig = match flag {
                    Some(f) => self.view(f)?.0,
                    None => "0".into(),
                };
                let pe = self.expr(pe)?;
                w.line(format!("if {pid} == {slot} % {nprog}:"));
                w.indent();
                w.line(format!(
                    "_appyc_nvshmem_put({dptr}, {sptr}, {rows}, {n}, {drs}, {ds}, {srs}, {ss}, {sig}, {pe}, SIGNAL={}, BLOCKING={}, P2P=P2P)",
                    if flag.is_some() { "True" } else { "False" },
                    if *blocking { "True" } else { "False" },
                ));
                w.dedent();
            }
            Comm::Wait { flag, signal, .. } => {
                let (ptr, _) = self.view(flag)?;
                let index = self.offset(flag)?;
                let signal = self.expr(signal)?;
                let CommSite {
                    control,
                    step,
                    live,
                    line,
                    ..
                } = site;
                w.line(format!(
                    "{live} = _appyc_nvshmem_wait({ptr}, {signal}, {control}, {step}, {index}, {line})"
                ));
            }
        }
        Ok(())
    }

    /// A view's first element as a pointer, and (length, stride) of each sliced dimension.
    fn view(&mut self, e: &Expr) -> Result<(String, Vec<(String, String)>)> {
        let (array, offsets, sliced) = self.view_parts(e)?;
        let ptr = std::iter::once(array).chain(offsets).collect::<Vec<_>>();
        Ok((ptr.join(" + "), sliced))
    }

    /// A view's first element as an offset in elements from its array's start.
    fn offset(&mut self, e: &Expr) -> Result<String> {
        let (_, offsets, _) = self.view_parts(e)?;
        Ok(if offsets.is_empty() {
            "0".into()
        } else {
            offsets.join(" + ")
        })
    }

    /// A view's array, the terms of its first element's offset (index times stride), and
    /// (length, stride) of each sliced dimension.
    #[allow(clippy::type_complexity)]
    fn view_parts(&mut self, e: &Expr) -> Result<(String, Vec<String>, Vec<(String, String)>)> {
        let ExprKind::Subscript { array, indices } = &e.kind else {
            unreachable!("comm makes views subscripts")
        };
        let mut parts = vec![];
        let mut sliced = vec![];
        for (d, ix) in indices.iter().enumerate() {
            let stride = format!("{array}_stride{d}");
            match ix {
                Index::At(i) => {
                    if !matches!(i.kind, ExprKind::Int(0)) {
                        let t = self.expr_prec(i, binop_prec(BinOp::Mul) + 1)?;
                        parts.push(format!("{t} * {stride}"));
                    }
                }
                Index::Slice {
                    lo: Some(lo),
                    hi: Some(hi),
                    ..
                } => {
                    if !matches!(lo.kind, ExprKind::Int(0)) {
                        let t = self.expr_prec(lo, binop_prec(BinOp::Mul) + 1)?;
                        parts.push(format!("{t} * {stride}"));
                    }
                    let len = if matches!(lo.kind, ExprKind::Int(0)) {
                        self.expr(hi)?
                    } else {
                        format!("({}) - ({})", self.expr(hi)?, self.expr(lo)?)
                    };
                    sliced.push((len, stride));
                }
                _ => unreachable!("comm resolves every bound"),
            }
        }
        Ok((array.clone(), parts, sliced))
    }
}
