//! One source file through the whole pipeline: parse → pragmas → passes → kernels + host.

use crate::codegen::host::{self, Edit, HostRewriter};
use crate::codegen::launch::{self, LaunchContext, LaunchOptions, SizeNames};
use crate::codegen::templates::{Prelude, PreludeUses};
use crate::codegen::{distribute_host, python, tiles, triton, writer::Writer};
use crate::diag::{Diagnostic, Result};
use crate::frontend::lower::lower_function;
use crate::frontend::pragma::{scan_pragmas, Pragma};
use crate::frontend::source::{SourceFile, Span};
use crate::ir::*;
use crate::passes;
use crate::schedule::{self, Launch};
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
    /// Tune launch configurations on the GPU (off: each kernel's default configuration).
    pub autotune: bool,
    /// Run eligible host loops as persistent kernels without being asked (`#pragma persistent
    /// for` asks regardless).
    pub persistent: bool,
    /// Warnings fail the run: the callers (command line, Python binding) print them and write
    /// nothing when [`Compiled::denied`]; the driver returns them either way.
    pub deny_warnings: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            emit: Emit::Python,
            mvl: None,
            auto_simd: true,
            autotune: true,
            persistent: true,
            deny_warnings: false,
        }
    }
}

pub use crate::codegen::launch::INTERPRETER_MVL;

/// A successful compile: the output text and the warnings found on the way.
#[derive(Debug, Clone, PartialEq)]
pub struct Compiled {
    pub text: String,
    /// Warnings (`Diagnostic::warning`), in the order found. The channel any pass may push to:
    /// `compile_function` hands `&mut Vec<Diagnostic>` down; the command line prints them and
    /// fails only under `--deny-warnings`.
    pub warnings: Vec<Diagnostic>,
    /// What the compile decided that a user may want to know (`Diagnostic::note`: a time loop
    /// that stays on the host, and the statement that keeps it there); printed under `-v`.
    pub notes: Vec<Diagnostic>,
}

impl Compiled {
    /// Whether the warnings fail the compile under these options (`--deny-warnings`).
    pub fn denied(&self, opts: &Options) -> bool {
        opts.deny_warnings && !self.warnings.is_empty()
    }
}

/// The stack of the thread a compile runs on. The parser's tree and the passes recurse over
/// expressions; with this stack, trees up to `frontend::depth::MAX_DEPTH` deep compile (a debug
/// build needs the most: measured ~1.2 KiB per level in the deepest pass). Only the pages
/// touched are ever mapped.
pub const STACK_SIZE: usize = 1 << 30;

/// Compiles one file; errors stop at the first, warnings come back with the output. Runs on a
/// thread of its own with a [`STACK_SIZE`] stack; a panic is passed on to the caller.
pub fn compile(file: &SourceFile, opts: &Options) -> Result<Compiled> {
    let work = || {
        let mut warnings = vec![];
        let text = compile_text(file, opts, &mut warnings)?;
        // Passes push notes into the same channel.
        let (notes, warnings) = warnings
            .into_iter()
            .partition(|d| d.severity == crate::diag::Severity::Note);
        Ok(Compiled {
            text,
            warnings,
            notes,
        })
    };
    std::thread::scope(|scope| {
        // Where the address space is limited, a smaller stack (or, last, this thread's own)
        // rather than no compile.
        for size in [STACK_SIZE, STACK_SIZE / 4, STACK_SIZE / 16] {
            let spawned = std::thread::Builder::new()
                .name("appyc-compile".into())
                .stack_size(size)
                .spawn_scoped(scope, work);
            if let Ok(worker) = spawned {
                return worker
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            }
        }
        work()
    })
}

fn compile_text(
    file: &SourceFile,
    opts: &Options,
    warnings: &mut Vec<Diagnostic>,
) -> Result<String> {
    let module = ast::Suite::parse(&file.text, &file.name).map_err(|e| {
        let at: usize = e.offset.into();
        let at = at.min(file.text.len());
        Diagnostic::error(
            Span::new(at, at),
            format!("invalid Python syntax: {}", e.error),
        )
    })?;
    // Before anything recurses over the tree: deeper than the limit is an error, not a crash.
    let module = crate::frontend::depth::check_suite(module, crate::frontend::depth::MAX_DEPTH)
        .map_err(crate::frontend::depth::too_deep)?;
    let scan = scan_pragmas(file)?;
    warnings.extend(scan.warnings);
    let pragmas = scan.pragmas;

    let mut edits: Vec<Edit> = vec![];
    let mut compiled_spans: Vec<Span> = vec![];
    // The regions the output replaces by launches (their appy names vanish with them).
    let mut regions: Vec<Span> = vec![];
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
        // Pragmas come in line order: the function's are one run, found by binary search
        // (a scan per function would make the compile quadratic in the number of functions).
        let from = pragmas.partition_point(|p| p.line <= first);
        let to = pragmas.partition_point(|p| p.line <= last);
        let own: Vec<Pragma> = pragmas[from..to].to_vec();
        if own.is_empty() {
            continue;
        }
        if let Some(err) = pragma_in_nested_scope(file, &f.body, &own) {
            return Err(err);
        }
        used_pragmas += own.len();
        compiled_spans.push(span);
        let (function_edits, function_regions) = compile_function(file, f, &own, opts, warnings)?;
        edits.extend(function_edits);
        regions.extend(function_regions);
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
    edits.extend(crate::codegen::imports::edits(
        file,
        &module,
        &crate::codegen::imports::Compiled {
            functions: &compiled_spans,
            regions: &regions,
        },
    )?);
    // The prelude goes after a docstring and `__future__` imports, and carries only the
    // helpers the generated code calls, so it is rendered last, from the finished text.
    let insert_at = prelude_offset(file, &module);
    // Text inserted exactly at the prelude's place (the first kernel, when the source starts
    // with its function) goes after the prelude, which it uses.
    let shift: isize = edits
        .iter()
        .filter(|e| e.range.end < insert_at || (e.range.end == insert_at && !e.range.is_empty()))
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

/// A pragma inside a function or class defined within a compiled function: appyc compiles
/// top-level functions only (a kernel there would close over the outer function's locals).
fn pragma_in_nested_scope(
    file: &SourceFile,
    body: &[ast::Stmt],
    pragmas: &[Pragma],
) -> Option<Diagnostic> {
    for s in body {
        let nested = match s {
            ast::Stmt::FunctionDef(d) => Some(("function", d.name.as_str())),
            ast::Stmt::AsyncFunctionDef(d) => Some(("function", d.name.as_str())),
            ast::Stmt::ClassDef(c) => Some(("class", c.name.as_str())),
            _ => None,
        };
        if let Some((what, name)) = nested {
            let span: Span = s.range().into();
            let (first, last) = (
                file.line_of(span.start as usize),
                file.line_of(span.end as usize),
            );
            if let Some(p) = pragmas.iter().find(|p| p.line > first && p.line <= last) {
                return Some(
                    Diagnostic::error(
                        p.span,
                        format!("a pragma inside the nested {what} `{name}`"),
                    )
                    .with_help(format!(
                        "appyc compiles top-level functions: define `{name}` at module level"
                    )),
                );
            }
            continue;
        }
        let blocks: Vec<&[ast::Stmt]> = match s {
            ast::Stmt::For(x) => vec![&x.body, &x.orelse],
            ast::Stmt::While(x) => vec![&x.body, &x.orelse],
            ast::Stmt::If(x) => vec![&x.body, &x.orelse],
            ast::Stmt::With(x) => vec![&x.body],
            ast::Stmt::Try(x) => vec![&x.body, &x.orelse, &x.finalbody],
            _ => vec![],
        };
        if let Some(d) = blocks
            .into_iter()
            .find_map(|b| pragma_in_nested_scope(file, b, pragmas))
        {
            return Some(d);
        }
    }
    None
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

/// One function through the pipeline, step by step as ARCHITECTURE.md's "Pipeline" numbers
/// them (the paper's Algorithm 3): the front end, the passes over each region, then codegen.
fn compile_function(
    file: &SourceFile,
    f: &ast::StmtFunctionDef,
    pragmas: &[Pragma],
    opts: &Options,
    // Passes push warnings here (e.g. a race found by a dependence test).
    warnings: &mut Vec<Diagnostic>,
) -> Result<(Vec<Edit>, Vec<Span>)> {
    let calls = crate::frontend::libcalls::find(f)?;
    // 1-4: the function as IR, its pragmas bound (3a: accumulation loops gathered into regions;
    // 3b: bare array assignments in time loops become regions), its regions outlined as kernels.
    let mut func = lower_function(f);
    passes::normalize::run(&mut func);
    passes::attach_pragmas::run_with_warnings(&mut func, pragmas, file, warnings)?;
    passes::gather::run(&mut func, file, warnings);
    passes::device_statements::run(&mut func, |at| file.line_of(at.start as usize));
    // 3c: reductions into a name as reduction clauses, whose pragmas join the source's.
    let made = passes::scalar_reductions::run(&mut func, file);
    let mut pragmas: Vec<Pragma> = pragmas.iter().cloned().chain(made.pragmas).collect();
    // 3d: a region that reads back what the region before it wrote (or only reduces) joins
    // it when the two share written arrays only at the element each iteration owns.
    let joined = passes::join_regions::run(&mut func, &mut pragmas, &made.checks, warnings);
    let pragmas: &[Pragma] = &pragmas;
    let mut kernels = passes::outline::run(&func)?;
    passes::join_regions::mark_absorbed(&mut kernels, &joined);
    passes::scalar_reductions::attach_checks(&mut kernels, &made.checks);
    // 4a-4d: each region as written (races, scalars the host reads after it, shared and
    // reduction scalars, matrix tiles, elements read back after their store).
    passes::shared_scalars::check_reduction_placement(pragmas, &kernels)?;
    passes::live_out::run(file, &func, &mut kernels);
    for k in kernels.iter_mut() {
        passes::races::run(k, file, warnings);
        passes::shared_scalars::run(k, pragmas, warnings)?;
        passes::tile_dot::run(k, warnings);
        passes::forward_stores::run(k);
    }
    // 5-8: tensor statements become loop nests; barriers go in while each is one statement.
    let tensor_opts = passes::lower_tensor::Options {
        auto_simd: opts.auto_simd,
    };
    for k in kernels.iter_mut() {
        passes::promote_updates::run(k);
        passes::lower_tensor::split(k)?;
        passes::insert_sync::run(k);
        passes::lower_tensor::lower(k, &tensor_opts)?;
    }
    // 8a-8b: across regions and the statements between them, so on the function's kernels
    // together.
    passes::fuse_into_reduction::run(&func, &mut kernels);
    passes::fold_host_update::run(file, &func, &mut kernels, warnings);
    // 9-10: vector lanes (vectorize_parallel, row_block) and strip-mining.
    for k in kernels.iter_mut() {
        strip_mine(k, opts.auto_simd)?;
    }
    // 10a-10b.
    for k in kernels.iter_mut() {
        passes::split_rows::run(k);
    }
    let symmetric = passes::comm::run(&func, &calls, &mut kernels)?;
    // 10c: a `#pragma distribute` loop, as a copy of the kernels: the originals stay the
    // single-GPU program that one process without PEs runs.
    let distributed = passes::distribute::run(&func, &kernels)?;
    // 11-12.
    let launches = schedule::run_with_notes(file, &func, &kernels, opts.persistent, warnings)?;
    let distributed = match distributed {
        Some(d) => {
            let launches = schedule::run(file, &func, &d.kernels, opts.persistent)?;
            let p = launches.into_iter().find_map(|l| match l {
                Launch::Persistent(p) if p.loop_span == d.plan.loop_span => Some(p),
                _ => None,
            });
            // The loop asks to be persistent; it is not one of its own only inside another
            // host loop that runs on the device as a whole.
            let p = p.ok_or_else(|| {
                Diagnostic::error(
                    d.plan.loop_span,
                    "a `#pragma distribute` loop must be the outermost host loop around its regions",
                )
                .with_help("the PEs exchange halos inside this loop's persistent kernel: move the loop out of the loop around it")
            })?;
            Some((d, p))
        }
        None => None,
    };
    // 12a: host allocations that no compiled code reads any more.
    let dead = passes::dead_allocations::run(file, &func, &kernels);
    codegen(
        file,
        f,
        &func,
        (&kernels, &launches, &dead),
        distributed.as_ref().map(|(d, p)| (d, p.as_ref())),
        symmetric,
        opts,
    )
}

/// Steps 9, 9a and 10: with auto-simd, the innermost parallel loop vectorised (its iterations
/// as lanes, or as the rows of a tile around its one strip: `row_block` first) where
/// strip-mining accepts the result; otherwise one program per iteration, strip-mined as is.
fn strip_mine(k: &mut Kernel, auto_simd: bool) -> Result<()> {
    if auto_simd {
        let mut vectorised = k.clone();
        let mut candidates = vec![];
        if passes::vectorize_parallel::run(&mut vectorised) {
            candidates.push(vectorised.clone());
        }
        if passes::row_block::run(&mut vectorised) {
            candidates.insert(0, vectorised);
        }
        if let Some(done) = candidates
            .into_iter()
            .find_map(|mut c| passes::strip_mine::run(&mut c).is_ok().then_some(c))
        {
            *k = done;
            return Ok(());
        }
    }
    passes::strip_mine::run(k)
}

/// What codegen makes of one function, besides the host rewriter's edits.
#[derive(Default)]
struct Spliced {
    /// Edits to the source: decorators dropped, regions replaced by their launches.
    edits: Vec<Edit>,
    /// The spans the host rewriter leaves alone (regions and persistent loops).
    skip: Vec<Span>,
    /// Kernels and launchers, inserted before the function.
    generated: String,
}

impl Spliced {
    /// Replaces the lines of `span` by `call`, at the indentation of the line of `first`.
    fn replace(&mut self, file: &SourceFile, span: Span, first: u32, call: String) {
        let indent = indentation(file, first);
        self.edits.push(Edit {
            range: line_range(file, span),
            text: format!("{indent}{call}\n"),
        });
    }

    /// Appends generated code, then `gap` (blank lines before what follows).
    fn generate(&mut self, code: &str, gap: &str) {
        self.generated.push_str(code);
        self.generated.push_str(gap);
    }
}

/// The whitespace that starts the line of `at`.
fn indentation(file: &SourceFile, at: u32) -> String {
    file.line_text(file.line_of(at as usize))
        .chars()
        .take_while(|c| c.is_whitespace())
        .collect()
}

/// The whole lines `span` touches.
fn line_range(file: &SourceFile, span: Span) -> std::ops::Range<usize> {
    file.line_start(file.line_of(span.start as usize))
        ..file.line_end(file.line_of(span.end as usize))
}

/// Where a region's code starts: its first grid loop, else its first statement.
fn region_start(k: &Kernel) -> u32 {
    k.dims
        .first()
        .map_or(k.body[0].span.start, |d| d.span.start)
}

/// Step 12, codegen: the function's edits. Each launch (or, for `--emit lowered`, each region
/// as Python) takes its region's place, the kernels and launchers go before the `def`, and the
/// host code around them is rewritten.
fn codegen(
    file: &SourceFile,
    f: &ast::StmtFunctionDef,
    func: &Function,
    (kernels, launches, dead): (&[Kernel], &[Launch], &[Span]),
    distributed: Option<(&passes::distribute::Distributed, &schedule::Persistent)>,
    symmetric: passes::comm::Symmetric,
    opts: &Options,
) -> Result<(Vec<Edit>, Vec<Span>)> {
    let mut out = Spliced::default();
    for &span in dead {
        let text = file.slice(span).trim();
        let note = format!("# appyc: `{text}` dropped: no compiled code reads what it allocates");
        out.replace(file, span, span.start, note);
        out.skip.push(span);
    }
    let def_line_start = def_line_start(file, f);
    let device = host_device(func, kernels);
    let launch_cx = LaunchContext {
        file,
        opts: LaunchOptions {
            mvl: opts.mvl,
            autotune: opts.autotune,
        },
        sizes: SizeNames::of(f),
    };
    match opts.emit {
        Emit::Lowered => {
            for k in kernels {
                lowered_region(file, k, &mut out);
            }
        }
        Emit::Python => {
            let mut persistent_count = 0;
            for l in launches {
                match l {
                    Launch::Region(i) => region_launch(&launch_cx, &kernels[*i], &mut out)?,
                    Launch::Persistent(p) => {
                        let kernel = format!("_{}_persistent{persistent_count}", func.name);
                        persistent_count += 1;
                        let mut call =
                            persistent_launch(&launch_cx, kernel, p, kernels, false, &mut out)?;
                        if let Some((d, dp)) =
                            distributed.filter(|(d, _)| d.plan.loop_span == p.loop_span)
                        {
                            let kernel = format!("_{}_distributed", func.name);
                            let spmd = persistent_launch(
                                &launch_cx, kernel, dp, &d.kernels, true, &mut out,
                            )?;
                            let indent = indentation(file, p.loop_span.start);
                            call =
                                distribute_host::call(&d.plan, &func.name, &spmd, &call, &indent);
                        }
                        out.replace(file, p.span, p.loop_span.start, call);
                        out.skip.push(p.span);
                    }
                }
            }
        }
    }
    let Spliced {
        mut edits,
        skip,
        generated,
    } = out;
    if !generated.is_empty() {
        edits.push(Edit {
            range: def_line_start..def_line_start,
            text: generated,
        });
    }
    let mut rewriter = HostRewriter {
        source: &file.text,
        skip: skip.clone(),
        device,
        symmetric: symmetric.arrays,
        flags: symmetric.flags,
        edits: vec![],
    };
    rewriter.stmts(&f.body)?;
    edits.extend(rewriter.edits);
    Ok((edits, skip))
}

/// Where the line of the `def` (or of its first decorator) starts: the generated code goes
/// there (`codegen::imports` drops appy's decorators).
fn def_line_start(file: &SourceFile, f: &ast::StmtFunctionDef) -> usize {
    let mut def_start: usize = Span::from(f.range).start as usize;
    for d in &f.decorator_list {
        let ds: Span = d.range().into();
        def_start = def_start.min(file.line_start(file.line_of(ds.start as usize)));
    }
    file.line_start(file.line_of(def_start))
}

/// Where host code allocates: on the device of the first array parameter a kernel uses.
fn host_device(func: &Function, kernels: &[Kernel]) -> String {
    let array_params: Vec<String> = func
        .params
        .iter()
        .filter(|p| kernels.iter().any(|k| k.names_array(p)))
        .cloned()
        .collect();
    if array_params.is_empty() {
        "_appyc_device()".to_string()
    } else {
        format!("{}.device", array_params[0])
    }
}

/// `--emit lowered`: the region after the passes, printed as Python in its place; a region
/// or statement absorbed by it leaves a comment naming it.
fn lowered_region(file: &SourceFile, k: &Kernel, out: &mut Spliced) {
    let indent = indentation(file, region_start(k));
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
    out.edits.push(Edit {
        range: line_range(file, k.span),
        text,
    });
    out.skip.push(k.span);
    for a in &k.absorbed {
        let what = absorbed_name(file, a);
        out.edits.push(Edit {
            range: line_range(file, a.span),
            text: match fold_operand(file, a) {
                // The lowered view defines no helper, so the binding says what it does.
                Some(binding) => format!(
                    "{indent}# appyc: {what} runs inside {} below (here if its operand is an array){binding}  # {}\n",
                    k.name,
                    fold_operand_meaning(a).unwrap_or_default()
                ),
                // By name: a region sunk past the next one (passes::fuse_into_reduction) runs
                // in the one after it.
                None => format!(
                    "{indent}# appyc: {what} runs inside {} {}\n",
                    k.name,
                    where_is(k, a)
                ),
            },
        });
        out.skip.push(a.span);
    }
}

/// A region on its own grid: its kernel (and tile kernel), its launcher, and the launch in
/// its place.
fn region_launch(cx: &LaunchContext, k: &Kernel, out: &mut Spliced) -> Result<()> {
    let file = cx.file;
    let code = triton::kernel(k, file)?;
    let tiles = match &k.tiles {
        Some(t) => Some(tiles::kernel(k, t, file)?),
        None => None,
    };
    let name = format!("_launch{}", k.name);
    let (launcher, args) = launch::region_launcher(cx, &name, &code, k, tiles.as_ref());
    out.generate(&code.text, "\n\n");
    if let Some(t) = &tiles {
        out.generate(&t.text, "\n\n");
    }
    out.generate(&launcher, "\n\n\n");
    // Scalars reduced by the region get their values back from the launcher.
    let results: Vec<&str> = k
        .shared
        .iter()
        .filter(|s| s.update != SharedUpdate::ReadOnly)
        .map(|s| s.var.as_str())
        .collect();
    let assigned = if results.is_empty() {
        String::new()
    } else {
        format!("{} = ", results.join(", "))
    };
    // A scalar's value before the region where the name is not it (`SharedScalar::passed`).
    let args: Vec<String> = args
        .iter()
        .map(|a| {
            k.shared
                .iter()
                .find(|s| &s.var == a)
                .and_then(|s| s.passed.clone())
                .unwrap_or_else(|| a.clone())
        })
        .collect();
    let call = format!("{assigned}{name}({})", args.join(", "));
    out.replace(file, k.span, region_start(k), call);
    out.skip.push(k.span);
    for a in &k.absorbed {
        // An operand that may be an array is bound on the line after the note.
        let binding = fold_operand(file, a);
        let note = format!(
            "# appyc: {} runs inside {name} {}{}{}",
            absorbed_name(file, a),
            where_is(k, a),
            if binding.is_some() {
                " (here if its operand is an array)"
            } else {
                ""
            },
            binding.unwrap_or_default()
        );
        out.replace(file, a.span, a.span.start, note);
        out.skip.push(a.span);
    }
    Ok(())
}

/// The host line that binds a folded statement's operand (`passes::fold_host_update`), at the
/// statement's indentation, after its note; `None` where the kernel reads the operand itself.
fn fold_operand(file: &SourceFile, a: &Absorbed) -> Option<String> {
    let AbsorbedKind::Statement {
        operand: Some(o), ..
    } = &a.what
    else {
        return None;
    };
    Some(format!(
        "\n{}{} = _appyc_fold_operand({}, \"{}\", {})",
        indentation(file, a.span.start),
        o.name,
        o.array,
        o.op,
        crate::ir::python::expr(&o.value)
    ))
}

/// What `_appyc_fold_operand` (templates/prelude.py.jinja) does with this operand, in words
/// for `--emit lowered`, which prints the binding but not the helper.
fn fold_operand_meaning(a: &Absorbed) -> Option<String> {
    let AbsorbedKind::Statement {
        operand: Some(o), ..
    } = &a.what
    else {
        return None;
    };
    let value = crate::ir::python::expr(&o.value);
    let identity = match o.op {
        "*=" | "/=" => "1.0",
        "+=" => "-0.0",
        _ => "0.0",
    };
    Some(format!(
        "{value} if a number or one element; else `{} {} {value}` runs here and this is {identity}",
        o.array, o.op
    ))
}

/// Where the kernel's launch stands from an absorbed region's note: after it, or before it
/// (`passes::join_regions` may keep the first region's place).
fn where_is(k: &Kernel, a: &Absorbed) -> &'static str {
    if a.span.start < k.span.start {
        "below"
    } else {
        "above"
    }
}

/// How the note in its place names absorbed source: a statement by its text.
fn absorbed_name(file: &SourceFile, a: &Absorbed) -> String {
    match a.what {
        AbsorbedKind::Region => "this region".to_string(),
        AbsorbedKind::Statement { .. } => format!(
            "`{}`",
            file.text[a.span.start as usize..a.span.end as usize].trim()
        ),
    }
}

/// A host loop as one persistent kernel named `kernel` (and its temporally blocked variant
/// for a stencil) and its launcher; the launch that takes the loop's place.
fn persistent_launch(
    cx: &LaunchContext,
    kernel: String,
    p: &schedule::Persistent,
    kernels: &[Kernel],
    distributed: bool,
    out: &mut Spliced,
) -> Result<String> {
    let file = cx.file;
    let line = file.line_of(p.loop_span.start as usize);
    let regions: Vec<&Kernel> = p.regions.iter().map(|&i| &kernels[i]).collect();
    let code = triton::persistent_kernel(
        &triton::PersistentLoop {
            name: kernel.clone(),
            var: p.var.clone(),
            range: &p.range,
            line,
            regions: regions.clone(),
            barrier_after: p.barrier_after.clone(),
            steps: &p.steps,
            test: p.test.as_ref(),
            var_register: p.var_register(),
        },
        file,
    )?;
    let name = format!("_launch{kernel}");
    let blocked_name = format!("{kernel}_blocked");
    let blocked = p
        .stencil
        .as_ref()
        .map(|st| triton::blocked_kernels(&blocked_name, st, &code, &p.steps, file, line));
    let blocked_2d = p
        .stencil_2d
        .as_ref()
        .map(|st| triton::blocked_2d_kernels(&blocked_name, st, &code, file, line));
    let blocked_3d = p
        .stencil_3d
        .as_ref()
        .map(|st| triton::blocked_3d_kernels(&blocked_name, st, &code, file, line));
    let any_blocked = blocked.is_some() || blocked_2d.is_some() || blocked_3d.is_some();
    let (launcher, args) = launch::persistent_launcher(
        cx,
        &name,
        &kernel,
        &code,
        p,
        &regions,
        launch::LoopForms {
            blocked: any_blocked.then_some(blocked_name.as_str()),
            distributed,
        },
    );
    out.generate(&code.text, "\n\n");
    if let Some((twin, gluon)) = &blocked {
        out.generate(twin, "\n\n");
        out.generate(gluon, "\n\n");
    }
    for (gluon, twin) in blocked_2d.iter().chain(&blocked_3d) {
        out.generate(gluon, "\n\n");
        out.generate(twin, "\n\n");
    }
    out.generate(&launcher, "\n\n\n");
    // The names the loop assigns and the function reads after it take the launcher's values;
    // where one may be unbound before the loop, only when an iteration ran (one row of values
    // or none), as Python binds them.
    let (outputs, args) = (p.outputs.join(", "), args.join(", "));
    Ok(match (p.outputs.len(), p.bind_if_ran) {
        (0, _) => format!("{name}({args})"),
        (_, false) => format!("{outputs} = {name}({args})"),
        (_, true) => format!("for {outputs} in {name}({args}): pass"),
    })
}
