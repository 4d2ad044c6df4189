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
//! Quadrants: a tile's plane is held as four `TY/2 x TX/2` tensors, rows of parity `a` and
//! columns of parity `b` (tile-relative), each thread one element of each. Half of an
//! element's in-plane neighbours are then the same thread's registers (the right neighbour of
//! an even column is the odd quadrant at the same index); only the other half are windows of
//! a quadrant's shared buffer. Shared memory's bandwidth bounded the one-tensor form (four
//! windows a point and level, about three quarters of a step): quadrants took Heat-3D 120^3
//! from 7.6 to 7.1 ms on the H100, 1.23x to 1.31x the streaming bound
//! (bench/heat3d_sync_probe.py, docs/performance.md 48). A quadrant's global loads stride by
//! two elements, so each touches twice the sectors it uses; its partner quadrant's load,
//! issued next, uses the rest (whether from L1 or L2 was not measured apart).
//!
//! Boundary: points outside a phase's box keep its target's value. That target is also the
//! target two levels down (the arrays alternate), whose plane `z` is still in registers
//! (`_m`), so no reload: only level 1 (the other array) needs global memory, prefetched a
//! step ahead like the state's planes.
//!
//! Groups: one iteration a group, the state ping-ponging with a spare by the group's parity
//! (a program's halo is another's owned part). On the GPU one cooperative launch runs every
//! group with a grid barrier between them (bench: 7.5 ms against 8.3 for a launch a group;
//! the barrier costs about 0.5 ms of Heat-3D's 7, and every cheaper wait tried, neighbour
//! flags among them, was slower: docs/performance.md 48); the interpreter runs one launch a
//! group. After the last group the other array's owned part
//! is stored too. Groups and a program's tiles run as one loop, and the Gluon kernel's tile is
//! a function of its own (`TileHelper`): Triton's front end visits a loop's body twice and a
//! called function once, so the plane loop inside two more loops cost heat_3d's cold first
//! call 1.5-1.9 s of front end on the H100, one loop 0.8-1.1 s, the function 0.5 s
//! (performance.md 50, 53).

use super::dialect::Dialect;
use super::stencil_print::{blocked_pair, blocked_scalars, print, BlockedSignature};
use crate::codegen::kernel_code::{KernelCode, Param};
use crate::codegen::writer::Writer;
use crate::frontend::source::SourceFile;
use crate::ir::*;
use crate::schedule::temporal::{offset_3d, Phase3d, Stencil3d};

/// The four quadrants of a tile: rows of parity `a`, columns of parity `b` (tile-relative).
const QUADS: [(usize, usize); 4] = [(0, 0), (0, 1), (1, 0), (1, 1)];

fn quad((a, b): (usize, usize)) -> String {
    format!("{a}{b}")
}

/// Where the kernel keeps quadrant `qd` of level `q`'s buffer `b` (of two), shifted by `off`
/// elements (a window of the quadrant's rows and columns).
fn buffer(form: Dialect, q: usize, b: usize, qd: (usize, usize), off: &str) -> String {
    let s = quad(qd);
    match form {
        Dialect::Gluon => {
            format!("_s{q}_{b}_{s}.index(GR * QX + {off})._reinterpret(_dt, [QY, QX], _WL)")
        }
        Dialect::Triton => {
            let index = (2 * q + b) * 4 + 2 * qd.0 + qd.1;
            format!("_buf + {index} * ((QY + 2 * GR) * QX) + _tile + {off}")
        }
    }
}

fn load_buffer(form: Dialect, q: usize, b: usize, qd: (usize, usize), off: &str) -> String {
    match form {
        Dialect::Gluon => format!("{}.load(_L)", buffer(form, q, b, qd, off)),
        Dialect::Triton => format!("tl.load({})", buffer(form, q, b, qd, off)),
    }
}

fn store_buffer(form: Dialect, q: usize, b: usize, qd: (usize, usize), v: &str) -> String {
    match form {
        Dialect::Gluon => format!("{}.store({v})", buffer(form, q, b, qd, "0")),
        Dialect::Triton => format!("tl.store({}, {v})", buffer(form, q, b, qd, "0")),
    }
}

/// Where the in-plane neighbour at `(dy, dx)` of quadrant `qd`'s element lies: the quadrant
/// that holds it and the shift in quadrant rows and columns (`(0, 0)`: the same thread's
/// register).
fn neighbour((a, b): (usize, usize), dy: i64, dx: i64) -> ((usize, usize), i64, i64) {
    let (y, x) = (a as i64 + dy, b as i64 + dx);
    (
        (y.rem_euclid(2) as usize, x.rem_euclid(2) as usize),
        y.div_euclid(2),
        x.div_euclid(2),
    )
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
    let helper = TileHelper::new(name, stencil, plain);
    let (gluon, twin) = blocked_pair(name, &sig, plain, (file, line), &|w, form| {
        body(w, form, stencil, &helper)
    });
    (format!("{}\n\n{gluon}", helper.function(stencil)), twin)
}

/// The Gluon kernel's tile as a function of its own (`{name}_gluon_tile`), called once in the
/// kernel's loop. Triton's front end visits a loop's body twice and a called function once
/// (it keeps the function it generated), so the plane loop, the bulk of the kernel, is
/// visited twice instead of four times: a cold first call's front end halves. Triton inlines
/// the call before any optimisation, so the compiled kernel is the same. The twin keeps the
/// tile inline: the interpreter does not compile it.
struct TileHelper {
    name: String,
    /// Everything the tile reads that the kernel defines, in the call's order.
    args: Vec<String>,
}

impl TileHelper {
    fn new(name: &str, st: &Stencil3d, plain: &KernelCode) -> Self {
        let mut args: Vec<String> = ["_src", "_dst", "_other"].map(String::from).to_vec();
        args.extend(blocked_scalars(plain).iter().map(Param::kernel_name));
        args.extend(
            [
                "_planes", "_rows", "_cols", "_chunks", "_t", "_from", "_to", "_last", "_qy",
                "_qx", "_nty", "_ntx", "_nxy",
            ]
            .map(String::from),
        );
        for q in 0..st.phases.len() {
            for b in 0..2 {
                args.extend(QUADS.map(|qd| format!("_s{q}_{b}_{}", quad(qd))));
            }
        }
        TileHelper {
            name: format!("{name}_gluon_tile"),
            args,
        }
    }

    fn call(&self) -> String {
        format!("{}({}, TY, TX, GR, HALO)", self.name, self.args.join(", "))
    }

    fn function(&self, st: &Stencil3d) -> String {
        let mut w = Writer::new(0);
        w.line("@gluon.jit");
        w.line(format!(
            "def {}({}, TY: gl.constexpr, TX: gl.constexpr, GR: gl.constexpr, HALO: gl.constexpr):",
            self.name,
            self.args.join(", ")
        ));
        w.indent();
        w.line("# One tile of one group (its kernel's loop calls it once; see gluon3d.rs).");
        for l in GLUON_CONSTANTS {
            w.line(l);
        }
        tile(&mut w, Dialect::Gluon, st);
        w.dedent();
        w.finish()
    }
}

/// The Gluon kernel's layouts and element type, in the kernel and in its tile function.
const GLUON_CONSTANTS: [&str; 8] = [
    "QY: gl.constexpr = TY // 2",
    "QX: gl.constexpr = TX // 2",
    "_NW: gl.constexpr = gl.num_warps()",
    // One element a thread along a row: shifted windows are not 16-byte aligned.
    "_L: gl.constexpr = gl.BlockedLayout([QY // _NW, 1], [1, 32], [_NW, 1], [1, 0])",
    "_SL: gl.constexpr = gl.SwizzledSharedLayout(1, 1, 1, [1, 0])",
    "_WL: gl.constexpr = gl.PaddedSharedLayout.with_identity_for([[QY * QX, 1]], [QY, QX], [1, 0])",
    "_PL: gl.constexpr = gl.PaddedSharedLayout.with_identity_for([[QY * QX // 2, 2 * GR * QX]], [QY, QX], [1, 0])",
    "_dt = _src.dtype.element_ty",
];

/// The kernel's body: the buffers, the tiles of every group, the grid barrier between groups.
fn body(w: &mut Writer, form: Dialect, st: &Stencil3d, helper: &TileHelper) {
    let ns = form.ns();
    let levels = st.phases.len();
    match form {
        Dialect::Gluon => {
            for l in GLUON_CONSTANTS {
                w.line(l);
            }
            for q in 0..levels {
                for b in 0..2 {
                    for qd in QUADS {
                        w.line(format!(
                            "_s{q}_{b}_{} = gl.allocate_shared_memory(_dt, [QY, QX], _PL)._reinterpret(_dt, [(QY + 2 * GR) * QX, 1, 1], _SL)",
                            quad(qd)
                        ));
                    }
                }
            }
            w.line("_qy = gl.arange(0, QY, layout=gl.SliceLayout(1, _L))[:, None]");
            w.line("_qx = gl.arange(0, QX, layout=gl.SliceLayout(0, _L))[None, :]");
        }
        Dialect::Triton => {
            for l in [
                "QY: tl.constexpr = TY // 2".to_string(),
                "QX: tl.constexpr = TX // 2".into(),
                "_dt = _src.dtype.element_ty".into(),
                "_qy = tl.arange(0, QY)[:, None]".into(),
                "_qx = tl.arange(0, QX)[None, :]".into(),
                format!(
                    "_buf = _scratch + tl.program_id(0).to(tl.int64) * ({} * (QY + 2 * GR) * QX)",
                    8 * levels
                ),
                "_tile = GR * QX + _qy * QX + _qx".into(),
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
        // This program's tiles a group: one at least, as the launchers start at most one
        // program a tile (a program without tiles would miss every barrier).
        format!("_per = {ns}.cdiv(_nty * _ntx * _chunks - _pid, _nprog)"),
    ] {
        w.line(l);
    }
    // Groups and this program's tiles in one loop, not two nested (see the module comment).
    w.line("for _w in range(0, (_g_hi - _g_lo) * _per):");
    w.indent();
    for l in [
        "_g = _g_lo + _w // _per",
        "_t = _pid + (_w % _per) * _nprog",
        "_from = _src",
        "_to = _dst",
        "if _g % 2 == 1:",
        "    _from = _dst",
        "    _to = _src",
        "_last = _g == _groups - 1",
    ] {
        w.line(l);
    }
    match form {
        Dialect::Gluon => w.line(helper.call()),
        Dialect::Triton => tile(w, form, st),
    }
    w.line("if GRID_SYNC:");
    w.indent();
    w.line("if _w % _per == _per - 1:  # this program's last tile of the group");
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
    w.dedent();
}

/// One tile of one group: its place, the prefetches, the steps in pairs.
fn tile(w: &mut Writer, form: Dialect, st: &Stencil3d) {
    let ns = form.ns();
    let levels = st.phases.len();
    for l in [
        "_tx = _t % _ntx",
        "_ty = (_t // _ntx) % _nty",
        "_y0 = _ty * (TY - 2 * HALO) - HALO",
        "_x0 = _tx * (TX - 2 * HALO) - HALO",
        // z-chunks of `_planes // _chunks` planes or one more: balanced over the programs.
        "_zs = (_t // (_ntx * _nty)) * _planes // _chunks",
        "_ze = (_t // (_ntx * _nty) + 1) * _planes // _chunks",
    ] {
        w.line(l);
    }
    w.line(format!("_klo = _zs - {levels}"));
    w.line(format!("_khi = _ze + {levels}"));
    w.line("_khi = _khi + (_khi - _klo) % 2");
    for p in 0..2 {
        w.line(format!("_ly{p} = 2 * _qy + {p}"));
        w.line(format!("_gy{p} = _y0 + _ly{p}"));
        w.line(format!("_lx{p} = 2 * _qx + {p}"));
        w.line(format!("_gx{p} = _x0 + _lx{p}"));
    }
    for (a, b) in QUADS {
        let s = quad((a, b));
        w.line(format!(
            "_inside_{s} = (_gy{a} >= 0) & (_gy{a} < _rows) & (_gx{b} >= 0) & (_gx{b} < _cols)"
        ));
        w.line(format!("_at_{s} = _gy{a} * _cols + _gx{b}"));
        w.line(format!(
            "_own_{s} = _inside_{s} & (_ly{a} >= HALO) & (_ly{a} < TY - HALO) & (_lx{b} >= HALO) & (_lx{b} < TX - HALO)"
        ));
        for (k, p) in st.phases.iter().enumerate() {
            if keep_mask(st, k) != k {
                continue;
            }
            let [_, (_, r_lo, r_hi), (_, c_lo, c_hi)] = &p.dims;
            w.line(format!(
                "_keep{k}_{s} = (_gy{a} < {}) | (_gy{a} >= {}) | (_gx{b} < {}) | (_gx{b} >= {})",
                bound(r_lo),
                bound(r_hi),
                bound(c_lo),
                bound(c_hi)
            ));
        }
    }
    let zeros = match form {
        Dialect::Gluon => "gl.zeros([QY, QX], _dt, _L)",
        Dialect::Triton => "tl.zeros([QY, QX], _dt)",
    };
    for qd in QUADS {
        let s = quad(qd);
        w.line(format!(
            "_pre_{s} = {ns}.load(_from + _klo * _nxy + _at_{s}, mask=_inside_{s} & (_klo >= 0) & (_klo < _planes), other=0.0)"
        ));
        w.line(format!(
            "_preb_{s} = {ns}.load(_other + (_klo - 1) * _nxy + _at_{s}, mask=_keep0_{s} & _inside_{s} & (_klo >= 1) & (_klo - 1 < _planes), other=0.0)"
        ));
        for q in 0..levels {
            w.line(format!("_m{q}_{s} = {zeros}"));
            w.line(format!("_c{q}_{s} = {zeros}"));
        }
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
    w.line(format!("_kk = {k}"));
    for qd in QUADS {
        let s = quad(qd);
        for l in [
            format!("_n0_{s} = _pre_{s}"),
            format!(
                "_pre_{s} = {ns}.load(_from + (_kk + 1) * _nxy + _at_{s}, mask=_inside_{s} & (_kk + 1 >= 0) & (_kk + 1 < _planes), other=0.0)"
            ),
            format!("_b1_{s} = _preb_{s}"),
            format!(
                "_preb_{s} = {ns}.load(_other + _kk * _nxy + _at_{s}, mask=_keep0_{s} & _inside_{s} & (_kk >= 0) & (_kk < _planes), other=0.0)"
            ),
        ] {
            w.line(l);
        }
    }
    for k in 0..levels {
        level(w, form, st, k, rd);
    }
    w.line(format!("_zo = _kk - {levels}"));
    w.line("if (_zo >= _zs) & (_zo < _ze):");
    for qd in QUADS {
        let s = quad(qd);
        w.line(format!(
            "    {ns}.store(_to + _zo * _nxy + _at_{s}, _n{levels}_{s}, mask=_own_{s})"
        ));
    }
    w.line("if _last:");
    w.line(format!("    _zb = _kk - {}", levels - 1));
    w.line("    if (_zb >= _zs) & (_zb < _ze):");
    for qd in QUADS {
        let s = quad(qd);
        w.line(format!(
            "        {ns}.store(_other + _zb * _nxy + _at_{s}, _n{}_{s}, mask=_own_{s})",
            levels - 1
        ));
    }
    for q in 0..levels {
        for qd in QUADS {
            w.line(store_buffer(
                form,
                q,
                wr,
                qd,
                &format!("_n{q}_{}", quad(qd)),
            ));
        }
    }
    w.line(form.barrier());
    for q in 0..levels {
        for qd in QUADS {
            let s = quad(qd);
            w.line(format!("_m{q}_{s} = _c{q}_{s}"));
            w.line(format!("_c{q}_{s} = _n{q}_{s}"));
        }
    }
}

/// Level `k + 1` (phase `k`) at plane `_kk - k - 1`, each quadrant: the stencil where the
/// plane is inside the phase's box and past the chunk's unneeded start, the target's fixed
/// value elsewhere. An in-plane neighbour in another quadrant at the same quadrant index is
/// that quadrant's register; only the others are windows of a shared buffer.
fn level(w: &mut Writer, form: Dialect, st: &Stencil3d, k: usize, rd: usize) {
    let ns = form.ns();
    let (p, levels) = (&st.phases[k], st.phases.len());
    let (lvl, below) = (k + 1, k);
    let vars = [
        p.dims[0].0.as_str(),
        p.dims[1].0.as_str(),
        p.dims[2].0.as_str(),
    ];
    let (z_lo, z_hi) = (bound(&p.dims[0].1), bound(&p.dims[0].2));
    w.line(format!("_z = _kk - {lvl}"));
    w.line(format!(
        "if (_z >= _zs - {levels} + {lvl}) & (_z >= {z_lo}) & (_z < {z_hi}):"
    ));
    w.indent();
    for qd in QUADS {
        let s = quad(qd);
        let value = print(&p.value, &mut |x| match &x.kind {
            ExprKind::Subscript { indices, .. } => {
                let [dz, dy, dx] = offset_3d(indices, vars)
                    .expect("schedule::temporal takes `i + a, j + b, k + c`");
                Some(match (dz, neighbour(qd, dy, dx)) {
                    (-1, _) => format!("_m{below}_{s}"),
                    (1, _) => format!("_n{below}_{s}"),
                    (_, (other, 0, 0)) => format!("_c{below}_{}", quad(other)),
                    (_, (other, di, dj)) => {
                        load_buffer(form, below, rd, other, &format!("({di}) * QX + ({dj})"))
                    }
                })
            }
            _ => None,
        });
        // The target's value two levels down (its plane is still in registers), or (level
        // 1) the other array's, prefetched.
        let fixed = if lvl >= 2 {
            format!("_m{}_{s}", lvl - 2)
        } else {
            format!("_b1_{s}")
        };
        // Rounded to the array's dtype as the plain kernel's store rounds it.
        w.line(format!("_v_{s} = ({value}).to(_dt)"));
        w.line(format!(
            "_v_{s} = {ns}.where(_keep{}_{s}, {fixed}, _v_{s})",
            keep_mask(st, k)
        ));
    }
    w.dedent();
    w.line("else:");
    w.indent();
    for qd in QUADS {
        let s = quad(qd);
        let fixed_plane = if lvl >= 2 {
            format!("_m{}_{s}", lvl - 2)
        } else {
            format!(
                "{ns}.load(_other + _z * _nxy + _at_{s}, mask=_inside_{s} & (_z >= 0) & (_z < _planes) & ((_z < {z_lo}) | (_z >= {z_hi})), other=0.0)"
            )
        };
        w.line(format!("_v_{s} = {fixed_plane}"));
    }
    w.dedent();
    for qd in QUADS {
        let s = quad(qd);
        w.line(format!("_n{lvl}_{s} = _v_{s}"));
    }
}

/// The phase whose boundary mask phase `k` uses: the first with the same in-plane box (one
/// mask a quadrant fewer where the phases' boxes agree, as Heat-3D's do: registers are what
/// bound these kernels' programs an SM).
fn keep_mask(st: &Stencil3d, k: usize) -> usize {
    fn plane_box(p: &Phase3d) -> [&Expr; 4] {
        [&p.dims[1].1, &p.dims[1].2, &p.dims[2].1, &p.dims[2].2]
    }
    (0..k)
        .find(|&j| plane_box(&st.phases[j]) == plane_box(&st.phases[k]))
        .unwrap_or(k)
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
    fn an_in_plane_neighbour_is_a_register_of_another_quadrant_or_a_shifted_window() {
        // Row parity 0, column parity 0: right and down are the same thread's, left and up a
        // window one quadrant column / row back.
        assert_eq!(neighbour((0, 0), 0, 1), ((0, 1), 0, 0));
        assert_eq!(neighbour((0, 0), 1, 0), ((1, 0), 0, 0));
        assert_eq!(neighbour((0, 0), 0, -1), ((0, 1), 0, -1));
        assert_eq!(neighbour((0, 0), -1, 0), ((1, 0), -1, 0));
        assert_eq!(neighbour((1, 1), 1, 1), ((0, 0), 1, 1));
        assert_eq!(neighbour((1, 0), -1, 1), ((0, 1), 0, 0));
        assert_eq!(neighbour((0, 1), 0, 0), ((0, 1), 0, 0));
    }

    #[test]
    fn the_gluon_tile_is_a_function_called_once_and_the_twin_keeps_it_inline() {
        use crate::codegen::test_support::{function, generated};
        // upwind: one-sided differences with a float scalar, which the tile function takes too.
        let module = generated(include_str!("../../../samples/stencils_3d.py"));
        let tile = function(&module, "_upwind_persistent0_blocked_gluon_tile");
        let kernel = function(&module, "_upwind_persistent0_blocked_gluon");
        let twin = function(&module, "_upwind_persistent0_blocked_twin");
        assert!(tile.contains(", L, M, N, c, _planes,"), "{tile}");
        assert!(tile.contains("for _k2 in range(_klo, _khi, 2):"), "{tile}");
        assert!(!kernel.contains("for _k2 in"), "{kernel}");
        assert_eq!(
            kernel
                .matches("_upwind_persistent0_blocked_gluon_tile(")
                .count(),
            1
        );
        assert!(twin.contains("for _k2 in range(_klo, _khi, 2):"), "{twin}");
    }

    #[test]
    fn windows_name_their_level_buffer_and_quadrant() {
        let w = load_buffer(Dialect::Gluon, 1, 0, (1, 0), "(0) * QX + (-1)");
        assert_eq!(
            w,
            "_s1_0_10.index(GR * QX + (0) * QX + (-1))._reinterpret(_dt, [QY, QX], _WL).load(_L)"
        );
        let t = load_buffer(Dialect::Triton, 1, 0, (1, 0), "(0) * QX + (-1)");
        assert_eq!(
            t,
            "tl.load(_buf + 10 * ((QY + 2 * GR) * QX) + _tile + (0) * QX + (-1))"
        );
    }
}
