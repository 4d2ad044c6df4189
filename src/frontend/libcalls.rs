//! Library calls in compiled functions (`nvshmem.Putmem(...)`, ...): the embedded spec
//! `pragma-spec/library-calls.yaml` and the check of every call of a listed module against it.
//!
//! `find` walks a compiled function's AST (keyword arguments never reach the IR, so the calls
//! are read here), validates each call of a spec'd module (unknown name with a suggestion, arity,
//! keywords) and binds its arguments to the spec's parameters.

use super::source::Span;
use crate::diag::{Diagnostic, Result};
use crate::frontend::lower::{dotted_name, lower_expr};
use crate::frontend::pragma::closest;
use crate::ir::Expr;
use rustpython_ast as ast;
use rustpython_ast::Ranged;
use serde::Deserialize;
use std::sync::OnceLock;

const SPEC_YAML: &str = include_str!("../../pragma-spec/library-calls.yaml");

#[derive(Debug, Deserialize)]
pub struct LibSpec {
    pub modules: Vec<ModuleSpec>,
}

#[derive(Debug, Deserialize)]
pub struct ModuleSpec {
    pub name: String,
    pub import: String,
    pub meaning: String,
    pub ordering: String,
    pub calls: Vec<CallSpec>,
}

#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Context {
    /// Host code of a compiled function.
    Host,
    /// A statement of its own in a host time loop run as one persistent kernel.
    Loop,
}

#[derive(Debug, Deserialize)]
pub struct CallSpec {
    pub name: String,
    /// `name` or `name=default`, in order.
    pub params: Vec<String>,
    pub context: Context,
    pub meaning: String,
    pub lowering: String,
    pub example: String,
}

impl CallSpec {
    /// `(name, required)` of each parameter.
    pub fn parameters(&self) -> impl Iterator<Item = (&str, bool)> {
        self.params.iter().map(|p| match p.split_once('=') {
            Some((n, _)) => (n.trim(), false),
            None => (p.trim(), true),
        })
    }
    pub fn signature(&self) -> String {
        format!("{}({})", self.name, self.params.join(", "))
    }
}

/// The parsed spec (embedded: a parse failure is a build defect, caught by the test below).
pub fn spec() -> &'static LibSpec {
    static SPEC: OnceLock<LibSpec> = OnceLock::new();
    SPEC.get_or_init(|| {
        serde_norway::from_str(SPEC_YAML).expect("embedded pragma-spec/library-calls.yaml is valid")
    })
}

/// One checked call of a library function.
#[derive(Debug, Clone)]
pub struct LibCall {
    pub module: String,
    pub name: String,
    pub context: Context,
    /// One entry per spec parameter, in spec order: the argument, `None` if left out.
    pub args: Vec<Option<Expr>>,
    /// The argument spans (the call's span where left out).
    pub arg_spans: Vec<Span>,
    /// The call expression.
    pub span: Span,
    /// The statement, when the call is an expression statement of its own.
    pub stmt: Option<Span>,
}

impl LibCall {
    pub fn arg(&self, name: &str) -> Option<&Expr> {
        let spec = call_spec(&self.module, &self.name)?;
        let i = spec.parameters().position(|(n, _)| n == name)?;
        self.args[i].as_ref()
    }
}

pub fn call_spec(module: &str, name: &str) -> Option<&'static CallSpec> {
    spec()
        .modules
        .iter()
        .find(|m| m.name == module)?
        .calls
        .iter()
        .find(|c| c.name == name)
}

/// Every call of a spec'd module in the function body, checked against the spec.
pub fn find(f: &ast::StmtFunctionDef) -> Result<Vec<LibCall>> {
    let mut out = vec![];
    for s in &f.body {
        stmt(s, &mut out)?;
    }
    Ok(out)
}

fn stmt(s: &ast::Stmt, out: &mut Vec<LibCall>) -> Result<()> {
    match s {
        ast::Stmt::Expr(e) => {
            if let ast::Expr::Call(c) = e.value.as_ref() {
                if let Some(call) = check(c, Some(e.range.into()))? {
                    out.push(call);
                    // Arguments may not hold further library calls: the check below sees them.
                    for a in c.args.iter().chain(c.keywords.iter().map(|k| &k.value)) {
                        expr(a, out)?;
                    }
                    return Ok(());
                }
            }
            expr(&e.value, out)
        }
        ast::Stmt::Assign(a) => {
            a.targets.iter().try_for_each(|t| expr(t, out))?;
            expr(&a.value, out)
        }
        ast::Stmt::AugAssign(a) => {
            expr(&a.target, out)?;
            expr(&a.value, out)
        }
        ast::Stmt::AnnAssign(a) => a.value.as_deref().map_or(Ok(()), |v| expr(v, out)),
        ast::Stmt::Return(r) => r.value.as_deref().map_or(Ok(()), |v| expr(v, out)),
        ast::Stmt::If(i) => {
            expr(&i.test, out)?;
            i.body
                .iter()
                .chain(&i.orelse)
                .try_for_each(|s| stmt(s, out))
        }
        ast::Stmt::For(f) => {
            expr(&f.iter, out)?;
            f.body
                .iter()
                .chain(&f.orelse)
                .try_for_each(|s| stmt(s, out))
        }
        ast::Stmt::While(w) => {
            expr(&w.test, out)?;
            w.body
                .iter()
                .chain(&w.orelse)
                .try_for_each(|s| stmt(s, out))
        }
        ast::Stmt::With(w) => {
            for item in &w.items {
                expr(&item.context_expr, out)?;
            }
            w.body.iter().try_for_each(|s| stmt(s, out))
        }
        _ => Ok(()),
    }
}

fn expr(e: &ast::Expr, out: &mut Vec<LibCall>) -> Result<()> {
    match e {
        ast::Expr::Call(c) => {
            if let Some(call) = check(c, None)? {
                out.push(call);
            }
            expr(&c.func, out)?;
            c.args.iter().try_for_each(|a| expr(a, out))?;
            c.keywords.iter().try_for_each(|k| expr(&k.value, out))
        }
        ast::Expr::BinOp(b) => {
            expr(&b.left, out)?;
            expr(&b.right, out)
        }
        ast::Expr::UnaryOp(u) => expr(&u.operand, out),
        ast::Expr::BoolOp(b) => b.values.iter().try_for_each(|v| expr(v, out)),
        ast::Expr::Compare(c) => {
            expr(&c.left, out)?;
            c.comparators.iter().try_for_each(|v| expr(v, out))
        }
        ast::Expr::IfExp(i) => {
            expr(&i.test, out)?;
            expr(&i.body, out)?;
            expr(&i.orelse, out)
        }
        ast::Expr::Subscript(s) => {
            expr(&s.value, out)?;
            expr(&s.slice, out)
        }
        ast::Expr::Slice(s) => [&s.lower, &s.upper, &s.step]
            .into_iter()
            .flatten()
            .try_for_each(|p| expr(p, out)),
        ast::Expr::Tuple(t) => t.elts.iter().try_for_each(|v| expr(v, out)),
        ast::Expr::List(t) => t.elts.iter().try_for_each(|v| expr(v, out)),
        ast::Expr::Starred(s) => expr(&s.value, out),
        ast::Expr::Attribute(a) => expr(&a.value, out),
        _ => Ok(()),
    }
}

/// Checks one call; `None` if it is not a call of a spec'd module.
fn check(c: &ast::ExprCall, stmt: Option<Span>) -> Result<Option<LibCall>> {
    let Some(name) = dotted_name(&c.func) else {
        return Ok(None);
    };
    let Some((module, func)) = name.split_once('.') else {
        return Ok(None);
    };
    let Some(m) = spec().modules.iter().find(|m| m.name == module) else {
        return Ok(None);
    };
    let span: Span = c.range.into();
    let func_span: Span = c.func.range().into();
    let Some(cs) = m.calls.iter().find(|cs| cs.name == func) else {
        let mut d = Diagnostic::error(func_span, format!("unknown call `{name}`"))
            .with_label(format!("not a `{module}` call appyc knows"));
        if let Some(s) = closest(func, m.calls.iter().map(|c| c.name.as_str())) {
            d = d.with_help(format!("did you mean `{module}.{s}`?"));
        }
        let known: Vec<String> = m.calls.iter().map(|c| c.name.clone()).collect();
        return Err(d.with_help(format!(
            "`{module}` provides {} (pragma-spec/library-calls.yaml)",
            known.join(", ")
        )));
    };
    let params: Vec<(&str, bool)> = cs.parameters().collect();
    let wrong = |at: Span, msg: String| {
        Diagnostic::error(at, msg).with_help(format!("the call is `{module}.{}`", cs.signature()))
    };
    if c.args.len() > params.len() {
        let extra: Span = c.args[params.len()].range().into();
        return Err(wrong(
            extra,
            format!(
                "`{name}` takes {} argument{}, not {}",
                params.len(),
                if params.len() == 1 { "" } else { "s" },
                c.args.len()
            ),
        ));
    }
    let mut args: Vec<Option<Expr>> = vec![None; params.len()];
    let mut spans: Vec<Span> = vec![span; params.len()];
    for (i, a) in c.args.iter().enumerate() {
        if matches!(a, ast::Expr::Starred(_)) {
            return Err(wrong(
                a.range().into(),
                format!("`*` arguments to `{name}`"),
            ));
        }
        args[i] = Some(lower_expr(a));
        spans[i] = a.range().into();
    }
    for k in &c.keywords {
        let kspan: Span = k.range.into();
        let Some(key) = k.arg.as_ref().map(|a| a.as_str()) else {
            return Err(wrong(kspan, format!("`**` arguments to `{name}`")));
        };
        let Some(i) = params.iter().position(|(p, _)| *p == key) else {
            let mut d = wrong(kspan, format!("`{name}` has no parameter `{key}`"));
            if let Some(s) = closest(key, params.iter().map(|(p, _)| *p)) {
                d = d.with_help(format!("did you mean `{s}=`?"));
            }
            return Err(d);
        };
        if args[i].is_some() {
            return Err(wrong(
                kspan,
                format!("`{name}` got the argument `{key}` twice"),
            ));
        }
        args[i] = Some(lower_expr(&k.value));
        spans[i] = k.value.range().into();
    }
    if let Some((missing, _)) = params
        .iter()
        .zip(&args)
        .find(|((_, required), a)| *required && a.is_none())
        .map(|(p, _)| *p)
    {
        return Err(wrong(
            span,
            format!("`{name}` is missing the argument `{missing}`"),
        ));
    }
    Ok(Some(LibCall {
        module: module.to_string(),
        name: func.to_string(),
        context: cs.context,
        args,
        arg_spans: spans,
        span,
        stmt,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustpython_parser::Parse;

    fn calls(src: &str) -> Result<Vec<LibCall>> {
        let m = ast::Suite::parse(src, "t.py").unwrap();
        let ast::Stmt::FunctionDef(f) = &m[0] else {
            panic!()
        };
        find(f)
    }

    #[test]
    fn spec_parses_and_every_call_has_an_example() {
        let s = spec();
        let m = s.modules.iter().find(|m| m.name == "nvshmem").unwrap();
        let names: Vec<&str> = m.calls.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["Putmem", "SignalWait", "my_pe", "n_pes"]);
        for c in &m.calls {
            assert!(!c.example.trim().is_empty() && !c.meaning.trim().is_empty());
            // Required parameters come first.
            let req: Vec<bool> = c.parameters().map(|(_, r)| r).collect();
            assert!(req.windows(2).all(|w| w[0] || !w[1]), "{}", c.name);
        }
    }

    #[test]
    fn binds_positional_and_keyword_arguments() {
        let cs = calls(
            "def f(A, t):\n    nvshmem.Putmem(A[0, :], A[1, :], 1, flag=fl[0], signal=t)\n    nvshmem.SignalWait(fl[0], t)\n    me = nvshmem.my_pe()\n",
        )
        .unwrap();
        assert_eq!(cs.len(), 3);
        assert_eq!(cs[0].name, "Putmem");
        assert!(cs[0].stmt.is_some());
        assert!(cs[0].arg("flag").is_some() && cs[0].arg("signal").is_some());
        assert_eq!(cs[2].name, "my_pe");
        assert!(cs[2].stmt.is_none());
    }

    #[test]
    fn rejects_unknown_calls_and_wrong_arity() {
        let e = calls("def f(A):\n    nvshmem.Putmen(A[0], A[1], 0)\n").unwrap_err();
        assert!(e.message.contains("unknown call `nvshmem.Putmen`"), "{e:?}");
        assert!(e.help.iter().any(|h| h.contains("nvshmem.Putmem")), "{e:?}");
        let e = calls("def f(A):\n    nvshmem.Putmem(A[0], A[1])\n").unwrap_err();
        assert!(e.message.contains("missing the argument `pe`"), "{e:?}");
        let e = calls("def f(A):\n    nvshmem.SignalWait(A[0], 1, 2)\n").unwrap_err();
        assert!(e.message.contains("takes 2 arguments, not 3"), "{e:?}");
        let e = calls("def f(A):\n    nvshmem.Putmem(A[0], A[1], 0, flags=A[2])\n").unwrap_err();
        assert!(e.message.contains("no parameter `flags`"), "{e:?}");
        assert!(e.help.iter().any(|h| h.contains("`flag=`")), "{e:?}");
        let e = calls("def f(A):\n    x = nvshmem.my_pe(3)\n").unwrap_err();
        assert!(e.message.contains("takes 0 arguments, not 1"), "{e:?}");
    }
}
