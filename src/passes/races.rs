//! races: warns where one iteration of a parallel loop writes an array element that another
//! iteration reads or writes (without `atomic`). Never changes the kernel.
//!
//! The test is concrete: every extent and host scalar gets one small value, the parallel loops
//! and the loops inside them run on indices alone, and the elements each access touches are
//! compared across iterations. A conflict found this way names real iterations; an access whose
//! index or guard depends on data (a gather `x[idx[j]]`, a local computed in the body) cannot
//! be followed and stays quiet, as does a read of one element every iteration shares (a pivot
//! row `path[k, :]` written by iteration `k` alone: Floyd-Warshall relies on that write keeping
//! the row's values).

use crate::diag::Diagnostic;
use crate::frontend::source::{SourceFile, Span};
use crate::ir::*;
use std::collections::{BTreeMap, HashMap, HashSet};

/// The value every extent and host scalar takes: loops run a few iterations.
const SIZE: i64 = 6;
/// Elements enumerated per kernel before the test gives up (quietly).
const BUDGET: usize = 200_000;

pub fn run(k: &Kernel, file: &SourceFile, warnings: &mut Vec<Diagnostic>) {
    if k.dims.is_empty() || !k.bound.is_empty() {
        return; // one program, or a tensor statement whose parallel slices need no test here
    }
    let cx = Cx::new(k);
    let mut accesses = vec![];
    let mut loops = vec![];
    collect(&k.body, &mut loops, &mut vec![], &mut accesses);
    if !accesses.iter().any(|a| a.write) {
        return;
    }
    let Some(touched) = cx.touch(k, &accesses) else {
        return;
    };
    let mut reported: HashSet<(usize, usize)> = HashSet::new();
    for ((array, _element), users) in &touched {
        let Some((w, pw)) = users.iter().find(|(a, _)| accesses[*a].write) else {
            continue;
        };
        for (x, px) in users {
            if px == pw
                || reported.contains(&(*w, *x))
                || pivot_read(&cx, &accesses[*w], &accesses[*x])
            {
                continue;
            }
            reported.insert((*w, *x));
            warnings.push(race_warning(
                k,
                file,
                array,
                &accesses[*w],
                pw,
                &accesses[*x],
                px,
            ));
        }
    }
}

/// One array access of the kernel body.
struct Access {
    array: String,
    indices: Vec<Index>,
    write: bool,
    /// Loops inside the region around the access: `(var, start, stop, step)`; slices of the
    /// access add their own.
    loops: Vec<(String, Expr, Expr, Expr)>,
    /// Conditions that guard the access, with the branch taken (`true` for the body).
    guards: Vec<(Expr, bool)>,
    span: Span,
}

struct Cx {
    dims: Vec<String>,
    /// Names assigned inside the body: their values depend on the iteration.
    locals: HashSet<String>,
}

impl Cx {
    fn new(k: &Kernel) -> Cx {
        let mut locals = HashSet::new();
        for s in &k.body {
            s.walk(&mut |st| {
                if let StmtKind::Assign { target, .. } = &st.kind {
                    if let ExprKind::Name(n) = &target.kind {
                        locals.insert(n.clone());
                    }
                }
            });
        }
        Cx {
            dims: k.dims.iter().map(|d| d.var.clone()).collect(),
            locals,
        }
    }

    /// The integer value of an index expression, or None when it depends on data.
    fn eval(&self, e: &Expr, env: &HashMap<String, i64>) -> Option<i64> {
        Some(match &e.kind {
            ExprKind::Int(v) => *v,
            ExprKind::Bool(b) => *b as i64,
            ExprKind::Shape { .. } => SIZE,
            ExprKind::Name(n) => match env.get(n) {
                Some(v) => *v,
                None if self.locals.contains(n) || n == "appy.MVL" => return None,
                None => SIZE,
            },
            ExprKind::Unary {
                op: UnaryOp::Neg,
                operand,
            } => -self.eval(operand, env)?,
            ExprKind::Binary { op, left, right } => {
                let (l, r) = (self.eval(left, env)?, self.eval(right, env)?);
                match op {
                    BinOp::Add => l.checked_add(r)?,
                    BinOp::Sub => l.checked_sub(r)?,
                    BinOp::Mul => l.checked_mul(r)?,
                    BinOp::FloorDiv if r != 0 => l.div_euclid(r),
                    BinOp::Mod if r != 0 => l.rem_euclid(r),
                    _ => return None,
                }
            }
            ExprKind::Compare { op, left, right } => {
                let (l, r) = (self.eval(left, env)?, self.eval(right, env)?);
                (match op {
                    CmpOp::Lt => l < r,
                    CmpOp::Le => l <= r,
                    CmpOp::Gt => l > r,
                    CmpOp::Ge => l >= r,
                    CmpOp::Eq => l == r,
                    CmpOp::Ne => l != r,
                }) as i64
            }
            _ => return None,
        })
    }

    /// Every element each access touches, per iteration of the parallel loops: (array,
    /// element) → (access, iteration). None when an index depends on data everywhere or the
    /// enumeration would be too large.
    #[allow(clippy::type_complexity)]
    fn touch(
        &self,
        k: &Kernel,
        accesses: &[Access],
    ) -> Option<BTreeMap<(String, Vec<i64>), Vec<(usize, Vec<i64>)>>> {
        // Ordered, so that the iterations a warning names do not change from run to run.
        let mut out: BTreeMap<(String, Vec<i64>), Vec<(usize, Vec<i64>)>> = BTreeMap::new();
        let mut budget = BUDGET;
        let mut iterations = vec![vec![]];
        for d in &k.dims {
            let mut next = vec![];
            for it in &iterations {
                let env = self.env_of(it);
                for v in self.range(&d.range.start, &d.range.stop, &d.range.step, &env)? {
                    let mut more: Vec<i64> = it.clone();
                    more.push(v);
                    next.push(more);
                }
            }
            iterations = next;
        }
        for it in &iterations {
            let env = self.env_of(it);
            for (a, access) in accesses.iter().enumerate() {
                let mut loops = access.loops.clone();
                let mut indices = vec![];
                for (d, ix) in access.indices.iter().enumerate() {
                    match ix {
                        Index::At(e) => indices.push(e.clone()),
                        Index::Slice { lo, hi, span } => {
                            let var = format!("__slice{d}");
                            let lo = lo.clone().unwrap_or_else(|| Expr::int(0, *span));
                            let hi = hi.clone().unwrap_or_else(|| {
                                Expr::new(
                                    ExprKind::Shape {
                                        array: access.array.clone(),
                                        dim: d,
                                    },
                                    *span,
                                )
                            });
                            loops.push((var.clone(), lo, hi, Expr::int(1, *span)));
                            indices.push(Expr::name(&var, *span));
                        }
                        Index::NewAxis => {}
                    }
                }
                self.enumerate(
                    access,
                    &loops,
                    0,
                    &mut env.clone(),
                    &indices,
                    &mut |element| {
                        out.entry((access.array.clone(), element))
                            .or_default()
                            .push((a, it.clone()));
                    },
                    &mut budget,
                )?;
            }
        }
        Some(out)
    }

    fn env_of(&self, iteration: &[i64]) -> HashMap<String, i64> {
        self.dims
            .iter()
            .cloned()
            .zip(iteration.iter().copied())
            .collect()
    }

    fn range(
        &self,
        start: &Expr,
        stop: &Expr,
        step: &Expr,
        env: &HashMap<String, i64>,
    ) -> Option<Vec<i64>> {
        let (a, b, c) = (
            self.eval(start, env)?,
            self.eval(stop, env)?,
            self.eval(step, env)?,
        );
        if c == 0 {
            return None;
        }
        let mut out = vec![];
        let mut v = a;
        while (c > 0 && v < b) || (c < 0 && v > b) {
            out.push(v);
            v += c;
            if out.len() > 4 * SIZE as usize {
                return None;
            }
        }
        Some(out)
    }

    /// Runs the access's loops (depth `d` onwards) and reports each element it touches. An
    /// access that cannot be followed (data-dependent index, bound or guard) reports nothing.
    #[allow(clippy::too_many_arguments)]
    fn enumerate(
        &self,
        access: &Access,
        loops: &[(String, Expr, Expr, Expr)],
        d: usize,
        env: &mut HashMap<String, i64>,
        indices: &[Expr],
        emit: &mut dyn FnMut(Vec<i64>),
        budget: &mut usize,
    ) -> Option<()> {
        if d == loops.len() {
            for (test, taken) in &access.guards {
                match self.eval(test, env) {
                    Some(v) if (v != 0) == *taken => {}
                    Some(_) => return Some(()),
                    None => return Some(()),
                }
            }
            let mut element = vec![];
            for ix in indices {
                match self.eval(ix, env) {
                    Some(v) => element.push(v),
                    None => return Some(()),
                }
            }
            *budget = budget.checked_sub(1)?;
            emit(element);
            return Some(());
        }
        let (var, start, stop, step) = &loops[d];
        let Some(values) = self.range(start, stop, step, env) else {
            return Some(());
        };
        for v in values {
            env.insert(var.clone(), v);
            self.enumerate(access, loops, d + 1, env, indices, emit, budget)?;
        }
        env.remove(var);
        Some(())
    }
}

fn collect(
    stmts: &[Stmt],
    loops: &mut Vec<(String, Expr, Expr, Expr)>,
    guards: &mut Vec<(Expr, bool)>,
    out: &mut Vec<Access>,
) {
    for s in stmts {
        match &s.kind {
            StmtKind::Assign {
                target,
                value,
                atomic,
            } => {
                if *atomic {
                    continue; // atomic updates race by design; their reads are the update's own
                }
                let mut push = |e: &Expr, write: bool| {
                    if let ExprKind::Subscript { array, indices } = &e.kind {
                        out.push(Access {
                            array: array.clone(),
                            indices: indices.clone(),
                            write,
                            loops: loops.clone(),
                            guards: guards.clone(),
                            span: e.span,
                        });
                    }
                };
                push(target, true);
                value.walk(&mut |x| push(x, false));
                if let ExprKind::Subscript { indices, .. } = &target.kind {
                    for ix in indices {
                        if let Index::At(e) = ix {
                            e.walk(&mut |x| push(x, false));
                        }
                    }
                }
            }
            StmtKind::For {
                var, range, body, ..
            } => {
                loops.push((
                    var.clone(),
                    range.start.clone(),
                    range.stop.clone(),
                    range.step.clone(),
                ));
                collect(body, loops, guards, out);
                loops.pop();
            }
            StmtKind::If { test, body, orelse } => {
                guards.push((test.clone(), true));
                collect(body, loops, guards, out);
                guards.pop();
                guards.push((test.clone(), false));
                collect(orelse, loops, guards, out);
                guards.pop();
            }
            _ => {}
        }
    }
}

/// A read at a position the write moves with the iteration, but the read does not move at
/// all (`path[k, :]` against the write `path[i, :]`): one iteration writes what the others
/// read. Not reported (see the module's comment).
fn pivot_read(cx: &Cx, write: &Access, other: &Access) -> bool {
    let moving = |e: &Expr, a: &Access| {
        e.any(&mut |x| match &x.kind {
            ExprKind::Name(n) => cx.dims.contains(n) || a.loops.iter().any(|(v, ..)| v == n),
            _ => false,
        })
    };
    let positions: Vec<usize> = write
        .indices
        .iter()
        .enumerate()
        .filter(|(_, ix)| matches!(ix, Index::At(e) if moving(e, write)))
        .map(|(d, _)| d)
        .collect();
    !positions.is_empty()
        && positions.iter().all(|&d| match other.indices.get(d) {
            Some(Index::At(e)) => !moving(e, other),
            _ => false,
        })
}

fn race_warning(
    k: &Kernel,
    file: &SourceFile,
    array: &str,
    write: &Access,
    at: &[i64],
    other: &Access,
    other_at: &[i64],
) -> Diagnostic {
    let iteration = |values: &[i64]| {
        k.dims
            .iter()
            .zip(values)
            .map(|(d, v)| format!("{} = {v}", d.var))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let text = |a: &Access| file.text[a.span.start as usize..a.span.end as usize].to_string();
    let verb = if other.write { "writes" } else { "reads" };
    Diagnostic::warning(
        write.span,
        format!(
            "possible race on `{array}`: iteration {} writes `{}`, and iteration {} {verb} the same element as `{}` (line {})",
            iteration(at),
            text(write),
            iteration(other_at),
            text(other),
            file.line_of(other.span.start as usize)
        ),
    )
    .with_label("written here")
    .with_help(format!(
        "iterations of a parallel loop run in any order (extents taken as {SIZE} to find these); \
         make the loop sequential, use a second array, or `#pragma atomic` for an update"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::attach_pragmas::tests::attached;

    fn warnings(src: &str) -> Vec<String> {
        let file = SourceFile::new("t.py", src);
        let f = attached(src).unwrap();
        let mut out = vec![];
        for k in crate::passes::outline::run(&f).unwrap() {
            run(&k, &file, &mut out);
        }
        out.into_iter().map(|d| d.message).collect()
    }

    #[test]
    fn a_triangular_read_of_rows_later_iterations_write_is_a_race() {
        let w = warnings(
            "def trmm(A, B):\n    #pragma parallel for\n    for i in range(B.shape[0]):\n        for j in range(B.shape[1]):\n            s = 0.0\n            #pragma simd\n            for k in range(i + 1, A.shape[0]):\n                s += A[k, i] * B[k, j]\n            B[i, j] += s\n",
        );
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("possible race on `B`"), "{w:?}");
        assert!(w[0].contains("B[k, j]"), "{w:?}");
    }

    #[test]
    fn a_shifted_self_read_is_a_race() {
        let w = warnings(
            "def f(A, N):\n    #pragma parallel for simd\n    for i in range(N - 1):\n        A[i] = A[i + 1] * 0.5\n",
        );
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].contains("iteration i = 1 writes `A[i]`, and iteration i = 0 reads"),
            "{w:?}"
        );
    }

    #[test]
    fn own_elements_and_other_arrays_are_quiet() {
        assert!(warnings(
            "def f(A, B, N):\n    #pragma parallel for\n    for i in range(1, N - 1):\n        B[i] = A[i - 1] + A[i + 1]\n        B[i] = B[i] * 2.0\n"
        )
        .is_empty());
        // A row of its own per iteration, written in slices.
        assert!(warnings(
            "def f(A, M, N):\n    #pragma parallel for\n    for i in range(M):\n        A[i, :N] = A[i, :N] * 2.0\n"
        )
        .is_empty());
    }

    #[test]
    fn gathers_and_data_dependent_indices_stay_quiet() {
        assert!(warnings(
            "def f(x, idx, N):\n    #pragma parallel for\n    for i in range(N):\n        x[idx[i]] = x[idx[i]] + 1.0\n"
        )
        .is_empty());
        assert!(warnings(
            "def f(x, ptr, N):\n    #pragma parallel for\n    for i in range(N):\n        k = ptr[i]\n        x[k] = x[k + 1]\n"
        )
        .is_empty());
    }

    #[test]
    fn a_pivot_row_read_by_every_iteration_is_not_reported() {
        assert!(warnings(
            "def f(path, N, k):\n    #pragma parallel for\n    for i in range(N):\n        #pragma simd\n        for j in range(N):\n            path[i, j] = min(path[i, j], path[i, k] + path[k, j])\n"
        )
        .is_empty());
    }

    #[test]
    fn atomic_updates_and_guarded_single_writers_are_quiet() {
        assert!(warnings(
            "def f(x, s, N):\n    #pragma parallel for simd\n    for i in range(N):\n        #pragma atomic\n        s[0] += x[i]\n"
        )
        .is_empty());
        assert!(warnings(
            "def f(x, y, N):\n    #pragma parallel for\n    for i in range(N):\n        if i == 0:\n            y[0] = x[0]\n"
        )
        .is_empty());
    }

    #[test]
    fn two_iterations_writing_one_element_is_a_race() {
        let w = warnings(
            "def f(x, y, N):\n    #pragma parallel for\n    for i in range(N):\n        y[i // 2] = x[i]\n",
        );
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("writes the same element"), "{w:?}");
    }
}
