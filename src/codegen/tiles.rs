//! The tile printer: a `TileNest` (see `passes::tile_dot`) as a Triton kernel of 2-D output
//! tiles, one program per `BI x BJ` tile, `tl.dot` over `BK`-blocks of each reduction, the
//! epilogue fused into the one store; and the launcher lines that take it when the arrays'
//! dtypes allow (one floating dtype), falling back to the general kernel otherwise.
//!
//! Operand tiles are `tl.where(mask, value, 0)`: lanes outside the rows, columns or an
//! iteration's reduction range contribute nothing, whatever a masked load returned.

use super::analysis::analyse;
use super::hash::text_hash;
use super::kernel_code::signature;
use super::triton::cx::Cx;
use super::writer::Writer;
use crate::diag::Result;
use crate::frontend::source::SourceFile;
use crate::ir::*;
use std::collections::{BTreeSet, HashMap, HashSet};

/// Tile shape and pipelining: the fastest of ten shapes measured for fp64 and fp32 (ieee) on
/// the H100 at NPBench's gemm and syrk sizes (bench/gpu_tile_probe.py, log in
/// bench/tile_results.md; 64 x 64 x 16 with 4 warps and 3 stages was 76 % of cuBLAS for fp64
/// gemm, the next shape 8 % slower). The default of the tuning table (`_APPYC_TILE_CANDIDATES`).
const BI: u32 = 64;
const BJ: u32 = 64;
const BK: u32 = 16;
/// Row tiles per group of the grouped program order.
const TILE_GROUP_ROWS: u32 = 8;
const STAGES: u32 = 3;
const WARPS: u32 = 4;

pub struct TileCode {
    pub name: String,
    pub text: String,
}

/// The names the kernel makes up, fresh against the region's own.
struct Names {
    used: HashSet<String>,
    row0: String,
    row1: String,
    ti: String,
    ti_ok: String,
    col_base: String,
    col0: String,
    col_lo: String,
    col_hi: String,
    tj: String,
    tj_ok: String,
    tile_ok: String,
    tile: String,
    group_first: String,
    group_rows: String,
    tile_row: String,
    tile_col: String,
    /// Whether the tile's columns hold any of its rows' columns; only for column bounds that
    /// move with the row (`None` otherwise).
    live: Option<String>,
    acc: String,
    kb: String,
    tk: String,
    k_lo: String,
    k_hi: String,
    a_ok: String,
    b_ok: String,
}

impl Names {
    fn new(k: &Kernel) -> Names {
        let mut used: HashSet<String> = k.names();
        let mut n = |base: &str| fresh_name(base, &mut used);
        Names {
            used: HashSet::new(),
            row0: n("row0"),
            row1: n("row1"),
            ti: n("ti"),
            ti_ok: n("ti_ok"),
            col_base: n("col_base"),
            col0: n("col0"),
            col_lo: n("col_lo"),
            col_hi: n("col_hi"),
            tj: n("tj"),
            tj_ok: n("tj_ok"),
            tile_ok: n("tile_ok"),
            tile: n("tile"),
            group_first: n("group_first"),
            group_rows: n("group_rows"),
            tile_row: n("tile_row"),
            tile_col: n("tile_col"),
            live: Some(n("live")),
            acc: n("acc"),
            kb: n("kb"),
            tk: n("tk"),
            k_lo: n("k_lo"),
            k_hi: n("k_hi"),
            a_ok: n("a_ok"),
            b_ok: n("b_ok"),
        }
        .with_used(used)
    }

    fn with_used(mut self, used: HashSet<String>) -> Names {
        self.used = used;
        self
    }
}

/// Terms that share a scale and a sign accumulate into one tile, so that the scale and sign
/// are applied once, in the epilogue, and every operand is a plain load into `tl.dot`.
struct Group {
    scale: Option<Expr>,
    negated: bool,
    acc: String,
}

fn groups(t: &TileNest, n: &mut Names) -> Vec<Group> {
    let mut out: Vec<Group> = vec![];
    for term in t.reductions.iter().flat_map(|r| &r.terms) {
        if group_of(&out, term).is_none() {
            let acc = if out.is_empty() {
                n.acc.clone()
            } else {
                fresh_name("acc", &mut n.used)
            };
            out.push(Group {
                scale: term.scale.clone(),
                negated: term.negated,
                acc,
            });
        }
    }
    out
}

fn group_of(groups: &[Group], term: &DotTerm) -> Option<usize> {
    groups.iter().position(|g| {
        g.negated == term.negated
            && match (&g.scale, &term.scale) {
                (None, None) => true,
                (Some(a), Some(b)) => same_place(a, b),
                _ => false,
            }
    })
}

/// `Σ ± scale * acc` over the groups: what the epilogue's sum stands for.
fn combined_sum(groups: &[Group], span: crate::frontend::source::Span) -> Expr {
    let mut sum: Option<Expr> = None;
    for g in groups {
        let mut e = Expr::name(&g.acc, span);
        if let Some(s) = &g.scale {
            e = Expr::binary(BinOp::Mul, s.clone(), e);
        }
        sum = Some(match (sum, g.negated) {
            (None, false) => e,
            (None, true) => Expr::new(
                ExprKind::Unary {
                    op: UnaryOp::Neg,
                    operand: Box::new(e),
                },
                span,
            ),
            (Some(acc), negated) => {
                Expr::binary(if negated { BinOp::Sub } else { BinOp::Add }, acc, e)
            }
        });
    }
    sum.expect("a tile nest has a term")
}

/// A dot operand: a masked load straight into `tl.dot` (zeros outside the mask), or any other
/// expression zeroed outside it.
fn operand(cx: &mut Cx, e: &Expr, mask: &str, dtype: &str) -> Result<String> {
    let text = if matches!(e.kind, ExprKind::Subscript { .. }) {
        format!("tl.load({}, mask={mask}, other=0.0)", cx.pointer(e)?)
    } else {
        format!("tl.where({mask}, {}, 0)", cx.expr(e)?)
    };
    Ok(format!("{text}.to({dtype})"))
}

/// `e` with the variable `var` replaced by the name `by`.
fn at(e: &Expr, var: &str, by: &str) -> Expr {
    e.clone().rewrite(&mut |x| match &x.kind {
        ExprKind::Name(n) if n == var => Expr::name(by, x.span),
        _ => x,
    })
}

/// `e` with `var` replaced by an expression (for host-side bounds).
fn at_expr(e: &Expr, var: &str, by: &Expr) -> Expr {
    e.clone().rewrite(&mut |x| match &x.kind {
        ExprKind::Name(n) if n == var => by.clone(),
        _ => x,
    })
}

/// The printer's view of names: which tile lanes a variable spells and which masks guard the
/// loads that mention it.
fn view(cx: &mut Cx, spelled: &[(&str, String)], mask: Option<&str>) {
    cx.tile_names = spelled
        .iter()
        .map(|(v, s)| (v.to_string(), s.clone()))
        .collect::<HashMap<_, _>>();
    cx.masks = match mask {
        Some(m) => spelled
            .iter()
            .map(|(v, _)| (v.to_string(), BTreeSet::from([m.to_string()])))
            .collect(),
        None => HashMap::new(),
    };
}

/// The tiled kernel of region `k` (whose general kernel has the same parameters, so one launcher
/// argument list serves both).
pub fn kernel(k: &Kernel, t: &TileNest, file: &SourceFile) -> Result<TileCode> {
    let analysis = analyse(k);
    let name = format!("{}_tiles", k.name);
    let mut n = Names::new(k);
    let groups = groups(t, &mut n);
    let mut cx = Cx::new(file, k, &analysis);
    for v in [&t.row.var, &t.col.var]
        .into_iter()
        .chain(t.reductions.iter().map(|r| &r.axis.var))
    {
        cx.int_names.insert(v.clone());
    }
    let ExprKind::Subscript { array: out, .. } = &t.target.kind else {
        unreachable!("tile_dot checks the target")
    };
    let dtype = format!("{out}.dtype.element_ty");
    let (i, j) = (t.row.var.as_str(), t.col.var.as_str());

    let mut w = Writer::new(0);
    w.line("@triton.jit");
    let mut sig = signature(&analysis.params);
    for c in ["BI", "BJ", "BK", "STAGES", "PRECISION"] {
        sig.push(format!("{c}: tl.constexpr"));
    }
    w.line(format!("def {name}({}):", sig.join(", ")));
    w.indent();
    cx.pragma_comment(&mut w, k);
    w.line(format!(
        "# as {BI} x {BJ} tiles of ({i}, {j}), tl.dot over blocks of the reduction (passes/tile_dot.rs)"
    ));
    view(&mut cx, &[], None);
    let row_start = cx.expr(&t.row.start)?;
    let row_stop = cx.expr(&t.row.stop)?;
    // Grouped order: consecutive programs walk down GROUP_ROWS row tiles before moving one
    // column right, so the tiles running at once share B's columns in the L2 (5 % on gemm at
    // NPBench's paper size on the H100, bench/gaps_h100.log).
    w.line(format!(
        "{} = tl.program_id(1) * tl.num_programs(0) + tl.program_id(0)",
        n.tile
    ));
    w.line(format!(
        "{} = {} // ({TILE_GROUP_ROWS} * tl.num_programs(0)) * {TILE_GROUP_ROWS}",
        n.group_first, n.tile
    ));
    w.line(format!(
        "{} = tl.minimum(tl.num_programs(1) - {}, {TILE_GROUP_ROWS})",
        n.group_rows, n.group_first
    ));
    w.line(format!(
        "{} = {} + {} % ({TILE_GROUP_ROWS} * tl.num_programs(0)) % {}",
        n.tile_row, n.group_first, n.tile, n.group_rows
    ));
    w.line(format!(
        "{} = {} % ({TILE_GROUP_ROWS} * tl.num_programs(0)) // {}",
        n.tile_col, n.tile, n.group_rows
    ));
    w.line(format!("{} = {row_start} + {} * BI", n.row0, n.tile_row));
    w.line(format!("{} = {} + tl.arange(0, BI)", n.ti, n.row0));
    w.line(format!("{} = {} < {row_stop}", n.ti_ok, n.ti));
    w.line(format!(
        "{} = tl.minimum({} + BI, {row_stop}) - 1",
        n.row1, n.row0
    ));
    // Column bounds are affine in the row: their extremes over a set of rows are at its ends.
    let extremes = |cx: &mut Cx, e: &Expr, first: &str, last: &str, pick: &str| -> Result<String> {
        if e.mentions(i) {
            let a = cx.expr(&at(e, i, first))?;
            let b = cx.expr(&at(e, i, last))?;
            Ok(format!("tl.{pick}({a}, {b})"))
        } else {
            cx.expr(e)
        }
    };
    let last_row = Expr::binary(
        BinOp::Sub,
        t.row.stop.clone(),
        Expr::int(1, t.row.stop.span),
    );
    let last_row_text = format!("({})", cx.expr(&last_row)?);
    let base = extremes(&mut cx, &t.col.start, &row_start, &last_row_text, "minimum")?;
    w.line(format!("{} = {base}", n.col_base));
    w.line(format!("{} = {} + {} * BJ", n.col0, n.col_base, n.tile_col));
    w.line(format!("{} = {} + tl.arange(0, BJ)", n.tj, n.col0));
    let lo = extremes(&mut cx, &t.col.start, &n.row0, &n.row1, "minimum")?;
    let hi = extremes(&mut cx, &t.col.stop, &n.row0, &n.row1, "maximum")?;
    w.line(format!("{} = {lo}", n.col_lo));
    w.line(format!("{} = {hi}", n.col_hi));
    w.line(format!(
        "{0} = ({1} >= {2}) & ({1} < {3})",
        n.tj_ok, n.tj, n.col_lo, n.col_hi
    ));
    // Tiles wholly outside the columns of their rows (a triangle's other half) reduce over an
    // empty range and store nothing (their column mask is all false). Not an `if` around the
    // tile: Triton pipelines a k loop inside one worse (13 % on gemm, bench/gaps_h100.log).
    // Columns that do not move with the row put every launched tile inside them.
    let triangular = t.col.start.mentions(i) || t.col.stop.mentions(i);
    if !triangular {
        n.live = None;
    }
    if let Some(live) = &n.live {
        w.line(format!(
            "{live} = ({0} < {1}) & ({0} + BJ > {2})",
            n.col0, n.col_hi, n.col_lo
        ));
    }
    let rows_2d = format!("{}[:, None]", n.ti);
    let cols_2d = format!("{}[None, :]", n.tj);
    let mut tile_ok = format!("{}[:, None] & {}[None, :]", n.ti_ok, n.tj_ok);
    if triangular {
        view(&mut cx, &[(i, rows_2d.clone())], None);
        let lo = cx.expr(&t.col.start)?;
        let hi = cx.expr(&t.col.stop)?;
        tile_ok.push_str(&format!(" & ({cols_2d} >= {lo}) & ({cols_2d} < {hi})"));
    }
    for g in &groups {
        w.line(format!("{} = tl.zeros((BI, BJ), dtype={dtype})", g.acc));
    }
    for r in &t.reductions {
        reduction(&mut w, &mut cx, t, r, &n, &groups, &dtype)?;
    }
    // The store's mask is made after the k loops: made before, a BI x BJ mask would stay live
    // in registers through them.
    w.line(format!("{} = {tile_ok}", n.tile_ok));
    view(&mut cx, &[(i, rows_2d), (j, cols_2d)], Some(&n.tile_ok));
    let epilogue = at_expr(&t.epilogue, &t.acc, &combined_sum(&groups, t.target.span));
    let value = cx.expr(&epilogue)?;
    let ptr = cx.pointer(&t.target)?;
    w.line(format!(
        "tl.store({ptr}, {value}, mask={})  {}",
        n.tile_ok,
        src_comment(file, t.target.span)
    ));
    w.dedent();
    Ok(TileCode {
        name,
        text: w.finish(),
    })
}

fn src_comment(file: &SourceFile, span: crate::frontend::source::Span) -> String {
    format!("# {}:{}", file.name, file.line_of(span.start as usize))
}

/// One reduction loop: its bounds over the tile, then `acc += dot(left, right)` per term.
fn reduction(
    w: &mut Writer,
    cx: &mut Cx,
    t: &TileNest,
    r: &TileReduction,
    n: &Names,
    groups: &[Group],
    dtype: &str,
) -> Result<()> {
    let (i, j, k) = (t.row.var.as_str(), t.col.var.as_str(), r.axis.var.as_str());
    // A bound that moves with the row (column) is taken at its extreme over the tile's valid
    // rows (columns); each lane is then masked by its own bound.
    let first_col = format!("tl.maximum({}, {})", n.col0, n.col_lo);
    let bound = |cx: &mut Cx, e: &Expr, pick: &str| -> Result<String> {
        let (var, lanes, ok, first) = if e.mentions(i) {
            (i, &n.ti, &n.ti_ok, n.row0.clone())
        } else if e.mentions(j) {
            (j, &n.tj, &n.tj_ok, first_col.clone())
        } else {
            view(cx, &[], None);
            return cx.expr(e);
        };
        view(cx, &[(var, lanes.clone())], None);
        let per_lane = cx.expr(e)?;
        view(cx, &[], None);
        let at_first = cx.expr(&at(e, var, &first))?;
        Ok(format!(
            "tl.{pick}(tl.where({ok}, {per_lane}, {at_first}), axis=0)"
        ))
    };
    let k_lo = bound(cx, &r.axis.start, "min")?;
    let k_hi = bound(cx, &r.axis.stop, "max")?;
    w.line(format!("{} = {k_lo}", n.k_lo));
    if let Some(live) = &n.live {
        w.line(format!("{} = tl.where({live}, {k_hi}, {})", n.k_hi, n.k_lo));
    } else {
        w.line(format!("{} = {k_hi}", n.k_hi));
    }
    w.line(format!(
        "for {} in tl.range({}, {}, BK, num_stages=STAGES):  {}",
        n.kb,
        n.k_lo,
        n.k_hi,
        src_comment(cx_file(cx), r.axis.start.span)
    ));
    w.indent();
    w.line(format!("{} = {} + tl.arange(0, BK)", n.tk, n.kb));
    let k_row = format!("{}[None, :]", n.tk);
    let k_col = format!("{}[:, None]", n.tk);
    // Each operand's mask: its lanes, and the reduction bounds that move with its variable.
    let operand_mask =
        |cx: &mut Cx, var: &str, lanes: String, ok: String, k_lanes: &str| -> Result<String> {
            let mut m = vec![ok, format!("({k_lanes} < {})", n.k_hi)];
            view(cx, &[(var, lanes)], None);
            if r.axis.start.mentions(var) {
                m.push(format!("({k_lanes} >= {})", cx.expr(&r.axis.start)?));
            }
            if r.axis.stop.mentions(var) {
                m.push(format!("({k_lanes} < {})", cx.expr(&r.axis.stop)?));
            }
            Ok(m.join(" & "))
        };
    let a_ok = operand_mask(
        cx,
        i,
        format!("{}[:, None]", n.ti),
        format!("{}[:, None]", n.ti_ok),
        &k_row,
    )?;
    let b_ok = operand_mask(
        cx,
        j,
        format!("{}[None, :]", n.tj),
        format!("{}[None, :]", n.tj_ok),
        &k_col,
    )?;
    w.line(format!("{} = {a_ok}", n.a_ok));
    w.line(format!("{} = {b_ok}", n.b_ok));
    for term in &r.terms {
        let acc = &groups[group_of(groups, term).expect("every term has a group")].acc;
        view(
            cx,
            &[(i, format!("{}[:, None]", n.ti)), (k, k_row.clone())],
            Some(&n.a_ok),
        );
        let a = operand(cx, &term.left, &n.a_ok, dtype)?;
        view(
            cx,
            &[(k, k_col.clone()), (j, format!("{}[None, :]", n.tj))],
            Some(&n.b_ok),
        );
        let b = operand(cx, &term.right, &n.b_ok, dtype)?;
        w.line(format!(
            "{acc} = tl.dot({a}, {b}, {acc}, input_precision=PRECISION, out_dtype={dtype})"
        ));
    }
    w.dedent();
    Ok(())
}

fn cx_file<'a>(cx: &Cx<'a>) -> &'a SourceFile {
    cx.file
}

/// What launching a tile kernel adds: module-level text (its tuning table and a launch
/// function) and the lines of the region's launcher that call it.
pub struct TileLaunch {
    pub module: String,
    pub fast_path: Vec<String>,
}

/// How a region's launcher reaches its tile kernel.
pub struct TileLaunchInput<'a> {
    /// The general kernel's launch arguments (the tile kernel takes the same).
    pub call: &'a [String],
    /// The launcher's own parameters.
    pub host_args: &'a [String],
    /// The launcher's variable holding the row count (known non-zero where the path runs).
    pub rows: &'a str,
    /// The tuning key expression (size classes and dtypes).
    pub key: &'a str,
    pub autotune: bool,
    /// The `tf32` clause: float32 operands may round to TF32 (float64 ones never do).
    pub tf32: bool,
}

/// The launch of a tiled kernel: taken, then the launcher returns, when every array of the
/// nest has one floating dtype. The tile shape is tuned once per key (see `_AppycTuning`).
pub fn launch(code: &TileCode, t: &TileNest, input: &TileLaunchInput) -> TileLaunch {
    let i = t.row.var.as_str();
    let last = Expr::binary(
        BinOp::Sub,
        t.row.stop.clone(),
        Expr::int(1, t.row.stop.span),
    );
    let host = |e: &Expr, pick: &str| {
        if e.mentions(i) {
            format!(
                "{pick}(int({}), int({}))",
                python::expr(&at_expr(e, i, &t.row.start)),
                python::expr(&at_expr(e, i, &last))
            )
        } else {
            format!("int({})", python::expr(e))
        }
    };
    let cols = format!(
        "{} - {}",
        host(&t.col.stop, "max"),
        host(&t.col.start, "min")
    );
    let precision = if input.tf32 {
        format!(
            "\"tf32\" if {}.dtype == torch.float32 else \"ieee\"",
            t.arrays[0]
        )
    } else {
        "\"ieee\"".to_string()
    };
    let candidates = if input.autotune {
        "_APPYC_TILE_CANDIDATES"
    } else {
        "()"
    };
    let table = format!("{}_tuning", code.name);
    let launcher = format!("_launch{}", code.name);
    let hash = text_hash(&format!("{}{candidates}", code.text));
    let ExprKind::Subscript { array: out, .. } = &t.target.kind else {
        unreachable!("tile_dot checks the target")
    };
    let args: String = input.host_args.iter().map(|a| format!("{a}, ")).collect();
    let module = [
        format!(
            "{table} = _AppycTuning(\"{}\", \"{hash}\", ({BI}, {BJ}, {BK}, {WARPS}, {STAGES}), {candidates}, lanes_first=False)",
            code.name
        ),
        String::new(),
        String::new(),
        format!(
            "def {launcher}({args}_appyc_rows, _appyc_cols, _appyc_config):"
        ),
        format!("    \"\"\"Launches {} with one tile configuration.\"\"\"", code.name),
        "    _appyc_bi, _appyc_bj, _appyc_bk, _appyc_warps, _appyc_stages = _appyc_config".into(),
        "    _appyc_launch(".into(),
        format!(
            "        {}, ((_appyc_cols + _appyc_bj - 1) // _appyc_bj, (_appyc_rows + _appyc_bi - 1) // _appyc_bi),",
            code.name
        ),
        format!("        ({},),", input.call.join(", ")),
        format!(
            "        {{\"BI\": _appyc_bi, \"BJ\": _appyc_bj, \"BK\": _appyc_bk, \"STAGES\": _appyc_stages, \"PRECISION\": {precision}}},"
        ),
        "        num_warps=_appyc_warps,".into(),
        "    )".into(),
    ]
    .join("\n");
    let rows = input.rows;
    let fast_path = vec![
        format!("if _appyc_dot_ok({}):", t.arrays.join(", ")),
        format!("    _appyc_cols = {cols}"),
        "    if _appyc_cols > 0:".into(),
        format!("        _appyc_key = ({})", input.key),
        format!("        _appyc_tile = {table}.chosen.get(_appyc_key)"),
        "        if _appyc_tile is None:".into(),
        format!("            _appyc_tile = {table}.tune("),
        format!(
            "                _appyc_key, ({out},), lambda config: {launcher}({args}{rows}, _appyc_cols, config)"
        ),
        "            )".into(),
        format!("        {launcher}({args}{rows}, _appyc_cols, _appyc_tile)"),
        "    return".into(),
    ];
    TileLaunch { module, fast_path }
}

#[cfg(test)]
mod tests {
    use crate::codegen::test_support::{function, generated};

    const SYR2K: &str = "def f(alpha, beta, C, A, B, N, M):
    #pragma parallel for
    for i in range(N):
        for j in range(i + 1):
            C[i, j] *= beta
        for k in range(M):
            for j in range(i + 1):
                C[i, j] += A[j, k] * alpha * B[i, k] - B[j, k] * alpha * A[i, k]
";

    #[test]
    fn terms_of_one_scale_and_sign_share_an_accumulator_applied_in_the_epilogue() {
        let kernel = function(&generated(SYR2K), "_f_kernel0_tiles").to_string();
        // Two groups: +alpha and -alpha; operands are bare loads into tl.dot.
        assert!(kernel.contains("_acc = tl.zeros((BI, BJ), dtype=C.dtype.element_ty)"));
        assert!(kernel.contains("_acc1 = tl.zeros((BI, BJ), dtype=C.dtype.element_ty)"));
        assert!(kernel.contains("_acc = tl.dot(tl.load(B + _ti[:, None] * B_stride0 + _tk[None, :] * B_stride1, mask=_a_ok, other=0.0)"));
        assert!(kernel.contains("* beta + (alpha * _acc - alpha * _acc1), mask=_tile_ok)"));
        assert!(
            !kernel.contains("tl.where(_a_ok"),
            "no operand needs a select:\n{kernel}"
        );
    }

    #[test]
    fn a_triangle_skips_the_tiles_of_its_other_half_and_masks_each_element() {
        let kernel = function(&generated(SYR2K), "_f_kernel0_tiles").to_string();
        // Columns of the tile's rows: 0 .. the last row + 1.
        assert!(kernel.contains("_col_hi = tl.maximum(_row0 + 1, _row1 + 1)"));
        // A tile with none of them reduces over nothing; no `if` around the tile.
        assert!(kernel.contains("_live = (_col0 < _col_hi) & (_col0 + BJ > _col_lo)"));
        assert!(kernel.contains("_k_hi = tl.where(_live, M, _k_lo)"));
        assert!(!kernel.contains("if "));
        assert!(kernel.contains("& (_tj[None, :] < _ti[:, None] + 1)"));
    }

    #[test]
    fn rectangular_tiles_take_every_tile_in_grouped_order_without_a_liveness_test() {
        let src = "def f(C, A, B, N, M, K):
    #pragma parallel for
    for i in range(N):
        for k in range(K):
            #pragma simd
            for j in range(M):
                C[i, j] += A[i, k] * B[k, j]
";
        let kernel = function(&generated(src), "_f_kernel0_tiles").to_string();
        assert!(!kernel.contains("_live"), "{kernel}");
        assert!(kernel.contains("_k_hi = K\n"), "{kernel}");
        // Programs walk down a group of row tiles, then move one column right.
        assert!(kernel.contains("_row0 = 0 + _tile_row * BI"), "{kernel}");
        assert!(
            kernel.contains("_col0 = _col_base + _tile_col * BJ"),
            "{kernel}"
        );
        assert!(kernel
            .contains("_tile_row = _group_first + _tile % (8 * tl.num_programs(0)) % _group_rows"));
    }

    #[test]
    fn a_bound_moving_with_the_row_masks_the_row_operand_only() {
        let src = "def f(A, B, w, out, M, N):
    #pragma parallel for
    for i in range(M):
        for j in range(N):
            s = 0.0
            for k in range(i + 1, M):
                s += A[k, i] * B[k, j] * w[j]
            out[i, j] = s
";
        let kernel = function(&generated(src), "_f_kernel0_tiles").to_string();
        // The loop starts at the smallest start over the tile's valid rows.
        assert!(kernel.contains("_k_lo = tl.min(tl.where(_ti_ok, _ti + 1, _row0 + 1), axis=0)"));
        assert!(kernel.contains(
            "_a_ok = _ti_ok[:, None] & (_tk[None, :] < _k_hi) & (_tk[None, :] >= _ti[:, None] + 1)"
        ));
        assert!(kernel.contains("_b_ok = _tj_ok[None, :] & (_tk[:, None] < _k_hi)\n"));
        // A product of two loads on one side is selected, not loaded with `other`.
        assert!(kernel.contains("tl.where(_b_ok, tl.load(B"));
    }

    #[test]
    fn the_launcher_counts_columns_over_all_rows_and_takes_tiles_by_dtype() {
        let module = generated(SYR2K);
        let launcher = function(&module, "_launch_f_kernel0");
        assert!(launcher.contains("if _appyc_dot_ok(C, A, B):"));
        // `range(i + 1)` over rows 0 .. N - 1: columns 0 .. N.
        assert!(launcher.contains("_appyc_cols = max(int(0 + 1), int(N - 1 + 1)) - int(0)"));
        assert!(module.contains("\"PRECISION\": \"ieee\""));
        let tf32 = generated(&SYR2K.replace("parallel for", "parallel for tf32"));
        assert!(tf32.contains("\"PRECISION\": \"tf32\" if C.dtype == torch.float32 else \"ieee\""));
    }
}
