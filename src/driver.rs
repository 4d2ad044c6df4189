//! One source file through the whole pipeline: parse → pragmas → passes → kernels + host.

use crate::codegen::host::{self, Edit, HostRewriter};
use crate::codegen::templates::{Launcher, Prelude, PreludeUses, Trip};
use crate::codegen::{python, triton, writer::Writer};
use crate::diag::{Diagnostic, Result};
use crate::frontend::lower::{dotted_name, lower_function};
use crate::frontend::pragma::{collect_pragmas, Pragma};
use crate::frontend::source::{SourceFile, Span};
use crate::ir::*;
use crate::passes;
use askama::Template;
use rustpython_ast as ast;
use rustpython_ast::Ranged;
use rustpython_parser::Parse;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Emit {
    /// The generated Python module with Triton kernels.
    Python,
    /// The program after the high-level passes, as assembly APPy.
    Lowered,
}

#[derive(Debug, Clone)]
pub struct Options {
    pub emit: Emit,
    /// A fixed MVL instead of autotuning.
    pub mvl: Option<u32>,
    pub auto_simd: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            emit: Emit::Python,
            mvl: None,
            auto_simd: true,
        }
    }
}

/// The MVL used under Triton's interpreter when autotuning (which needs a GPU) is off.
pub const INTERPRETER_MVL: u32 = 128;

pub fn compile(file: &SourceFile, opts: &Options) -> Result<String> {
    let module = ast::Suite::parse(&file.text, &file.name).map_err(|e| {
        let at: usize = e.offset.into();
        let at = at.min(file.text.len());
        Diagnostic::error(
            Span::new(at, at),
            format!("invalid Python syntax: {}", e.error),
        )
    })?;
    let pragmas = collect_pragmas(file)?;

    let mut edits: Vec<Edit> = vec![];
    let mut compiled_spans: Vec<Span> = vec![];
    let mut used_pragmas = 0;
    for stmt in &module {
        let ast::Stmt::FunctionDef(f) = stmt else {
            continue;
        };
        let span: Span = f.range.into();
        let (first, last) = (
            file.line_of(span.start as usize),
            file.line_of(span.end as usize),
        );
        let own: Vec<Pragma> = pragmas
            .iter()
            .filter(|p| p.line > first && p.line <= last)
            .cloned()
            .collect();
        if own.is_empty() {
            continue;
        }
        used_pragmas += own.len();
        compiled_spans.push(span);
        edits.extend(compile_function(file, f, &own, opts)?);
    }
    if used_pragmas != pragmas.len() {
        let stray = pragmas
            .iter()
            .find(|p| {
                !compiled_spans.iter().any(|s| {
                    p.line > file.line_of(s.start as usize)
                        && p.line <= file.line_of(s.end as usize)
                })
            })
            .expect("some pragma is outside the compiled functions");
        return Err(
            Diagnostic::error(stray.span, "a pragma outside a top-level function").with_help(
                "appyc compiles top-level functions; module-level code runs as plain Python",
            ),
        );
    }
    if opts.emit == Emit::Lowered {
        // Lowered APPy is for reading, not running: it keeps the source's imports.
        edits.push(Edit {
            range: 0..0,
            text: format!(
                "# appyc {} --emit lowered: {} after the high-level passes (assembly APPy).\n",
                env!("CARGO_PKG_VERSION"),
                file.name
            ),
        });
        return Ok(host::apply(&file.text, edits));
    }
    edits.extend(import_edits(file, &module, &compiled_spans));
    // The prelude goes after a docstring and `__future__` imports, and carries only the
    // helpers the generated code calls, so it is rendered last, from the finished text.
    let insert_at = prelude_offset(file, &module);
    let shift: isize = edits
        .iter()
        .filter(|e| e.range.end <= insert_at)
        .map(|e| e.text.len() as isize - e.range.len() as isize)
        .sum();
    let body = host::apply(&file.text, edits);
    let at = (insert_at as isize + shift) as usize;
    let uses = PreludeUses::of(&body[at..]);
    let prelude = Prelude {
        version: env!("CARGO_PKG_VERSION"),
        source: &file.name,
        default_mvl: INTERPRETER_MVL,
        uses,
    }
    .render()
    .expect("prelude template renders");
    let sep = if at == 0 { "" } else { "\n" };
    Ok(format!("{}{sep}{prelude}\n\n{}", &body[..at], &body[at..]))
}

fn prelude_offset(file: &SourceFile, module: &[ast::Stmt]) -> usize {
    let mut insert_at = 0;
    for (i, s) in module.iter().enumerate() {
        let is_doc = i == 0
            && matches!(s, ast::Stmt::Expr(e) if matches!(e.value.as_ref(), ast::Expr::Constant(c) if c.value.is_str()));
        let is_future =
            matches!(s, ast::Stmt::ImportFrom(f) if f.module.as_deref() == Some("__future__"));
        if is_doc || is_future {
            insert_at = file.line_end(file.line_of(Span::from(s.range()).end as usize));
        } else {
            break;
        }
    }
    insert_at
}

/// The `numpy` / `appy` imports dropped when nothing outside the compiled functions uses them.
fn import_edits(file: &SourceFile, module: &[ast::Stmt], compiled: &[Span]) -> Vec<Edit> {
    let mut edits = vec![];
    // Is a module alias used outside the compiled functions (which no longer need it)?
    // One pass of the lexer collects every name token outside them and outside imports.
    let names_outside: Vec<String> =
        rustpython_parser::lexer::lex(&file.text, rustpython_parser::Mode::Module)
            .flatten()
            .filter_map(|(tok, range)| {
                let span: Span = range.into();
                let inside = |s: Span| s.start <= span.start && span.end <= s.end;
                match tok {
                    rustpython_parser::Tok::Name { name }
                        if !compiled.iter().any(|c| inside(*c))
                            && !module.iter().any(|s| {
                                matches!(s, ast::Stmt::Import(_)) && inside(s.range().into())
                            }) =>
                    {
                        Some(name)
                    }
                    _ => None,
                }
            })
            .collect();
    let used_outside = |alias: &str| names_outside.iter().any(|n| n == alias);
    for s in module {
        let ast::Stmt::Import(imp) = s else { continue };
        let drop = imp.names.iter().all(|alias| {
            let bound = alias
                .asname
                .as_ref()
                .map_or(alias.name.as_str(), |a| a.as_str());
            matches!(alias.name.as_str(), "numpy" | "appy") && !used_outside(bound)
        });
        if drop {
            let line = file.line_of(Span::from(s.range()).start as usize);
            edits.push(Edit {
                range: file.line_start(line)..file.line_end(line),
                text: String::new(),
            });
        }
    }
    edits
}

fn compile_function(
    file: &SourceFile,
    f: &ast::StmtFunctionDef,
    pragmas: &[Pragma],
    opts: &Options,
) -> Result<Vec<Edit>> {
    let mut func = lower_function(f);
    passes::normalize::run(&mut func);
    passes::attach_pragmas::run(&mut func, pragmas, file)?;
    let mut kernels = passes::outline::run(&func)?;
    let tensor_opts = passes::lower_tensor::Options {
        auto_simd: opts.auto_simd,
    };
    for k in kernels.iter_mut() {
        passes::promote_updates::run(k);
        passes::lower_tensor::split(k)?;
        passes::insert_sync::run(k);
        passes::lower_tensor::lower(k, &tensor_opts)?;
        if opts.auto_simd {
            // Vectorise the innermost parallel loop where strip-mining accepts the result;
            // otherwise keep one program per iteration.
            let mut vectorised = k.clone();
            passes::vectorize_parallel::run(&mut vectorised);
            if passes::strip_mine::run(&mut vectorised).is_ok() {
                *k = vectorised;
                continue;
            }
        }
        passes::strip_mine::run(k)?;
    }

    let mut edits = vec![];
    // Drop `@appy.jit`-style decorators: the output is plain Python.
    let mut def_start: usize = Span::from(f.range).start as usize;
    for d in &f.decorator_list {
        let ds: Span = d.range().into();
        let line = file.line_of(ds.start as usize);
        def_start = def_start.min(file.line_start(line));
        let name = match d {
            ast::Expr::Call(c) => dotted_name(&c.func),
            other => dotted_name(other),
        };
        if name.is_some_and(|n| n.starts_with("appy.") || n == "appy") {
            edits.push(Edit {
                range: file.line_start(line)..file.line_end(line),
                text: String::new(),
            });
        }
    }
    let def_line_start = file.line_start(file.line_of(def_start));

    // Arrays passed in as parameters decide where host code allocates.
    let array_params: Vec<String> = func
        .params
        .iter()
        .filter(|p| kernels.iter().any(|k| kernel_uses_array(k, p)))
        .cloned()
        .collect();
    let device = if array_params.is_empty() {
        "_appyc_device()".to_string()
    } else {
        format!("{}.device", array_params[0])
    };

    let mut generated = String::new();
    for k in &kernels {
        let line = file.line_of(k.span.start as usize);
        let loop_line = file.line_of(
            k.dims
                .first()
                .map_or(k.body[0].span.start, |d| d.span.start) as usize,
        );
        let end_line = file.line_of(k.span.end as usize);
        let indent: String = file
            .line_text(loop_line)
            .chars()
            .take_while(|c| c.is_whitespace())
            .collect();
        match opts.emit {
            Emit::Lowered => {
                let mut w = Writer::new(0);
                python::kernel(&mut w, k);
                let text: String = w
                    .finish()
                    .lines()
                    .map(|l| {
                        if l.is_empty() {
                            "\n".to_string()
                        } else {
                            format!("{indent}{l}\n")
                        }
                    })
                    .collect();
                edits.push(Edit {
                    range: file.line_start(line)..file.line_end(end_line),
                    text,
                });
            }
            Emit::Python => {
                let code = triton::kernel(k, file)?;
                let launcher_name = format!("_launch{}", k.name);
                generated.push_str(&decorator(&code, k, opts));
                generated.push_str(&code.text);
                generated.push_str("\n\n");
                generated.push_str(&launcher(&launcher_name, &code, k, file, opts, line)?);
                generated.push_str("\n\n\n");
                edits.push(Edit {
                    range: file.line_start(line)..file.line_end(end_line),
                    text: format!(
                        "{indent}{launcher_name}({})\n",
                        code.host_args
                            .iter()
                            .filter(|a| !k.temps.iter().any(|(t, _)| t == *a))
                            .cloned()
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                });
            }
        }
    }
    if !generated.is_empty() {
        edits.push(Edit {
            range: def_line_start..def_line_start,
            text: generated,
        });
    }
    let mut rewriter = HostRewriter {
        source: &file.text,
        skip: kernels.iter().map(|k| k.span).collect(),
        device,
        edits: vec![],
    };
    rewriter.stmts(&f.body)?;
    edits.extend(rewriter.edits);
    Ok(edits)
}

fn kernel_uses_array(k: &Kernel, name: &str) -> bool {
    let mut found = false;
    for s in &k.body {
        s.walk(&mut |st| {
            for e in st.exprs() {
                found |= e.any(&mut |x| {
                    matches!(&x.kind, ExprKind::Subscript { array, .. } | ExprKind::Shape { array, .. } if array == name)
                });
            }
        });
    }
    found
}

fn quoted(names: &[String]) -> String {
    let q: Vec<String> = names.iter().map(|n| format!("\"{n}\"")).collect();
    format!("[{}]", q.join(", "))
}

fn decorator(code: &triton::KernelCode, k: &Kernel, opts: &Options) -> String {
    if !code.uses_mvl || opts.mvl.is_some() {
        return String::new();
    }
    let key: Vec<String> = code
        .params
        .iter()
        .filter(|p| matches!(p, triton::Param::IntScalar(_) | triton::Param::Shape(..)))
        .map(|p| p.kernel_name())
        .collect();
    let warps = k
        .num_warps
        .map_or(String::new(), |w| format!(", num_warps={w}"));
    format!(
        "@_appyc_autotune(key={}, restore_value={}{warps})\n",
        quoted(&key),
        quoted(&code.written_arrays)
    )
}

fn launcher(
    name: &str,
    code: &triton::KernelCode,
    k: &Kernel,
    file: &SourceFile,
    opts: &Options,
    line: usize,
) -> Result<String> {
    let host_args: Vec<String> = code
        .host_args
        .iter()
        .filter(|a| !k.temps.iter().any(|(t, _)| t == *a))
        .cloned()
        .collect();
    let mut trips = vec![];
    let mut per_dim = vec![];
    for d in &k.dims {
        let t = format!("n_{}", d.var);
        let [start, stop, step] = [&d.range.start, &d.range.stop, &d.range.step].map(python::expr);
        if [&start, &stop, &step]
            .iter()
            .any(|e| e.contains("appy.MVL"))
        {
            // A loop stepping by MVL: its trip count is known once the tuner has chosen MVL.
            let meta = |e: &str| e.replace("appy.MVL", "meta[\"MVL\"]");
            trips.push(Trip {
                name: t.clone(),
                helper: "_appyc_trip",
                start: start.clone(),
                stop: stop.clone(),
                step: "1".into(),
            });
            per_dim.push(format!(
                "_appyc_trip({}, {}, {})",
                meta(&start),
                meta(&stop),
                meta(&step)
            ));
            continue;
        }
        trips.push(Trip {
            name: t.clone(),
            helper: "_appyc_trip",
            start,
            stop,
            step,
        });
        per_dim.push(match d.simd {
            None => t,
            Some(Width::Mvl) => format!("triton.cdiv({t}, meta[\"MVL\"])"),
            Some(Width::Fixed(n)) => format!("triton.cdiv({t}, {n})"),
        });
    }
    // Innermost loop on axis 0: the largest grid axis, and neighbouring programs touch
    // neighbouring elements.
    per_dim.reverse();
    if per_dim.is_empty() {
        per_dim.push("1".into());
    }
    let mut options = vec![];
    if code.uses_mvl {
        options.push(match opts.mvl {
            Some(m) => format!("**_appyc_fixed_mvl({m})"),
            None => "**_appyc_tuned_mvl()".into(),
        });
    }
    if let (Some(w), true) = (k.num_warps, !code.uses_mvl || opts.mvl.is_some()) {
        options.push(format!("num_warps={w}"));
    }
    let empty_test = trips
        .iter()
        .map(|t| format!("{} <= 0", t.name))
        .collect::<Vec<_>>()
        .join(" or ");
    // `le(N)` extents the launcher can compute, then the temporaries (Alg. 5).
    let mut prologue = vec![];
    for check in &k.checks {
        let (exprs, span) = match check {
            LaunchCheck::AtMost(e, _, span) => (vec![e], span),
            LaunchCheck::Equal(a, b, span) => (vec![a, b], span),
        };
        let mut names = vec![];
        for e in &exprs {
            e.walk(&mut |x| match &x.kind {
                ExprKind::Name(v) => names.push(v.clone()),
                ExprKind::Shape { array, .. } => names.push(array.clone()),
                _ => {}
            });
        }
        // Extents that depend on kernel variables (`:i + 1`) cannot be checked here; the kernel's
        // loops cover any length, so nothing is truncated either way.
        if !names.iter().all(|v| host_args.contains(v)) {
            continue;
        }
        let at = format!("{}:{}", file.name, file.line_of(span.start as usize));
        let line = match check {
            LaunchCheck::AtMost(e, n, _) => {
                let text = python::expr(e);
                format!("if {text} > {n}:\n        raise ValueError(f\"{at}: a dimension of length {{{text}}} exceeds its le({n})\")")
            }
            LaunchCheck::Equal(a, b, _) => {
                let (ta, tb) = (python::expr(a), python::expr(b));
                format!("if {ta} != {tb}:\n        raise ValueError(f\"{at}: slices of lengths {{{ta}}} and {{{tb}}} do not broadcast\")")
            }
        };
        if !prologue.contains(&line) {
            prologue.push(line);
        }
    }
    for (tmp, like) in &k.temps {
        prologue.push(format!("{tmp} = torch.empty_like({like})"));
    }
    let l = Launcher {
        launcher: name,
        kernel: &k.name,
        source: &file.name,
        line,
        host_args: &host_args,
        prologue,
        trips,
        empty_test,
        grid: per_dim,
        call_args: code.params.iter().map(|p| p.host_value()).collect(),
        options,
    };
    Ok(l.render().expect("launcher template renders"))
}
