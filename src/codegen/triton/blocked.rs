//! The temporally blocked form of a 1-D stencil loop (`schedule::temporal`): one kernel whose
//! programs each own chunks of `_chunk` elements of the arrays' index space (chunk `_c` goes to
//! program `_c % programs`, so the GPU needs not hold a program a chunk). Per group of `G`
//! iterations a program loads each of its chunks and a halo of `HALO` elements on each side
//! from every array into the chunk's scratch, runs the group's phases there (each phase
//! computes wherever its inputs are still valid, one radius less per phase; a block barrier
//! after each phase, and one between loads and stores when a phase reads its own target), and
//! after a grid barrier (no one overwrites what another program still loads) writes its chunks
//! of every written array back, then another grid barrier. Under the interpreter, which runs
//! programs one after another, each group is two launches (`COMPUTE` then `WRITE`), whose
//! boundary orders them the same way.
//!
//! Two spellings of that plan (`Dialect`): a Gluon kernel for the GPU and a Triton twin for the
//! interpreter. In the twin a chunk's arrays live in its scratch, so every phase's neighbour
//! reads go through the L2 (a store invalidates the L1's line): wave_decay at 2^20 points was
//! bound by the L2's bandwidth, 9.8 ms. In the Gluon kernel each array's chunk lives in registers,
//! one element a thread at a time along the chunk, and in a shared buffer that only serves the
//! neighbours' reads: a phase computes from its registers (offset 0) and shared windows (offset
//! `c`: the buffer viewed from element `R + c`, `R` guard elements each side), keeps its result
//! where it is valid, then stores the target's registers to its buffer between barriers; the
//! chunk's written arrays reach the scratch once, after the group, for the same write stage
//! (2.0 ms, bench/blocked1d_probe_h100.log). Windows start at any element, so as in `gluon2d`
//! they are views in a padded identity layout, which Triton reads element by element.
//!
//! The loop's scalar statements (`dt = dt * decay`) are registers, as in the plain persistent
//! kernel (`loop_state`): every program steps them alike, in the loop's order, once per
//! iteration it runs, and the last program stores them for the launcher. Under the
//! interpreter each launch starts from the values the last one stored.

use super::dialect::Dialect;
use super::loop_state::{LoopState, PhaseNames};
use super::stencil_print::print;
use crate::codegen::kernel_code::{signature, KernelCode, Param};
use crate::codegen::writer::Writer;
use crate::frontend::source::SourceFile;
use crate::ir::*;
use crate::schedule::host_steps::HostSteps;
use crate::schedule::temporal::{offset, Stencil};
use std::collections::HashSet;

/// The blocked kernels' texts: the Triton twin (`name`) and the Gluon kernel (`{name}_gluon`),
/// with one signature. `plain` is the loop's persistent kernel, whose arrays, scalars and
/// registers they take (in the same order; strides and shapes aside); `steps` the loop's
/// statements besides its phases (scalar ones only: `schedule` checks).
pub fn blocked_kernels(
    name: &str,
    stencil: &Stencil,
    plain: &KernelCode,
    steps: &HostSteps,
    file: &SourceFile,
    line: usize,
) -> (String, String) {
    let print =
        |d: Dialect, kernel: &str| blocked_kernel(d, kernel, stencil, plain, steps, file, line);
    (
        print(Dialect::Triton, name),
        print(Dialect::Gluon, &format!("{name}_gluon")),
    )
}

/// One spelling of the blocked kernel.
fn blocked_kernel(
    d: Dialect,
    name: &str,
    stencil: &Stencil,
    plain: &KernelCode,
    steps: &HostSteps,
    file: &SourceFile,
    line: usize,
) -> String {
    let arrays: Vec<&str> = plain
        .params
        .iter()
        .filter_map(|p| match p {
            Param::Array(a) => Some(a.as_str()),
            _ => None,
        })
        .collect();
    let scalars: Vec<Param> = plain
        .params
        .iter()
        .filter(|p| matches!(p, Param::IntScalar(_) | Param::FloatScalar(_)))
        .cloned()
        .collect();
    let written: Vec<&str> = arrays
        .iter()
        .copied()
        .filter(|a| stencil.phases.iter().any(|p| p.target == *a))
        .collect();
    let mut used: HashSet<String> = plain.params.iter().map(|p| p.kernel_name()).collect();
    used.extend(steps.carried.iter().map(|c| c.name.clone()));
    let state = LoopState::new(steps, false, None, &mut |base| fresh_name(base, &mut used));
    let sig = blocked_signature(d, &arrays, &scalars, &state);
    let ns = d.ns();
    let mut w = Writer::new(0);
    w.line(format!(
        "@{}.jit(do_not_specialize=[\"_group_lo\", \"_group_hi\"])",
        d.decorator()
    ));
    w.line(format!("def {name}({}):", sig.join(", ")));
    w.indent();
    let memory = match d {
        Dialect::Triton => "a global scratch",
        Dialect::Gluon => "registers and shared memory",
    };
    w.line(format!(
        "# {}:{line}: {}  (temporally blocked: G iterations between grid barriers, chunks in {memory})",
        file.name,
        file.line_text(line).trim()
    ));
    if d == Dialect::Gluon {
        shared_buffers(&mut w, &arrays, stencil.radius);
    }
    let x = match d {
        Dialect::Triton => "tl.arange(0, W)",
        Dialect::Gluon => "gl.arange(0, W, layout=_L)",
    };
    for l in [
        format!("_pid = {ns}.program_id(0)"),
        format!("_nprog = {ns}.num_programs(0)"),
        format!("_x = {x}"),
        format!("_arrived = {}", d.full("0", "tl.int64")),
    ] {
        w.line(l);
    }
    state.start(&mut w, d);
    // Steps read no loop variable or iteration here (`schedule::blockable_steps`).
    let at = PhaseNames {
        iteration: "_step",
        pid: "_pid",
        loop_var: "",
        dialect: d,
    };
    // A program may own several chunks: each starts the group from the registers' values at
    // its start, and the registers then step once for the group (a program without a chunk
    // too, so the last program stores the right values).
    let starts: Vec<(String, String)> = state
        .carried_names()
        .map(|n| (n.clone(), fresh_name(&format!("{n}_at_group"), &mut used)))
        .collect();
    w.line("for _group in range(_group_lo, _group_hi):");
    w.indent();
    w.line(format!("_count = {ns}.minimum(G, _steps - _group * G)"));
    w.line("if COMPUTE:");
    w.indent();
    for (n, at_group) in &starts {
        w.line(format!("{at_group} = {n}"));
    }
    w.line("for _c in range(_pid, _chunks, _nprog):");
    w.indent();
    for (n, at_group) in &starts {
        w.line(format!("{n} = {at_group}"));
    }
    run_chunk(&mut w, d, stencil, &state, &arrays, &written, &at);
    w.dedent();
    if !starts.is_empty() {
        for (n, at_group) in &starts {
            w.line(format!("{n} = {at_group}"));
        }
        w.line("for _step in range(_count):");
        w.indent();
        for phase in 0..=stencil.phases.len() {
            state.steps_before(&mut w, phase, &at);
        }
        w.dedent();
    }
    // Every program has loaded before any writes back.
    grid_sync(&mut w, d);
    w.dedent();
    w.line("if WRITE:");
    w.indent();
    w.line("for _c in range(_pid, _chunks, _nprog):");
    w.indent();
    chunk_names(&mut w, d, &arrays);
    for a in &written {
        w.line(format!(
            "{ns}.store({a} + _gi, {ns}.load(_s_{a} + _x), mask=_owned)"
        ));
    }
    w.dedent();
    grid_sync(&mut w, d);
    w.dedent();
    w.dedent();
    if !state.is_empty() {
        state.store(&mut w, "_pid", "_nprog");
    }
    w.dedent();
    w.finish()
}

/// The Gluon kernel's layouts and one shared buffer an array: `R` guard elements before the
/// chunk and at least `R` after it (the padding of a power-of-two allocation only sizes them;
/// the buffer is used through a flat view whose windows start at `R + c`).
fn shared_buffers(w: &mut Writer, arrays: &[&str], radius: i64) {
    let pad = (2 * radius.max(1) as u64).next_power_of_two();
    for l in [
        "_NW: gl.constexpr = gl.num_warps()".to_string(),
        "_L: gl.constexpr = gl.BlockedLayout([1], [32], [_NW], [0])".to_string(),
        "_SL: gl.constexpr = gl.SwizzledSharedLayout(1, 1, 1, [0])".to_string(),
        // A window: element accesses only (no vector or matrix access on an unaligned base).
        "_WL: gl.constexpr = gl.PaddedSharedLayout.with_identity_for([[W, 1]], [W], [0])"
            .to_string(),
        format!("_PL: gl.constexpr = gl.PaddedSharedLayout.with_identity_for([[W // 2, {pad}]], [W], [0])"),
    ] {
        w.line(l);
    }
    for a in arrays {
        w.line(format!("_dt_{a} = {a}.dtype.element_ty"));
        w.line(format!(
            "_sm_{a} = gl.allocate_shared_memory(_dt_{a}, [W], _PL)._reinterpret(_dt_{a}, [W + {pad}, 1], _SL)"
        ));
    }
}

/// Array `a`'s chunk in its shared buffer, shifted by `c` elements (a Gluon view).
fn window(a: &str, radius: i64, c: i64) -> String {
    format!(
        "_sm_{a}.index({})._reinterpret(_dt_{a}, [W], _WL)",
        radius + c
    )
}

/// The parameters: arrays, their scratches, scalars, the launch's sizes and group range, the
/// registers (float ones fp64; integer ones are widened by `state.start`) and their buffer,
/// then the constexprs.
fn blocked_signature(
    d: Dialect,
    arrays: &[&str],
    scalars: &[Param],
    state: &LoopState,
) -> Vec<String> {
    let mut sig: Vec<String> = arrays.iter().map(|a| a.to_string()).collect();
    sig.extend(arrays.iter().map(|a| format!("_scratch_{a}")));
    sig.extend(signature(scalars));
    sig.extend(
        [
            "_n",
            "_steps",
            "_chunk",
            "_chunks",
            "_group_lo",
            "_group_hi",
            "_sync",
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    if !state.is_empty() {
        let floats: HashSet<&String> = state.float_registers().collect();
        sig.extend(state.registers.iter().map(|r| {
            if floats.contains(&r.name) {
                format!("{}: \"fp64\"", r.name)
            } else {
                r.name.clone()
            }
        }));
        sig.push(state.out.clone());
    }
    sig.extend(
        ["G", "W", "HALO", "COMPUTE", "WRITE", "GRID_SYNC"]
            .iter()
            .map(|c| format!("{c}: {}.constexpr", d.ns())),
    );
    sig
}

/// One chunk's group: its arrays loaded, then `_count` iterations of the phases (and the steps
/// between them); in Gluon, the written arrays then go to the chunk's scratch.
fn run_chunk(
    w: &mut Writer,
    d: Dialect,
    stencil: &Stencil,
    state: &LoopState,
    arrays: &[&str],
    written: &[&str],
    at: &PhaseNames,
) {
    chunk_names(w, d, arrays);
    let r = stencil.radius;
    for a in arrays {
        let load = format!("{}.load({a} + _gi, mask=_inside, other=0)", d.ns());
        match d {
            Dialect::Triton => w.line(format!("tl.store(_s_{a} + _x, {load})")),
            Dialect::Gluon => {
                w.line(format!("_r_{a} = {load}"));
                w.line(format!("{}.store(_r_{a})", window(a, r, 0)));
            }
        }
    }
    w.line(d.barrier());
    w.line("for _step in range(_count):");
    w.indent();
    for (phase, p) in stencil.phases.iter().enumerate() {
        state.steps_before(w, phase, at);
        let lo = bound(&p.lo);
        let hi = bound(&p.hi);
        w.line(format!(
            "_ok = _inside & (_x >= {r}) & (_x < W - {r}) & (_gi >= {lo}) & (_gi < {hi})"
        ));
        w.line(format!("_v = {}", value(d, &p.value, &p.index, r)));
        let t = &p.target;
        if d == Dialect::Gluon {
            // Where a phase's value is not valid (or not written), the chunk keeps its own.
            w.line(format!("_r_{t} = gl.where(_ok, _v, _r_{t}).to(_dt_{t})"));
        }
        if p.reads_target {
            w.line(d.barrier());
        }
        w.line(match d {
            Dialect::Triton => format!("tl.store(_s_{t} + _x, _v, mask=_ok)"),
            Dialect::Gluon => format!("{}.store(_r_{t})", window(t, r, 0)),
        });
        w.line(d.barrier());
    }
    state.steps_before(w, stencil.phases.len(), at);
    w.dedent();
    if d == Dialect::Gluon {
        for a in written {
            w.line(format!("gl.store(_s_{a} + _x, _r_{a})"));
        }
    }
}

/// Where chunk `_c` lies: its elements, which of them exist and are its own, its scratch.
fn chunk_names(w: &mut Writer, d: Dialect, arrays: &[&str]) {
    for l in [
        "_lo = _c * _chunk".to_string(),
        "_gi = _lo - HALO + _x".to_string(),
        "_inside = (_gi >= 0) & (_gi < _n)".to_string(),
        format!(
            "_owned = (_gi >= _lo) & (_gi < {}.minimum(_lo + _chunk, _n))",
            d.ns()
        ),
    ] {
        w.line(l);
    }
    for a in arrays {
        w.line(format!("_s_{a} = _scratch_{a} + _c * W"));
    }
}

/// A grid barrier on the GPU; a block barrier under the interpreter (one launch per stage).
/// Gluon spells `_appyc_grid_barrier` out (it cannot call a Triton function).
fn grid_sync(w: &mut Writer, d: Dialect) {
    w.line("if GRID_SYNC:");
    w.indent();
    w.line("_arrived += _nprog");
    match d {
        Dialect::Triton => w.line("_appyc_grid_barrier(_sync, _arrived)"),
        Dialect::Gluon => {
            for l in [
                "gl.thread_barrier()",
                "gl.atomic_add(_sync, 1, sem=\"release\")",
                "while gl.atomic_add(_sync, 0, sem=\"acquire\") < _arrived:",
                "    pass",
                "gl.thread_barrier()",
            ] {
                w.line(l);
            }
        }
    }
    w.dedent();
    w.line("else:");
    w.indent();
    w.line(d.barrier());
    w.dedent();
}

/// A region bound (host names, integers, `A.shape[0]`, which is `_n`).
fn bound(e: &Expr) -> String {
    print(e, &mut |x| match &x.kind {
        ExprKind::Shape { .. } => Some("_n".to_string()),
        _ => None,
    })
}

/// A phase's value, `i` the global index: `Y[i + c]` from the scratch (Triton), or from the
/// registers (`c == 0`) and a shared window (Gluon).
fn value(d: Dialect, e: &Expr, index: &str, radius: i64) -> String {
    print(e, &mut |x| match &x.kind {
        ExprKind::Name(n) if n == index => Some("_gi".to_string()),
        ExprKind::Subscript { array, indices } => Some(match d {
            Dialect::Triton => {
                let [Index::At(at)] = indices.as_slice() else {
                    unreachable!("schedule::temporal takes one index");
                };
                let shift = print(at, &mut |y| match &y.kind {
                    ExprKind::Name(n) if n == index => Some("_x".to_string()),
                    _ => None,
                });
                format!("tl.load(_s_{array} + {shift}, mask=_ok, other=0)")
            }
            Dialect::Gluon => match offset(indices, index) {
                Some(0) => format!("_r_{array}"),
                Some(c) => format!("{}.load(_L)", window(array, radius, c)),
                None => unreachable!("schedule::temporal takes `i + c`"),
            },
        }),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontend::source::Span;

    fn at(array: &str, c: i64) -> Expr {
        let i = Expr::name("i", Span::DUMMY);
        let index = match c {
            0 => i,
            c if c > 0 => Expr::binary(BinOp::Add, i, Expr::int(c, Span::DUMMY)),
            c => Expr::binary(BinOp::Sub, i, Expr::int(-c, Span::DUMMY)),
        };
        Expr::new(
            ExprKind::Subscript {
                array: array.into(),
                indices: vec![Index::At(index)],
            },
            Span::DUMMY,
        )
    }

    #[test]
    fn gluon_reads_the_element_from_registers_and_neighbours_from_shifted_windows() {
        // u[i - 1] - 2 u[i] + u[i + 2], radius 2: windows start at R + c.
        let e = Expr::binary(
            BinOp::Add,
            Expr::binary(BinOp::Sub, at("u", -1), at("u", 0)),
            at("u", 2),
        );
        let gluon = value(Dialect::Gluon, &e, "i", 2);
        assert!(
            gluon.contains("_sm_u.index(1)._reinterpret(_dt_u, [W], _WL).load(_L)"),
            "{gluon}"
        );
        assert!(
            gluon.contains("_sm_u.index(4)._reinterpret(_dt_u, [W], _WL).load(_L)"),
            "{gluon}"
        );
        assert!(gluon.contains("- _r_u"), "{gluon}");
        let twin = value(Dialect::Triton, &e, "i", 2);
        assert!(
            twin.contains("tl.load(_s_u + (_x - 1), mask=_ok, other=0)"),
            "{twin}"
        );
        assert!(
            twin.contains("tl.load(_s_u + _x, mask=_ok, other=0)"),
            "{twin}"
        );
    }

    #[test]
    fn the_shared_buffers_leave_room_for_both_guards() {
        let mut w = Writer::new(0);
        shared_buffers(&mut w, &["u"], 3);
        let text = w.finish();
        // R = 3 guard elements before the chunk and after it: padding 8, the next power of two.
        assert!(
            text.contains("with_identity_for([[W // 2, 8]], [W], [0])"),
            "{text}"
        );
        assert!(
            text.contains("._reinterpret(_dt_u, [W + 8, 1], _SL)"),
            "{text}"
        );
    }
}
