//! The temporally blocked form of a 2-D stencil loop (`schedule::temporal::Stencil2d`), in two
//! spellings of one tile plan: a Gluon kernel (`@gluon.jit`) whose tile lives in shared memory,
//! and a plain Triton twin whose "shared memory" is a scratch of its own in global memory. The
//! scheme is bench/temporal2d_gluon_probe.md's `j2g` (2.5x the streaming bound on the H100).
//!
//! Overlapped (trapezoid) tiles: a program owns `(TH - 2 HALO) x (TW - 2 HALO)` points and
//! loads a `TH x TW` tile of the state array (the one phase 0 reads) around them, `HALO` being
//! how far a group of `G` iterations reads (`G x` the phases' radii). Each phase is one
//! expression over the whole tile; the part of the tile whose inputs were valid shrinks by the
//! phase's radius, so after the group the owned part is exact and is written to the other
//! state buffer (the launcher ping-pongs the state array with a spare; one launch a group, as
//! the probe found faster than a grid barrier).
//!
//! One buffer: the phases alternate two arrays, each reading only what the one before wrote
//! (the analysis' condition), so a phase may overwrite the tile with its result once every
//! thread has read it: read, barrier, store, barrier. One store a phase also keeps Triton's
//! Membar pass from adding barriers between stores it cannot prove disjoint.
//!
//! Windows: a neighbour `Y[i + a, j + b]` is the tile shifted by `a * TW + b` elements of a flat
//! row-major buffer, so column 0 reads the row above's far end and the first and last rows read
//! `GR` guard rows (two when some offset is diagonal): garbage, but only in the halo. In Gluon a
//! window is `flat.index(k)._reinterpret(dtype, [TH, TW])` of the buffer viewed as `[S, 1, 1]`
//! (slices must start at multiples of their length), read with one element a thread along a row
//! (a shifted window is not 16-byte aligned); the buffer is a padded allocation whose padding
//! only sizes the guard rows. A window's base is only element-aligned, but Triton takes every
//! shared view's base as 16-byte aligned: with a swizzled layout it lowers a 32-bit-or-narrower
//! window to `ldmatrix`/`stmatrix`, whose 16-byte rows a `j +- 1` window misaligns (float32
//! faulted on the H100 with "misaligned address"; float64, too wide for them, got element
//! loads). So windows are views in a padded layout whose one padding lies past the window's
//! end (identity addresses), which Triton lowers element by element (`lowerLdStMatrix` refuses
//! padded layouts): plain `ld.shared`/`st.shared` of one element whatever the dtype. In the twin
//! a window is a load at `_tile + offset`.
//!
//! Boundary: points of a phase's target outside its rectangle are never written by the loop, so
//! in tiles that reach past the rectangle (a uniform branch) the phase's result there is
//! replaced by the array's value in global memory before the store; other tiles skip it.
//!
//! The other array's final value: in the last group, after the last step's last phase writing
//! it, its owned part is stored too. Between groups it is never read (phase 0 reads the state
//! array only), so earlier groups skip it.

use super::dialect::Dialect;
use super::stencil_print::{blocked_pair, print, BlockedSignature};
use crate::codegen::kernel_code::KernelCode;
use crate::codegen::writer::Writer;
use crate::frontend::source::SourceFile;
use crate::ir::*;
use crate::schedule::temporal::{Phase2d, Stencil2d};

/// The tile shifted by `off` elements (an expression of constexprs), for loads or a store.
fn window(form: Dialect, off: &str) -> String {
    match form {
        Dialect::Gluon => format!("_flat.index(GR * TW + {off})._reinterpret(_dt, [TH, TW], _WL)"),
        Dialect::Triton => format!("_buf + _tile + {off}"),
    }
}

fn load_window(form: Dialect, off: &str) -> String {
    match form {
        Dialect::Gluon => format!("{}.load(_L)", window(form, off)),
        Dialect::Triton => format!("tl.load({})", window(form, off)),
    }
}

fn store_window(form: Dialect, v: &str) -> String {
    match form {
        Dialect::Gluon => format!("{}.store({v})", window(form, "0")),
        Dialect::Triton => format!("tl.store({}, {v})", window(form, "0")),
    }
}

/// The Gluon kernel and its Triton twin (named `{name}_gluon`, `{name}_twin`); `plain` is the
/// loop's persistent kernel, whose scalars they take (in the same order).
pub fn blocked_2d_kernels(
    name: &str,
    stencil: &Stencil2d,
    plain: &KernelCode,
    file: &SourceFile,
    line: usize,
) -> (String, String) {
    let sig = BlockedSignature {
        ints: &["_rows", "_cols", "_steps", "_groups", "_group"],
        extra: &[],
        constexprs: &["TH", "TW", "G", "GR", "HALO"],
        what: "G iterations a launch, tiles in {}",
    };
    blocked_pair(name, &sig, plain, (file, line), &|w, form| {
        body(w, form, stencil)
    })
}

/// The kernel's body: the tile plan, the load, the group's phases, the owned stores.
fn body(w: &mut Writer, form: Dialect, st: &Stencil2d) {
    let ns = form.ns();
    match form {
        Dialect::Gluon => {
            // One element a thread along a row: shifted windows are not 16-byte aligned.
            for l in [
                "_NW: gl.constexpr = gl.num_warps()",
                "_L: gl.constexpr = gl.BlockedLayout([TH // (_NW * 2), 1], [1, 32], [_NW, 1], [1, 0])",
                "_SL: gl.constexpr = gl.SwizzledSharedLayout(1, 1, 1, [1, 0])",
                // A window: element accesses only (no ldmatrix/stmatrix on an unaligned base).
                "_WL: gl.constexpr = gl.PaddedSharedLayout.with_identity_for([[TH * TW, 1]], [TH, TW], [1, 0])",
                "_PL: gl.constexpr = gl.PaddedSharedLayout.with_identity_for([[TH * TW // 2, 2 * GR * TW]], [TH, TW], [1, 0])",
                "_dt = _src.dtype.element_ty",
                // The padding only sizes the guard rows: the buffer is used through a flat view.
                "_flat = gl.allocate_shared_memory(_dt, [TH, TW], _PL)._reinterpret(_dt, [(TH + 2 * GR) * TW, 1, 1], _SL)",
                "_lr = gl.arange(0, TH, layout=gl.SliceLayout(1, _L))[:, None]",
                "_lc = gl.arange(0, TW, layout=gl.SliceLayout(0, _L))[None, :]",
            ] {
                w.line(l);
            }
        }
        Dialect::Triton => {
            for l in [
                "_lr = tl.arange(0, TH)[:, None]",
                "_lc = tl.arange(0, TW)[None, :]",
                "_buf = _scratch + tl.program_id(0).to(tl.int64) * ((TH + 2 * GR) * TW)",
                "_tile = GR * TW + _lr * TW + _lc",
            ] {
                w.line(l);
            }
        }
    }
    for l in [
        format!("_tiles_w = {ns}.cdiv(_cols, TW - 2 * HALO)"),
        "_r0 = (tl_pid // _tiles_w) * (TH - 2 * HALO) - HALO"
            .replace("tl_pid", &format!("{ns}.program_id(0)")),
        "_c0 = (tl_pid % _tiles_w) * (TW - 2 * HALO) - HALO"
            .replace("tl_pid", &format!("{ns}.program_id(0)")),
        format!("_count = {ns}.minimum(G, _steps - _group * G)"),
    ] {
        w.line(l);
    }
    indices(w, form);
    let (state, _) = st.arrays();
    // Whether the tile reaches past the rectangle of each array (uniform: no per-point work
    // in interior tiles).
    for (k, p) in st.phases.iter().take(2).enumerate() {
        let (r_lo, r_hi, c_lo, c_hi) = rect(p);
        w.line(format!(
            "_edge{k} = (_r0 < {r_lo}) | (_r0 + TH > {r_hi}) | (_c0 < {c_lo}) | (_c0 + TW > {c_hi})"
        ));
    }
    w.line(store_window(
        form,
        &format!("{ns}.load(_src + _at, mask=_inside, other=0.0)"),
    ));
    w.line(form.barrier());
    let n = st.phases.len();
    w.line("for _step in range(_count - 1):");
    w.indent();
    for (k, p) in st.phases.iter().enumerate() {
        phase(w, form, k, p, state);
    }
    w.dedent();
    w.line("# The last iteration: the other array's owned part after its last phase (last group).");
    for (k, p) in st.phases.iter().enumerate() {
        phase(w, form, k, p, state);
        if k == n - 2 {
            w.line("if _group == _groups - 1:");
            w.indent();
            store_owned(w, form, "_other");
            w.dedent();
        }
    }
    store_owned(w, form, "_dst");
}

/// One phase: its value from the windows, the rectangle's outside from global memory in edge
/// tiles, then the store between barriers.
fn phase(w: &mut Writer, form: Dialect, k: usize, p: &Phase2d, state: &str) {
    let ns = form.ns();
    let value = print(&p.value, &mut |x| match &x.kind {
        ExprKind::Subscript { indices, .. } => {
            let off = |ix: &Index, var: &str| match ix {
                Index::At(e) => match &e.kind {
                    ExprKind::Binary { op, right, .. } => match (op, &right.kind) {
                        (BinOp::Add, ExprKind::Int(c)) => *c,
                        (BinOp::Sub, ExprKind::Int(c)) => -*c,
                        _ => unreachable!("schedule::temporal takes `{var} + c`"),
                    },
                    _ => 0,
                },
                _ => unreachable!("schedule::temporal takes `{var} + c`"),
            };
            let (a, b) = (off(&indices[0], &p.rows.0), off(&indices[1], &p.cols.0));
            Some(load_window(form, &format!("({a}) * TW + ({b})")))
        }
        _ => None,
    });
    w.line(format!("_v = {value}"));
    let global = if p.target == state { "_src" } else { "_other" };
    let (r_lo, r_hi, c_lo, c_hi) = rect(p);
    w.line(format!("if _edge{}:", k % 2));
    w.indent();
    indices(w, form);
    w.line(format!(
        "_keep = (_gr < {r_lo}) | (_gr >= {r_hi}) | (_gc < {c_lo}) | (_gc >= {c_hi})"
    ));
    w.line(format!(
        "_v = {ns}.where(_keep, {ns}.load({global} + _at, mask=_keep & _inside, other=0.0), _v)"
    ));
    w.dedent();
    w.line(form.barrier());
    // A float64 scalar makes a float32 phase's value float64: the plain kernel's and the twin's
    // `tl.store` cast it to the array's dtype, a shared-memory store does not.
    w.line(store_window(
        form,
        match form {
            Dialect::Gluon => "_v.to(_dt)",
            Dialect::Triton => "_v",
        },
    ));
    w.line(form.barrier());
}

/// The tile's owned points (inside the arrays) from the buffer to `array`.
fn store_owned(w: &mut Writer, form: Dialect, array: &str) {
    let ns = form.ns();
    indices(w, form);
    w.line(
        "_own = _inside & (_lr2 >= HALO) & (_lr2 < TH - HALO) & (_lc2 >= HALO) & (_lc2 < TW - HALO)",
    );
    w.line(format!(
        "{ns}.store({array} + _at, {}, mask=_own)",
        load_window(form, "0")
    ));
}

/// The tile's global coordinates, offsets and which exist, computed where they are used: the
/// full-tile tensors would otherwise stay live across the phases (spilled past the register
/// cap). In Gluon the row and column numbers go through an opaque move first, so the compiler
/// can neither merge nor hoist the recomputation (the probe's `_opaque`).
fn indices(w: &mut Writer, form: Dialect) {
    for v in ["_lr", "_lc"] {
        w.line(match form {
            Dialect::Gluon => format!(
                "{v}2 = gl.inline_asm_elementwise(\"mov.b32 $0, $1;\", \"=r,r\", [{v}], dtype=gl.int32, is_pure=False, pack=1)"
            ),
            Dialect::Triton => format!("{v}2 = {v}"),
        });
    }
    for l in [
        "_gr = _r0 + _lr2",
        "_gc = _c0 + _lc2",
        "_at = _gr * _cols + _gc",
        "_inside = (_gr >= 0) & (_gr < _rows) & (_gc >= 0) & (_gc < _cols)",
    ] {
        w.line(l);
    }
}

/// A phase's rectangle as kernel expressions: rows `[lo, hi)`, columns `[lo, hi)`.
fn rect(p: &Phase2d) -> (String, String, String, String) {
    (
        bound(&p.rows.1),
        bound(&p.rows.2),
        bound(&p.cols.1),
        bound(&p.cols.2),
    )
}

/// A region bound (host names, integers, `A.shape[d]`, which is `_rows` or `_cols`).
fn bound(e: &Expr) -> String {
    print(e, &mut |x| match &x.kind {
        ExprKind::Shape { dim: 0, .. } => Some("_rows".to_string()),
        ExprKind::Shape { .. } => Some("_cols".to_string()),
        _ => None,
    })
}
