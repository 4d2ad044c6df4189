//! scalar_reductions: a reduction of a whole tensor expression into a name, `x = np.max(E)`
//! (`np.sum`, `np.max`/`np.amax`, `np.min`/`np.amin`, the one-argument builtins), written bare
//! in a host loop that holds a region or under a dimension pragma that reduces every dimension,
//! becomes the loop form of OpenMP's clause: `x = <identity>` and a `parallel for` over E's
//! dimensions with `reduction(op:x)` (innermost loop `simd`), whose reduction starts from the
//! identity (`ReductionVar::start`), not from x.
//! *After*: each such statement is that pair, the loop carrying a pragma of its own (spanning
//! the statement), which `run` returns for `shared_scalars` to read its clause from.
//!
//! Why: `diff = np.max(np.abs(B - A))` is how NumPy users test convergence. Bare, it kept the
//! loop around it on the host (a torch reduction and a read-back each step); under a dimension
//! pragma it ran in one program. As a reduction clause it is a parallel reduction whose value a
//! persistent loop reads on the device, the machinery `reduction(op:x)` already has.
//!
//! Only what the tensor model runs converts (the arrays are the regions' or parameters, the
//! value has slices and no other reduction); anything else stays as it was. Slice lengths the
//! analysis can only assume equal (`B[1:-1] - A[1:-1]`: `B.shape[0] - 2` against
//! `A.shape[0] - 2`) become launch checks of the kernel that runs the loop (`attach_checks`),
//! which raise NumPy's broadcast error where the lengths differ, as a tensor statement's do.
//!
//! Known difference: the buffer takes the dtype NumPy gives `identity op E` (`shared_scalars`),
//! so `np.sum` of an int32 array accumulates in int32 where NumPy's sum widens to int64 (the
//! same on values that do not overflow); a max or min over integers starts from the dtype's
//! extreme (the prelude's `_appyc_shared_scalar`), and comes back a float from a persistent loop.

use super::device_statements::{device_value, is_region, whole_arrays_sliced, Arrays};
use super::tensor::{analyse, dim_var, reduce_marker, reduction_call};
use crate::frontend::source::{SourceFile, Span};
use crate::ir::pragma::{Directive, Pragma, ReductionVar};
use crate::ir::*;
use std::collections::HashSet;

/// What `run` made: the loops' pragmas, and the launch checks of each loop that has some
/// (keyed by the loop's span, which is its region's).
#[derive(Debug, Default)]
pub struct Made {
    pub pragmas: Vec<Pragma>,
    pub checks: Vec<(Span, Vec<LaunchCheck>)>,
}

pub fn run(func: &mut Function, file: &SourceFile) -> Made {
    let arrays = Arrays::of(func);
    let mut used = func.names();
    let mut made = Made::default();
    let mut cx = Cx {
        arrays: arrays.as_ref(),
        file,
        used: &mut used,
        made: &mut made,
    };
    cx.block(&mut func.body, false);
    made
}

/// Gives each converted loop's launch checks to the kernel that runs it, after `outline` and
/// `join_regions::mark_absorbed`: the loop's own kernel, or the one it was joined into.
pub fn attach_checks(kernels: &mut [Kernel], checks: &[(Span, Vec<LaunchCheck>)]) {
    for (span, cs) in checks {
        let runs_it = |k: &Kernel| {
            k.span == *span
                || k.absorbed
                    .iter()
                    .any(|a| a.span == *span && a.what == AbsorbedKind::Region)
        };
        if let Some(k) = kernels.iter_mut().find(|k| runs_it(k)) {
            k.checks.extend(cs.iter().cloned());
        }
    }
}

struct Cx<'a> {
    arrays: Option<&'a Arrays>,
    file: &'a SourceFile,
    used: &'a mut HashSet<String>,
    made: &'a mut Made,
}

impl Cx<'_> {
    /// Host statements of a block (`in_loop`: of a host loop's body that holds a region).
    fn block(&mut self, body: &mut Vec<Stmt>, in_loop: bool) {
        let mut i = 0;
        while i < body.len() {
            if let Some(pair) = self.convert(&body[i], in_loop) {
                body.splice(i..=i, pair);
                i += 2;
                continue;
            }
            let s = &mut body[i];
            if !is_region(s) {
                match &mut s.kind {
                    StmtKind::For {
                        kind: LoopKind::Plain,
                        body,
                        ..
                    }
                    | StmtKind::While { body, .. }
                    | StmtKind::HostBlock { body, .. } => {
                        let holds = body.iter().any(is_region);
                        self.block(body, holds);
                    }
                    StmtKind::If { body, orelse, .. } => {
                        self.block(body, in_loop);
                        self.block(orelse, in_loop);
                    }
                    _ => {}
                }
            }
            i += 1;
        }
    }

    /// `x = <identity>` and the reduction loop, if `s` is a reduction into a name this pass
    /// converts.
    fn convert(&mut self, s: &Stmt, in_loop: bool) -> Option<[Stmt; 2]> {
        let StmtKind::Assign {
            target,
            value,
            atomic: false,
        } = &s.kind
        else {
            return None;
        };
        let ExprKind::Name(var) = &target.kind else {
            return None;
        };
        let annotated = match &s.pragma {
            Some(p) => match &p.directive {
                Directive::Dimensions(dims) => {
                    // Every dimension the pragma names must be reduced (a `parallel` one would
                    // be an error of lower_tensor's).
                    if dims.iter().any(|d| d.parallel || d.vector.is_some()) {
                        return None;
                    }
                    true
                }
                _ => return None,
            },
            None => false,
        };
        let value = if annotated {
            value.clone()
        } else {
            // Bare: only in a host loop with regions, on the regions' arrays, in what a kernel
            // computes.
            let ExprKind::Call { func, args } = &value.kind else {
                return None;
            };
            let arrays = self.arrays?;
            if !in_loop || reduction_call(func, args.len()).is_none() || args.len() != 1 {
                return None;
            }
            if !device_value(value, arrays) {
                return None;
            }
            whole_arrays_sliced(value, arrays)?
        };
        let t = analyse(target, &value, &[]).ok()?;
        if t.dims.is_empty() || !t.output.is_empty() {
            return None;
        }
        let ExprKind::Call { func, args } = &t.value.kind else {
            return None;
        };
        let (op, reduced) = reduce_marker(func)?;
        let mut all: Vec<usize> = reduced.clone();
        all.sort_unstable();
        if all != (0..t.dims.len()).collect::<Vec<_>>() || args.len() != 1 {
            return None;
        }
        let element = &args[0];
        if element.any(&mut |x| {
            matches!(&x.kind, ExprKind::Call { func, .. } if reduce_marker(func).is_some())
        }) {
            return None; // a reduction inside the reduced value
        }
        let span = s.span;
        let vars: Vec<String> = (0..t.dims.len())
            .map(|d| fresh_name(&format!("_{var}_r{d}"), self.used))
            .collect();
        let element = element.clone().rewrite(&mut |x| match &x.kind {
            ExprKind::Name(n) if n.starts_with("__dim") => {
                let d = (0..t.dims.len())
                    .find(|d| *n == dim_var(*d))
                    .expect("a dimension");
                Expr::new(ExprKind::Name(vars[d].clone()), x.span)
            }
            _ => x,
        });
        let name = |n: &str| Expr::new(ExprKind::Name(n.to_string()), span);
        let update = match op {
            ReduceOp::Sum => Expr::binary(BinOp::Add, name(var), element),
            ReduceOp::Max | ReduceOp::Min => Expr::new(
                ExprKind::Call {
                    func: op.name().to_string(),
                    args: vec![name(var), element],
                },
                span,
            ),
        };
        let identity = match op {
            ReduceOp::Sum => Expr::int(0, span),
            ReduceOp::Max => Expr::new(ExprKind::FloatSpecial("-inf"), span),
            ReduceOp::Min => Expr::new(ExprKind::FloatSpecial("inf"), span),
        };
        let line = self.file.line_of(span.start as usize);
        let pragma = |directive| Pragma {
            directive,
            span,
            line,
        };
        // Innermost first: the last dimension's loop is the vector one.
        let last = t.dims.len() - 1;
        let mut nest = vec![Stmt::assign(name(var), update, span)];
        for d in (0..t.dims.len()).rev() {
            let dim = &t.dims[d];
            let (kind, p) = if d == 0 {
                let simd = (last == 0).then_some(Width::Mvl);
                let directive = Directive::ParallelFor {
                    simd,
                    num_warps: None,
                    shared: vec![],
                    reduction: vec![ReductionVar {
                        op,
                        var: var.clone(),
                        span,
                        start: Some(identity.clone()),
                    }],
                    tf32: false,
                };
                (LoopKind::Parallel { simd }, Some(pragma(directive)))
            } else if d == last {
                (
                    LoopKind::Simd(Width::Mvl),
                    Some(pragma(Directive::Simd(Width::Mvl))),
                )
            } else {
                (LoopKind::Plain, None)
            };
            nest = vec![Stmt {
                kind: StmtKind::For {
                    var: vars[d].clone(),
                    range: Range {
                        start: dim.lo.clone(),
                        stop: dim.hi.clone(),
                        step: Expr::int(1, span),
                    },
                    body: nest,
                    kind,
                    vector: None,
                    num_warps: None,
                },
                span,
                pragma: p,
            }];
        }
        let region = nest.pop().expect("one loop");
        self.made
            .pragmas
            .push(region.pragma.clone().expect("the region's pragma"));
        if !t.assumed.is_empty() {
            let checks = t.assumed.iter();
            let checks = checks.map(|(a, b, at)| LaunchCheck::Equal(a.clone(), b.clone(), *at));
            self.made.checks.push((region.span, checks.collect()));
        }
        // The init spans the indentation before the statement: outside the region's span,
        // which is how `schedule` tells a region's statements from the host's.
        let before = Span::new(self.file.line_start(line), span.start as usize);
        let init = Stmt::assign(
            Expr::new(ExprKind::Name(var.clone()), before),
            Expr {
                span: before,
                ..identity
            },
            before,
        );
        Some([init, region])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::attach_pragmas::tests::attached_in;

    /// The function after the pass: its body as statements, and the pragmas it made.
    fn converted(src: &str) -> (Function, Vec<Pragma>) {
        let (f, made) = converted_with_checks(src);
        (f, made.pragmas)
    }

    fn converted_with_checks(src: &str) -> (Function, Made) {
        let (mut f, file) = attached_in(src).expect("pragmas attach");
        crate::passes::device_statements::run(&mut f, |at| file.line_of(at.start as usize));
        let made = run(&mut f, &file);
        (f, made)
    }

    fn loop_body(s: &Stmt) -> &[Stmt] {
        match &s.kind {
            StmtKind::For { body, .. } | StmtKind::While { body, .. } => body,
            _ => panic!("{s:?}"),
        }
    }

    const RELAX: &str = "def f(A, B, N, tol):\n    diff = tol + 1.0\n    while diff > tol:\n        #pragma parallel for simd\n        for i in range(1, N - 1):\n            B[i] = 0.5 * (A[i - 1] + A[i + 1])\n        diff = np.max(np.abs(B[1:N - 1] - A[1:N - 1]))\n";

    #[test]
    fn a_bare_max_in_a_loop_with_a_region_becomes_a_reduction_clause_from_minus_infinity() {
        let (f, made) = converted(RELAX);
        let body = loop_body(&f.body[1]);
        assert_eq!(body.len(), 3, "{body:?}");
        let StmtKind::Assign { value, .. } = &body[1].kind else {
            panic!("{:?}", body[1])
        };
        assert_eq!(value.kind, ExprKind::FloatSpecial("-inf"));
        let StmtKind::For {
            kind,
            range,
            body: inner,
            ..
        } = &body[2].kind
        else {
            panic!("{:?}", body[2])
        };
        assert_eq!(
            *kind,
            LoopKind::Parallel {
                simd: Some(Width::Mvl)
            }
        );
        assert_eq!(crate::ir::python::expr(&range.start), "1");
        assert_eq!(crate::ir::python::expr(&range.stop), "N - 1");
        let StmtKind::Assign { value, .. } = &inner[0].kind else {
            panic!()
        };
        assert_eq!(
            crate::ir::python::expr(value),
            "max(diff, np.abs(B[_diff_r0] - A[_diff_r0]))"
        );
        let [Pragma {
            directive: Directive::ParallelFor { reduction, .. },
            ..
        }] = made.as_slice()
        else {
            panic!("{made:?}")
        };
        assert_eq!(reduction[0].op, ReduceOp::Max);
        assert_eq!(reduction[0].var, "diff");
        assert_eq!(
            reduction[0].start.as_ref().map(|e| e.kind.clone()),
            Some(ExprKind::FloatSpecial("-inf"))
        );
        // The init lies outside the region's span (schedule tells them apart by span).
        assert!(body[1].span.end <= body[2].span.start, "{body:?}");
        assert_eq!(made[0].span, body[2].span);
    }

    #[test]
    fn a_whole_2d_sum_is_a_parallel_loop_around_a_simd_one_from_zero() {
        let src = "def f(u, T):\n    M, N = u.shape\n    for t in range(T):\n        #pragma parallel for\n        for i in range(M):\n            u[i, 0] = 1.0\n        e = np.sum(u * u)\n    return e\n";
        let (f, made) = converted(src);
        // `M, N = u.shape` is two statements.
        let body = loop_body(&f.body[2]);
        let StmtKind::Assign { value, .. } = &body[1].kind else {
            panic!("{body:?}")
        };
        assert_eq!(value.kind, ExprKind::Int(0));
        let StmtKind::For {
            kind, body: inner, ..
        } = &body[2].kind
        else {
            panic!()
        };
        assert_eq!(*kind, LoopKind::Parallel { simd: None });
        assert!(matches!(
            inner[0].kind,
            StmtKind::For {
                kind: LoopKind::Simd(Width::Mvl),
                ..
            }
        ));
        assert_eq!(made.len(), 1);
    }

    #[test]
    fn annotated_reductions_convert_wherever_they_stand() {
        let src =
            "def f(A, N):\n    #pragma :N=>reduce(sum)\n    s = np.sum(A[:N])\n    return s\n";
        let (f, made) = converted(src);
        assert_eq!(made.len(), 1);
        assert!(f.body[1].is_parallel_loop(), "{:?}", f.body);
        // A `parallel` dimension is lower_tensor's to refuse: left as it is.
        let src = "def f(A, N):\n    #pragma :N=>parallel\n    s = np.sum(A[:N])\n    return s\n";
        assert!(converted(src).1.is_empty());
    }

    #[test]
    fn open_slices_of_two_arrays_convert_with_a_launch_check_of_their_lengths() {
        let src = RELAX.replace("B[1:N - 1] - A[1:N - 1]", "B[1:-1] - A[1:-1]");
        let (f, made) = converted_with_checks(&src);
        assert_eq!(made.pragmas.len(), 1);
        let [(span, checks)] = made.checks.as_slice() else {
            panic!("{:?}", made.checks)
        };
        assert_eq!(loop_body(&f.body[1])[2].span, *span);
        let [LaunchCheck::Equal(a, b, _)] = checks.as_slice() else {
            panic!("{checks:?}")
        };
        let py = crate::ir::python::expr;
        assert_eq!(
            (py(a), py(b)),
            ("B.shape[0] - 1 - 1".into(), "A.shape[0] - 1 - 1".into())
        );
        // The launcher of the loop that runs it raises NumPy's broadcast error.
        let module = crate::codegen::test_support::generated(&src);
        assert!(
            module.contains("    if B.shape[0] - 1 - 1 != A.shape[0] - 1 - 1:\n        raise ValueError(f\"t.py:7: slices of lengths"),
            "{module}"
        );
        // Bounds written from one name: nothing to check.
        assert!(converted_with_checks(RELAX).1.checks.is_empty());
    }

    #[test]
    fn a_check_goes_with_the_region_its_loop_was_joined_into() {
        // `s = s * 0.5` must run after the sweep, so the joined region stands at the sweep's
        // place and the test's loop is absorbed: its check is found through `absorbed`.
        let src = "def f(A, B, tol, s):\n    N = A.shape[0]\n    diff = tol + 1.0\n    while diff > tol:\n        #pragma parallel for simd\n        for i in range(1, N - 1):\n            B[i] = s * (A[i - 1] + A[i + 1])\n        s = s * 0.5\n        diff = np.max(np.abs(B[1:-1] - A[1:-1]))\n        A, B = B, A\n    return s\n";
        let options = crate::driver::Options {
            persistent: false,
            ..Default::default()
        };
        let file = crate::frontend::source::SourceFile::new("t.py", src);
        let module = crate::driver::compile(&file, &options).unwrap().text;
        let host = crate::codegen::test_support::function(&module, "f");
        assert!(
            host.contains("        # appyc: this region runs inside _launch_f_kernel0 above"),
            "{host}"
        );
        let launcher = crate::codegen::test_support::function(&module, "_launch_f_kernel0");
        assert!(launcher.contains("t.py:9: slices of lengths"), "{launcher}");
    }

    #[test]
    fn what_is_no_whole_reduction_on_the_device_stays() {
        for src in [
            // Not in a loop with a region: host code, as before.
            "def f(A, N):\n    s = np.max(A[:N])\n    #pragma parallel for\n    for i in range(N):\n        A[i] = s\n",
            "def f(A, N, T):\n    for t in range(T):\n        s = np.max(A[:N])\n",
            // Along an axis, two reductions, an array made on the host.
            "def f(A, r, N, T):\n    for t in range(T):\n        #pragma parallel for\n        for i in range(N):\n            A[i, 0] = 1.0\n        r = np.sum(A[:N, :N], axis=1)\n",
            "def f(A, N, T):\n    for t in range(T):\n        #pragma parallel for\n        for i in range(N):\n            A[i] = 1.0\n        s = np.max(A[:N]) - np.min(A[:N])\n",
            "def f(A, N, T):\n    L = np.ones(N)\n    for t in range(T):\n        #pragma parallel for\n        for i in range(N):\n            A[i] = 1.0\n        s = np.sum(L[:N])\n",
        ] {
            let (_, made) = converted(src);
            assert!(made.is_empty(), "{src}");
        }
    }
}
