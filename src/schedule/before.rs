//! before: what the host has bound when a loop starts, as far as the function's statements
//! tell: which names are surely bound (so a launcher may read them before the loop) and the
//! Python type each name may then have (so a register the loop starts from the host's value
//! has that value's type).
//!
//! Design decisions:
//! - A name is surely bound when it is a parameter, or a plain assignment to it runs on every
//!   path to the loop: a statement before the loop in the loop's own block or in a block that
//!   holds the loop (an enclosing loop's body, an `if` branch the loop is in, a `with`).
//!   Anything under a branch, a loop or other control flow before it binds only maybe.
//! - Types join over every assignment that may reach the loop: those before it, and those
//!   after it inside a loop around it (they run before the next time the loop starts). One of
//!   unknown type (a parameter, a call into Python, an element read) makes the type unknown; a
//!   surely-run assignment replaces what came before it.

use super::host_steps::{join, start_type, ScalarType};
use crate::frontend::source::Span;
use crate::ir::*;
use std::collections::{HashMap, HashSet};

#[derive(Debug, Default)]
pub struct Before {
    /// Names surely bound when the loop starts.
    pub bound: HashSet<String>,
    /// Names that may be bound when the loop starts, with their Python type when known.
    pub types: HashMap<String, Option<ScalarType>>,
}

/// What `func` has bound when the loop at `the_loop` starts.
pub fn before(func: &Function, the_loop: Span) -> Before {
    let mut b = Before::default();
    for p in &func.params {
        b.bound.insert(p.clone());
        b.types.insert(p.clone(), None);
    }
    b.block(&func.body, the_loop, true, false);
    b
}

fn contains(outer: Span, inner: Span) -> bool {
    outer.start <= inner.start && inner.end <= outer.end
}

impl Before {
    /// The statements of one block: `on_path` when the block holds the loop on every path to
    /// it, `in_loop` when a loop around the loop repeats the block.
    fn block(&mut self, stmts: &[Stmt], the_loop: Span, on_path: bool, in_loop: bool) {
        for s in stmts {
            if s.span == the_loop {
                continue;
            }
            if contains(s.span, the_loop) {
                for body in children(s) {
                    let holds = body.iter().any(|c| contains(c.span, the_loop));
                    self.block(body, the_loop, on_path && holds, in_loop || repeats(s));
                }
            } else if s.span.end <= the_loop.start || in_loop {
                let surely = on_path && s.span.end <= the_loop.start;
                self.statement(s, surely);
            }
        }
    }

    /// One statement that runs before the loop starts (`surely`: on every path to it).
    fn statement(&mut self, s: &Stmt, surely: bool) {
        match &s.kind {
            StmtKind::Assign { target, value, .. } => {
                if let ExprKind::Name(n) = &target.kind {
                    let ty = start_type(value, &|m| self.types.get(m).copied().flatten());
                    self.bind(n, ty, surely);
                }
            }
            StmtKind::For { var, body, .. } => {
                self.bind(var, Some(ScalarType::Int), false);
                for c in body {
                    self.statement(c, false);
                }
            }
            _ => {
                for body in children(s) {
                    for c in body {
                        self.statement(c, false);
                    }
                }
            }
        }
    }

    fn bind(&mut self, n: &str, ty: Option<ScalarType>, surely: bool) {
        if surely {
            self.bound.insert(n.to_string());
            self.types.insert(n.to_string(), ty);
            return;
        }
        let joined = match (self.types.get(n), ty) {
            (None, _) => ty,
            (Some(Some(a)), Some(b)) => Some(join(*a, b)),
            _ => None,
        };
        self.types.insert(n.to_string(), joined);
    }
}

/// Whether `s` is a loop of host code (what it holds may run again).
pub fn repeats(s: &Stmt) -> bool {
    match &s.kind {
        StmtKind::For { .. } | StmtKind::While { .. } => true,
        StmtKind::HostBlock { what, .. } => *what != "with statement",
        _ => false,
    }
}

/// The blocks a statement holds.
fn children(s: &Stmt) -> Vec<&[Stmt]> {
    match &s.kind {
        StmtKind::For { body, .. }
        | StmtKind::While { body, .. }
        | StmtKind::HostBlock { body, .. } => vec![body],
        StmtKind::If { body, orelse, .. } => vec![body, orelse],
        _ => vec![],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `before` the first `for t` loop of `src`'s function.
    fn of(src: &str) -> Before {
        let f = crate::passes::attach_pragmas::tests::attached(src).unwrap();
        let mut found = None;
        for s in &f.body {
            s.walk(&mut |st| {
                if matches!(&st.kind, StmtKind::For { var, .. } if var == "t") && found.is_none() {
                    found = Some(st.span);
                }
            });
        }
        before(&f, found.unwrap())
    }

    #[test]
    fn parameters_and_assignments_on_every_path_are_surely_bound() {
        let b = of("def f(A, T, k):
    x = 0
    if T > 3:
        y = 1.0
    for s in range(2):
        z = 2
        for t in range(T):
            A[t] = 1.0
        w = 0.5
");
        for n in ["A", "T", "k", "x", "z"] {
            assert!(b.bound.contains(n), "{n}");
        }
        for n in ["y", "w", "s", "t"] {
            assert!(!b.bound.contains(n), "{n}");
        }
        assert_eq!(b.types["x"], Some(ScalarType::Int));
        assert_eq!(b.types["y"], Some(ScalarType::Float));
        assert_eq!(b.types["k"], None);
        // `w` is assigned after the loop, but the outer loop runs it before the next start.
        assert_eq!(b.types["w"], Some(ScalarType::Float));
    }

    #[test]
    fn types_join_over_the_assignments_that_may_reach_the_loop() {
        let b = of("def f(A, T, k):
    it = 0
    if T > 3:
        it = 0.5
    n = k
    m = k
    m = 3
    c = T > 2
    for t in range(T):
        A[t] = 1.0
");
        assert_eq!(b.types["it"], Some(ScalarType::Float));
        assert_eq!(b.types["n"], None);
        assert_eq!(b.types["m"], Some(ScalarType::Int));
        assert_eq!(b.types["c"], Some(ScalarType::Bool));
    }
}
