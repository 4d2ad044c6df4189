//! Strip-mined loops (`LoopKind::StripMined`): strips of a vector width with their vector index
//! and its mask, as a row or a column of a 2-D tile, as the strip of a row block, or around a
//! row tile (printed by `rows`).
//!
//! Design decisions:
//! - A strip loop over host bounds takes the `ONE_STRIP` switch: the launcher knows whether the
//!   extent fits one strip, and a constant single trip lets Triton fold the loop away.
//! - A row block's strip is axis 1 of its tile; the launcher sizes `ROW_BLOCK` from the strips'
//!   bounds when they are host values, and passes 1 (as correct as any size) otherwise.
//! - A carried scalar reduced with lanes (`Reduce::lanes`) folds each strip into a lane vector
//!   that starts from the identity in the scalar's own dtype: the scalar is loop-carried, so
//!   Triton already holds `s ⊕ value` to that dtype, and the vector keeps it too. One
//!   cross-lane reduction after the loop replaces one a strip (each a shuffle tree and, with
//!   several warps, a trip through shared memory between barriers).

use super::cx::{width_text, Cx};
use super::rows::{combine_line, fold_line, identity_line, name_update, reduced_line, row_tile_of};
use crate::codegen::writer::Writer;
use crate::diag::Result;
use crate::frontend::source::Span;
use crate::ir::*;
use std::collections::BTreeSet;

/// A lane strip's update `s = s ⊕ Reduce(e)` carried in the lane vector `acc`.
struct LaneUpdate<'a> {
    target: &'a str,
    op: ReduceOp,
    negated: bool,
    value: &'a Expr,
    acc: &'a str,
    span: Span,
}

fn lane_update(s: &Stmt) -> Option<LaneUpdate<'_>> {
    let (target, op, negated, reduced, _) = name_update(s)?;
    let ExprKind::Reduce {
        value,
        lanes: Some(acc),
        ..
    } = &reduced.kind
    else {
        return None;
    };
    Some(LaneUpdate {
        target,
        op,
        negated,
        value,
        acc,
        span: s.span,
    })
}

/// Each accumulator once, with the first update that names it.
fn distinct_accumulators<'u, 'a>(updates: &'u [LaneUpdate<'a>]) -> Vec<&'u LaneUpdate<'a>> {
    updates
        .iter()
        .enumerate()
        .filter(|(k, u)| !updates[..*k].iter().any(|p| p.acc == u.acc))
        .map(|(_, u)| u)
        .collect()
}

/// The switch of strip loops that fit one strip (`Cx::strip_mined_loop`); off unless the
/// launcher finds that every such loop of the kernel does.
pub(super) const ONE_STRIP_PARAM: &str = "ONE_STRIP: tl.constexpr = False";

/// The rows a row block's program takes (`passes::row_block`); no default, so a launch that
/// forgot it fails instead of running one row a program.
pub(super) const ROW_BLOCK_PARAM: &str = "ROW_BLOCK: tl.constexpr";

impl Cx<'_> {
    /// A strip-mined loop: strips of `width` lanes, the vector index `v` and its mask (a row
    /// or a column in a 2-D tile when `tile` gives the axis).
    pub(super) fn strip_mined_loop(
        &mut self,
        w: &mut Writer,
        var: &str,
        range: &Range,
        (width, tile, v): (Width, Option<u8>, &str),
        body: &[Stmt],
        src: &str,
    ) -> Result<()> {
        let start = self.expr(&range.start)?;
        let stop = self.expr(&range.stop)?;
        let wd = width_text(width);
        let row_tile = match tile {
            Some(0) => row_tile_of(body),
            _ => None,
        };
        if let Some(t) = &row_tile {
            self.row_accumulators(w, t, (width, v), src)?;
        }
        let lane_updates: Vec<LaneUpdate> = match tile {
            None => body.iter().filter_map(lane_update).collect(),
            Some(_) => vec![],
        };
        for u in distinct_accumulators(&lane_updates) {
            let init = identity_line(u.op, &format!("({wd},)"), &format!("{}.dtype", u.target));
            w.line(format!("{} = {init}  {src}", u.acc));
        }
        // A loop over vectors that usually runs once (a row shorter than MVL) is slower as a
        // loop than as straight code: with its one-trip loop nested inside, the grid-stride loop
        // around it could not overlap one program's loads with the next (heat_3d 15.0 against
        // 12.0 ms on the H100, bench/layout_probe_h100.log). When the bounds are host values
        // the launcher knows whether the extent fits one strip, and `ONE_STRIP` makes the
        // range a constant single trip that Triton folds away.
        // A row block's strip is axis 1 of its tile; the launcher sizes `ROW_BLOCK` from its
        // bounds when they are host values.
        let row_block = width == Width::RowBlockLanes;
        let host_bounds = self.host_value(&range.start) && self.host_value(&range.stop);
        if row_block {
            self.row_block
                .push(host_bounds.then(|| (range.start.clone(), range.stop.clone())));
        }
        let one_strip = (row_block || (width == Width::Mvl && tile.is_none())) && host_bounds;
        if one_strip {
            let once = match &range.start.kind {
                ExprKind::Int(c) => (c + 1).to_string(),
                _ => format!("{start} + 1"),
            };
            self.one_strip
                .push((range.start.clone(), range.stop.clone(), width));
            w.line(format!(
                "for {var} in range({start}, {once} if ONE_STRIP else {stop}, {wd}):  {src}"
            ));
        } else {
            w.line(format!("for {var} in range({start}, {stop}, {wd}):  {src}"));
        }
        w.indent();
        w.line(format!("{v} = {var} + tl.arange(0, {wd})"));
        w.line(format!("{v}_mask = {v} < {stop}"));
        // In a 2-D tile the 1-D index is used as a column or as a row.
        let axis = match tile {
            Some(0) => "[:, None]",
            Some(_) => "[None, :]",
            None => "",
        };
        if !axis.is_empty() {
            self.tile_names.insert(v.to_string(), format!("{v}{axis}"));
        }
        if tile == Some(0) {
            self.rows.insert(v.to_string());
        }
        self.masks
            .insert(v.to_string(), BTreeSet::from([format!("{v}_mask{axis}")]));
        if let Some(t) = &row_tile {
            for s in t.elements {
                self.stmt(w, s)?;
            }
            for u in &t.updates {
                self.row_update(w, u, &format!("{v}_mask{axis}"))?;
            }
            w.dedent();
            return self.row_results(w, &t.updates, src);
        }
        if tile.is_none() {
            self.strips.push(width);
        }
        if lane_updates.is_empty() {
            self.block(w, body)?;
        } else {
            for s in body {
                match lane_update(s) {
                    Some(u) => {
                        // The strip's own mask too: a value need not mention the lanes' index.
                        let mut mask = self.mask_of(u.value);
                        mask.insert(format!("{v}_mask"));
                        let m = mask.into_iter().collect::<Vec<_>>().join(" & ");
                        let value = self.expr(u.value)?;
                        let line = fold_line(u.op, u.negated, u.acc, &m, &value);
                        w.line(format!("{line}  {}", self.src(u.span)));
                    }
                    None => self.stmt(w, s)?,
                }
            }
        }
        if tile.is_none() {
            self.strips.pop();
        }
        w.dedent();
        for u in distinct_accumulators(&lane_updates) {
            let line = combine_line(u.op, u.target, &reduced_line(u.op, u.acc));
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
    fn a_strip_mined_loop_defines_its_vector_index_and_mask() {
        // (The store before the strip keeps one row a program: no row block.)
        let k = kernel_of(
            "def f(A, B, M, N):\n    #pragma parallel for\n    for i in range(M):\n        B[i, 0] = 0.0\n        #pragma simd\n        for j in range(N):\n            B[i, j] = A[i, j] + 1.0\n",
            "f",
        );
        let body: Vec<&str> = k.lines().skip(4).collect();
        assert!(
            body[0]
                .trim()
                .starts_with("for _j_base in range(0, 1 if ONE_STRIP else N, MVL):"),
            "{k}"
        );
        assert_eq!(body[1].trim(), "j = _j_base + tl.arange(0, MVL)", "{k}");
        assert_eq!(body[2].trim(), "j_mask = j < N", "{k}");
        assert!(body[3].contains("mask=j_mask)  # t.py:7"), "{k}");
    }

    #[test]
    fn a_carried_scalar_folds_strips_into_lanes_and_reduces_them_once_after_the_loop() {
        let k = kernel_of(
            "def f(A, r, M, N):\n    #pragma parallel for\n    for i in range(M):\n        s = 0.0\n        m = A[i, 0]\n        #pragma simd\n        for j in range(N):\n            s -= A[i, j] * 2.0\n            m = max(m, A[i, j])\n        r[i] = s + m\n",
            "f",
        );
        let l = code_lines(&k);
        let at = line_at(&l, "for _j_base in range(0, 1 if ONE_STRIP else N, MVL):");
        let trimmed =
            |from: usize, to: usize| l[from..to].iter().map(|x| x.trim()).collect::<Vec<_>>();
        // Before the loop, from each operator's identity in the scalar's dtype.
        assert_eq!(
            trimmed(at - 2, at),
            [
                "_s_lanes = tl.zeros((MVL,), s.dtype)",
                "_m_lanes = _appyc_lowest_like(tl.zeros((MVL,), m.dtype))",
            ],
            "{k}"
        );
        // In the loop, element-wise under the strip's mask; no cross-lane reduction there.
        let a = "tl.load(A + i * A_stride0 + j * A_stride1, mask=j_mask)";
        assert_eq!(
            trimmed(at + 3, at + 5),
            [
                format!("_s_lanes = _s_lanes - tl.where(j_mask, _appyc_np_float({a}) * 2.0, 0)"),
                format!("_m_lanes = tl.maximum(_m_lanes, tl.where(j_mask, {a}, _m_lanes))"),
            ],
            "{k}"
        );
        // After it, at the loop's indentation: each reduced once into its scalar.
        assert_eq!(
            trimmed(at + 5, at + 7),
            [
                "s = s + tl.sum(_s_lanes, axis=0)",
                "m = tl.maximum(m, tl.max(_m_lanes, axis=0))",
            ],
            "{k}"
        );
        let indent = |x: &str| x.len() - x.trim_start().len();
        assert_eq!(indent(l[at + 5]), indent(l[at]), "{k}");
        assert!(!k.contains("_appyc_masked_max("), "{k}");
    }

    #[test]
    fn a_scalar_read_inside_its_strip_loop_is_reduced_every_strip() {
        let k = kernel_of(
            "def f(A, B, M, N):\n    #pragma parallel for\n    for i in range(M):\n        s = 0.0\n        #pragma simd\n        for j in range(N):\n            s += A[i, j]\n            B[i, j] = s\n",
            "f",
        );
        assert!(
            has_line(
                &k,
                "s = s + tl.sum(tl.where(j_mask, tl.load(A + i * A_stride0 + j * A_stride1, mask=j_mask), 0), axis=0)"
            ),
            "{k}"
        );
        assert!(!k.contains("_lanes"), "{k}");
    }

    #[test]
    fn a_strip_loop_over_host_bounds_gets_the_one_strip_switch_and_its_launcher_sets_it() {
        let module = generated(
            "def f(A, B, M, N, lo):\n    #pragma parallel for\n    for i in range(M):\n        B[i, 0] = 0.0\n        #pragma simd\n        for j in range(lo + 1, N - 1):\n            B[i, j] = A[i, j] + 1.0\n",
        );
        let k = function(&module, "_f_kernel0");
        assert!(
            k.contains("MVL: tl.constexpr, ONE_STRIP: tl.constexpr = False):"),
            "{k}"
        );
        assert!(
            has_line(
                k,
                "for _j_base in range(lo + 1, lo + 1 + 1 if ONE_STRIP else N - 1, MVL):"
            ),
            "{k}"
        );
        // The launcher switches it on only for a non-empty extent within one strip.
        let launcher = function(&module, "_launch_f_kernel0");
        assert!(
            launcher.contains(
                "{\"MVL\": _appyc_mvl, \"ONE_STRIP\": 0 < int(N - 1) - int(lo + 1) <= _appyc_mvl}"
            ),
            "{launcher}"
        );
    }

    #[test]
    fn a_row_block_is_a_tile_of_rows_by_strip_lanes_sized_by_the_launcher() {
        let module = generated(
            // (A store one lane over: strips must stay in order, see `row_block`.)
            "def f(A, B, M, N, lo):\n    #pragma parallel for\n    for i in range(1, M):\n        #pragma simd\n        for j in range(lo, N - 1):\n            B[i, j + 1] = A[i - 1, j] + 1.0\n",
        );
        let k = function(&module, "_f_kernel0");
        assert!(
            k.contains(
                "MVL: tl.constexpr, ROW_BLOCK: tl.constexpr, ONE_STRIP: tl.constexpr = False):"
            ),
            "{k}"
        );
        // The program's rows (axis 0) and the strip's lanes (axis 1): MVL lanes in all.
        for line in [
            "i = 1 + tl.program_id(0) * ROW_BLOCK + tl.arange(0, ROW_BLOCK)  # t.py:3",
            "i_mask = i < M",
            "for _j_base in range(lo, lo + 1 if ONE_STRIP else N - 1, MVL // ROW_BLOCK):  # t.py:5",
            "j = _j_base + tl.arange(0, MVL // ROW_BLOCK)",
            "tl.store(B + i[:, None] * B_stride0 + (j[None, :] + 1) * B_stride1, _appyc_np_float(tl.load(A + (i[:, None] - 1) * A_stride0 + j[None, :] * A_stride1, mask=i_mask[:, None] & j_mask[None, :])) + 1.0, mask=i_mask[:, None] & j_mask[None, :])  # t.py:6",
        ] {
            assert!(has_line(k, line), "{line}\n{k}");
        }
        // The launcher sizes the block from the strip's extent, counts blocks of rows, and
        // compares the extent with the strip's share of MVL.
        let launcher = function(&module, "_launch_f_kernel0");
        for line in [
            "_appyc_row_block = _appyc_rows_a_program(_appyc_mvl, int(N - 1) - int(lo))",
            "_f_kernel0, ((n_i + _appyc_row_block - 1) // _appyc_row_block,),",
            "{\"MVL\": _appyc_mvl, \"ROW_BLOCK\": _appyc_row_block, \"ONE_STRIP\": 0 < int(N - 1) - int(lo) <= _appyc_mvl // _appyc_row_block}, num_warps=_appyc_warps,",
        ] {
            assert!(has_line(launcher, line), "{line}\n{launcher}");
        }
        // In a persistent loop: blocks of rows per virtual program, sized by the longest strip.
        let module = generated(
            "def f(A, B, M, N, T):\n    for t in range(T):\n        #pragma parallel for\n        for i in range(M):\n            #pragma simd\n            for j in range(N):\n                B[i, j] = A[i, j] + 1.0\n        #pragma parallel for\n        for i in range(M):\n            #pragma simd\n            for j in range(1, N - 1):\n                A[i, j] = B[i, j - 1] * B[i, j + 1]\n",
        );
        let k = function(&module, "_f_persistent0");
        assert!(
            has_line(k, "_n0_1 = tl.maximum(tl.cdiv((M) - (0), ROW_BLOCK), 0)"),
            "{k}"
        );
        let launcher = function(&module, "_launch_f_persistent0");
        assert!(
            has_line(
                launcher,
                "_appyc_row_block = _appyc_rows_a_program(_appyc_mvl, max(int(N), int(N - 1) - int(1)))"
            ),
            "{launcher}"
        );
    }

    #[test]
    fn a_strip_loop_whose_bounds_move_with_the_program_keeps_its_loop() {
        // A bound of the grid variable, a kernel local, or the host loop's own variable in a
        // persistent loop is not known to the launcher: no switch, no `ONE_STRIP` parameter.
        for src in [
            "def f(A, B, M, N):\n    #pragma parallel for\n    for i in range(M):\n        #pragma simd\n        for j in range(i + 1, N):\n            B[i, j] = A[i, j] + 1.0\n",
            "def f(A, B, M, N):\n    #pragma parallel for\n    for i in range(M):\n        n = N - i\n        #pragma simd\n        for j in range(n):\n            B[i, j] = A[i, j] + 1.0\n",
        ] {
            let k = kernel_of(src, "f");
            assert!(!k.contains("ONE_STRIP"), "{k}");
        }
        let module = generated(
            "def f(A, B, M, N, T):\n    for t in range(T):\n        #pragma parallel for\n        for i in range(M):\n            #pragma simd\n            for j in range(t, N):\n                B[i, j] = A[i, j] + 1.0\n",
        );
        let k = function(&module, "_f_persistent0");
        // (Its lanes are a grid dimension here, whose extent the kernel computes each step.)
        assert!(
            has_line(
                k,
                "j = t + _pid0_0 * (MVL // ROW_BLOCK) + tl.arange(0, MVL // ROW_BLOCK)  # t.py:6"
            ),
            "{k}"
        );
        assert!(!k.contains("ONE_STRIP"), "{k}");
        // Nor can it size a row block from such a strip: one row a program, still correct.
        let launcher = function(&module, "_launch_f_persistent0");
        assert!(has_line(launcher, "_appyc_row_block = 1"), "{launcher}");
    }

    #[test]
    fn a_2d_tile_spells_its_indices_as_a_column_and_a_row() {
        let k = kernel_of(
            "def f(A, B, L, M, N):\n    #pragma parallel for\n    for i in range(L):\n        #pragma :M=>simd :N=>simd\n        B[i, :M, :N] = A[i, :M, :N]\n",
            "f",
        );
        assert!(
            k.contains("B + i * B_stride0 + _i[:, None] * B_stride1 + _i1[None, :] * B_stride2"),
            "{k}"
        );
        assert!(
            k.contains("mask=_i1_mask[None, :] & _i_mask[:, None])"),
            "{k}"
        );
    }
}
