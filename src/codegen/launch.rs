//! Launchers: the host functions that start kernels, one per region launched on its own grid
//! and one per persistent loop. Both consult the kernel's tuning table once per call (a dict
//! look-up keyed by size classes, see `tuning_key`) and then make one bare Triton launch.

use super::analysis::push_unique;
use super::hash::text_hash;
use super::kernel_code::{KernelCode, Param, SPLIT_PARAMS};
use super::templates::{Launcher, SharedResult, Trip, Tuning};
use super::tiles::{TileCode, TileLaunchInput};
use crate::frontend::source::SourceFile;
use crate::ir::*;
use crate::passes::strip_mine::TILE_ROWS;
use crate::schedule::Persistent;
use askama::Template;
use rustpython_ast as ast;
use std::collections::{HashMap, HashSet};

/// How launch configurations are chosen.
#[derive(Debug, Clone, Copy)]
pub struct LaunchOptions {
    /// A fixed MVL (`--mvl`): no tuning.
    pub mvl: Option<u32>,
    /// Tune on the GPU (`--no-autotune` turns it off; so does `APPYC_AUTOTUNE=0` at run time).
    pub autotune: bool,
}

/// The MVL Triton's interpreter runs with when nothing fixes it (APPYC_MVL overrides it).
pub const INTERPRETER_MVL: u32 = 128;

/// The MVLs tried when a pragma fixes num_warps: a bounded set (a compilation and a few timed
/// runs each, once per size class, GPU and kernel text). Without the pragma the prelude's
/// `_APPYC_CANDIDATES` adds 8 warps for wide vectors.
const CANDIDATE_MVLS: [u32; 4] = [128, 256, 512, 1024];

/// The MVLs of a kernel with a row tile (`strip_mine::row_tile`: a column walk reduced
/// `TILE_ROWS` rows at a time). Its programs are few (one per MVL columns) and each streams
/// its columns, so narrow vectors make more programs: at MVL 64, 8,000 columns are 125
/// programs, about one per SM of an H100 (31 at MVL 256); the tile (`TILE_ROWS` x MVL) keeps each
/// program's loads wide. Wider than 256 the tile would take a 4-warp program's registers.
const ROW_TILE_MVLS: [u32; 4] = [32, 64, 128, 256];

/// The default MVL of a kernel with a row tile (see `ROW_TILE_MVLS`).
const ROW_TILE_DEFAULT_MVL: u32 = 64;

/// Whether a kernel reduces over a row tile (`ReduceRows`): its MVLs are `ROW_TILE_MVLS`.
fn has_row_tile(kernels: &[&Kernel]) -> bool {
    kernels.iter().any(|k| {
        k.body.iter().any(|s| {
            let mut found = false;
            s.walk(&mut |st| {
                for e in st.exprs() {
                    found |= e.any(&mut |x| matches!(x.kind, ExprKind::ReduceRows { .. }));
                }
            });
            found
        })
    })
}

/// What every launcher of a function is made with.
pub struct LaunchContext<'a> {
    pub file: &'a SourceFile,
    pub opts: LaunchOptions,
    pub sizes: SizeNames,
}

/// The scalars of a function that may key a tuning table: extents whose value cannot change
/// between iterations of a host loop. That is a parameter the function never assigns, or a name
/// assigned once, at the top of the function, from an array's shape (`M, N = A.shape`,
/// `N = A.shape[0]`, `N = len(A)`). Loop variables, floats and other computed scalars never are.
pub struct SizeNames(HashSet<String>);

impl SizeNames {
    pub fn of(f: &ast::StmtFunctionDef) -> Self {
        let mut count: HashMap<String, usize> = HashMap::new();
        count_assignments(&f.body, &mut count);
        let mut sizes: HashSet<String> = f
            .args
            .args
            .iter()
            .chain(&f.args.posonlyargs)
            .chain(&f.args.kwonlyargs)
            .map(|a| a.def.arg.to_string())
            .filter(|p| !count.contains_key(p))
            .collect();
        for s in &f.body {
            let ast::Stmt::Assign(a) = s else { continue };
            let [target] = a.targets.as_slice() else {
                continue;
            };
            let names: Vec<&str> = match target {
                ast::Expr::Name(n) if is_extent(&a.value) => vec![n.id.as_str()],
                ast::Expr::Tuple(t) if is_shape(&a.value) => t
                    .elts
                    .iter()
                    .filter_map(|e| match e {
                        ast::Expr::Name(n) => Some(n.id.as_str()),
                        _ => None,
                    })
                    .collect(),
                _ => vec![],
            };
            sizes.extend(
                names
                    .into_iter()
                    .filter(|n| count.get(*n) == Some(&1))
                    .map(String::from),
            );
        }
        SizeNames(sizes)
    }
}

/// `A.shape`
fn is_shape(e: &ast::Expr) -> bool {
    matches!(e, ast::Expr::Attribute(a) if a.attr.as_str() == "shape")
}

/// `A.shape[d]` or `len(A)`
fn is_extent(e: &ast::Expr) -> bool {
    match e {
        ast::Expr::Subscript(s) => is_shape(&s.value),
        ast::Expr::Call(c) => {
            matches!(c.func.as_ref(), ast::Expr::Name(n) if n.id.as_str() == "len")
                && c.args.len() == 1
        }
        _ => false,
    }
}

/// How often each name is bound in these statements (nested blocks included).
fn count_assignments(body: &[ast::Stmt], count: &mut HashMap<String, usize>) {
    fn bind(target: &ast::Expr, count: &mut HashMap<String, usize>) {
        match target {
            ast::Expr::Name(n) => *count.entry(n.id.to_string()).or_default() += 1,
            ast::Expr::Tuple(t) => t.elts.iter().for_each(|e| bind(e, count)),
            ast::Expr::List(l) => l.elts.iter().for_each(|e| bind(e, count)),
            ast::Expr::Starred(s) => bind(&s.value, count),
            _ => {}
        }
    }
    for s in body {
        match s {
            ast::Stmt::Assign(a) => a.targets.iter().for_each(|t| bind(t, count)),
            ast::Stmt::AugAssign(a) => bind(&a.target, count),
            ast::Stmt::AnnAssign(a) => bind(&a.target, count),
            ast::Stmt::For(f) => {
                bind(&f.target, count);
                count_assignments(&f.body, count);
                count_assignments(&f.orelse, count);
            }
            ast::Stmt::While(w) => {
                count_assignments(&w.body, count);
                count_assignments(&w.orelse, count);
            }
            ast::Stmt::If(i) => {
                count_assignments(&i.body, count);
                count_assignments(&i.orelse, count);
            }
            ast::Stmt::With(w) => {
                for item in &w.items {
                    if let Some(v) = &item.optional_vars {
                        bind(v, count);
                    }
                }
                count_assignments(&w.body, count);
            }
            ast::Stmt::Try(t) => {
                count_assignments(&t.body, count);
                count_assignments(&t.orelse, count);
                count_assignments(&t.finalbody, count);
            }
            _ => {}
        }
    }
}

/// The tuning key of a kernel: the size class (next power of two) of every integer parameter
/// that is an extent (`A.shape[d]`, or an unassigned integer parameter of the function), then
/// the dtype of every array. Never a float, a loop variable or a computed scalar.
pub fn tuning_key(params: &[Param], sizes: &SizeNames) -> Vec<String> {
    let mut key = vec![];
    for p in params {
        match p {
            Param::IntScalar(n) if sizes.0.contains(n) => key.push(format!("_appyc_size({n})")),
            Param::Shape(..) => key.push(format!("_appyc_size({})", p.host_value())),
            _ => {}
        }
    }
    for p in params {
        if let Param::Array(a) = p {
            key.push(format!("{a}.dtype"));
        }
    }
    key
}

fn tuple(items: &[String]) -> String {
    match items.len() {
        1 => format!("{},", items[0]),
        _ => items.join(", "),
    }
}

/// What a kernel's configurations are: `(MVL, num_warps)` for a region on its own grid, and
/// `(MVL, num_warps, warps_per_sm)` for a persistent loop (one launch in all with at most that
/// many warps of programs an SM, 64 for all it holds; 0 for one launch per phase).
#[derive(Clone, Copy, PartialEq)]
enum ConfigKind {
    Grid,
    Persistent,
}

/// The tuning table and its use, for a kernel that has an MVL.
#[allow(clippy::too_many_arguments)]
fn tuning(
    kind: ConfigKind,
    kernel: &str,
    code: &KernelCode,
    default_mvl: u32,
    num_warps: Option<u32>,
    args: &[String],
    opts: LaunchOptions,
    sizes: &SizeNames,
    row_tile: bool,
) -> Tuning {
    let warps = num_warps.unwrap_or(4);
    let extra = match kind {
        ConfigKind::Grid => "",
        ConfigKind::Persistent => ", 64",
    };
    let default_mvl = opts.mvl.unwrap_or(default_mvl);
    let default = format!("({default_mvl}, {warps}{extra})");
    let candidates = match (opts.mvl, opts.autotune, num_warps, kind) {
        (Some(_), ..) | (None, false, ..) => "()".to_string(),
        // The prelude's sets; a pragma's num_warps fixes the warps.
        // A row tile's narrower vectors, with 4 warps and, for the middle widths, 8.
        (None, true, None, _) if row_tile => {
            let mut c: Vec<String> = ROW_TILE_MVLS
                .iter()
                .map(|m| format!("({m}, 4{extra})"))
                .chain([64, 128].iter().map(|m| format!("({m}, 8{extra})")))
                .collect();
            if kind == ConfigKind::Persistent {
                c.push(format!("({ROW_TILE_DEFAULT_MVL}, 4, 0)"));
            }
            format!("({})", c.join(", "))
        }
        (None, true, None, ConfigKind::Grid) => "_APPYC_CANDIDATES".to_string(),
        (None, true, None, ConfigKind::Persistent) => "_APPYC_PERSISTENT_CANDIDATES".to_string(),
        (None, true, Some(w), _) => {
            let mvls = if row_tile {
                ROW_TILE_MVLS
            } else {
                CANDIDATE_MVLS
            };
            let mut c: Vec<String> = mvls.iter().map(|m| format!("({m}, {w}{extra})")).collect();
            if kind == ConfigKind::Persistent {
                let one = if row_tile { ROW_TILE_DEFAULT_MVL } else { 512 };
                c.push(format!("({one}, {w}, 0)"));
            }
            format!("({})", c.join(", "))
        }
    };
    Tuning {
        table: format!("{kernel}_tuning"),
        hash: text_hash(&format!("{}{candidates}", code.text)),
        default,
        candidates,
        // Temporaries are the launcher's own: their dtypes follow the arguments'.
        key: tuple(&tuning_key(&code_params_without_temps(code, args), sizes)),
        written: tuple(&code.written_arrays),
        args: args.iter().map(|a| format!("{a}, ")).collect(),
        unpack: match kind {
            ConfigKind::Grid => "_appyc_mvl, _appyc_warps".into(),
            ConfigKind::Persistent => "_appyc_mvl, _appyc_warps, _appyc_warps_per_sm".into(),
        },
    }
}

/// A kernel's parameters less the temporaries (the launcher's own arrays, whose dtypes follow
/// the arguments'): what a tuning key is made of.
fn code_params_without_temps(code: &KernelCode, args: &[String]) -> Vec<Param> {
    code.params
        .iter()
        .filter(|p| !matches!(p, Param::Array(a) if !args.contains(a)))
        .cloned()
        .collect()
}

/// The widest default MVL of a persistent loop with nvshmem calls, which is never tuned. Its
/// registers are capped (`_APPYC_NVSHMEM_MAXNREG` in the runtime), and 512 lanes keep a
/// stencil's loads within the cap: on 2 x H200, Jacobi-2D at 8192^2 per GPU ran 1.46x faster
/// and Jacobi-3D at 256^3 2.07x faster than at 1024 lanes without the cap
/// (bench/gpu_nvshmem_variants.py).
const COMM_DEFAULT_MVL: u32 = 512;

/// The default MVL without tuning, by kernel kind: wide vectors for element-wise grids, where
/// each program does one vector of work; narrower ones where a program loops over vectors.
fn default_mvl(kernels: &[&Kernel]) -> u32 {
    if has_row_tile(kernels) {
        return ROW_TILE_DEFAULT_MVL;
    }
    let mut loops = false;
    for k in kernels {
        for s in &k.body {
            s.walk(&mut |st| loops |= matches!(st.kind, StmtKind::For { .. }));
        }
    }
    if loops {
        256
    } else {
        1024
    }
}

/// Launch checks the launcher can evaluate (every name is one of its arguments), then the
/// temporaries. Extents that depend on kernel variables (`:i + 1`) cannot be checked on the
/// host; the kernel's loops cover any length, so nothing is truncated either way.
fn prologue(kernels: &[&Kernel], host_args: &[String], file: &SourceFile) -> Vec<String> {
    let mut out = vec![];
    for k in kernels {
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
            if !out.contains(&line) {
                out.push(line);
            }
        }
    }
    for k in kernels {
        for (tmp, like) in &k.temps {
            out.push(format!("{tmp} = torch.empty_like({like})"));
        }
        for s in written_shared(k) {
            let device = s
                .like
                .as_deref()
                .or_else(|| {
                    host_args
                        .iter()
                        .find(|a| kernel_array(k, a))
                        .map(|a| a.as_str())
                })
                .map_or("_appyc_device()".to_string(), |a| format!("{a}.device"));
            out.push(format!(
                "{} = _appyc_shared_scalar({}, {}, {device})",
                s.buffer,
                s.var,
                s.like.as_deref().unwrap_or("None")
            ));
        }
    }
    out
}

/// Whether the kernel indexes `name` (an array, not a scalar).
fn kernel_array(k: &Kernel, name: &str) -> bool {
    let mut found = false;
    for st in &k.body {
        st.walk(&mut |st| {
            for e in st.exprs() {
                found |= e.any(
                    &mut |x| matches!(&x.kind, ExprKind::Subscript { array, .. } if array == name),
                );
            }
        });
    }
    found
}

/// The kernel's host arguments without the arrays its launcher allocates (temporaries and the
/// buffers of shared scalars).
fn without_temps(code: &KernelCode, kernels: &[&Kernel]) -> Vec<String> {
    code.host_args
        .iter()
        .filter(|a| {
            !kernels.iter().any(|k| {
                k.temps.iter().any(|(t, _)| t == *a) || k.shared.iter().any(|s| s.buffer == **a)
            })
        })
        .cloned()
        .collect()
}

/// The `shared(x)` scalars a region writes: the launcher takes their values, allocates their
/// buffers (in `prologue`) and returns the values the kernel left there.
fn written_shared(k: &Kernel) -> impl Iterator<Item = &SharedScalar> {
    k.shared
        .iter()
        .filter(|s| s.update != SharedUpdate::ReadOnly)
}

fn shared_result(k: &Kernel) -> Option<SharedResult> {
    let (values, unchanged): (Vec<String>, Vec<String>) = written_shared(k)
        .map(|s| (format!("{}.item()", s.buffer), s.var.clone()))
        .unzip();
    (!values.is_empty()).then(|| SharedResult {
        value: values.join(", "),
        unchanged: unchanged.join(", "),
    })
}

/// The launcher's own parameters: the host arguments, plus the configuration trial launches pass.
fn params(args: &[String], tuned: bool) -> Vec<String> {
    let mut p = args.to_vec();
    if tuned {
        p.push("_appyc_config=None".into());
    }
    p
}

/// The trip count of `range(start, stop, step)` on the host: plain arithmetic for the usual unit
/// step (a launcher runs on every call), Python's `len(range(...))` otherwise.
fn trip_expr(start: &Expr, stop: &Expr, step: &Expr) -> String {
    let [a, b, c] = [start, stop, step].map(python::expr);
    match (&start.kind, &step.kind) {
        (ExprKind::Int(0), ExprKind::Int(1)) => format!("int({b})"),
        (_, ExprKind::Int(1)) => format!("int({b}) - int({a})"),
        _ => format!("_appyc_trip({a}, {b}, {c})"),
    }
}

/// `trip_expr` as a factor of a product: `int(b) - int(a)` parenthesised.
fn trip_factor(start: &Expr, stop: &Expr, step: &Expr) -> String {
    let trips = trip_expr(start, stop, step);
    let is_difference =
        !matches!(start.kind, ExprKind::Int(0)) && matches!(step.kind, ExprKind::Int(1));
    if is_difference {
        format!("({trips})")
    } else {
        trips
    }
}

/// The extent of a strip loop over host bounds, as the launcher computes it.
fn strip_extent(start: &Expr, stop: &Expr) -> String {
    match &start.kind {
        ExprKind::Int(0) => format!("int({})", python::expr(stop)),
        _ => format!("int({}) - int({})", python::expr(stop), python::expr(start)),
    }
}

/// The constexprs a launcher derives from the chosen MVL and the sizes, on every launch:
/// `ROW_BLOCK` (`KernelCode::row_block`), sized by the prelude's
/// `_appyc_rows_a_program` from the row blocks' longest strip, and the `ONE_STRIP` switch
/// (`KernelCode::one_strip`): every switched strip loop has a non-empty extent of at
/// most one strip of its width (an empty one must run no trip, which only the loop does).
/// Returns the lines that compute them, to run after the configuration is unpacked and before
/// the grid is counted (a row block's grid counts blocks of `ROW_BLOCK` rows), and the entries
/// of the launch's constants.
fn derived_constants(code: &KernelCode) -> (Vec<String>, Vec<String>) {
    let (mut setup, mut entries) = (vec![], vec![]);
    if !code.row_block.is_empty() {
        let mut extents: Vec<String> = vec![];
        for strip in &code.row_block {
            match strip {
                Some((start, stop)) => push_unique(&mut extents, &strip_extent(start, stop)),
                None => {
                    extents.clear();
                    break;
                }
            }
        }
        setup.push(match extents.as_slice() {
            [] => "_appyc_row_block = 1".to_string(),
            [one] => format!("_appyc_row_block = _appyc_rows_a_program(_appyc_mvl, {one})"),
            _ => format!(
                "_appyc_row_block = _appyc_rows_a_program(_appyc_mvl, max({}))",
                extents.join(", ")
            ),
        });
        entries.push("\"ROW_BLOCK\": _appyc_row_block".to_string());
    }
    let mut tests: Vec<String> = vec![];
    for (start, stop, width) in &code.one_strip {
        let lanes = match width {
            Width::RowBlockLanes => "_appyc_mvl // _appyc_row_block".to_string(),
            other => width_host(*other),
        };
        push_unique(
            &mut tests,
            &format!("0 < {} <= {lanes}", strip_extent(start, stop)),
        );
    }
    if !tests.is_empty() {
        entries.push(format!("\"ONE_STRIP\": {}", tests.join(" and ")));
    }
    (setup, entries)
}

/// `ceil(n / w)` in Python, without a call (launchers run on every launch).
fn cdiv(n: &str, w: &str) -> String {
    format!("({n} + {w} - 1) // {w}")
}

fn width_host(w: Width) -> String {
    match w {
        Width::Mvl => "_appyc_mvl".into(),
        Width::Fixed(n) => n.to_string(),
        Width::RowBlock => "_appyc_row_block".into(),
        Width::RowBlockLanes => "(_appyc_mvl // _appyc_row_block)".into(),
    }
}

/// The launcher of a region on its own grid. Returns the launcher and its host arguments.
pub fn region_launcher(
    cx: &LaunchContext,
    name: &str,
    code: &KernelCode,
    k: &Kernel,
    tiles: Option<&TileCode>,
) -> (String, Vec<String>) {
    let (file, opts, sizes) = (cx.file, cx.opts, &cx.sizes);
    let host_args = region_host_args(code, k);
    let (trips, mut per_dim) = grid_trips(k);
    let prologue = prologue(&[k], &host_args, file);
    let grid_checks = if code.flat_grid {
        vec![]
    } else {
        grid_axis_checks(k, &per_dim, file)
    };
    let mut split_setup = vec![];
    if let (Some(split), [dim]) = (&k.split_rows, k.dims.as_slice()) {
        split_setup = split_rows_setup(k, split, dim, &per_dim[0], &host_args);
        per_dim = vec!["_appyc_splits".into(), "_appyc_blocks".into()];
    }
    per_dim.reverse(); // innermost loop on axis 0
    let mut flat_setup = vec![];
    let grid = if code.flat_grid {
        // On its own axes while they fit Triton's caps, else on axis 0 alone
        // (`_appyc_grid_axes`); the kernel's FLAT_GRID constexpr says which.
        flat_setup.push(format!(
            "_appyc_grid, _appyc_flat = _appyc_grid_axes(({},))",
            per_dim.join(", ")
        ));
        "_appyc_grid".to_string()
    } else if per_dim.is_empty() {
        "(1,)".to_string()
    } else {
        format!("({},)", per_dim.join(", "))
    };
    let tuning = code.uses_mvl.then(|| {
        tuning(
            ConfigKind::Grid,
            &k.name,
            code,
            default_mvl(&[k]),
            k.num_warps,
            &host_args,
            opts,
            sizes,
            has_row_tile(&[k]),
        )
    });
    // Constexpr arguments by name, then launch options (`_appyc_launch`).
    let (derived_setup, derived) = derived_constants(code);
    let (mut constants, options) = grid_launch_options(tuning.is_some(), k.num_warps, derived);
    if code.flat_grid {
        let sep = if constants.is_empty() { "" } else { ", " };
        constants = format!("{constants}{sep}\"FLAT_GRID\": _appyc_flat");
    }
    let mut call: Vec<String> = code.params.iter().map(Param::host_value).collect();
    // The tiled kernel takes the general kernel's arguments; it runs when the dtypes allow.
    let tile_launch = match (tiles, &k.tiles, trips.first()) {
        (Some(tile_code), Some(t), Some(rows)) => Some(super::tiles::launch(
            tile_code,
            t,
            &TileLaunchInput {
                call: &call,
                host_args: &host_args,
                rows: &rows.name,
                key: &tuple(&tuning_key(
                    &code_params_without_temps(code, &host_args),
                    sizes,
                )),
                autotune: opts.autotune,
                tf32: k.tf32,
            },
        )),
        _ => None,
    };
    let fast_path = tile_launch.as_ref().map_or(vec![], |t| t.fast_path.clone());
    if k.split_rows.is_some() {
        call.extend(SPLIT_PARAMS.map(String::from));
    }
    let mut launch = derived_setup;
    launch.extend(grid_checks);
    launch.extend(split_setup);
    launch.extend(flat_setup);
    launch.push("_appyc_launch(".into());
    launch.push(format!("    {}, {grid},", k.name));
    launch.push(format!("    ({},),", call.join(", ")));
    launch.push(format!("    {{{constants}}},{options}"));
    launch.push(")".into());
    let empty_test = trips
        .iter()
        .map(|t| format!("{} <= 0", t.name))
        .collect::<Vec<_>>()
        .join(" or ");
    let line = file.line_of(k.span.start as usize);
    let result = shared_result(k);
    // Replaying needs a launcher whose every decision follows from its arguments: a result
    // is read from the device, a temporary is allocated per call, and the tiled form reads
    // APPYC_TILES at each call.
    let replayed = result.is_none() && k.temps.is_empty() && tile_launch.is_none();
    let l = Launcher {
        launcher: name,
        kernel: &k.name,
        doc: format!(
            "Launches {} for the region at {}:{line}.",
            k.name, file.name
        ),
        params: params(&host_args, tuning.is_some()),
        prologue,
        trips,
        empty_test,
        fast_path,
        tuning,
        launch,
        result,
        replayed,
    };
    let text = l.render().expect("launcher template renders");
    let text = match tile_launch {
        Some(t) => format!("{}\n\n\n{text}", t.module),
        None => text,
    };
    (text, host_args)
}

/// A region launcher's own parameters: the kernel's host arguments less its temporaries, then
/// the `shared(x)` scalars it writes (their values seed its buffers).
fn region_host_args(code: &KernelCode, k: &Kernel) -> Vec<String> {
    let mut host_args = without_temps(code, &[k]);
    for s in written_shared(k) {
        if !host_args.contains(&s.var) {
            host_args.push(s.var.clone());
        }
    }
    host_args
}

/// Each grid dimension's trip count (`n_<var>`, computed before the launch) and the programs
/// it takes (the trips, or the trips over the lanes' width for a `simd` dimension), outermost
/// first.
fn grid_trips(k: &Kernel) -> (Vec<Trip>, Vec<String>) {
    let mut trips = vec![];
    let mut per_dim = vec![];
    for d in &k.dims {
        let t = format!("n_{}", d.var);
        let [start, stop, step] = [&d.range.start, &d.range.stop, &d.range.step].map(python::expr);
        if [&start, &stop, &step]
            .iter()
            .any(|e| e.contains("appy.MVL"))
        {
            // A loop stepping by MVL: its trip count is known once MVL is chosen.
            let mvl = |e: &str| e.replace("appy.MVL", "_appyc_mvl");
            per_dim.push(format!(
                "_appyc_trip({}, {}, {})",
                mvl(&start),
                mvl(&stop),
                mvl(&step)
            ));
            trips.push(Trip {
                name: t,
                count: format!("_appyc_trip({start}, {stop}, 1)"),
            });
            continue;
        }
        per_dim.push(match d.simd {
            None => t.clone(),
            Some(w) => cdiv(&t, &width_host(w)),
        });
        trips.push(Trip {
            name: t,
            count: trip_expr(&d.range.start, &d.range.stop, &d.range.step),
        });
    }
    (trips, per_dim)
}

/// Triton limits grid axes 1 and 2 to 65535 programs (axis 0, the innermost loop, to 2**31-1):
/// a check, with the loop's line, for each dimension on those axes.
fn grid_axis_checks(k: &Kernel, per_dim: &[String], file: &SourceFile) -> Vec<String> {
    let ndims = k.dims.len();
    let mut grid_checks = vec![];
    for (d, dim) in k.dims.iter().enumerate() {
        let axis = ndims - 1 - d;
        if axis > 0 {
            let at = format!("{}:{}", file.name, file.line_of(dim.span.start as usize));
            grid_checks.push(format!("if {} > 65535:", per_dim[d]));
            grid_checks.push(format!(
                "    raise ValueError(f\"{at}: the parallel loop over `{}` has {{{}}} iterations; Triton's grid axis {axis} takes at most 65535\")",
                dim.var, per_dim[d]
            ));
        }
    }
    grid_checks
}

/// The constexprs of a grid launch (`MVL` and the derived ones, when tuned) and its options:
/// the tuned warps, a pragma's fixed `num_warps`, or none.
fn grid_launch_options(
    tuned: bool,
    num_warps: Option<u32>,
    derived: Vec<String>,
) -> (String, String) {
    if tuned {
        let c = std::iter::once("\"MVL\": _appyc_mvl".to_string())
            .chain(derived)
            .collect::<Vec<_>>()
            .join(", ");
        (c, " num_warps=_appyc_warps,".to_string())
    } else if let Some(w) = num_warps {
        (String::new(), format!(" num_warps={w},"))
    } else {
        (String::new(), String::new())
    }
}

/// Before the launch of a kernel with split rows (`passes::split_rows`): how many splits, the
/// rows of each, and the scratch they combine through.
fn split_rows_setup(
    k: &Kernel,
    split: &SplitRows,
    dim: &ParallelDim,
    blocks: &str,
    host_args: &[String],
) -> Vec<String> {
    let StmtKind::For { range, .. } = &k.body[split.at].kind else {
        unreachable!("split_rows marks a loop")
    };
    let [start, stop] = [&range.start, &range.stop].map(python::expr);
    let width = width_host(dim.simd.expect("split_rows marks kernels with lanes"));
    let device = host_args
        .iter()
        .find(|a| kernel_array(k, a))
        .map_or("_appyc_device()".to_string(), |a| format!("{a}.device"));
    vec![
        format!("_appyc_blocks = {blocks}"),
        format!(
            "_appyc_splits, _appyc_split_rows = _appyc_row_split(_appyc_blocks, int({stop}) - int({start}), {TILE_ROWS}, {device})"
        ),
        format!(
            "_appyc_partials, _appyc_arrivals = _appyc_split_buffers({device}, _appyc_splits * _appyc_blocks * {width}, _appyc_blocks)"
        ),
    ]
}

/// Which other forms a persistent loop's launcher knows of.
#[derive(Clone, Copy, Default)]
pub struct LoopForms<'a> {
    /// The temporally blocked kernels' base name, when the loop has them.
    pub blocked: Option<&'a str>,
    /// The SPMD kernel of a `#pragma distribute` loop: over 2-D regions, its own register cap
    /// (`_APPYC_NVSHMEM_MAXNREG_DISTRIBUTE_2D`).
    pub distributed: bool,
}

/// The launcher of a persistent loop: one launch of its kernel for the whole loop. Returns the
/// launcher and its host arguments.
pub fn persistent_launcher(
    cx: &LaunchContext,
    name: &str,
    kernel: &str,
    code: &KernelCode,
    p: &Persistent,
    regions: &[&Kernel],
    forms: LoopForms,
) -> (String, Vec<String>) {
    let blocked = forms.blocked;
    let (file, opts, sizes) = (cx.file, cx.opts, &cx.sizes);
    let host_args = persistent_host_args(code, p, regions);
    let trip = format!("n_{}", p.var);
    let call = persistent_call(code, p);
    let work = programs_used(p, regions, &host_args);
    let num_warps = regions.iter().find_map(|k| k.num_warps);
    let mut tuning = tuning(
        ConfigKind::Persistent,
        kernel,
        code,
        default_mvl(regions),
        num_warps,
        &host_args,
        opts,
        sizes,
        has_row_tile(regions),
    );
    if !code.state.is_empty() && tuning.candidates != "()" {
        // A launch per phase would read the registers back after every phase: never faster.
        tuning.candidates = format!("tuple(c for c in {} if c[2])", tuning.candidates);
    }
    let phases = match (regions.len(), &p.test) {
        // A while loop runs until its test fails, in the kernel.
        (_, Some(_)) => "_APPYC_UNBOUNDED_PHASES".to_string(),
        (1, None) => trip.clone(),
        (n, None) => format!("{trip} * {n}"),
    };
    // A loop with nvshmem calls: every PE must run the same configuration, the kernel can
    // run only once per call (its puts and waits cannot be repeated for timing), so no
    // tuning: the default configuration, one cooperative launch on every PE.
    let comm = regions.iter().any(|k| k.comm.is_some());
    // Measured, not derived: the cap decides how ptxas orders a sweep's loads, and 72 won
    // for the 2-D distributed kernel and lost for the 3-D one (the runtime's comment); 1-D
    // ones were not measured and keep the default. Hand-written loops of 2-D sweeps take the
    // GPU model's measured MVL and cap where the runtime has them, unless `--mvl` decided
    // (measured with Listing 9's 1-D edge rows beside its 2-D sweeps; never on 3-D ones).
    let planes = regions
        .iter()
        .all(|k| k.comm.is_some() || k.dims.len() == 2);
    let sweeps_2d =
        regions.iter().any(|k| k.dims.len() == 2) && regions.iter().all(|k| k.dims.len() <= 2);
    let plane_defaults = sweeps_2d && !forms.distributed && opts.mvl.is_none();
    let nvshmem = comm.then(|| nvshmem_setup(regions, opts, num_warps, plane_defaults));
    let mut launch = persistent_launch(kernel, code, &phases, &work, &call, nvshmem);
    if comm {
        // What a wait that gives up names in its error: each phase's source line.
        let close = launch.len() - 1;
        let var = if p.var.is_empty() {
            "iteration"
        } else {
            &p.var
        };
        launch.insert(
            close,
            format!("    sites={},", comm_sites(file, var, regions)),
        );
        if forms.distributed && planes {
            launch.insert(
                close + 1,
                "    maxnreg=_APPYC_NVSHMEM_MAXNREG_DISTRIBUTE_2D,".into(),
            );
        } else if plane_defaults {
            launch.insert(close + 1, "    maxnreg=_appyc_maxnreg,".into());
        }
    }
    let result = loop_outputs(code, p, regions, &trip, &mut launch);
    let line = file.line_of(p.loop_span.start as usize);
    let mut doc = format!(
        "Runs the loop at {}:{line} on the GPU: one launch of the persistent kernel {kernel}.",
        file.name
    );
    if p.bind_if_ran {
        doc.push_str(&format!(
            " Returns one row of the values of {} after the loop, or none when no iteration runs.",
            p.outputs.join(", ")
        ));
    }
    let mut fast_path = match (blocked, &p.stencil, &p.stencil_2d) {
        (Some(b), Some(st), _) => blocked_launch(b, &trip, code, st),
        (Some(b), None, Some(st)) if st.swapped => {
            let call = blocked_2d_launch(b, &format!("{trip} // 2"), code, st);
            swapped_launch(call, &st.peeled, &trip, p, regions, file, &tuning.default)
        }
        (Some(b), None, Some(st)) => blocked_2d_launch(b, &trip, code, st),
        (Some(b), None, None) => match &p.stencil_3d {
            Some(st) if st.swapped => {
                let call = blocked_3d_launch(b, &format!("{trip} // 2"), code, st);
                swapped_launch(call, &st.peeled, &trip, p, regions, file, &tuning.default)
            }
            Some(st) => blocked_3d_launch(b, &trip, code, st),
            None => vec![],
        },
        _ => vec![],
    };
    let swapped = p.stencil_2d.as_ref().is_some_and(|st| st.swapped)
        || p.stencil_3d.as_ref().is_some_and(|st| st.swapped);
    if let (Some(r), Some(ret), false) = (&result, fast_path.last_mut(), swapped) {
        *ret = format!("    return {}", r.value);
    }
    let l = Launcher {
        launcher: name,
        kernel,
        doc,
        params: params(&host_args, true),
        prologue: loop_prologue(code, regions, &host_args, file),
        trips: match p.test {
            Some(_) => vec![],
            None => vec![Trip {
                name: trip.clone(),
                count: trip_expr(&p.range.start, &p.range.stop, &p.range.step),
            }],
        },
        // A while loop whose test fails at once runs no iteration: Python's test on the
        // host's values, as the kernel would read it first.
        empty_test: match &p.test {
            Some(t) => format!("not ({})", python::expr(t)),
            None => format!("{trip} <= 0"),
        },
        fast_path,
        tuning: (!comm).then_some(tuning),
        launch,
        result,
        // One launch runs the whole loop: nothing to save per call.
        replayed: false,
    };
    (l.render().expect("launcher template renders"), host_args)
}

/// The regions' launch checks and buffers; a shared scalar a region reduces gets the three
/// slots and the identity its persistent kernel cycles through (`loop_state`), typed from the
/// register's first value.
fn loop_prologue(
    code: &KernelCode,
    regions: &[&Kernel],
    host_args: &[String],
    file: &SourceFile,
) -> Vec<String> {
    let mut lines = prologue(regions, host_args, file);
    for k in regions {
        for s in &k.shared {
            let SharedUpdate::Reduce(op) = s.update else {
                continue;
            };
            let first = code
                .state
                .iter()
                .find(|r| r.name == s.var)
                .map_or(s.var.clone(), |r| r.initial.clone());
            let head = format!("{} = _appyc_shared_scalar({}, ", s.buffer, s.var);
            for l in lines.iter_mut().filter(|l| l.starts_with(&head)) {
                let rest = &l[head.len()..l.len() - 1];
                *l = format!(
                    "{} = _appyc_shared_slots({first}, {rest}, \"{}\")",
                    s.buffer,
                    op.name()
                );
            }
        }
    }
    lines
}

/// A loop with registers (`KernelCode::state`): the launch passes their first values and
/// keeps their last. The launcher returns the values of the loop's outputs: a scalar as
/// Python's type (a reduced one as its buffer's, an integer started from a value of unknown
/// type as that value's), a rebound name as the array its index picks among its group's, the
/// loop variable as its register or, without a break, the range's last value. Where the call
/// site binds them only when an iteration ran (`Persistent::bind_if_ran`), one row of them.
fn loop_outputs(
    code: &KernelCode,
    p: &Persistent,
    regions: &[&Kernel],
    trip: &str,
    launch: &mut [String],
) -> Option<SharedResult> {
    if !code.state.is_empty() {
        pass_registers(code, p, launch);
    }
    if p.outputs.is_empty() {
        return None;
    }
    // Register order: every group name's index (each group's names, slots first), then the
    // carried scalars, then the loop variable (as `LoopState` lays them out).
    let mut index: HashMap<&str, usize> = HashMap::new();
    let names = p.steps.groups.iter().flat_map(|g| g.names.iter());
    let names = names.chain(p.steps.carried.iter().map(|c| &c.name));
    let var = p.var_register().then_some(&p.var);
    for (k, n) in names.chain(var).enumerate() {
        index.insert(n, k);
    }
    let value = |o: &String| {
        if *o == p.var && var.is_none() {
            return last_of_range(&p.range, trip);
        }
        let r = index[o.as_str()];
        if let Some(g) = p.steps.groups.iter().find(|g| g.names.contains(o)) {
            return format!("({})[int(_appyc_state[{r}])]", tuple(&g.slots));
        }
        let reduced = regions
            .iter()
            .flat_map(|k| k.shared.iter())
            .find(|s| s.var == *o && matches!(s.update, SharedUpdate::Reduce(_)));
        if let Some(s) = reduced {
            return format!("_appyc_item_like({}, _appyc_state[{r}])", s.buffer);
        }
        let unknown_start = p
            .steps
            .carried
            .iter()
            .any(|c| c.name == *o && c.needs_initial && c.start.is_none());
        match code.state[r].kind {
            'f' => format!("float(_appyc_state[{r}])"),
            'b' => format!("bool(_appyc_state[{r}])"),
            _ if unknown_start => format!("_appyc_int_like({o}, _appyc_state[{r}])"),
            _ => format!("int(_appyc_state[{r}])"),
        }
    };
    let values: Vec<String> = p.outputs.iter().map(value).collect();
    Some(if p.bind_if_ran {
        let row = match values.as_slice() {
            [one] => one.clone(),
            _ => format!("({})", values.join(", ")),
        };
        SharedResult {
            value: format!("({row},)"),
            unchanged: "()".into(),
        }
    } else {
        SharedResult {
            value: values.join(", "),
            unchanged: p.outputs.join(", "),
        }
    })
}

/// The launch passes the registers' first values (and, for a loop with an exit test, which
/// register stops a launch per phase) and keeps their last in `_appyc_state`.
fn pass_registers(code: &KernelCode, p: &Persistent, launch: &mut [String]) {
    let first: Vec<String> = code.state.iter().map(|r| r.initial.clone()).collect();
    let kinds: String = code.state.iter().map(|r| r.kind).collect();
    let call = launch
        .iter_mut()
        .find(|l| {
            l.starts_with("_appyc_persistent(") || l.starts_with("_appyc_nvshmem_persistent(")
        })
        .expect("a persistent loop's launch");
    *call = format!("_appyc_state = {call}");
    let close = launch.iter().rposition(|l| l == ")").unwrap();
    // The running register (a loop with an exit test) is the last: a launch per phase stops
    // when it clears.
    let stop = if p.test.is_some() || p.breaks() {
        format!(" stop={},", code.state.len() - 1)
    } else {
        String::new()
    };
    launch[close] = format!(
        "    state=({}), kinds=\"{kinds}\",{stop}\n    )",
        tuple(&first)
    );
}

/// The last value of a range's variable after `trip` (> 0) iterations, as Python's int.
fn last_of_range(range: &Range, trip: &str) -> String {
    let [start, step] = [&range.start, &range.step].map(python::expr);
    match (&range.start.kind, &range.step.kind) {
        (ExprKind::Int(0), ExprKind::Int(1)) => format!("{trip} - 1"),
        (_, ExprKind::Int(1)) => format!("int({start}) + {trip} - 1"),
        _ => format!("int({start}) + ({trip} - 1) * int({step})"),
    }
}

/// A persistent launcher's own parameters: the kernel's host arguments less its temporaries,
/// then the names the loop's bounds read, which the host evaluates, as Python does once before
/// the loop.
fn persistent_host_args(code: &KernelCode, p: &Persistent, regions: &[&Kernel]) -> Vec<String> {
    let mut host_args = without_temps(code, regions);
    let test = p.test.iter();
    for e in [&p.range.start, &p.range.stop, &p.range.step]
        .into_iter()
        .chain(test)
    {
        e.walk(&mut |x| match &x.kind {
            ExprKind::Name(n) | ExprKind::Shape { array: n, .. } if !host_args.contains(n) => {
                host_args.push(n.clone())
            }
            _ => {}
        });
    }
    // Outputs surely bound before the loop come back unchanged when no iteration runs.
    if !p.bind_if_ran {
        for o in &p.outputs {
            push_unique(&mut host_args, o);
        }
    }
    host_args
}

/// The kernel's arguments: its parameters, then the loop's start and step where the kernel
/// takes them (not 0 and 1).
fn persistent_call(code: &KernelCode, p: &Persistent) -> Vec<String> {
    let [start, _, step] = [&p.range.start, &p.range.stop, &p.range.step].map(python::expr);
    let mut call: Vec<String> = code.params.iter().map(Param::host_value).collect();
    if !matches!(p.range.start.kind, ExprKind::Int(0)) {
        call.push(start);
    }
    if !matches!(p.range.step.kind, ExprKind::Int(1)) {
        call.push(step);
    }
    call
}

/// How many programs the widest region can use, when the host knows it without running the
/// loop (`None` otherwise): more would only wait at the barriers.
fn programs_used(p: &Persistent, regions: &[&Kernel], host_args: &[String]) -> String {
    let mut work = vec![];
    for k in regions {
        let mut programs = vec![];
        for d in &k.dims {
            let exprs = [&d.range.start, &d.range.stop, &d.range.step];
            let known = exprs.iter().all(|e| {
                !e.mentions(&p.var)
                    && !p.steps.carried.iter().any(|c| e.mentions(&c.name))
                    && !e.any(&mut |x| {
                        matches!(x.kind, ExprKind::Subscript { .. })
                            || matches!(&x.kind, ExprKind::Name(n) if !host_args.contains(n))
                    })
            });
            if !known {
                programs.clear();
                work.clear();
                break;
            }
            // A factor: the counts of several dimensions are multiplied below.
            let trips = trip_factor(&d.range.start, &d.range.stop, &d.range.step);
            programs.push(match d.simd {
                None => trips,
                Some(w) => format!("({})", cdiv(&trips, &width_host(w))),
            });
        }
        if k.dims.is_empty() {
            programs.push("1".into());
        }
        if programs.is_empty() {
            work.clear();
            break;
        }
        let programs = programs.join(" * ");
        if !work.contains(&programs) {
            work.push(programs);
        }
    }
    match work.len() {
        0 => "None".to_string(),
        1 => work.remove(0),
        _ => format!("max({})", work.join(", ")),
    }
}

/// Before the launch of a loop with nvshmem calls: the check that the arrays its calls name are
/// symmetric, and the default configuration, the same on every PE (`plane_defaults`: the GPU
/// model's measured MVL and register cap for 2-D sweeps, `_appyc_nvshmem_plane_config`).
fn nvshmem_setup(
    regions: &[&Kernel],
    opts: LaunchOptions,
    num_warps: Option<u32>,
    plane_defaults: bool,
) -> Vec<String> {
    let mvl = opts
        .mvl
        .unwrap_or_else(|| default_mvl(regions).min(COMM_DEFAULT_MVL));
    let warps = num_warps.unwrap_or(4);
    let mut symmetric: Vec<String> = vec![];
    for k in regions {
        let views: Vec<&Expr> = match &k.comm {
            Some(Comm::Put { dest, flag, .. }) => std::iter::once(dest).chain(flag).collect(),
            Some(Comm::Wait { flag, .. }) => vec![flag],
            None => vec![],
        };
        for v in views {
            if let ExprKind::Subscript { array, .. } = &v.kind {
                if !symmetric.contains(array) {
                    symmetric.push(array.clone());
                }
            }
        }
    }
    vec![
        format!("_appyc_nvshmem_check_symmetric({})", tuple(&symmetric)),
        if plane_defaults {
            format!("_appyc_mvl, _appyc_warps, _appyc_maxnreg = _appyc_nvshmem_plane_config({mvl}, {warps})")
        } else {
            format!("_appyc_mvl, _appyc_warps = _appyc_nvshmem_config({mvl}, {warps})")
        },
    ]
}

/// `(source, loop variable, {line: text})` of a loop's phases, as `_appyc_nvshmem_check`
/// takes them.
fn comm_sites(file: &SourceFile, var: &str, regions: &[&Kernel]) -> String {
    let lines: Vec<String> = regions
        .iter()
        .map(|k| {
            let line = file.line_of(k.span.start as usize);
            format!("{line}: {}", py_string(file.line_text(line).trim()))
        })
        .collect();
    format!(
        "({}, {}, {{{}}})",
        py_string(&file.name),
        py_string(var),
        lines.join(", ")
    )
}

/// `s` as a Python string literal.
fn py_string(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// The launch lines of a persistent kernel: `_appyc_persistent` with the tuned configuration,
/// or, after `nvshmem`'s setup, `_appyc_nvshmem_persistent` with the default one.
fn persistent_launch(
    kernel: &str,
    code: &KernelCode,
    phases: &str,
    work: &str,
    call: &[String],
    nvshmem: Option<Vec<String>>,
) -> Vec<String> {
    // After MVL is known and before the work is counted (row blocks count blocks of rows).
    let (derived_setup, derived) = derived_constants(code);
    let constants = (!derived.is_empty()).then(|| format!("    {{{}}},", derived.join(", ")));
    let (mut l, start, config) = match nvshmem {
        Some(setup) => (
            setup,
            "_appyc_nvshmem_persistent(",
            "    _appyc_mvl, _appyc_warps,",
        ),
        None => (
            vec![],
            "_appyc_persistent(",
            "    _appyc_mvl, _appyc_warps, _appyc_warps_per_sm,",
        ),
    };
    l.extend(derived_setup);
    l.extend([
        start.to_string(),
        format!("    {kernel}, {phases}, {work},"),
        format!("    ({}),", tuple(call)),
        config.to_string(),
    ]);
    l.extend(constants);
    l.push(")".to_string());
    l
}

/// The temporally blocked kernel's launch (`_appyc_blocked`), taken when the arrays allow it.
fn blocked_launch(
    blocked: &str,
    trip: &str,
    code: &KernelCode,
    stencil: &crate::schedule::temporal::Stencil,
) -> Vec<String> {
    let arrays: Vec<String> = code
        .params
        .iter()
        .filter(|q| matches!(q, Param::Array(_)))
        .map(Param::host_value)
        .collect();
    let scalars: Vec<String> = code
        .params
        .iter()
        .filter(|q| matches!(q, Param::IntScalar(_) | Param::FloatScalar(_)))
        .map(Param::host_value)
        .collect();
    let reach = stencil.radius * stencil.phases.len() as i64;
    let call = format!(
        "_appyc_blocked({blocked}, {blocked}_gluon, {trip}, ({}), ({}), {reach}",
        tuple(&arrays),
        tuple(&scalars)
    );
    if code.state.is_empty() {
        return vec![format!("if {call}) is not None:"), "    return".into()];
    }
    // The registers as the plain launch passes them; the loop's outputs read `_appyc_state`.
    let first: Vec<String> = code.state.iter().map(|r| r.initial.clone()).collect();
    let kinds: String = code.state.iter().map(|r| r.kind).collect();
    vec![
        format!(
            "_appyc_state = {call}, state=({}), kinds=\"{kinds}\")",
            tuple(&first)
        ),
        "if _appyc_state is not None:".into(),
        "    return".into(),
    ]
}

/// The blocked launch of a loop that steps one 2-D or 3-D stencil and swaps its arrays
/// (`schedule::temporal::stencil_2d_swapped`, `stencil_3d_swapped`; `call`: the blocked
/// kernels' launch over `trip // 2` pairs of iterations): the boundary copies once (the
/// source's own text, which torch runs as NumPy would), then the blocked kernels for the pairs of
/// iterations, after which every name holds the array it started with; an odd last iteration
/// falls through to the plain kernel below, at its default configuration (one step is not
/// worth tuning for). When the blocked kernels decline, the plain kernel runs every
/// iteration: the copies it repeats change nothing.
fn swapped_launch(
    mut call: Vec<String>,
    peeled: &[usize],
    trip: &str,
    p: &Persistent,
    regions: &[&Kernel],
    file: &SourceFile,
    default_config: &str,
) -> Vec<String> {
    let mut copies = vec![];
    for &r in peeled {
        let k = regions[r];
        let text = file.text[k.span.start as usize..k.span.end as usize].trim();
        if text.contains('\n') {
            return vec![]; // a statement over several lines: keep the plain kernel
        }
        copies.push(format!("    {text}"));
    }
    call.truncate(1);
    let row = p.outputs.join(", ");
    let identity = match (p.outputs.len(), p.bind_if_ran) {
        (0, _) => String::new(),
        (1, true) => format!(" ({row},)"),
        (_, true) => format!(" (({row}),)"),
        (_, false) => format!(" {row}"),
    };
    let mut lines = vec![format!("if {trip} >= 2:")];
    lines.extend(copies);
    lines.push(format!("    {}", call[0]));
    lines.extend([
        format!("        if {trip} % 2 == 0:"),
        format!("            return{identity}"),
        format!("        {trip} = 1"),
        "        if _appyc_config is None:".into(),
        format!("            _appyc_config = {default_config}"),
    ]);
    lines
}

/// The 2-D blocked kernels' launch (`_appyc_blocked_2d`): the Gluon kernel and its Triton
/// twin, the state array (phase 0's input) and the other, the scalars the kernels take.
fn blocked_2d_launch(
    blocked: &str,
    trip: &str,
    code: &KernelCode,
    stencil: &crate::schedule::temporal::Stencil2d,
) -> Vec<String> {
    let guard = if stencil.diagonal { 2 } else { 1 };
    let (state, other) = stencil.arrays();
    blocked_nd_launch(
        "_appyc_blocked_2d",
        blocked,
        trip,
        code,
        (state, other),
        stencil.reach(),
        guard,
    )
}

/// The 3-D blocked kernels' launch (`_appyc_blocked_3d`), spelled as the 2-D one.
fn blocked_3d_launch(
    blocked: &str,
    trip: &str,
    code: &KernelCode,
    stencil: &crate::schedule::temporal::Stencil3d,
) -> Vec<String> {
    let guard = if stencil.diagonal { 2 } else { 1 };
    let (state, other) = stencil.arrays();
    blocked_nd_launch(
        "_appyc_blocked_3d",
        blocked,
        trip,
        code,
        (state, other),
        stencil.reach(),
        guard,
    )
}

/// `if launch(gluon, twin, trip, state, other, (scalars), reach, guard) is not None: return`.
fn blocked_nd_launch(
    launch: &str,
    blocked: &str,
    trip: &str,
    code: &KernelCode,
    (state, other): (&str, &str),
    reach: i64,
    guard: i64,
) -> Vec<String> {
    let array = |name: &str| {
        code.params
            .iter()
            .find(|q| matches!(q, Param::Array(a) if a == name))
            .map(Param::host_value)
            .expect("a phase's array is a kernel parameter")
    };
    let scalars: Vec<String> = code
        .params
        .iter()
        .filter(|q| matches!(q, Param::IntScalar(_) | Param::FloatScalar(_)))
        .map(Param::host_value)
        .collect();
    vec![
        format!(
            "if {launch}({blocked}_gluon, {blocked}_twin, {trip}, {}, {}, ({}), {reach}, {guard}) is not None:",
            array(state),
            array(other),
            tuple(&scalars),
        ),
        "    return".into(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lowered(src: &str) -> Kernel {
        let f = crate::passes::attach_pragmas::tests::attached(src).unwrap();
        let mut k = crate::passes::outline::run(&f).unwrap().remove(0);
        crate::passes::strip_mine::run(&mut k).unwrap();
        k
    }

    #[test]
    fn a_row_tile_kernel_defaults_to_narrow_vectors() {
        let tiled = lowered("def f(A, x, M, N):\n    #pragma parallel for simd\n    for j in range(N):\n        s = 0.0\n        for i in range(M):\n            s += A[i, j]\n        x[j] = s\n");
        assert!(has_row_tile(&[&tiled]));
        assert_eq!(default_mvl(&[&tiled]), ROW_TILE_DEFAULT_MVL);
        // The same walk that also stores per row stays a scalar loop, with today's default.
        let plain = lowered("def f(A, P, M, N):\n    #pragma parallel for simd\n    for j in range(N):\n        s = 0.0\n        for i in range(M):\n            s += A[i, j]\n            P[i, j] = s\n");
        assert!(!has_row_tile(&[&plain]));
        assert_eq!(default_mvl(&[&plain]), 256);
    }

    fn sizes(params: &[&str], body_src: &str) -> SizeNames {
        let src = format!("def f({}):\n{body_src}", params.join(", "));
        let module = <ast::Suite as rustpython_parser::Parse>::parse(&src, "t.py").unwrap();
        let ast::Stmt::FunctionDef(f) = &module[0] else {
            panic!()
        };
        SizeNames::of(f)
    }

    #[test]
    fn keys_hold_extents_and_dtypes_only() {
        let s = sizes(
            &["A", "N", "alpha", "k0"],
            "    M = N - 1\n    for k in range(N):\n        pass\n",
        );
        let params = vec![
            Param::Array("A".into()),
            Param::IntScalar("N".into()),
            Param::IntScalar("M".into()),
            Param::IntScalar("k".into()),
            Param::FloatScalar("alpha".into()),
            Param::Stride("A".into(), 0),
            Param::Shape("A".into(), 1),
        ];
        assert_eq!(
            tuning_key(&params, &s),
            vec!["_appyc_size(N)", "_appyc_size(A.shape[1])", "A.dtype"]
        );
    }

    #[test]
    fn a_parameter_the_function_reassigns_is_not_a_size() {
        let s = sizes(&["A", "N"], "    N = N // 2\n");
        let params = vec![Param::Array("A".into()), Param::IntScalar("N".into())];
        assert_eq!(tuning_key(&params, &s), vec!["A.dtype"]);
    }

    #[test]
    fn a_host_loop_variable_is_never_a_size() {
        let s = sizes(&["A", "N", "k"], "    for k in range(N):\n        pass\n");
        let params = vec![Param::IntScalar("k".into()), Param::IntScalar("N".into())];
        assert_eq!(tuning_key(&params, &s), vec!["_appyc_size(N)"]);
    }

    #[test]
    fn extents_read_once_from_a_shape_are_sizes() {
        let s = sizes(
            &["A", "B"],
            "    M, N = A.shape\n    L = B.shape[0]\n    K = len(B)\n    J = N - 1\n",
        );
        let params: Vec<Param> = ["M", "N", "L", "K", "J"]
            .iter()
            .map(|n| Param::IntScalar(n.to_string()))
            .collect();
        assert_eq!(
            tuning_key(&params, &s),
            vec![
                "_appyc_size(M)",
                "_appyc_size(N)",
                "_appyc_size(L)",
                "_appyc_size(K)"
            ]
        );
    }

    #[test]
    fn an_extent_assigned_again_is_not_a_size() {
        let s = sizes(
            &["A"],
            "    M, N = A.shape\n    for t in range(3):\n        N = t\n",
        );
        let params = vec![Param::IntScalar("M".into()), Param::IntScalar("N".into())];
        assert_eq!(tuning_key(&params, &s), vec!["_appyc_size(M)"]);
    }
}
