//! outline: finds the top-level parallel regions (outermost `parallel for` / `sequential for`
//! loops, also inside host loops and ifs), checks that each holds only what a kernel can run,
//! and turns each into a `Kernel` whose grid dimensions are its directly nested parallel loops.

use crate::diag::{Diagnostic, Result};
use crate::ir::*;

pub fn run(func: &Function) -> Result<Vec<Kernel>> {
    let mut kernels = vec![];
    outline_block(func, &func.body, &mut kernels)?;
    Ok(kernels)
}

fn outline_block(func: &Function, stmts: &[Stmt], out: &mut Vec<Kernel>) -> Result<()> {
    for s in stmts {
        match &s.kind {
            StmtKind::For {
                kind: LoopKind::Parallel { .. } | LoopKind::Sequential,
                ..
            } => {
                let name = format!("_{}_kernel{}", func.name, out.len());
                out.push(make_kernel(name, s)?);
            }
            StmtKind::For {
                kind: LoopKind::Simd(_),
                ..
            } => {
                return Err(Diagnostic::error(
                    pragma_span(s),
                    "`#pragma simd` outside a parallel region",
                )
                .with_help(
                    "vectorise a loop inside a `parallel for`, or use `#pragma parallel for simd`",
                ))
            }
            StmtKind::For { body, .. }
            | StmtKind::HostBlock { body, .. }
            | StmtKind::While { body, .. } => outline_block(func, body, out)?,
            StmtKind::If { body, orelse, .. } => {
                outline_block(func, body, out)?;
                outline_block(func, orelse, out)?;
            }
            StmtKind::Assign { target, value, .. } if matches!(&s.pragma, Some(p) if matches!(p.directive, crate::ir::pragma::Directive::Dimensions(_))) =>
            {
                let name = format!("_{}_kernel{}", func.name, out.len());
                out.push(make_tensor_kernel(name, s, target, value)?);
            }
            StmtKind::Assign { atomic: true, .. } => {
                return Err(Diagnostic::error(
                    pragma_span(s),
                    "`#pragma atomic` outside a parallel region",
                )
                .with_help("host code runs sequentially; remove the pragma"))
            }
            _ => {}
        }
    }
    Ok(())
}

fn pragma_span(s: &Stmt) -> crate::frontend::source::Span {
    s.pragma.as_ref().map_or(s.span, |p| p.span)
}

fn make_kernel(name: String, top: &Stmt) -> Result<Kernel> {
    let pragma = top
        .pragma
        .as_ref()
        .expect("parallel loops come from pragmas");
    let StmtKind::For {
        kind, num_warps, ..
    } = &top.kind
    else {
        unreachable!()
    };
    let mut k = empty_kernel(name, pragma.span.to(top.span), pragma.span, *num_warps);
    if *kind == LoopKind::Sequential {
        // One program runs the loop as a plain loop.
        let mut plain = top.clone();
        if let StmtKind::For { kind, .. } = &mut plain.kind {
            *kind = LoopKind::Plain;
        }
        check_body(std::slice::from_ref(&plain), false)?;
        k.body = vec![plain];
        return Ok(k);
    }
    let (dims, body) = peel_grid(top)?;
    check_body(&body, dims.last().is_some_and(|d| d.simd.is_some()))?;
    k.dims = dims;
    k.body = body;
    k.shared = shared_names(pragma);
    k.tf32 = matches!(
        pragma.directive,
        crate::ir::pragma::Directive::ParallelFor { tf32: true, .. }
    );
    Ok(k)
}

/// A kernel with nothing in it yet: no grid, no body, no launch-time extras.
fn empty_kernel(
    name: String,
    span: crate::frontend::source::Span,
    pragma_span: crate::frontend::source::Span,
    num_warps: Option<u32>,
) -> Kernel {
    Kernel {
        name,
        dims: vec![],
        body: vec![],
        num_warps,
        span,
        pragma_span,
        bound: vec![],
        temps: vec![],
        checks: vec![],
        shared: vec![],
        tiles: None,
        split_rows: None,
        absorbed: vec![],
        tf32: false,
        comm: None,
    }
}

/// Peels the perfectly nested parallel loops from `top` into grid dimensions: the dimensions,
/// and the body every program runs (the scalar assignments before each inner loop first).
fn peel_grid(top: &Stmt) -> Result<(Vec<ParallelDim>, Vec<Stmt>)> {
    let mut dims = vec![];
    let mut prelude = vec![];
    let mut cur = top;
    loop {
        let StmtKind::For {
            var,
            range,
            body,
            kind: LoopKind::Parallel { simd },
            ..
        } = &cur.kind
        else {
            unreachable!()
        };
        if !dims.is_empty() && bounds_use(range, &dims, &prelude) {
            prelude.push(inside_each_program(cur));
            return Ok((dims, prelude));
        }
        if dims.len() == 3 {
            return Err(Diagnostic::error(
                pragma_span(cur),
                "at most 3 nested `parallel for` loops (Triton's grid has 3 dimensions)",
            ));
        }
        dims.push(ParallelDim {
            var: var.clone(),
            range: range.clone(),
            simd: *simd,
            span: cur.span,
        });
        check_step(&range.step, false)?;
        let Some(pos) = next_grid_loop(body, *simd)? else {
            prelude.extend(body.iter().cloned());
            return Ok((dims, prelude));
        };
        // Scalar assignments before the inner parallel loop are repeated by every program.
        prelude.extend(body[..pos].iter().cloned());
        cur = &body[pos];
        check_nested_grid_loop(cur)?;
    }
}

/// A nested loop whose bounds use a name an enclosing loop binds (its variable, or a scalar
/// assigned before it) is no rectangle the launcher can count: it runs inside each program
/// instead, as a `simd` strip when that is one (its iterations are independent, as lanes
/// are), else in order.
fn inside_each_program(nested: &Stmt) -> Stmt {
    let mut inner = nested.clone();
    if let StmtKind::For {
        range, body, kind, ..
    } = &mut inner.kind
    {
        let LoopKind::Parallel { simd } = *kind else {
            unreachable!("peeled loops are parallel")
        };
        *kind = if matches!(range.step.kind, ExprKind::Int(1))
            && body.iter().all(is_element_assignment)
        {
            LoopKind::Simd(simd.unwrap_or(Width::Mvl))
        } else {
            LoopKind::Plain
        };
    }
    inner
}

/// Where the next grid dimension is in a parallel loop's `body`: its last statement, after
/// scalar assignments only, and only if the loop is not `simd`; None if it holds no parallel
/// loop.
fn next_grid_loop(body: &[Stmt], simd: Option<Width>) -> Result<Option<usize>> {
    let Some(pos) = body.iter().position(Stmt::is_parallel_loop) else {
        return Ok(None);
    };
    let scalar_prelude = |s: &Stmt| {
        matches!(
            &s.kind,
            StmtKind::Assign {
                target: Expr {
                    kind: ExprKind::Name(_),
                    ..
                },
                atomic: false,
                ..
            } | StmtKind::Pass
        )
    };
    if simd.is_none() && pos + 1 == body.len() && body[..pos].iter().all(scalar_prelude) {
        return Ok(Some(pos));
    }
    let why = if simd.is_some() {
        "a `parallel for simd` loop must be the innermost parallel loop"
    } else {
        "a nested `parallel for` must be the last statement of its parent loop, after scalar assignments only"
    };
    Err(Diagnostic::error(pragma_span(&body[pos]), why))
}

/// What a nested `parallel for` may not say: `shared(...)` (the region's outermost loop
/// names them), or be a `sequential for`.
fn check_nested_grid_loop(inner: &Stmt) -> Result<()> {
    if let Some(p) = inner
        .pragma
        .as_ref()
        .filter(|p| !shared_names(p).is_empty())
    {
        return Err(Diagnostic::error(
            p.span,
            "`shared(...)` on a nested `parallel for`: the scalars are shared by the whole region",
        )
        .with_help("name them in the outermost `parallel for` of the region"));
    }
    if matches!(
        &inner.kind,
        StmtKind::For {
            kind: LoopKind::Sequential,
            ..
        }
    ) {
        return Err(Diagnostic::error(
            pragma_span(inner),
            "`sequential for` inside a parallel region: use a plain loop, each worker runs it sequentially",
        ));
    }
    Ok(())
}

/// Whether a loop's bounds read an enclosing grid variable or a scalar assigned before it.
fn bounds_use(range: &Range, dims: &[ParallelDim], prelude: &[Stmt]) -> bool {
    let mut bound: Vec<&str> = dims.iter().map(|d| d.var.as_str()).collect();
    for s in prelude {
        if let StmtKind::Assign {
            target: Expr {
                kind: ExprKind::Name(n),
                ..
            },
            ..
        } = &s.kind
        {
            bound.push(n);
        }
    }
    [&range.start, &range.stop, &range.step]
        .iter()
        .any(|e| bound.iter().any(|n| e.mentions(n)))
}

/// A non-atomic assignment of one element (no slices): what a `simd` strip runs lane by lane.
fn is_element_assignment(s: &Stmt) -> bool {
    let StmtKind::Assign {
        target,
        value,
        atomic: false,
    } = &s.kind
    else {
        return false;
    };
    [target, value].iter().all(|e| {
        !e.any(&mut |x| match &x.kind {
            ExprKind::Subscript { indices, .. } => {
                indices.iter().any(|i| matches!(i, Index::Slice { .. }))
            }
            _ => false,
        })
    })
}

/// The names of a `shared(...)` clause, to be classified by `passes::shared_scalars`.
fn shared_names(pragma: &crate::ir::pragma::Pragma) -> Vec<SharedScalar> {
    match &pragma.directive {
        crate::ir::pragma::Directive::ParallelFor { shared, .. } => shared
            .iter()
            .map(|(var, span)| SharedScalar {
                var: var.clone(),
                buffer: String::new(),
                update: SharedUpdate::ReadOnly,
                like: None,
                span: *span,
                implicit: None,
                passed: None,
            })
            .collect(),
        _ => vec![],
    }
}

/// A function-level tensor statement with a dimension pragma: its `parallel` dimensions become
/// the grid (outermost first), the statement itself the body (lowered by `lower_tensor`).
fn make_tensor_kernel(name: String, s: &Stmt, target: &Expr, value: &Expr) -> Result<Kernel> {
    use crate::ir::pragma::Directive;
    let pragma = s.pragma.as_ref().expect("matched above");
    let Directive::Dimensions(pdims) = &pragma.directive else {
        unreachable!()
    };
    if !is_tensor_expr(target) && !is_tensor_expr(value) {
        return Err(Diagnostic::error(
            pragma.span,
            "a dimension pragma annotates a statement with slices",
        ));
    }
    if !matches!(target.kind, ExprKind::Name(_) | ExprKind::Subscript { .. }) {
        return Err(Diagnostic::error(
            target.span,
            "a kernel can assign to a name or an array element only",
        ));
    }
    check_expr(target)?;
    check_expr(value)?;
    let t = crate::passes::tensor::analyse(target, value, &[])?;
    let mut dims = vec![];
    let mut bound = vec![];
    let mut taken: Vec<String> = vec![];
    value.walk(&mut |x| {
        if let ExprKind::Name(n) = &x.kind {
            taken.push(n.clone());
        }
    });
    let mut claimed: Vec<usize> = vec![];
    for p in pdims {
        // Slices are claimed in pragma order, as `lower_tensor` does.
        let candidates: Vec<usize> = (0..t.dims.len())
            .filter(|d| {
                !claimed.contains(d) && crate::passes::tensor::pragma_matches(p, &t, *d).is_some()
            })
            .collect();
        // An open slice (`:`) can match several dimensions: `parallel` prefers an assigned one.
        let Some(d) = candidates
            .iter()
            .copied()
            .find(|d| p.parallel == t.output.contains(d))
            .or(candidates.first().copied())
        else {
            continue; // reported by lower_tensor, with the statements split off this one
        };
        claimed.push(d);
        if !p.parallel {
            continue;
        }
        if !t.output.contains(&d) {
            return Err(Diagnostic::error(
                p.span,
                "a `parallel` dimension must be one of the assigned dimensions",
            ));
        }
        if dims.len() == 3 {
            return Err(Diagnostic::error(
                p.span,
                "at most 3 `parallel` dimensions (Triton's grid has 3)",
            ));
        }
        let var = (0..)
            .map(|k| format!("_p{k}"))
            .find(|v| !taken.contains(v))
            .expect("a free name");
        taken.push(var.clone());
        dims.push(ParallelDim {
            var,
            range: Range {
                start: t.dims[d].lo.clone(),
                stop: t.dims[d].hi.clone(),
                step: Expr::int(1, p.span),
            },
            simd: None,
            span: pragma.span,
        });
        let grid = dims.len() - 1;
        bound.extend(
            t.dims[d]
                .slices
                .iter()
                .map(|(lo, hi)| (grid, lo.clone(), hi.clone())),
        );
    }
    Ok(Kernel {
        name,
        dims,
        body: vec![s.clone()],
        num_warps: None,
        span: pragma.span.to(s.span),
        pragma_span: pragma.span,
        bound,
        temps: vec![],
        checks: vec![],
        shared: vec![],
        tiles: None,
        split_rows: None,
        absorbed: vec![],
        tf32: false,
        comm: None,
    })
}

/// Strip-mined (`simd`) loops mask their lanes by `< stop`, so they need a positive step;
/// parallel loops may count down (their lane masks follow the step's sign).
fn check_step(step: &Expr, vector: bool) -> Result<()> {
    match step.kind {
        ExprKind::Int(0) => Err(Diagnostic::error(step.span, "a loop step cannot be zero")),
        ExprKind::Int(v) if v < 0 && vector => Err(Diagnostic::error(
            step.span,
            "a vectorised loop needs a positive step",
        )),
        _ => Ok(()),
    }
}

/// Everything inside a region must be expressible in the kernel language.
fn check_body(stmts: &[Stmt], in_simd: bool) -> Result<()> {
    for s in stmts {
        match &s.kind {
            StmtKind::Other(what) => {
                return Err(Diagnostic::error(
                    s.span,
                    format!("{what} is not supported inside a parallel region"),
                ))
            }
            StmtKind::HostBlock { .. } | StmtKind::While { .. } => {
                let what = match &s.kind {
                    StmtKind::HostBlock { what, .. } => what,
                    _ => "while loop",
                };
                return Err(Diagnostic::error(
                    s.span,
                    format!("a {what} is not supported inside a parallel region"),
                )
                .with_help("kernels can run `for ... in range(...)` loops and `if` statements"));
            }
            StmtKind::For {
                kind, body, range, ..
            } => {
                match kind {
                    LoopKind::Parallel { .. } | LoopKind::Sequential => {
                        return Err(Diagnostic::error(
                            pragma_span(s),
                            "this parallel loop is not directly nested in the parallel loop around it",
                        )
                        .with_help("only perfectly nested `parallel for` loops become grid dimensions"))
                    }
                    LoopKind::Simd(_) => {
                        if in_simd {
                            return Err(Diagnostic::error(
                                pragma_span(s),
                                "a `simd` loop inside another vectorised loop is not supported",
                            ));
                        }
                        check_step(&range.step, true)?;
                        if !matches!(range.step.kind, ExprKind::Int(1)) {
                            return Err(Diagnostic::error(
                                range.step.span,
                                "a `simd` loop needs step 1",
                            ));
                        }
                    }
                    _ => {}
                }
                for e in s.exprs() {
                    check_expr(e)?;
                }
                check_body(body, in_simd || matches!(kind, LoopKind::Simd(_)))?;
            }
            StmtKind::If { body, orelse, .. } => {
                for e in s.exprs() {
                    check_expr(e)?;
                }
                check_body(body, in_simd)?;
                check_body(orelse, in_simd)?;
            }
            StmtKind::Assign { target, value, .. } => {
                if !matches!(target.kind, ExprKind::Name(_) | ExprKind::Subscript { .. }) {
                    return Err(Diagnostic::error(
                        target.span,
                        "a kernel can assign to a name or an array element only",
                    ));
                }
                check_expr(target)?;
                check_expr(value)?;
            }
            StmtKind::Expr(e) => {
                check_expr(e)?;
                return Err(Diagnostic::error(
                    s.span,
                    "an expression statement has no effect inside a parallel region",
                ));
            }
            StmtKind::AugAssign { .. } => unreachable!("normalized"),
            StmtKind::Pass | StmtKind::Barrier => {}
        }
    }
    Ok(())
}

fn check_expr(e: &Expr) -> Result<()> {
    let mut err = None;
    e.walk(&mut |x| {
        if err.is_some() {
            return;
        }
        if let ExprKind::Unsupported(what) = &x.kind {
            err = Some(Diagnostic::error(
                x.span,
                format!("{what} is not supported inside a parallel region"),
            ));
        }
    });
    err.map_or(Ok(()), Err)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::attach_pragmas::tests::attached;

    fn kernels(src: &str) -> Result<Vec<Kernel>> {
        run(&attached(src).expect("pragmas attach"))
    }

    #[test]
    fn nested_parallel_loops_become_grid_dimensions() {
        let k = kernels(
            "def f(A, M, N):\n    for t in range(3):\n        #pragma parallel for\n        for i in range(M):\n            s = i * 2\n            #pragma parallel for\n            for j in range(N):\n                A[i, j] = s\n",
        )
        .unwrap();
        assert_eq!(k.len(), 1, "the region inside a host loop is found");
        assert_eq!(k[0].name, "_f_kernel0");
        assert_eq!(k[0].dims.len(), 2);
        assert_eq!(k[0].body.len(), 2, "prelude assignment + body");
    }

    #[test]
    fn a_nested_loop_over_what_its_parent_binds_runs_inside_each_program() {
        // Bounds from the outer variable or a scalar assigned before: no grid dimension (the
        // launcher could not count it), but a loop in the body: a strip of element
        // assignments, or a plain loop.
        let inner_kind = |src: &str| {
            let k = kernels(src).unwrap().remove(0);
            assert_eq!(k.dims.len(), 1, "{src}");
            match &k.body.last().unwrap().kind {
                StmtKind::For { kind, .. } => *kind,
                other => panic!("{other:?}"),
            }
        };
        let head = "def f(A, B, N, s):\n    #pragma parallel for\n    for i in range(N):\n";
        assert_eq!(
            inner_kind(&format!("{head}        #pragma parallel for\n        for j in range(i, N):\n            B[i, j] = A[i, j]\n")),
            LoopKind::Simd(Width::Mvl)
        );
        assert_eq!(
            inner_kind(&format!("{head}        n = i + 1\n        #pragma parallel for\n        for j in range(n):\n            B[i, j] = A[i, j]\n")),
            LoopKind::Simd(Width::Mvl)
        );
        // A body with an `if`, or a step other than 1: one iteration after another.
        assert_eq!(
            inner_kind(&format!("{head}        #pragma parallel for\n        for j in range(i):\n            if A[i, j] > 0:\n                B[i, j] = 1.0\n")),
            LoopKind::Plain
        );
        assert_eq!(
            inner_kind(&format!("{head}        #pragma parallel for\n        for j in range(0, i, 2):\n            B[i, j] = A[i, j]\n")),
            LoopKind::Plain
        );
        // A host scalar in the bounds is still a rectangle.
        let k = kernels(&format!("{head}        #pragma parallel for\n        for j in range(s, N):\n            B[i, j] = A[i, j]\n")).unwrap();
        assert_eq!(k[0].dims.len(), 2);
    }

    #[test]
    fn sequential_region_has_no_grid() {
        let k = kernels("def f(A, N):\n    #pragma sequential for\n    for i in range(1, N):\n        A[i] += A[i - 1]\n").unwrap();
        assert!(k[0].dims.is_empty());
        assert!(matches!(
            k[0].body[0].kind,
            StmtKind::For {
                kind: LoopKind::Plain,
                ..
            }
        ));
    }

    #[test]
    fn rejects_what_a_kernel_cannot_run() {
        let deep = "def f(A, N):\n    #pragma parallel for\n    for i in range(N):\n        #pragma parallel for\n        for j in range(N):\n            #pragma parallel for\n            for k in range(N):\n                #pragma parallel for\n                for l in range(N):\n                    A[i, j, k, l] = 0\n";
        assert!(kernels(deep).unwrap_err().message.contains("at most 3"));
        let imperfect = "def f(A, N):\n    #pragma parallel for\n    for i in range(N):\n        A[i, 0] = 1\n        #pragma parallel for\n        for j in range(N):\n            A[i, j] = 0\n";
        assert!(kernels(imperfect)
            .unwrap_err()
            .message
            .contains("last statement"));
        let ret =
            "def f(A, N):\n    #pragma parallel for\n    for i in range(N):\n        return A\n";
        assert!(kernels(ret)
            .unwrap_err()
            .message
            .contains("return statement is not supported"));
        let stray = "def f(A, N):\n    #pragma simd\n    for i in range(N):\n        A[i] = 0\n";
        assert!(kernels(stray)
            .unwrap_err()
            .message
            .contains("outside a parallel region"));
        let zero = "def f(A, N):\n    #pragma parallel for\n    for i in range(0, N, 0):\n        A[i] = 0\n";
        assert!(kernels(zero)
            .unwrap_err()
            .message
            .contains("cannot be zero"));
    }
}
