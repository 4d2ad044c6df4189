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
//! The loop's scalar statements (`dt = dt * decay`) are registers, as in the plain persistent
//! kernel (`loop_state`): every program steps them alike, in the loop's order, once per
//! iteration it runs, and the last program stores them for the launcher. Under the
//! interpreter each launch starts from the values the last one stored.

use super::loop_state::{LoopState, PhaseNames};
use super::stencil_print::print;
use crate::codegen::kernel_code::{signature, KernelCode, Param};
use crate::codegen::writer::Writer;
use crate::frontend::source::SourceFile;
use crate::ir::*;
use crate::schedule::host_steps::HostSteps;
use crate::schedule::temporal::Stencil;
use std::collections::HashSet;

/// The kernel's text; `plain` is the loop's persistent kernel, whose arrays, scalars and
/// registers it takes (in the same order; strides and shapes aside); `steps` the loop's
/// statements besides its phases (scalar ones only: `schedule` checks).
pub fn blocked_kernel(
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
    let sig = blocked_signature(&arrays, &scalars, &state);
    let mut w = Writer::new(0);
    w.line("@triton.jit(do_not_specialize=[\"_group_lo\", \"_group_hi\"])");
    w.line(format!("def {name}({}):", sig.join(", ")));
    w.indent();
    w.line(format!(
        "# {}:{line}: {}  (temporally blocked: G iterations between grid barriers)",
        file.name,
        file.line_text(line).trim()
    ));
    for l in [
        "_pid = tl.program_id(0)",
        "_nprog = tl.num_programs(0)",
        "_x = tl.arange(0, W)",
        "_arrived = tl.full((), 0, tl.int64)",
    ] {
        w.line(l);
    }
    state.start(&mut w);
    // Steps read no loop variable or iteration here (`schedule::blockable_steps`).
    let at = PhaseNames {
        iteration: "_step",
        pid: "_pid",
        loop_var: "",
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
    w.line("_count = tl.minimum(G, _steps - _group * G)");
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
    run_chunk(&mut w, stencil, &state, &arrays, &at);
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
    grid_sync(&mut w);
    w.dedent();
    w.line("if WRITE:");
    w.indent();
    w.line("for _c in range(_pid, _chunks, _nprog):");
    w.indent();
    chunk_names(&mut w, &arrays);
    for a in &written {
        w.line(format!(
            "tl.store({a} + _gi, tl.load(_s_{a} + _x), mask=_owned)"
        ));
    }
    w.dedent();
    grid_sync(&mut w);
    w.dedent();
    w.dedent();
    if !state.is_empty() {
        state.store(&mut w, "_pid", "_nprog");
    }
    w.dedent();
    w.finish()
}

/// The parameters: arrays, their scratches, scalars, the launch's sizes and group range, the
/// registers (float ones fp64; integer ones are widened by `state.start`) and their buffer,
/// then the constexprs.
fn blocked_signature(arrays: &[&str], scalars: &[Param], state: &LoopState) -> Vec<String> {
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
            .map(|c| format!("{c}: tl.constexpr")),
    );
    sig
}

/// One chunk's group: its arrays loaded into its scratch, then `_count` iterations of the
/// phases (and the steps between them) there.
fn run_chunk(
    w: &mut Writer,
    stencil: &Stencil,
    state: &LoopState,
    arrays: &[&str],
    at: &PhaseNames,
) {
    chunk_names(w, arrays);
    for a in arrays {
        w.line(format!(
            "tl.store(_s_{a} + _x, tl.load({a} + _gi, mask=_inside, other=0))"
        ));
    }
    w.line("tl.debug_barrier()");
    w.line("for _step in range(_count):");
    w.indent();
    let r = stencil.radius;
    for (phase, p) in stencil.phases.iter().enumerate() {
        state.steps_before(w, phase, at);
        let lo = bound(&p.lo);
        let hi = bound(&p.hi);
        w.line(format!(
            "_ok = _inside & (_x >= {r}) & (_x < W - {r}) & (_gi >= {lo}) & (_gi < {hi})"
        ));
        w.line(format!("_v = {}", value(&p.value, &p.index)));
        if p.reads_target {
            w.line("tl.debug_barrier()");
        }
        w.line(format!("tl.store(_s_{} + _x, _v, mask=_ok)", p.target));
        w.line("tl.debug_barrier()");
    }
    state.steps_before(w, stencil.phases.len(), at);
    w.dedent();
}

/// Where chunk `_c` lies: its elements, which of them exist and are its own, its scratch.
fn chunk_names(w: &mut Writer, arrays: &[&str]) {
    for l in [
        "_lo = _c * _chunk",
        "_gi = _lo - HALO + _x",
        "_inside = (_gi >= 0) & (_gi < _n)",
        "_owned = (_gi >= _lo) & (_gi < tl.minimum(_lo + _chunk, _n))",
    ] {
        w.line(l);
    }
    for a in arrays {
        w.line(format!("_s_{a} = _scratch_{a} + _c * W"));
    }
}

/// A grid barrier on the GPU; a block barrier under the interpreter (one launch per stage).
fn grid_sync(w: &mut Writer) {
    w.line("if GRID_SYNC:");
    w.indent();
    w.line("_arrived += _nprog");
    w.line("_appyc_grid_barrier(_sync, _arrived)");
    w.dedent();
    w.line("else:");
    w.indent();
    w.line("tl.debug_barrier()");
    w.dedent();
}

/// A region bound (host names, integers, `A.shape[0]`, which is `_n`).
fn bound(e: &Expr) -> String {
    print(e, &mut |x| match &x.kind {
        ExprKind::Shape { .. } => Some("_n".to_string()),
        _ => None,
    })
}

/// A phase's value: `Y[i + c]` from the scratch, `i` the global index.
fn value(e: &Expr, index: &str) -> String {
    print(e, &mut |x| match &x.kind {
        ExprKind::Name(n) if n == index => Some("_gi".to_string()),
        ExprKind::Subscript { array, indices } => {
            let [Index::At(at)] = indices.as_slice() else {
                unreachable!("schedule::temporal takes one index");
            };
            let shift = print(at, &mut |y| match &y.kind {
                ExprKind::Name(n) if n == index => Some("_x".to_string()),
                _ => None,
            });
            Some(format!("tl.load(_s_{array} + {shift}, mask=_ok, other=0)"))
        }
        _ => None,
    })
}
