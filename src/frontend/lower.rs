//! rustpython AST → IR. Everything Python can say is accepted here; constructs the kernel
//! language lacks become `Unsupported`/`Other` nodes, which are errors only if they end up
//! inside a parallel region (host code keeps its source text and never goes through the IR).

use super::source::Span;
use crate::ir::*;
use num_traits::ToPrimitive;
use rustpython_ast as ast;
use rustpython_ast::Constant;

pub fn lower_function(f: &ast::StmtFunctionDef) -> Function {
    let a = &f.args;
    let params: Vec<String> = a
        .posonlyargs
        .iter()
        .chain(a.args.iter())
        .chain(a.kwonlyargs.iter())
        .map(|p| p.def.arg.to_string())
        .collect();
    let mut body = lower_block(&f.body);
    name_swap_temporaries(&mut body, &params);
    Function {
        name: f.name.to_string(),
        params,
        body,
        span: f.range.into(),
    }
}

fn lower_block(body: &[ast::Stmt]) -> Vec<Stmt> {
    body.iter().flat_map(lower_stmt).collect()
}

/// The name tuple assignments give their temporaries until `name_swap_temporaries` picks free
/// names (it is not a Python identifier, so it never meets a user's name).
const SWAP_PLACEHOLDER: &str = "$swap";

/// `a, b = x, y`: Python evaluates every value, then assigns the targets left to right. That is
/// plain assignments in order unless a value reads a name an earlier target assigns (`a, b = b,
/// a`); then every value goes into a temporary first.
fn lower_tuple_assign(targets: &[ast::Expr], values: &[ast::Expr], span: Span) -> Vec<Stmt> {
    let targets: Vec<Expr> = targets.iter().map(lower_expr).collect();
    let values: Vec<Expr> = values.iter().map(lower_expr).collect();
    let root = |e: &Expr| match &e.kind {
        ExprKind::Name(n) | ExprKind::Subscript { array: n, .. } => Some(n.clone()),
        _ => None,
    };
    let reads_earlier_target = values.iter().enumerate().any(|(j, v)| {
        targets[..j]
            .iter()
            .filter_map(root)
            .any(|name| v.mentions(&name))
    });
    let assign = |target: Expr, value: Expr| Stmt::assign(target, value, span);
    if !reads_earlier_target {
        return targets
            .into_iter()
            .zip(values)
            .map(|(t, v)| assign(t, v))
            .collect();
    }
    let temp = |k: usize, at: Span| Expr::new(ExprKind::Name(format!("{SWAP_PLACEHOLDER}{k}")), at);
    let mut out: Vec<Stmt> = values
        .into_iter()
        .enumerate()
        .map(|(k, v)| assign(temp(k, v.span), v))
        .collect();
    out.extend(
        targets
            .into_iter()
            .enumerate()
            .map(|(k, t)| assign(t, temp(k, span))),
    );
    out
}

/// Gives the temporaries of tuple assignments names no other name of the function uses.
fn name_swap_temporaries(body: &mut [Stmt], params: &[String]) {
    let mut used: std::collections::HashSet<String> = params.iter().cloned().collect();
    let mut placeholders = std::collections::BTreeSet::new();
    for s in body.iter() {
        s.walk(&mut |st| {
            for e in st.exprs() {
                e.walk(&mut |x| match &x.kind {
                    ExprKind::Name(n) if n.starts_with(SWAP_PLACEHOLDER) => {
                        placeholders.insert(n.clone());
                    }
                    ExprKind::Name(n)
                    | ExprKind::Subscript { array: n, .. }
                    | ExprKind::Shape { array: n, .. } => {
                        used.insert(n.clone());
                    }
                    _ => {}
                });
            }
            if let StmtKind::For { var, .. } = &st.kind {
                used.insert(var.clone());
            }
        });
    }
    if placeholders.is_empty() {
        return;
    }
    let names: std::collections::HashMap<String, String> = placeholders
        .into_iter()
        .map(|p| (p, fresh_name("swap", &mut used)))
        .collect();
    rename_in_block(body, &names);
}

fn rename_in_block(body: &mut [Stmt], names: &std::collections::HashMap<String, String>) {
    let rename = |e: &mut Expr| {
        *e = e.clone().rewrite(&mut |mut x| {
            if let ExprKind::Name(n) = &mut x.kind {
                if let Some(new) = names.get(n.as_str()) {
                    *n = new.clone();
                }
            }
            x
        })
    };
    for s in body.iter_mut() {
        match &mut s.kind {
            StmtKind::Assign { target, value, .. } | StmtKind::AugAssign { target, value, .. } => {
                rename(target);
                rename(value);
            }
            StmtKind::For { body, .. }
            | StmtKind::HostBlock { body, .. }
            | StmtKind::While { body, .. } => rename_in_block(body, names),
            StmtKind::If { body, orelse, .. } => {
                rename_in_block(body, names);
                rename_in_block(orelse, names);
            }
            _ => {}
        }
    }
}

fn lower_stmt(s: &ast::Stmt) -> Vec<Stmt> {
    let span: Span = match s {
        ast::Stmt::For(f) => f.range.into(),
        other => ast::Ranged::range(other).into(),
    };
    let kind = match s {
        ast::Stmt::Assign(a) if a.targets.len() == 1 => match (&a.targets[0], a.value.as_ref()) {
            (ast::Expr::Tuple(t), ast::Expr::Tuple(v)) if t.elts.len() == v.elts.len() => {
                let starred = |e: &ast::Expr| matches!(e, ast::Expr::Starred(_));
                if t.elts.iter().chain(v.elts.iter()).any(starred) {
                    StmtKind::Other("starred tuple assignment")
                } else {
                    return lower_tuple_assign(&t.elts, &v.elts, span);
                }
            }
            (ast::Expr::Tuple(t), ast::Expr::Attribute(a))
                if a.attr.as_str() == "shape"
                    && matches!(a.value.as_ref(), ast::Expr::Name(_))
                    && t.elts.iter().all(|e| matches!(e, ast::Expr::Name(_))) =>
            {
                return lower_shape_unpack(&t.elts, a, span);
            }
            (ast::Expr::Tuple(_), _) => {
                StmtKind::Other("tuple assignment from a value that is not a tuple")
            }
            _ => StmtKind::Assign {
                target: lower_expr(&a.targets[0]),
                value: lower_expr(&a.value),
                atomic: false,
            },
        },
        ast::Stmt::Assign(_) => StmtKind::Other("chained assignment"),
        ast::Stmt::AnnAssign(a) => match &a.value {
            Some(v) => StmtKind::Assign {
                target: lower_expr(&a.target),
                value: lower_expr(v),
                atomic: false,
            },
            None => StmtKind::Pass,
        },
        ast::Stmt::AugAssign(a) => match binop(a.op) {
            Some(op) => StmtKind::AugAssign {
                target: lower_expr(&a.target),
                op,
                value: lower_expr(&a.value),
            },
            None => StmtKind::Other("`@=` update"),
        },
        ast::Stmt::For(f) => lower_for(f),
        ast::Stmt::While(w) if w.orelse.is_empty() => StmtKind::While {
            test: lower_expr(&w.test),
            body: lower_block(&w.body),
        },
        ast::Stmt::While(w) => StmtKind::HostBlock {
            what: "while-else loop",
            body: lower_block(&w.body),
        },
        ast::Stmt::With(w) => StmtKind::HostBlock {
            what: "with statement",
            body: lower_block(&w.body),
        },
        ast::Stmt::If(i) => StmtKind::If {
            test: lower_expr(&i.test),
            body: lower_block(&i.body),
            orelse: lower_block(&i.orelse),
        },
        ast::Stmt::Expr(e) => StmtKind::Expr(lower_expr(&e.value)),
        ast::Stmt::Pass(_) => StmtKind::Pass,
        ast::Stmt::Return(_) => StmtKind::Other("return statement"),
        ast::Stmt::Break(_) => StmtKind::Other("break statement"),
        ast::Stmt::Continue(_) => StmtKind::Other("continue statement"),
        ast::Stmt::FunctionDef(_) => StmtKind::Other("nested function"),
        ast::Stmt::Try(_) => StmtKind::Other("try statement"),
        ast::Stmt::Raise(_) => StmtKind::Other("raise statement"),
        ast::Stmt::Import(_) | ast::Stmt::ImportFrom(_) => StmtKind::Other("import"),
        ast::Stmt::Delete(_) => StmtKind::Other("del statement"),
        ast::Stmt::Assert(_) => StmtKind::Other("assert statement"),
        _ => StmtKind::Other("statement"),
    };
    vec![Stmt::new(kind, span)]
}

fn lower_for(f: &ast::StmtFor) -> StmtKind {
    let body = lower_block(&f.body);
    let ast::Expr::Name(target) = f.target.as_ref() else {
        return StmtKind::HostBlock {
            what: "loop over several targets",
            body,
        };
    };
    if !f.orelse.is_empty() {
        return StmtKind::HostBlock {
            what: "for-else loop",
            body,
        };
    }
    let range = match f.iter.as_ref() {
        ast::Expr::Call(c)
            if matches!(c.func.as_ref(), ast::Expr::Name(n) if n.id.as_str() == "range")
                && c.keywords.is_empty()
                && (1..=3).contains(&c.args.len()) =>
        {
            let args: Vec<Expr> = c.args.iter().map(lower_expr).collect();
            let span: Span = c.range.into();
            match args.len() {
                1 => Range {
                    start: Expr::int(0, span),
                    stop: args[0].clone(),
                    step: Expr::int(1, span),
                },
                2 => Range {
                    start: args[0].clone(),
                    stop: args[1].clone(),
                    step: Expr::int(1, span),
                },
                _ => Range {
                    start: args[0].clone(),
                    stop: args[1].clone(),
                    step: args[2].clone(),
                },
            }
        }
        _ => {
            return StmtKind::HostBlock {
                what: "loop over something other than `range(...)`",
                body,
            }
        }
    };
    StmtKind::For {
        var: target.id.to_string(),
        range,
        body,
        kind: LoopKind::Plain,
        vector: None,
        num_warps: None,
    }
}

fn binop(op: ast::Operator) -> Option<BinOp> {
    Some(match op {
        ast::Operator::Add => BinOp::Add,
        ast::Operator::Sub => BinOp::Sub,
        ast::Operator::Mult => BinOp::Mul,
        ast::Operator::Div => BinOp::Div,
        ast::Operator::FloorDiv => BinOp::FloorDiv,
        ast::Operator::Mod => BinOp::Mod,
        ast::Operator::Pow => BinOp::Pow,
        ast::Operator::BitAnd => BinOp::BitAnd,
        ast::Operator::BitOr => BinOp::BitOr,
        ast::Operator::BitXor => BinOp::BitXor,
        ast::Operator::LShift => BinOp::LShift,
        ast::Operator::RShift => BinOp::RShift,
        ast::Operator::MatMult => return None,
    })
}

fn cmpop(op: ast::CmpOp) -> Option<CmpOp> {
    Some(match op {
        ast::CmpOp::Lt => CmpOp::Lt,
        ast::CmpOp::LtE => CmpOp::Le,
        ast::CmpOp::Gt => CmpOp::Gt,
        ast::CmpOp::GtE => CmpOp::Ge,
        ast::CmpOp::Eq => CmpOp::Eq,
        ast::CmpOp::NotEq => CmpOp::Ne,
        _ => return None,
    })
}

/// `np.exp` → "np.exp"; `max` → "max"; anything else → None.
pub fn dotted_name(e: &ast::Expr) -> Option<String> {
    match e {
        ast::Expr::Name(n) => Some(n.id.to_string()),
        ast::Expr::Attribute(a) => Some(format!("{}.{}", dotted_name(&a.value)?, a.attr)),
        _ => None,
    }
}

pub fn lower_expr(e: &ast::Expr) -> Expr {
    let span: Span = ast::Ranged::range(e).into();
    let kind = match e {
        ast::Expr::Name(n) => ExprKind::Name(n.id.to_string()),
        ast::Expr::Constant(c) => return lower_constant(&c.value, span),
        ast::Expr::Subscript(s) => return lower_subscript(s, span),
        ast::Expr::Attribute(_) => return lower_attribute(e, span),
        ast::Expr::BinOp(b) => match binop(b.op) {
            Some(op) => ExprKind::Binary {
                op,
                left: Box::new(lower_expr(&b.left)),
                right: Box::new(lower_expr(&b.right)),
            },
            None => ExprKind::Call {
                func: "np.matmul".into(),
                args: vec![lower_expr(&b.left), lower_expr(&b.right)],
            },
        },
        ast::Expr::UnaryOp(u) => return lower_unary(u, span),
        ast::Expr::Compare(c) => return lower_compare(c, span),
        ast::Expr::BoolOp(b) => ExprKind::BoolOp {
            op: match b.op {
                ast::BoolOp::And => BoolOp::And,
                ast::BoolOp::Or => BoolOp::Or,
            },
            values: b.values.iter().map(lower_expr).collect(),
        },
        ast::Expr::IfExp(i) => ExprKind::IfExp {
            test: Box::new(lower_expr(&i.test)),
            body: Box::new(lower_expr(&i.body)),
            orelse: Box::new(lower_expr(&i.orelse)),
        },
        ast::Expr::Call(c) => return lower_call(c, span),
        ast::Expr::Tuple(_) => return unsupported("tuple", span),
        ast::Expr::List(_) => return unsupported("list", span),
        ast::Expr::Slice(_) => return unsupported("slice outside a subscript", span),
        _ => return unsupported("expression of this kind", span),
    };
    Expr::new(kind, span)
}

/// What a kernel cannot hold; an error only if it ends up inside a region.
fn unsupported(what: &str, span: Span) -> Expr {
    Expr::new(ExprKind::Unsupported(what.to_string()), span)
}

fn lower_constant(c: &Constant, span: Span) -> Expr {
    let kind = match c {
        Constant::Int(i) => match i.to_i64() {
            Some(v) => ExprKind::Int(v),
            None => return unsupported("integer literal beyond 64 bits", span),
        },
        Constant::Float(f) => ExprKind::Float(*f),
        Constant::Bool(b) => ExprKind::Bool(*b),
        Constant::None => return unsupported("`None`", span),
        Constant::Str(_) => return unsupported("string", span),
        _ => return unsupported("constant of this type", span),
    };
    Expr::new(kind, span)
}

/// The constants `np.pi`, `math.inf`, ... and `appy.MVL`; no other attribute.
fn lower_attribute(e: &ast::Expr, span: Span) -> Expr {
    let kind = match dotted_name(e).as_deref() {
        Some("np.pi" | "numpy.pi" | "math.pi") => ExprKind::Float(std::f64::consts::PI),
        Some("np.e" | "numpy.e" | "math.e") => ExprKind::Float(std::f64::consts::E),
        Some("np.inf" | "numpy.inf" | "math.inf") => ExprKind::FloatSpecial("inf"),
        Some("np.nan" | "numpy.nan" | "math.nan") => ExprKind::FloatSpecial("nan"),
        Some("appy.MVL") => ExprKind::Name("appy.MVL".into()),
        Some(other) => return unsupported(&format!("attribute `{other}`"), span),
        None => return unsupported("attribute", span),
    };
    Expr::new(kind, span)
}

/// `+x` is `x`; `-` of a literal is a literal.
fn lower_unary(u: &ast::ExprUnaryOp, span: Span) -> Expr {
    let operand = lower_expr(&u.operand);
    let kind = match u.op {
        ast::UnaryOp::UAdd => return Expr { span, ..operand },
        ast::UnaryOp::USub => match operand.kind {
            ExprKind::Int(v) => ExprKind::Int(-v),
            ExprKind::Float(v) => ExprKind::Float(-v),
            ExprKind::FloatSpecial("inf") => ExprKind::FloatSpecial("-inf"),
            _ => ExprKind::Unary {
                op: UnaryOp::Neg,
                operand: Box::new(operand),
            },
        },
        ast::UnaryOp::Not => ExprKind::Unary {
            op: UnaryOp::Not,
            operand: Box::new(operand),
        },
        ast::UnaryOp::Invert => ExprKind::Unary {
            op: UnaryOp::Invert,
            operand: Box::new(operand),
        },
    };
    Expr::new(kind, span)
}

/// `a < b < c` is `a < b and b < c`.
fn lower_compare(c: &ast::ExprCompare, span: Span) -> Expr {
    let mut parts = vec![];
    let mut left = lower_expr(&c.left);
    for (op, right) in c.ops.iter().zip(c.comparators.iter()) {
        let Some(op) = cmpop(*op) else {
            return unsupported("`is`/`in` comparison", span);
        };
        let right = lower_expr(right);
        parts.push(Expr::new(
            ExprKind::Compare {
                op,
                left: Box::new(left),
                right: Box::new(right.clone()),
            },
            span,
        ));
        left = right;
    }
    if parts.len() == 1 {
        return parts
            .pop()
            .unwrap_or_else(|| unsupported("comparison", span));
    }
    Expr::new(
        ExprKind::BoolOp {
            op: BoolOp::And,
            values: parts,
        },
        span,
    )
}

/// A call of a named function: reduction methods become their NumPy functions, keyword
/// arguments are a reduction's `axis=` only, `float('inf')` and friends are constants.
fn lower_call(c: &ast::ExprCall, span: Span) -> Expr {
    if let Some(method) = lower_reduction_method(c, span) {
        return method;
    }
    let Some(func) = dotted_name(&c.func) else {
        return match c.func.as_ref() {
            ast::Expr::Attribute(a) => unsupported(&format!("method `.{}()`", a.attr), span),
            _ => unsupported("call of a computed function", span),
        };
    };
    let mut args: Vec<Expr> = c.args.iter().map(lower_expr).collect();
    if !c.keywords.is_empty() {
        let reduces = matches!(
            func.as_str(),
            "np.sum"
                | "np.max"
                | "np.min"
                | "np.amax"
                | "np.amin"
                | "numpy.sum"
                | "numpy.max"
                | "numpy.min"
        );
        if !reduces {
            return unsupported(&format!("keyword arguments to `{func}` in a kernel"), span);
        }
        if let Err(what) = reduction_axis(&c.keywords, &mut args) {
            return unsupported(&what, span);
        }
        return Expr::new(ExprKind::Call { func, args }, span);
    }
    if func == "float" && c.args.len() == 1 {
        if let ast::Expr::Constant(ast::ExprConstant {
            value: Constant::Str(s),
            ..
        }) = &c.args[0]
        {
            let special = match s.trim().to_ascii_lowercase().as_str() {
                "inf" | "+inf" | "infinity" => "inf",
                "-inf" | "-infinity" => "-inf",
                "nan" => "nan",
                _ => return unsupported("float() of this string", span),
            };
            return Expr::new(ExprKind::FloatSpecial(special), span);
        }
    }
    Expr::new(ExprKind::Call { func, args }, span)
}

/// `x.sum()`, `A[i, :N].max(axis=0)`: methods of arrays that NumPy also has as functions, as
/// those functions (`np.sum(x)`); None for any other call.
fn lower_reduction_method(c: &ast::ExprCall, span: Span) -> Option<Expr> {
    let ast::Expr::Attribute(a) = c.func.as_ref() else {
        return None;
    };
    let receiver_is_module = matches!(
        dotted_name(&a.value).as_deref(),
        Some("np" | "numpy" | "math" | "appy")
    );
    if receiver_is_module || !matches!(a.attr.as_str(), "sum" | "max" | "min") {
        return None;
    }
    let mut args = vec![lower_expr(&a.value)];
    args.extend(c.args.iter().map(lower_expr));
    Some(match reduction_axis(&c.keywords, &mut args) {
        Ok(()) => Expr::new(
            ExprKind::Call {
                func: format!("np.{}", a.attr),
                args,
            },
            span,
        ),
        Err(what) => unsupported(&what, span),
    })
}

/// `M, N = A.shape`: `M = A.shape[0]`, `N = A.shape[1]`, so later passes know the names hold
/// extents (a bare `B[M - 1, :] = ...` in a time loop may then run on the device).
fn lower_shape_unpack(targets: &[ast::Expr], shape: &ast::ExprAttribute, span: Span) -> Vec<Stmt> {
    let ast::Expr::Name(array) = shape.value.as_ref() else {
        unreachable!("matched a name")
    };
    targets
        .iter()
        .enumerate()
        .map(|(dim, t)| {
            let extent = Expr::new(
                ExprKind::Shape {
                    array: array.id.to_string(),
                    dim,
                },
                span,
            );
            Stmt::assign(lower_expr(t), extent, span)
        })
        .collect()
}

fn lower_subscript(s: &ast::ExprSubscript, span: Span) -> Expr {
    // `A.shape[d]`
    if let ast::Expr::Attribute(a) = s.value.as_ref() {
        if a.attr.as_str() == "shape" {
            if let (ast::Expr::Name(arr), ExprKind::Int(d)) =
                (a.value.as_ref(), lower_expr(&s.slice).kind)
            {
                if d >= 0 {
                    return Expr::new(
                        ExprKind::Shape {
                            array: arr.id.to_string(),
                            dim: d as usize,
                        },
                        span,
                    );
                }
            }
            return unsupported("`.shape` indexed by anything but a constant", span);
        }
    }
    let ast::Expr::Name(arr) = s.value.as_ref() else {
        // `np.sum(A[:M, :N], axis=1)[:, None]`: only full slices and new axes on a result.
        let elements: Vec<&ast::Expr> = match s.slice.as_ref() {
            ast::Expr::Tuple(t) => t.elts.iter().collect(),
            other => vec![other],
        };
        let mut keep = vec![];
        for el in elements {
            match el {
                ast::Expr::Slice(sl)
                    if sl.lower.is_none() && sl.upper.is_none() && sl.step.is_none() =>
                {
                    keep.push(true)
                }
                ast::Expr::Constant(c) if matches!(c.value, Constant::None) => keep.push(false),
                _ => {
                    return unsupported(
                        "subscript of a computed value other than `[:, None]`",
                        span,
                    )
                }
            }
        }
        return Expr::new(
            ExprKind::Broadcast {
                value: Box::new(lower_expr(&s.value)),
                keep,
            },
            span,
        );
    };
    let elements: Vec<&ast::Expr> = match s.slice.as_ref() {
        ast::Expr::Tuple(t) => t.elts.iter().collect(),
        other => vec![other],
    };
    let mut indices = vec![];
    for el in elements {
        match el {
            ast::Expr::Slice(sl) => {
                if let Some(step) = &sl.step {
                    if !matches!(lower_expr(step).kind, ExprKind::Int(1)) {
                        return unsupported("slice with a step", span);
                    }
                }
                indices.push(Index::Slice {
                    lo: sl.lower.as_deref().map(lower_expr),
                    hi: sl.upper.as_deref().map(lower_expr),
                    span: sl.range.into(),
                });
            }
            ast::Expr::Constant(c) if matches!(c.value, Constant::None) => {
                indices.push(Index::NewAxis)
            }
            other => indices.push(Index::At(lower_expr(other))),
        }
    }
    Expr::new(
        ExprKind::Subscript {
            array: arr.id.to_string(),
            indices,
        },
        span,
    )
}

/// Moves an `axis=` keyword of a reduction into its second positional argument.
fn reduction_axis(keywords: &[ast::Keyword], args: &mut Vec<Expr>) -> Result<(), String> {
    for k in keywords {
        match k.arg.as_ref().map(|a| a.as_str()) {
            Some("axis") if args.len() == 1 => args.push(lower_expr(&k.value)),
            Some(other) => return Err(format!("keyword `{other}` of a reduction")),
            None => return Err("`**` arguments".into()),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustpython_parser::Parse;

    fn body(src: &str) -> Vec<Stmt> {
        let module = ast::Suite::parse(src, "t.py").expect("valid Python");
        let ast::Stmt::FunctionDef(f) = &module[0] else {
            panic!("no function")
        };
        lower_function(f).body
    }

    fn assignments(stmts: &[Stmt]) -> Vec<String> {
        stmts
            .iter()
            .map(|s| match &s.kind {
                StmtKind::Assign { target, value, .. } => format!(
                    "{} = {}",
                    crate::ir::python::expr(target),
                    crate::ir::python::expr(value)
                ),
                other => format!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn independent_tuple_assignment_is_assignments_in_order() {
        let b = body("def f(p, i):\n    lo, hi = p[i], p[i + 1]\n");
        assert_eq!(assignments(&b), ["lo = p[i]", "hi = p[i + 1]"]);
    }

    #[test]
    fn a_swap_reads_every_value_before_assigning() {
        let b = body("def f(a, b, _swap):\n    a, b = b, a\n");
        assert_eq!(
            assignments(&b),
            ["_swap1 = b", "_swap2 = a", "a = _swap1", "b = _swap2"]
        );
    }

    #[test]
    fn tuple_assignment_from_a_call_is_not_a_kernel_statement() {
        let b = body("def f(A):\n    m, n = A.size()\n");
        assert!(matches!(b[0].kind, StmtKind::Other(_)), "{:?}", b[0].kind);
    }

    #[test]
    fn unpacking_a_shape_assigns_each_extent() {
        let b = body("def f(A):\n    m, n = A.shape\n");
        assert_eq!(assignments(&b), ["m = A.shape[0]", "n = A.shape[1]"]);
    }
}
