//! What a persistent kernel carries from phase to phase besides memory: the registers of a time
//! loop's host statements (`schedule::host_steps`), every program holding the same values.
//!
//! Design decisions:
//! - The registers are kernel parameters (their values when the launch starts) and, at the end,
//!   stored by the last program into `_carried` (fp64 slots: which-indices and int64 values up to
//!   2^53 are exact). A launch per phase (the interpreter) passes each launch the last one's
//!   values, so both forms run the same code.
//! - A name that the loop rebinds among arrays (a swap) is a register holding the index of its
//!   array among the group's slots, the arrays the loop starts with; a region reads it through a
//!   local (`_A_now`) that each phase picks from the slots' pointers, strides and shapes. The
//!   regions are printed with those locals in place of the names, so nothing else of the
//!   printer knows about rebinding.
//! - Parameters: the slots replace the group's names, the registers replace the carried
//!   scalars, and the host scalars only steps read join the rest.
//! - A shared scalar a region reduces (`shared(diff)`, `reduction(max:diff)`) goes through
//!   three slots of its buffer, one an iteration (`iteration % 3`), each starting at the
//!   reduction's identity (kept in a fourth): after the region's barrier every program reads
//!   the iteration's slot into its register, and program 0 resets the slot of two iterations
//!   on, which no program reads or updates until another barrier has passed.
//! - A while loop (or a body with `if test: break`) keeps a `running` register: the test is
//!   read where Python reads it (a while loop's before every iteration, a break's in its place
//!   among the steps), and the phase loop runs while it holds. What follows the break in its
//!   phase (the group's later steps, the phase's region, and in the last phase the closing
//!   steps) runs under `if running:`; every phase starts with it set, so later phases need no
//!   guard: the phase loop ends first.

use super::dialect::Dialect;
use super::steps::StepPrinter;
use crate::codegen::analysis::push_unique;
use crate::codegen::kernel_code::{Param, StateParam};
use crate::codegen::writer::Writer;
use crate::ir::*;
use crate::schedule::host_steps::{HostSteps, ScalarType, Step, StepKind};
use std::collections::{HashMap, HashSet};

pub(super) struct LoopState<'a> {
    steps: &'a HostSteps,
    /// Group name → the local a phase picks its array into.
    locals: HashMap<String, String>,
    /// Group name → its register (the slot index it is bound to).
    which: HashMap<String, String>,
    /// Group name → its group's index.
    group_of: HashMap<String, usize>,
    /// Carried scalar → its type.
    types: HashMap<String, ScalarType>,
    /// Shared buffer → the local a phase points at the iteration's slot.
    shared_locals: HashMap<String, String>,
    /// The registers in order: every group name's index, then the carried scalars, then the
    /// loop variable (a loop that breaks and whose variable is read after it), then `running`
    /// (loops with an exit test).
    pub registers: Vec<StateParam>,
    /// The loop variable, when it is a register.
    pub var: Option<String>,
    pub out: String,
    /// Whether the loop runs while a test holds (a while loop, or `if test: break`).
    pub running: Option<String>,
}

/// The names a step's printing refers to: the iteration, the program, the loop variable; and
/// the language the kernel is printed in.
pub(super) struct PhaseNames<'n> {
    pub iteration: &'n str,
    pub pid: &'n str,
    pub loop_var: &'n str,
    pub dialect: Dialect,
}

impl<'a> LoopState<'a> {
    pub fn new(
        steps: &'a HostSteps,
        exits: bool,
        var: Option<&str>,
        fresh: &mut dyn FnMut(&str) -> String,
    ) -> LoopState<'a> {
        let mut s = LoopState {
            steps,
            locals: HashMap::new(),
            which: HashMap::new(),
            group_of: HashMap::new(),
            types: steps
                .carried
                .iter()
                .map(|c| (c.name.clone(), c.ty))
                .collect(),
            shared_locals: HashMap::new(),
            registers: vec![],
            out: fresh("carried"),
            running: None,
            var: var.map(String::from),
        };
        for step in &steps.steps {
            if let StepKind::Reduced { buffer, .. } = &step.kind {
                let local = fresh(&format!("{buffer}_now"));
                s.shared_locals.insert(buffer.clone(), local);
            }
        }
        for (g, group) in steps.groups.iter().enumerate() {
            for name in &group.names {
                let which = fresh(&format!("which_{name}"));
                let initial = group.slots.iter().position(|x| x == name).unwrap_or(0);
                s.registers.push(StateParam {
                    name: which.clone(),
                    initial: initial.to_string(),
                    kind: 'i',
                });
                s.which.insert(name.clone(), which);
                s.locals.insert(name.clone(), fresh(&format!("{name}_now")));
                s.group_of.insert(name.clone(), g);
            }
        }
        for c in &steps.carried {
            let (initial, kind) = match (c.ty, c.needs_initial) {
                (ScalarType::Float, true) => (format!("float({})", c.name), 'f'),
                // Of a type the compiler cannot see: checked at the launch (`_appyc_int_start`).
                (ScalarType::Int, true) if c.start.is_none() => {
                    (format!("_appyc_int_start({})", c.name), 'i')
                }
                (ScalarType::Int, true) => (format!("int({})", c.name), 'i'),
                (ScalarType::Bool, true) => (format!("int(bool({}))", c.name), 'b'),
                (ScalarType::Float, false) => ("0.0".into(), 'f'),
                (ScalarType::Int, false) => ("0".into(), 'i'),
                (ScalarType::Bool, false) => ("0".into(), 'b'),
            };
            s.registers.push(StateParam {
                name: c.name.clone(),
                initial,
                kind,
            });
        }
        if let Some(v) = var {
            // Every iteration assigns it before anything reads it: its first value is unused.
            s.registers.push(StateParam {
                name: v.to_string(),
                initial: "0".into(),
                kind: 'i',
            });
        }
        if exits {
            let running = fresh("running");
            s.registers.push(StateParam {
                name: running.clone(),
                initial: "1".into(),
                kind: 'b',
            });
            s.running = Some(running);
        }
        s
    }

    pub fn is_empty(&self) -> bool {
        self.registers.is_empty()
    }

    /// `k` with every group name and shared buffer spelled as its local.
    pub fn renamed(&self, k: &Kernel) -> Kernel {
        k.with_arrays_renamed(&|a| {
            self.locals
                .get(a)
                .or_else(|| self.shared_locals.get(a))
                .cloned()
        })
    }

    /// `e` (a bound the renamed kernel reads, with group locals in it) as the launcher may
    /// compute it: once for every array each local's group may hold, so that a test the
    /// launcher makes holds whichever array a phase picks (`ONE_STRIP`), and a maximum covers
    /// them all (`ROW_BLOCK`). Without locals, `e` alone.
    pub fn host_spellings(&self, e: &Expr) -> Vec<Expr> {
        let mut out = vec![e.clone()];
        for (name, local) in &self.locals {
            if !e.any(&mut |x| matches!(&x.kind, ExprKind::Shape { array, .. } | ExprKind::Subscript { array, .. } if array == local)) {
                continue;
            }
            let slots = &self.steps.groups[self.group_of[name]].slots;
            out = out
                .iter()
                .flat_map(|f| {
                    slots.iter().map(move |slot| {
                        f.clone().rewrite(&mut |mut x| {
                            if let ExprKind::Shape { array, .. }
                            | ExprKind::Subscript { array, .. } = &mut x.kind
                            {
                                if array == local {
                                    *array = slot.clone();
                                }
                            }
                            x
                        })
                    })
                })
                .collect();
        }
        out
    }

    /// The kernel's parameters with the state in place: a group local's pointer, strides and
    /// shapes come from every slot of its group; carried scalars are registers, not
    /// parameters; host scalars only the steps read are added.
    pub fn params(&self, params: &mut Vec<Param>) {
        let local_group: HashMap<&str, usize> = self
            .locals
            .iter()
            .map(|(n, l)| (l.as_str(), self.group_of[n]))
            .collect();
        let buffer_of: HashMap<&str, &str> = self
            .shared_locals
            .iter()
            .map(|(b, l)| (l.as_str(), b.as_str()))
            .collect();
        // A shared buffer's local reads the buffer's own parameters.
        for q in params.iter_mut() {
            match q {
                Param::Array(a) | Param::Stride(a, _) => {
                    if let Some(b) = buffer_of.get(a.as_str()) {
                        *a = b.to_string();
                    }
                }
                _ => {}
            }
        }
        let mut slot_params: Vec<Param> = vec![];
        params.retain(|q| {
            let base = match q {
                Param::Array(a) | Param::Stride(a, _) | Param::Shape(a, _) => a,
                Param::IntScalar(n) | Param::FloatScalar(n) => {
                    return !self.types.contains_key(n);
                }
            };
            let Some(&g) = local_group.get(base.as_str()) else {
                return true;
            };
            for slot in &self.steps.groups[g].slots {
                let p = match q {
                    Param::Array(_) => Param::Array(slot.clone()),
                    Param::Stride(_, d) => Param::Stride(slot.clone(), *d),
                    Param::Shape(_, d) => Param::Shape(slot.clone(), *d),
                    _ => unreachable!(),
                };
                if !slot_params.contains(&p) {
                    slot_params.push(p);
                }
            }
            false
        });
        for p in slot_params {
            if !params.contains(&p) {
                params.push(p);
            }
        }
        for (n, ty) in &self.steps.inputs {
            if !params.iter().any(|q| q.kernel_name() == *n) {
                params.push(match ty {
                    ScalarType::Float => Param::FloatScalar(n.clone()),
                    _ => Param::IntScalar(n.clone()),
                });
            }
        }
        // Shapes the steps read.
        for s in &self.steps.steps {
            s.value.walk(&mut |x| {
                if let ExprKind::Shape { array, dim } = &x.kind {
                    let p = Param::Shape(array.clone(), *dim);
                    if !params.contains(&p) {
                        params.push(p);
                    }
                }
            });
        }
    }

    /// The launcher's own arguments: group locals out, slots in; carried scalars only where the
    /// kernel starts from the host's value; the steps' host scalars.
    pub fn host_args(&self, host_args: &mut Vec<String>, written: &mut Vec<String>) {
        for list in [&mut *host_args, &mut *written] {
            for a in list.iter_mut() {
                if let Some((b, _)) = self.shared_locals.iter().find(|(_, l)| *l == a) {
                    *a = b.clone();
                }
            }
        }
        let locals: HashSet<&str> = self.locals.values().map(String::as_str).collect();
        host_args.retain(|a| !locals.contains(a.as_str()) && !self.types.contains_key(a));
        let mut wrote_group = vec![];
        written.retain(|a| {
            let Some((name, _)) = self.locals.iter().find(|(_, l)| *l == a) else {
                return true;
            };
            wrote_group.push(self.group_of[name]);
            false
        });
        for g in wrote_group {
            for slot in &self.steps.groups[g].slots {
                push_unique(written, slot);
            }
        }
        for g in &self.steps.groups {
            for slot in &g.slots {
                push_unique(host_args, slot);
            }
        }
        for c in self.steps.carried.iter().filter(|c| c.needs_initial) {
            push_unique(host_args, &c.name);
        }
        for (n, _) in &self.steps.inputs {
            push_unique(host_args, n);
        }
    }

    /// Float registers, for the region printer's fp64 operands.
    pub fn float_registers(&self) -> impl Iterator<Item = &String> {
        self.steps
            .carried
            .iter()
            .filter(|c| c.ty == ScalarType::Float)
            .map(|c| &c.name)
    }

    pub fn carried_names(&self) -> impl Iterator<Item = &String> {
        self.steps.carried.iter().map(|c| &c.name)
    }

    /// Before the phase loop: every register at its type. The launcher passes Python ints and
    /// floats; on the GPU a float is an fp64 parameter already, but under the interpreter it
    /// stays a Python float, which a launch whose phases never assign it (one phase a launch
    /// there) would store with `.to`. `-0.0 + x` is `x` exactly, signed zeros included.
    pub fn start(&self, w: &mut Writer, dialect: Dialect) {
        for c in &self.steps.carried {
            match c.ty {
                ScalarType::Int => w.line(format!("{0} = {0}.to(tl.int64)", c.name)),
                ScalarType::Bool => w.line(format!("{0} = {0} != 0", c.name)),
                ScalarType::Float => w.line(format!(
                    "{0} = {1} + {0}",
                    c.name,
                    dialect.full("-0.0", "tl.float64")
                )),
            }
        }
        if let Some(v) = &self.var {
            w.line(format!("{v} = {v}.to(tl.int64)"));
        }
        if let Some(r) = &self.running {
            w.line(format!("{r} = {r} != 0"));
        }
    }

    /// `test` as a condition on the registers (a while loop's test, a break's), a name or in
    /// one pair of parentheses, so `running & c` and `c == 0` read as meant: `not done` prints
    /// `(done) == 0`, and `running & (done) == 0` is Python's `(running & done) == 0`, true
    /// again once a break has cleared `running`.
    pub fn condition(&self, test: &Expr, loop_var: &str) -> String {
        let env = |n: &str| self.type_of_name(n, loop_var);
        let dialect = Dialect::Triton; // only the plain persistent kernel tests a condition
        let c = StepPrinter { env: &env, dialect }.value_as(test, ScalarType::Bool);
        if enclosed(&c) {
            c
        } else {
            format!("({c})")
        }
    }

    /// The steps that run before phase `before` (`before == regions` after the last); those
    /// after the loop's break only while `running` holds.
    pub fn steps_before(&self, w: &mut Writer, before: usize, at: &PhaseNames) {
        if self.print_steps(w, before, at, false) {
            w.dedent();
        }
    }

    /// The steps before phase `before`, then, where the loop's break is among them, `if
    /// running:` left open for the rest of the phase: the group's later steps and what the
    /// caller prints after them (the phase's region). Returns whether it left the block open.
    pub fn steps_then_guard(&self, w: &mut Writer, before: usize, at: &PhaseNames) -> bool {
        self.print_steps(w, before, at, true)
    }

    /// Where the loop's break is among the steps before phase `before`: `if running:`, for
    /// what the phase runs past its barrier (after the last phase, the closing steps).
    /// Returns whether it opened the block (the caller closes it).
    pub fn guard_after_break(&self, w: &mut Writer, before: usize) -> bool {
        let here = self.steps.exit().is_some_and(|b| b.before == before);
        if here {
            w.line(format!("if {}:", self.running()));
            w.indent();
        }
        here
    }

    /// The steps before phase `before`; after the break, `if running:` opened when steps
    /// follow it or `more` does. Returns whether the block is open.
    fn print_steps(&self, w: &mut Writer, before: usize, at: &PhaseNames, more: bool) -> bool {
        let group: Vec<&Step> = self
            .steps
            .steps
            .iter()
            .filter(|s| s.before == before)
            .collect();
        let mut open = false;
        for (i, s) in group.iter().enumerate() {
            self.step(w, s, at);
            if s.kind == StepKind::Break && (more || i + 1 < group.len()) {
                w.line(format!("if {}:", self.running()));
                w.indent();
                open = true;
            }
        }
        open
    }

    fn running(&self) -> &str {
        self.running
            .as_deref()
            .expect("a loop that breaks keeps a `running` register")
    }

    pub fn has_steps_before(&self, before: usize) -> bool {
        self.steps.steps.iter().any(|s| s.before == before)
    }

    fn step(&self, w: &mut Writer, s: &Step, at: &PhaseNames) {
        let loop_var = at.loop_var;
        match &s.kind {
            StepKind::Reduced { buffer, op } => {
                let (x, it, pid) = (&s.target, at.iteration, at.pid);
                let slot =
                    format!("tl.load({buffer} + {it} % 3, cache_modifier=\".cg\").to(tl.float64)");
                w.line(match op {
                    ReduceOp::Sum => format!("{x} = {x} + {slot}"),
                    ReduceOp::Max => format!("{x} = tl.maximum({x}, {slot})"),
                    ReduceOp::Min => format!("{x} = tl.minimum({x}, {slot})"),
                });
                w.line(format!("if {pid} == 0:"));
                w.indent();
                w.line(format!(
                    "tl.store({buffer} + ({it} + 2) % 3, tl.load({buffer} + 3))"
                ));
                w.dedent();
            }
            StepKind::Rebind => {
                let ExprKind::Name(source) = &s.value.kind else {
                    unreachable!("a rebinding assigns a name")
                };
                w.line(format!(
                    "{} = {}",
                    self.which[&s.target], self.which[source]
                ));
            }
            StepKind::Break => {
                let running = self.running();
                let c = self.condition(&s.value, loop_var);
                w.line(format!("{running} = {running} & ({c} == 0)"));
            }
            StepKind::Scalar => {
                let env = |n: &str| self.type_of_name(n, loop_var);
                let printer = StepPrinter {
                    env: &env,
                    dialect: at.dialect,
                };
                let ty = self.types[&s.target];
                w.line(format!("{} = {}", s.target, printer.value_as(&s.value, ty)));
            }
        }
    }

    fn type_of_name(&self, n: &str, loop_var: &str) -> ScalarType {
        if let Some(t) = self.types.get(n) {
            return *t;
        }
        if n == loop_var {
            return ScalarType::Int;
        }
        self.steps
            .inputs
            .iter()
            .find(|(m, _)| m == n)
            .map_or(ScalarType::Float, |(_, t)| *t)
    }

    /// Picks the arrays of the group names region `k` (renamed) reads, by their registers, and
    /// points its shared buffers at the iteration's slot.
    pub fn pick_arrays(&self, w: &mut Writer, k: &Kernel, params: &[Param], iteration: &str) {
        let mut shared: Vec<(&String, &String)> = self
            .shared_locals
            .iter()
            .filter(|(_, l)| k.names_array(l))
            .collect();
        shared.sort();
        for (buffer, local) in shared {
            w.line(format!("{local} = {buffer} + {iteration} % 3"));
            w.line(format!("{local}_stride0 = {buffer}_stride0"));
        }
        let mut used: Vec<&String> = vec![];
        for (name, local) in &self.locals {
            if k.names_array(local) {
                used.push(name);
            }
        }
        used.sort();
        for name in used {
            self.pick(w, name, params);
        }
    }

    fn pick(&self, w: &mut Writer, name: &str, params: &[Param]) {
        let local = &self.locals[name];
        let slots = &self.steps.groups[self.group_of[name]].slots;
        let first = &slots[0];
        // The slots' parameters carry every stride and the shapes some region reads.
        let parts: Vec<(String, String)> = params
            .iter()
            .filter_map(|q| match q {
                Param::Array(a) if a == first => Some((local.clone(), String::new())),
                Param::Stride(a, d) if a == first => {
                    Some((format!("{local}_stride{d}"), format!("_stride{d}")))
                }
                Param::Shape(a, d) if a == first => {
                    Some((format!("{local}_shape{d}"), format!("_shape{d}")))
                }
                _ => None,
            })
            .collect();
        for (i, slot) in slots.iter().enumerate() {
            let head = if slots.len() == 1 {
                None
            } else if i == 0 {
                Some(format!("if {} == 0:", self.which[name]))
            } else if i + 1 < slots.len() {
                Some(format!("elif {} == {i}:", self.which[name]))
            } else {
                Some("else:".to_string())
            };
            if let Some(h) = &head {
                w.line(h);
                w.indent();
            }
            for (to, suffix) in &parts {
                w.line(format!("{to} = {slot}{suffix}"));
            }
            if head.is_some() {
                w.dedent();
            }
        }
    }

    /// After the phase loop: the last program stores every register. On the GPU every program
    /// holds the same values past the barriers; under the interpreter, which runs a launch's
    /// programs one after another, only the last has seen every program's share of a reduction
    /// that a step reads after the launch's last phase (program 0 would read its own share).
    pub fn store(&self, w: &mut Writer, pid: &str, nprog: &str) {
        w.line(format!("if {pid} == {nprog} - 1:"));
        w.indent();
        for (k, r) in self.registers.iter().enumerate() {
            w.line(format!(
                "tl.store({} + {k}, ({}).to(tl.float64))",
                self.out, r.name
            ));
        }
        w.dedent();
    }
}

/// Whether `text` is a name or one parenthesized group: `(a < b)`, not `(a) == 0` or
/// `(a) & (b)`.
fn enclosed(text: &str) -> bool {
    if text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return true;
    }
    if !text.starts_with('(') {
        return false;
    }
    let mut depth = 0usize;
    for (i, ch) in text.char_indices() {
        match ch {
            '(' => depth += 1,
            ')' => {
                depth = depth.saturating_sub(1);
                if depth == 0 && i + 1 < text.len() {
                    return false;
                }
            }
            _ => {}
        }
    }
    depth == 0
}
