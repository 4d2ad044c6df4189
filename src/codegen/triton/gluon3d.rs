//! The temporally blocked form of a 3-D stencil loop (`schedule::temporal::Stencil3d`): one
//! iteration (two phases) a group, streamed along the first axis, in two spellings of one plan:
//! a Gluon kernel whose planes live in shared memory and registers, and a plain Triton twin
//! whose "shared memory" is a scratch of its own in global memory, for the interpreter. The
//! scheme is bench/heat3d_zstream_probe.py's (Heat-3D 120^3 at 1.24x the streaming bound on
//! the H100, 1.37x appyc's streaming kernel, bit-equal).
//!
//! Why streaming and not cube tiles: a cube tile of Heat-3D's size is half halo (the 2-D
//! probe's `h3g`, 0.7x the streaming kernel). Streaming planes, a program owns a `TY x TX` tile
//! of every plane of a run of planes (a z-chunk); only the x-y halo and a few planes at the
//! chunk's ends are computed twice.
//!
//! Levels: level 0 is the state array (phase 0's input), level `p` the output of phase
//! `p - 1`. Step `k` loads plane `k` of level 0 and computes level `p` at plane `k - p` for
//! every `p`: a phase reads the level below at planes `z - 1`, `z`, `z + 1` (registers `_m`,
//! `_c`, `_n`: the analysis admits neighbour planes only at `(j, k)` itself) and plane `z`'s
//! in-plane neighbours as element windows of a shared buffer (as in `gluon2d`). Two buffers a
//! level alternate by step, so one block barrier a step separates every buffer's reads from
//! its next store (the loop runs steps in pairs for that).
//!
//! Boundary: points outside a phase's box keep its target's value. That target is also the
//! target two levels down (the arrays alternate), whose plane `z` is still in registers
//! (`_m`), so no reload: only level 1 (the other array) needs global memory, prefetched a
//! step ahead like the state's planes.
//!
//! Groups: one iteration a group, the state ping-ponging with a spare by the group's parity
//! (a program's halo is another's owned part). On the GPU one cooperative launch runs every
//! group with a grid barrier between them (bench: 7.5 ms against 8.3 for a launch a group);
//! the interpreter runs one launch a group. After the last group the other array's owned part
//! is stored too.

use super::dialect::Dialect;
use super::stencil_print::{blocked_pair, print, BlockedSignature};
use crate::codegen::kernel_code::KernelCode;
use crate::codegen::writer::Writer;
use crate::frontend::source::SourceFile;
use crate::ir::*;
use crate::schedule::temporal::{offset_3d, Phase3d, Stencil3d};

/// Where the kernel keeps level `q`'s buffer `b` (of two).
fn buffer(form: Dialect, q: usize, b: usize, off: &str) -> String {
    match form {
        Dialect::Gluon => {
            format!("_s{q}_{b}.index(GR * TX + {off})._reinterpret(_dt, [TY, TX], _WL)")
        }
        Dialect::Triton => {
            format!(
                "_buf + {} * ((TY + 2 * GR) * TX) + _tile + {off}",
                2 * q + b
            )
        }
    }
}

fn load_buffer(form: Dialect, q: usize, b: usize, off: &str) -> String {
    match form {
        Dialect::Gluon => format!("{}.load(_L)", buffer(form, q, b, off)),
        Dialect::Triton => format!("tl.load({})", buffer(form, q, b, off)),
    }
}

fn store_buffer(form: Dialect, q: usize, b: usize, v: &str) -> String {
    match form {
        Dialect::Gluon => format!("{}.store({v})", buffer(form, q, b, "0")),
        Dialect::Triton => format!("tl.store({}, {v})", buffer(form, q, b, "0")),
    }
}

/// The Gluon kernel and its Triton twin (named `{name}_gluon`, `{name}_twin`); `plain` is the
/// loop's persistent kernel, whose scalars they take (in the same order).
pub fn blocked_3d_kernels(
    name: &str,
    stencil: &Stencil3d,
    plain: &KernelCode,
    file: &SourceFile,
    line: usize,
) -> (String, String) {
    let sig = BlockedSignature {
        ints: &[
            "_planes", "_rows", "_cols", "_chunks", "_groups", "_g_lo", "_g_hi",
        ],
        extra: &["_sync"],
        constexprs: &["TY", "TX", "GR", "HALO", "GRID_SYNC"],
        what: "streamed by planes, one iteration a group, planes in {}",
    };
    blocked_pair(name, &sig, plain, (file, line), &|w, form| {
        body(w, form, stencil)
    })
}

/// The kernel's body: the buffers, the tiles of every group, the grid barrier between groups.
fn body(w: &mut Writer, form: Dialect, st: &Stencil3d) {
    let ns = form.ns();
    let levels = st.phases.len();
    match form {
        Dialect::Gluon => {
            for l in [
                "_NW: gl.constexpr = gl.num_warps()",
                // One element a thread along a row: shifted windows are not 16-byte aligned.
                "_L: gl.constexpr = gl.BlockedLayout([TY // _NW, 1], [1, 32], [_NW, 1], [1, 0])",
                "_SL: gl.constexpr = gl.SwizzledSharedLayout(1, 1, 1, [1, 0])",
                "_WL: gl.constexpr = gl.PaddedSharedLayout.with_identity_for([[TY * TX, 1]], [TY, TX], [1, 0])",
                "_PL: gl.constexpr = gl.PaddedSharedLayout.with_identity_for([[TY * TX // 2, 2 * GR * TX]], [TY, TX], [1, 0])",
                "_dt = _src.dtype.element_ty",
            ] {
                w.line(l);
            }
            for q in 0..levels {
                for b in 0..2 {
                    w.line(format!(
                        "_s{q}_{b} = gl.allocate_shared_memory(_dt, [TY, TX], _PL)._reinterpret(_dt, [(TY + 2 * GR) * TX, 1, 1], _SL)"
                    ));
                }
            }
            w.line("_ly = gl.arange(0, TY, layout=gl.SliceLayout(1, _L))[:, None]");
            w.line("_lx = gl.arange(0, TX, layout=gl.SliceLayout(0, _L))[None, :]");
        }
        Dialect::Triton => {
            for l in [
                "_dt = _src.dtype.element_ty".to_string(),
                "_ly = tl.arange(0, TY)[:, None]".into(),
                "_lx = tl.arange(0, TX)[None, :]".into(),
                format!(
                    "_buf = _scratch + tl.program_id(0).to(tl.int64) * ({} * (TY + 2 * GR) * TX)",
                    2 * levels
                ),
                "_tile = GR * TX + _ly * TX + _lx".into(),
            ] {
                w.line(l);
            }
        }
    }
    for l in [
        format!("_pid = {ns}.program_id(0)"),
        format!("_nprog = {ns}.num_programs(0)"),
        format!("_nty = {ns}.cdiv(_rows, TY - 2 * HALO)"),
        format!("_ntx = {ns}.cdiv(_cols, TX - 2 * HALO)"),
        "_nxy = _rows * _cols".into(),
        format!("_arrived = {}", form.full("0", "tl.int64")),
    ] {
        w.line(l);
    }
    w.line("for _g in range(_g_lo, _g_hi):");
    w.indent();
    for l in [
        "_from = _src",
        "_to = _dst",
        "if _g % 2 == 1:",
        "    _from = _dst",
        "    _to = _src",
        "_last = _g == _groups - 1",
        "for _t in range(_pid, _nty * _ntx * _chunks, _nprog):",
    ] {
        w.line(l);
    }
    w.indent();
    tile(w, form, st);
    w.dedent();
    w.line("if GRID_SYNC:");
    w.indent();
    for l in [
        "_arrived += _nprog".to_string(),
        form.barrier().into(),
        format!("{ns}.atomic_add(_sync, 1, sem=\"release\")"),
        format!("while {ns}.atomic_add(_sync, 0, sem=\"acquire\") < _arrived:"),
        "    pass".into(),
        form.barrier().into(),
    ] {
        w.line(l);
    }
    w.dedent();
    w.dedent();
}

/// One tile of one group: its place, the prefetches, the steps in pairs.
fn tile(w: &mut Writer, form: Dialect, st: &Stencil3d) {
    let ns = form.ns();
    let levels = st.phases.len();
    for l in [
        "_tx = _t % _ntx".to_string(),
        "_ty = (_t // _ntx) % _nty".into(),
        "_y0 = _ty * (TY - 2 * HALO) - HALO".into(),
        "_x0 = _tx * (TX - 2 * HALO) - HALO".into(),
        // z-chunks of `_planes // _chunks` planes or one more: balanced over the programs.
        "_zs = (_t // (_ntx * _nty)) * _planes // _chunks".into(),
        "_ze = (_t // (_ntx * _nty) + 1) * _planes // _chunks".into(),
        format!("_klo = _zs - {levels}"),
        format!("_khi = _ze + {levels}"),
        "_khi = _khi + (_khi - _klo) % 2".into(),
        "_gy = _y0 + _ly".into(),
        "_gx = _x0 + _lx".into(),
        "_inside = (_gy >= 0) & (_gy < _rows) & (_gx >= 0) & (_gx < _cols)".into(),
        "_at = _gy * _cols + _gx".into(),
        "_own = _inside & (_ly >= HALO) & (_ly < TY - HALO) & (_lx >= HALO) & (_lx < TX - HALO)"
            .into(),
    ] {
        w.line(l);
    }
    for (k, p) in st.phases.iter().enumerate() {
        let [_, (_, r_lo, r_hi), (_, c_lo, c_hi)] = &p.dims;
        w.line(format!(
            "_keep{k} = (_gy < {}) | (_gy >= {}) | (_gx < {}) | (_gx >= {})",
            bound(r_lo),
            bound(r_hi),
            bound(c_lo),
            bound(c_hi)
        ));
    }
    w.line(format!(
        "_pre = {ns}.load(_from + _klo * _nxy + _at, mask=_inside & (_klo >= 0) & (_klo < _planes), other=0.0)"
    ));
    w.line(format!(
        "_preb = {ns}.load(_other + (_klo - 1) * _nxy + _at, mask=_keep0 & _inside & (_klo >= 1) & (_klo - 1 < _planes), other=0.0)"
    ));
    let zeros = match form {
        Dialect::Gluon => "gl.zeros([TY, TX], _dt, _L)",
        Dialect::Triton => "tl.zeros([TY, TX], _dt)",
    };
    for q in 0..levels {
        w.line(format!("_m{q} = {zeros}"));
        w.line(format!("_c{q} = {zeros}"));
    }
    w.line("for _k2 in range(_klo, _khi, 2):");
    w.indent();
    step(w, form, st, "_k2", 1, 0);
    step(w, form, st, "(_k2 + 1)", 0, 1);
    w.dedent();
}

/// Step `k`: level 0 at plane `k`, level `p` at plane `k - p`, the owned stores, the buffers
/// (`rd` holds each level's plane of the step before, `wr` takes this step's).
fn step(w: &mut Writer, form: Dialect, st: &Stencil3d, k: &str, rd: usize, wr: usize) {
    let ns = form.ns();
    let levels = st.phases.len();
    for l in [
        format!("_kk = {k}"),
        "_n0 = _pre".into(),
        format!(
            "_pre = {ns}.load(_from + (_kk + 1) * _nxy + _at, mask=_inside & (_kk + 1 >= 0) & (_kk + 1 < _planes), other=0.0)"
        ),
        "_b1 = _preb".into(),
        format!(
            "_preb = {ns}.load(_other + _kk * _nxy + _at, mask=_keep0 & _inside & (_kk >= 0) & (_kk < _planes), other=0.0)"
        ),
    ] {
        w.line(l);
    }
    for (k, p) in st.phases.iter().enumerate() {
        level(w, form, k, p, levels, rd);
    }
    w.line(format!("_zo = _kk - {levels}"));
    w.line("if (_zo >= _zs) & (_zo < _ze):");
    w.line(format!(
        "    {ns}.store(_to + _zo * _nxy + _at, _n{levels}, mask=_own)"
    ));
    w.line("if _last:");
    w.line(format!("    _zb = _kk - {}", levels - 1));
    w.line("    if (_zb >= _zs) & (_zb < _ze):");
    w.line(format!(
        "        {ns}.store(_other + _zb * _nxy + _at, _n{}, mask=_own)",
        levels - 1
    ));
    for q in 0..levels {
        w.line(store_buffer(form, q, wr, &format!("_n{q}")));
    }
    w.line(form.barrier());
    for q in 0..levels {
        w.line(format!("_m{q} = _c{q}"));
        w.line(format!("_c{q} = _n{q}"));
    }
}

/// Level `k + 1` (phase `k`) at plane `_kk - k - 1`: the stencil where the plane is inside the
/// phase's box and past the chunk's unneeded start, the target's fixed value elsewhere.
fn level(w: &mut Writer, form: Dialect, k: usize, p: &Phase3d, levels: usize, rd: usize) {
    let ns = form.ns();
    let (lvl, below) = (k + 1, k);
    let vars = [
        p.dims[0].0.as_str(),
        p.dims[1].0.as_str(),
        p.dims[2].0.as_str(),
    ];
    let value = print(&p.value, &mut |x| match &x.kind {
        ExprKind::Subscript { indices, .. } => {
            let [dz, dy, dx] =
                offset_3d(indices, vars).expect("schedule::temporal takes `i + a, j + b, k + c`");
            Some(match (dz, dy, dx) {
                (-1, ..) => format!("_m{below}"),
                (1, ..) => format!("_n{below}"),
                (_, 0, 0) => format!("_c{below}"),
                _ => load_buffer(form, below, rd, &format!("({dy}) * TX + ({dx})")),
            })
        }
        _ => None,
    });
    let (z_lo, z_hi) = (bound(&p.dims[0].1), bound(&p.dims[0].2));
    // The target's value two levels down, or (level 1) the other array's from global memory.
    let (fixed, fixed_plane) = if lvl >= 2 {
        let m = format!("_m{}", lvl - 2);
        (m.clone(), m)
    } else {
        (
            "_b1".to_string(),
            format!(
                "{ns}.load(_other + _z * _nxy + _at, mask=_inside & (_z >= 0) & (_z < _planes) & ((_z < {z_lo}) | (_z >= {z_hi})), other=0.0)"
            ),
        )
    };
    w.line(format!("_z = _kk - {lvl}"));
    w.line(format!(
        "if (_z >= _zs - {levels} + {lvl}) & (_z >= {z_lo}) & (_z < {z_hi}):"
    ));
    w.indent();
    // Rounded to the array's dtype as the plain kernel's store rounds it.
    w.line(format!("_v = ({value}).to(_dt)"));
    w.line(format!("_v = {ns}.where(_keep{k}, {fixed}, _v)"));
    w.dedent();
    w.line("else:");
    w.line(format!("    _v = {fixed_plane}"));
    w.line(format!("_n{lvl} = _v"));
}

/// A region bound (host names, integers, `A.shape[d]`: `_planes`, `_rows` or `_cols`).
fn bound(e: &Expr) -> String {
    print(e, &mut |x| match &x.kind {
        ExprKind::Shape { dim: 0, .. } => Some("_planes".to_string()),
        ExprKind::Shape { dim: 1, .. } => Some("_rows".to_string()),
        ExprKind::Shape { .. } => Some("_cols".to_string()),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn neighbour_planes_come_from_registers_and_the_plane_from_windows() {
        let w = load_buffer(Dialect::Gluon, 1, 0, "(0) * TX + (1)");
        assert_eq!(
            w,
            "_s1_0.index(GR * TX + (0) * TX + (1))._reinterpret(_dt, [TY, TX], _WL).load(_L)"
        );
        let t = load_buffer(Dialect::Triton, 1, 0, "(0) * TX + (1)");
        assert_eq!(
            t,
            "tl.load(_buf + 2 * ((TY + 2 * GR) * TX) + _tile + (0) * TX + (1))"
        );
    }
}
