//! live_out: a host scalar that a region assigns flows in and out of it as in the sequential
//! program: the host's value where the region reads it before assigning it, and the region's
//! last value where the host may read it after the region (before assigning it again).
//! *After*: each name read after its region has a `SharedScalar` entry on the region with
//! `implicit` set (where it is read). A region that one program runs (no grid dimensions: a
//! `sequential for`, a tensor statement reducing into a name) holds the name as a local, which
//! starts as the host's value (`_x_local = x`) when the region reads it first, and ends by
//! storing it to the entry's buffer (`update: Store`, buffer named). Other regions' entries are
//! left to `shared_scalars`, which classifies them as if `shared(x)` were written.
//!
//! Why: a kernel's scalars die with it and are born unbound. `s = np.sum(A[:N])` under a
//! dimension pragma, a `sequential for` that computes a value, or `diff = np.max(...)` read by
//! the `while` around it lost the value: the host kept its old one (or none: a NameError), and a
//! persistent loop whose test read it could leave the other programs looping on a value they
//! never saw. A `sequential for` updating `p = p * v` read a `p` the kernel never received.
//!
//! Liveness is decided on the IR, with the source's tokens for statements the IR keeps no
//! expressions of (`return s`): a read is any mention before an assignment that surely runs
//! (a plain `x = v` not reading `x`, in the same block or both branches of an `if`); a host loop
//! around the region runs again (its test, then its body up to the region); a `break` may skip
//! the assignments after it. Anything unsure counts as a read: a name too many comes back, never
//! one too few.

use super::device_statements::is_region;
use crate::frontend::source::{SourceFile, Span};
use crate::ir::pragma::Directive;
use crate::ir::*;
use rustpython_parser::lexer::lex;
use rustpython_parser::{Mode, Tok};
use std::collections::HashSet;

pub fn run(file: &SourceFile, func: &Function, kernels: &mut [Kernel]) {
    for k in kernels.iter_mut() {
        let Some(path) = path_to_region(&func.body, k.pragma_span) else {
            continue;
        };
        let region = path.last().map(|(block, i)| &block[*i]).expect("a path");
        let mut used = k.names();
        for (var, first) in assigned_scalars(region) {
            if k.shared.iter().any(|s| s.var == var) || reduction_var(region, &var) {
                continue;
            }
            let read_at = read_after(file, &path, &var);
            if !k.dims.is_empty() {
                // Several programs: `shared_scalars` decides how their stores or updates
                // combine (a value read before it is assigned would be a race there).
                if let Some(read_at) = read_at {
                    k.shared.push(result(&var, first, read_at, &path, func));
                }
                continue;
            }
            // One program: the name is its local, starting from the host's value when the
            // region reads it first, and stored once at the end when the host reads it after.
            let mut local = var.clone();
            let starts = reads_first(file, region, &var);
            if !starts && read_at.is_some() {
                // Defined before the region's loops, as Triton needs of a value read after
                // them: a literal, which codegen types as the updates (`carried_locals`). A
                // loop that runs no iteration (or an `if` not taken) stores this 0, where
                // Python kept the old value.
                let at = k.body.first().map_or(first, |st| st.span);
                k.body.insert(
                    0,
                    Stmt::assign(
                        Expr::new(ExprKind::Name(var.clone()), at),
                        Expr::int(0, at),
                        at,
                    ),
                );
            }
            if starts {
                local = fresh_name(&format!("_{var}_local"), &mut used);
                let to = local.clone();
                for st in k.body.iter_mut() {
                    st.rewrite_exprs(&mut |e| {
                        e.rewrite(&mut |x| match &x.kind {
                            ExprKind::Name(n) if *n == var => {
                                Expr::new(ExprKind::Name(to.clone()), x.span)
                            }
                            _ => x,
                        })
                    });
                }
                // At the region's first statement: where the host's splice finds the region.
                let at = k.body.first().map_or(first, |st| st.span);
                k.body.insert(
                    0,
                    Stmt::assign(
                        Expr::new(ExprKind::Name(local.clone()), at),
                        Expr::new(ExprKind::Name(var.clone()), at),
                        at,
                    ),
                );
            }
            let Some(read_at) = read_at else {
                continue;
            };
            let mut s = result(&var, first, read_at, &path, func);
            s.buffer = fresh_name(&format!("{var}_shared"), &mut used);
            s.update = SharedUpdate::Store;
            s.like = crate::passes::shared_scalars::first_array_read(k, &local);
            let slot = Expr::new(
                ExprKind::Subscript {
                    array: s.buffer.clone(),
                    indices: vec![Index::At(Expr::int(0, first))],
                },
                first,
            );
            k.body.push(Stmt::assign(
                slot,
                Expr::new(ExprKind::Name(local), first),
                first,
            ));
            k.shared.push(s);
        }
    }
}

/// The entry of a name the host reads after the region (at `read_at`).
fn result(
    var: &str,
    first: Span,
    read_at: Span,
    path: &[(&[Stmt], usize)],
    func: &Function,
) -> SharedScalar {
    SharedScalar {
        var: var.to_string(),
        buffer: String::new(),
        update: SharedUpdate::ReadOnly,
        like: None,
        span: first,
        implicit: Some(read_at),
        passed: (!func.params.iter().any(|p| p == var) && !bound_before(path, var))
            .then(|| format!("locals().get({var:?})")),
    }
}

/// Whether the region reads `var` before it surely assigns it (the host's value flows in).
fn reads_first(file: &SourceFile, region: &Stmt, var: &str) -> bool {
    let cx = Scan {
        file,
        var,
        loops_run: true,
    };
    match &region.kind {
        StmtKind::For { range, body, .. } => {
            [&range.start, &range.stop, &range.step]
                .iter()
                .any(|e| e.mentions(var))
                || cx.block(body).read.is_some()
        }
        StmtKind::Assign { value, .. } => value.mentions(var),
        _ => true,
    }
}

/// The blocks from the function's body down to the region whose pragma is at `pragma`, each
/// with the index of the statement the path goes through.
fn path_to_region(body: &[Stmt], pragma: Span) -> Option<Vec<(&[Stmt], usize)>> {
    for (i, s) in body.iter().enumerate() {
        if s.pragma.as_ref().is_some_and(|p| p.span == pragma) && is_region(s) {
            return Some(vec![(body, i)]);
        }
        let inner: Vec<&[Stmt]> = match &s.kind {
            _ if is_region(s) => vec![],
            StmtKind::For { body: b, .. }
            | StmtKind::While { body: b, .. }
            | StmtKind::HostBlock { body: b, .. } => vec![b],
            StmtKind::If {
                body: b, orelse, ..
            } => vec![b, orelse],
            _ => vec![],
        };
        for b in inner {
            if let Some(mut rest) = path_to_region(b, pragma) {
                rest.insert(0, (body, i));
                return Some(rest);
            }
        }
    }
    None
}

/// The names the region assigns (not its loop variables), each with its first assignment.
fn assigned_scalars(region: &Stmt) -> Vec<(String, Span)> {
    let mut loop_vars = HashSet::new();
    let mut out: Vec<(String, Span)> = vec![];
    region.walk(&mut |st| match &st.kind {
        StmtKind::For { var, .. } => {
            loop_vars.insert(var.clone());
        }
        StmtKind::Assign { target, .. } => {
            if let ExprKind::Name(n) = &target.kind {
                if !out.iter().any(|(m, _)| m == n) {
                    out.push((n.clone(), st.span));
                }
            }
        }
        _ => {}
    });
    out.retain(|(n, _)| !loop_vars.contains(n));
    out
}

fn reduction_var(region: &Stmt, var: &str) -> bool {
    matches!(&region.pragma, Some(p) if matches!(&p.directive,
        Directive::ParallelFor { reduction, .. } if reduction.iter().any(|r| r.var == var)))
}

/// Where the host may read `var` after the region at the end of `path` (before assigning it).
fn read_after(file: &SourceFile, path: &[(&[Stmt], usize)], var: &str) -> Option<Span> {
    let cx = Scan {
        file,
        var,
        loops_run: false,
    };
    // Innermost block first; a loop holding the block runs its test and body again.
    for level in (0..path.len()).rev() {
        let (block, i) = path[level];
        let after = cx.block(&block[i + 1..]);
        if let Some(at) = after.read {
            return Some(at);
        }
        let mut reaches_out = !after.killed || after.exits;
        if level > 0 {
            let (outer, j) = path[level - 1];
            match &outer[j].kind {
                StmtKind::While { .. } | StmtKind::For { .. } | StmtKind::HostBlock { .. }
                    if !after.killed =>
                {
                    if let StmtKind::While { test, .. } = &outer[j].kind {
                        if test.mentions(var) {
                            return Some(test.span);
                        }
                    }
                    if matches!(outer[j].kind, StmtKind::HostBlock { .. })
                        && cx.tokens_mention(outer[j].span)
                    {
                        return Some(outer[j].span);
                    }
                    // Again from the top of the body, up to and through the region.
                    let again = cx.block(&block[..=i]);
                    if let Some(at) = again.read {
                        return Some(at);
                    }
                    reaches_out = true;
                }
                _ => {}
            }
        }
        if !reaches_out {
            return None;
        }
    }
    None
}

/// Whether `var` is assigned, surely, before the region: a plain assignment in a block of the
/// path, ahead of the statement the path goes through (a loop's earlier iterations do not
/// count: the first may not have run it).
fn bound_before(path: &[(&[Stmt], usize)], var: &str) -> bool {
    path.iter().any(|(block, i)| {
        block[..*i].iter().any(|s| {
            matches!(&s.kind, StmtKind::Assign { target, .. }
                if matches!(&target.kind, ExprKind::Name(n) if n == var))
        })
    })
}

/// What the statements after a point do with the name: read it (where), surely assign it
/// first, or leave the enclosing loop by a `break` (which may skip that assignment).
#[derive(Default)]
struct Flow {
    read: Option<Span>,
    killed: bool,
    exits: bool,
}

struct Scan<'a> {
    file: &'a SourceFile,
    var: &'a str,
    /// Inside a region: its loops are taken to run at least once, so what their bodies surely
    /// assign is assigned (a region's iteration space is its work; an empty one is not what
    /// the liveness of its locals should be decided on).
    loops_run: bool,
}

impl Scan<'_> {
    fn block(&self, stmts: &[Stmt]) -> Flow {
        let mut flow = Flow::default();
        for s in stmts {
            let f = self.stmt(s);
            flow.exits |= f.exits;
            if f.read.is_some() {
                flow.read = f.read;
                return flow;
            }
            if f.killed {
                flow.killed = true;
                return flow;
            }
        }
        flow
    }

    fn stmt(&self, s: &Stmt) -> Flow {
        let var = self.var;
        let read = |at: Span| Flow {
            read: Some(at),
            ..Flow::default()
        };
        let open = Flow::default();
        if is_region(s) {
            return self.region(s);
        }
        match &s.kind {
            StmtKind::Assign { target, value, .. } | StmtKind::AugAssign { target, value, .. } => {
                let target_reads = match &target.kind {
                    ExprKind::Name(n) => matches!(s.kind, StmtKind::AugAssign { .. }) && n == var,
                    _ => target.mentions(var),
                };
                if value.mentions(var) || target_reads {
                    read(s.span)
                } else if matches!(&target.kind, ExprKind::Name(n) if n == var) {
                    Flow {
                        killed: true,
                        ..Flow::default()
                    }
                } else {
                    open
                }
            }
            StmtKind::For { range, body, .. } => {
                if [&range.start, &range.stop, &range.step]
                    .iter()
                    .any(|e| e.mentions(var))
                {
                    return read(s.span);
                }
                // On the host it may run no iteration: what it assigns is not sure; a `break`
                // in it leaves only this loop.
                let inner = self.block(body);
                Flow {
                    read: inner.read,
                    killed: self.loops_run && inner.killed,
                    exits: false,
                }
            }
            StmtKind::While { test, body } => {
                if test.mentions(var) {
                    return read(test.span);
                }
                let inner = self.block(body);
                Flow {
                    read: inner.read,
                    ..Flow::default()
                }
            }
            StmtKind::HostBlock { body, .. } => {
                if self.tokens_mention(s.span) {
                    return read(s.span);
                }
                let inner = self.block(body);
                Flow {
                    read: inner.read,
                    ..Flow::default()
                }
            }
            StmtKind::If { test, body, orelse } => {
                if test.mentions(var) {
                    return read(test.span);
                }
                let (a, b) = (self.block(body), self.block(orelse));
                Flow {
                    read: a.read.or(b.read),
                    killed: a.killed && b.killed,
                    exits: a.exits || b.exits,
                }
            }
            StmtKind::Expr(e) => {
                if e.mentions(var) {
                    read(s.span)
                } else {
                    open
                }
            }
            StmtKind::Other("break statement") => Flow {
                exits: true,
                ..Flow::default()
            },
            StmtKind::Other("continue statement") => open,
            StmtKind::Other(what) => {
                if self.tokens_mention(s.span) {
                    read(s.span)
                } else if *what == "return statement" || *what == "raise statement" {
                    // Nothing after it runs.
                    Flow {
                        killed: true,
                        ..Flow::default()
                    }
                } else {
                    open
                }
            }
            StmtKind::Pass | StmtKind::Barrier => open,
        }
    }

    /// A region after the one in question: it reads the name before it assigns it (the host's
    /// value flows in), assigns it first, or does not mention it. Its loops are taken to run.
    fn region(&self, s: &Stmt) -> Flow {
        let inside = Scan {
            loops_run: true,
            ..*self
        };
        let flow = match &s.kind {
            StmtKind::For { range, body, .. } => {
                if [&range.start, &range.stop, &range.step]
                    .iter()
                    .any(|e| e.mentions(self.var))
                {
                    return Flow {
                        read: Some(s.span),
                        ..Flow::default()
                    };
                }
                inside.block(body)
            }
            _ => inside.stmt(&Stmt {
                pragma: None,
                ..s.clone()
            }),
        };
        Flow {
            // Where the region reads it, the region is the read.
            read: flow.read.map(|_| s.span),
            killed: flow.killed,
            exits: false,
        }
    }

    /// A token naming the variable in the statement's source (host code the IR keeps no
    /// expressions of).
    fn tokens_mention(&self, span: Span) -> bool {
        let base = self.file.line_start(self.file.line_of(span.start as usize));
        let text = &self.file.text[base..span.end as usize];
        lex(text, Mode::Module)
            .flatten()
            .any(|(tok, _)| matches!(tok, Tok::Name { name } if name == self.var))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::attach_pragmas::tests::attached_in;

    /// The names each region of `src` gets back, and how (the one-program kind stores them).
    fn results(src: &str) -> Vec<Vec<(String, SharedUpdate, bool)>> {
        let (func, file) = attached_in(src).expect("pragmas attach");
        let mut kernels = crate::passes::outline::run(&func).expect("outlines");
        run(&file, &func, &mut kernels);
        kernels
            .iter()
            .map(|k| {
                k.shared
                    .iter()
                    .filter(|s| s.implicit.is_some())
                    .map(|s| (s.var.clone(), s.update, s.passed.is_some()))
                    .collect()
            })
            .collect()
    }

    fn one(var: &str, unbound: bool) -> Vec<(String, SharedUpdate, bool)> {
        vec![(var.to_string(), SharedUpdate::Store, unbound)]
    }

    #[test]
    fn a_value_returned_after_a_sequential_region_comes_back() {
        let src = "def f(A):\n    s = 0.0\n    #pragma sequential for\n    for i in range(1):\n        s = A[0] + 1.0\n    return s\n";
        assert_eq!(results(src), vec![one("s", false)]);
        // Not read after it: a local of the kernel.
        let src = "def f(A):\n    s = 0.0\n    #pragma sequential for\n    for i in range(1):\n        s = A[0] + 1.0\n        A[1] = s\n";
        assert_eq!(results(src), vec![vec![]]);
    }

    #[test]
    fn a_reduction_into_a_name_may_bind_it_first() {
        let src =
            "def f(A, N):\n    #pragma :N=>reduce(sum)\n    s = np.sum(A[:N])\n    return s\n";
        assert_eq!(results(src), vec![one("s", true)]);
    }

    #[test]
    fn a_while_test_reads_it_again_after_the_body() {
        let src = "def f(A, B, N, tol):\n    diff = tol + 1.0\n    while diff > tol:\n        #pragma parallel for\n        for i in range(1, N - 1):\n            B[i] = 0.5 * (A[i - 1] + A[i + 1])\n        #pragma 1:N-1=>reduce(max)\n        diff = np.max(np.abs(B[1:N - 1] - A[1:N - 1]))\n        A, B = B, A\n";
        assert_eq!(results(src), vec![vec![], one("diff", false)]);
    }

    #[test]
    fn an_assignment_first_kills_it_unless_a_break_skips_it() {
        // The second region assigns `s` before reading it: the first one's `s` is dead.
        let src = "def f(A, x, N):\n    #pragma parallel for\n    for i in range(N):\n        s = A[i, 0]\n        x[i] = s\n    #pragma parallel for\n    for i in range(N):\n        s = A[i, 1]\n        x[i] += s\n";
        assert_eq!(results(src), vec![vec![], vec![]]);
        // Also where the later region assigns it first inside its inner loop (covariance).
        let src = "def f(A, x, C, N):\n    #pragma parallel for simd\n    for j in range(N):\n        s = 0.0\n        for i in range(N):\n            s += A[i, j]\n        x[j] = s\n    #pragma parallel for\n    for i in range(N):\n        #pragma simd\n        for j in range(N):\n            s = 0.0\n            for k in range(N):\n                s += A[k, i] * A[k, j]\n            C[i, j] = s\n    return C\n";
        assert_eq!(results(src), vec![vec![], vec![]]);
        // A host assignment before the read kills it too, on every path.
        let src = "def f(A, T):\n    for t in range(T):\n        #pragma sequential for\n        for i in range(1):\n            s = A[0]\n        s = 2.0\n        A[1] = s\n    return s\n";
        assert_eq!(results(src), vec![vec![]]);
        // Unless a `break` can leave the loop between the region and the assignment.
        let src = "def f(A, T):\n    for t in range(T):\n        #pragma sequential for\n        for i in range(1):\n            s = A[0]\n        if t > 3:\n            break\n        s = 2.0\n    return s\n";
        assert_eq!(results(src), vec![one("s", true)]);
    }

    #[test]
    fn a_loop_s_next_iteration_reads_it_before_the_region() {
        let src = "def f(A, T):\n    s = 1.0\n    for t in range(T):\n        A[0] = s\n        #pragma sequential for\n        for i in range(1):\n            s = A[1] * 2.0\n";
        assert_eq!(results(src), vec![one("s", false)]);
    }

    #[test]
    fn a_value_the_region_reads_first_starts_as_the_host_s() {
        let src = "def f(x, N):\n    p = 1.0\n    #pragma sequential for\n    for i in range(N):\n        p = p * x[i]\n    return p\n";
        let (func, file) = attached_in(src).unwrap();
        let mut kernels = crate::passes::outline::run(&func).unwrap();
        run(&file, &func, &mut kernels);
        let assign = |st: &Stmt| match &st.kind {
            StmtKind::Assign { target, value, .. } => format!(
                "{} = {}",
                crate::ir::python::expr(target),
                crate::ir::python::expr(value)
            ),
            StmtKind::For { body, .. } => format!("for: {}", body.len()),
            _ => String::new(),
        };
        let body = &kernels[0].body;
        assert_eq!(assign(&body[0]), "_p_local = p");
        let StmtKind::For { body: inner, .. } = &body[1].kind else {
            panic!("{body:?}")
        };
        assert_eq!(assign(&inner[0]), "_p_local = _p_local * x[i]");
        assert_eq!(assign(&body[2]), "_p_shared[0] = _p_local");
    }

    #[test]
    fn declared_scalars_and_loop_variables_are_left_alone() {
        let src = "def f(A, N):\n    s = 0.0\n    #pragma parallel for reduction(+:s)\n    for i in range(N):\n        s += A[i]\n    return s, i\n";
        assert_eq!(results(src), vec![vec![]]);
    }

    #[test]
    fn a_parallel_region_s_result_is_left_to_shared_scalars() {
        let src = "def f(A, N):\n    last = 0.0\n    #pragma parallel for\n    for i in range(N):\n        if i == N - 1:\n            last = A[i]\n    return last\n";
        assert_eq!(
            results(src),
            vec![vec![("last".to_string(), SharedUpdate::ReadOnly, false)]]
        );
    }
}
