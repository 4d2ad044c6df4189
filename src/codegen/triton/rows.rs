//! Row tiles (`strip_mine::row_tile`): a reduction over rows, walked a strip of rows at a time
//! into a [rows, lanes] partial accumulator that is reduced once after the loop; and split rows
//! (`passes::split_rows`), whose splits over grid axis 1 combine their partial results.
//!
//! Design decisions:
//! - Each accumulator starts from its reduction's identity, in the promoted dtype of every value
//!   it adds, so the loop never changes its type.
//! - Rows past the bound and masked-off lanes leave an accumulator as it is (`tl.where` on the
//!   rows' mask too), also where the value does not read the rows: it is added once per row.
//! - The last split of a column block to arrive (an acquire-release counter) combines the
//!   splits in split order, so the result does not depend on which arrived last.

use super::cx::{width_text, Cx};
use crate::codegen::writer::Writer;
use crate::diag::{Diagnostic, Result};
use crate::frontend::source::Span;
use crate::ir::*;
use std::collections::BTreeSet;

/// One update of a row tile: `target = target ⊕ ReduceRows(value)` (`-` when `negated`),
/// folded into the partial accumulator `acc`.
pub(super) struct RowUpdate<'a> {
    target: &'a str,
    op: ReduceOp,
    negated: bool,
    value: &'a Expr,
    acc: &'a str,
    /// The whole update (its lanes' masks are the result's).
    update: &'a Expr,
    span: Span,
}

/// A row tile's body (`strip_mine::row_tile`): element statements over the strip's rows
/// (locals, stores of the rows' own elements), then the updates.
pub(super) struct RowTile<'a> {
    pub(super) elements: &'a [Stmt],
    pub(super) updates: Vec<RowUpdate<'a>>,
}

impl RowTile<'_> {
    /// `e` with the strip's locals replaced by their values (latest first, so a local read by
    /// another's value is replaced in turn).
    fn with_locals_inlined(&self, e: &Expr) -> Expr {
        let mut e = e.clone();
        for s in self.elements.iter().rev() {
            if let StmtKind::Assign { target, value, .. } = &s.kind {
                if let ExprKind::Name(n) = &target.kind {
                    e = e.rewrite(&mut |x| match &x.kind {
                        ExprKind::Name(m) if m == n => value.clone(),
                        _ => x,
                    });
                }
            }
        }
        e
    }
}

/// The row tile of a strip-mined loop's body (`strip_mine::row_tile`), `None` for other loops.
pub(super) fn row_tile_of(body: &[Stmt]) -> Option<RowTile<'_>> {
    let first = body.iter().position(|s| row_update(s).is_some())?;
    let updates = body[first..]
        .iter()
        .map(row_update)
        .collect::<Option<Vec<_>>>()?;
    Some(RowTile {
        elements: &body[..first],
        updates,
    })
}

/// A carried name's update `s = s ⊕ r` (`s = s - r`: negated) as (s, op, negated, r, the
/// whole value).
pub(super) fn name_update(s: &Stmt) -> Option<(&str, ReduceOp, bool, &Expr, &Expr)> {
    let (target, n, update) = s.name_assignment()?;
    Some(match as_reduction(target, update)? {
        (op, ReductionOperand::Plain(r)) => (n, op, false, r, update),
        (op, ReductionOperand::Negated(r)) => (n, op, true, r, update),
    })
}

/// A row tile's update `s = s ⊕ ReduceRows(e)`.
fn row_update(s: &Stmt) -> Option<RowUpdate<'_>> {
    let (target, op, negated, reduced, update) = name_update(s)?;
    let ExprKind::ReduceRows { value, acc, .. } = &reduced.kind else {
        return None;
    };
    Some(RowUpdate {
        target,
        op,
        negated,
        value,
        acc,
        update,
        span: s.span,
    })
}

/// `acc = acc ⊕ value` where `mask` holds, element-wise (row tiles and lane strips alike).
pub(super) fn fold_line(op: ReduceOp, negated: bool, acc: &str, mask: &str, value: &str) -> String {
    match (op, negated) {
        (ReduceOp::Sum, false) => format!("{acc} = {acc} + tl.where({mask}, {value}, 0)"),
        (ReduceOp::Sum, true) => format!("{acc} = {acc} - tl.where({mask}, {value}, 0)"),
        (ReduceOp::Max, _) => {
            format!("{acc} = tl.maximum({acc}, tl.where({mask}, {value}, {acc}))")
        }
        (ReduceOp::Min, _) => {
            format!("{acc} = tl.minimum({acc}, tl.where({mask}, {value}, {acc}))")
        }
    }
}

/// An accumulator reduced over its axis 0.
pub(super) fn reduced_line(op: ReduceOp, acc: &str) -> String {
    let reduce = match op {
        ReduceOp::Sum => "tl.sum",
        ReduceOp::Max => "tl.max",
        ReduceOp::Min => "tl.min",
    };
    format!("{reduce}({acc}, axis=0)")
}

/// `s = s ⊕ reduced`.
pub(super) fn combine_line(op: ReduceOp, s: &str, reduced: &str) -> String {
    match op {
        ReduceOp::Sum => format!("{s} = {s} + {reduced}"),
        ReduceOp::Max => format!("{s} = tl.maximum({s}, {reduced})"),
        ReduceOp::Min => format!("{s} = tl.minimum({s}, {reduced})"),
    }
}

/// An accumulator of `shape` in `dtype`, every element the identity of `op`.
pub(super) fn identity_line(op: ReduceOp, shape: &str, dtype: &str) -> String {
    let zeros = format!("tl.zeros({shape}, {dtype})");
    match op {
        ReduceOp::Sum => zeros,
        ReduceOp::Max => format!("_appyc_lowest_like({zeros})"),
        ReduceOp::Min => format!("_appyc_highest_like({zeros})"),
    }
}

impl Cx<'_> {
    /// A body whose row tile (`body[at]`) has its rows split over grid axis 1: every split runs
    /// the statements before it (locals only) and its own rows; `row_results` then combines the
    /// splits and opens the block, run by one program of the column block, of what follows.
    pub(super) fn split_body(&mut self, w: &mut Writer, body: &[Stmt], at: usize) -> Result<()> {
        for s in &body[..at] {
            self.stmt(w, s)?;
        }
        let s = &body[at];
        let StmtKind::For {
            var,
            range,
            body: rows,
            kind: LoopKind::StripMined { width, tile },
            vector: Some(v),
            ..
        } = &s.kind
        else {
            unreachable!("split_rows marks a row tile")
        };
        let start = self.expr(&range.start)?;
        let stop = self.expr(&range.stop)?;
        w.line("_appyc_split = tl.program_id(1)");
        w.line(format!(
            "_appyc_rows_lo = {start} + _appyc_split * _appyc_split_rows"
        ));
        w.line(format!(
            "_appyc_rows_hi = tl.minimum(_appyc_rows_lo + _appyc_split_rows, {stop})"
        ));
        let chunk = Range {
            start: Expr::name("_appyc_rows_lo", range.start.span),
            stop: Expr::name("_appyc_rows_hi", range.stop.span),
            step: range.step.clone(),
        };
        self.splitting = true;
        let src = self.src(s.span);
        self.strip_mined_loop(w, var, &chunk, (*width, *tile, v), rows, &src)?;
        self.splitting = false;
        self.block(w, &body[at + 1..])?;
        w.dedent();
        Ok(())
    }

    /// Combines a split row tile: each split stores its rows' result, and the last split of the
    /// column block to arrive (an acquire-release count, so it sees the others' stores) reduces
    /// them in split order, whoever arrived last, and leaves `_appyc_total`, with its block
    /// indented under `if _appyc_last:`.
    fn split_combine(
        &mut self,
        w: &mut Writer,
        op: ReduceOp,
        acc: &str,
        target: &str,
    ) -> Result<()> {
        let Some(lanes) = self.lane_width else {
            unreachable!("split_rows marks kernels with lanes")
        };
        let width = width_text(lanes);
        let (reduce, combine) = match op {
            ReduceOp::Sum => ("tl.sum", "_appyc_total + {}"),
            ReduceOp::Max => ("tl.max", "tl.maximum(_appyc_total, {})"),
            ReduceOp::Min => ("tl.min", "tl.minimum(_appyc_total, {})"),
        };
        w.line(format!(
            "_appyc_part = _appyc_partials.to(tl.pointer_type({acc}.dtype)) + tl.program_id(0) * {width} + tl.arange(0, {width})"
        ));
        w.line(format!("_appyc_stride = tl.num_programs(0) * {width}"));
        w.line(format!(
            "tl.store(_appyc_part + _appyc_split * _appyc_stride, {reduce}({acc}, axis=0))"
        ));
        w.line("tl.debug_barrier()");
        w.line("_appyc_arrived = tl.atomic_add(_appyc_arrivals + tl.program_id(0), 1, sem=\"acq_rel\")");
        // `target` takes the dtype its combination with the rows gives it before the `if`:
        // Triton lets no variable change type inside one.
        w.line(format!(
            "{target} = {target}.to((tl.zeros((), {target}.dtype) + tl.zeros((), {acc}.dtype)).dtype)"
        ));
        w.line("if _appyc_arrived == tl.num_programs(1) - 1:");
        w.indent();
        w.line("tl.debug_barrier()");
        w.line("_appyc_total = tl.load(_appyc_part, cache_modifier=\".cg\")");
        w.line("for _appyc_k in range(1, tl.num_programs(1)):");
        w.indent();
        let next = "tl.load(_appyc_part + _appyc_k * _appyc_stride, cache_modifier=\".cg\")";
        w.line(format!("_appyc_total = {}", combine.replace("{}", next)));
        w.dedent();
        w.line("tl.store(_appyc_arrivals + tl.program_id(0), 0)");
        Ok(())
    }

    /// Before a row tile: each partial accumulator, [rows, lanes] of the reduction's identity
    /// in the dtype of the values it adds up (all its updates', promoted).
    pub(super) fn row_accumulators(
        &self,
        w: &mut Writer,
        tile: &RowTile,
        (rows, row): (Width, &str),
        src: &str,
    ) -> Result<()> {
        let updates = &tile.updates;
        let Some(lanes) = self.strips.last().copied().or(self.lane_width) else {
            return Err(Diagnostic::error(
                updates[0].value.span,
                "internal: a row tile outside vector lanes",
            ));
        };
        let shape = format!("({}, {})", width_text(rows), width_text(lanes));
        for (k, u) in updates.iter().enumerate() {
            if updates[..k].iter().any(|p| p.acc == u.acc) {
                continue;
            }
            // The strip's locals are not defined yet: their values stand in for them.
            let values = updates
                .iter()
                .filter(|o| o.acc == u.acc)
                .map(|o| tile.with_locals_inlined(o.value))
                .reduce(|a, b| Expr::binary(BinOp::Add, a, b))
                .expect("u is one");
            // Every name the values read but the rows is defined before the loop: a vector of
            // the lanes among them (`s += t`) is a tensor whose dtype counts.
            let defined_vector = |n: &str| {
                (n != row && !self.rows.contains(n) && self.masks.contains_key(n))
                    .then(|| format!("{n}.dtype"))
            };
            // Without any of those to decide it, what Triton makes of the values.
            let dt = self
                .promoted_dtype(&values, u.target, &defined_vector)
                .unwrap_or_else(|| {
                    if self.is_int(&values) {
                        "tl.int32"
                    } else {
                        "tl.float32"
                    }
                    .to_string()
                });
            let init = identity_line(u.op, &shape, &dt);
            w.line(format!("{} = {init}  {src}", u.acc));
        }
        Ok(())
    }

    /// One strip of a row tile's update, element by element into its partial accumulator.
    /// Rows past the bound (`rows_mask`, also where the value does not mention the rows: it is
    /// added once per row) and masked-off lanes leave the accumulator as it is.
    pub(super) fn row_update(
        &mut self,
        w: &mut Writer,
        u: &RowUpdate,
        rows_mask: &str,
    ) -> Result<()> {
        let mut mask = self.mask_of(u.value);
        mask.insert(rows_mask.to_string());
        let m = mask.into_iter().collect::<Vec<_>>().join(" & ");
        let v = self.expr(u.value)?;
        let line = fold_line(u.op, u.negated, u.acc, &m, &v);
        w.line(format!("{line}  {}", self.src(u.span)));
        Ok(())
    }

    /// After a row tile: each accumulator's rows reduced once and combined with its carried
    /// lane vector, which keeps the lanes' masks (the rows are gone).
    pub(super) fn row_results(
        &mut self,
        w: &mut Writer,
        updates: &[RowUpdate],
        src: &str,
    ) -> Result<()> {
        for (k, u) in updates.iter().enumerate() {
            if updates[..k].iter().any(|p| p.acc == u.acc) {
                continue;
            }
            let (s, acc) = (u.target, u.acc);
            let rows = if self.splitting {
                self.split_combine(w, u.op, acc, s)?;
                "_appyc_total".to_string()
            } else {
                reduced_line(u.op, acc)
            };
            let line = combine_line(u.op, s, &rows);
            let mut mask = BTreeSet::new();
            for o in updates.iter().filter(|o| o.acc == u.acc) {
                mask.extend(self.mask_of(o.update));
            }
            if mask.is_empty() {
                self.masks.remove(s);
            } else {
                self.masks.insert(s.to_string(), mask);
            }
            w.line(format!("{line}  {src}"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::codegen::test_support::{
        code_lines, function, generated, has_line, kernel_of, line_at,
    };

    #[test]
    fn split_rows_store_partials_and_the_last_split_combines_them_in_order_then_stores() {
        let src = "def f(A, x, y, N, M):\n    #pragma parallel for simd\n    for j in range(M):\n        s = 0.0\n        for i in range(N):\n            s -= y[i] * A[i, j]\n        x[j] += s\n";
        let out = generated(src);
        let k = function(&out, "_f_kernel0");
        let lines = code_lines(k);
        // Each split walks its own rows, masked by its own end.
        let rows = line_at(
            &lines,
            "for _i_base in range(_appyc_rows_lo, _appyc_rows_hi, 32):",
        );
        assert!(has_line(k, "i_mask = i < _appyc_rows_hi"), "{k}");
        let partial = line_at(
            &lines,
            "tl.store(_appyc_part + _appyc_split * _appyc_stride, tl.sum(_s_rows, axis=0))",
        );
        let arrive = line_at(
            &lines,
            "_appyc_arrived = tl.atomic_add(_appyc_arrivals + tl.program_id(0), 1, sem=\"acq_rel\")",
        );
        let last = line_at(&lines, "if _appyc_arrived == tl.num_programs(1) - 1:");
        let reset = line_at(&lines, "tl.store(_appyc_arrivals + tl.program_id(0), 0)");
        let result = line_at(&lines, "s = s + _appyc_total");
        let store = line_at(
            &lines,
            "tl.store(x + j * x_stride0, tl.load(x + j * x_stride0, mask=j_mask) + s, mask=j_mask)",
        );
        assert!(rows < partial && partial < arrive && arrive < last, "{k}");
        assert!(last < reset && reset < result && result < store, "{k}");
        // The store runs only in the combining program.
        let indent = |l: &str| l.len() - l.trim_start().len();
        assert!(indent(lines[store]) > indent(lines[last]), "{k}");
        let launcher = function(&out, "_launch_f_kernel0");
        assert!(
            launcher.contains("    _f_kernel0, (_appyc_blocks, _appyc_splits,),"),
            "{launcher}"
        );
        assert!(
            launcher.contains("_appyc_row_split(_appyc_blocks, int(N) - int(0), 32, y.device)"),
            "{launcher}"
        );
    }

    #[test]
    fn a_row_tile_adds_its_strips_into_a_2d_accumulator_and_reduces_its_rows_once() {
        let k = kernel_of(
            // The store before the rows keeps the row tile in one program (no split_rows).
            "def f(A, y, x, M, N):\n    #pragma parallel for simd\n    for j in range(N):\n        x[j] = 0.0\n        s = 0.0\n        for i in range(M):\n            s += y[i] * A[i, j]\n        x[j] = s\n",
            "f",
        );
        let l = code_lines(&k);
        let at = line_at(&l, "for _i_base in range(0, M, 32):");
        // [rows, lanes] of zeros in the dtype of the products, before the loop.
        assert_eq!(
            l[at - 1].trim(),
            "_s_rows = tl.zeros((32, MVL), (tl.zeros((), y.dtype.element_ty) + tl.zeros((), A.dtype.element_ty)).dtype)",
            "{k}"
        );
        assert_eq!(l[at + 1].trim(), "i = _i_base + tl.arange(0, 32)", "{k}");
        assert_eq!(l[at + 2].trim(), "i_mask = i < M", "{k}");
        // Rows on axis 0, the lanes (1-D, broadcast as the last axis) on axis 1; rows past M
        // add zero. No reduction inside the loop.
        assert_eq!(
            l[at + 3].trim(),
            "_s_rows = _s_rows + tl.where(i_mask[:, None] & j_mask, tl.load(y + i[:, None] * y_stride0, mask=i_mask[:, None]) * tl.load(A + i[:, None] * A_stride0 + j * A_stride1, mask=i_mask[:, None] & j_mask), 0)",
            "{k}"
        );
        // After the loop (at its indentation): the rows reduced once into the carried sum.
        let indent = |x: &str| x.len() - x.trim_start().len();
        assert_eq!(l[at + 4].trim(), "s = s + tl.sum(_s_rows, axis=0)", "{k}");
        assert_eq!(indent(l[at + 4]), indent(l[at]), "{k}");
        assert_eq!(k.matches("tl.sum(").count(), 1, "{k}");
        // The accumulator is a vector of the lanes, and so is its mask after the loop.
        assert!(k.contains("s = tl.full((MVL,), 0.0, "), "{k}");
        assert!(
            has_line(&k, "tl.store(x + j * x_stride0, s, mask=j_mask)"),
            "{k}"
        );
    }

    #[test]
    fn a_row_tile_s_max_min_and_subtraction_start_from_their_identities() {
        // (After an import: the prelude goes above the source's first statement.)
        let src = "import numpy as np\n\n\ndef f(A, y, x, lo, M, N):\n    #pragma parallel for simd\n    for j in range(N):\n        s = 0.0\n        m = A[0, j]\n        n = A[0, j]\n        for i in range(lo, M):\n            s -= A[i, j]\n            m = max(m, A[i, j])\n            n = min(n, A[i, j])\n            s += y[i] * A[i, j]\n        x[j] = s + m + n\n";
        let module = generated(src);
        let k = function(&module, "_f_kernel0");
        let l = code_lines(k);
        let at = line_at(&l, "for _i_base in range(lo, M, 32):");
        // One accumulator per carried value (the two updates of `s` share one), each from
        // its identity: the dtype's lowest value for max, its highest for min.
        assert_eq!(
            l[at - 3..at].iter().map(|x| x.trim()).collect::<Vec<_>>(),
            [
                "_s_rows = tl.zeros((32, MVL), (tl.zeros((), A.dtype.element_ty) + tl.zeros((), y.dtype.element_ty)).dtype)",
                "_m_rows = _appyc_lowest_like(tl.zeros((32, MVL), A.dtype.element_ty))",
                "_n_rows = _appyc_highest_like(tl.zeros((32, MVL), A.dtype.element_ty))",
            ],
            "{k}"
        );
        let a =
            "tl.load(A + i[:, None] * A_stride0 + j * A_stride1, mask=i_mask[:, None] & j_mask)";
        let m = "i_mask[:, None] & j_mask";
        assert_eq!(
            l[at + 3..at + 7].iter().map(|x| x.trim()).collect::<Vec<_>>(),
            [
                format!("_s_rows = _s_rows - tl.where({m}, {a}, 0)"),
                format!("_m_rows = tl.maximum(_m_rows, tl.where({m}, {a}, _m_rows))"),
                format!("_n_rows = tl.minimum(_n_rows, tl.where({m}, {a}, _n_rows))"),
                format!("_s_rows = _s_rows + tl.where({m}, tl.load(y + i[:, None] * y_stride0, mask=i_mask[:, None]) * {a}, 0)"),
            ],
            "{k}"
        );
        // The rows reduced once each, combined with the carried values (`m`'s start is A[0]).
        assert_eq!(
            l[at + 7..at + 10]
                .iter()
                .map(|x| x.trim())
                .collect::<Vec<_>>(),
            [
                "s = s + tl.sum(_s_rows, axis=0)",
                "m = tl.maximum(m, tl.max(_m_rows, axis=0))",
                "n = tl.minimum(n, tl.min(_n_rows, axis=0))",
            ],
            "{k}"
        );
        assert!(
            module.contains("def _appyc_lowest_like(x):")
                && module.contains("def _appyc_highest_like(x):"),
            "{module}"
        );
    }

    #[test]
    fn a_row_tile_update_without_the_rows_still_masks_the_rows_past_the_bound() {
        // `s += t` adds `t` once per row: the rows' mask makes it [rows, lanes].
        let k = kernel_of(
            "def f(A, x, M, N):\n    #pragma parallel for simd\n    for j in range(N):\n        t = A[0, j] * 0.5\n        s = 1.0\n        for i in range(M):\n            s += t\n        x[j] = s\n",
            "f",
        );
        assert!(
            has_line(
                &k,
                "_s_rows = _s_rows + tl.where(i_mask[:, None] & j_mask, t, 0)"
            ),
            "{k}"
        );
        // No array in the value: the dtype of the vector it reads (defined before the loop).
        assert!(
            has_line(&k, "_s_rows = tl.zeros((32, MVL), t.dtype)"),
            "{k}"
        );
    }

    #[test]
    fn a_row_tile_in_a_simd_loop_takes_the_strip_s_lanes() {
        let k = kernel_of(
            "def f(A, C, M, N):\n    #pragma parallel for\n    for i in range(N):\n        #pragma simd(64)\n        for j in range(N):\n            s = 0.0\n            for k in range(M):\n                s += A[k, i] * A[k, j]\n            C[i, j] = s\n",
            "f",
        );
        assert!(k.contains("s = tl.full(j.shape, 0.0, "), "{k}");
        assert!(
            has_line(&k, "_s_rows = tl.zeros((32, 64), A.dtype.element_ty)"),
            "{k}"
        );
        assert!(has_line(&k, "for _k_base in range(0, M, 32):"), "{k}");
        assert!(has_line(&k, "s = s + tl.sum(_s_rows, axis=0)"), "{k}");
        assert!(
            has_line(
                &k,
                "tl.store(C + i * C_stride0 + j * C_stride1, s, mask=j_mask)"
            ),
            "{k}"
        );
    }
}
