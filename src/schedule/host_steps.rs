//! host_steps: the statements of a time loop that are not regions, when every program of a
//! persistent kernel can run them alike, so the loop needs no host between iterations.
//!
//! Design decisions:
//! - Scalar statements (`dt = dt * decay`, `it += 1`) are *replicated*: every program computes
//!   them in registers, in the loop's order, from the same values, so all agree without
//!   talking. Their values are Python's: floats are fp64, integers int64, whatever the
//!   expression's literals (Triton would make `1.0` an fp32); `scalar_type` decides which.
//! - An assignment of an array name to a name (`A, B = B, A`, lowered to assignments through
//!   temporaries) rebinds names, never copies: each name of a rebinding group carries the index
//!   of the array it is bound to ("which"), and a region picks its arrays' pointers by those
//!   indices. Groups are the connected names, so arrays of other dtypes in other groups never
//!   meet in one choice.
//! - `if test: break` is a step too, in its place among the others: it clears the kernel's
//!   `running` register, and what follows it in the iteration (steps, regions) runs only while
//!   that holds. One break a loop: a second keeps the loop on the host (`-v` says so).
//! - Any other `if` (`elif`/`else`, nested) whose branches hold only scalar assignments and
//!   the loop's one break is *guarded* steps (`IfLowering`): the test's truth goes once into a
//!   fresh bool register (`_if = bool(test)`; nested, `_if1 = guard and bool(test)`), then each
//!   assignment of a branch is `x = (value if guard else x)`, the `else` branch's guard `not
//!   _if` (and the outer guard), and a break is a `Break` step on its branch's guard after the
//!   branch's earlier assignments. That is Python's order exactly: the test reads the values
//!   before either branch, a branch's assignments read its earlier ones, the breaking
//!   iteration's assignments take effect, and an `elif`'s test, read after the first branch,
//!   only counts where that branch did not run (so it sees the values before it too). Why
//!   select, not branch: the steps stay straight-line code every program runs alike (no
//!   divergence, no control flow for the printers, the blocked kernels included), the values
//!   are scalars, and every consumer of steps reads an `IfExp` it already prints.
//! - A name a branch assigns keeps its value on the paths that do not: what reads and assigns
//!   a name first is decided path by path (`Flow`: what a path reads before assigning it,
//!   what every path assigns, what the path to the break assigns), so `if c: s = 0.5 else:
//!   s = 1.0` needs no host value of `s`, and a name assigned on some paths only that may be
//!   read from before the loop must be bound then. Its register has one type: every value
//!   it may hold (each assignment's, the host's where read) must be of that type, or the loop
//!   stays on the host (`x = 0` before `if c: x = 0.5` would leave an int or a float).
//!   Arrays rebound in a branch (a swap on some paths) and regions, element assignments or
//!   calls in a branch keep the loop on the host, with the statement named.
//! - A name whose first assignment in an iteration follows the break, and that the function
//!   reads after the loop, keeps the host's value when the loop breaks in its first iteration:
//!   its register starts from that value, which must be bound and of the type the loop gives
//!   the name (one type comes back).
//! - Statements that need the host (a call into Python, an array element read on the host,
//!   anything the kernel language lacks) keep the loop host-driven; the reason names the
//!   statement.

use crate::frontend::source::Span;
use crate::ir::*;
use std::collections::{HashMap, HashSet};

/// What a host statement of the loop does on the device.
#[derive(Debug, Clone, PartialEq)]
pub enum StepKind {
    /// `target = value`: a scalar every program computes alike.
    Scalar,
    /// `target = value` where `value` names an array: `target` is now bound to that array.
    Rebind,
    /// After the region that reduces the shared scalar `target` into `buffer` (and its
    /// barrier): `target = op(target, what the region reduced)`.
    Reduced { buffer: String, op: ReduceOp },
    /// `if value: break` (`target` is empty): when `value` holds the loop ends here, and the
    /// rest of the iteration (later steps, later phases) does not run.
    Break,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// The step runs before phase `before` of the iteration; `before == regions` after the
    /// last phase (and after its barrier).
    pub before: usize,
    pub target: String,
    pub value: Expr,
    pub kind: StepKind,
    pub span: Span,
}

impl Step {
    /// Whether the step assigns its target a scalar (a register).
    fn assigns_scalar(&self) -> bool {
        matches!(self.kind, StepKind::Scalar | StepKind::Reduced { .. })
    }
}

/// Python's scalar types as the device holds them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScalarType {
    /// int64.
    Int,
    /// fp64.
    Float,
    Bool,
}

/// A host scalar the loop assigns: the kernel keeps it in a register of every program.
#[derive(Debug, Clone, PartialEq)]
pub struct Carried {
    pub name: String,
    pub ty: ScalarType,
    /// Read before it is assigned in an iteration: the kernel starts from the host's value.
    pub needs_initial: bool,
    /// The Python type of the host's value the kernel starts from, where the compiler knows it
    /// (`schedule::before`); `None` when unknown or not needed. An integer register started
    /// from a value of unknown type comes back as that value's type (an integral float stays
    /// a float, as Python's `it += 1` keeps it).
    pub start: Option<ScalarType>,
}

/// Names that the loop rebinds among arrays.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    /// Every name of the group, slots first.
    pub names: Vec<String>,
    /// The names bound to arrays when the loop starts (the launcher's arrays), in order: the
    /// group's arrays. The others are the loop's own temporaries.
    pub slots: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct HostSteps {
    pub steps: Vec<Step>,
    pub carried: Vec<Carried>,
    pub groups: Vec<Group>,
    /// Host scalars the steps read that no region passes (a decay factor): name and type.
    pub inputs: Vec<(String, ScalarType)>,
}

impl HostSteps {
    /// The loop's `if test: break`, a step in its place (`StepKind::Break`).
    pub fn exit(&self) -> Option<&Step> {
        self.steps.iter().find(|s| s.kind == StepKind::Break)
    }

    /// The test of the loop's break.
    pub fn break_test(&self) -> Option<&Expr> {
        self.exit().map(|s| &s.value)
    }
}

/// The test of `if test: break` (no `else`, nothing else in the body).
pub fn break_test(s: &Stmt) -> Option<&Expr> {
    match &s.kind {
        StmtKind::If { test, body, orelse }
            if orelse.is_empty()
                && matches!(body.as_slice(), [b] if b.kind == StmtKind::Other("break statement")) =>
        {
            Some(test)
        }
        _ => None,
    }
}

/// What the loop's other statements are: the regions, each with what it reads.
pub struct Context<'a> {
    pub loop_var: &'a str,
    /// Names the function uses as arrays (subscripted or passed to regions as arrays).
    pub arrays: &'a HashSet<String>,
    /// Scalars each region reads, in phase order, with the type its kernel gives them.
    pub region_reads: Vec<HashMap<String, ScalarType>>,
    /// The loop's own test (a while loop), read before every iteration.
    pub test: Option<&'a Expr>,
    /// Shared scalars the regions reduce: `(phase, name, buffer, operator)`.
    pub reductions: Vec<(usize, String, String, ReduceOp)>,
    /// The host's names when the loop starts, with their Python types where known
    /// (`schedule::before`): a register read before it is assigned starts from that value, so
    /// it has that type too (`it = 0.0` before `it += 1` makes `it` a float).
    pub starts: &'a HashMap<String, Option<ScalarType>>,
    /// The names surely bound when the loop starts (`schedule::before`).
    pub bound: &'a HashSet<String>,
    /// Whether the function may read a name after the loop.
    pub read_after: &'a dyn Fn(&str) -> bool,
    /// Every name of the function and of its regions: an `if`'s guard registers take others.
    pub taken: &'a HashSet<String>,
}

type Why = (String, Span);

/// The steps of a loop body's other statements (`(regions before it, statement)`), or why a
/// statement needs the host.
pub fn analyse(others: &[(usize, &Stmt)], cx: &Context) -> Result<HostSteps, Why> {
    let lowered = lower_all(others, cx)?;
    let walk = Walk {
        steps: &lowered.steps,
        block: &lowered.block,
        flows: &lowered.flows,
    };
    let steps = walk.steps;
    if let Some(test) = cx.test {
        if let Some(why) = not_device_scalar(test, cx) {
            return Err((why, test.span));
        }
    }
    let groups = groups(steps, cx)?;
    let grouped: HashSet<&str> = groups
        .iter()
        .flat_map(|g| g.names.iter().map(String::as_str))
        .collect();
    let assigned: Vec<String> =
        steps
            .iter()
            .filter(|s| s.assigns_scalar())
            .fold(vec![], |mut v, s| {
                if !v.contains(&s.target) {
                    v.push(s.target.clone());
                }
                v
            });
    if let Some(n) = assigned.iter().find(|n| grouped.contains(n.as_str())) {
        return Err((
            format!("`{n}` holds an array and a scalar in turn"),
            walk.first_assignment(n),
        ));
    }
    let read_first: HashMap<&str, bool> = assigned
        .iter()
        .map(|n| (n.as_str(), walk.read_before_assigned(n, cx)))
        .collect();
    walk.guarded_bound(&assigned, &read_first, cx)?;
    let left = left_by_break(&walk, &assigned, &read_first, cx)?;
    let needs: HashMap<&str, bool> = assigned
        .iter()
        .map(|n| (n.as_str(), read_first[n.as_str()] || left.contains(n)))
        .collect();
    let start = |n: &str| {
        needs[n]
            .then(|| cx.starts.get(n).copied().flatten())
            .flatten()
    };
    let types = scalar_types(steps, &assigned, &start, cx);
    walk.guarded_types(&assigned, &types, &needs, cx)?;
    let mut carried = vec![];
    for n in &assigned {
        let ty = types[n];
        if let Some(t) = region_type(n, cx) {
            if t == ScalarType::Int && ty != ScalarType::Int {
                return Err((
                    format!("`{n}` indexes an array in a region but is computed as a float"),
                    walk.first_assignment(n),
                ));
            }
        }
        carried.push(Carried {
            name: n.clone(),
            ty,
            needs_initial: needs[n.as_str()],
            start: start(n),
        });
    }
    let inputs = inputs(steps, &assigned, &grouped, cx);
    let out = HostSteps {
        steps: lowered.steps,
        carried,
        groups,
        inputs,
    };
    rebound_after_break(&out, cx)?;
    Ok(out)
}

/// The steps of the loop's other statements in their order, each with the `if` it comes from.
#[derive(Default)]
struct Lowered {
    steps: Vec<Step>,
    /// For each step, the `if` statement it comes from (an index into `flows`), or `None` for
    /// a statement of one step (the plain `if test: break` included).
    block: Vec<Option<usize>>,
    flows: Vec<Flow>,
}

impl Lowered {
    fn push(&mut self, s: Step, block: Option<usize>) {
        self.steps.push(s);
        self.block.push(block);
    }

    fn breaks(&self) -> usize {
        self.steps
            .iter()
            .filter(|s| s.kind == StepKind::Break)
            .count()
    }
}

/// Every statement as steps (an `if` of scalar statements as several, `IfLowering`), the
/// reductions' folds in the phase after their regions, in phase order.
fn lower_all(others: &[(usize, &Stmt)], cx: &Context) -> Result<Lowered, Why> {
    let mut out = Lowered::default();
    let mut taken: HashSet<String> = cx.taken.clone();
    for &(before, s) in others {
        // A region's reduced value comes first in the phase after it.
        for (phase, name, buffer, op) in &cx.reductions {
            let here = phase + 1 == before;
            if here && !out.steps.iter().any(|t| t.kind == reduced(buffer, *op)) {
                out.push(reduced_step(*phase, name, buffer, *op, s.span), None);
            }
        }
        match &s.kind {
            StmtKind::If { .. } if break_test(s).is_none() => {
                let (steps, flow) = lower_if(before, s, cx, &mut taken)?;
                let b = out.flows.len();
                out.flows.push(flow);
                for st in steps {
                    out.push(st, Some(b));
                }
            }
            _ => out.push(step(before, s, cx)?, None),
        }
        if out.breaks() > 1 {
            return Err((
                "a second `if ...: break` needs the host: one break a loop runs on the device"
                    .into(),
                s.span,
            ));
        }
    }
    for (phase, name, buffer, op) in &cx.reductions {
        if !out.steps.iter().any(|t| t.kind == reduced(buffer, *op)) {
            let at = others.last().map_or(Span::DUMMY, |(_, s)| s.span);
            out.push(reduced_step(*phase, name, buffer, *op, at), None);
        }
    }
    // Stable: the steps of one statement share a phase and keep their order.
    let mut pairs: Vec<(Step, Option<usize>)> = out.steps.into_iter().zip(out.block).collect();
    pairs.sort_by_key(|(s, _)| s.before);
    (out.steps, out.block) = pairs.into_iter().unzip();
    Ok(out)
}

/// What an `if` statement's steps do to the names, path by path (Python's paths through its
/// branches, not the steps' order).
#[derive(Debug, Default)]
struct Flow {
    /// Names some path reads before it assigns them: their values from before the `if`.
    reads_first: HashSet<String>,
    /// Names every path that goes on past the `if` assigns (its guards' registers included).
    sure: HashSet<String>,
    /// Where a branch breaks: the names every path to the break assigns first.
    at_break: Option<HashSet<String>>,
    /// Names a branch assigns: they keep their values on the paths that do not.
    guarded: HashSet<String>,
}

/// The loop's steps with the `if`s they come from: what reads and assigns a name first.
struct Walk<'s> {
    steps: &'s [Step],
    block: &'s [Option<usize>],
    flows: &'s [Flow],
}

impl<'s> Walk<'s> {
    /// The units of an iteration in order: each plain step, and each `if`'s steps as one (its
    /// first step's index, and its flow).
    fn units(&self) -> Vec<(usize, Option<&'s Flow>)> {
        (0..self.steps.len())
            .filter(|&i| self.block[i].is_none() || i == 0 || self.block[i - 1] != self.block[i])
            .map(|i| (i, self.block[i].map(|b| &self.flows[b])))
            .collect()
    }

    fn first_assignment(&self, n: &str) -> Span {
        self.steps
            .iter()
            .find(|s| s.target == n)
            .map_or(Span::DUMMY, |s| s.span)
    }

    /// Whether some read of `n` in an iteration may see its value from before the iteration:
    /// the loop's test, a step (or a path through an `if`) before every path has assigned it,
    /// or a region of a phase before that; where only some paths assign it, also any region
    /// and a read after the loop.
    fn read_before_assigned(&self, n: &str, cx: &Context) -> bool {
        if cx.test.is_some_and(|t| t.mentions(n)) {
            return true;
        }
        let regions_before = |phase: usize| {
            cx.region_reads[..phase.min(cx.region_reads.len())]
                .iter()
                .any(|reads| reads.contains_key(n))
        };
        for (i, flow) in self.units() {
            let s = &self.steps[i];
            match flow {
                Some(f) if f.reads_first.contains(n) => return true,
                Some(f) if f.sure.contains(n) => return regions_before(s.before),
                Some(_) => {}
                // A reduction combines with the value before it.
                None if s.value.mentions(n) => return true,
                None if s.assigns_scalar() && s.target == n => return regions_before(s.before),
                None => {}
            }
        }
        cx.region_reads.iter().any(|reads| reads.contains_key(n)) || (cx.read_after)(n)
    }

    /// The scalars every path to the loop's break assigns in an iteration before it; `None`
    /// without a break.
    fn assigned_before_break(&self) -> Option<HashSet<&'s str>> {
        let mut assigned: HashSet<&str> = HashSet::new();
        for (i, flow) in self.units() {
            let s = &self.steps[i];
            match flow {
                Some(f) => {
                    if let Some(at) = &f.at_break {
                        assigned.extend(at.iter().map(String::as_str));
                        return Some(assigned);
                    }
                    assigned.extend(f.sure.iter().map(String::as_str));
                }
                None if s.kind == StepKind::Break => return Some(assigned),
                None if s.assigns_scalar() => {
                    assigned.insert(&s.target);
                }
                None => {}
            }
        }
        None
    }

    /// Whether the loop may break before every path has assigned the scalar `n`: a loop that
    /// breaks in its first iteration then leaves `n` as the host had it.
    fn assigned_after_break(&self, n: &str) -> bool {
        self.assigned_before_break()
            .is_some_and(|before| !before.contains(n))
    }

    fn guarded(&self, n: &str) -> bool {
        self.flows.iter().any(|f| f.guarded.contains(n))
    }

    /// A name an `if` assigns on some paths whose value from before the iteration may be read
    /// (it keeps that value on the others) must be bound before the loop.
    fn guarded_bound(
        &self,
        assigned: &[String],
        read_first: &HashMap<&str, bool>,
        cx: &Context,
    ) -> Result<(), Why> {
        for n in assigned {
            if self.guarded(n) && read_first[n.as_str()] && !cx.bound.contains(n) {
                return Err((
                    format!("`{n}` is assigned in a branch of an `if` and may be unbound before the loop, where a path that does not assign it would read it: that needs the host"),
                    self.first_assignment(n),
                ));
            }
        }
        Ok(())
    }

    /// The value a step gives its target where it runs: a branch's step keeps the target
    /// elsewhere (`value if guard else target`), and gives `value`.
    fn own_value(&self, i: usize) -> &'s Expr {
        let s = &self.steps[i];
        match (&s.value.kind, self.block[i]) {
            (ExprKind::IfExp { body, orelse, .. }, Some(b))
                if self.flows[b].guarded.contains(&s.target)
                    && matches!(&orelse.kind, ExprKind::Name(m) if *m == s.target) =>
            {
                body
            }
            _ => &s.value,
        }
    }

    /// A name an `if` assigns on some paths holds after it either a value a branch gave or the
    /// one it had: Python's type is then that of either, the register's one type, so every
    /// value the name may hold must be of the register's type (`x = 0` and, in a branch,
    /// `x = 0.5` would leave an int or a float), the host's value too where the loop may
    /// read or leave it (known, or unknown for a float register, as host scalars count
    /// elsewhere).
    fn guarded_types(
        &self,
        assigned: &[String],
        types: &HashMap<String, ScalarType>,
        needs: &HashMap<&str, bool>,
        cx: &Context,
    ) -> Result<(), Why> {
        let env = |m: &str| env_type(m, types, cx);
        for n in assigned.iter().filter(|n| self.guarded(n)) {
            let ty = types[n];
            for (i, s) in self.steps.iter().enumerate() {
                if !(s.assigns_scalar() && s.target == *n) {
                    continue;
                }
                let own = match s.kind {
                    StepKind::Reduced { .. } => ScalarType::Float,
                    _ => type_of(self.own_value(i), &env),
                };
                if own != ty {
                    return Err((
                        format!("`{n}` is given {} here and holds {} elsewhere, and an `if` assigns it on some paths only, which would leave either type: that needs the host", own.python(), ty.python()),
                        s.span,
                    ));
                }
            }
            let host = cx.starts.get(n.as_str()).copied().flatten();
            let surely = host == Some(ty) || (host.is_none() && ty == ScalarType::Float);
            if needs[n.as_str()] && !surely {
                return Err((
                    format!("`{n}` keeps its value from before the loop on a path through an `if` that does not assign it, and that value is not surely {}: that needs the host", ty.python()),
                    self.first_assignment(n),
                ));
            }
        }
        Ok(())
    }
}

/// Whether a rebinding of `n` comes after the loop's break (rebindings are never inside an
/// `if`): a loop that breaks in its first iteration leaves `n` bound as the host had it.
fn rebound_after_break_step(steps: &[Step], n: &str) -> bool {
    let exit = steps.iter().position(|s| s.kind == StepKind::Break);
    let rebinds = |s: &Step| s.target == n && s.kind == StepKind::Rebind;
    matches!((exit, steps.iter().position(rebinds)), (Some(b), Some(a)) if b < a)
}

/// The scalars the function reads after the loop whose first assignment in an iteration
/// follows the break: a break in the first iteration leaves them as the host had them, so
/// their registers start from the host's value (as if read before assigned). Such a name must
/// be surely bound before the loop, and, unless the loop reads it before assigning it anyway
/// (`read_first`: then its type already joins the host's), the host's value must be of the
/// type its assignments give, known to the compiler (or unknown, for a float): the launcher
/// gives one type back.
fn left_by_break(
    walk: &Walk,
    assigned: &[String],
    read_first: &HashMap<&str, bool>,
    cx: &Context,
) -> Result<HashSet<String>, Why> {
    let left: Vec<&String> = assigned
        .iter()
        .filter(|n| walk.assigned_after_break(n) && (cx.read_after)(n))
        .collect();
    if left.is_empty() {
        return Ok(HashSet::new());
    }
    let own_start = |n: &str| {
        read_first[n]
            .then(|| cx.starts.get(n).copied().flatten())
            .flatten()
    };
    let own = scalar_types(walk.steps, assigned, &own_start, cx);
    for n in &left {
        let at = walk.first_assignment(n);
        if !cx.bound.contains(*n) {
            return Err((
                format!("`{n}` is first assigned after the break and read after the loop, which may leave it unbound: that needs the host"),
                at,
            ));
        }
        // A host scalar of a type the compiler cannot see is taken as a float, as `inputs`
        // and `env_type` take one.
        let host = cx.starts.get(n.as_str()).copied().flatten();
        let float = host.is_none() && own[*n] == ScalarType::Float;
        if !read_first[n.as_str()] && host != Some(own[*n]) && !float {
            return Err((
                format!("`{n}` is first assigned after the break and read after the loop, and its value before the loop is not surely of the type the loop gives it: that needs the host"),
                at,
            ));
        }
    }
    Ok(left.into_iter().cloned().collect())
}

/// A rebound name the function reads after the loop, first bound after the break, must be a
/// slot: its register starts at its own array, which a break in the first iteration leaves.
fn rebound_after_break(h: &HostSteps, cx: &Context) -> Result<(), Why> {
    for g in &h.groups {
        for n in g.names.iter().filter(|n| !g.slots.contains(n)) {
            if rebound_after_break_step(&h.steps, n) && (cx.read_after)(n) {
                let at = h.steps.iter().find(|s| &s.target == n).unwrap().span;
                return Err((
                    format!("`{n}` is first bound after the break and read after the loop, which may leave it unbound: that needs the host"),
                    at,
                ));
            }
        }
    }
    Ok(())
}

fn reduced(buffer: &str, op: ReduceOp) -> StepKind {
    StepKind::Reduced {
        buffer: buffer.to_string(),
        op,
    }
}

fn reduced_step(phase: usize, name: &str, buffer: &str, op: ReduceOp, span: Span) -> Step {
    Step {
        before: phase + 1,
        target: name.to_string(),
        value: Expr::name(name, span),
        kind: reduced(buffer, op),
        span,
    }
}

fn step(before: usize, s: &Stmt, cx: &Context) -> Result<Step, Why> {
    let host = |what: &str| Err((format!("{what} needs the host between iterations"), s.span));
    if let Some(test) = break_test(s) {
        if let Some(why) = not_device_scalar(test, cx) {
            return Err((why, test.span));
        }
        return Ok(Step {
            before,
            target: String::new(),
            value: test.clone(),
            kind: StepKind::Break,
            span: s.span,
        });
    }
    let (target, value) = match &s.kind {
        StmtKind::Pass => unreachable!("the caller skips `pass`"),
        StmtKind::Assign { target, value, .. } => (target, value),
        StmtKind::Expr(_) => return host("a call"),
        StmtKind::Other(what) | StmtKind::HostBlock { what, .. } => return host(what),
        StmtKind::While { .. } => return host("a while loop"),
        StmtKind::For { .. } => return host("a loop of host code"),
        StmtKind::If { .. } => return host("an `if` of host code"),
        _ => return host("this statement"),
    };
    let ExprKind::Name(name) = &target.kind else {
        return host("an assignment to an array element that is not a region");
    };
    if name == cx.loop_var {
        return Err((format!("it assigns the loop variable `{name}`"), s.span));
    }
    if let ExprKind::Name(source) = &value.kind {
        if cx.arrays.contains(source) || cx.arrays.contains(name) {
            return Ok(Step {
                before,
                target: name.clone(),
                value: value.clone(),
                kind: StepKind::Rebind,
                span: s.span,
            });
        }
    }
    if cx.arrays.contains(name) {
        return host("an assignment of something other than an array to an array's name");
    }
    if let Some(why) = not_device_scalar(value, cx) {
        return Err((why, value.span));
    }
    Ok(Step {
        before,
        target: name.clone(),
        value: value.clone(),
        kind: StepKind::Scalar,
        span: s.span,
    })
}

/// An `if` statement of scalar statements (and at most the loop's one break) as steps, with
/// what it does to the names path by path (module notes: guards and kept values).
fn lower_if(
    before: usize,
    s: &Stmt,
    cx: &Context,
    taken: &mut HashSet<String>,
) -> Result<(Vec<Step>, Flow), Why> {
    let mut l = IfLowering {
        cx,
        before,
        steps: vec![],
        flow: Flow::default(),
        guards: vec![],
        taken,
    };
    let mut path = HashSet::new();
    let broke = l.an_if(s, None, &mut path)?;
    let mut flow = l.flow;
    // Where every branch breaks, nothing goes on past the `if` (and the second break is
    // refused by the caller).
    if !broke {
        flow.sure = path;
    }
    flow.sure.extend(l.guards);
    Ok((l.steps, flow))
}

struct IfLowering<'a, 'c> {
    cx: &'a Context<'c>,
    before: usize,
    steps: Vec<Step>,
    flow: Flow,
    /// The guard registers, assigned on every path.
    guards: Vec<String>,
    taken: &'a mut HashSet<String>,
}

impl IfLowering<'_, '_> {
    /// `if test: ... else: ...` under `outer` (the guard of the branch holding it, `None` at
    /// the top): its test into a fresh guard register, then each branch under its guard.
    /// `path`: what this path assigned in the `if` so far, then after it. Returns whether
    /// every branch breaks.
    fn an_if(
        &mut self,
        s: &Stmt,
        outer: Option<&Expr>,
        path: &mut HashSet<String>,
    ) -> Result<bool, Why> {
        let StmtKind::If { test, body, orelse } = &s.kind else {
            unreachable!("an_if lowers `if` statements")
        };
        if let Some(why) = not_device_scalar(test, self.cx) {
            return Err((why, test.span));
        }
        self.read(test, path);
        let g = self.fresh_guard();
        let at = test.span;
        // Python's truth of the test's value, read once, before either branch.
        let truth = Expr::new(
            ExprKind::Call {
                func: "bool".into(),
                args: vec![test.clone()],
            },
            at,
        );
        let both = |a: &Expr, b: Expr| {
            Expr::new(
                ExprKind::BoolOp {
                    op: BoolOp::And,
                    values: vec![a.clone(), b],
                },
                at,
            )
        };
        let value = match outer {
            None => truth,
            Some(o) => both(o, truth),
        };
        self.steps.push(Step {
            before: self.before,
            target: g.clone(),
            value,
            kind: StepKind::Scalar,
            span: s.span,
        });
        self.guards.push(g.clone());
        let then_guard = Expr::name(&g, at);
        let not_g = Expr::new(
            ExprKind::Unary {
                op: UnaryOp::Not,
                operand: Box::new(then_guard.clone()),
            },
            at,
        );
        let else_guard = match outer {
            None => not_g,
            Some(o) => both(o, not_g),
        };
        let mut then_path = path.clone();
        let then_breaks = self.branch(body, &then_guard, &mut then_path)?;
        let mut else_path = path.clone();
        let else_breaks = self.branch(orelse, &else_guard, &mut else_path)?;
        *path = match (then_breaks, else_breaks) {
            (true, true) => return Ok(true),
            (true, false) => else_path,
            (false, true) => then_path,
            (false, false) => then_path.intersection(&else_path).cloned().collect(),
        };
        Ok(false)
    }

    /// A branch's statements under `guard`. Returns whether it breaks (what follows a break
    /// in the branch never runs).
    fn branch(
        &mut self,
        stmts: &[Stmt],
        guard: &Expr,
        path: &mut HashSet<String>,
    ) -> Result<bool, Why> {
        for s in stmts {
            match &s.kind {
                StmtKind::Pass => {}
                StmtKind::Other("break statement") => {
                    self.steps.push(Step {
                        before: self.before,
                        target: String::new(),
                        value: guard.clone(),
                        kind: StepKind::Break,
                        span: s.span,
                    });
                    self.flow.at_break = Some(path.clone());
                    return Ok(true);
                }
                StmtKind::If { .. } => {
                    if self.an_if(s, Some(guard), path)? {
                        return Ok(true);
                    }
                }
                StmtKind::Assign { target, value, .. } if s.pragma.is_none() => {
                    self.assign(s, target, value, guard, path)?
                }
                _ => return Err(in_if_needs_host(s)),
            }
        }
        Ok(false)
    }

    /// `name = value` in a branch: `name = (value if guard else name)`.
    fn assign(
        &mut self,
        s: &Stmt,
        target: &Expr,
        value: &Expr,
        guard: &Expr,
        path: &mut HashSet<String>,
    ) -> Result<(), Why> {
        let cx = self.cx;
        let ExprKind::Name(name) = &target.kind else {
            return Err(in_if_needs_host(s));
        };
        if name == cx.loop_var {
            return Err((format!("it assigns the loop variable `{name}`"), s.span));
        }
        let array = match &value.kind {
            _ if cx.arrays.contains(name) => Some(name),
            ExprKind::Name(v) if cx.arrays.contains(v) => Some(v),
            _ => None,
        };
        if let Some(a) = array {
            return Err((
                format!("the array `{a}` is rebound inside an `if`: a rebinding (a swap) on some paths only needs the host between iterations"),
                s.span,
            ));
        }
        if let Some(why) = not_device_scalar(value, cx) {
            return Err((why, value.span));
        }
        self.read(value, path);
        let kept = Expr::new(
            ExprKind::IfExp {
                test: Box::new(guard.clone()),
                body: Box::new(value.clone()),
                orelse: Box::new(Expr::name(name, target.span)),
            },
            value.span,
        );
        self.steps.push(Step {
            before: self.before,
            target: name.clone(),
            value: kept,
            kind: StepKind::Scalar,
            span: s.span,
        });
        path.insert(name.clone());
        self.flow.guarded.insert(name.clone());
        Ok(())
    }

    /// The names `e` reads that this path has not assigned in the `if` yet.
    fn read(&mut self, e: &Expr, path: &HashSet<String>) {
        e.walk(&mut |x| {
            if let ExprKind::Name(n) = &x.kind {
                if !path.contains(n) {
                    self.flow.reads_first.insert(n.clone());
                }
            }
        });
    }

    /// A register name no name of the function, its regions or the code after the loop uses.
    fn fresh_guard(&mut self) -> String {
        loop {
            let g = fresh_name("if", self.taken);
            if !(self.cx.read_after)(&g) {
                return g;
            }
        }
    }
}

/// Why a statement inside an `if` keeps the loop on the host.
fn in_if_needs_host(s: &Stmt) -> Why {
    let what = match &s.kind {
        _ if s.is_parallel_loop() || s.pragma.is_some() => "a region",
        StmtKind::Assign { .. } => "an assignment to an array element",
        StmtKind::Expr(_) => "a call",
        StmtKind::For { .. } => "a loop of host code",
        StmtKind::While { .. } => "a while loop",
        StmtKind::Other(what) | StmtKind::HostBlock { what, .. } => what,
        _ => "this statement",
    };
    (
        format!("{what} inside an `if` needs the host between iterations"),
        s.span,
    )
}

/// Why `e` cannot be computed by every program from scalars, if it cannot.
fn not_device_scalar(e: &Expr, cx: &Context) -> Option<String> {
    let mut why = None;
    e.walk(&mut |x| {
        if why.is_some() {
            return;
        }
        why = match &x.kind {
            ExprKind::Subscript { array, .. } => Some(format!(
                "reading an element of `{array}` on the host needs the host between iterations"
            )),
            ExprKind::Name(n) if cx.arrays.contains(n) => Some(format!(
                "`{n}` is an array used as a scalar, which needs the host"
            )),
            ExprKind::Call { func, .. } if !DEVICE_CALLS.contains(&short_call(func)) => Some(
                format!("a call of `{func}` needs the host between iterations"),
            ),
            ExprKind::Unsupported(what) => Some(format!("{what} needs the host")),
            ExprKind::Vidx { .. }
            | ExprKind::Reduce { .. }
            | ExprKind::ReduceRows { .. }
            | ExprKind::Broadcast { .. } => Some("a vector expression needs the host".into()),
            _ => None,
        };
    });
    why
}

/// The calls a step may make, by their name without `np.`/`math.`.
pub const DEVICE_CALLS: &[&str] = &[
    "abs", "absolute", "fabs", "min", "max", "minimum", "maximum", "fmin", "fmax", "sqrt", "exp",
    "log", "sin", "cos", "tan", "tanh", "sinh", "cosh", "exp2", "log2", "log10", "log1p", "expm1",
    "erf", "floor", "ceil", "pow", "power", "float", "int", "float64", "int64", "bool",
];

pub fn short_call(func: &str) -> &str {
    func.strip_prefix("np.")
        .or_else(|| func.strip_prefix("numpy."))
        .or_else(|| func.strip_prefix("math."))
        .unwrap_or(func)
}

/// The connected names of the rebinding steps; a group's slots are its names bound at entry.
fn groups(steps: &[Step], cx: &Context) -> Result<Vec<Group>, Why> {
    let rebinds: Vec<&Step> = steps
        .iter()
        .filter(|s| s.kind == StepKind::Rebind)
        .collect();
    let mut names: Vec<String> = vec![];
    for s in &rebinds {
        for n in [s.target.clone(), name_of(&s.value)] {
            if !names.contains(&n) {
                names.push(n);
            }
        }
    }
    let mut parent: Vec<usize> = (0..names.len()).collect();
    fn root(p: &mut [usize], i: usize) -> usize {
        let mut i = i;
        while p[i] != i {
            p[i] = p[p[i]];
            i = p[i];
        }
        i
    }
    let index = |n: &str, names: &[String]| names.iter().position(|m| m == n).unwrap();
    for s in &rebinds {
        let (a, b) = (index(&s.target, &names), index(&name_of(&s.value), &names));
        let (ra, rb) = (root(&mut parent, a), root(&mut parent, b));
        parent[ra] = rb;
    }
    // A name is bound at entry when the loop reads it before any step assigns it.
    let bound_at_entry = |n: &str| {
        let first_write = rebinds.iter().position(|s| s.target == n);
        let first_read = rebinds.iter().position(|s| name_of(&s.value) == n);
        let read_by_region = cx.arrays.contains(n);
        match (first_write, first_read) {
            (None, _) => true,
            (Some(w), Some(r)) => r <= w || read_by_region,
            (Some(_), None) => read_by_region,
        }
    };
    let mut groups: Vec<Group> = vec![];
    let mut group_of: HashMap<usize, usize> = HashMap::new();
    for (i, name) in names.iter().enumerate() {
        let r = root(&mut parent, i);
        let g = *group_of.entry(r).or_insert_with(|| {
            groups.push(Group {
                names: vec![],
                slots: vec![],
            });
            groups.len() - 1
        });
        if bound_at_entry(name) {
            groups[g].slots.push(name.clone());
        }
        groups[g].names.push(name.clone());
    }
    for g in &mut groups {
        if g.slots.is_empty() {
            let at = rebinds[0].span;
            return Err((
                "a rebinding group holds no array the loop starts with".into(),
                at,
            ));
        }
        // A slot is an array the launcher passes: `A = x` with a host scalar `x` is no swap.
        if let Some(s) = g.slots.iter().find(|s| !cx.arrays.contains(*s)) {
            let at = rebinds
                .iter()
                .find(|r| r.target == *s || name_of(&r.value) == *s)
                .map_or(rebinds[0].span, |r| r.span);
            return Err((
                format!("`{s}` is bound to an array in the loop but is no array before it"),
                at,
            ));
        }
        let temps: Vec<String> = g
            .names
            .iter()
            .filter(|n| !g.slots.contains(n))
            .cloned()
            .collect();
        g.names = g.slots.iter().cloned().chain(temps).collect();
    }
    Ok(groups)
}

fn name_of(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Name(n) => n.clone(),
        _ => unreachable!("rebinding steps assign names"),
    }
}

/// The type each assigned scalar has in every iteration: the join of what its assignments give
/// and of the host's value it starts from (`start`), from a bool (the join's bottom: a name
/// only ever given comparisons is a bool, as Python's), decided to a fixed point.
fn scalar_types(
    steps: &[Step],
    assigned: &[String],
    start: &dyn Fn(&str) -> Option<ScalarType>,
    cx: &Context,
) -> HashMap<String, ScalarType> {
    let mut types: HashMap<String, ScalarType> = assigned
        .iter()
        .map(|n| (n.clone(), start(n).unwrap_or(ScalarType::Bool)))
        .collect();
    loop {
        let mut changed = false;
        for s in steps.iter().filter(|s| s.assigns_scalar()) {
            let env = |n: &str| env_type(n, &types, cx);
            // A reduced value is held as an fp64 (the launcher gives it back in its buffer's
            // type).
            let t = match s.kind {
                StepKind::Reduced { .. } => ScalarType::Float,
                _ => type_of(&s.value, &env),
            };
            let old = types[&s.target];
            let new = join(old, t);
            if new != old {
                types.insert(s.target.clone(), new);
                changed = true;
            }
        }
        if !changed {
            return types;
        }
    }
}

/// A name's type as the steps see it: a carried scalar's, the loop variable an integer, a host
/// scalar a region reads as its kernel takes it, any other host scalar a float (fp64 holds
/// Python's ints exactly up to 2^53).
pub fn env_type(n: &str, carried: &HashMap<String, ScalarType>, cx: &Context) -> ScalarType {
    if let Some(t) = carried.get(n) {
        return *t;
    }
    if n == cx.loop_var {
        return ScalarType::Int;
    }
    input_type(n, cx)
}

/// The type of a host scalar the loop reads and never assigns: what a region's kernel takes
/// it as, else its Python type before the loop when the compiler knows it (`it = 3` stays an
/// int, as Python keeps it), else a float.
fn input_type(n: &str, cx: &Context) -> ScalarType {
    region_type(n, cx)
        .or_else(|| cx.starts.get(n).copied().flatten())
        .unwrap_or(ScalarType::Float)
}

fn region_type(n: &str, cx: &Context) -> Option<ScalarType> {
    let mut found = None;
    for reads in &cx.region_reads {
        match reads.get(n) {
            Some(ScalarType::Int) => return Some(ScalarType::Int),
            Some(t) => found = Some(*t),
            None => {}
        }
    }
    found
}

/// The type of a value that may be of either type (Python's promotion: a float wins, then an
/// integer).
pub fn join(a: ScalarType, b: ScalarType) -> ScalarType {
    use ScalarType::*;
    match (a, b) {
        (Float, _) | (_, Float) => Float,
        (Int, _) | (_, Int) => Int,
        (Bool, Bool) => Bool,
    }
}

/// Python's type of a scalar expression.
pub fn type_of(e: &Expr, env: &dyn Fn(&str) -> ScalarType) -> ScalarType {
    use ScalarType::*;
    match &e.kind {
        ExprKind::Int(_) | ExprKind::Shape { .. } => Int,
        ExprKind::Float(_) | ExprKind::FloatSpecial(_) => Float,
        ExprKind::Bool(_) | ExprKind::Compare { .. } => Bool,
        ExprKind::BoolOp { values, .. } => values
            .iter()
            .map(|v| type_of(v, env))
            .fold(Bool, |a, b| if a == b { a } else { join(a, b) }),
        ExprKind::Name(n) => env(n),
        ExprKind::Binary { op, left, right } => {
            let (l, r) = (type_of(left, env), type_of(right, env));
            match op {
                BinOp::Div => Float,
                BinOp::Pow if l != Float && r != Float => Int,
                _ => join(join(l, r), Int),
            }
        }
        ExprKind::Unary { op, operand } => match op {
            UnaryOp::Not => Bool,
            _ => join(type_of(operand, env), Int),
        },
        ExprKind::IfExp { body, orelse, .. } => join(type_of(body, env), type_of(orelse, env)),
        ExprKind::Call { func, args } => match short_call(func) {
            "float" | "float64" => Float,
            "int" | "int64" | "len" => Int,
            "bool" => Bool,
            "abs" | "absolute" | "min" | "max" | "minimum" | "maximum" => args
                .iter()
                .map(|a| type_of(a, env))
                .fold(Bool, join)
                .max_int(),
            _ => Float,
        },
        _ => Float,
    }
}

/// The Python type of a value the host computes before a loop, where the compiler can tell
/// (`env`: the types of names, `None` where unknown): literals, extents, arithmetic of known
/// values, comparisons, and the conversions and `len`; a parameter, an element or another call
/// is unknown.
pub fn start_type(e: &Expr, env: &dyn Fn(&str) -> Option<ScalarType>) -> Option<ScalarType> {
    use ScalarType::*;
    let known = |x: &Expr| start_type(x, env).is_some();
    let typed = || Some(type_of(e, &|n| env(n).unwrap_or(Float)));
    match &e.kind {
        ExprKind::Compare { .. }
        | ExprKind::Unary {
            op: UnaryOp::Not, ..
        } => Some(Bool),
        ExprKind::Int(_)
        | ExprKind::Float(_)
        | ExprKind::FloatSpecial(_)
        | ExprKind::Bool(_)
        | ExprKind::Shape { .. } => typed(),
        ExprKind::Name(n) => env(n),
        ExprKind::Binary { left, right, .. } if known(left) && known(right) => typed(),
        ExprKind::Unary { operand, .. } if known(operand) => typed(),
        ExprKind::BoolOp { values, .. } if values.iter().all(known) => typed(),
        ExprKind::IfExp { body, orelse, .. } if known(body) && known(orelse) => typed(),
        ExprKind::Call { func, args } => match short_call(func) {
            "float" | "float64" | "int" | "int64" | "len" | "bool" => typed(),
            "abs" | "absolute" | "min" | "max" | "minimum" | "maximum"
                if args.iter().all(known) =>
            {
                typed()
            }
            _ => None,
        },
        _ => None,
    }
}

impl ScalarType {
    /// Python's name of the type, with its article (for messages).
    fn python(self) -> &'static str {
        match self {
            ScalarType::Int => "an int",
            ScalarType::Float => "a float",
            ScalarType::Bool => "a bool",
        }
    }

    /// Arithmetic on bools is on integers.
    fn max_int(self) -> ScalarType {
        if self == ScalarType::Bool {
            ScalarType::Int
        } else {
            self
        }
    }
}

/// Host scalars the steps read that are neither carried nor the loop variable nor arrays.
fn inputs(
    steps: &[Step],
    assigned: &[String],
    grouped: &HashSet<&str>,
    cx: &Context,
) -> Vec<(String, ScalarType)> {
    let mut out: Vec<(String, ScalarType)> = vec![];
    let mut visit = |e: &Expr| {
        e.walk(&mut |x| {
            if let ExprKind::Name(n) = &x.kind {
                let known = assigned.contains(n)
                    || n == cx.loop_var
                    || grouped.contains(n.as_str())
                    || cx.arrays.contains(n)
                    || n == "appy.MVL";
                if !known && !out.iter().any(|(m, _)| m == n) {
                    out.push((n.clone(), input_type(n, cx)));
                }
            }
        })
    };
    for s in steps
        .iter()
        .filter(|s| matches!(s.kind, StepKind::Scalar | StepKind::Break))
    {
        visit(&s.value);
    }
    for t in cx.test.iter() {
        visit(t);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::attach_pragmas::tests::attached;

    /// The host loop's other statements and a context where `A`, `B` are arrays and the one
    /// region (before the statements listed after `#region`) reads `regions_read`.
    fn steps_of(src: &str, regions_read: &[(&str, ScalarType)]) -> Result<HostSteps, Why> {
        let f = attached(src).unwrap();
        let at = f
            .body
            .iter()
            .position(|s| matches!(s.kind, StmtKind::For { .. }))
            .unwrap();
        let StmtKind::For { body, var, .. } = &f.body[at].kind else {
            panic!()
        };
        let mut before = 0;
        let mut others = vec![];
        for s in body {
            if s.is_parallel_loop() {
                before += 1;
            } else {
                others.push((before, s));
            }
        }
        let arrays: HashSet<String> = ["A", "B", "C"].map(String::from).into();
        let before = super::super::before::before(&f, f.body[at].span);
        // Read after the loop: what a closing `return` names.
        let tail = src.lines().last().unwrap_or("").trim().to_string();
        let read_after = |n: &str| {
            tail.starts_with("return ")
                && tail["return ".len()..].split(", ").any(|r| r.trim() == n)
        };
        let taken = f.names();
        let cx = Context {
            loop_var: var,
            arrays: &arrays,
            region_reads: vec![regions_read
                .iter()
                .map(|(n, t)| (n.to_string(), *t))
                .collect()],
            test: None,
            reductions: vec![],
            starts: &before.types,
            bound: &before.bound,
            read_after: &read_after,
            taken: &taken,
        };
        // The borrow of `f` ends here: clone what the caller keeps.
        analyse(&others, &cx)
    }

    const REGION: &str =
        "        #pragma parallel for\n        for i in range(4):\n            B[i] = A[i] * dt\n";

    #[test]
    fn scalar_updates_are_replicated_steps_with_python_s_types() {
        let src = format!(
            "def f(A, B, T, dt, decay):\n    it = 0\n    for t in range(T):\n{REGION}        dt = dt * decay\n        it += 1\n        half = t // 2\n"
        );
        let src = src.replace("    it = 0\n", "");
        let h = steps_of(&src, &[("dt", ScalarType::Float)]).unwrap();
        let kinds: Vec<(&str, ScalarType, bool)> = h
            .carried
            .iter()
            .map(|c| (c.name.as_str(), c.ty, c.needs_initial))
            .collect();
        assert_eq!(
            kinds,
            [
                ("dt", ScalarType::Float, true),
                ("it", ScalarType::Int, true),
                ("half", ScalarType::Int, false)
            ]
        );
        assert!(h.steps.iter().all(|s| s.before == 1));
        assert_eq!(h.inputs, [("decay".to_string(), ScalarType::Float)]);
    }

    #[test]
    fn a_scalar_the_loop_only_reads_keeps_the_host_s_type() {
        // `step = 3` is an int: `hits + step` stays an int, as in Python (it was a float).
        let src = format!(
            "def f(A, B, T, decay):\n    step = 3\n    hits = 0\n    for t in range(T):\n{REGION}        hits = hits + step\n        w = decay * 2\n"
        );
        let h = steps_of(&src, &[]).unwrap();
        assert_eq!(
            h.inputs,
            [
                ("step".to_string(), ScalarType::Int),
                ("decay".to_string(), ScalarType::Float)
            ]
        );
        assert_eq!(h.carried[0].ty, ScalarType::Int);
    }

    #[test]
    fn a_register_read_before_it_is_assigned_has_the_type_of_the_host_s_value() {
        let src = format!(
            "def f(A, B, T, dt, k):\n    it = 0.0\n    n = 0\n    done = False\n    for t in range(T):\n{REGION}        it += 1\n        n += 1\n        k += 1\n        done = it > 3\n        c = k > 2\n"
        );
        let h = steps_of(&src, &[]).unwrap();
        let kinds: Vec<(&str, ScalarType, Option<ScalarType>)> = h
            .carried
            .iter()
            .map(|c| (c.name.as_str(), c.ty, c.start))
            .collect();
        assert_eq!(
            kinds,
            [
                // A float counter stays a float, an int one an int.
                ("it", ScalarType::Float, Some(ScalarType::Float)),
                ("n", ScalarType::Int, Some(ScalarType::Int)),
                // A parameter's type is unknown: an integer, given back in the start's type.
                ("k", ScalarType::Int, None),
                // Comparisons only: a bool (assigned before read, the start does not count).
                ("done", ScalarType::Bool, None),
                ("c", ScalarType::Bool, None),
            ]
        );
    }

    #[test]
    fn a_swap_is_a_rebinding_group_of_two_slots() {
        let src =
            format!("def f(A, B, T, dt):\n    for t in range(T):\n{REGION}        A, B = B, A\n");
        let h = steps_of(&src, &[]).unwrap();
        assert!(h.carried.is_empty());
        assert_eq!(h.groups.len(), 1);
        assert_eq!(h.groups[0].slots, ["B", "A"]);
        assert_eq!(
            h.groups[0].names.len(),
            4,
            "two temporaries: {:?}",
            h.groups[0]
        );
    }

    #[test]
    fn host_work_keeps_the_loop_on_the_host_and_says_why() {
        for (line, why) in [
            ("print(t)", "a call needs the host"),
            ("x = A[0]", "reading an element of `A`"),
            ("x = len(A)", "a call of `len`"),
            ("t = t + 1", "assigns the loop variable `t`"),
        ] {
            let src =
                format!("def f(A, B, T, dt):\n    for t in range(T):\n{REGION}        {line}\n");
            let err = steps_of(&src, &[]).unwrap_err();
            assert!(err.0.contains(why), "{line}: {}", err.0);
        }
        // An array's name given a host scalar is no swap.
        let src =
            format!("def f(A, B, T, dt, x):\n    for t in range(T):\n{REGION}        A = x\n");
        let err = steps_of(&src, &[]).unwrap_err();
        assert!(err.0.contains("`x` is bound to an array"), "{}", err.0);
        // A scalar a region indexes with cannot become a float.
        let src =
            format!("def f(A, B, T, dt, k):\n    for t in range(T):\n{REGION}        k = k / 2\n");
        let err = steps_of(&src, &[("k", ScalarType::Int)]).unwrap_err();
        assert!(err.0.contains("computed as a float"), "{}", err.0);
    }

    #[test]
    fn a_break_is_a_step_in_its_place_among_the_others() {
        let src = format!(
            "def f(A, B, T, dt, tol):\n    n = 0\n    for t in range(T):\n{REGION}        dt = dt * 0.5\n        if dt < tol:\n            break\n        A, B = B, A\n        n += 1\n    return n\n"
        );
        let h = steps_of(&src, &[]).unwrap();
        let kinds: Vec<&StepKind> = h.steps.iter().map(|s| &s.kind).collect();
        assert_eq!(kinds[0], &StepKind::Scalar);
        assert_eq!(kinds[1], &StepKind::Break);
        assert!(
            kinds[2..].iter().all(|k| **k != StepKind::Break),
            "{kinds:?}"
        );
        assert_eq!(h.steps.last().unwrap().target, "n");
        let exit = h.exit().unwrap();
        assert_eq!(exit.before, 1);
        assert!(matches!(
            &h.break_test().unwrap().kind,
            ExprKind::Compare { .. }
        ));
        // The break reads `dt` after this iteration's update: no host value needed for it,
        // but `n`, read by its own update.
        let needs: Vec<(&str, bool)> = h
            .carried
            .iter()
            .map(|c| (c.name.as_str(), c.needs_initial))
            .collect();
        assert_eq!(needs, [("dt", true), ("n", true)]);
        // One break a loop.
        let twice = src.replace(
            "        n += 1\n",
            "        n += 1\n        if n > 3:\n            break\n",
        );
        let err = steps_of(&twice, &[]).unwrap_err();
        assert!(err.0.contains("a second `if ...: break`"), "{}", err.0);
        // A break whose test needs the host.
        let host = src.replace("if dt < tol:", "if A[0] < tol:");
        let err = steps_of(&host, &[]).unwrap_err();
        assert!(err.0.contains("reading an element of `A`"), "{}", err.0);
    }

    #[test]
    fn a_name_the_break_may_leave_unassigned_starts_from_the_host_s_value() {
        // `k` is first assigned after the break: a loop that breaks in its first iteration
        // leaves the host's `k`, so the register starts from it.
        let src = format!(
            "def f(A, B, T, dt, tol):\n    k = 0\n    for t in range(T):\n{REGION}        if dt < tol:\n            break\n        k = t * 2\n    return k\n"
        );
        let h = steps_of(&src, &[]).unwrap();
        let k = &h.carried[0];
        assert_eq!((k.name.as_str(), k.ty), ("k", ScalarType::Int));
        assert!(k.needs_initial);
        assert_eq!(k.start, Some(ScalarType::Int));
        // Assigned before the break, it needs no start.
        let before = src.replace(
            "        if dt < tol:\n            break\n        k = t * 2\n",
            "        k = t * 2\n        if dt < tol:\n            break\n",
        );
        assert_ne!(before, src);
        assert!(!steps_of(&before, &[]).unwrap().carried[0].needs_initial);
        // Unbound before the loop: reading it after a first-iteration break fails in Python.
        let unbound = src.replace("    k = 0\n", "");
        let err = steps_of(&unbound, &[]).unwrap_err();
        assert!(err.0.contains("may leave it unbound"), "{}", err.0);
        // Of another type before the loop than the loop gives it (a float, a bool), or of a
        // type the compiler cannot see (a parameter): one type comes back.
        for (from, to) in [
            ("k = t * 2", "k = t * 0.5"),
            ("k = t * 2", "k = dt < tol"),
            ("    k = 0\n", ""),
        ] {
            let other = src.replace(from, to);
            let other = if from.contains("k = 0") {
                other.replace("def f(A, B, T, dt, tol)", "def f(A, B, T, dt, tol, k)")
            } else {
                other
            };
            assert_ne!(other, src);
            let err = steps_of(&other, &[]).unwrap_err();
            assert!(
                err.0.contains("not surely of the type"),
                "{other}: {}",
                err.0
            );
        }
        // A float register from a host value of unknown type, taken as a float.
        let float = src
            .replace("k = t * 2", "k = t * 0.5")
            .replace("    k = 0\n", "")
            .replace("def f(A, B, T, dt, tol)", "def f(A, B, T, dt, tol, k)");
        let c = &steps_of(&float, &[]).unwrap().carried[0];
        assert!(c.needs_initial && c.ty == ScalarType::Float && c.start.is_none());
        // Read before assigned anyway (`k += t`), its type already joins the host's.
        let counted = src.replace("k = t * 2", "k += t");
        assert!(steps_of(&counted, &[]).unwrap().carried[0].needs_initial);
        let counted = counted
            .replace("    k = 0\n", "")
            .replace("def f(A, B, T, dt, tol)", "def f(A, B, T, dt, tol, k)");
        let c = &steps_of(&counted, &[]).unwrap().carried[0];
        assert!(c.needs_initial && c.start.is_none());
        // A rebound name that is no slot: the host's binding would need a slot of its own.
        let rebound = format!(
            "def f(A, B, T, dt, tol):\n    D = A\n    for t in range(T):\n{REGION}        if dt < tol:\n            break\n        D = B\n    return D\n"
        );
        let err = steps_of(&rebound, &[]).unwrap_err();
        assert!(err.0.contains("first bound after the break"), "{}", err.0);
    }

    /// Runs the steps as Python would run the loop's host statements (regions aside), every
    /// value an f64 (bools 0 or 1), for `iterations` values of the loop variable `t`; returns
    /// the iteration the loop broke in, if it did.
    fn run_steps(h: &HostSteps, env: &mut HashMap<String, f64>, iterations: i64) -> Option<i64> {
        fn eval(e: &Expr, env: &HashMap<String, f64>) -> f64 {
            let b = |x: bool| if x { 1.0 } else { 0.0 };
            match &e.kind {
                ExprKind::Int(v) => *v as f64,
                ExprKind::Float(v) => *v,
                ExprKind::Bool(v) => b(*v),
                ExprKind::Name(n) => *env.get(n).unwrap_or_else(|| panic!("`{n}` read unset")),
                ExprKind::Compare { op, left, right } => {
                    let (l, r) = (eval(left, env), eval(right, env));
                    b(match op {
                        CmpOp::Lt => l < r,
                        CmpOp::Le => l <= r,
                        CmpOp::Gt => l > r,
                        CmpOp::Ge => l >= r,
                        CmpOp::Eq => l == r,
                        CmpOp::Ne => l != r,
                    })
                }
                ExprKind::Binary { op, left, right } => {
                    let (l, r) = (eval(left, env), eval(right, env));
                    match op {
                        BinOp::Add => l + r,
                        BinOp::Sub => l - r,
                        BinOp::Mul => l * r,
                        BinOp::Div => l / r,
                        BinOp::Mod => l.rem_euclid(r),
                        _ => unreachable!(),
                    }
                }
                ExprKind::Unary {
                    op: UnaryOp::Not,
                    operand,
                } => b(eval(operand, env) == 0.0),
                ExprKind::BoolOp {
                    op: BoolOp::And,
                    values,
                } => b(values.iter().all(|v| eval(v, env) != 0.0)),
                ExprKind::Call { func, args } if func == "bool" => b(eval(&args[0], env) != 0.0),
                ExprKind::IfExp { test, body, orelse } => {
                    if eval(test, env) != 0.0 {
                        eval(body, env)
                    } else {
                        eval(orelse, env)
                    }
                }
                other => unreachable!("{other:?}"),
            }
        }
        for t in 0..iterations {
            env.insert("t".into(), t as f64);
            for s in &h.steps {
                match s.kind {
                    StepKind::Scalar => {
                        let v = eval(&s.value, env);
                        env.insert(s.target.clone(), v);
                    }
                    StepKind::Break if eval(&s.value, env) != 0.0 => return Some(t),
                    StepKind::Break => {}
                    _ => unreachable!("scalar steps only"),
                }
            }
        }
        None
    }

    /// The registers every step reads start from the host's values (`starts`), the guards
    /// anything: the steps must assign a guard before they read it.
    fn start_env(h: &HostSteps, starts: &[(&str, f64)]) -> HashMap<String, f64> {
        let mut env: HashMap<String, f64> =
            starts.iter().map(|(n, v)| (n.to_string(), *v)).collect();
        for c in h.carried.iter().filter(|c| !c.needs_initial) {
            env.entry(c.name.clone()).or_insert(f64::NAN);
        }
        env
    }

    #[test]
    fn an_if_of_scalars_is_steps_with_python_s_sequential_meaning() {
        // Every path of an if/elif/else with a nested if, the tests reading names the branches
        // assign (so a test read after its branch, or a branch taken the other way round,
        // changes the result), assignments reading earlier ones of their branch.
        let src = format!(
            "def f(A, B, T, dt):\n    x = 1.0\n    k = 0\n    for t in range(T):\n{REGION}        if x > 2.5:\n            x = x - 2.0\n            k = k + x\n        elif t % 3 == 1:\n            x = x * 3.0\n            if x > 4.0:\n                k = k * 2\n            else:\n                k = k - 1\n        else:\n            x = x + 0.5\n    return x, k\n"
        );
        let src = src.replace("k = 0\n", "k = 0.0\n");
        let h = steps_of(&src, &[]).unwrap();
        // Python, step by step.
        let (mut x, mut k) = (1.0f64, 0.0f64);
        for t in 0..12 {
            if x > 2.5 {
                x -= 2.0;
                k += x;
            } else if t % 3 == 1 {
                x *= 3.0;
                if x > 4.0 {
                    k *= 2.0;
                } else {
                    k -= 1.0;
                }
            } else {
                x += 0.5;
            }
        }
        let mut env = start_env(&h, &[("x", 1.0), ("k", 0.0)]);
        assert_eq!(run_steps(&h, &mut env, 12), None);
        assert_eq!((env["x"], env["k"]), (x, k), "{:#?}", h.steps);
        // The guards are bool registers, assigned before any read; x and k start from the
        // host's floats.
        let kinds: Vec<(&str, ScalarType, bool)> = h
            .carried
            .iter()
            .map(|c| (c.name.as_str(), c.ty, c.needs_initial))
            .collect();
        assert_eq!(
            kinds,
            [
                ("_if", ScalarType::Bool, false),
                ("x", ScalarType::Float, true),
                ("k", ScalarType::Float, true),
                ("_if1", ScalarType::Bool, false),
                ("_if2", ScalarType::Bool, false),
            ]
        );
    }

    #[test]
    fn a_break_in_a_branch_follows_that_branch_s_assignments() {
        // The relax loop: the flag is set in the iteration that breaks; in an `elif`, after an
        // assignment; a break in the `else` of an `if`.
        let src = format!(
            "def f(A, B, T, dt, tol):\n    n = 0\n    done = False\n    for t in range(T):\n{REGION}        n += 1\n        if (t + 1) * tol > 3.0:\n            done = True\n            break\n    return n, done\n"
        );
        for (tol, broke, n) in [
            (1.0, Some(3), 4.0),
            (100.0, Some(0), 1.0),
            (0.01, None, 10.0),
        ] {
            let h = steps_of(&src, &[]).unwrap();
            let mut env = start_env(&h, &[("n", 0.0), ("done", 0.0), ("tol", tol)]);
            assert_eq!(run_steps(&h, &mut env, 10), broke, "tol {tol}");
            assert_eq!(
                (env["n"], env["done"]),
                (n, f64::from(u8::from(broke.is_some())))
            );
            let kinds: Vec<&StepKind> = h.steps.iter().map(|s| &s.kind).collect();
            assert_eq!(*kinds.last().unwrap(), &StepKind::Break, "{kinds:?}");
            let done = h.carried.iter().find(|c| c.name == "done").unwrap();
            assert_eq!((done.ty, done.needs_initial), (ScalarType::Bool, true));
        }
        let elif = format!(
            "def f(A, B, T, dt):\n    x = 0\n    y = 0\n    for t in range(T):\n{REGION}        if t % 2 == 0:\n            x = x + 1\n        elif t > 4:\n            y = y + t\n            break\n        else:\n            x = x + 10\n    return x, y\n"
        );
        let h = steps_of(&elif, &[]).unwrap();
        let mut env = start_env(&h, &[("x", 0.0), ("y", 0.0)]);
        assert_eq!(run_steps(&h, &mut env, 20), Some(5));
        // t = 0, 2, 4: +1 each; t = 1, 3: +10 each; t = 5 breaks after y = 5.
        assert_eq!((env["x"], env["y"]), (23.0, 5.0));
        let in_else = format!(
            "def f(A, B, T, dt):\n    x = 0\n    for t in range(T):\n{REGION}        if t < 3:\n            x = x + t\n        else:\n            break\n        x = x * 2\n    return x\n"
        );
        let h = steps_of(&in_else, &[]).unwrap();
        let mut env = start_env(&h, &[("x", 0.0)]);
        assert_eq!(run_steps(&h, &mut env, 9), Some(3));
        assert_eq!(env["x"], ((0.0 * 2.0 + 1.0) * 2.0 + 2.0) * 2.0);
    }

    #[test]
    fn a_name_an_if_assigns_on_some_paths_needs_its_value_from_before_the_loop() {
        let base = |body: &str, before: &str, ret: &str| {
            format!("def f(A, B, T, dt, tol, k):\n{before}    for t in range(T):\n{REGION}{body}    return {ret}\n")
        };
        let carried = |h: &HostSteps, n: &str| h.carried.iter().find(|c| c.name == n).cloned();
        // Assigned in one branch and read after the loop: bound before, of the branch's type.
        let one = "        if t > 2:\n            y = dt * 2.0\n";
        let h = steps_of(&base(one, "    y = 0.0\n", "y"), &[]).unwrap();
        let y = carried(&h, "y").unwrap();
        assert!(y.needs_initial && y.ty == ScalarType::Float, "{y:?}");
        let err = steps_of(&base(one, "", "y"), &[]).unwrap_err();
        assert!(
            err.0
                .contains("`y` is assigned in a branch of an `if` and may be unbound"),
            "{}",
            err.0
        );
        // Of another type before the loop, or where the other branch leaves another: a float
        // after an int; an int register from a parameter of unknown type.
        let err = steps_of(&base(one, "    y = 0\n", "y"), &[]).unwrap_err();
        assert!(
            err.0.contains("`y` keeps its value from before the loop"),
            "{}",
            err.0
        );
        assert!(err.0.contains("not surely a float"), "{}", err.0);
        let other = "        y = 1\n        if t > 2:\n            y = dt * 2.0\n";
        let err = steps_of(&base(other, "", "y"), &[]).unwrap_err();
        assert!(err.0.contains("`y` is given an int here"), "{}", err.0);
        let counted = "        if t > 2:\n            k = k + 1\n";
        let err = steps_of(&base(counted, "", "k"), &[]).unwrap_err();
        assert!(err.0.contains("not surely an int"), "{}", err.0);
        // Assigned on every path (if/else), or before the `if`, or only read in its branch
        // after it is assigned there: no value from before the loop.
        let both = "        if t > 2:\n            s = 0.5\n        else:\n            s = 1.0\n        dt = dt * s\n";
        let h = steps_of(&base(both, "", "dt, s"), &[]).unwrap();
        assert!(!carried(&h, "s").unwrap().needs_initial);
        let local = "        if t > 2:\n            w = dt * 2.0\n            dt = w + 1.0\n";
        let h = steps_of(&base(local, "", "dt"), &[]).unwrap();
        assert!(!carried(&h, "w").unwrap().needs_initial);
        // ... unless a path reads it first: the else branch reads `s` before assigning it.
        let first = "        if t > 2:\n            s = 0.5\n        else:\n            dt = dt * s\n            s = 1.0\n";
        let err = steps_of(&base(first, "", "dt"), &[]).unwrap_err();
        assert!(err.0.contains("`s` is assigned in a branch"), "{}", err.0);
        // A region reading a name only a branch assigns reads its value from before.
        let h = steps_of(
            &base(one, "    y = 0.0\n", "dt"),
            &[("y", ScalarType::Float)],
        )
        .unwrap();
        assert!(carried(&h, "y").unwrap().needs_initial);
        // Not read anywhere else: its register's start is never seen.
        let h = steps_of(&base(one, "", "dt"), &[]).unwrap();
        assert!(!carried(&h, "y").unwrap().needs_initial);
        // A break on a path that has not assigned it: the host's value after a break at once.
        let broke = "        if t > 2:\n            x = 1\n        elif t > 1:\n            break\n        else:\n            x = 2\n";
        let err = steps_of(&base(broke, "", "x"), &[]).unwrap_err();
        assert!(
            err.0.contains("`x` is first assigned after the break"),
            "{}",
            err.0
        );
        let h = steps_of(&base(broke, "    x = 0\n", "x"), &[]).unwrap();
        let x = carried(&h, "x").unwrap();
        assert!(x.needs_initial && x.start == Some(ScalarType::Int), "{x:?}");
    }

    #[test]
    fn what_an_if_cannot_run_on_the_device_keeps_the_loop_on_the_host() {
        for (body, why) in [
            ("            A, B = B, A\n", "the array `B` is rebound inside an `if`"),
            ("            A[0] = dt\n", "an assignment to an array element inside an `if`"),
            ("            print(t)\n", "a call inside an `if`"),
            (
                "            #pragma parallel for\n            for i in range(4):\n                B[i] = dt\n",
                "a region inside an `if`",
            ),
            ("            x = A[1]\n", "reading an element of `A`"),
            ("            t = 0\n", "assigns the loop variable `t`"),
            ("            continue\n", "continue statement inside an `if`"),
        ] {
            let src = format!(
                "def f(A, B, T, dt):\n    x = 0.0\n    for t in range(T):\n{REGION}        if dt > 1.0:\n            x = 2.0\n{body}    return x\n"
            );
            let err = steps_of(&src, &[]).unwrap_err();
            assert!(err.0.contains(why), "{body}: {}", err.0);
        }
        // One break a loop, in a branch or not.
        let src = format!(
            "def f(A, B, T, dt):\n    x = 0.0\n    for t in range(T):\n{REGION}        if dt > 1.0:\n            break\n        if t > 3:\n            x = 1.0\n            break\n    return x\n"
        );
        let err = steps_of(&src, &[]).unwrap_err();
        assert!(err.0.contains("a second `if ...: break`"), "{}", err.0);
        let src = src.replace("        if dt > 1.0:\n            break\n", "");
        assert!(steps_of(&src, &[]).is_ok());
    }
}
