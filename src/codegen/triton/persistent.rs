//! A host time loop as one persistent kernel (`persistent_kernel`): the regions of every
//! iteration run as the phases of one launch, each region a grid-stride loop over its virtual
//! programs.
//!
//! Design decisions:
//! - Phases are numbered `iteration * R + region` and a launch runs a range of them: on the GPU
//!   one cooperative launch runs all, with grid barriers only after phases that conflict with
//!   the next; under the interpreter each phase is a launch of its own.
//! - The kernel takes the union of its regions' parameters; the loop variable is its own.
//! - Loads stay plain (L1-cached) across phases (see `persistent_kernel` for why that is safe).
//! - The names the kernel makes up are fresh against the names of all its regions.
//! - A kernel that communicates (nvshmem phases) keeps a `live` register: its waits and grid
//!   barriers are bounded (templates/nvshmem.py.jinja) and clear it when they give up, and the
//!   phase loop ends with it, so no program waits on a barrier that one which left will never
//!   reach. Its barriers sit in their phase's block, to record that phase's source line.

use super::comm::CommSite;
use super::cx::Cx;
use super::dialect::Dialect;
use super::loop_state::{LoopState, PhaseNames};
use super::strips::{ONE_STRIP_PARAM, ROW_BLOCK_PARAM};
use super::virtual_grid::{program_counts, program_ids};
use crate::codegen::analysis::{analyse, push_unique, Analysis};
use crate::codegen::kernel_code::{signature, KernelCode, Param};
use crate::codegen::writer::Writer;
use crate::diag::Result;
use crate::frontend::source::SourceFile;
use crate::ir::*;
use crate::schedule::host_steps::HostSteps;
use std::collections::HashSet;

/// A host time loop run as one persistent kernel, as the printer needs it (decided by
/// `schedule`).
pub struct PersistentLoop<'k> {
    pub name: String,
    /// The host loop: `for var in range(start, stop, step)`.
    pub var: String,
    pub range: &'k Range,
    /// The loop's line, for the comment at the kernel's head.
    pub line: usize,
    /// The regions of one iteration, in order: phase `r` of an iteration runs `regions[r]`.
    pub regions: Vec<&'k Kernel>,
    /// `barrier_after[r]`: a grid-wide barrier follows phase `r`.
    pub barrier_after: Vec<bool>,
    /// The loop's host statements, computed by every program (`loop_state`).
    pub steps: &'k HostSteps,
    /// A while loop's test (`var` is then empty), read before every iteration. A break is
    /// one of the steps, read in its place.
    pub test: Option<&'k Expr>,
    /// The loop variable is a register, stored at the end for the launcher: a loop that breaks
    /// and whose variable the function reads after it (without a break the launcher knows the
    /// last value).
    pub var_register: bool,
}

/// The persistent kernel of a host time loop. Phases are numbered `iteration * R + region`; a
/// launch runs phases `[phase_lo, phase_hi)`, each region as a grid-stride loop over its virtual
/// programs. On the GPU one cooperative launch runs every phase, with grid barriers between
/// dependent phases (`GRID_SYNC`); under Triton's interpreter, which runs programs one after
/// another (a spinning barrier would never return), the launcher makes one launch per phase.
///
/// Loads stay plain (L1-cached) although other SMs wrote the data in an earlier phase: the
/// barrier's acquire at GPU scope, followed by the CTA barrier, orders every later load of the
/// program after those writes (PTX memory model), and the hardware honours it by invalidating
/// the SM's L1. `.cg` loads would be correct too, but cost 6 % on a 2-D stencil (H100).
pub fn persistent_kernel(p: &PersistentLoop, file: &SourceFile) -> Result<KernelCode> {
    let mut used: HashSet<String> = p.regions.iter().flat_map(|k| k.names()).collect();
    used.extend(p.steps.carried.iter().map(|c| c.name.clone()));
    let exits = p.test.is_some() || p.steps.exit().is_some();
    let var = p.var_register.then_some(p.var.as_str());
    let state = LoopState::new(p.steps, exits, var, &mut |base| fresh_name(base, &mut used));
    let regions: Vec<Kernel> = p.regions.iter().map(|k| state.renamed(k)).collect();
    let analyses: Vec<Analysis> = regions.iter().map(analyse).collect();
    let mut params = merged_params(p, &analyses);
    state.params(&mut params);
    sort_params(&mut params);
    let (mut host_args, mut written) = host_args_and_written(p, &analyses);
    state.host_args(&mut host_args, &mut written);
    let mut n = Names::new(p, &params, &used);
    // The body first: whether the signature takes `ONE_STRIP` depends on its strip loops.
    let mut w = Writer::new(1);
    let mut one_strip: Vec<(Expr, Expr, Width)> = vec![];
    let mut row_block: Vec<Option<(Expr, Expr)>> = vec![];
    let nregions = p.regions.len();
    phase_loop(&mut w, p, &n, &state, file);
    for (r, (k, analysis)) in regions.iter().zip(&analyses).enumerate() {
        if nregions > 1 {
            w.line(format!("if {} == {r}:", n.region));
            w.indent();
        }
        let guarded = state.steps_then_guard(&mut w, r, &n.at(p));
        state.pick_arrays(&mut w, k, &params, &n.iteration);
        let mut cx = Cx::new(file, k, analysis);
        cx.float_params = params
            .iter()
            .filter_map(|q| match q {
                Param::FloatScalar(f) => Some(f.clone()),
                _ => None,
            })
            .chain(state.float_registers().cloned())
            .collect();
        // The host loop's variable and the registers are the kernel's own, different in every
        // iteration.
        cx.host_ints.remove(&p.var);
        for c in state.carried_names() {
            cx.host_ints.remove(c);
        }
        // A kernel that communicates runs under a register cap, which decides how ptxas orders a
        // sweep's loads; two waves fix the order (docs/performance.md 54).
        cx.load_waves = n.live.is_some();
        region_phase(&mut w, &mut cx, k, r, &mut n, file)?;
        if guarded {
            w.dedent();
        }
        if n.live.is_some() && p.barrier_after[r] {
            bounded_barrier(&mut w, &n, file.line_of(k.span.start as usize));
        }
        // The launcher computes these from its own arguments, never a phase's locals.
        for (start, stop, width) in cx.one_strip.drain(..) {
            for start in state.host_spellings(&start) {
                for stop in state.host_spellings(&stop) {
                    one_strip.push((start.clone(), stop, width));
                }
            }
        }
        for strip in cx.row_block.drain(..) {
            match strip {
                Some((start, stop)) => {
                    for start in state.host_spellings(&start) {
                        for stop in state.host_spellings(&stop) {
                            row_block.push(Some((start.clone(), stop)));
                        }
                    }
                }
                None => row_block.push(None),
            }
        }
        if nregions > 1 {
            w.dedent();
        }
    }
    if n.live.is_none() {
        grid_barrier(&mut w, p, &n);
    }
    iteration_end(&mut w, p, &n, &state);
    w.dedent();
    if !state.is_empty() {
        state.store(&mut w, &n.pid, &n.nprog);
    }
    let mut sig = signature(&params);
    sig.extend(n.start.iter().chain(n.step.iter()).cloned());
    sig.extend([n.phase_lo.clone(), n.phase_hi.clone(), n.sync.clone()]);
    if !state.is_empty() {
        sig.extend(state.registers.iter().map(|r| match r.kind {
            'f' => format!("{}: \"fp64\"", r.name),
            _ => r.name.clone(),
        }));
        sig.push(state.out.clone());
    }
    sig.push("MVL: tl.constexpr".into());
    sig.push("GRID_SYNC: tl.constexpr".into());
    if n.live.is_some() {
        // Whether puts are loads and stores into the peers' heaps (`_appyc_nvshmem_p2p`).
        sig.push("P2P: tl.constexpr".into());
    }
    if !row_block.is_empty() {
        sig.push(ROW_BLOCK_PARAM.into());
    }
    if !one_strip.is_empty() {
        sig.push(ONE_STRIP_PARAM.into());
    }
    let mut head = Writer::new(0);
    // Phase numbers change from launch to launch (one launch per phase): specialising on them
    // (== 1, divisible by 16) would compile several copies of the kernel.
    // The registers likewise: an integer that starts at 1 would become a constant.
    // And a put's target PE, which differs from PE to PE: specialised, the PEs whose
    // neighbour is PE 1 (a constant) or PE 0 (divisible by 16) would each run a kernel compiled
    // apart from their peers' (a compile more on a first call, and code that may schedule
    // otherwise while every PE waits for the slowest); every PE runs one kernel instead.
    let pes = pe_params(&regions, &params);
    let unspecialised: Vec<String> = [&n.phase_lo, &n.phase_hi]
        .into_iter()
        .chain(state.registers.iter().map(|r| &r.name))
        .chain(pes.iter())
        .map(|name| format!("\"{name}\""))
        .collect();
    head.line(format!(
        "@triton.jit(do_not_specialize=[{}])",
        unspecialised.join(", ")
    ));
    head.line(format!("def {}({}):", p.name, sig.join(", ")));
    Ok(KernelCode {
        text: head.finish() + &w.finish(),
        params,
        host_args,
        uses_mvl: true,
        written_arrays: written,
        one_strip,
        row_block,
        state: state.registers.clone(),
        flat_grid: false,
    })
}

/// After the last phase of an iteration, past its barrier: the steps there (a closing break
/// among them; after a break before the last phase's region, only while the loop runs), then a
/// while loop's test for the next iteration; a loop with an exit counts its phases itself.
fn iteration_end(w: &mut Writer, p: &PersistentLoop, n: &Names, state: &LoopState) {
    let last = p.regions.len();
    let steps = state.has_steps_before(last);
    let test = match (&state.running, p.test) {
        (Some(running), Some(t)) => Some((running, state.condition(t, &p.var))),
        _ => None,
    };
    if steps || test.is_some() {
        if last > 1 {
            w.line(format!("if {} == {}:", n.region, last - 1));
            w.indent();
        }
        if steps {
            let guarded = state.guard_after_break(w, last - 1);
            state.steps_before(w, last, &n.at(p));
            if guarded {
                w.dedent();
            }
        }
        if let Some((running, c)) = test {
            w.line(format!("{running} = {running} & {c}"));
        }
        if last > 1 {
            w.dedent();
        }
    }
    if state.running.is_some() || n.live.is_some() {
        w.line(format!("{} += 1", n.phase));
    }
}

/// The integer parameters a put's target PE reads (`up`; `me` and `npes` of
/// `(me + 1) % npes`), in order of first use.
fn pe_params(regions: &[Kernel], params: &[Param]) -> Vec<String> {
    let mut out: Vec<String> = vec![];
    for k in regions {
        if let Some(Comm::Put { pe, .. }) = &k.comm {
            pe.walk(&mut |e| {
                if let ExprKind::Name(name) = &e.kind {
                    if params
                        .iter()
                        .any(|q| matches!(q, Param::IntScalar(p) if p == name))
                    {
                        push_unique(&mut out, name);
                    }
                }
            });
        }
    }
    out
}

/// The union of the regions' parameters, less the loop variable, in the order of a kernel of
/// one region.
fn merged_params(p: &PersistentLoop, analyses: &[Analysis]) -> Vec<Param> {
    let mut params: Vec<Param> = vec![];
    for a in analyses {
        for param in &a.params {
            let name = param.kernel_name();
            if name == p.var {
                continue; // the loop variable is the kernel's own
            }
            match params.iter().position(|q| q.kernel_name() == name) {
                // A scalar that some region uses as an integer is an integer.
                Some(i) if matches!(param, Param::IntScalar(_)) => params[i] = param.clone(),
                Some(_) => {}
                None => params.push(param.clone()),
            }
        }
    }
    params
}

/// Same order as a kernel of one region: arrays, scalars, strides, shapes.
fn sort_params(params: &mut [Param]) {
    let rank = |q: &Param| match q {
        Param::Array(_) => 0,
        Param::IntScalar(_) | Param::FloatScalar(_) => 1,
        Param::Stride(..) => 2,
        Param::Shape(..) => 3,
    };
    params.sort_by_key(rank);
}

/// The launcher's arguments (less the loop variable) and the arrays written, over the regions
/// in order of first use.
fn host_args_and_written(p: &PersistentLoop, analyses: &[Analysis]) -> (Vec<String>, Vec<String>) {
    let mut host_args: Vec<String> = vec![];
    let mut written: Vec<String> = vec![];
    for a in analyses {
        for h in &a.host_args {
            if *h != p.var {
                push_unique(&mut host_args, h);
            }
        }
        for x in &a.written {
            push_unique(&mut written, x);
        }
    }
    (host_args, written)
}

/// The names the kernel makes up, fresh against its regions' names, its parameters and the
/// loop variable (and, as they are made, against each other).
struct Names {
    used: HashSet<String>,
    pid: String,
    nprog: String,
    arrived: String,
    phase: String,
    iteration: String,
    region: String,
    /// The loop's start and step, as parameters: `None` for the usual 0 and 1.
    start: Option<String>,
    step: Option<String>,
    phase_lo: String,
    phase_hi: String,
    /// The grid barrier's counter; in a kernel that communicates, the launch's control block.
    sync: String,
    /// A kernel that communicates: true until one of its waits gives up.
    live: Option<String>,
    /// What a wait that gives up records as its step: the loop variable, or the iteration of
    /// a loop without one.
    step_value: String,
}

impl Names {
    fn new(p: &PersistentLoop, params: &[Param], taken: &HashSet<String>) -> Names {
        let mut used: HashSet<String> = taken.clone();
        used.extend(params.iter().map(Param::kernel_name));
        used.insert(p.var.clone());
        let mut fresh = |base: &str| fresh_name(base, &mut used);
        let (pid, nprog, arrived, phase, iteration, region) = (
            fresh("pid"),
            fresh("nprog"),
            fresh("arrived"),
            fresh("phase"),
            fresh("iteration"),
            fresh("region"),
        );
        let start = (!matches!(p.range.start.kind, ExprKind::Int(0)))
            .then(|| fresh(&format!("{}_start", p.var)));
        let step = (!matches!(p.range.step.kind, ExprKind::Int(1)))
            .then(|| fresh(&format!("{}_step", p.var)));
        let (phase_lo, phase_hi, sync) = (fresh("phase_lo"), fresh("phase_hi"), fresh("sync"));
        let live = p
            .regions
            .iter()
            .any(|k| k.comm.is_some())
            .then(|| fresh("live"));
        let step_value = if p.var.is_empty() {
            iteration.clone()
        } else {
            p.var.clone()
        };
        Names {
            used,
            pid,
            nprog,
            arrived,
            phase,
            iteration,
            region,
            start,
            step,
            phase_lo,
            phase_hi,
            sync,
            live,
            step_value,
        }
    }

    fn fresh(&mut self, base: &str) -> String {
        fresh_name(base, &mut self.used)
    }

    fn at<'n>(&'n self, p: &'n PersistentLoop) -> PhaseNames<'n> {
        PhaseNames {
            iteration: &self.iteration,
            pid: &self.pid,
            loop_var: &p.var,
            dialect: Dialect::Triton,
        }
    }
}

/// The kernel's head comment, the program's coordinates, and the loop over the launch's phases
/// down to the loop variable of the phase's iteration (left indented inside the loop).
fn phase_loop(w: &mut Writer, p: &PersistentLoop, n: &Names, state: &LoopState, file: &SourceFile) {
    let nregions = p.regions.len();
    let (pid, nprog, phase, iter) = (&n.pid, &n.nprog, &n.phase, &n.iteration);
    w.line(format!(
        "# {}:{}: {}  (persistent: {} phase(s) per iteration)",
        file.name,
        p.line,
        file.line_text(p.line).trim(),
        nregions
    ));
    w.line(format!("{pid} = tl.program_id(0)"));
    w.line(format!("{nprog} = tl.num_programs(0)"));
    w.line(format!("{} = tl.full((), 0, tl.int64)", n.arrived));
    state.start(w, Dialect::Triton);
    if let Some(live) = &n.live {
        w.line(format!("{live} = tl.full((), 1, tl.int1)"));
    }
    // The loop runs while its test holds: a while loop reads it before the first iteration
    // too (a launch of one phase starts there only at an iteration's start).
    if let (Some(running), Some(t)) = (&state.running, p.test) {
        w.line(format!("if {} % {nregions} == 0:", n.phase_lo));
        w.indented(|w| {
            w.line(format!(
                "{running} = {running} & {}",
                state.condition(t, &p.var)
            ))
        });
    }
    let mut conditions: Vec<String> = state.running.iter().chain(&n.live).cloned().collect();
    if conditions.is_empty() {
        w.line(format!(
            "for {phase} in range({}, {}):",
            n.phase_lo, n.phase_hi
        ));
    } else {
        conditions.push(format!("({phase} < {})", n.phase_hi));
        w.line(format!("{phase} = {}", n.phase_lo));
        w.line(format!("while {}:", conditions.join(" & ")));
    }
    w.indent();
    if nregions == 1 {
        w.line(format!("{iter} = {phase}"));
    } else {
        w.line(format!("{iter} = {phase} // {nregions}"));
        w.line(format!("{} = {phase} - {iter} * {nregions}", n.region));
    }
    let scaled = match &n.step {
        Some(s) => format!("{iter} * {s}"),
        None => iter.clone(),
    };
    if !p.var.is_empty() {
        let value = match &n.start {
            Some(s) => format!("{s} + {scaled}"),
            None => scaled,
        };
        // A register keeps one dtype across the phase loop.
        w.line(match &state.var {
            Some(_) => format!("{} = ({value}).to(tl.int64)", p.var),
            None => format!("{} = {value}", p.var),
        });
    }
}

/// Region `r` as one phase: a communication statement, a `sequential for` region run by one
/// program, or a grid-stride loop over the region's virtual programs.
fn region_phase(
    w: &mut Writer,
    cx: &mut Cx,
    k: &Kernel,
    r: usize,
    n: &mut Names,
    file: &SourceFile,
) -> Result<()> {
    if let Some(c) = &k.comm {
        w.line(format!(
            "# {}:{}: {}",
            file.name,
            file.line_of(k.span.start as usize),
            file.line_text(file.line_of(k.span.start as usize)).trim()
        ));
        let site = CommSite {
            pid: &n.pid,
            nprog: &n.nprog,
            control: &n.sync,
            step: &n.step_value,
            live: n
                .live
                .as_deref()
                .expect("a kernel with a comm phase has `live`"),
            line: file.line_of(k.span.start as usize),
        };
        cx.comm(w, c, &site)
    } else if k.dims.is_empty() {
        cx.pragma_comment(w, k);
        // A `sequential for` region: one program runs it.
        w.line(format!("if {} == 0:", n.pid));
        w.indent();
        cx.region(w, k, &[])?;
        w.dedent();
        Ok(())
    } else {
        cx.pragma_comment(w, k);
        grid_stride(w, cx, k, r, n)
    }
}

/// Programs per grid axis (axis 0 innermost), then a grid-stride loop over the virtual
/// programs of region `r`, each split back into its coordinates.
fn grid_stride(w: &mut Writer, cx: &mut Cx, k: &Kernel, r: usize, n: &mut Names) -> Result<()> {
    let counts = program_counts(w, cx, k, r, &mut |base| n.fresh(base))?;
    let vp = n.fresh("vp");
    w.line(format!(
        "for {vp} in range({}, {}, {}):",
        n.pid,
        counts.join(" * "),
        n.nprog
    ));
    w.indent();
    let ids = program_ids(w, &vp, &counts, r, &mut |base| n.fresh(base));
    cx.region(w, k, &ids)?;
    w.dedent();
    Ok(())
}

/// After each phase that conflicts with the next (`barrier_after`), on the GPU only: a grid
/// barrier, counted by the programs' arrivals.
fn grid_barrier(w: &mut Writer, p: &PersistentLoop, n: &Names) {
    let nregions = p.regions.len();
    let barriers: Vec<usize> = (0..nregions).filter(|r| p.barrier_after[*r]).collect();
    if barriers.is_empty() {
        return;
    }
    w.line("if GRID_SYNC:");
    w.indent();
    if barriers.len() < nregions {
        let cond: Vec<String> = barriers
            .iter()
            .map(|r| format!("({} == {r})", n.region))
            .collect();
        w.line(format!("if {}:", cond.join(" | ")));
        w.indent();
    }
    w.line(format!("{} += {}", n.arrived, n.nprog));
    w.line(format!("_appyc_grid_barrier({}, {})", n.sync, n.arrived));
    if barriers.len() < nregions {
        w.dedent();
    }
    w.dedent();
}

/// After phase `r` of a kernel that communicates, on the GPU only: the bounded grid barrier,
/// skipped by a program whose wait in this phase gave up (it leaves the loop next).
fn bounded_barrier(w: &mut Writer, n: &Names, line: usize) {
    let live = n.live.as_deref().expect("only kernels that communicate");
    w.line("if GRID_SYNC:");
    w.indented(|w| {
        w.line(format!("if {live}:"));
        w.indented(|w| {
            w.line(format!("{} += {}", n.arrived, n.nprog));
            w.line(format!(
                "{live} = _appyc_nvshmem_barrier({}, {}, {}, {line})",
                n.sync, n.arrived, n.step_value
            ));
        });
    });
}

#[cfg(test)]
mod tests {
    use crate::codegen::test_support::{function, generated};

    const TWO_PHASES: &str = "def f(A, B, M, N, T):
    for t in range(T):
        #pragma parallel for
        for i in range(1, M - 1):
            #pragma parallel for
            for j in range(1, N - 1):
                B[i, j] = A[i - 1, j] + A[i + 1, j] + t
        #pragma parallel for
        for i in range(1, M - 1):
            #pragma parallel for
            for j in range(1, N - 1):
                A[i, j] = B[i, j]
";

    #[test]
    fn a_persistent_kernel_runs_each_region_as_a_grid_stride_loop_of_one_phase() {
        let out = generated(TWO_PHASES);
        let k = function(&out, "_f_persistent0");
        // Phases: iteration and region from the phase number; the loop variable in the kernel.
        assert!(
            k.contains("for _phase in range(_phase_lo, _phase_hi):"),
            "{k}"
        );
        assert!(k.contains("_iteration = _phase // 2"), "{k}");
        assert!(k.contains("_region = _phase - _iteration * 2"), "{k}");
        assert!(k.contains("t = _iteration"), "{k}");
        // A 2-D region: programs per axis (a row block of the outer, the inner's lanes),
        // virtual programs split back.
        assert!(
            k.contains("_n0_1 = tl.maximum(tl.cdiv((M - 1) - (1), ROW_BLOCK), 0)"),
            "{k}"
        );
        assert!(
            k.contains("_n0_0 = tl.maximum(tl.cdiv((N - 1) - (1), MVL // ROW_BLOCK), 0)"),
            "{k}"
        );
        assert!(
            k.contains("for _vp in range(_pid, _n0_0 * _n0_1, _nprog):"),
            "{k}"
        );
        assert!(k.contains("_pid0_0 = _vp % _n0_0"), "{k}");
        assert!(
            k.contains("i = 1 + _pid0_1 * ROW_BLOCK + tl.arange(0, ROW_BLOCK)"),
            "{k}"
        );
        assert!(
            k.contains("j = 1 + _pid0_0 * (MVL // ROW_BLOCK) + tl.arange(0, MVL // ROW_BLOCK)"),
            "{k}"
        );
        // Both phases conflict with the next: a barrier after every phase, on the GPU only.
        assert!(k.contains("if GRID_SYNC:\n"), "{k}");
        assert!(!k.contains("if (_region =="), "{k}");
        assert!(k.contains("_appyc_grid_barrier(_sync, _arrived)"), "{k}");
        // The loop variable is the kernel's own, not a parameter.
        assert!(!k.lines().next().unwrap().contains(", t,"), "{k}");
    }

    #[test]
    fn the_host_loop_becomes_one_launcher_call() {
        let out = generated(TWO_PHASES);
        let f = function(&out, "f");
        assert_eq!(
            f.trim_end(),
            "def f(A, B, M, N, T):\n    _launch_f_persistent0(B, A, M, N, T)"
        );
        let l = function(&out, "_launch_f_persistent0");
        assert!(l.contains("n_t = int(T)"), "{l}");
        assert!(
            l.contains("_appyc_persistent(\n        _f_persistent0, n_t * 2,"),
            "{l}"
        );
    }

    #[test]
    fn a_puts_target_pe_is_left_unspecialised() {
        // `down` directly, `me` and `npes` through an expression: all three differ by PE.
        let src = "from appyc_aot import nvshmem
import numpy as np


def f(A, M, N, T):
    me = nvshmem.my_pe()
    npes = nvshmem.n_pes()
    down = (me + 1) % npes
    flags = np.zeros(2, dtype=np.int64)
    for t in range(1, T + 1):
        nvshmem.Putmem(A[0, 1:N - 1], A[M - 2, 1:N - 1], down, flags[0], t)
        nvshmem.Putmem(A[M - 1, 1:N - 1], A[1, 1:N - 1], (me + npes - 1) % npes, flags[1], t)
        nvshmem.SignalWait(flags[0], t)
        nvshmem.SignalWait(flags[1], t)
        #pragma 1:M-1=>parallel 1:N-1=>parallel
        A[1:M-1, 1:N-1] = 0.5 * (A[0:M-2, 1:N-1] + A[2:M, 1:N-1])
";
        let out = generated(src);
        let k = function(&out, "_f_persistent0");
        let deco = out[..out.find("def _f_persistent0(").unwrap()]
            .lines()
            .last()
            .unwrap();
        assert_eq!(
            deco,
            "@triton.jit(do_not_specialize=[\"_phase_lo\", \"_phase_hi\", \"down\", \"me\", \"npes\"])",
            "{k}"
        );
        // The sizes stay specialised: M and N are the same on every PE.
        assert!(!deco.contains("\"M\""), "{deco}");
    }

    #[test]
    fn a_communicating_kernel_loads_a_sweep_in_two_waves_and_a_plain_one_does_not() {
        let src = "from appyc_aot import nvshmem
import numpy as np


def f(A, B, M, N, T):
    me = nvshmem.my_pe()
    down = (me + 1) % nvshmem.n_pes()
    flags = np.zeros(1, dtype=np.int64)
    for t in range(1, T + 1):
        nvshmem.Putmem(A[0, 1:N - 1], A[M - 2, 1:N - 1], down, flags[0], t)
        nvshmem.SignalWait(flags[0], t)
        #pragma 1:M-1=>parallel 1:N-1=>parallel
        B[1:M-1, 1:N-1] = A[1:M-1, 0:N-2] + A[0:M-2, 1:N-1] + A[1:M-1, 1:N-1] + A[2:M, 1:N-1]
";
        let k = function(&generated(src), "_f_persistent0").to_string();
        let up = "tl.load(A + (_p0[:, None] - 1) * A_stride0 + _p1[None, :] * A_stride1, mask=_p0_mask[:, None] & _p1_mask[None, :])";
        let down = up.replace("- 1)", "+ 1)");
        let block = format!(
            "_appyc_wave0 = {up}
                _appyc_wave1 = {down}
                if GRID_SYNC:
                    _appyc_nvshmem_loads_arrived(_appyc_wave0 + _appyc_wave1)
                tl.store(B + "
        );
        assert!(k.contains(&block), "{block}\nnot in:\n{k}");
        // The store reads the first wave's locals in their places and issues the others itself.
        let store = k.lines().find(|l| l.contains("tl.store(B")).unwrap();
        assert!(
            store.contains("+ _appyc_wave0 + tl.load(A + _p0[:, None] * A_stride0"),
            "{store}"
        );
        assert!(
            store.contains("_p1_mask[None, :]) + _appyc_wave1, mask="),
            "{store}"
        );
        assert_eq!(store.matches("tl.load(").count(), 2, "{store}");
        // The same sweep in a loop that does not communicate: one wave, as ptxas orders it.
        let plain = src
            .replace(
                "        nvshmem.Putmem(A[0, 1:N - 1], A[M - 2, 1:N - 1], down, flags[0], t)\n",
                "",
            )
            .replace("        nvshmem.SignalWait(flags[0], t)\n", "");
        let k = function(&generated(&plain), "_f_persistent0").to_string();
        assert!(!k.contains("_appyc_wave"), "{k}");
        assert_eq!(
            k.lines()
                .find(|l| l.contains("tl.store(B"))
                .unwrap()
                .matches("tl.load(")
                .count(),
            4
        );
        // A `sequential for` region stores one element at a time: no barrier per element.
        let sequential = src.replace(
            "        #pragma 1:M-1=>parallel 1:N-1=>parallel
        B[1:M-1, 1:N-1] = A[1:M-1, 0:N-2] + A[0:M-2, 1:N-1] + A[1:M-1, 1:N-1] + A[2:M, 1:N-1]
",
            "        #pragma sequential for
        for i in range(1, M - 1):
            for j in range(1, N - 1):
                B[i, j] = A[i, j - 1] + A[i - 1, j] + A[i, j] + A[i + 1, j]
",
        );
        let k = function(&generated(&sequential), "_f_persistent0").to_string();
        assert!(k.contains("if _pid == 0:"), "{k}");
        assert!(!k.contains("_appyc_wave"), "{k}");
    }

    #[test]
    fn what_follows_a_break_in_its_phase_runs_while_the_loop_does() {
        // The break stands before the second region: in that phase it clears `_running`, and
        // the step and the region after it, then the closing step past the barrier, run only
        // while it holds. Later phases need no guard: the phase loop ends first.
        let src = "def f(A, B, N, T, tol, dt):
    k = 0
    for t in range(T):
        #pragma parallel for simd
        for i in range(N):
            B[i] = A[i] * dt
        if dt < tol:
            break
        dt = dt * 0.5
        #pragma parallel for simd
        for i in range(N):
            A[i] = B[N - 1 - i] + 1.0
        k += 1
    return k
";
        // (The second region reads another iteration's `B`, so it stays a phase of its own:
        // passes/join_regions.rs.)
        let lines = function(&generated(src), "_f_persistent0").to_string();
        for block in [
            "        if _region == 1:
            _running = _running & ((dt < tol) == 0)
            if _running:
                dt = (dt * tl.full((), 0.5, tl.float64))
                # t.py:10: #pragma parallel for simd",
            "        if _region == 1:
            if _running:
                k = ((k + 1)).to(tl.int64)
        _phase += 1",
            "    while _running & (_phase < _phase_hi):",
        ] {
            assert!(lines.contains(block), "{block}\nnot in:\n{lines}");
        }
        // The first region, before the break, runs unguarded.
        assert_eq!(lines.matches("if _running:").count(), 2, "{lines}");
        // A break as the body's first statement guards the whole phase.
        let first = src.replace(
            "        #pragma parallel for simd\n        for i in range(N):\n            B[i]",
            "        if dt < tol:\n            break\n        #pragma parallel for simd\n        for i in range(N):\n            B[i]",
        ).replacen("        if dt < tol:\n            break\n        dt = dt", "        dt = dt", 1);
        let lines = function(&generated(&first), "_f_persistent0").to_string();
        assert!(
            lines.contains(
                "        if _region == 0:
            _running = _running & ((dt < tol) == 0)
            if _running:
                # t.py:"
            ),
            "{lines}"
        );
    }

    #[test]
    fn a_loop_test_is_one_operand_of_running() {
        // `not done` prints `(done) == 0`: unparenthesized, `_running & (done) == 0` would be
        // `(_running & done) == 0`, true again after the break has cleared `_running`.
        let src = "def f(A, N, cap):
    done = False
    it = 0
    while not done:
        #pragma parallel for simd
        for i in range(N):
            A[i] = 0.5 * A[i]
        done = it > 4
        it += 1
        if it >= cap:
            break
    return it
";
        let k = function(&generated(src), "_f_persistent0").to_string();
        assert!(k.contains("_running = _running & ((done) == 0)"), "{k}");
        assert!(!k.contains("_running & (done) == 0"), "{k}");
        assert!(
            k.contains("_running = _running & (((it).to(tl.float64) >= cap) == 0)"),
            "{k}"
        );
    }

    #[test]
    fn barriers_are_only_where_phases_conflict() {
        let src = "def f(X, Y, N, T):
    for t in range(T):
        #pragma parallel for simd
        for i in range(N):
            X[i] = X[i] * 2.0
        #pragma parallel for simd
        for i in range(N):
            Y[i] = Y[i] + 1.0
";
        // Each region only touches its own element: still, the next iteration of a region
        // reads what other programs wrote, so each phase conflicts with its own next run.
        // Region 0 and region 1 are independent, so one barrier per iteration suffices.
        let out = generated(src);
        let k = function(&out, "_f_persistent0");
        assert!(k.contains("if (_region == 1):"), "{k}");
    }
}
