//! join_regions: a `parallel for` region directly after a `parallel for` over the same
//! iterations (host scalar assignments between them aside) that reads what the first one
//! writes, or only reduces into its `reduction` clause's names, becomes one region when every
//! array both use, one of them writing it, is used by both only at the element each iteration
//! owns: the first region's loops with the second body appended to their innermost body, under
//! one pragma holding both regions' clauses. *After*: no such pair is left; `run` names the
//! region each joined one absorbed.
//!
//! Why: a pass that reads back what the pass before it just wrote (a convergence test after
//! its sweep, `diff = np.max(np.abs(B - A))`, which `scalar_reductions` makes a reduction loop,
//! or the same loop written out; `R[i] = B[i] - A[i]` after `B[i] = ...`) streams both arrays
//! again and, in a persistent loop, is a phase of its own behind a grid barrier; joined, each
//! element is used while it is in registers (relax_tol on one H200: 10.8 ms as two regions,
//! 7.9 ms as one; docs/performance.md §70-71). Regions that share no written array are left
//! apart: joining saves them no memory traffic and could cost a stencil its temporal blocking.
//!
//! Legality, against the sequential program (the first loop runs whole, then the second):
//! - both loops step by 1 over ranges whose bounds differ by one constant per level (the
//!   second's iteration `v` is the first's `u + c`), perfectly nested to the second's depth;
//!   the difference may go through what is known of the arrays' sizes (`Sizes`): `range(1,
//!   N - 1)` and `B[1:-1]`'s `range(1, B.shape[0] - 1)` are the same range where `N =
//!   A.shape[0]` is bound once and `B[1:-1] - A[1:-1]` is checked at the launch;
//! - every array both regions use, one of them writing it, is used (read or written) by both
//!   only at one index, each dimension `u + constant` of a distinct nest variable or free of
//!   them: only iteration `u` touches that element, so appended after the first body the second
//!   reads what the whole first loop leaves there, and no iteration of the first sees what the
//!   second writes;
//! - arrays neither writes, both read unchanged;
//! - the second body holds assignments and ifs only, mentions no name the first binds, binds no
//!   name the first mentions, and neither region mentions the other's clause variables;
//! - the host statements between them either all may run before the first region (they assign
//!   names the first does not mention, from numbers and names it does not bind: the joined
//!   region stands where the second stood), or all may run after the second (they mention
//!   nothing it mentions: the joined region stands where the first stood), a start of a
//!   reduction variable from its identity aside, which moves before it (it has no text).
//!
//! The other region's source becomes a note naming the joined one (`Kernel::absorbed`, "above"
//! or "below"), as `fuse_into_reduction` does. A candidate pair that does not join gets a `-v`
//! note at the second region saying why.

use super::affine::{self, Affine};
use crate::diag::Diagnostic;
use crate::frontend::source::Span;
use crate::ir::pragma::{Directive, Pragma};
use crate::ir::*;
use std::collections::{BTreeSet, HashSet};

/// A region joined into the region before it.
#[derive(Debug, Clone, PartialEq)]
pub struct Joined {
    /// The joined region's span (its pragma to its end: the kept region's).
    pub region: Span,
    /// The other region's span (pragma to end), which the host no longer runs there.
    pub absorbed: Span,
}

/// Joins every qualifying pair in the function's host code; `pragmas` (the file's and the
/// made ones) loses both regions' pragmas and gets the joined one, at the kept region's
/// place.
/// `checks`: the launch checks `scalar_reductions` made, by region.
pub fn run(
    func: &mut Function,
    pragmas: &mut Vec<Pragma>,
    checks: &[(Span, Vec<LaunchCheck>)],
    notes: &mut Vec<Diagnostic>,
) -> Vec<Joined> {
    let sizes = Sizes::of(func, checks);
    let mut joined = vec![];
    let mut cx = Cx {
        pragmas,
        notes,
        joined: &mut joined,
        sizes: &sizes,
    };
    cx.block(&mut func.body);
    joined
}

/// What the sizes of a function's arrays are known to satisfy where a pair of regions runs, as
/// forms known to be zero: the launch checks of either region (`scalar_reductions` made them;
/// the joined kernel keeps them, so they hold wherever it runs), and names bound once to
/// sizes (`N = A.shape[0]`) whose arrays are rebound only by reference among arrays of the
/// same size under those checks (`A, B = B, A`).
struct Sizes<'a> {
    checks: &'a [(Span, Vec<LaunchCheck>)],
    /// `N - A.shape[0]`, with the sizes it reads as (array, dimension).
    aliases: Vec<(Affine, Vec<(String, usize)>)>,
    params: HashSet<String>,
    /// Each name's assignments anywhere in the function: `Some(y)` for `x = y`, `None` for
    /// anything else (a loop variable too).
    assigned: std::collections::HashMap<String, Vec<Option<String>>>,
}

impl<'a> Sizes<'a> {
    fn of(func: &Function, checks: &'a [(Span, Vec<LaunchCheck>)]) -> Sizes<'a> {
        let mut assigned: std::collections::HashMap<String, Vec<Option<String>>> =
            Default::default();
        for s in &func.body {
            s.walk(&mut |st| match &st.kind {
                StmtKind::Assign { target, value, .. } => {
                    if let ExprKind::Name(x) = &target.kind {
                        let copied = match &value.kind {
                            ExprKind::Name(y) => Some(y.clone()),
                            _ => None,
                        };
                        assigned.entry(x.clone()).or_default().push(copied);
                    }
                }
                StmtKind::AugAssign { target, .. } => {
                    if let ExprKind::Name(x) = &target.kind {
                        assigned.entry(x.clone()).or_default().push(None);
                    }
                }
                StmtKind::For { var, .. } => assigned.entry(var.clone()).or_default().push(None),
                _ => {}
            });
        }
        // Bound once, at the top level, to sizes: `N = A.shape[0]`, `M = A.shape[1] - 2`.
        let mut aliases = vec![];
        for s in &func.body {
            let Some((_, n, value)) = s.name_assignment() else {
                continue;
            };
            let mut shapes = vec![];
            let sizes_only = !value.any(&mut |x| match &x.kind {
                ExprKind::Shape { array, dim } => {
                    shapes.push((array.clone(), *dim));
                    false
                }
                ExprKind::Name(_) | ExprKind::Subscript { .. } | ExprKind::Call { .. } => true,
                _ => false,
            });
            if sizes_only && !shapes.is_empty() && assigned[n].len() == 1 {
                aliases.push((Affine::symbol(n).sub(&Affine::of(value)), shapes));
            }
        }
        Sizes {
            checks,
            aliases,
            params: func.params.iter().cloned().collect(),
            assigned,
        }
    }

    /// The facts that hold where the regions at `spans` run.
    fn facts(&self, spans: [Span; 2]) -> Vec<Affine> {
        let mut facts: Vec<Affine> = self
            .checks
            .iter()
            .filter(|(at, _)| spans.contains(at))
            .flat_map(|(_, cs)| cs)
            .filter_map(|c| match c {
                LaunchCheck::Equal(a, b, _) => Some(Affine::of(a).sub(&Affine::of(b))),
                LaunchCheck::AtMost(..) => None,
            })
            .collect();
        let held: Vec<Affine> = self
            .aliases
            .iter()
            .filter(|(_, shapes)| shapes.iter().all(|(a, d)| self.size_kept(a, *d, &facts)))
            .map(|(alias, _)| alias.clone())
            .collect();
        facts.extend(held);
        facts
    }

    /// Whether `array.shape[dim]` is the same whenever it is read: `array` is a parameter,
    /// and every name of its rebinding group (names assigned one from another) is assigned only
    /// from names of the group, every parameter among them of that size under `facts`.
    fn size_kept(&self, array: &str, dim: usize, facts: &[Affine]) -> bool {
        if !self.params.contains(array) {
            return false;
        }
        let mut group = vec![array.to_string()];
        let mut k = 0;
        while k < group.len() {
            let x = group[k].clone();
            k += 1;
            let linked = self.assigned.iter().flat_map(|(y, values)| {
                let from_x = values.iter().any(|v| v.as_deref() == Some(x.as_str()));
                let to_x = y == &x;
                let targets = from_x.then(|| y.clone());
                let sources = values
                    .iter()
                    .filter_map(move |v| if to_x { v.clone() } else { None });
                targets.into_iter().chain(sources)
            });
            for y in linked.collect::<Vec<_>>() {
                if !group.contains(&y) {
                    group.push(y);
                }
            }
        }
        let size = |a: &str| {
            Affine::of(&Expr::new(
                ExprKind::Shape {
                    array: a.into(),
                    dim,
                },
                Span::DUMMY,
            ))
        };
        group.iter().all(|y| {
            let copies_only = self
                .assigned
                .get(y)
                .is_none_or(|v| v.iter().all(Option::is_some));
            let same_size =
                !self.params.contains(y) || size(y).sub(&size(array)).reduced_by(facts).is_zero();
            copies_only && same_size
        })
    }
}

struct Cx<'a, 'b> {
    pragmas: &'b mut Vec<Pragma>,
    notes: &'b mut Vec<Diagnostic>,
    joined: &'b mut Vec<Joined>,
    sizes: &'b Sizes<'a>,
}

/// Records each joined region's absorbed source on its kernel (after `outline`).
pub fn mark_absorbed(kernels: &mut [Kernel], joined: &[Joined]) {
    for j in joined {
        if let Some(k) = kernels.iter_mut().find(|k| k.span == j.region) {
            k.absorbed.push(Absorbed::region(j.absorbed));
        }
    }
}

impl Cx<'_, '_> {
    fn block(&mut self, body: &mut Vec<Stmt>) {
        let mut at = 0;
        while at < body.len() {
            if let Some(first) = candidate(body, at) {
                let facts = self
                    .sizes
                    .facts([region_span(&body[first]), region_span(&body[at])]);
                match join(&body[first], &body[first + 1..at], &body[at], &facts) {
                    Ok(plan) => {
                        let (kept, absorbed) = match plan.place {
                            Place::Second => (&body[at], &body[first]),
                            Place::First => (&body[first], &body[at]),
                        };
                        let absorbed = region_span(absorbed);
                        let old = [pragma_of(&body[first]).span, pragma_of(&body[at]).span];
                        let mut region = plan.region;
                        region.span = kept.span;
                        let pragma = Pragma {
                            span: pragma_of(kept).span,
                            line: pragma_of(kept).line,
                            ..region.pragma.clone().expect("the joined pragma")
                        };
                        region.pragma = Some(pragma.clone());
                        self.pragmas.retain(|p| !old.contains(&p.span));
                        self.pragmas.push(pragma);
                        self.joined.push(Joined {
                            region: region_span(&region),
                            absorbed,
                        });
                        let placed = plan
                            .before
                            .into_iter()
                            .chain(std::iter::once(region))
                            .chain(plan.after);
                        let count = at + 1 - first;
                        body.splice(first..=at, placed);
                        at = first + count - 1;
                        continue;
                    }
                    Err(why) => self.notes.push(
                        Diagnostic::note(
                            pragma_of(&body[at]).span,
                            "this region stays a pass of its own after the one before it",
                        )
                        .with_label(why),
                    ),
                }
            }
            if is_region(&body[at]) {
                at += 1;
                continue;
            }
            match &mut body[at].kind {
                StmtKind::For { body: inner, .. }
                | StmtKind::While { body: inner, .. }
                | StmtKind::HostBlock { body: inner, .. } => self.block(inner),
                StmtKind::If {
                    body: b, orelse, ..
                } => {
                    self.block(b);
                    self.block(orelse);
                }
                _ => {}
            }
            at += 1;
        }
    }
}

/// The index of the region before `body[at]` when both are `parallel for` loops with only host
/// scalar assignments between them, and `body[at]` uses an array the first writes or only
/// reduces.
fn candidate(body: &[Stmt], at: usize) -> Option<usize> {
    let (reduction, shared) = clauses(&body[at])?;
    if !shared.is_empty() {
        return None;
    }
    let mut first = at.checked_sub(1)?;
    while matches!(&body[first].kind, StmtKind::Assign { target, .. } if matches!(target.kind, ExprKind::Name(_)))
        && body[first].pragma.is_none()
    {
        first = first.checked_sub(1)?;
    }
    clauses(&body[first])?;
    // Only a second pass over what the first wrote (or a reduction of its own) is worth one
    // pass: independent regions keep their shapes (a stencil phase its temporal blocking).
    let written = written_arrays(&body[first]);
    let reads_written = {
        let mut found = false;
        body[at].walk(&mut |st| {
            for e in st.exprs() {
                e.walk(&mut |x| {
                    found |= matches!(&x.kind, ExprKind::Subscript { array, .. } if written.contains(array));
                });
            }
        });
        found
    };
    (reads_written || (!reduction.is_empty() && only_updates(&body[at], &reduction)))
        .then_some(first)
}

/// The arrays a statement stores to.
fn written_arrays(s: &Stmt) -> HashSet<String> {
    let mut out = HashSet::new();
    s.walk(&mut |st| {
        if let StmtKind::Assign { target, .. } = &st.kind {
            if let ExprKind::Subscript { array, .. } = &target.kind {
                out.insert(array.clone());
            }
        }
    });
    out
}

/// The loop nest's statements are loops and assignments to `vars` only: a reduction and
/// nothing else.
fn only_updates(s: &Stmt, vars: &[String]) -> bool {
    let mut only = true;
    s.walk(&mut |st| match &st.kind {
        StmtKind::For { .. } => {}
        StmtKind::Assign { target, .. } => {
            only &= matches!(&target.kind, ExprKind::Name(n) if vars.contains(n))
        }
        _ => only = false,
    });
    only
}

/// A `parallel for`'s clause variables (reduction, shared), or None for any other statement.
fn clauses(s: &Stmt) -> Option<(Vec<String>, Vec<String>)> {
    let StmtKind::For {
        kind: LoopKind::Parallel { .. },
        ..
    } = &s.kind
    else {
        return None;
    };
    match &s.pragma.as_ref()?.directive {
        Directive::ParallelFor {
            shared, reduction, ..
        } => Some((
            reduction.iter().map(|r| r.var.clone()).collect(),
            shared.iter().map(|(v, _)| v.clone()).collect(),
        )),
        _ => None,
    }
}

fn is_region(s: &Stmt) -> bool {
    super::device_statements::is_region(s)
}

fn pragma_of(s: &Stmt) -> &Pragma {
    s.pragma.as_ref().expect("a region's pragma")
}

/// A region statement's span as `outline` gives its kernel: pragma to end.
fn region_span(s: &Stmt) -> Span {
    pragma_of(s).span.to(s.span)
}

/// The loops of a perfect nest `depth` deep from `s`: (variable, range, kind) per level, and
/// the innermost body.
type Level<'a> = (&'a str, &'a Range, LoopKind);

fn nest(s: &Stmt, depth: usize) -> Result<(Vec<Level<'_>>, &[Stmt]), String> {
    let mut levels = vec![];
    let mut cur = s;
    loop {
        let StmtKind::For {
            var,
            range,
            body,
            kind,
            ..
        } = &cur.kind
        else {
            return Err("the loops are not nested alike".into());
        };
        levels.push((var.as_str(), range, *kind));
        if levels.len() == depth {
            return Ok((levels, body));
        }
        match body.as_slice() {
            [inner] => cur = inner,
            _ => return Err("the loops are not nested alike".into()),
        }
    }
}

/// How deep the second region's loop nest goes: loops whose body is one loop.
fn depth(s: &Stmt) -> usize {
    match &s.kind {
        StmtKind::For { body, .. } => match body.as_slice() {
            [inner @ Stmt {
                kind: StmtKind::For { .. },
                ..
            }] => 1 + depth(inner),
            _ => 1,
        },
        _ => 0,
    }
}

/// Where the joined region runs: where the second stood (what stands between runs before
/// it, as written) or where the first region stood (it runs after).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Place {
    Second,
    First,
}

/// The joined region (its span and pragma's are the kept region's, set by the caller) and
/// the statements between the two regions, before and after it.
struct Plan {
    region: Stmt,
    place: Place,
    before: Vec<Stmt>,
    after: Vec<Stmt>,
}

/// The joined region, or why the pair cannot join.
/// `facts`: what the arrays' sizes are known to satisfy where the two run (`Sizes::facts`).
fn join(first: &Stmt, between: &[Stmt], second: &Stmt, facts: &[Affine]) -> Result<Plan, String> {
    let k = depth(second);
    let (second_levels, second_body) = nest(second, k)?;
    let (levels, _) = nest(first, k)?;
    let offsets = offsets(&levels, &second_levels, facts)?;
    let nest_vars: Vec<String> = levels.iter().map(|(u, ..)| u.to_string()).collect();
    let (second_vars, first_vars) = pragma_vars(first, second);
    let first_bound = bound_names(first);
    let first_names = first.names();
    let own: HashSet<&str> = second_levels.iter().map(|(v, ..)| *v).collect();
    let (body, locals) = second_body_renamed(
        second_body,
        &offsets,
        &own,
        &second_vars,
        &first_bound,
        &first_names,
    )?;
    // Neither region touches the other's clause variables.
    let crossed = second_vars.iter().find(|v| first_names.contains(*v));
    let crossed = crossed.or_else(|| first_vars.iter().find(|v| mentioned_in(second_body, v)));
    if let Some(v) = crossed {
        return Err(format!("both regions use `{v}`"));
    }
    let bound: HashSet<String> = first_bound.iter().cloned().chain(locals).collect();
    check_elements(first, &nest_vars, &bound, &body)?;
    let (place, before, after) = arrange(between, second, &first_names, &first_bound)?;
    // The first region's loops with the second body appended innermost, under the merged
    // pragma (its span is the kept region's: the caller's).
    let mut region = first.clone();
    append_innermost(&mut region, k, body);
    let pragma = merged_pragma(pragma_of(first), pragma_of(second));
    if let (
        StmtKind::For { num_warps, .. },
        Directive::ParallelFor {
            num_warps: merged, ..
        },
    ) = (&mut region.kind, &pragma.directive)
    {
        *num_warps = *merged;
    }
    region.pragma = Some(pragma);
    Ok(Plan {
        region,
        place,
        before,
        after,
    })
}

/// The second loop's iteration `v` as the first's `u + c`, level by level: steps of 1 and
/// bounds that differ by the same constant under `facts`.
fn offsets(
    levels: &[Level<'_>],
    second: &[Level<'_>],
    facts: &[Affine],
) -> Result<Vec<(String, String, i64)>, String> {
    let mut out = vec![];
    for ((u, ur, _), (v, vr, _)) in levels.iter().zip(second) {
        if !is_one(&ur.step) || !is_one(&vr.step) {
            return Err("a loop steps by other than 1".into());
        }
        let lo = Affine::of(&vr.start)
            .sub(&Affine::of(&ur.start))
            .reduced_by(facts)
            .as_constant();
        let hi = Affine::of(&vr.stop)
            .sub(&Affine::of(&ur.stop))
            .reduced_by(facts)
            .as_constant();
        match (lo, hi) {
            (Some(lo), Some(hi)) if lo == hi => out.push((v.to_string(), u.to_string(), lo)),
            _ => return Err("the two loops' ranges are not shown to be the same".into()),
        }
    }
    Ok(out)
}

/// The second body in the first loop's variables, and the locals it binds. It may hold
/// assignments (to its clause variables, locals and elements) and ifs; it may mention no name
/// the first region binds, and the first may mention none of its locals.
fn second_body_renamed(
    body: &[Stmt],
    offsets: &[(String, String, i64)],
    own_vars: &HashSet<&str>,
    clause_vars: &[String],
    first_bound: &HashSet<String>,
    first_names: &HashSet<String>,
) -> Result<(Vec<Stmt>, Vec<String>), String> {
    let mut kinds_ok = true;
    let mut locals: Vec<String> = vec![];
    let mut clash = None;
    for s in body {
        s.walk(&mut |st| {
            match &st.kind {
                StmtKind::Assign {
                    target,
                    atomic: false,
                    ..
                } => {
                    if let ExprKind::Name(n) = &target.kind {
                        if !clause_vars.contains(n) {
                            locals.push(n.clone());
                        }
                    }
                }
                StmtKind::If { .. } | StmtKind::Pass => {}
                _ => kinds_ok = false,
            }
            for e in st.exprs() {
                e.walk(&mut |e| {
                    if let ExprKind::Name(n) = &e.kind {
                        if !own_vars.contains(n.as_str()) && first_bound.contains(n) {
                            clash.get_or_insert_with(|| n.clone());
                        }
                    }
                });
            }
        });
    }
    if !kinds_ok {
        return Err("it holds more than assignments and ifs".into());
    }
    if let Some(n) = clash.or_else(|| locals.iter().find(|l| first_names.contains(*l)).cloned()) {
        return Err(format!("both regions bind `{n}`"));
    }
    let renamed_body = body
        .iter()
        .map(|s| {
            let mut s = s.clone();
            s.rewrite_exprs(&mut |e| e.rewrite(&mut |e| renamed(e, offsets)));
            s
        })
        .collect();
    Ok((renamed_body, locals))
}

/// One node of the second body renamed to the first loop's variables (`v` as `u + c`), with
/// `(u - 1) + 1` folded to `u`: an element reads as the first region indexes it.
fn renamed(e: Expr, offsets: &[(String, String, i64)]) -> Expr {
    match &e.kind {
        ExprKind::Name(n) => match offsets.iter().find(|(v, ..)| v == n) {
            Some((_, u, c)) => fold_offset(Expr::name(u, e.span), *c),
            None => e,
        },
        ExprKind::Binary {
            op: op @ (BinOp::Add | BinOp::Sub),
            left,
            right,
        } => match (&left.kind, &right.kind) {
            (
                ExprKind::Binary {
                    op: inner @ (BinOp::Add | BinOp::Sub),
                    left: base,
                    right: c1,
                },
                ExprKind::Int(c2),
            ) => match c1.kind {
                ExprKind::Int(c1) => {
                    let sign = |op: &BinOp| if *op == BinOp::Sub { -1 } else { 1 };
                    fold_offset((**base).clone(), sign(inner) * c1 + sign(op) * c2)
                }
                _ => e,
            },
            _ => e,
        },
        _ => e,
    }
}

/// `base + c` as Python writes it: `base`, `base + 2`, `base - 1`.
fn fold_offset(base: Expr, c: i64) -> Expr {
    let span = base.span;
    match c {
        0 => base,
        c if c > 0 => Expr::binary(BinOp::Add, base, Expr::int(c, span)),
        c => Expr::binary(BinOp::Sub, base, Expr::int(-c, span)),
    }
}

fn is_one(e: &Expr) -> bool {
    matches!(e.kind, ExprKind::Int(1))
}

/// The second region's reduction variables and the first region's (reduction and shared).
fn pragma_vars(first: &Stmt, second: &Stmt) -> (Vec<String>, Vec<String>) {
    let (red, _) = clauses(second).expect("a parallel for");
    let (r, s) = clauses(first).expect("a parallel for");
    (red, r.into_iter().chain(s).collect())
}

/// Every name a statement binds: loop variables and assignment targets, at any depth.
fn bound_names(s: &Stmt) -> HashSet<String> {
    let mut out = HashSet::new();
    s.walk(&mut |s| match &s.kind {
        StmtKind::For { var, .. } => {
            out.insert(var.clone());
        }
        StmtKind::Assign { target, .. } => {
            if let ExprKind::Name(n) = &target.kind {
                out.insert(n.clone());
            }
        }
        _ => {}
    });
    out
}

fn mentioned_in(body: &[Stmt], name: &str) -> bool {
    body.iter().any(|s| s.names().contains(name))
}

/// Every array both regions use, one of them writing it, is used by both only at one element,
/// which iteration `u` alone names: fused, iteration `u` of the second sees what the whole
/// first loop leaves there, and the first never sees what the second writes.
fn check_elements(
    first: &Stmt,
    nest_vars: &[String],
    bound: &HashSet<String>,
    second: &[Stmt],
) -> Result<(), String> {
    let mut other = false;
    first.walk(&mut |s| {
        other |= !matches!(
            s.kind,
            StmtKind::Assign { .. } | StmtKind::For { .. } | StmtKind::If { .. } | StmtKind::Pass
        )
    });
    if other {
        return Err(
            "the region before it holds statements other than assignments, loops and ifs".into(),
        );
    }
    let (a, b) = (accesses(std::slice::from_ref(first)), accesses(second));
    let written: BTreeSet<&str> = a.iter().chain(&b).filter(|x| x.2).map(|x| x.0).collect();
    for array in written {
        let (in_a, in_b): (Vec<_>, Vec<_>) = (
            a.iter().filter(|x| x.0 == array).collect(),
            b.iter().filter(|x| x.0 == array).collect(),
        );
        if in_a.is_empty() || in_b.is_empty() {
            continue;
        }
        let w = in_a[0].1;
        let one = injective(w, nest_vars, bound)
            && in_a.iter().chain(&in_b).all(|x| same_element(w, x.1));
        if !one {
            return Err(format!(
                "`{array}`, which one region writes, is used by the other not only at the element each iteration writes"
            ));
        }
    }
    Ok(())
}

/// Every subscript of the statements: (array, indices, whether it is a store's target).
fn accesses(stmts: &[Stmt]) -> Vec<(&str, &[Index], bool)> {
    let mut out = vec![];
    for s in stmts {
        s.walk(&mut |st| {
            let target = match &st.kind {
                StmtKind::Assign { target, .. } => Some(target),
                _ => None,
            };
            for e in st.exprs() {
                let is_target = target.is_some_and(|t| std::ptr::eq(t, e));
                e.walk(&mut |x| {
                    if let ExprKind::Subscript { array, indices } = &x.kind {
                        out.push((
                            array.as_str(),
                            indices.as_slice(),
                            is_target && std::ptr::eq(x, e),
                        ));
                    }
                });
            }
        });
    }
    out
}

/// Each dimension of the index is affine in at most one loop variable of the nest, with
/// coefficient 1, every nest variable in exactly one dimension, and nothing else the region
/// binds: iteration `u` alone writes the element.
fn injective(index: &[Index], nest_vars: &[String], bound: &HashSet<String>) -> bool {
    let mut seen = vec![];
    for ix in index {
        let Index::At(e) = ix else { return false };
        if !affine::reads_exactly(e) {
            return false;
        }
        let mut vars = vec![];
        let mut stray = false;
        e.walk(&mut |e| {
            if let ExprKind::Name(n) = &e.kind {
                if nest_vars.contains(n) {
                    vars.push(n.clone());
                } else if bound.contains(n) {
                    stray = true;
                }
            }
        });
        if stray {
            return false;
        }
        let form = Affine::of(e);
        match vars.as_slice() {
            [] => {}
            [v] if form.terms().get(v) == Some(&1) => seen.push(v.clone()),
            _ => return false,
        }
    }
    seen.sort();
    let mut all = nest_vars.to_vec();
    all.sort();
    seen == all
}

fn same_element(w: &[Index], r: &[Index]) -> bool {
    w.len() == r.len()
        && w.iter().zip(r).all(|(a, b)| match (a, b) {
            (Index::At(a), Index::At(b)) => {
                affine::reads_exactly(b) && Affine::of(a).sub(&Affine::of(b)).is_zero()
            }
            _ => false,
        })
}

/// Where the joined region runs, and which statements between the regions run before and
/// after it. Where the second stood when every one may run before the first region;
/// otherwise where the first region stood when every one may run after the second, but
/// for the start of a reduction variable that starts from its identity (`ReductionVar::start`:
/// the launch passes the identity, so the statement has no text to keep in order).
fn arrange(
    between: &[Stmt],
    reduction: &Stmt,
    first_names: &HashSet<String>,
    first_bound: &HashSet<String>,
) -> Result<(Place, Vec<Stmt>, Vec<Stmt>), String> {
    let early: Result<(), String> = between
        .iter()
        .try_for_each(|s| runs_before(s, first_names, first_bound));
    let Err(why) = early else {
        return Ok((Place::Second, between.to_vec(), vec![]));
    };
    let (before, after): (Vec<&Stmt>, Vec<&Stmt>) = between.iter().partition(|s| {
        starts_from_identity(s, reduction) && runs_before(s, first_names, first_bound).is_ok()
    });
    let red_names = reduction.names();
    if after.iter().all(|s| runs_after(s, &red_names))
        && before
            .iter()
            .all(|b| after.iter().all(|a| independent(a, b)))
    {
        return Ok((
            Place::First,
            before.into_iter().cloned().collect(),
            after.into_iter().cloned().collect(),
        ));
    }
    Err(why)
}

/// A host statement between the regions may run before the first one: a name assigned from
/// numbers and names the first region does not bind, the name not mentioned by the first.
fn runs_before(
    s: &Stmt,
    first_names: &HashSet<String>,
    first_bound: &HashSet<String>,
) -> Result<(), String> {
    let (name, value) = assigned_name(s)?;
    if first_names.contains(name) {
        return Err(format!(
            "`{name}`, assigned between the regions, is used by the one before"
        ));
    }
    let mut ok = true;
    value.walk(&mut |e| match &e.kind {
        ExprKind::Name(n) => ok &= !first_bound.contains(n),
        ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::Bool(_) | ExprKind::FloatSpecial(_) => {}
        ExprKind::Binary { .. } | ExprKind::Unary { .. } => {}
        _ => ok = false,
    });
    if ok {
        Ok(())
    } else {
        Err(format!(
            "`{name}` is assigned between the regions from more than numbers and names"
        ))
    }
}

/// A host statement between the regions may run after the second: it mentions nothing the
/// second mentions.
fn runs_after(s: &Stmt, red_names: &HashSet<String>) -> bool {
    s.pragma.is_none() && !s.names().iter().any(|n| red_names.contains(n))
}

/// `s` assigns a reduction variable of `reduction` that starts from its identity.
fn starts_from_identity(s: &Stmt, reduction: &Stmt) -> bool {
    let Ok((name, _)) = assigned_name(s) else {
        return false;
    };
    matches!(&reduction.pragma, Some(p) if matches!(&p.directive,
        Directive::ParallelFor { reduction, .. }
            if reduction.iter().any(|r| r.var == name && r.start.is_some())))
}

/// Two statements that may trade places: neither mentions what the other assigns.
fn independent(a: &Stmt, b: &Stmt) -> bool {
    let (ma, mb) = (a.names(), b.names());
    bound_names(a).iter().all(|n| !mb.contains(n)) && bound_names(b).iter().all(|n| !ma.contains(n))
}

fn assigned_name(s: &Stmt) -> Result<(&str, &Expr), String> {
    match &s.kind {
        StmtKind::Assign {
            target:
                Expr {
                    kind: ExprKind::Name(name),
                    ..
                },
            value,
            atomic: false,
        } if s.pragma.is_none() => Ok((name, value)),
        _ => Err("a statement between the regions".into()),
    }
}

fn append_innermost(s: &mut Stmt, depth: usize, updates: Vec<Stmt>) {
    let StmtKind::For { body, .. } = &mut s.kind else {
        unreachable!("a loop nest")
    };
    if depth == 1 {
        body.extend(updates);
    } else {
        append_innermost(&mut body[0], depth - 1, updates);
    }
}

/// The first region's loop kind and clauses with the second's reduction variables added.
fn merged_pragma(first: &Pragma, reduction: &Pragma) -> Pragma {
    let (
        Directive::ParallelFor {
            simd,
            num_warps,
            shared,
            reduction: first_vars,
            tf32,
        },
        Directive::ParallelFor {
            num_warps: red_warps,
            reduction: red_vars,
            tf32: red_tf32,
            ..
        },
    ) = (&first.directive, &reduction.directive)
    else {
        unreachable!("two parallel for pragmas")
    };
    Pragma {
        directive: Directive::ParallelFor {
            simd: *simd,
            num_warps: num_warps.or(*red_warps),
            shared: shared.clone(),
            reduction: first_vars.iter().chain(red_vars).cloned().collect(),
            tf32: *tf32 || *red_tf32,
        },
        ..reduction.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::attach_pragmas::tests::attached_in;

    /// The function after scalar_reductions and this pass: its body, the joined pairs, the
    /// notes' labels, and the pragma list.
    fn joined_in(src: &str) -> (Function, Vec<Joined>, Vec<String>, Vec<Pragma>) {
        let (mut f, file) = attached_in(src).expect("pragmas attach");
        crate::passes::device_statements::run(&mut f, |at| file.line_of(at.start as usize));
        let made = crate::passes::scalar_reductions::run(&mut f, &file);
        let mut pragmas: Vec<Pragma> = crate::frontend::pragma::collect_pragmas(&file)
            .expect("pragmas")
            .into_iter()
            .chain(made.pragmas)
            .collect();
        let mut notes = vec![];
        let joined = run(&mut f, &mut pragmas, &made.checks, &mut notes);
        let why = notes.into_iter().filter_map(|n| n.label).collect();
        (f, joined, why, pragmas)
    }

    fn printed(body: &[Stmt]) -> String {
        let mut w = crate::codegen::writer::Writer::new(0);
        crate::codegen::python::stmts(&mut w, body);
        w.finish()
    }

    fn loop_body(s: &Stmt) -> &[Stmt] {
        match &s.kind {
            StmtKind::For { body, .. } | StmtKind::While { body, .. } => body,
            _ => panic!("{s:?}"),
        }
    }

    const RELAX: &str = "def f(A, B, N, tol):\n    diff = tol + 1.0\n    while diff > tol:\n        #pragma parallel for simd\n        for i in range(1, N - 1):\n            B[i] = 0.5 * (A[i - 1] + A[i + 1])\n        diff = np.max(np.abs(B[1:N - 1] - A[1:N - 1]))\n        A, B = B, A\n";

    /// RELAX with the sizes read from `A` and the test over open slices.
    const OPEN: &str = "def f(A, B, tol):\n    N = A.shape[0]\n    diff = tol + 1.0\n    while diff > tol:\n        #pragma parallel for simd\n        for i in range(1, N - 1):\n            B[i] = 0.5 * (A[i - 1] + A[i + 1])\n        diff = np.max(np.abs(B[1:-1] - A[1:-1]))\n        A, B = B, A\n";

    #[test]
    fn open_slices_join_through_a_size_bound_once_and_the_launch_check() {
        // `range(1, N - 1)` against `range(1, B.shape[0] - 1)`: the same range, since N is
        // A.shape[0], A and B only swap, and B's length is checked against A's at the launch.
        let (_, joined, why, _) = joined_in(OPEN);
        assert!(why.is_empty() && joined.len() == 1, "{why:?}");
        let no = |src: &str, what: &str| {
            let (_, joined, why, _) = joined_in(src);
            assert!(joined.is_empty(), "{what}");
            assert_eq!(
                why,
                ["the two loops' ranges are not shown to be the same"],
                "{what}"
            );
        };
        no(
            &OPEN.replace(
                "    N = A.shape[0]\n",
                "    N = A.shape[0] - 1\n    N = N + 1\n",
            ),
            "N bound twice",
        );
        no(
            &OPEN.replace(
                "        A, B = B, A\n",
                "        A, B = B, A\n        B = A * 1.0\n",
            ),
            "B rebound to a new array",
        );
        no(
            &OPEN.replace("    N = A.shape[0]\n", "    N = tol.shape[0]\n"),
            "N the size of another array",
        );
        // Both dimensions from one size: only a square array makes the ranges the same.
        let square = "def f(A, B, tol):\n    N = A.shape[0]\n    diff = tol + 1.0\n    while diff > tol:\n        #pragma parallel for\n        for i in range(1, N - 1):\n            #pragma simd\n            for j in range(1, N - 1):\n                B[i, j] = A[i, j] * 0.5\n        diff = np.max(np.abs(B[1:-1, 1:-1] - A[1:-1, 1:-1]))\n        A, B = B, A\n";
        no(square, "one size for both dimensions");
        let (_, joined, _, _) = joined_in(
            &square
                .replace("    N = A.shape[0]\n", "    N, M = A.shape\n")
                .replace("for j in range(1, N - 1)", "for j in range(1, M - 1)"),
        );
        assert_eq!(joined.len(), 1);
    }

    #[test]
    fn a_bare_convergence_test_joins_the_sweep_before_it_at_its_own_place() {
        let (f, joined, why, pragmas) = joined_in(RELAX);
        assert!(why.is_empty(), "{why:?}");
        let body = loop_body(&f.body[1]);
        // The identity's start, then the joined region where the test stood, then the swap.
        assert!(
            matches!(&body[0].kind, StmtKind::Assign { value, .. }
            if value.kind == ExprKind::FloatSpecial("-inf")),
            "{}",
            printed(body)
        );
        assert!(
            is_region(&body[1]) && !body[2..].iter().any(is_region),
            "{}",
            printed(body)
        );
        let text = printed(&body[1..2]);
        assert!(
            text.contains(
                "B[i] = 0.5 * (A[i - 1] + A[i + 1])\n    diff = max(diff, np.abs(B[i] - A[i]))"
            ),
            "{text}"
        );
        let [j] = joined.as_slice() else {
            panic!("{joined:?}")
        };
        // The region now stands at the test's place; the sweep's source is absorbed.
        assert_eq!(j.region, region_span(&body[1]));
        assert!(j.absorbed.end <= j.region.start);
        // One pragma for it, holding the reduction; the sweep's is gone.
        let p = pragmas
            .iter()
            .find(|p| p.span == pragma_of(&body[1]).span)
            .unwrap();
        let Directive::ParallelFor {
            simd, reduction, ..
        } = &p.directive
        else {
            panic!()
        };
        assert_eq!((simd.is_some(), reduction[0].var.as_str()), (true, "diff"));
        assert!(!pragmas
            .iter()
            .any(|p| p.span.start < j.region.start && p.span.start >= j.absorbed.start));
    }

    #[test]
    fn an_offset_loop_reads_the_first_loops_elements_by_its_variable() {
        let src = "def f(A, B, N):\n    #pragma parallel for simd\n    for i in range(1, N - 1):\n        B[i] = A[i - 1] - A[i + 1]\n    m = float('-inf')\n    #pragma parallel for simd reduction(max:m)\n    for k in range(0, N - 2):\n        m = max(m, B[k + 1] * A[k + 1])\n    return m\n";
        let (f, joined, why, _) = joined_in(src);
        assert!(why.is_empty(), "{why:?}");
        assert_eq!(joined.len(), 1);
        let text = printed(&f.body);
        assert!(text.contains("m = max(m, B[i] * A[i])"), "{text}");
        // `m`'s start runs before the joined region, as written.
        assert!(
            text.find("m = float").unwrap() < text.find("for i in").unwrap(),
            "{text}"
        );
    }

    #[test]
    fn a_pass_that_reads_back_the_one_before_joins_it_stores_and_all() {
        // The second stores and reduces, reading what the first wrote at each element; a
        // local of its own comes along.
        let src = "def f(A, B, C, N, T):\n    for t in range(T):\n        #pragma parallel for simd\n        for i in range(N):\n            C[i] = A[i]\n        d = 0.0\n        #pragma parallel for simd reduction(max:d)\n        for k in range(N):\n            r = C[k] + 1.0\n            B[k] = r\n            d = max(d, B[k])\n";
        let (f, joined, notes, _) = joined_in(src);
        assert!(notes.is_empty(), "{notes:?}");
        assert_eq!(joined.len(), 1);
        let text = printed(loop_body(&f.body[0]));
        assert!(
            text.contains("C[i] = A[i]\n    r = C[i] + 1.0\n    B[i] = r\n    d = max(d, B[i])"),
            "{text}"
        );
    }

    #[test]
    fn a_2d_sweep_and_its_test_join_at_the_inner_loop() {
        let src = "def f(A, B, M, N, T):\n    for t in range(T):\n        #pragma parallel for\n        for i in range(1, M - 1):\n            #pragma simd\n            for j in range(1, N - 1):\n                B[i, j] = A[i - 1, j] + A[i, j + 1]\n        d = np.max(np.abs(B[1:M - 1, 1:N - 1] - A[1:M - 1, 1:N - 1]))\n";
        let (f, joined, why, _) = joined_in(src);
        assert!(why.is_empty(), "{why:?}");
        assert_eq!(joined.len(), 1);
        let text = printed(loop_body(&f.body[0]));
        assert!(
            text.contains("B[i, j] = A[i - 1, j] + A[i, j + 1]\n        d = max(d, np.abs(B[i, j] - A[i, j]))"),
            "{text}"
        );
    }

    #[test]
    fn a_host_update_the_sweep_reads_keeps_its_place_and_the_join_takes_the_sweeps() {
        // `scale` changes between the regions and the sweep reads it: the sweep cannot move
        // past it, so the reduction moves up (the update reads nothing the test reads).
        let src = "def f(u, v, T, N):\n    scale = 1.0\n    for t in range(T):\n        #pragma parallel for simd\n        for i in range(N):\n            v[i] = scale * u[i]\n        scale = scale * 0.5\n        e = np.sum(v[:N] * v[:N])\n    return e\n";
        let (f, joined, why, _) = joined_in(src);
        assert!(why.is_empty(), "{why:?}");
        let [j] = joined.as_slice() else {
            panic!("{joined:?}")
        };
        assert!(j.absorbed.start > j.region.start, "{joined:?}");
        let body = loop_body(&f.body[1]);
        let text = printed(body);
        let (start, region, update) = (
            text.find("e = 0").unwrap(),
            text.find("for i in").unwrap(),
            text.find("scale = scale * 0.5").unwrap(),
        );
        assert!(start < region && region < update, "{text}");
    }

    #[test]
    fn what_cannot_join_stays_two_regions_with_a_note_saying_why() {
        let pair = |first: &str, between: &str, second: &str| {
            format!("def f(A, B, C, N, w):\n    #pragma parallel for simd\n    for i in range(N - 1):\n        {first}\n    {between}\n    #pragma parallel for simd reduction(+:s)\n    for i in range(N - 1):\n        {second}\n    return s\n")
        };
        for (src, why) in [
            // A neighbour's element: written by another iteration.
            (pair("B[i] = A[i]", "s = 0.0", "s += B[i] * B[i + 1]"), "not only at the element"),
            // Written at two elements by each iteration.
            (pair("B[i] = A[i]\n        B[i + 1] = A[i]", "s = 0.0", "s += B[i]"), "not only at the element"),
            // Every iteration writes the one element the reduction reads.
            (pair("B[0] = A[i]", "s = 0.0", "s += B[0]"), "not only at the element"),
            // A start read from an array the first loop writes.
            (pair("B[i] = A[i]", "s = B[0]", "s += B[i]"), "from more than numbers"),
            // The first loop reads what is assigned between them, and so does the second.
            (pair("B[i] = w * A[i]", "w = 2.0", "s += w * B[i]"), "`w`"),
            // Ranges that differ in length.
            (
                "def f(A, B, N):\n    #pragma parallel for simd\n    for i in range(N):\n        B[i] = A[i]\n    s = 0.0\n    #pragma parallel for simd reduction(+:s)\n    for i in range(N - 1):\n        s += B[i]\n    return s\n".to_string(),
                "ranges",
            ),
            // The first loop uses the reduction's variable.
            (pair("B[i] = A[i] + s", "w = 1.0", "s += B[i]"), "both regions use `s`"),
        ] {
            let (f, joined, notes, _) = joined_in(&src);
            assert!(joined.is_empty(), "{src}");
            assert!(f.body.iter().filter(|s| is_region(s)).count() == 2, "{src}");
            assert!(notes.iter().any(|n| n.contains(why)), "{src}\n{notes:?}");
        }
        // The second writes what the first reads at another iteration's element.
        let src = "def f(A, B, N):\n    #pragma parallel for simd\n    for i in range(N - 1):\n        B[i] = A[i + 1]\n    #pragma parallel for simd\n    for i in range(N - 1):\n        A[i] = B[i] * 2.0\n";
        let (_, joined, notes, _) = joined_in(src);
        assert!(joined.is_empty(), "{joined:?}");
        assert!(
            notes
                .iter()
                .any(|n| n.contains("`A`, which one region writes")),
            "{notes:?}"
        );
        // Regions that share no written array stay apart, without a note.
        let src = "def f(A, B, C, D, N):\n    #pragma parallel for simd\n    for i in range(N):\n        B[i] = A[i]\n    #pragma parallel for simd\n    for i in range(N):\n        D[i] = C[i] + A[i]\n";
        let (_, joined, notes, _) = joined_in(src);
        assert!(joined.is_empty() && notes.is_empty(), "{notes:?}");
        // Swapped axes: the second reads B[j, i] where the first writes B[i, j].
        let src = "def f(A, B, N, T):\n    for t in range(T):\n        #pragma parallel for\n        for j in range(N):\n            #pragma simd\n            for i in range(N):\n                B[i, j] = A[i, j]\n        d = np.sum(B[:N, :N])\n";
        let (_, joined, notes, _) = joined_in(src);
        assert!(joined.is_empty() && notes.len() == 1, "{notes:?}");
    }
}
