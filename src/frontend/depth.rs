//! The nesting limit: the passes recurse over expressions, so an expression deeper than
//! [`MAX_DEPTH`] is a compile error (`expression nested deeper than N levels`) found before
//! any of them runs, instead of a stack overflow. Expressions are measured without recursion
//! (an explicit stack); statements are walked recursively (their nesting costs indentation, so
//! a file of n bytes nests at most about sqrt(2n) statements deep). A tree that is too deep is
//! never dropped (dropping recurses as deep as the tree): it is leaked on the error path.

use rustpython_ast::fold::fold_stmt;
use rustpython_ast::text_size::TextRange;
use rustpython_ast::{self as ast, Fold, Ranged};
use std::convert::Infallible;

/// How deep an expression may nest: `a + b` is 2 levels, `A[i]` 2, a 20,000-term sum
/// `A[i] + A[i] + ...` about 20,000 (it compiles). The limit leaves the compile thread's stack
/// (`driver::STACK_SIZE`) room to spare in a debug build.
pub const MAX_DEPTH: usize = 50_000;

/// The depth of `root` (a leaf is 1), and the first node found deeper than `max`, without
/// recursion and without looking below `max`.
pub fn expr_depth<'a>(root: &'a ast::Expr, max: usize) -> (usize, Option<TextRange>) {
    let mut stack: Vec<(&'a ast::Expr, usize)> = vec![(root, 1)];
    let mut deepest = 0;
    while let Some((e, d)) = stack.pop() {
        if d > max {
            return (d, Some(e.range()));
        }
        deepest = deepest.max(d);
        let mut push = |c: &'a ast::Expr| stack.push((c, d + 1));
        children(e, &mut push);
    }
    (deepest, None)
}

/// Calls `f` on every direct sub-expression of `e`.
fn children<'a>(e: &'a ast::Expr, f: &mut impl FnMut(&'a ast::Expr)) {
    use ast::Expr as E;
    let comprehensions = |gs: &'a [ast::Comprehension], f: &mut dyn FnMut(&'a ast::Expr)| {
        for g in gs {
            f(&g.target);
            f(&g.iter);
            g.ifs.iter().for_each(&mut *f);
        }
    };
    match e {
        E::BoolOp(x) => x.values.iter().for_each(f),
        E::NamedExpr(x) => {
            f(&x.target);
            f(&x.value);
        }
        E::BinOp(x) => {
            f(&x.left);
            f(&x.right);
        }
        E::UnaryOp(x) => f(&x.operand),
        E::Lambda(x) => {
            let a = &x.args;
            for arg in a.posonlyargs.iter().chain(&a.args).chain(&a.kwonlyargs) {
                if let Some(d) = &arg.default {
                    f(d);
                }
                if let Some(t) = &arg.def.annotation {
                    f(t);
                }
            }
            for arg in a.vararg.iter().chain(&a.kwarg) {
                if let Some(t) = &arg.annotation {
                    f(t);
                }
            }
            f(&x.body);
        }
        E::IfExp(x) => {
            f(&x.test);
            f(&x.body);
            f(&x.orelse);
        }
        E::Dict(x) => {
            x.keys.iter().flatten().for_each(&mut *f);
            x.values.iter().for_each(f);
        }
        E::Set(x) => x.elts.iter().for_each(f),
        E::ListComp(x) => {
            f(&x.elt);
            comprehensions(&x.generators, f);
        }
        E::SetComp(x) => {
            f(&x.elt);
            comprehensions(&x.generators, f);
        }
        E::DictComp(x) => {
            f(&x.key);
            f(&x.value);
            comprehensions(&x.generators, f);
        }
        E::GeneratorExp(x) => {
            f(&x.elt);
            comprehensions(&x.generators, f);
        }
        E::Await(x) => f(&x.value),
        E::Yield(x) => {
            if let Some(v) = &x.value {
                f(v);
            }
        }
        E::YieldFrom(x) => f(&x.value),
        E::Compare(x) => {
            f(&x.left);
            x.comparators.iter().for_each(f);
        }
        E::Call(x) => {
            f(&x.func);
            x.args.iter().for_each(&mut *f);
            x.keywords.iter().for_each(|k| f(&k.value));
        }
        E::FormattedValue(x) => {
            f(&x.value);
            if let Some(s) = &x.format_spec {
                f(s);
            }
        }
        E::JoinedStr(x) => x.values.iter().for_each(f),
        E::Constant(_) | E::Name(_) => {}
        E::Attribute(x) => f(&x.value),
        E::Subscript(x) => {
            f(&x.value);
            f(&x.slice);
        }
        E::Starred(x) => f(&x.value),
        E::List(x) => x.elts.iter().for_each(f),
        E::Tuple(x) => x.elts.iter().for_each(f),
        E::Slice(x) => {
            for b in [&x.lower, &x.upper, &x.step].into_iter().flatten() {
                f(b);
            }
        }
    }
}

/// Visits every expression of the statements (the fold recurses over statements only; each
/// expression it reaches is measured by [`expr_depth`] and handed back untouched).
struct Limit {
    max: usize,
    too_deep: Option<TextRange>,
}

impl Fold<TextRange> for Limit {
    type TargetU = TextRange;
    type Error = Infallible;
    type UserContext = ();

    fn will_map_user(&mut self, _user: &TextRange) -> Self::UserContext {}
    fn map_user(&mut self, user: TextRange, _: ()) -> Result<TextRange, Infallible> {
        Ok(user)
    }
    fn fold_expr(&mut self, node: ast::Expr) -> Result<ast::Expr, Infallible> {
        if self.too_deep.is_none() {
            self.too_deep = expr_depth(&node, self.max).1;
        }
        Ok(node)
    }
    fn fold_stmt(&mut self, node: ast::Stmt) -> Result<ast::Stmt, Infallible> {
        fold_stmt(self, node)
    }
}

/// The first expression of `suite` nested deeper than `max`, if any. On `Err` the suite has
/// been leaked rather than dropped: dropping a tree recurses as deep as it goes.
pub fn check_suite(suite: ast::Suite, max: usize) -> Result<ast::Suite, TextRange> {
    let mut limit = Limit {
        max,
        too_deep: None,
    };
    let Ok(suite): Result<ast::Suite, Infallible> =
        suite.into_iter().map(|s| limit.fold_stmt(s)).collect();
    match limit.too_deep {
        None => Ok(suite),
        Some(at) => {
            std::mem::forget(suite);
            Err(at)
        }
    }
}

/// [`check_suite`] for one expression.
pub fn check_expr(expr: ast::Expr, max: usize) -> Result<ast::Expr, TextRange> {
    match expr_depth(&expr, max).1 {
        None => Ok(expr),
        Some(at) => {
            std::mem::forget(expr);
            Err(at)
        }
    }
}

/// The error for an expression deeper than [`MAX_DEPTH`], at the first node past the limit.
pub fn too_deep(at: TextRange) -> crate::diag::Diagnostic {
    crate::diag::Diagnostic::error(
        at.into(),
        format!("expression nested deeper than {MAX_DEPTH} levels"),
    )
    .with_label("the limit is reached here")
    .with_help("split the expression into several statements through temporaries")
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustpython_parser::Parse;

    #[test]
    fn depth_is_measured_without_recursion_and_stops_at_the_limit() {
        let deep = format!("x = {}1{}\n", "(1 + ".repeat(300), ")".repeat(300));
        let suite = ast::Suite::parse(&deep, "<t>").unwrap();
        let at = check_suite(suite, 100).unwrap_err();
        // Each `(1 + ...)` is one level: the 101st starts after its parenthesis.
        assert_eq!(
            usize::from(at.start()),
            "x = ".len() + 100 * "(1 + ".len() + 1
        );
        let suite = ast::Suite::parse(&deep, "<t>").unwrap();
        assert!(check_suite(suite, 1000).is_ok());
        let e =
            ast::Expr::parse("f(a[i] + -b, [c for c in d if c], k=lambda x=1: x)", "<t>").unwrap();
        // f(...) → keyword value lambda → default 1 is depth 4; a[i] + -b → -b → b is 4 too.
        assert_eq!(expr_depth(&e, 100), (4, None));
    }
}
