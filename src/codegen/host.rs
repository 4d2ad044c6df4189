//! Host code: the source text with edits. Untouched lines stay byte-identical; regions become
//! launcher calls and NumPy allocation calls in compiled functions become torch calls on the
//! arrays' device (`imports` drops the imports and decorators the output does without).

use crate::diag::{Diagnostic, Result};
use crate::frontend::lower::dotted_name;
use crate::frontend::source::Span;
use rustpython_ast as ast;
use rustpython_ast::Ranged;

/// Replace `range` of the source with `text`.
#[derive(Debug, Clone)]
pub struct Edit {
    pub range: std::ops::Range<usize>,
    pub text: String,
}

/// Applies non-overlapping edits; insertions at one offset keep their order.
pub fn apply(source: &str, mut edits: Vec<Edit>) -> String {
    edits.sort_by_key(|e| (e.range.start, e.range.end));
    let mut out = String::with_capacity(source.len() * 2);
    let mut pos = 0;
    for e in edits {
        if e.range.start < pos {
            continue; // inside an edit already applied (e.g. a rewrite inside a dropped region)
        }
        out.push_str(&source[pos..e.range.start]);
        out.push_str(&e.text);
        pos = e.range.end;
    }
    out.push_str(&source[pos..]);
    out
}

fn torch_dtype(numpy_name: &str) -> Option<&'static str> {
    Some(match numpy_name {
        "float64" | "double" | "float_" => "torch.float64",
        "float32" | "single" => "torch.float32",
        "float16" | "half" => "torch.float16",
        "int64" | "int_" | "intp" => "torch.int64",
        "int32" | "intc" => "torch.int32",
        "int16" => "torch.int16",
        "int8" => "torch.int8",
        "uint8" => "torch.uint8",
        "bool_" | "bool" => "torch.bool",
        "complex64" => "torch.complex64",
        "complex128" => "torch.complex128",
        _ => return None,
    })
}

/// The torch function for a NumPy function that host code of a compiled function may call.
fn torch_equivalent(numpy_name: &str) -> Option<&'static str> {
    Some(match numpy_name {
        "exp" => "torch.exp",
        "exp2" => "torch.exp2",
        "expm1" => "torch.expm1",
        "log" => "torch.log",
        "log2" => "torch.log2",
        "log10" => "torch.log10",
        "log1p" => "torch.log1p",
        "sqrt" => "torch.sqrt",
        "abs" | "absolute" => "torch.abs",
        "sin" => "torch.sin",
        "cos" => "torch.cos",
        "tan" => "torch.tan",
        "tanh" => "torch.tanh",
        "sinh" => "torch.sinh",
        "cosh" => "torch.cosh",
        "floor" => "torch.floor",
        "ceil" => "torch.ceil",
        "where" => "torch.where",
        // NumPy takes scalars where torch.maximum wants tensors.
        "maximum" => "_appyc_maximum",
        "minimum" => "_appyc_minimum",
        "sum" => "torch.sum",
        "mean" => "torch.mean",
        "prod" => "torch.prod",
        "max" | "amax" => "torch.amax",
        "min" | "amin" => "torch.amin",
        "dot" | "matmul" => "torch.matmul",
        "outer" => "torch.outer",
        _ => return None,
    })
}

/// Rewrites NumPy uses in the host statements of a compiled function.
pub struct HostRewriter<'a> {
    pub source: &'a str,
    /// Spans to leave alone (the regions, which become kernels).
    pub skip: Vec<Span>,
    /// Expression giving the device for new arrays.
    pub device: String,
    /// Arrays on the symmetric heap (nvshmem puts and flags): their allocations in the
    /// function are wrapped in `_appyc_nvshmem_symmetric(...)`.
    pub symmetric: Vec<String>,
    /// The flag arrays among them: an allocation must give them 64-bit integers.
    pub flags: Vec<String>,
    pub edits: Vec<Edit>,
}

impl HostRewriter<'_> {
    pub fn stmts(&mut self, body: &[ast::Stmt]) -> Result<()> {
        for s in body {
            self.stmt(s)?;
        }
        Ok(())
    }

    fn skipped(&self, r: ast::text_size::TextRange) -> bool {
        let span: Span = r.into();
        self.skip
            .iter()
            .any(|k| k.start <= span.start && span.end <= k.end)
    }

    fn stmt(&mut self, s: &ast::Stmt) -> Result<()> {
        if self.skipped(s.range()) {
            return Ok(());
        }
        match s {
            ast::Stmt::Assign(a) => {
                for t in &a.targets {
                    self.expr(t)?;
                }
                if let [ast::Expr::Name(n)] = a.targets.as_slice() {
                    if self.symmetric.iter().any(|s| s == n.id.as_str())
                        && matches!(a.value.as_ref(), ast::Expr::Call(_))
                    {
                        if let ast::Expr::Call(c) = a.value.as_ref() {
                            if self.flags.iter().any(|f| f == n.id.as_str()) {
                                flag_dtype(self.source, n.id.as_str(), c)?;
                            }
                        }
                        let r = Span::from(a.value.range()).range();
                        self.edits.push(Edit {
                            range: r.start..r.start,
                            text: "_appyc_nvshmem_symmetric(".into(),
                        });
                        self.expr(&a.value)?;
                        self.edits.push(Edit {
                            range: r.end..r.end,
                            text: ")".into(),
                        });
                        return Ok(());
                    }
                }
                self.expr(&a.value)
            }
            ast::Stmt::AugAssign(a) => {
                self.expr(&a.target)?;
                self.expr(&a.value)
            }
            ast::Stmt::AnnAssign(a) => {
                self.expr(&a.target)?;
                a.value.as_deref().map_or(Ok(()), |v| self.expr(v))
            }
            ast::Stmt::Expr(e) => self.expr(&e.value),
            ast::Stmt::Return(r) => r.value.as_deref().map_or(Ok(()), |v| self.expr(v)),
            ast::Stmt::If(i) => {
                self.expr(&i.test)?;
                self.stmts(&i.body)?;
                self.stmts(&i.orelse)
            }
            ast::Stmt::For(f) => {
                self.expr(&f.iter)?;
                self.stmts(&f.body)?;
                self.stmts(&f.orelse)
            }
            ast::Stmt::While(w) => {
                self.expr(&w.test)?;
                self.stmts(&w.body)?;
                self.stmts(&w.orelse)
            }
            ast::Stmt::With(w) => {
                for item in &w.items {
                    self.expr(&item.context_expr)?;
                }
                self.stmts(&w.body)
            }
            ast::Stmt::Assert(a) => self.expr(&a.test),
            _ => Ok(()),
        }
    }

    fn expr(&mut self, e: &ast::Expr) -> Result<()> {
        match e {
            ast::Expr::Call(c) => self.call(c),
            ast::Expr::Attribute(a) => {
                if let Some(name) = dotted_name(e) {
                    if let Some(attr) = name
                        .strip_prefix("np.")
                        .or_else(|| name.strip_prefix("numpy."))
                    {
                        let text = match attr {
                            "pi" => "math.pi".to_string(),
                            "e" => "math.e".to_string(),
                            "inf" => "math.inf".to_string(),
                            "nan" => "math.nan".to_string(),
                            other => match torch_dtype(other) {
                                Some(t) => t.to_string(),
                                None => {
                                    return Err(Diagnostic::error(
                                        a.range.into(),
                                        format!("`{name}` in host code of a compiled function has no torch equivalent here"),
                                    )
                                    .with_help("host code runs on torch tensors; compute it in a function without pragmas"))
                                }
                            },
                        };
                        self.edits.push(Edit {
                            range: Span::from(a.range).range(),
                            text,
                        });
                        return Ok(());
                    }
                }
                self.expr(&a.value)
            }
            ast::Expr::BinOp(b) => {
                self.expr(&b.left)?;
                self.expr(&b.right)
            }
            ast::Expr::UnaryOp(u) => self.expr(&u.operand),
            ast::Expr::BoolOp(b) => b.values.iter().try_for_each(|v| self.expr(v)),
            ast::Expr::Compare(c) => {
                self.expr(&c.left)?;
                c.comparators.iter().try_for_each(|v| self.expr(v))
            }
            ast::Expr::IfExp(i) => {
                self.expr(&i.test)?;
                self.expr(&i.body)?;
                self.expr(&i.orelse)
            }
            ast::Expr::Subscript(s) => {
                self.expr(&s.value)?;
                self.expr(&s.slice)
            }
            ast::Expr::Slice(s) => {
                for part in [&s.lower, &s.upper, &s.step].into_iter().flatten() {
                    self.expr(part)?;
                }
                Ok(())
            }
            ast::Expr::Tuple(t) => t.elts.iter().try_for_each(|v| self.expr(v)),
            ast::Expr::List(t) => t.elts.iter().try_for_each(|v| self.expr(v)),
            ast::Expr::Starred(s) => self.expr(&s.value),
            _ => Ok(()),
        }
    }

    fn call(&mut self, c: &ast::ExprCall) -> Result<()> {
        let func = dotted_name(&c.func);
        // nvshmem host calls: the generated module's runtime (torch.distributed on the GPU).
        if let Some(name @ ("nvshmem.my_pe" | "nvshmem.n_pes")) = func.as_deref() {
            let f = name.trim_start_matches("nvshmem.");
            self.edits.push(Edit {
                range: Span::from(c.func.range()).range(),
                text: format!("_appyc_nvshmem_{f}"),
            });
            return Ok(());
        }
        let np_name = func.as_deref().and_then(|f| {
            f.strip_prefix("np.")
                .or_else(|| f.strip_prefix("numpy."))
                .map(str::to_string)
        });
        // `.copy()` of an array is `.clone()` in torch.
        if let ast::Expr::Attribute(a) = c.func.as_ref() {
            if a.attr.as_str() == "copy"
                && c.args.is_empty()
                && c.keywords.is_empty()
                && np_name.is_none()
            {
                self.expr(&a.value)?;
                let end: usize = a.range.end().into();
                self.edits.push(Edit {
                    range: end - "copy".len()..end,
                    text: "clone".into(),
                });
                return Ok(());
            }
        }
        for a in &c.args {
            self.expr(a)?;
        }
        for k in &c.keywords {
            self.expr(&k.value)?;
        }
        let Some(name) = np_name else {
            return self.expr(&c.func);
        };
        let func_span: Span = c.func.range().into();
        let takes_shape = matches!(name.as_str(), "empty" | "zeros" | "ones" | "full");
        let like = matches!(
            name.as_str(),
            "empty_like" | "zeros_like" | "ones_like" | "full_like"
        );
        if let Some(torch_name) = torch_equivalent(&name) {
            // Host tensor code: the same operation in torch (`axis=` is `dim=` there).
            for k in &c.keywords {
                match k.arg.as_ref().map(|a| a.as_str()) {
                    Some("axis") => {
                        let at = Span::from(k.range).start as usize;
                        self.edits.push(Edit {
                            range: at..at + "axis".len(),
                            text: "dim".into(),
                        });
                    }
                    Some("keepdims") => {
                        let at = Span::from(k.range).start as usize;
                        self.edits.push(Edit {
                            range: at..at + "keepdims".len(),
                            text: "keepdim".into(),
                        });
                    }
                    other => {
                        return Err(Diagnostic::error(
                            k.range.into(),
                            format!(
                                "`np.{name}` keyword `{}` is not supported in host code of a compiled function",
                                other.unwrap_or("**")
                            ),
                        ))
                    }
                }
            }
            self.edits.push(Edit {
                range: func_span.range(),
                text: torch_name.to_string(),
            });
            return Ok(());
        }
        self.numpy_allocation(c, &name, takes_shape, like)
    }

    /// `np.empty/zeros/ones/full(_like)` and `np.arange` in host code: the torch call with
    /// the dtype by keyword (float64 where NumPy's default is) and the function's device.
    fn numpy_allocation(
        &mut self,
        c: &ast::ExprCall,
        name: &str,
        takes_shape: bool,
        like: bool,
    ) -> Result<()> {
        let func_span: Span = c.func.range().into();
        let call_span: Span = c.range.into();
        if !(takes_shape || like || name == "arange") {
            return Err(Diagnostic::error(
                func_span,
                format!("`np.{name}` in host code of a compiled function cannot run on GPU tensors"),
            )
            .with_label("host code of a compiled function runs on torch tensors")
            .with_help("allocate with np.empty/zeros/ones/full(_like), or move this computation to a function without pragmas"));
        }
        for k in &c.keywords {
            let key = k.arg.as_ref().map(|a| a.as_str()).unwrap_or("**");
            if key != "dtype" {
                return Err(Diagnostic::error(
                    k.range.into(),
                    format!("`np.{name}` keyword `{key}` is not supported in host code of a compiled function"),
                ));
            }
        }
        // NumPy takes the dtype positionally too (`np.zeros(n, np.int64)`); torch only by
        // keyword, so it is named here.
        let dtype_at = match name {
            "full" | "full_like" => 2,
            "arange" => 3,
            _ => 1,
        };
        if let Some(arg) = c.args.get(dtype_at) {
            if let Some(extra) = c.args.get(dtype_at + 1) {
                return Err(Diagnostic::error(
                    Span::from(extra.range()),
                    format!("`np.{name}` takes no argument after its dtype in host code of a compiled function"),
                ));
            }
            let at = Span::from(arg.range()).start as usize;
            self.edits.push(Edit {
                range: at..at,
                text: "dtype=".into(),
            });
        }
        self.edits.push(Edit {
            range: func_span.range(),
            text: format!("torch.{name}"),
        });
        if name == "full" {
            // torch.full wants a tuple where NumPy also takes an int.
            if let Some(shape) = c.args.first() {
                let r = Span::from(shape.range()).range();
                self.edits.push(Edit {
                    range: r.start..r.start,
                    text: "_appyc_shape(".into(),
                });
                self.edits.push(Edit {
                    range: r.end..r.end,
                    text: ")".into(),
                });
            }
        }
        let mut extra = vec![];
        let has_dtype = c.keywords.iter().any(|k| k.arg.is_some()) || c.args.len() > dtype_at;
        if takes_shape && !has_dtype {
            if name == "full" && c.args.len() >= 2 {
                let fill = &self.source[Span::from(c.args[1].range()).range()];
                extra.push(format!("dtype=_appyc_fill_dtype({fill})"));
            } else if name != "full" {
                extra.push("dtype=torch.float64".to_string());
            }
        }
        if takes_shape || name == "arange" {
            extra.push(format!("device={}", self.device));
        }
        if !extra.is_empty() {
            let close = call_span.end as usize - 1;
            let inner = self.source[..close].trim_end();
            let sep = if inner.ends_with('(') || inner.ends_with(',') {
                ""
            } else {
                ", "
            };
            self.edits.push(Edit {
                range: close..close,
                text: format!("{sep}{}", extra.join(", ")),
            });
        }
        Ok(())
    }
}

/// A flag array's allocation (`np.zeros/empty/ones/full`) must hold 64-bit integers: the
/// kernels signal and wait on 64-bit words, so int32 flags are read two at a time (misaligned
/// on the GPU; the CPU stand-in reads words too, so only this check tells) and float64 ones
/// compare bit patterns. Other allocations are the runtime's to judge.
fn flag_dtype(source: &str, name: &str, c: &ast::ExprCall) -> Result<()> {
    let Some(func) = dotted_name(&c.func) else {
        return Ok(());
    };
    let Some(np) = func
        .strip_prefix("np.")
        .or_else(|| func.strip_prefix("numpy."))
    else {
        return Ok(());
    };
    let dtype_at = match np {
        "zeros" | "empty" | "ones" => 1,
        "full" => 2,
        _ => return Ok(()),
    };
    let dtype = c
        .keywords
        .iter()
        .find(|k| k.arg.as_ref().is_some_and(|a| a.as_str() == "dtype"))
        .map(|k| &k.value)
        .or_else(|| c.args.get(dtype_at));
    let help = "allocate it as `np.zeros(k, dtype=np.int64)`";
    let Some(dtype) = dtype else {
        return Err(Diagnostic::error(
            c.range.into(),
            format!("the flag array `{name}` is allocated as float64: NVSHMEM signals are 64-bit integers"),
        )
        .with_help(help));
    };
    let span = Span::from(dtype.range());
    let text = source[span.range()]
        .trim()
        .trim_matches(|ch| ch == '"' || ch == '\'');
    // Python's `int` and `np.int_` are int64 in NumPy 2 on every platform.
    let ok = text == "int"
        || ["int64", "uint64", "int_"]
            .iter()
            .any(|t| text == *t || text == format!("np.{t}") || text == format!("numpy.{t}"));
    if ok {
        return Ok(());
    }
    Err(Diagnostic::error(
        span,
        format!(
            "the flag array `{name}` is allocated as `{text}`: NVSHMEM signals are 64-bit integers"
        ),
    )
    .with_help(help))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edits_apply_in_order() {
        let s = "abcdef";
        let out = apply(
            s,
            vec![
                Edit {
                    range: 4..5,
                    text: "E".into(),
                },
                Edit {
                    range: 1..3,
                    text: "XY".into(),
                },
                Edit {
                    range: 6..6,
                    text: "!".into(),
                },
            ],
        );
        assert_eq!(out, "aXYdEf!");
    }
}
