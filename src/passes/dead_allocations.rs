//! Contract: a statement of the function's own body `T = np.empty(...)` (or `zeros`, `ones`,
//! `full`, their `_like` forms; `numpy.` alike) whose arguments only read names, attributes,
//! constants and indices, is reported dead when every other token `T` of the function lies
//! inside a region whose kernel never names `T`. The host drops a dead statement; nothing else
//! changes.
//!
//! Why: gather (passes/gather.rs) turns symm's temporary row `temp2` into a register of its one
//! region, yet the host still allocated the row on every call (2-3 us of a 0.15 ms call on the
//! H100 and H200, with nothing reading it).
//!
//! The source's tokens decide, not the IR: `return T`, `del T` and names in host statements the
//! IR keeps as `Other` are all tokens, so any mention outside such a region keeps the
//! allocation. An allocation has no effect but its result (and errors for bad shapes, which the
//! sequential program would raise too; the compiled one then does not), so dropping it cannot
//! change what the function computes.

use crate::frontend::source::{SourceFile, Span};
use crate::ir::*;
use rustpython_ast as ast;
use rustpython_parser::Parse;

const ALLOCATORS: &[&str] = &[
    "empty",
    "zeros",
    "ones",
    "full",
    "empty_like",
    "zeros_like",
    "ones_like",
    "full_like",
];

/// The spans of the function's dead allocation statements, in source order.
pub fn run(file: &SourceFile, func: &Function, kernels: &[Kernel]) -> Vec<Span> {
    let tokens = file.name_tokens(func.span);
    func.body
        .iter()
        .filter_map(|s| {
            let StmtKind::Assign { target, .. } = &s.kind else {
                return None;
            };
            let ExprKind::Name(name) = &target.kind else {
                return None;
            };
            let alone = file.alone_on_lines(s.span);
            if func.params.contains(name) || !alone || !is_allocation(&file.text[s.span.range()]) {
                return None;
            }
            let used = tokens.iter().any(|(n, at)| {
                n == name
                    && *at != target.span.start
                    && !kernels
                        .iter()
                        .any(|k| runs_in(k, *at) && !k.names().contains(name))
            });
            (!used).then_some(s.span)
        })
        .collect()
}

/// The source at `at` runs inside kernel `k`: its region or one fused into it.
fn runs_in(k: &Kernel, at: u32) -> bool {
    std::iter::once(k.span)
        .chain(k.absorbed.iter().map(|a| a.span))
        .any(|s| s.start <= at && at < s.end)
}

/// `text` is one assignment `name = np.<allocator>(pure arguments)`.
fn is_allocation(text: &str) -> bool {
    let Ok(suite) = ast::Suite::parse(text, "<statement>") else {
        return false;
    };
    let [ast::Stmt::Assign(assign)] = suite.as_slice() else {
        return false;
    };
    let ast::Expr::Call(call) = assign.value.as_ref() else {
        return false;
    };
    let ast::Expr::Attribute(func) = call.func.as_ref() else {
        return false;
    };
    let numpy = matches!(func.value.as_ref(), ast::Expr::Name(m) if m.id.as_str() == "np" || m.id.as_str() == "numpy");
    numpy
        && ALLOCATORS.contains(&func.attr.as_str())
        && call.args.iter().all(pure)
        && call.keywords.iter().all(|k| pure(&k.value))
}

/// Reads only: names, attributes, constants, indices and slices, tuples and arithmetic of them.
fn pure(e: &ast::Expr) -> bool {
    match e {
        ast::Expr::Name(_) | ast::Expr::Constant(_) => true,
        ast::Expr::Attribute(a) => pure(&a.value),
        ast::Expr::Subscript(s) => pure(&s.value) && pure(&s.slice),
        ast::Expr::Tuple(t) => t.elts.iter().all(pure),
        ast::Expr::List(l) => l.elts.iter().all(pure),
        ast::Expr::BinOp(b) => pure(&b.left) && pure(&b.right),
        ast::Expr::UnaryOp(u) => pure(&u.operand),
        ast::Expr::Slice(s) => [&s.lower, &s.upper, &s.step]
            .into_iter()
            .all(|b| b.as_deref().is_none_or(pure)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::attach_pragmas::tests::attached_in;

    /// The dead statements of `src`'s function, as text, after gather and outline.
    fn dead(src: &str) -> Vec<String> {
        let (mut f, file) = attached_in(src).unwrap();
        crate::passes::gather::run(&mut f, &file, &mut vec![]);
        let kernels = crate::passes::outline::run(&f).unwrap();
        run(&file, &f, &kernels)
            .into_iter()
            .map(|s| file.text[s.range()].to_string())
            .collect()
    }

    const SYMM: &str = "def f(alpha, C, A, B):\n    temp2 = np.empty((C.shape[1],), dtype=C.dtype)\n    for i in range(C.shape[0]):\n        #pragma parallel for\n        for j in range(C.shape[1]):\n            acc = 0.0\n            #pragma simd\n            for k in range(i):\n                C[k, j] += alpha * B[i, j] * A[i, k]\n                acc += B[k, j] * A[i, k]\n            temp2[j] = acc\n        C[i, :] += alpha * B[i, :] * A[i, i] + alpha * temp2\n    return C\n";

    #[test]
    fn a_temporary_that_gather_keeps_in_registers_is_not_allocated() {
        assert_eq!(
            dead(SYMM),
            ["temp2 = np.empty((C.shape[1],), dtype=C.dtype)"]
        );
        for alloc in [
            "np.zeros(C.shape[1])",
            "numpy.ones_like(C[0, :])",
            "np.full(3, 2.0)",
        ] {
            let src = SYMM.replace("np.empty((C.shape[1],), dtype=C.dtype)", alloc);
            assert_eq!(dead(&src).len(), 1, "{src}");
        }
    }

    #[test]
    fn an_allocation_anything_else_may_read_stays() {
        let cases = [
            // Named after the loop, or returned.
            SYMM.replace("    return C\n", "    return temp2\n"),
            SYMM.replace("    return C\n", "    print(temp2)\n    return C\n"),
            // The loop is not gathered (it reads what it accumulates): its region reads temp2.
            SYMM.replace("acc += B[k, j]", "acc += C[k, j]"),
            // Not a plain allocation: a call in the arguments, another function.
            SYMM.replace("C.shape[1],)", "len(C[0]),)"),
            SYMM.replace("np.empty(", "np.asarray("),
            // Another statement on its line.
            SYMM.replace("dtype=C.dtype)\n", "dtype=C.dtype); n = 3\n"),
        ];
        for src in cases {
            assert!(dead(&src).is_empty(), "{src}");
        }
        // Named only inside a region, whose kernel writes it.
        let src = "def g(C, B):\n    T = np.empty(C.shape)\n    #pragma parallel for\n    for i in range(C.shape[0]):\n        T[i] = B[i]\n    return C\n";
        assert!(dead(src).is_empty(), "{src}");
    }
}
