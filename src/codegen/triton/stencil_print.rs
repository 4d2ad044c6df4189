//! What the temporally blocked printers share: the expressions of a stencil
//! (`schedule::temporal` admits numbers, names, elements, `+ - * /` and unary minus), printed
//! fully parenthesised, each form spelling the leaves it knows (an element from its scratch or
//! tile, a bound); and the signature and head of a Gluon kernel and its Triton twin
//! (`blocked_pair`, for `gluon2d` and `gluon3d`).

use super::dialect::Dialect;
use crate::codegen::kernel_code::{signature, KernelCode, Param};
use crate::codegen::writer::Writer;
use crate::frontend::source::SourceFile;
use crate::ir::*;

/// The signature of a 2-D or 3-D blocked kernel pair (`gluon2d`, `gluon3d`): the state, its
/// spare and the other array, the plain kernel's scalars, the twin's scratch, the host
/// integers (`ints`, never specialized: they change between launches and sizes), `extra`
/// parameters, the constexprs.
pub(super) struct BlockedSignature<'s> {
    pub ints: &'s [&'s str],
    pub extra: &'s [&'s str],
    pub constexprs: &'s [&'s str],
    /// What the kernel does, after `(temporally blocked: `; `{}` names where its tiles live.
    pub what: &'s str,
}

/// The Gluon kernel and its Triton twin (named `{name}_gluon`, `{name}_twin`), `body` printing
/// each; `plain` is the loop's persistent kernel, whose scalars they take (in its order).
pub(super) fn blocked_pair(
    name: &str,
    sig: &BlockedSignature,
    plain: &KernelCode,
    (file, line): (&SourceFile, usize),
    body: &dyn Fn(&mut Writer, Dialect),
) -> (String, String) {
    let scalars = blocked_scalars(plain);
    let head = format!(
        "# {}:{line}: {}  (temporally blocked: {})",
        file.name,
        file.line_text(line).trim(),
        sig.what
    );
    let kernel = |form: Dialect, kernel: String| {
        let mut params = vec!["_src".to_string(), "_dst".to_string(), "_other".to_string()];
        params.extend(signature(&scalars));
        if form == Dialect::Triton {
            params.push("_scratch".into());
        }
        params.extend(sig.ints.iter().chain(sig.extra).map(|s| s.to_string()));
        params.extend(
            sig.constexprs
                .iter()
                .map(|c| format!("{c}: {}.constexpr", form.ns())),
        );
        let quoted: Vec<String> = sig.ints.iter().map(|s| format!("\"{s}\"")).collect();
        let mut w = Writer::new(0);
        w.line(format!(
            "@{}.jit(do_not_specialize=[{}])",
            form.decorator(),
            quoted.join(", ")
        ));
        w.line(format!("def {kernel}({}):", params.join(", ")));
        w.indent();
        let memory = match form {
            Dialect::Gluon => "shared memory",
            Dialect::Triton => "a global scratch",
        };
        w.line(head.replace("{}", memory));
        body(&mut w, form);
        w.dedent();
        w.finish()
    };
    (
        kernel(Dialect::Gluon, format!("{name}_gluon")),
        kernel(Dialect::Triton, format!("{name}_twin")),
    )
}

/// The scalars a blocked kernel takes: the plain kernel's, in its order.
pub(super) fn blocked_scalars(plain: &KernelCode) -> Vec<Param> {
    plain
        .params
        .iter()
        .filter(|p| matches!(p, Param::IntScalar(_) | Param::FloatScalar(_)))
        .cloned()
        .collect()
}

/// `e` fully parenthesised, with `leaf` spelling what it knows.
pub(super) fn print(e: &Expr, leaf: &mut dyn FnMut(&Expr) -> Option<String>) -> String {
    if let Some(s) = leaf(e) {
        return s;
    }
    match &e.kind {
        ExprKind::Name(n) => n.clone(),
        ExprKind::Int(v) => v.to_string(),
        ExprKind::Float(v) => format!("{v:?}"),
        ExprKind::Unary { operand, .. } => format!("(-{})", print(operand, leaf)),
        ExprKind::Binary { op, left, right } => {
            let o = match op {
                BinOp::Add => "+",
                BinOp::Sub => "-",
                BinOp::Mul => "*",
                BinOp::Div => "/",
                _ => unreachable!("schedule::temporal allows + - * /"),
            };
            format!("({} {o} {})", print(left, leaf), print(right, leaf))
        }
        _ => unreachable!("schedule::temporal allows no other expression"),
    }
}
