//! schedule: decides how a function's outlined regions are launched. Contract: every kernel is
//! launched exactly once per execution of its region, either by a launch of its own or as a
//! phase of the persistent kernel of the host loop around it, and a grid barrier separates two
//! phases whenever one may write an element the other reads or writes (`footprint`).
//!
//! A host `for ... in range(...)` loop becomes one persistent kernel when its body is nothing
//! but parallel regions (the paper's "autonomous execution": the time loop runs on the GPU and
//! the host launches once). That happens by itself for every eligible loop unless automatic
//! persistence is off; `#pragma persistent for` demands it, and then an ineligible loop is an
//! error that says why.

use crate::diag::{Diagnostic, Result};
use crate::frontend::source::{SourceFile, Span};
use crate::ir::pragma::Directive;
use crate::ir::*;
use rustpython_parser::lexer::lex;
use rustpython_parser::{Mode, Tok};
use std::collections::HashSet;

mod before;
mod bindings;
mod footprint;
pub mod host_steps;
pub mod temporal;
use footprint::Footprint;
use host_steps::{HostSteps, ScalarType, StepKind};

/// How the regions of one function are launched, in source order.
#[derive(Debug, Clone, PartialEq)]
pub enum Launch {
    /// `kernels[i]` on its own grid, one launch per execution of the region.
    Region(usize),
    Persistent(Box<Persistent>),
}

/// A host loop run as one persistent kernel.
#[derive(Debug, Clone, PartialEq)]
pub struct Persistent {
    pub var: String,
    pub range: Range,
    /// The host loop in the source, its pragma included: the text the launch replaces.
    pub span: Span,
    /// The `for` statement alone.
    pub loop_span: Span,
    /// Indices into the function's kernels, in the order one iteration runs them.
    pub regions: Vec<usize>,
    /// `barrier_after[r]`: a grid barrier follows phase `r` (cyclically: after the last phase
    /// of an iteration comes the first of the next).
    pub barrier_after: Vec<bool>,
    /// The loop may also run temporally blocked (`temporal`): a 1-D stencil.
    pub stencil: Option<temporal::Stencil>,
    /// Or a 2-D one (two alternating arrays, `temporal::Stencil2d`).
    pub stencil_2d: Option<temporal::Stencil2d>,
    /// Or a 3-D one (two alternating arrays, streamed by planes: `temporal::Stencil3d`).
    pub stencil_3d: Option<temporal::Stencil3d>,
    /// The loop's statements other than regions, run by every program alike (`host_steps`).
    pub steps: HostSteps,
    /// Names the loop assigns (the loop variable, scalars, rebound arrays) that the function
    /// reads after it: the launcher returns their values, in this order.
    pub outputs: Vec<String>,
    /// Some output may be unbound when the loop starts (a `for` loop's variable, usually): the
    /// call site binds the outputs only when an iteration ran, as Python does (`for t, x in
    /// launch(...): pass` over one row of values or none). Otherwise every output is surely
    /// bound, the launcher takes it, and returns it unchanged when no iteration runs.
    pub bind_if_ran: bool,
    /// A while loop's test, read before every iteration (`var` is then empty and `range`
    /// unused: the loop runs until the test fails). A body's `if test: break` is one of its
    /// steps (`HostSteps::exit`), read where it stands.
    pub test: Option<Expr>,
}

impl Persistent {
    /// The loop variable is a kernel register: the loop breaks, and the function reads the
    /// variable after it (without a break, its last value is the range's last).
    pub fn var_register(&self) -> bool {
        self.breaks() && !self.var.is_empty() && self.outputs.contains(&self.var)
    }

    /// The body holds `if test: break`.
    pub fn breaks(&self) -> bool {
        self.steps.exit().is_some()
    }
}

/// A host loop's head.
#[derive(Clone, Copy)]
enum Head<'s> {
    For { var: &'s str, range: &'s Range },
    While { test: &'s Expr },
}

/// A host loop (a `for` over a range, a `while`): its head and body.
fn host_loop(s: &Stmt) -> Option<(Head<'_>, &[Stmt])> {
    match &s.kind {
        StmtKind::For {
            kind: LoopKind::Plain,
            var,
            range,
            body,
            ..
        } => Some((Head::For { var, range }, body)),
        StmtKind::While { test, body } => Some((Head::While { test }, body)),
        _ => None,
    }
}

/// Whether a stencil loop's host statements can run in its temporally blocked kernel: scalar
/// registers only (`dt = dt * decay`), which every program steps alike there too, reading
/// neither the loop variable (the blocked kernel counts steps, not the range) nor a shape.
fn blockable_steps(steps: &HostSteps, var: &str) -> bool {
    steps.groups.is_empty()
        && steps.steps.iter().all(|s| {
            s.kind == host_steps::StepKind::Scalar
                && !s.value.any(&mut |x| match &x.kind {
                    ExprKind::Name(n) => n == var,
                    ExprKind::Shape { .. } => true,
                    _ => false,
                })
        })
}

pub fn run(
    file: &SourceFile,
    func: &Function,
    kernels: &[Kernel],
    automatic: bool,
) -> Result<Vec<Launch>> {
    run_with_notes(file, func, kernels, automatic, &mut vec![])
}

/// `run`, with a note for every loop that holds regions but stays on the host, saying which
/// statement keeps it there (`appyc -v` prints them).
pub fn run_with_notes(
    file: &SourceFile,
    func: &Function,
    kernels: &[Kernel],
    automatic: bool,
    notes: &mut Vec<Diagnostic>,
) -> Result<Vec<Launch>> {
    let mut persistent = vec![];
    let cx = Cx {
        file,
        func,
        kernels,
        automatic,
        notes: Default::default(),
        enclosing: Default::default(),
    };
    cx.find_loops(&func.body, &mut persistent)?;
    notes.append(&mut cx.notes.borrow_mut());
    let mut launches = vec![];
    for (i, _) in kernels.iter().enumerate() {
        match persistent.iter().find(|p| p.regions.contains(&i)) {
            Some(p) if p.regions[0] == i => launches.push(Launch::Persistent(Box::new(p.clone()))),
            Some(_) => {}
            None => launches.push(Launch::Region(i)),
        }
    }
    Ok(launches)
}

struct Cx<'a> {
    file: &'a SourceFile,
    func: &'a Function,
    kernels: &'a [Kernel],
    automatic: bool,
    /// Why loops that hold regions stay on the host (for `-v`).
    notes: std::cell::RefCell<Vec<Diagnostic>>,
    /// The host loops around the statements `find_loops` walks: what they hold runs again
    /// after a loop inside them.
    enclosing: std::cell::RefCell<Vec<Span>>,
}

/// What an eligible loop runs: its regions in phase order, its other statements (its break
/// among them).
struct Plan {
    regions: Vec<usize>,
    steps: HostSteps,
    /// What the host has bound when the loop starts.
    before: before::Before,
}

impl Cx<'_> {
    fn find_loops(&self, stmts: &[Stmt], out: &mut Vec<Persistent>) -> Result<()> {
        for s in stmts {
            if let Some((head, body)) = host_loop(s) {
                if !self.try_loop(s, head, body, out)? {
                    self.find_loops_in(s, body, out)?;
                }
                continue;
            }
            match &s.kind {
                // A region: its loops run inside the kernel, never on the host.
                StmtKind::For {
                    kind: LoopKind::Parallel { .. } | LoopKind::Sequential,
                    ..
                } => {}
                StmtKind::For { body, .. } | StmtKind::HostBlock { body, .. } => {
                    self.find_loops_in(s, body, out)?
                }
                StmtKind::If { body, orelse, .. } => {
                    self.find_loops(body, out)?;
                    self.find_loops(orelse, out)?;
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// `find_loops` in the body of `s`, a host loop or block.
    fn find_loops_in(&self, s: &Stmt, body: &[Stmt], out: &mut Vec<Persistent>) -> Result<()> {
        let repeats = before::repeats(s);
        if repeats {
            self.enclosing.borrow_mut().push(s.span);
        }
        let found = self.find_loops(body, out);
        if repeats {
            self.enclosing.borrow_mut().pop();
        }
        found
    }

    /// Whether the loop `s` runs as one persistent kernel (pushed to `out`); an error where it
    /// must but cannot (nvshmem calls, `#pragma persistent for`).
    fn try_loop(
        &self,
        s: &Stmt,
        head: Head,
        body: &[Stmt],
        out: &mut Vec<Persistent>,
    ) -> Result<bool> {
        let kernels = self.kernels;
        // `distribute` runs the loop on every PE with halo exchanges inside: in its single-GPU
        // form too, one persistent kernel, so that both forms replace the same loop.
        let asked = matches!(&s.pragma, Some(p) if matches!(p.directive, Directive::Persistent | Directive::Distribute { .. }));
        // A loop with nvshmem calls must be one cooperative kernel: its waits would deadlock
        // anywhere else.
        let comm = body
            .iter()
            .any(|b| kernels.iter().any(|k| k.comm.is_some() && k.span == b.span));
        let requested = asked || comm;
        if !(requested || self.automatic) {
            return Ok(false);
        }
        let (why, at) = match self.eligible(s, head, body) {
            Ok(plan) => {
                out.push(self.persistent(s, head, plan));
                return Ok(true);
            }
            Err(why) => why,
        };
        if comm {
            return Err(Diagnostic::error(
                at,
                "this loop holds `nvshmem` calls, so it must run as one persistent cooperative kernel, but it cannot",
            )
            .with_label(why)
            .with_help("a SignalWait outside a persistent kernel can deadlock: keep only parallel regions, nvshmem calls and host scalar statements in the loop"));
        }
        if matches!(&s.pragma, Some(p) if matches!(p.directive, Directive::Distribute { .. })) {
            return Err(Diagnostic::error(
                at,
                "`#pragma distribute`: this loop must run as one persistent kernel on every PE, but it cannot",
            )
            .with_label(why)
            .with_help("keep only parallel regions (and bare array assignments) in the loop"));
        }
        if requested {
            return Err(Diagnostic::error(
                at,
                "`#pragma persistent for`: this loop cannot run as one persistent kernel",
            )
            .with_label(why)
            .with_help("remove the pragma to launch each region on its own"));
        }
        if self.holds_region(body) {
            self.notes.borrow_mut().push(
                Diagnostic::note(
                    at,
                    "this loop stays on the host: it launches each region on its own, every iteration",
                )
                .with_label(why),
            );
        }
        Ok(false)
    }

    fn holds_region(&self, body: &[Stmt]) -> bool {
        body.iter().any(|b| {
            self.kernels
                .iter()
                .any(|k| k.span.start <= b.span.start && b.span.end <= k.span.end)
        })
    }

    /// The persistent form of an eligible loop: its barriers (a name the loop rebinds counts
    /// as every array of its group; a region that reduces a shared scalar every program then
    /// reads is always followed by one), and the blocked form of a 1-D stencil without steps.
    fn persistent(&self, s: &Stmt, head: Head, plan: Plan) -> Persistent {
        let Plan {
            regions,
            steps,
            before,
        } = plan;
        let breaks = steps.exit().is_some();
        let (var, range, test) = match head {
            Head::For { var, range } => (var, range.clone(), None),
            Head::While { test } => {
                let zero = Expr::int(0, test.span);
                let range = Range {
                    start: zero.clone(),
                    stop: zero,
                    step: Expr::int(1, test.span),
                };
                ("", range, Some(test.clone()))
            }
        };
        let phases: Vec<&Kernel> = regions.iter().map(|&r| &self.kernels[r]).collect();
        let mut varying: HashSet<String> = steps.carried.iter().map(|c| c.name.clone()).collect();
        varying.insert(var.to_string());
        let mut barrier_after = barriers(&phases, &steps, &varying);
        for (r, k) in phases.iter().enumerate() {
            if k.shared
                .iter()
                .any(|s| matches!(s.update, SharedUpdate::Reduce(_)))
            {
                barrier_after[r] = true;
            }
        }
        let plain = test.is_none() && !breaks && blockable_steps(&steps, var);
        let stencil = temporal::stencil(var, &phases).filter(|_| plain);
        // The 2-D analyses take the host steps themselves (none, or one swap of arrays).
        let unconditional = test.is_none() && !breaks;
        let mut stencil_2d = self.stencil_2d(s, var, &phases, &steps, unconditional);
        let mut stencil_3d = self.stencil_3d(s, var, &phases, &steps, unconditional);
        let mut outputs: Vec<String> = vec![];
        let assigned = std::iter::once(var)
            .filter(|v| !v.is_empty())
            .chain(steps.carried.iter().map(|c| c.name.as_str()))
            .chain(
                steps
                    .groups
                    .iter()
                    .flat_map(|g| g.names.iter().map(String::as_str)),
            );
        for n in assigned {
            if !outputs.iter().any(|o| o == n) && self.read_after(n, s.span) {
                outputs.push(n.to_string());
            }
        }
        let bind_if_ran = outputs.iter().any(|o| !before.bound.contains(o));
        // A swapped loop's blocked path returns the arrays its names hold after pairs of
        // iterations, the ones they started with: a loop variable or scalar it cannot give.
        let slots = |o: &String| steps.groups.iter().any(|g| g.slots.contains(o));
        let swapped = stencil_2d.as_ref().is_some_and(|st| st.swapped)
            || stencil_3d.as_ref().is_some_and(|st| st.swapped);
        if swapped && !outputs.iter().all(slots) {
            self.note_not_blocked(s, "the loop's variable or a scalar is read after it".into());
            stencil_2d = None;
            stencil_3d = None;
        }
        Persistent {
            var: var.to_string(),
            range,
            span: s.pragma.as_ref().map_or(s.span, |p| p.span.to(s.span)),
            loop_span: s.span,
            regions,
            barrier_after,
            stencil,
            stencil_2d,
            stencil_3d,
            steps,
            outputs,
            bind_if_ran,
            test,
        }
    }

    /// The 2-D blocked form of a loop whose phases are 2-D stencils, or that steps one and
    /// swaps its arrays (`temporal`), or none, with a note (`appyc -v`) saying why not.
    /// `plain`: no loop test or break.
    fn stencil_2d(
        &self,
        s: &Stmt,
        var: &str,
        phases: &[&Kernel],
        steps: &HostSteps,
        plain: bool,
    ) -> Option<temporal::Stencil2d> {
        let analyses = (temporal::stencil_2d, temporal::stencil_2d_swapped);
        self.stencil_nd(s, (var, phases, steps, plain), 2, analyses)
    }

    /// The 3-D blocked form (`temporal::Stencil3d`), as `stencil_2d`.
    fn stencil_3d(
        &self,
        s: &Stmt,
        var: &str,
        phases: &[&Kernel],
        steps: &HostSteps,
        plain: bool,
    ) -> Option<temporal::Stencil3d> {
        let analyses = (temporal::stencil_3d, temporal::stencil_3d_swapped);
        self.stencil_nd(s, (var, phases, steps, plain), 3, analyses)
    }

    /// A `dims`-dimensional blocked form: the alternating analysis when the loop has no host
    /// steps and every phase has `dims` dimensions, the swapped one when some phase has and none
    /// more (a 3-D stencil's boundary copies are 2-D regions: the 3-D analysis takes that loop).
    fn stencil_nd<T, A, S>(
        &self,
        s: &Stmt,
        (var, phases, steps, plain): (&str, &[&Kernel], &HostSteps, bool),
        dims: usize,
        (alternating, swapped): (A, S),
    ) -> Option<T>
    where
        A: Fn(&str, &[&Kernel]) -> std::result::Result<T, String>,
        S: Fn(&str, &[&Kernel], &HostSteps) -> std::result::Result<T, String>,
    {
        let found = if steps.steps.is_empty() {
            if phases.is_empty() || !phases.iter().all(|k| k.dims.len() == dims) {
                return None;
            }
            alternating(var, phases)
        } else {
            let has = phases.iter().any(|k| k.dims.len() == dims);
            if !has || phases.iter().any(|k| k.dims.len() > dims) {
                return None;
            }
            swapped(var, phases, steps)
        };
        let why = match found {
            Ok(st) if plain => return Some(st),
            Ok(_) => "the loop has a test or a break".to_string(),
            Err(why) => why,
        };
        self.note_not_blocked(s, why);
        None
    }

    fn note_not_blocked(&self, s: &Stmt, why: String) {
        self.notes.borrow_mut().push(
            Diagnostic::note(
                s.span,
                "this loop runs as a persistent kernel, not temporally blocked",
            )
            .with_label(why),
        );
    }

    /// The regions of a host loop that can run as one persistent kernel and what its other
    /// statements do there, or why it cannot (and where).
    fn eligible(
        &self,
        the_loop: &Stmt,
        head: Head,
        body: &[Stmt],
    ) -> std::result::Result<Plan, (String, Span)> {
        let kernels = self.kernels;
        let (var, test) = match head {
            Head::For { var, .. } => (var, None),
            Head::While { test } => ("", Some(test)),
        };
        let mut regions = vec![];
        let mut others: Vec<(usize, &Stmt)> = vec![];
        for s in body {
            if matches!(s.kind, StmtKind::Pass) {
                continue;
            }
            // Every kernel holding the statement, in order: a region, or the phases
            // `passes::distribute` puts before it with its span, then the region.
            let holding: Vec<usize> = (0..kernels.len())
                .filter(|&k| {
                    kernels[k].span.start <= s.span.start && s.span.end <= kernels[k].span.end
                })
                .collect();
            if holding.is_empty() {
                others.push((regions.len(), s));
            }
            regions.extend(holding);
        }
        if regions.is_empty() {
            return Err(("its body holds no parallel region".into(), the_loop.span));
        }
        let arrays = self.arrays();
        let reductions = regions
            .iter()
            .enumerate()
            .flat_map(|(phase, &r)| {
                kernels[r]
                    .shared
                    .iter()
                    .filter_map(move |s| match s.update {
                        SharedUpdate::Reduce(op) => {
                            Some((phase, s.var.clone(), s.buffer.clone(), op))
                        }
                        _ => None,
                    })
            })
            .collect();
        let before = before::before(self.func, the_loop.span);
        let read_after = |n: &str| self.read_after(n, the_loop.span);
        let mut taken = self.func.names();
        taken.extend(kernels.iter().flat_map(Kernel::names));
        let cx = host_steps::Context {
            loop_var: var,
            arrays: &arrays,
            region_reads: regions.iter().map(|&r| scalar_reads(&kernels[r])).collect(),
            test,
            reductions,
            starts: &before.types,
            bound: &before.bound,
            read_after: &read_after,
            taken: &taken,
        };
        let steps = host_steps::analyse(&others, &cx)?;
        self.comm_allows(&regions, &steps)?;
        let mut temps: HashSet<&str> = HashSet::new();
        for &r in &regions {
            let k = &kernels[r];
            if k.names().contains(var) && assigns(k, var) {
                return Err((
                    format!("a region assigns the loop variable `{var}`"),
                    k.span,
                ));
            }
            for d in &k.dims {
                let literal = matches!(d.range.step.kind, ExprKind::Int(s) if s != 0);
                let mvl = [&d.range.start, &d.range.stop, &d.range.step]
                    .iter()
                    .any(|e| e.mentions("appy.MVL"));
                if !literal || mvl {
                    return Err((
                    "a parallel loop's step is not a literal, so its trip count cannot be computed in the kernel".into(),
                    d.span,
                ));
                }
            }
            if k.tiles.is_some() {
                return Err((
                    "the region is computed as tl.dot tiles, which run on a grid of their own"
                        .into(),
                    k.pragma_span,
                ));
            }
            if let Some(s) = k.shared.iter().find(|s| s.update == SharedUpdate::Store) {
                let what = match s.implicit {
                    Some(_) => format!(
                        "the region computes `{}`, which the host reads after it, by a store (no reduction)",
                        s.var
                    ),
                    None => format!(
                        "the region stores the shared scalar `{}` (no reduction)",
                        s.var
                    ),
                };
                return Err((
                    format!("{what}: the last store would need the host"),
                    s.span,
                ));
            }
            for (t, _) in &k.temps {
                if !temps.insert(t) {
                    return Err((
                        format!("two regions need a temporary array named `{t}`"),
                        k.span,
                    ));
                }
            }
        }
        Ok(Plan {
            regions,
            steps,
            before,
        })
    }

    /// A loop with nvshmem calls holds regions and host scalar statements (`k = step + 1`,
    /// registers of every program, read back after the launch as in any persistent loop);
    /// no swap, no shared reduction and no break: a PE's launch cannot stop early while its
    /// peers wait on it (a closing break once reached the launcher and failed there).
    fn comm_allows(
        &self,
        regions: &[usize],
        steps: &HostSteps,
    ) -> std::result::Result<(), (String, Span)> {
        if !regions.iter().any(|&r| self.kernels[r].comm.is_some()) {
            return Ok(());
        }
        match steps.steps.iter().find(|s| s.kind != StepKind::Scalar) {
            Some(s) if s.kind == StepKind::Break => Err((
                "a break beside nvshmem calls needs the host between iterations".into(),
                s.span,
            )),
            Some(s) => Err((
                "host statements beside nvshmem calls need the host between iterations".into(),
                s.span,
            )),
            None => Ok(()),
        }
    }

    /// Every name the function subscripts or takes a shape of: its arrays.
    fn arrays(&self) -> HashSet<String> {
        let mut out = HashSet::new();
        for s in &self.func.body {
            s.walk(&mut |st| {
                for e in st.exprs() {
                    e.walk(&mut |x| match &x.kind {
                        ExprKind::Subscript { array, .. } | ExprKind::Shape { array, .. } => {
                            out.insert(array.clone());
                        }
                        _ => {}
                    });
                }
            });
        }
        out
    }

    /// Whether the function may read `name` after the loop at `span` ends: a token naming it
    /// after the loop, or around it in a host loop that holds it (which runs again).
    /// Host code is not all in the IR (`return t` is not), so the source's tokens decide; a
    /// token that assigns counts too (a few names too many come back, never one too few).
    fn read_after(&self, name: &str, span: Span) -> bool {
        let enclosing = self.enclosing.borrow();
        let inside = |outer: &Span, at: Span| outer.start <= at.start && at.end <= outer.end;
        self.name_tokens(name).any(|at| {
            !inside(&span, at) && (at.start >= span.end || enclosing.iter().any(|e| inside(e, at)))
        })
    }

    /// Every token naming `name` in the function.
    fn name_tokens<'s>(&'s self, name: &'s str) -> impl Iterator<Item = Span> + 's {
        let (start, end) = (self.func.span.start as usize, self.func.span.end as usize);
        let base = self.file.line_start(self.file.line_of(start));
        let text = &self.file.text[base..end];
        lex(text, Mode::Module)
            .flatten()
            .filter_map(move |(tok, range)| {
                let at = Span::from(range).shifted(base);
                matches!(tok, Tok::Name { name: n } if n == name).then_some(at)
            })
    }
}

fn assigns(k: &Kernel, var: &str) -> bool {
    let mut found = false;
    for s in &k.body {
        s.walk(&mut |st| match &st.kind {
            StmtKind::Assign { target, .. } => {
                found |= matches!(&target.kind, ExprKind::Name(n) if n == var)
            }
            StmtKind::For { var: v, vector, .. } => {
                found |= v == var || vector.as_deref() == Some(var)
            }
            _ => {}
        });
    }
    found
}

/// The scalars a region reads (names it does not bind), each an integer when the region uses it
/// as one (`Kernel::integer_names`, as its kernel's parameter is typed), else a float.
fn scalar_reads(k: &Kernel) -> std::collections::HashMap<String, ScalarType> {
    let locals = k.bound_names();
    let ints = k.integer_names();
    let mut out = std::collections::HashMap::new();
    let mut read = |e: &Expr| {
        e.walk(&mut |x| {
            if let ExprKind::Name(n) = &x.kind {
                if !locals.contains(n) {
                    let t = if ints.contains(n) {
                        ScalarType::Int
                    } else {
                        ScalarType::Float
                    };
                    out.insert(n.clone(), t);
                }
            }
        })
    };
    for d in &k.dims {
        [&d.range.start, &d.range.stop, &d.range.step]
            .into_iter()
            .for_each(&mut read);
    }
    for s in &k.body {
        s.walk(&mut |st| st.exprs().into_iter().for_each(&mut read));
    }
    out
}

/// Where grid barriers go: before a phase that conflicts with any phase run since the last
/// barrier (a write of one may meet a read or write of the other at some element: see
/// `footprint`; the `varying` names, the loop's variable and the scalars it assigns, differ
/// between iterations), following the loop around until nothing changes. A region also
/// conflicts with its own next iteration. Names the loop rebinds are compared as the arrays
/// they hold at each phase, in every iteration that can differ (`bindings`).
fn barriers(phases: &[&Kernel], steps: &HostSteps, varying: &HashSet<String>) -> Vec<bool> {
    let n = phases.len();
    let bindings = bindings::Bindings::of(steps, n).unwrap_or_else(|| conservative(steps, n));
    // touched[k][r]: what phase r touches in iteration state k.
    let touched: Vec<Vec<Footprint>> = bindings
        .phases
        .iter()
        .map(|at| {
            phases
                .iter()
                .zip(at)
                .map(|(k, held)| Footprint::of(&bindings::bound_arrays(k, held), varying))
                .collect()
        })
        .collect();
    let comm: Vec<bool> = phases.iter().map(|k| k.comm.is_some()).collect();
    // Phase `a` of lap `la` against phase `b` of lap `lb >= la`, in every iteration state.
    let conflict = |(la, a): (usize, usize), (lb, b): (usize, usize)| {
        if comm[a] && comm[b] {
            // Puts and waits touch memory only through NVSHMEM, which orders them itself.
            return false;
        }
        (0..touched.len()).any(|k| touched[k][a].conflicts(&touched[bindings.after(k, lb - la)][b]))
    };
    let mut after = vec![false; n];
    loop {
        let before = after.clone();
        // Three laps reach the steady state of the pending set whatever the flags are.
        let mut pending: Vec<(usize, usize)> = vec![];
        for step in 0..3 * n {
            let (lap, r) = (step / n, step % n);
            if pending.iter().any(|&m| conflict(m, (lap, r))) {
                after[(r + n - 1) % n] = true;
                pending.clear();
            }
            pending.push((lap, r));
            if after[r] {
                pending.clear();
            }
        }
        if after == before {
            return after;
        }
    }
}

/// Every name of a rebinding group spelled as the group's first array, in one iteration
/// state: any name may be any array of its group.
fn conservative(steps: &HostSteps, n: usize) -> bindings::Bindings {
    let canonical: std::collections::HashMap<String, String> = steps
        .groups
        .iter()
        .flat_map(|g| {
            g.names
                .iter()
                .map(move |name| (name.clone(), g.slots[0].clone()))
        })
        .collect();
    bindings::Bindings {
        phases: vec![vec![canonical; n]],
        next: vec![0],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontend::source::SourceFile;

    fn schedule(src: &str, automatic: bool) -> Result<(Vec<Kernel>, Vec<Launch>)> {
        let file = SourceFile::new("t.py", src);
        let mut func = crate::passes::attach_pragmas::tests::attached(src)?;
        crate::passes::device_statements::run(&mut func, |at| file.line_of(at.start as usize));
        let kernels = crate::passes::outline::run(&func)?;
        let launches = run(&file, &func, &kernels, automatic)?;
        Ok((kernels, launches))
    }

    const JACOBI: &str = "def f(A, B, N, T):
    for t in range(T):
        #pragma parallel for
        for i in range(1, N - 1):
            B[i] = A[i - 1] + A[i + 1]
        #pragma parallel for
        for i in range(1, N - 1):
            A[i] = B[i - 1] + B[i + 1]
";

    fn persistent(l: &Launch) -> &Persistent {
        match l {
            Launch::Persistent(p) => p,
            other => panic!("not persistent: {other:?}"),
        }
    }

    #[test]
    fn a_time_loop_of_regions_becomes_one_persistent_kernel() {
        let (_, launches) = schedule(JACOBI, true).unwrap();
        assert_eq!(launches.len(), 1);
        let p = persistent(&launches[0]);
        assert_eq!(p.var, "t");
        assert_eq!(p.regions, vec![0, 1]);
        // B is written then read by the other phase, A likewise: a barrier after each.
        assert_eq!(p.barrier_after, vec![true, true]);
    }

    #[test]
    fn automatic_persistence_can_be_turned_off() {
        let (_, launches) = schedule(JACOBI, false).unwrap();
        assert_eq!(launches, vec![Launch::Region(0), Launch::Region(1)]);
    }

    #[test]
    fn phases_writing_different_rows_of_one_array_share_a_barrier() {
        // fdtd_2d's step: row 0 of ey, then its other rows, then ex; hz reads both. Only the
        // last two phases need a barrier after them.
        let src = "def f(ex, ey, hz, fict, NX, NY, T):
    for t in range(T):
        #pragma parallel for
        for j in range(NY):
            ey[0, j] = fict[t]
        #pragma parallel for
        for i in range(1, NX):
            for j in range(NY):
                ey[i, j] = ey[i, j] - 0.5 * (hz[i, j] - hz[i - 1, j])
        #pragma parallel for
        for i in range(NX):
            for j in range(1, NY):
                ex[i, j] = ex[i, j] - 0.5 * (hz[i, j] - hz[i, j - 1])
        #pragma parallel for
        for i in range(NX - 1):
            for j in range(NY - 1):
                hz[i, j] = hz[i, j] - 0.7 * (ex[i, j + 1] - ex[i, j] + ey[i + 1, j] - ey[i, j])
";
        let (_, launches) = schedule(src, true).unwrap();
        assert_eq!(
            persistent(&launches[0]).barrier_after,
            vec![false, false, true, true]
        );
        // Row 1 instead of row 0 meets the second phase's rows: a barrier after the first.
        let (_, launches) = schedule(
            &src.replace("ey[0, j] = fict[t]", "ey[1, j] = fict[t]"),
            true,
        )
        .unwrap();
        assert_eq!(
            persistent(&launches[0]).barrier_after,
            vec![true, false, true, true]
        );
    }

    #[test]
    fn a_row_the_loop_variable_picks_may_be_any_row() {
        // Within one iteration rows t and t + 1 differ, but the next iteration's row t is this
        // one's t + 1: the host loop's variable is never a symbol of the footprint.
        let src = "def f(X, Y, N, T):
    for t in range(T):
        #pragma parallel for
        for i in range(N):
            X[t, i] = 1.0
        #pragma parallel for
        for i in range(N):
            Y[i] = X[t + 1, i]
";
        let (kernels, _) = schedule(src, true).unwrap();
        let varying = HashSet::from(["t".to_string()]);
        let (w, r) = (
            Footprint::of(&kernels[0], &varying),
            Footprint::of(&kernels[1], &varying),
        );
        assert!(w.conflicts(&r));
        // Were `t` held still, the two rows would be apart.
        let (w, r) = (
            Footprint::of(&kernels[0], &HashSet::new()),
            Footprint::of(&kernels[1], &HashSet::new()),
        );
        assert!(!w.conflicts(&r));
    }

    #[test]
    fn independent_phases_share_a_barrier() {
        // The two first regions touch different arrays: one barrier after the second suffices
        // (the third reads what both wrote), and one after the third (the next iteration's
        // first region writes X, which the third reads).
        let src = "def f(X, Y, Z, N, T):
    for t in range(T):
        #pragma parallel for
        for i in range(N):
            X[i] = X[i] + 1.0
        #pragma parallel for
        for i in range(N):
            Y[i] = Y[i] * 2.0
        #pragma parallel for
        for i in range(N):
            Z[i] = X[N - 1 - i] + Y[N - 1 - i]
";
        let (_, launches) = schedule(src, true).unwrap();
        assert_eq!(
            persistent(&launches[0]).barrier_after,
            vec![false, true, true]
        );
    }

    #[test]
    fn swapped_buffers_are_the_arrays_they_hold_and_edge_copies_commute() {
        // smooth_swap: the interior and four edge copies write B from A, then the buffers
        // swap. Within a step they touch two different buffers and the copies meet only
        // where they store the same element of A: one barrier, where the swap makes the next
        // step read what this one wrote.
        let src = "def f(A, B, T):
    M, N = A.shape
    for t in range(T):
        #pragma parallel for
        for i in range(1, M - 1):
            #pragma simd
            for j in range(1, N - 1):
                B[i, j] = 0.25 * (A[i - 1, j] + A[i + 1, j] + A[i, j - 1] + A[i, j + 1])
        #pragma parallel for
        for j in range(N):
            B[0, j] = A[0, j]
        #pragma parallel for
        for j in range(N):
            B[M - 1, j] = A[M - 1, j]
        #pragma parallel for
        for i in range(M):
            B[i, 0] = A[i, 0]
        #pragma parallel for
        for i in range(M):
            B[i, N - 1] = A[i, N - 1]
        A, B = B, A
    return A
";
        let barriers = |src: &str| {
            let (_, launches) = schedule(src, true).unwrap();
            persistent(&launches[0]).barrier_after.clone()
        };
        assert_eq!(barriers(src), [false, false, false, false, true]);
        // Edges that store different values where they may meet (rows 0 and M - 1 when
        // M = 1, columns 0 and N - 1 when N = 1) keep their order.
        assert_eq!(
            barriers(&src.replace("B[i, 0] = A[i, 0]", "B[i, 0] = 2.0 * A[i, 0]")),
            [false, false, true, true, true]
        );
        // So do copies from an array that one of them writes.
        assert_eq!(
            barriers(&src.replace("B[M - 1, j] = A[M - 1, j]", "A[M - 1, j] = B[M - 1, j]")),
            [false, true, true, false, true]
        );
    }

    #[test]
    fn a_region_that_reads_what_it_wrote_last_iteration_gets_a_barrier() {
        let src = "def f(P, N):
    for k in range(N):
        #pragma parallel for
        for i in range(N):
            #pragma simd
            for j in range(N):
                P[i, j] = min(P[i, j], P[i, k] + P[k, j])
";
        let (_, launches) = schedule(src, true).unwrap();
        let p = persistent(&launches[0]);
        assert_eq!(p.var, "k");
        assert_eq!(p.barrier_after, vec![true]);
    }

    #[test]
    fn host_code_in_the_body_keeps_separate_launches() {
        let src = "def f(A, N, T):
    for t in range(T):
        print(t)
        #pragma parallel for
        for i in range(N):
            A[i] = A[i] + t
";
        let (_, launches) = schedule(src, true).unwrap();
        assert_eq!(launches, vec![Launch::Region(0)]);
    }

    #[test]
    fn host_scalar_steps_stay_in_the_persistent_kernel_and_vary_between_iterations() {
        let src = "def f(A, N, T):
    s = 0
    for t in range(T):
        s = s + t * 2
        #pragma parallel for
        for i in range(N):
            A[s + i] = A[s + i] + 1.0
    return s
";
        let (_, launches) = schedule(src, true).unwrap();
        let p = persistent(&launches[0]);
        assert_eq!(p.steps.carried.len(), 1);
        assert_eq!(p.outputs, ["s"]);
        // `s` differs between iterations: the region may meet its own last iteration.
        assert_eq!(p.barrier_after, [true]);
    }

    #[test]
    fn a_region_s_scalars_are_typed_as_its_kernel_takes_them() {
        // `k` reaches an index through a local, `n` an integer operator: both are integer
        // parameters of the printed kernel, and the steps must see them so.
        let src = "def f(A, N, T, k, n, x):
    for t in range(T):
        #pragma parallel for
        for i in range(N):
            j = k + i
            A[j] = n // 2 + x
";
        let (kernels, _) = schedule(src, true).unwrap();
        let reads = scalar_reads(&kernels[0]);
        for (name, ty) in [
            ("N", ScalarType::Int),
            ("k", ScalarType::Int),
            ("n", ScalarType::Int),
            ("x", ScalarType::Float),
        ] {
            assert_eq!(reads.get(name), Some(&ty), "{name}: {reads:?}");
        }
        assert!(!reads.contains_key("j") && !reads.contains_key("i"));
    }

    #[test]
    fn a_loop_inside_a_region_is_never_a_host_loop() {
        // After strip-mining the row loop binds only a vector `i` (a row tile): it is the
        // kernel's own loop all the same.
        let src = "def f(A, out, M, N):
    #pragma parallel for simd
    for j in range(N):
        s = 0.0
        for i in range(M):
            s += A[i, j]
        out[j] = s
";
        let file = SourceFile::new("t.py", src);
        let func = crate::passes::attach_pragmas::tests::attached(src).unwrap();
        let mut kernels = crate::passes::outline::run(&func).unwrap();
        crate::passes::strip_mine::run(&mut kernels[0]).unwrap();
        let launches = run(&file, &func, &kernels, true).unwrap();
        assert_eq!(launches, vec![Launch::Region(0)]);
    }

    #[test]
    fn the_loop_variable_read_after_the_loop_is_an_output() {
        let src = "def f(A, N, T):
    for t in range(T):
        #pragma parallel for
        for i in range(N):
            A[i] = A[i] + 1.0
    return t
";
        let (_, launches) = schedule(src, true).unwrap();
        let p = persistent(&launches[0]);
        assert_eq!(p.outputs, ["t"]);
        // Unbound before the loop: bound only when an iteration runs.
        assert!(p.bind_if_ran);
        assert!(
            !p.var_register(),
            "without a break the host knows the last value"
        );
        let bound = src.replace("    for t", "    t = 0\n    for t");
        let (_, launches) = schedule(&bound, true).unwrap();
        assert!(!persistent(&launches[0]).bind_if_ran);
        // A loop that breaks keeps the variable in a register.
        let breaks = src.replace(
            "    return t",
            "        if T > 2:\n            break\n    return t",
        );
        let (_, launches) = schedule(&breaks, true).unwrap();
        assert!(persistent(&launches[0]).var_register());
    }

    const BREAK_THEN_SWAP: &str = "def f(A, B, N, tol, T):
    sweeps = 0
    for t in range(T):
        diff = 0.0
        #pragma parallel for reduction(max:diff)
        for i in range(1, N - 1):
            B[i] = A[i - 1] + A[i + 1]
            diff = max(diff, abs(B[i] - A[i]))
        if diff < tol:
            break
        A, B = B, A
        sweeps += 1
        #pragma parallel for
        for i in range(N):
            A[i] = 0.5 * A[i]
    return A, t, sweeps
";

    /// The first launch of a one-loop function (its reductions found), and the notes
    /// `schedule::run` gives.
    fn scheduled_with_notes(src: &str) -> (Launch, Vec<String>) {
        let file = SourceFile::new("t.py", src);
        let mut func = crate::passes::attach_pragmas::tests::attached(src).unwrap();
        crate::passes::device_statements::run(&mut func, |at| file.line_of(at.start as usize));
        let mut kernels = crate::passes::outline::run(&func).unwrap();
        // Reduction clauses and results read after a region: the shared scalars of a region.
        let pragmas = crate::frontend::pragma::collect_pragmas(&file).unwrap();
        crate::passes::live_out::run(&file, &func, &mut kernels);
        for k in kernels.iter_mut() {
            crate::passes::shared_scalars::run(k, &pragmas, &mut vec![]).unwrap();
        }
        let mut notes = vec![];
        let launches = run_with_notes(&file, &func, &kernels, true, &mut notes).unwrap();
        let notes = notes
            .into_iter()
            .map(|n| format!("{}: {}", n.message, n.label.unwrap_or_default()))
            .collect();
        (launches[0].clone(), notes)
    }

    #[test]
    fn a_break_that_more_statements_follow_runs_in_its_place() {
        let (launch, notes) = scheduled_with_notes(BREAK_THEN_SWAP);
        let p = persistent(&launch);
        assert_eq!(p.regions, [0, 1], "{notes:?}");
        assert!(p.breaks());
        // After the reduction's phase and its fold, before the swap, the counter and the
        // second region.
        let exit = p.steps.exit().unwrap();
        assert_eq!(exit.before, 1);
        let at = p.steps.steps.iter().position(|s| s.kind == StepKind::Break);
        let kinds: Vec<&StepKind> = p.steps.steps.iter().map(|s| &s.kind).collect();
        assert!(
            matches!(kinds[at.unwrap() - 1], StepKind::Reduced { .. }),
            "{kinds:?}"
        );
        assert!(kinds[at.unwrap() + 1..]
            .iter()
            .all(|k| matches!(k, StepKind::Rebind | StepKind::Scalar)));
        // The loop variable where it broke, the array `A` names, the counter.
        assert!(p.var_register());
        assert_eq!(p.outputs, ["t", "sweeps", "A"]);
        // The reduction's phase has its barrier; the test reads the fold after it.
        assert!(p.barrier_after[0]);
        // The blocked paths take no loop that breaks.
        assert!(p.stencil.is_none() && p.stencil_2d.is_none());
    }

    #[test]
    fn a_break_anywhere_keeps_the_loop_off_the_blocked_kernels() {
        // jacobi_1d with a break between its phases is still persistent, not a stencil.
        let src = JACOBI.replace(
            "        #pragma parallel for\n        for i in range(1, N - 1):\n            A[i]",
            "        if t > 3:\n            break\n        #pragma parallel for\n        for i in range(1, N - 1):\n            A[i]",
        );
        assert_ne!(src, JACOBI);
        let (_, launches) = schedule(&src, true).unwrap();
        assert_eq!(persistent(&launches[0]).steps.exit().unwrap().before, 1);
        assert!(stencil_of(&src).is_none());
        assert!(stencil_of(JACOBI).is_some());
        // smooth_swap with a break before the swap: not the 2-D swapped stencil.
        let swap = SMOOTH_SWAP.replace(
            "        A, B = B, A",
            "        if t > 3:\n            break\n        A, B = B, A",
        );
        assert_ne!(swap, SMOOTH_SWAP);
        assert!(stencil_2d_of(&swap).is_err());
    }

    #[test]
    fn a_second_break_or_a_name_a_break_leaves_unbound_keeps_the_loop_on_the_host() {
        let twice = BREAK_THEN_SWAP.replace(
            "        sweeps += 1\n",
            "        sweeps += 1\n        if sweeps > 9:\n            break\n",
        );
        let (launch, notes) = scheduled_with_notes(&twice);
        assert!(matches!(launch, Launch::Region(0)), "{launch:?}");
        assert!(
            notes
                .iter()
                .any(|n| n.contains("stays on the host") && n.contains("a second `if ...: break`")),
            "{notes:?}"
        );
        // `sweeps` first assigned after the break, unbound before the loop.
        let unbound = BREAK_THEN_SWAP
            .replace("    sweeps = 0\n", "")
            .replace("sweeps += 1", "sweeps = t + 1");
        let (launch, notes) = scheduled_with_notes(&unbound);
        assert!(matches!(launch, Launch::Region(0)), "{launch:?}");
        assert!(
            notes.iter().any(|n| n.contains("may leave it unbound")),
            "{notes:?}"
        );
        // Bound before: the register starts from the host's value.
        let bound = BREAK_THEN_SWAP.replace("sweeps += 1", "sweeps = t + 1");
        let (launch, _) = scheduled_with_notes(&bound);
        let c = &persistent(&launch).steps.carried;
        assert!(
            c.iter().any(|c| c.name == "sweeps" && c.needs_initial),
            "{c:?}"
        );
    }

    #[test]
    fn a_break_beside_nvshmem_calls_is_an_error() {
        // The NVSHMEM runner reads no registers back (a closing break once failed there).
        let src = "from appyc_aot import nvshmem
import numpy as np


def f(A, M, N, T):
    me = nvshmem.my_pe()
    npes = nvshmem.n_pes()
    flags = np.zeros(2, dtype=np.int64)
    for t in range(1, T + 1):
        nvshmem.Putmem(A[0, 1:N - 1], A[M - 2, 1:N - 1], (me + 1) % npes, flags[0], t)
        nvshmem.SignalWait(flags[0], t)
        #pragma 1:M-1=>parallel 1:N-1=>parallel
        A[1:M-1, 1:N-1] = 0.5 * (A[0:M-2, 1:N-1] + A[2:M, 1:N-1])
        if t > 5:
            break
";
        let options = crate::driver::Options::default();
        // Closing, and before the region.
        let mid = src
            .replace("        if t > 5:\n            break\n", "")
            .replace(
                "        #pragma 1:M-1",
                "        if t > 5:\n            break\n        #pragma 1:M-1",
            );
        assert!(mid.contains("break\n        #pragma"), "{mid}");
        for src in [src.to_string(), mid] {
            let Err(err) = crate::driver::compile(&SourceFile::new("t.py", &src), &options) else {
                panic!("compiled:\n{src}");
            };
            let text = format!("{err:?}");
            assert!(
                text.contains("a break beside nvshmem calls needs the host"),
                "{text}"
            );
        }
    }

    #[test]
    fn host_scalars_beside_nvshmem_calls_are_registers_but_swaps_need_the_host() {
        let src = "from appyc_aot import nvshmem
import numpy as np

def f(A, B, M, N, T):
    me = nvshmem.my_pe()
    npes = nvshmem.n_pes()
    flags = np.zeros(2, dtype=np.int64)
    for t in range(T):
        k = t + 1
        nvshmem.Putmem(A[0, 1:N - 1], A[M - 2, 1:N - 1], (me + 1) % npes, flags[0], k)
        nvshmem.SignalWait(flags[0], k)
        #pragma 1:M-1=>parallel 1:N-1=>parallel
        B[1:M-1, 1:N-1] = 0.5 * (A[0:M-2, 1:N-1] + A[2:M, 1:N-1])
";
        let options = crate::driver::Options::default();
        let out = crate::driver::compile(&SourceFile::new("t.py", src), &options)
            .unwrap()
            .text;
        assert!(
            out.contains("_appyc_state = _appyc_nvshmem_persistent("),
            "{out}"
        );
        let swap = format!("{src}        A, B = B, A\n");
        let Err(err) = crate::driver::compile(&SourceFile::new("t.py", &swap), &options) else {
            panic!("compiled:\n{swap}");
        };
        let text = format!("{err:?}");
        assert!(
            text.contains("host statements beside nvshmem calls need the host"),
            "{text}"
        );
    }

    #[test]
    fn only_names_read_after_the_loop_come_back() {
        // `s` and `c` are assigned before the loop and never read after it; `d` is read after;
        // in an outer loop, `e` is read before the inner loop, which its next turn runs after.
        let src = "def f(A, N, T):
    s = 0
    c = 1.0
    d = 0
    e = 0
    for r in range(3):
        A[0] = e
        for t in range(T):
            s = s + 1
            c = c * 0.5
            d = d + t
            e = e + 1
            #pragma parallel for
            for i in range(N):
                A[i] = A[i] + s * c + d + e
    return d
";
        let (_, launches) = schedule(src, true).unwrap();
        let p = persistent(&launches[0]);
        assert_eq!(p.var, "t");
        assert_eq!(p.outputs, ["d", "e"]);
        assert!(!p.bind_if_ran);
    }

    #[test]
    fn a_requested_persistent_loop_that_cannot_be_is_an_error() {
        let src = "def f(A, N, T):
    #pragma persistent for
    for t in range(T):
        print(t)
        #pragma parallel for
        for i in range(N):
            A[i] = A[i] + t
";
        let err = schedule(src, false).unwrap_err();
        assert!(
            err.message.contains("cannot run as one persistent kernel"),
            "{}",
            err.message
        );
    }

    #[test]
    fn a_requested_persistent_loop_is_made_even_when_automatic_is_off() {
        let src = JACOBI.replace("    for t", "    #pragma persistent for\n    for t");
        let (_, launches) = schedule(&src, false).unwrap();
        assert_eq!(persistent(&launches[0]).regions, vec![0, 1]);
    }

    #[test]
    fn only_the_innermost_eligible_loop_of_a_nest_is_persistent() {
        // The outer loop's body is a host loop, not a region: the inner loop is taken.
        let src = "def f(A, N, T):
    for s in range(3):
        for t in range(T):
            #pragma parallel for
            for i in range(N):
                A[i] = A[i] + 1.0
";
        let (_, launches) = schedule(src, true).unwrap();
        assert_eq!(persistent(&launches[0]).var, "t");
    }

    /// The stencil schedule::run finds in a one-loop function (None when not persistent).
    fn stencil_of(src: &str) -> Option<temporal::Stencil> {
        let (_, launches) = schedule(src, true).unwrap();
        match &launches[0] {
            Launch::Persistent(p) => p.stencil.clone(),
            _ => None,
        }
    }

    #[test]
    fn a_loop_of_one_dimensional_constant_offset_phases_is_a_stencil() {
        let st = stencil_of(JACOBI).expect("jacobi is a stencil");
        assert_eq!(st.radius, 1);
        assert_eq!(st.phases.len(), 2);
        assert_eq!(
            (st.phases[0].target.as_str(), st.phases[1].target.as_str()),
            ("B", "A")
        );
        assert!(!st.phases[0].reads_target);
        // Host scalars, the index itself, a float division, a farther offset.
        let wider = JACOBI.replace("A[i - 1] + A[i + 1]", "alpha * A[i - 3] / 2.0 + i");
        assert_eq!(stencil_of(&wider).expect("still a stencil").radius, 3);
    }

    #[test]
    fn a_stencil_with_scalar_registers_is_blocked_unless_a_step_reads_the_loop() {
        let decaying = "def f(A, B, N, T, dt, decay):\n    for t in range(T):\n        #pragma parallel for\n        for i in range(1, N - 1):\n            B[i] = A[i] + dt * (A[i - 1] + A[i + 1])\n        #pragma parallel for\n        for i in range(1, N - 1):\n            A[i] = B[i]\n        dt = dt * decay\n    return dt\n";
        let st = stencil_of(decaying).expect("a register stepped alike by every program");
        assert_eq!(st.phases.len(), 2);
        for (from, to) in [
            // The blocked kernel counts steps, not the range: no loop variable in a step.
            ("dt = dt * decay", "dt = dt * t"),
            // A shape in a step.
            ("dt = dt * decay", "dt = dt * A.shape[0]"),
            // A swap is a rebinding, not a scalar.
            ("dt = dt * decay", "A, B = B, A"),
        ] {
            let src = decaying.replacen(from, to, 1);
            assert_ne!(src, decaying, "{from}");
            assert!(stencil_of(&src).is_none(), "{src}");
        }
    }

    #[test]
    fn anything_else_is_not_a_stencil() {
        for (from, to) in [
            // The loop variable in a value or a bound.
            ("A[i - 1] + A[i + 1]", "A[i - 1] + t"),
            (
                "range(1, N - 1):\n            B[i]",
                "range(1, N - t):\n            B[i]",
            ),
            // An index that is not `i + c`.
            ("A[i - 1] + A[i + 1]", "A[N - 1 - i]"),
            ("A[i - 1] + A[i + 1]", "A[2 * i]"),
            // A write away from `i`.
            ("            B[i] =", "            B[i + 1] ="),
            // Integer division (Triton and NumPy disagree), a call.
            ("A[i - 1] + A[i + 1]", "N / 2"),
            ("A[i - 1] + A[i + 1]", "abs(A[i])"),
            // Two statements in a phase.
            (
                "            B[i] = A[i - 1] + A[i + 1]\n",
                "            B[i] = A[i - 1]\n            B[i] = B[i] + A[i + 1]\n",
            ),
        ] {
            let src = JACOBI.replacen(from, to, 1);
            assert_ne!(src, JACOBI, "{from}");
            assert!(stencil_of(&src).is_none(), "{src}");
        }
        // Two dimensions.
        let grid = "def f(A, B, N, T):\n    for t in range(T):\n        #pragma parallel for\n        for i in range(1, N - 1):\n            #pragma parallel for\n            for j in range(N):\n                B[i, j] = A[i - 1, j]\n";
        assert!(stencil_of(grid).is_none());
    }

    const JACOBI_2D: &str = "def f(A, B, M, N, T):
    for t in range(T):
        #pragma parallel for
        for i in range(1, M - 1):
            #pragma simd
            for j in range(1, N - 1):
                B[i, j] = 0.2 * (A[i, j] + A[i, j - 1] + A[i, j + 1] + A[i + 1, j] + A[i - 1, j])
        #pragma parallel for
        for i in range(1, M - 1):
            #pragma simd
            for j in range(1, N - 1):
                A[i, j] = 0.2 * (B[i, j] + B[i, j - 1] + B[i, j + 1] + B[i + 1, j] + B[i - 1, j])
";

    /// The 2-D stencil of a one-loop function, or the note saying why not.
    fn stencil_2d_of(src: &str) -> std::result::Result<temporal::Stencil2d, String> {
        let (p, notes) = persistent_loop_of(src);
        p.stencil_2d.ok_or_else(|| format!("{notes:?}"))
    }

    /// The 3-D stencil of a one-loop function, or the note saying why not.
    fn stencil_3d_of(src: &str) -> std::result::Result<temporal::Stencil3d, String> {
        let (p, notes) = persistent_loop_of(src);
        p.stencil_3d.ok_or_else(|| format!("{notes:?}"))
    }

    /// The persistent loop of a one-loop function, after the driver's passes, and the notes.
    fn persistent_loop_of(src: &str) -> (Persistent, Vec<Diagnostic>) {
        use crate::passes::{lower_tensor, row_block, strip_mine, vectorize_parallel};
        let file = SourceFile::new("t.py", src);
        let mut func = crate::passes::attach_pragmas::tests::attached(src).unwrap();
        // Bare assignments in the loop become regions (the boundary copies of a swap loop).
        crate::passes::device_statements::run(&mut func, |at| file.line_of(at.start as usize));
        let mut kernels = crate::passes::outline::run(&func).unwrap();
        // The driver's passes up to scheduling: a `simd` loop becomes a grid dimension.
        for k in kernels.iter_mut() {
            lower_tensor::split(k).unwrap();
            crate::passes::insert_sync::run(k);
            lower_tensor::lower(k, &lower_tensor::Options { auto_simd: true }).unwrap();
            // The driver's candidates (`driver::strip_mine`): row blocks first.
            let mut v = k.clone();
            let mut candidates = vec![];
            if vectorize_parallel::run(&mut v) {
                candidates.push(v.clone());
            }
            if row_block::run(&mut v) {
                candidates.insert(0, v);
            }
            if let Some(done) = candidates
                .into_iter()
                .find_map(|mut c| strip_mine::run(&mut c).is_ok().then_some(c))
            {
                *k = done;
                continue;
            }
            strip_mine::run(k).unwrap();
        }
        let mut notes = vec![];
        let launches = run_with_notes(&file, &func, &kernels, true, &mut notes).unwrap();
        (persistent(&launches[0]).clone(), notes)
    }

    const SMOOTH_SWAP: &str = "def f(A, B, M, N, T):
    for t in range(T):
        #pragma parallel for
        for i in range(1, M - 1):
            #pragma simd
            for j in range(1, N - 1):
                B[i, j] = 0.2 * (A[i, j] + A[i - 1, j] + A[i + 1, j] + A[i, j - 1] + A[i, j + 1])
        B[0, :] = A[0, :]
        B[M - 1, :] = A[M - 1, :]
        B[:, 0] = A[:, 0]
        B[:, N - 1] = A[:, N - 1]
        A, B = B, A
    return A
";

    #[test]
    fn a_swapped_stencil_is_two_alternating_phases_with_its_boundary_copies_peeled() {
        let st = stencil_2d_of(SMOOTH_SWAP).expect("smooth_swap");
        assert!(st.swapped);
        assert_eq!(st.peeled, vec![1, 2, 3, 4]);
        // Two iterations spelled with the arrays: B <- A, then A <- B.
        assert_eq!(st.arrays(), ("A", "B"));
        assert_eq!(st.phases[0].source.as_deref(), Some("A"));
        assert_eq!(st.phases[1].target, "A");
        assert!(crate::ir::python::expr(&st.phases[1].value).contains("B[i - 1, j]"));
        assert_eq!(st.reach(), 2);
        // No copies: still blocked, nothing peeled.
        let bare = SMOOTH_SWAP
            .lines()
            .filter(|l| !l.contains("] = A["))
            .collect::<Vec<_>>()
            .join("\n");
        let st = stencil_2d_of(&bare).expect("swap without copies");
        assert!(st.swapped && st.peeled.is_empty());
    }

    #[test]
    fn a_swap_loop_is_refused_when_a_copy_could_meet_the_stencil_or_the_swap_is_not_one() {
        for (from, to) in [
            ("B[0, :] = A[0, :]", "B[1, :] = A[1, :]"), // into the stencil's rows
            ("B[0, :] = A[0, :]", "B[-1, :] = A[-1, :]"), // counts from the end
            ("B[:, 0] = A[:, 0]", "B[:, 0] = A[:, 1]"), // another place
            ("B[:, 0] = A[:, 0]", "A[:, 0] = B[:, 0]"), // the other way
            ("B[M - 1, :] = A[M - 1, :]", "B[M - 2, :] = A[M - 2, :]"), // the last row written
            ("A, B = B, A", "A, B = B, B"),             // not a swap
        ] {
            let src = SMOOTH_SWAP.replacen(from, to, 1);
            assert!(stencil_2d_of(&src).is_err(), "{src}");
        }
        // The loop variable read after the loop: the blocked path cannot give it.
        let reads_t = SMOOTH_SWAP.replace("    return A", "    return A, t");
        assert!(stencil_2d_of(&reads_t).is_err());
    }

    #[test]
    fn two_dimensional_alternating_phases_are_a_2d_stencil_in_either_spelling() {
        let st = stencil_2d_of(JACOBI_2D).expect("loop-form jacobi_2d");
        assert_eq!(st.arrays(), ("A", "B"));
        assert_eq!(st.reach(), 2);
        assert!(!st.diagonal);
        assert_eq!(st.phases[0].source.as_deref(), Some("A"));
        let tensor = "def f(A, B, M, N, T):
    for t in range(T):
        #pragma 1:M-1=>parallel 1:N-1=>parallel
        B[1:M-1, 1:N-1] = 0.2 * (A[1:M-1, 1:N-1] + A[1:M-1, :N-2] + A[1:M-1, 2:N] + A[2:M, 1:N-1] + A[0:M-2, 1:N-1])
        #pragma 1:M-1=>parallel 1:N-1=>simd
        A[1:M-1, 1:N-1] = 0.2 * (B[1:M-1, 1:N-1] + B[1:M-1, :N-2] + B[1:M-1, 2:N] + B[2:M, 1:N-1] + B[0:M-2, 1:N-1])
";
        let st = stencil_2d_of(tensor).expect("tensor-form jacobi_2d");
        assert_eq!(st.arrays(), ("A", "B"));
        assert_eq!(st.reach(), 2);
        // A 9-point stencil reads diagonally; a one-sided one, host scalars, a float division.
        let nine = JACOBI_2D.replacen(
            "A[i - 1, j])",
            "A[i - 1, j] + A[i + 1, j + 1] + A[i - 1, j - 1])",
            1,
        );
        assert!(stencil_2d_of(&nine).expect("9-point").diagonal);
        let one_sided = JACOBI_2D.replacen(
            "0.2 * (A[i, j] + A[i, j - 1] + A[i, j + 1] + A[i + 1, j] + A[i - 1, j])",
            "A[i, j] - c * (A[i, j + 1] - A[i, j]) / 2.0",
            1,
        );
        let one_sided = one_sided.replacen("def f(A, B, M, N, T)", "def f(A, B, M, N, T, c)", 1);
        assert_eq!(stencil_2d_of(&one_sided).expect("one-sided").reach(), 2);
    }

    #[test]
    fn a_2d_loop_that_breaks_the_single_buffer_condition_is_refused() {
        let b_phase =
            "B[i, j] = 0.2 * (A[i, j] + A[i, j - 1] + A[i, j + 1] + A[i + 1, j] + A[i - 1, j])";
        for (from, to) in [
            // An offset past 1.
            ("A[i, j - 1]", "A[i, j - 2]"),
            // Reading both arrays, or the target itself.
            ("A[i, j - 1]", "B[i, j - 1]"),
            ("A[i + 1, j]", "B[i + 1, j]"),
            // An index variable or the loop variable in a value; an index that is not `i + a`.
            ("A[i, j - 1]", "i"),
            ("A[i, j - 1]", "t"),
            ("A[i, j - 1]", "A[j, i]"),
            // Integer division; a call.
            ("A[i, j - 1]", "N / 2"),
            ("A[i, j - 1]", "abs(A[i, j - 1])"),
            // The target away from `(i, j)`.
            ("B[i, j] =", "B[i + 1, j] ="),
            // B written over another rectangle than... (A's phases keep theirs): a bound that moves.
            ("for i in range(1, M - 1):\n            #pragma simd\n            for j in range(1, N - 1):\n                B", "for i in range(1, M - t):\n            #pragma simd\n            for j in range(1, N - 1):\n                B"),
        ] {
            let src = JACOBI_2D.replacen(from, to, 1);
            assert_ne!(src, JACOBI_2D, "{from}");
            assert!(stencil_2d_of(&src).is_err(), "{src}");
        }
        // `appyc -v` says why.
        let far = stencil_2d_of(&JACOBI_2D.replacen("A[i, j - 1]", "A[i, j - 2]", 1));
        assert!(far.unwrap_err().contains("an offset past 1"));
        // One phase a step (B from A only): nothing alternates.
        let one = JACOBI_2D
            .split("        #pragma parallel for\n")
            .take(2)
            .collect::<Vec<_>>()
            .join("        #pragma parallel for\n");
        assert!(one.contains(b_phase));
        assert!(stencil_2d_of(&one).is_err(), "{one}");
        // Two phases writing A over different rectangles (A from B twice in a row is refused
        // too: a phase writing what the one before it wrote).
        let four = format!(
            "{JACOBI_2D}{}",
            &JACOBI_2D[JACOBI_2D.find("        #pragma").unwrap()..]
        );
        assert!(stencil_2d_of(&four).is_ok(), "{four}");
        let moved = four.replacen("A[i, j] = 0.2", "A[i, j] = 0.1", 1);
        assert!(stencil_2d_of(&moved).is_ok());
        let narrower = {
            let at = four.rfind("range(1, M - 1)").unwrap();
            format!(
                "{}range(2, M - 1){}",
                &four[..at],
                &four[at + "range(1, M - 1)".len()..]
            )
        };
        assert!(stencil_2d_of(&narrower).is_err(), "{narrower}");
        // A host step in the loop.
        let shadowed = JACOBI_2D.replacen("for t in range(T)", "for A in range(T)", 1);
        assert!(stencil_2d_of(&shadowed)
            .expect_err("shadowed")
            .contains("bound in the loop"));
        let stepped = JACOBI_2D.replacen("def f(A, B, M, N, T)", "def f(A, B, M, N, T, s)", 1)
            + "        s = s * 2.0\n    return s\n";
        assert!(stencil_2d_of(&stepped).is_err());
    }

    const HEAT_3D: &str = "def f(A, B, T):
    L, M, N = A.shape
    for t in range(T):
        #pragma parallel for
        for i in range(1, L - 1):
            #pragma parallel for
            for j in range(1, M - 1):
                #pragma simd
                for k in range(1, N - 1):
                    B[i, j, k] = 0.125 * (A[i + 1, j, k] - 2.0 * A[i, j, k] + A[i - 1, j, k]) + 0.125 * (A[i, j + 1, k] + A[i, j - 1, k]) + 0.125 * (A[i, j, k + 1] + A[i, j, k - 1])
        #pragma parallel for
        for i in range(1, L - 1):
            #pragma parallel for
            for j in range(1, M - 1):
                #pragma simd
                for k in range(1, N - 1):
                    A[i, j, k] = 0.125 * (B[i + 1, j, k] - 2.0 * B[i, j, k] + B[i - 1, j, k]) + 0.125 * (B[i, j + 1, k] + B[i, j - 1, k]) + 0.125 * (B[i, j, k + 1] + B[i, j, k - 1])
";

    #[test]
    fn three_dimensional_alternating_phases_are_a_3d_stencil_in_either_spelling() {
        let st = stencil_3d_of(HEAT_3D).expect("loop-form heat_3d");
        assert_eq!(st.arrays(), ("A", "B"));
        assert_eq!(st.phases[0].source.as_deref(), Some("A"));
        assert_eq!((st.reach(), st.diagonal), (2, false));
        assert_eq!(crate::ir::python::expr(&st.phases[1].dims[0].2), "L - 1");
        let tensor = "def f(A, B, L, M, N, T):
    for t in range(T):
        #pragma 1:L-1=>parallel 1:M-1=>parallel 1:N-1=>simd
        B[1:L-1, 1:M-1, 1:N-1] = A[0:L-2, 1:M-1, 1:N-1] + A[2:L, 1:M-1, 1:N-1] + A[1:L-1, 0:M-2, 1:N-1]
        #pragma 1:L-1=>parallel 1:M-1=>parallel 1:N-1=>simd
        A[1:L-1, 1:M-1, 1:N-1] = B[1:L-1, 1:M-1, 0:N-2] + B[1:L-1, 1:M-1, 2:N]
";
        assert_eq!(stencil_3d_of(tensor).expect("tensor-form").reach(), 2);
        // Diagonal neighbours within a plane: a second guard row.
        let diag = HEAT_3D.replacen(
            "A[i, j + 1, k] + A[i, j - 1, k]",
            "A[i, j + 1, k + 1] + A[i, j - 1, k]",
            1,
        );
        assert!(stencil_3d_of(&diag).expect("in-plane diagonal").diagonal);
        // A phase reading only its own point: it does not shrink the tile.
        let pointwise = HEAT_3D.replacen(
            "0.125 * (B[i + 1, j, k] - 2.0 * B[i, j, k] + B[i - 1, j, k]) + 0.125 * (B[i, j + 1, k] + B[i, j - 1, k]) + 0.125 * (B[i, j, k + 1] + B[i, j, k - 1])",
            "0.5 * B[i, j, k]",
            1,
        );
        assert_eq!(
            stencil_3d_of(&pointwise).expect("pointwise phase").reach(),
            1
        );
    }

    #[test]
    fn a_3d_loop_the_streamed_kernel_cannot_hold_is_refused_with_the_reason() {
        for (from, to, why) in [
            // A neighbour plane away from (j, k): only its centre is in registers.
            ("A[i + 1, j, k] - 2.0", "A[i + 1, j + 1, k] - 2.0", "neighbour plane"),
            ("A[i, j + 1, k] +", "A[i, j + 2, k] +", "offset past 1"),
            ("A[i, j + 1, k] +", "C[i, j + 1, k] +", "two arrays"),
            // The loop variable named as an array (the fuzzer's find: the launcher then had
            // no such array to pass).
            ("for t in range(T)", "for A in range(T)", "bound in the loop"),
            ("for j in range(1, M - 1):\n                #pragma simd\n                for k in range(1, N - 1):\n                    B", "for j in range(1, M - 1):\n                #pragma simd\n                for k in range(1, N - t):\n                    B", "bound the loop changes"),
        ] {
            let src = HEAT_3D
                .replacen(from, to, 1)
                .replacen("def f(A, B, T)", "def f(A, B, T, C)", 1);
            assert!(HEAT_3D.contains(from), "{from}");
            let why_not = stencil_3d_of(&src).expect_err(&src);
            assert!(why_not.contains(why), "{why}: {why_not}");
        }
        // Host statements in the loop, a break: the plain persistent kernel.
        let stepped = HEAT_3D.replacen("def f(A, B, T)", "def f(A, B, T, s)", 1)
            + "        s = s * 2.0\n    return s\n";
        assert!(stencil_3d_of(&stepped)
            .expect_err("steps")
            .contains("host steps other than one swap"));
        // Three phases, or one.
        let one = HEAT_3D
            .split("        #pragma parallel for\n        for i in range(1, L - 1):")
            .collect::<Vec<_>>();
        let single = format!(
            "{}        #pragma parallel for\n        for i in range(1, L - 1):{}",
            one[0], one[1]
        );
        assert!(stencil_3d_of(&single)
            .expect_err("one phase")
            .contains("1 phases"));
    }

    #[test]
    fn a_swapped_3d_stencil_is_two_alternating_phases_with_its_face_copies_peeled() {
        let src = "def f(A, B, T):
    L, M, N = A.shape
    for t in range(T):
        #pragma parallel for
        for i in range(1, L - 1):
            #pragma parallel for
            for j in range(1, M - 1):
                #pragma simd
                for k in range(1, N - 1):
                    B[i, j, k] = 0.5 * A[i, j, k] + 0.1 * (A[i - 1, j, k] + A[i, j + 1, k])
        B[0, :, :] = A[0, :, :]
        B[:, :, N - 1] = A[:, :, N - 1]
        A, B = B, A
    return A
";
        let st = stencil_3d_of(src).expect("heat swap");
        assert!(st.swapped);
        assert_eq!(st.peeled, vec![1, 2]);
        assert_eq!(st.arrays(), ("A", "B"));
        assert!(crate::ir::python::expr(&st.phases[1].value).contains("B[i - 1, j, k]"));
        // A copy into the stencil's own box is not a boundary copy.
        let inside = src.replace("B[0, :, :] = A[0, :, :]", "B[1, :, :] = A[1, :, :]");
        assert!(stencil_3d_of(&inside)
            .expect_err("copy inside")
            .contains("outside the stencil's box"));
        // The 2-D analysis leaves the face copies (2-D regions) of a 3-D loop alone: no note.
        let (p, notes) = persistent_loop_of(src);
        assert!(p.stencil_2d.is_none() && notes.is_empty(), "{notes:?}");
    }
}
