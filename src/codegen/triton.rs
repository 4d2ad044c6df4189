//! Triton printer: one outlined `Kernel` (after strip-mining) → a `@triton.jit` function and
//! the facts its launcher needs (parameters, grid, arrays written).

use super::analysis::{analyse, push_unique, Analysis};
use super::kernel_code::{signature, KernelCode, Param};
use super::python::{binop_prec, float_literal, prec};
use super::writer::Writer;
use crate::diag::{Diagnostic, Result};
use crate::frontend::source::{SourceFile, Span};
use crate::ir::*;
use crate::passes::fuse_into_reduction::STORED_IN;
use std::collections::{BTreeSet, HashMap, HashSet};

/// The printer's state for one kernel (shared with the tile printer, hence `pub(super)`).
pub(super) struct Cx<'a> {
    pub(super) file: &'a SourceFile,
    /// Vector name → the mask expressions that guard its lanes.
    pub(super) masks: HashMap<String, BTreeSet<String>>,
    pub(super) float_params: HashSet<String>,
    /// Local names initialised by a literal and updated later: their init gets a fixed dtype.
    carried: HashMap<String, Expr>,
    /// Locals holding per-lane values of a `parallel for simd` program, and its width.
    lane_vectors: HashSet<String>,
    lane_width: Option<Width>,
    /// Tile indices and how they are spelled (`_i0[:, None]`).
    pub(super) tile_names: HashMap<String, String>,
    /// Names known to hold integers: loop variables and integer parameters.
    pub(super) int_names: HashSet<String>,
    /// Arrays other PEs write (targets of puts): loaded with `.cg`, past the SM's L1.
    cg: HashSet<String>,
    /// Row indices of row tiles (axis 0 of a 2-D tile): `ReduceRows` reduces them away.
    rows: HashSet<String>,
    /// Widths of the enclosing 1-D strip-mined loops: the lanes of a row tile inside one.
    strips: Vec<Width>,
    /// The row tile being printed has its rows split over grid axis 1 (`passes::split_rows`):
    /// its results are combined across the splits, and what follows runs in one program.
    splitting: bool,
    /// Integer parameters the kernel never binds: host values, the same in every program, so a
    /// bound made of them can be evaluated by the launcher.
    host_ints: HashSet<String>,
    /// The strip loops printed with the `ONE_STRIP` switch (see `KernelCode::one_strip`).
    one_strip: Vec<(Expr, Expr, Width)>,
    /// The strips of row blocks (see `KernelCode::row_block`).
    row_block: Vec<Option<(Expr, Expr)>>,
}

/// What a kernel with split rows takes after its own parameters: scratch for the splits'
/// partial results (8 bytes an element, any accumulator dtype fits), one arrival counter per
/// column block (zero between launches: the combining program resets its own), and the rows
/// each split walks.
pub const SPLIT_PARAMS: [&str; 3] = ["_appyc_partials", "_appyc_arrivals", "_appyc_split_rows"];

pub fn kernel(k: &Kernel, file: &SourceFile) -> Result<KernelCode> {
    let analysis = analyse(k);
    // The body first: whether the signature takes `ONE_STRIP` depends on its strip loops.
    let mut body = Writer::new(1);
    let mut cx = Cx::new(file, k, &analysis);
    cx.pragma_comment(&mut body, k);
    let grid: Vec<String> = (0..k.dims.len())
        .map(|axis| format!("tl.program_id({axis})"))
        .collect();
    match &k.split_rows {
        Some(split) => {
            cx.dims(&mut body, k, &grid)?;
            cx.split_body(&mut body, &k.body, split.at)?;
        }
        None => cx.region(&mut body, k, &grid)?,
    }
    let mut sig = signature(&analysis.params);
    if k.split_rows.is_some() {
        sig.extend(SPLIT_PARAMS.map(String::from));
    }
    if analysis.uses_mvl {
        sig.push("MVL: tl.constexpr".into());
    }
    if !cx.row_block.is_empty() {
        sig.push(ROW_BLOCK_PARAM.into());
    }
    if !cx.one_strip.is_empty() {
        sig.push(ONE_STRIP_PARAM.into());
    }
    let mut w = Writer::new(0);
    w.line("@triton.jit");
    w.line(format!("def {}({}):", k.name, sig.join(", ")));
    Ok(KernelCode {
        text: w.finish() + &body.finish(),
        params: analysis.params,
        host_args: analysis.host_args,
        uses_mvl: analysis.uses_mvl,
        written_arrays: analysis.written,
        one_strip: cx.one_strip,
        row_block: cx.row_block,
    })
}

/// The switch of strip loops that fit one strip (`Cx::strip_mined_loop`); off unless the
/// launcher finds that every such loop of the kernel does.
const ONE_STRIP_PARAM: &str = "ONE_STRIP: tl.constexpr = False";

/// The rows a row block's program takes (`passes::row_block`); no default, so a launch that
/// forgot it fails instead of running one row a program.
const ROW_BLOCK_PARAM: &str = "ROW_BLOCK: tl.constexpr";

fn width_text(w: Width) -> String {
    match w {
        Width::Mvl => "MVL".into(),
        Width::Fixed(n) => n.to_string(),
        Width::RowBlock => "ROW_BLOCK".into(),
        // Printed only where an argument stands alone (`tl.arange(0, w)`, a range's step).
        Width::RowBlockLanes => "MVL // ROW_BLOCK".into(),
    }
}

/// Loop variables (grid, `for`, vector indices) and integer parameters of a kernel.
fn int_names(k: &Kernel, analysis: &Analysis) -> HashSet<String> {
    let mut names: HashSet<String> = k.dims.iter().map(|d| d.var.clone()).collect();
    for p in &analysis.params {
        if let Param::IntScalar(n) = p {
            names.insert(n.clone());
        }
    }
    for s in &k.body {
        s.walk(&mut |st| {
            if let StmtKind::For { var, vector, .. } = &st.kind {
                names.insert(var.clone());
                names.extend(vector.iter().cloned());
            }
        });
    }
    names
}

impl<'a> Cx<'a> {
    pub(super) fn new(file: &'a SourceFile, k: &Kernel, analysis: &Analysis) -> Cx<'a> {
        Cx {
            file,
            masks: HashMap::new(),
            float_params: analysis
                .params
                .iter()
                .filter_map(|p| match p {
                    Param::FloatScalar(n) => Some(n.clone()),
                    _ => None,
                })
                .collect(),
            carried: analysis.carried.clone(),
            lane_vectors: analysis.lane_vectors.clone(),
            // A row block's rows are a tile axis, not lanes that carry locals.
            lane_width: k
                .dims
                .last()
                .and_then(|d| d.simd)
                .filter(|w| !matches!(w, Width::RowBlock | Width::RowBlockLanes)),
            tile_names: HashMap::new(),
            int_names: int_names(k, analysis),
            cg: HashSet::new(),
            rows: HashSet::new(),
            strips: vec![],
            splitting: false,
            host_ints: {
                let bound = k.bound_names();
                analysis
                    .params
                    .iter()
                    .filter_map(|p| match p {
                        Param::IntScalar(n) if !bound.contains(n) => Some(n.clone()),
                        _ => None,
                    })
                    .collect()
            },
            one_strip: vec![],
            row_block: vec![],
        }
    }

    /// Whether `e` is an integer: literals, loop variables, integer parameters, extents and
    /// integer arithmetic on them.
    fn is_int(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Int(_) | ExprKind::Shape { .. } => true,
            ExprKind::Name(n) => self.int_names.contains(n),
            ExprKind::Binary {
                op: BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::FloorDiv | BinOp::Mod,
                left,
                right,
            } => self.is_int(left) && self.is_int(right),
            ExprKind::Unary {
                op: UnaryOp::Neg,
                operand,
            } => self.is_int(operand),
            _ => false,
        }
    }

    /// Whether `e` is the same in every program and computable by the launcher: integer
    /// literals, extents and parameters the kernel never binds, under `+ - *` and negation.
    fn host_value(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Int(_) | ExprKind::Shape { .. } => true,
            ExprKind::Name(n) => self.host_ints.contains(n),
            ExprKind::Binary {
                op: BinOp::Add | BinOp::Sub | BinOp::Mul,
                left,
                right,
            } => self.host_value(left) && self.host_value(right),
            ExprKind::Unary {
                op: UnaryOp::Neg,
                operand,
            } => self.host_value(operand),
            _ => false,
        }
    }

    /// NumPy computes `i + 0.5` and `i / n` on Python ints in float64; Triton would give fp32
    /// (an int32 vector meets a weak float literal). The integer side is converted to fp64 first.
    fn float64_operands(&self, op: BinOp, left: &Expr, right: &Expr) -> (bool, bool) {
        let literal = |e: &Expr| matches!(e.kind, ExprKind::Float(_));
        // A Triton value, not a constant the JIT folds (`(1).to(...)` would not compile).
        let int_value = |e: &Expr| {
            self.is_int(e)
                && e.any(&mut |x| matches!(x.kind, ExprKind::Name(_) | ExprKind::Shape { .. }))
        };
        match op {
            BinOp::Div if self.is_int(left) && self.is_int(right) => {
                if int_value(left) {
                    (true, false)
                } else {
                    (false, int_value(right))
                }
            }
            BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div => (
                int_value(left) && literal(right),
                literal(left) && int_value(right),
            ),
            _ => (false, false),
        }
    }

    /// `# file:line: #pragma ...`: where the region comes from.
    pub(super) fn pragma_comment(&self, w: &mut Writer, k: &Kernel) {
        let line = self.file.line_of(k.span.start as usize);
        let pragma_text = self.file.line_text(line).trim();
        w.line(format!("# {}:{}: {}", self.file.name, line, pragma_text));
    }

    /// A region's grid variables and body. `program_ids[axis]` is the program's coordinate on
    /// grid axis `axis` (`tl.program_id(axis)` in a kernel of its own, a virtual program's
    /// coordinate inside a persistent kernel); the innermost dimension is axis 0.
    fn region(&mut self, w: &mut Writer, k: &Kernel, program_ids: &[String]) -> Result<()> {
        self.dims(w, k, program_ids)?;
        self.block(w, &k.body)
    }

    /// The grid variables of a region (see `region`).
    fn dims(&mut self, w: &mut Writer, k: &Kernel, program_ids: &[String]) -> Result<()> {
        let ndims = k.dims.len();
        for (d, dim) in k.dims.iter().enumerate() {
            let pid = &program_ids[ndims - 1 - d];
            let src = self.src(dim.span);
            let start = self.expr(&dim.range.start)?;
            let step = self.expr(&dim.range.step)?;
            let unit_step = matches!(dim.range.step.kind, ExprKind::Int(1));
            let offset = |s: String| {
                if matches!(dim.range.start.kind, ExprKind::Int(0)) {
                    s
                } else {
                    format!("{start} + {s}")
                }
            };
            match dim.simd {
                None => {
                    let idx = if unit_step {
                        pid.clone()
                    } else {
                        format!("{pid} * {step}")
                    };
                    w.line(format!("{} = {}  {src}", dim.var, offset(idx)));
                }
                Some(wd) => {
                    let width = width_text(wd);
                    let scale = if wd == Width::RowBlockLanes {
                        format!("({width})")
                    } else {
                        width.clone()
                    };
                    let lanes = format!("{pid} * {scale} + tl.arange(0, {width})");
                    let lanes = if unit_step {
                        lanes
                    } else {
                        format!("({lanes}) * {step}")
                    };
                    w.line(format!("{} = {}  {src}", dim.var, offset(lanes)));
                    let stop = self.expr_prec(&dim.range.stop, binop_prec(BinOp::Sub) + 1)?;
                    if matches!(dim.range.step.kind, ExprKind::Int(s) if s > 0) {
                        w.line(format!("{0}_mask = {0} < {stop}", dim.var));
                    } else {
                        // The step's sign is known only at run time: a lane is inside the range
                        // when it has not passed `stop` in the direction of the step.
                        let step = self.expr_prec(&dim.range.step, binop_prec(BinOp::Mul) + 1)?;
                        w.line(format!("{0}_mask = ({0} - {stop}) * {step} < 0", dim.var));
                    }
                    // A row block's rows are axis 0 of the tile that its strip, or the lanes of
                    // the grid dimension inside it, complete on axis 1.
                    let axis = match wd {
                        Width::RowBlock => "[:, None]",
                        Width::RowBlockLanes => "[None, :]",
                        _ => "",
                    };
                    if wd == Width::RowBlockLanes {
                        let host =
                            self.host_value(&dim.range.start) && self.host_value(&dim.range.stop);
                        self.row_block
                            .push(host.then(|| (dim.range.start.clone(), dim.range.stop.clone())));
                    }
                    if !axis.is_empty() {
                        self.tile_names
                            .insert(dim.var.clone(), format!("{}{axis}", dim.var));
                    }
                    self.masks.insert(
                        dim.var.clone(),
                        BTreeSet::from([format!("{}_mask{axis}", dim.var)]),
                    );
                }
            }
        }
        Ok(())
    }

    /// A body whose row tile (`body[at]`) has its rows split over grid axis 1: every split runs
    /// the statements before it (locals only) and its own rows; `row_results` then combines the
    /// splits and opens the block, run by one program of the column block, of what follows.
    fn split_body(&mut self, w: &mut Writer, body: &[Stmt], at: usize) -> Result<()> {
        for s in &body[..at] {
            self.stmt(w, s)?;
        }
        let s = &body[at];
        let StmtKind::For {
            var,
            range,
            body: rows,
            kind: LoopKind::StripMined { width, tile },
            vector: Some(v),
            ..
        } = &s.kind
        else {
            unreachable!("split_rows marks a row tile")
        };
        let start = self.expr(&range.start)?;
        let stop = self.expr(&range.stop)?;
        w.line("_appyc_split = tl.program_id(1)");
        w.line(format!(
            "_appyc_rows_lo = {start} + _appyc_split * _appyc_split_rows"
        ));
        w.line(format!(
            "_appyc_rows_hi = tl.minimum(_appyc_rows_lo + _appyc_split_rows, {stop})"
        ));
        let chunk = Range {
            start: Expr::name("_appyc_rows_lo", range.start.span),
            stop: Expr::name("_appyc_rows_hi", range.stop.span),
            step: range.step.clone(),
        };
        self.splitting = true;
        let src = self.src(s.span);
        self.strip_mined_loop(w, var, &chunk, (*width, *tile, v), rows, &src)?;
        self.splitting = false;
        self.block(w, &body[at + 1..])?;
        w.dedent();
        Ok(())
    }

    /// Combines a split row tile: each split stores its rows' result, and the last split of the
    /// column block to arrive (an acquire-release count, so it sees the others' stores) reduces
    /// them in split order, whoever arrived last, and leaves `_appyc_total`, with its block
    /// indented under `if _appyc_last:`.
    fn split_combine(
        &mut self,
        w: &mut Writer,
        op: ReduceOp,
        acc: &str,
        target: &str,
    ) -> Result<()> {
        let Some(lanes) = self.lane_width else {
            unreachable!("split_rows marks kernels with lanes")
        };
        let width = width_text(lanes);
        let (reduce, combine) = match op {
            ReduceOp::Sum => ("tl.sum", "_appyc_total + {}"),
            ReduceOp::Max => ("tl.max", "tl.maximum(_appyc_total, {})"),
            ReduceOp::Min => ("tl.min", "tl.minimum(_appyc_total, {})"),
        };
        w.line(format!(
            "_appyc_part = _appyc_partials.to(tl.pointer_type({acc}.dtype)) + tl.program_id(0) * {width} + tl.arange(0, {width})"
        ));
        w.line(format!("_appyc_stride = tl.num_programs(0) * {width}"));
        w.line(format!(
            "tl.store(_appyc_part + _appyc_split * _appyc_stride, {reduce}({acc}, axis=0))"
        ));
        w.line("tl.debug_barrier()");
        w.line("_appyc_arrived = tl.atomic_add(_appyc_arrivals + tl.program_id(0), 1, sem=\"acq_rel\")");
        // `target` takes the dtype its combination with the rows gives it before the `if`:
        // Triton lets no variable change type inside one.
        w.line(format!(
            "{target} = {target}.to((tl.zeros((), {target}.dtype) + tl.zeros((), {acc}.dtype)).dtype)"
        ));
        w.line("if _appyc_arrived == tl.num_programs(1) - 1:");
        w.indent();
        w.line("tl.debug_barrier()");
        w.line("_appyc_total = tl.load(_appyc_part, cache_modifier=\".cg\")");
        w.line("for _appyc_k in range(1, tl.num_programs(1)):");
        w.indent();
        let next = "tl.load(_appyc_part + _appyc_k * _appyc_stride, cache_modifier=\".cg\")";
        w.line(format!("_appyc_total = {}", combine.replace("{}", next)));
        w.dedent();
        w.line("tl.store(_appyc_arrivals + tl.program_id(0), 0)");
        Ok(())
    }

    /// A communication phase (see pragma-spec/library-calls.yaml for the lowering): a put is
    /// issued by one program (`slot` of a run of puts, so consecutive puts go out from
    /// different programs at once), a wait is made by every program.
    fn comm(&mut self, w: &mut Writer, c: &Comm, pid: &str, nprog: &str) -> Result<()> {
        match c {
            Comm::Put {
                dest,
                src,
                pe,
                flag,
                blocking,
                slot,
            } => {
                let (dptr, dsl) = self.view(dest)?;
                let (sptr, ssl) = self.view(src)?;
                let (rows, n, drs, ds, srs, ss) = match (dsl.as_slice(), ssl.as_slice()) {
                    ([(n, ds)], [(_, ss)]) => (
                        "1".into(),
                        n.clone(),
                        "0".into(),
                        ds.clone(),
                        "0".into(),
                        ss.clone(),
                    ),
                    ([(r, drs), (n, ds)], [(_, srs), (_, ss)]) => (
                        r.clone(),
                        n.clone(),
                        drs.clone(),
                        ds.clone(),
                        srs.clone(),
                        ss.clone(),
                    ),
                    _ => unreachable!("comm checks the views"),
                };
                let sig = match flag {
                    Some(f) => self.view(f)?.0,
                    None => "0".into(),
                };
                let pe = self.expr(pe)?;
                w.line(format!("if {pid} == {slot} % {nprog}:"));
                w.indent();
                w.line(format!(
                    "_appyc_nvshmem_put({dptr}, {sptr}, {rows}, {n}, {drs}, {ds}, {srs}, {ss}, {sig}, {pe}, SIGNAL={}, BLOCKING={})",
                    if flag.is_some() { "True" } else { "False" },
                    if *blocking { "True" } else { "False" },
                ));
                w.dedent();
            }
            Comm::Wait { flag, signal, .. } => {
                let (ptr, _) = self.view(flag)?;
                let signal = self.expr(signal)?;
                w.line(format!("_appyc_nvshmem_wait({ptr}, {signal})"));
            }
        }
        Ok(())
    }

    /// A view's first element as a pointer, and (length, stride) of each sliced dimension.
    fn view(&mut self, e: &Expr) -> Result<(String, Vec<(String, String)>)> {
        let ExprKind::Subscript { array, indices } = &e.kind else {
            unreachable!("comm makes views subscripts")
        };
        let mut parts = vec![array.clone()];
        let mut sliced = vec![];
        for (d, ix) in indices.iter().enumerate() {
            let stride = format!("{array}_stride{d}");
            match ix {
                Index::At(i) => {
                    if !matches!(i.kind, ExprKind::Int(0)) {
                        let t = self.expr_prec(i, binop_prec(BinOp::Mul) + 1)?;
                        parts.push(format!("{t} * {stride}"));
                    }
                }
                Index::Slice {
                    lo: Some(lo),
                    hi: Some(hi),
                    ..
                } => {
                    if !matches!(lo.kind, ExprKind::Int(0)) {
                        let t = self.expr_prec(lo, binop_prec(BinOp::Mul) + 1)?;
                        parts.push(format!("{t} * {stride}"));
                    }
                    let len = if matches!(lo.kind, ExprKind::Int(0)) {
                        self.expr(hi)?
                    } else {
                        format!("({}) - ({})", self.expr(hi)?, self.expr(lo)?)
                    };
                    sliced.push((len, stride));
                }
                _ => unreachable!("comm resolves every bound"),
            }
        }
        Ok((parts.join(" + "), sliced))
    }

    fn src(&self, span: crate::frontend::source::Span) -> String {
        format!(
            "# {}:{}",
            self.file.name,
            self.file.line_of(span.start as usize)
        )
    }

    fn block(&mut self, w: &mut Writer, body: &[Stmt]) -> Result<()> {
        if body.is_empty() {
            w.line("pass");
        }
        for s in body {
            self.stmt(w, s)?;
        }
        Ok(())
    }

    /// One statement, by kind.
    fn stmt(&mut self, w: &mut Writer, s: &Stmt) -> Result<()> {
        let src = self.src(s.span);
        match &s.kind {
            StmtKind::Assign {
                target,
                value,
                atomic,
            } => match &target.kind {
                ExprKind::Name(n) => self.assign_local(w, n, value, &src),
                ExprKind::Subscript { .. } if *atomic => {
                    self.atomic_update(w, s, target, value, &src)
                }
                ExprKind::Subscript { .. } => self.store(w, target, value, &src),
                _ => unreachable!("outline checks targets"),
            },
            StmtKind::For {
                var,
                range,
                body,
                kind,
                vector,
                ..
            } => match (kind, vector) {
                (LoopKind::StripMined { width, tile }, Some(v)) => {
                    self.strip_mined_loop(w, var, range, (*width, *tile, v), body, &src)
                }
                _ => self.range_loop(w, var, range, body, &src),
            },
            StmtKind::If { test, body, orelse } => self.if_stmt(w, test, body, orelse, &src),
            StmtKind::Barrier => {
                w.line("tl.debug_barrier()");
                Ok(())
            }
            StmtKind::Pass => {
                w.line("pass");
                Ok(())
            }
            StmtKind::Expr(_)
            | StmtKind::Other(_)
            | StmtKind::HostBlock { .. }
            | StmtKind::AugAssign { .. } => {
                unreachable!("outline and normalize remove these from kernels")
            }
        }
    }

    /// `n = value` for a local; records the lanes' masks of `n` (a vidx gets its own mask).
    fn assign_local(&mut self, w: &mut Writer, n: &str, value: &Expr, src: &str) -> Result<()> {
        let v = self.expr(value)?;
        let v = self.carried_init(n, value, v);
        let mask = self.mask_of(value);
        if mask.is_empty() {
            self.masks.remove(n);
        } else {
            self.masks.insert(n.to_string(), mask);
        }
        if let ExprKind::Vidx { bound, .. } = &value.kind {
            w.line(format!("{n} = {v}  {src}"));
            let b = self.expr(bound)?;
            w.line(format!("{n}_mask = {n} < {b}"));
            self.masks
                .insert(n.to_string(), BTreeSet::from([format!("{n}_mask")]));
        } else {
            w.line(format!("{n} = {v}  {src}"));
        }
        Ok(())
    }

    /// The printed value `v` of `n = value`, or, when `value` is the literal init of a
    /// loop-carried local, `tl.full` of it with the update's dtype (and the lanes' shape).
    fn carried_init(&self, n: &str, value: &Expr, v: String) -> String {
        let (
            Some(update),
            ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::FloatSpecial(_) | ExprKind::Bool(_),
        ) = (self.carried.get(n), &value.kind)
        else {
            return v;
        };
        let shape = match (self.lane_vectors.contains(n), self.lane_width) {
            (true, Some(w)) => format!("({},)", width_text(w)),
            // Updated by lanes of a strip-mined loop (`s += A[k] * B[k, j]` in a `simd` loop
            // over `j`): one sum per lane, so the init has the lanes' shape (a scalar init
            // would change type in the loop, which Triton refuses to compile).
            _ => match self.vector_names(update).as_slice() {
                [] => "()".to_string(),
                [v] => format!("{v}.shape"),
                vs => format!("({}).shape", vs.join(" + ")),
            },
        };
        match self.dtype_of(update, n) {
            Some(dt) => format!("tl.full({shape}, {v}, {dt})"),
            // What Triton makes of the literal itself when lanes meet it.
            None if shape != "()" => {
                let dt = if matches!(value.kind, ExprKind::Int(_) | ExprKind::Bool(_)) {
                    "tl.int32"
                } else {
                    "tl.float32"
                };
                format!("tl.full({shape}, {v}, {dt})")
            }
            None => v,
        }
    }

    /// The vectors (printed) whose lanes `e` computes on, outside reductions.
    fn vector_names(&self, e: &Expr) -> Vec<String> {
        // A reduction's result is a scalar: the vectors inside it do not shape `e`.
        let pruned = self.lanes_view(e);
        let mut out: Vec<String> = vec![];
        pruned.walk(&mut |x| {
            if let ExprKind::Name(n) = &x.kind {
                if self.masks.contains_key(n) {
                    let printed = self.tile_names.get(n).cloned().unwrap_or_else(|| n.clone());
                    if !out.contains(&printed) {
                        out.push(printed);
                    }
                }
            }
        });
        out
    }

    /// `tl.store` of an element (or the lanes of a vector) of an array.
    fn store(&mut self, w: &mut Writer, target: &Expr, value: &Expr, src: &str) -> Result<()> {
        let ptr = self.pointer(target)?;
        let mask = self.mask_of(target);
        let val = self.expr(value)?;
        w.line(format!("tl.store({ptr}, {val}{})  {src}", mask_arg(&mask)));
        Ok(())
    }

    /// `#pragma atomic` on an update of an element: `tl.atomic_add/max/min`.
    fn atomic_update(
        &mut self,
        w: &mut Writer,
        s: &Stmt,
        target: &Expr,
        value: &Expr,
        src: &str,
    ) -> Result<()> {
        let ptr = self.pointer(target)?;
        let mut mask = self.mask_of(target);
        let Some((op, operand)) = as_reduction(target, value) else {
            return Err(Diagnostic::error(
                s.span,
                "`#pragma atomic` needs an update: `X[k] += v`, `X[k] -= v`, `X[k] = max(X[k], v)` or `X[k] = min(X[k], v)`",
            ));
        };
        let (v, neg) = match operand {
            ReductionOperand::Plain(v) => (v, false),
            ReductionOperand::Negated(v) => (v, true),
        };
        mask.extend(self.mask_of(v));
        let mut val = self.expr(v)?;
        if neg {
            val = format!("-({val})");
        }
        let f = match op {
            ReduceOp::Sum => "tl.atomic_add",
            ReduceOp::Max => "tl.atomic_max",
            ReduceOp::Min => "tl.atomic_min",
        };
        w.line(format!("{f}({ptr}, {val}{})  {src}", mask_arg(&mask)));
        Ok(())
    }

    /// A strip-mined loop: strips of `width` lanes, the vector index `v` and its mask (a row
    /// or a column in a 2-D tile when `tile` gives the axis).
    fn strip_mined_loop(
        &mut self,
        w: &mut Writer,
        var: &str,
        range: &Range,
        (width, tile, v): (Width, Option<u8>, &str),
        body: &[Stmt],
        src: &str,
    ) -> Result<()> {
        let start = self.expr(&range.start)?;
        let stop = self.expr(&range.stop)?;
        let wd = width_text(width);
        let row_tile = match tile {
            Some(0) => row_tile_of(body),
            _ => None,
        };
        if let Some(t) = &row_tile {
            self.row_accumulators(w, t, (width, v), src)?;
        }
        // A loop over vectors that usually runs once (a row shorter than MVL) is slower as a
        // loop than as straight code: with its one-trip loop nested inside, the grid-stride loop
        // around it could not overlap one program's loads with the next (heat_3d 15.0 against
        // 12.0 ms on the H100, scripts/layout_probe_h100.log). When the bounds are host values
        // the launcher knows whether the extent fits one strip, and `ONE_STRIP` makes the
        // range a constant single trip that Triton folds away.
        // A row block's strip is axis 1 of its tile; the launcher sizes `ROW_BLOCK` from its
        // bounds when they are host values.
        let row_block = width == Width::RowBlockLanes;
        let host_bounds = self.host_value(&range.start) && self.host_value(&range.stop);
        if row_block {
            self.row_block
                .push(host_bounds.then(|| (range.start.clone(), range.stop.clone())));
        }
        let one_strip = (row_block || (width == Width::Mvl && tile.is_none())) && host_bounds;
        if one_strip {
            let once = match &range.start.kind {
                ExprKind::Int(c) => (c + 1).to_string(),
                _ => format!("{start} + 1"),
            };
            self.one_strip
                .push((range.start.clone(), range.stop.clone(), width));
            w.line(format!(
                "for {var} in range({start}, {once} if ONE_STRIP else {stop}, {wd}):  {src}"
            ));
        } else {
            w.line(format!("for {var} in range({start}, {stop}, {wd}):  {src}"));
        }
        w.indent();
        w.line(format!("{v} = {var} + tl.arange(0, {wd})"));
        w.line(format!("{v}_mask = {v} < {stop}"));
        // In a 2-D tile the 1-D index is used as a column or as a row.
        let axis = match tile {
            Some(0) => "[:, None]",
            Some(_) => "[None, :]",
            None => "",
        };
        if !axis.is_empty() {
            self.tile_names.insert(v.to_string(), format!("{v}{axis}"));
        }
        if tile == Some(0) {
            self.rows.insert(v.to_string());
        }
        self.masks
            .insert(v.to_string(), BTreeSet::from([format!("{v}_mask{axis}")]));
        if let Some(t) = &row_tile {
            for s in t.elements {
                self.stmt(w, s)?;
            }
            for u in &t.updates {
                self.row_update(w, u, &format!("{v}_mask{axis}"))?;
            }
            w.dedent();
            return self.row_results(w, &t.updates, src);
        }
        if tile.is_none() {
            self.strips.push(width);
        }
        self.block(w, body)?;
        if tile.is_none() {
            self.strips.pop();
        }
        w.dedent();
        Ok(())
    }

    /// Before a row tile: each partial accumulator, [rows, lanes] of the reduction's identity
    /// in the dtype of the values it adds up (all its updates', promoted).
    fn row_accumulators(
        &self,
        w: &mut Writer,
        tile: &RowTile,
        (rows, row): (Width, &str),
        src: &str,
    ) -> Result<()> {
        let updates = &tile.updates;
        let Some(lanes) = self.strips.last().copied().or(self.lane_width) else {
            return Err(Diagnostic::error(
                updates[0].value.span,
                "internal: a row tile outside vector lanes",
            ));
        };
        let shape = format!("({}, {})", width_text(rows), width_text(lanes));
        for (k, u) in updates.iter().enumerate() {
            if updates[..k].iter().any(|p| p.acc == u.acc) {
                continue;
            }
            // The strip's locals are not defined yet: their values stand in for them.
            let values = updates
                .iter()
                .filter(|o| o.acc == u.acc)
                .map(|o| tile.with_locals_inlined(o.value))
                .reduce(|a, b| Expr::binary(BinOp::Add, a, b))
                .expect("u is one");
            // Every name the values read but the rows is defined before the loop: a vector of
            // the lanes among them (`s += t`) is a tensor whose dtype counts.
            let defined_vector = |n: &str| {
                (n != row && !self.rows.contains(n) && self.masks.contains_key(n))
                    .then(|| format!("{n}.dtype"))
            };
            // Without any of those to decide it, what Triton makes of the values.
            let dt = self
                .promoted_dtype(&values, u.target, &defined_vector)
                .unwrap_or_else(|| {
                    if self.is_int(&values) {
                        "tl.int32"
                    } else {
                        "tl.float32"
                    }
                    .to_string()
                });
            let zeros = format!("tl.zeros({shape}, {dt})");
            let init = match u.op {
                ReduceOp::Sum => zeros,
                ReduceOp::Max => format!("_appyc_lowest_like({zeros})"),
                ReduceOp::Min => format!("_appyc_highest_like({zeros})"),
            };
            w.line(format!("{} = {init}  {src}", u.acc));
        }
        Ok(())
    }

    /// One strip of a row tile's update, element by element into its partial accumulator.
    /// Rows past the bound (`rows_mask`, also where the value does not mention the rows: it is
    /// added once per row) and masked-off lanes leave the accumulator as it is.
    fn row_update(&mut self, w: &mut Writer, u: &RowUpdate, rows_mask: &str) -> Result<()> {
        let mut mask = self.mask_of(u.value);
        mask.insert(rows_mask.to_string());
        let m = mask.into_iter().collect::<Vec<_>>().join(" & ");
        let v = self.expr(u.value)?;
        let acc = u.acc;
        let line = match (u.op, u.negated) {
            (ReduceOp::Sum, false) => format!("{acc} = {acc} + tl.where({m}, {v}, 0)"),
            (ReduceOp::Sum, true) => format!("{acc} = {acc} - tl.where({m}, {v}, 0)"),
            (ReduceOp::Max, _) => format!("{acc} = tl.maximum({acc}, tl.where({m}, {v}, {acc}))"),
            (ReduceOp::Min, _) => format!("{acc} = tl.minimum({acc}, tl.where({m}, {v}, {acc}))"),
        };
        w.line(format!("{line}  {}", self.src(u.span)));
        Ok(())
    }

    /// After a row tile: each accumulator's rows reduced once and combined with its carried
    /// lane vector, which keeps the lanes' masks (the rows are gone).
    fn row_results(&mut self, w: &mut Writer, updates: &[RowUpdate], src: &str) -> Result<()> {
        for (k, u) in updates.iter().enumerate() {
            if updates[..k].iter().any(|p| p.acc == u.acc) {
                continue;
            }
            let (s, acc) = (u.target, u.acc);
            let rows = if self.splitting {
                self.split_combine(w, u.op, acc, s)?;
                "_appyc_total".to_string()
            } else {
                let reduce = match u.op {
                    ReduceOp::Sum => "tl.sum",
                    ReduceOp::Max => "tl.max",
                    ReduceOp::Min => "tl.min",
                };
                format!("{reduce}({acc}, axis=0)")
            };
            let line = match u.op {
                ReduceOp::Sum => format!("{s} = {s} + {rows}"),
                ReduceOp::Max => format!("{s} = tl.maximum({s}, {rows})"),
                ReduceOp::Min => format!("{s} = tl.minimum({s}, {rows})"),
            };
            let mut mask = BTreeSet::new();
            for o in updates.iter().filter(|o| o.acc == u.acc) {
                mask.extend(self.mask_of(o.update));
            }
            if mask.is_empty() {
                self.masks.remove(s);
            } else {
                self.masks.insert(s.to_string(), mask);
            }
            w.line(format!("{line}  {src}"));
        }
        Ok(())
    }

    /// A scalar loop: `for var in range(start, stop, step)`.
    fn range_loop(
        &mut self,
        w: &mut Writer,
        var: &str,
        range: &Range,
        body: &[Stmt],
        src: &str,
    ) -> Result<()> {
        let start = self.expr(&range.start)?;
        let stop = self.expr(&range.stop)?;
        let step = self.expr(&range.step)?;
        w.line(format!(
            "for {var} in range({start}, {stop}, {step}):  {src}"
        ));
        w.indent();
        self.block(w, body)?;
        w.dedent();
        Ok(())
    }

    /// `if test:` and its branches.
    fn if_stmt(
        &mut self,
        w: &mut Writer,
        test: &Expr,
        body: &[Stmt],
        orelse: &[Stmt],
        src: &str,
    ) -> Result<()> {
        w.line(format!("if {}:  {src}", self.expr(test)?));
        w.indent();
        self.block(w, body)?;
        w.dedent();
        if !orelse.is_empty() {
            w.line("else:");
            w.indent();
            self.block(w, orelse)?;
            w.dedent();
        }
        Ok(())
    }

    /// `e` as its lanes see it: a reduction to a scalar is a constant, and a reduction over the
    /// rows of a row tile is its value without the rows (one value per lane).
    fn lanes_view(&self, e: &Expr) -> Expr {
        e.clone().rewrite(&mut |x| match x.kind {
            ExprKind::Reduce { .. } => Expr::int(0, x.span),
            ExprKind::ReduceRows { value, .. } => value.rewrite(&mut |y| match &y.kind {
                ExprKind::Name(n) if self.rows.contains(n) => Expr::int(0, y.span),
                _ => y,
            }),
            _ => x,
        })
    }

    /// The masks guarding the lanes of a vector expression (empty for scalars).
    pub(super) fn mask_of(&self, e: &Expr) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        // A reduction's result is a scalar: the masks inside it are consumed there.
        // (Copied only when there is one: a long chain of gathers asks for the masks of every
        // load in it, and copying each subtree made that cubic.)
        let pruned;
        let e = if e.any(&mut |x| {
            matches!(
                x.kind,
                ExprKind::Reduce { .. } | ExprKind::ReduceRows { .. }
            )
        }) {
            pruned = self.lanes_view(e);
            &pruned
        } else {
            e
        };
        e.walk(&mut |x| match &x.kind {
            ExprKind::Name(n) => {
                if let Some(m) = self.masks.get(n) {
                    out.extend(m.iter().cloned());
                }
            }
            ExprKind::Vidx { .. } => {
                // An inline vidx: its bound check is spelled out where it is used.
                if let Ok(m) = self.inline_vidx_mask(x) {
                    out.insert(m);
                }
            }
            _ => {}
        });
        out
    }

    fn inline_vidx_mask(&self, e: &Expr) -> Result<String> {
        let ExprKind::Vidx { bound, .. } = &e.kind else {
            unreachable!()
        };
        let mut me = Cx {
            file: self.file,
            masks: self.masks.clone(),
            float_params: self.float_params.clone(),
            carried: HashMap::new(),
            lane_vectors: HashSet::new(),
            lane_width: self.lane_width,
            tile_names: self.tile_names.clone(),
            int_names: self.int_names.clone(),
            cg: self.cg.clone(),
            rows: self.rows.clone(),
            strips: self.strips.clone(),
            splitting: false,
            host_ints: self.host_ints.clone(),
            one_strip: vec![],
            row_block: vec![],
        };
        Ok(format!("({}) < {}", me.expr(e)?, me.expr(bound)?))
    }

    pub(super) fn pointer(&mut self, e: &Expr) -> Result<String> {
        let ExprKind::Subscript { array, indices } = &e.kind else {
            unreachable!()
        };
        let mut parts = vec![array.clone()];
        for (d, ix) in indices.iter().enumerate() {
            let Index::At(i) = ix else {
                return Err(Diagnostic::error(
                    e.span,
                    "internal: slice left after strip-mining",
                ));
            };
            let t = self.expr_prec(i, binop_prec(BinOp::Mul) + 1)?;
            parts.push(format!("{t} * {array}_stride{d}"));
        }
        Ok(parts.join(" + "))
    }

    pub(super) fn expr(&mut self, e: &Expr) -> Result<String> {
        self.expr_prec(e, 0)
    }

    pub(super) fn expr_prec(&mut self, e: &Expr, ctx: u8) -> Result<String> {
        let paren = |s: String, own: u8| if own < ctx { format!("({s})") } else { s };
        Ok(match &e.kind {
            ExprKind::Name(n) if n == "appy.MVL" => "MVL".into(),
            ExprKind::Name(n) => self.tile_names.get(n).cloned().unwrap_or_else(|| n.clone()),
            ExprKind::Int(v) => paren(v.to_string(), if *v < 0 { prec::UNARY } else { prec::ATOM }),
            ExprKind::Float(v) => paren(
                float_literal(*v),
                if *v < 0.0 { prec::UNARY } else { prec::ATOM },
            ),
            ExprKind::Bool(b) => if *b { "True" } else { "False" }.into(),
            ExprKind::FloatSpecial(s) => format!("float(\"{s}\")"),
            ExprKind::Subscript { array, .. } => {
                let ptr = self.pointer(e)?;
                let mask = self.mask_of(e);
                let cg = if self.cg.contains(array) {
                    ", cache_modifier=\".cg\""
                } else {
                    ""
                };
                format!("tl.load({ptr}{}{cg})", mask_arg(&mask))
            }
            ExprKind::Shape { array, dim } => format!("{array}_shape{dim}"),
            ExprKind::Binary {
                op: BinOp::Pow,
                left,
                right,
            } => match right.kind {
                ExprKind::Int(2) => {
                    let l = self.expr_prec(left, binop_prec(BinOp::Mul) + 1)?;
                    paren(format!("{l} * {l}"), binop_prec(BinOp::Mul))
                }
                _ => format!("libdevice.pow({}, {})", self.expr(left)?, self.expr(right)?),
            },
            ExprKind::Binary { op, left, right } => {
                let p = binop_prec(*op);
                let (wide_left, wide_right) = self.float64_operands(*op, left, right);
                // Appended to the left operand's text, not formatted anew: a long
                // left-associated chain (`a + b + c + ...`) then prints in linear time.
                let mut l = if wide_left {
                    format!("{}.to(tl.float64)", self.expr_prec(left, prec::ATOM)?)
                } else {
                    self.expr_prec(left, p)?
                };
                let r = if wide_right {
                    format!("{}.to(tl.float64)", self.expr_prec(right, prec::ATOM)?)
                } else {
                    self.expr_prec(right, p + 1)?
                };
                l.reserve(r.len() + 5);
                l.push(' ');
                l.push_str(op.python());
                l.push(' ');
                l.push_str(&r);
                paren(l, p)
            }
            ExprKind::Unary { op, operand } => {
                let o = self.expr_prec(operand, prec::UNARY)?;
                match op {
                    UnaryOp::Neg => paren(format!("-{o}"), prec::UNARY),
                    UnaryOp::Invert => paren(format!("~{o}"), prec::UNARY),
                    UnaryOp::Not => format!("({o} == 0)"),
                }
            }
            ExprKind::Compare { op, left, right } => {
                let l = self.expr_prec(left, prec::CMP + 1)?;
                let r = self.expr_prec(right, prec::CMP + 1)?;
                paren(format!("{l} {} {r}", op.python()), prec::CMP)
            }
            ExprKind::BoolOp { op, values } => {
                // Element-wise on vectors: `&`/`|` over comparisons (which bind looser, hence parens).
                let sym = match op {
                    BoolOp::And => " & ",
                    BoolOp::Or => " | ",
                };
                let parts = values
                    .iter()
                    .map(|v| self.expr_prec(v, prec::ATOM))
                    .collect::<Result<Vec<_>>>()?;
                paren(parts.join(sym), binop_prec(BinOp::BitAnd))
            }
            ExprKind::IfExp { test, body, orelse } => format!(
                "tl.where({}, {}, {})",
                self.expr(test)?,
                self.expr(body)?,
                self.expr(orelse)?
            ),
            ExprKind::Call { func, args } => self.call(e, func, args)?,
            ExprKind::Vidx { start, width, .. } => {
                let s = self.expr_prec(start, binop_prec(BinOp::Add))?;
                let wd = width_text(*width);
                paren(format!("{s} + tl.arange(0, {wd})"), binop_prec(BinOp::Add))
            }
            ExprKind::ReduceRows { .. } => {
                return Err(Diagnostic::error(
                    e.span,
                    "internal: a reduction over rows outside the updates of its row tile",
                ))
            }
            ExprKind::Reduce { op, value } => {
                let mask = self.mask_of(value);
                let v = self.expr(value)?;
                let m = if mask.is_empty() {
                    "True".to_string()
                } else {
                    mask.iter().cloned().collect::<Vec<_>>().join(" & ")
                };
                match op {
                    ReduceOp::Sum => format!("tl.sum(tl.where({m}, {v}, 0), axis=0)"),
                    ReduceOp::Max => format!("_appyc_masked_max({v}, {m})"),
                    ReduceOp::Min => format!("_appyc_masked_min({v}, {m})"),
                }
            }
            ExprKind::Unsupported(what) => {
                return Err(Diagnostic::error(
                    e.span,
                    format!("{what} is not supported inside a parallel region"),
                ))
            }
            ExprKind::Broadcast { .. } => {
                return Err(Diagnostic::error(
                    e.span,
                    "internal: a broadcast left after tensor lowering",
                ))
            }
        })
    }

    fn call(&mut self, e: &Expr, func: &str, args: &[Expr]) -> Result<String> {
        if func == STORED_IN {
            let [value, Expr {
                kind: ExprKind::Subscript { array, .. },
                ..
            }] = args
            else {
                unreachable!("fuse_into_reduction makes (value, element)");
            };
            let value = self.cast_operand(value)?;
            return Ok(format!("{value}.to({array}.dtype.element_ty)"));
        }
        let name = func
            .strip_prefix("np.")
            .or_else(|| func.strip_prefix("numpy."))
            .or_else(|| func.strip_prefix("math."))
            .unwrap_or(func);
        let a = args
            .iter()
            .map(|x| self.expr(x))
            .collect::<Result<Vec<_>>>()?;
        let arity = |n: usize| -> Result<()> {
            if a.len() == n {
                Ok(())
            } else {
                Err(Diagnostic::error(
                    e.span,
                    format!("`{func}` takes {n} argument(s) here, not {}", a.len()),
                ))
            }
        };
        Ok(match name {
            // Transcendentals go through libdevice: correct in fp32 and fp64 alike.
            // (The prelude gives the interpreter a stand-in for each one listed here.)
            "exp" | "log" | "sin" | "cos" | "tan" | "tanh" | "sinh" | "cosh" | "exp2" | "log2"
            | "log10" | "log1p" | "expm1" | "erf" | "floor" | "ceil" => {
                arity(1)?;
                format!("libdevice.{name}({})", a[0])
            }
            "sqrt" => {
                arity(1)?;
                format!("libdevice.sqrt({})", a[0])
            }
            "abs" | "absolute" | "fabs" => {
                arity(1)?;
                format!("tl.abs({})", a[0])
            }
            "power" | "pow" => {
                arity(2)?;
                format!("libdevice.pow({}, {})", a[0], a[1])
            }
            "where" => {
                arity(3)?;
                format!("tl.where({}, {}, {})", a[0], a[1], a[2])
            }
            "maximum" | "max" | "fmax" | "minimum" | "min" | "fmin" => {
                if a.len() < 2 {
                    return Err(Diagnostic::error(
                        e.span,
                        format!("`{func}` of one argument is a reduction; not supported inside a parallel loop yet"),
                    ));
                }
                let f = if matches!(name, "maximum" | "max" | "fmax") {
                    "tl.maximum"
                } else {
                    "tl.minimum"
                };
                let mut acc = a[0].clone();
                for x in &a[1..] {
                    acc = format!("{f}({acc}, {x})");
                }
                acc
            }
            "float" | "float64" => {
                arity(1)?;
                format!("{}.to(tl.float64)", self.cast_operand(&args[0])?)
            }
            "float32" => {
                arity(1)?;
                format!("{}.to(tl.float32)", self.cast_operand(&args[0])?)
            }
            "int" | "int64" => {
                arity(1)?;
                format!("{}.to(tl.int64)", self.cast_operand(&args[0])?)
            }
            "int32" => {
                arity(1)?;
                format!("{}.to(tl.int32)", self.cast_operand(&args[0])?)
            }
            _ => {
                return Err(Diagnostic::error(
                    e.span,
                    format!("`{func}` is not supported inside a parallel region"),
                )
                .with_help("kernels support arithmetic, np.exp/exp2/expm1/log/log2/log10/log1p/sqrt/abs/sin/cos/tan/sinh/cosh/tanh/erf/floor/ceil/power, np.where, np.maximum/minimum, min/max/abs/float/int"))
            }
        })
    }

    /// `x.to(...)` needs a tensor: literals are wrapped with `tl.full`.
    fn cast_operand(&mut self, e: &Expr) -> Result<String> {
        Ok(match e.kind {
            ExprKind::Int(v) => format!("tl.full((), {v}, tl.int64)"),
            ExprKind::Float(v) => format!("tl.full((), {}, tl.float64)", float_literal(v)),
            _ => self.expr_prec(e, prec::ATOM)?,
        })
    }

    /// A Triton expression for the dtype that `update` has, when the kernel's arrays and
    /// parameters decide it; `None` leaves the literal's own type.
    fn dtype_of(&self, update: &Expr, target: &str) -> Option<String> {
        self.promoted_dtype(update, target, &|_| None)
    }

    /// `dtype_of`, with also the dtypes that `named` gives to names (locals already defined).
    fn promoted_dtype(
        &self,
        update: &Expr,
        target: &str,
        named: &dyn Fn(&str) -> Option<String>,
    ) -> Option<String> {
        struct Leaves<'c> {
            target: &'c str,
            floats: &'c HashSet<String>,
            named: &'c dyn Fn(&str) -> Option<String>,
        }
        // The value's dtype comes from the arrays it loads (not from arrays used as indices),
        // from fp64 parameters and from the names `named` knows.
        fn leaves(e: &Expr, cx: &Leaves, out: &mut Vec<String>) {
            let mut add = |t: String| {
                if !out.contains(&t) {
                    out.push(t)
                }
            };
            match &e.kind {
                ExprKind::Subscript { array, .. } => add(format!("{array}.dtype.element_ty")),
                ExprKind::Name(n) if n != cx.target && cx.floats.contains(n) => {
                    add("tl.float64".into())
                }
                ExprKind::Name(n) if n != cx.target => {
                    if let Some(t) = (cx.named)(n) {
                        add(t)
                    }
                }
                ExprKind::Binary { left, right, .. } => {
                    leaves(left, cx, out);
                    leaves(right, cx, out);
                }
                ExprKind::Unary { operand, .. } => leaves(operand, cx, out),
                ExprKind::IfExp { body, orelse, .. } => {
                    leaves(body, cx, out);
                    leaves(orelse, cx, out);
                }
                // A value converted to an element type has that type.
                ExprKind::Call { func, args } if func == STORED_IN => leaves(&args[1], cx, out),
                ExprKind::Call { args, .. } => args.iter().for_each(|a| leaves(a, cx, out)),
                ExprKind::Reduce { value, .. } | ExprKind::ReduceRows { value, .. } => {
                    leaves(value, cx, out)
                }
                _ => {}
            }
        }
        let cx = Leaves {
            target,
            floats: &self.float_params,
            named,
        };
        let mut strong: Vec<String> = vec![];
        leaves(update, &cx, &mut strong);
        match strong.len() {
            0 => None,
            1 => strong.pop(),
            _ => Some(format!(
                "({}).dtype",
                strong
                    .iter()
                    .map(|t| format!("tl.zeros((), {t})"))
                    .collect::<Vec<_>>()
                    .join(" + ")
            )),
        }
    }
}

/// One update of a row tile: `target = target ⊕ ReduceRows(value)` (`-` when `negated`),
/// folded into the partial accumulator `acc`.
struct RowUpdate<'a> {
    target: &'a str,
    op: ReduceOp,
    negated: bool,
    value: &'a Expr,
    acc: &'a str,
    /// The whole update (its lanes' masks are the result's).
    update: &'a Expr,
    span: Span,
}

/// A row tile's body (`strip_mine::row_tile`): element statements over the strip's rows
/// (locals, stores of the rows' own elements), then the updates.
struct RowTile<'a> {
    elements: &'a [Stmt],
    updates: Vec<RowUpdate<'a>>,
}

impl RowTile<'_> {
    /// `e` with the strip's locals replaced by their values (latest first, so a local read by
    /// another's value is replaced in turn).
    fn with_locals_inlined(&self, e: &Expr) -> Expr {
        let mut e = e.clone();
        for s in self.elements.iter().rev() {
            if let StmtKind::Assign { target, value, .. } = &s.kind {
                if let ExprKind::Name(n) = &target.kind {
                    e = e.rewrite(&mut |x| match &x.kind {
                        ExprKind::Name(m) if m == n => value.clone(),
                        _ => x,
                    });
                }
            }
        }
        e
    }
}

/// The row tile of a strip-mined loop's body (`strip_mine::row_tile`), `None` for other loops.
fn row_tile_of(body: &[Stmt]) -> Option<RowTile<'_>> {
    let first = body.iter().position(|s| row_update(s).is_some())?;
    let updates = body[first..]
        .iter()
        .map(row_update)
        .collect::<Option<Vec<_>>>()?;
    Some(RowTile {
        elements: &body[..first],
        updates,
    })
}

/// A row tile's update `s = s ⊕ ReduceRows(e)`.
fn row_update(s: &Stmt) -> Option<RowUpdate<'_>> {
    let StmtKind::Assign {
        target,
        value: update,
        atomic: false,
    } = &s.kind
    else {
        return None;
    };
    let ExprKind::Name(n) = &target.kind else {
        return None;
    };
    let (op, (reduced, negated)) = match as_reduction(target, update)? {
        (op, ReductionOperand::Plain(r)) => (op, (r, false)),
        (op, ReductionOperand::Negated(r)) => (op, (r, true)),
    };
    let ExprKind::ReduceRows { value, acc, .. } = &reduced.kind else {
        return None;
    };
    Some(RowUpdate {
        target: n,
        op,
        negated,
        value,
        acc,
        update,
        span: s.span,
    })
}

fn mask_arg(mask: &BTreeSet<String>) -> String {
    if mask.is_empty() {
        String::new()
    } else {
        format!(
            ", mask={}",
            mask.iter().cloned().collect::<Vec<_>>().join(" & ")
        )
    }
}

/// A host time loop run as one persistent kernel, as the printer needs it (decided by
/// `schedule`).
pub struct PersistentLoop<'k> {
    pub name: String,
    /// The host loop: `for var in range(start, stop, step)`.
    pub var: String,
    pub range: &'k Range,
    /// The loop's line, for the comment at the kernel's head.
    pub line: usize,
    /// The regions of one iteration, in order: phase `r` of an iteration runs `regions[r]`.
    pub regions: Vec<&'k Kernel>,
    /// `barrier_after[r]`: a grid-wide barrier follows phase `r`.
    pub barrier_after: Vec<bool>,
}

/// The persistent kernel of a host time loop. Phases are numbered `iteration * R + region`; a
/// launch runs phases `[phase_lo, phase_hi)`, each region as a grid-stride loop over its virtual
/// programs. On the GPU one cooperative launch runs every phase, with grid barriers between
/// dependent phases (`GRID_SYNC`); under Triton's interpreter, which runs programs one after
/// another (a spinning barrier would never return), the launcher makes one launch per phase.
///
/// Loads stay plain (L1-cached) although other SMs wrote the data in an earlier phase: the
/// barrier's acquire at GPU scope, followed by the CTA barrier, orders every later load of the
/// program after those writes (PTX memory model), and the hardware honours it by invalidating
/// the SM's L1. `.cg` loads would be correct too, but cost 6 % on a 2-D stencil (H100).
pub fn persistent_kernel(p: &PersistentLoop, file: &SourceFile) -> Result<KernelCode> {
    let analyses: Vec<Analysis> = p.regions.iter().map(|k| analyse(k)).collect();
    let put_targets: HashSet<String> = p
        .regions
        .iter()
        .filter_map(|k| match &k.comm {
            Some(Comm::Put { dest, .. }) => match &dest.kind {
                ExprKind::Subscript { array, .. } => Some(array.clone()),
                _ => None,
            },
            _ => None,
        })
        .collect();
    let mut params: Vec<Param> = vec![];
    for a in &analyses {
        for param in &a.params {
            let name = param.kernel_name();
            if name == p.var {
                continue; // the loop variable is the kernel's own
            }
            match params.iter().position(|q| q.kernel_name() == name) {
                // A scalar that some region uses as an integer is an integer.
                Some(i) if matches!(param, Param::IntScalar(_)) => params[i] = param.clone(),
                Some(_) => {}
                None => params.push(param.clone()),
            }
        }
    }
    // Same order as a kernel of one region: arrays, scalars, strides, shapes.
    let rank = |q: &Param| match q {
        Param::Array(_) => 0,
        Param::IntScalar(_) | Param::FloatScalar(_) => 1,
        Param::Stride(..) => 2,
        Param::Shape(..) => 3,
    };
    params.sort_by_key(rank);
    let mut host_args: Vec<String> = vec![];
    let mut written: Vec<String> = vec![];
    for a in &analyses {
        for h in &a.host_args {
            if *h != p.var {
                push_unique(&mut host_args, h);
            }
        }
        for x in &a.written {
            push_unique(&mut written, x);
        }
    }
    let mut used: HashSet<String> = p.regions.iter().flat_map(|k| k.names()).collect();
    used.extend(params.iter().map(Param::kernel_name));
    used.insert(p.var.clone());
    let mut fresh = |base: &str| fresh_name(base, &mut used);
    let (pid, nprog, arrived, phase, iter, region) = (
        fresh("pid"),
        fresh("nprog"),
        fresh("arrived"),
        fresh("phase"),
        fresh("iteration"),
        fresh("region"),
    );
    let start = (!matches!(p.range.start.kind, ExprKind::Int(0)))
        .then(|| fresh(&format!("{}_start", p.var)));
    let step =
        (!matches!(p.range.step.kind, ExprKind::Int(1))).then(|| fresh(&format!("{}_step", p.var)));
    let (phase_lo, phase_hi, sync) = (fresh("phase_lo"), fresh("phase_hi"), fresh("sync"));

    let mut sig = signature(&params);
    sig.extend(start.iter().chain(step.iter()).cloned());
    sig.extend([phase_lo.clone(), phase_hi.clone(), sync.clone()]);
    sig.push("MVL: tl.constexpr".into());
    sig.push("GRID_SYNC: tl.constexpr".into());
    // The body first: whether the signature takes `ONE_STRIP` depends on its strip loops.
    let mut w = Writer::new(1);
    let mut one_strip: Vec<(Expr, Expr, Width)> = vec![];
    let mut row_block: Vec<Option<(Expr, Expr)>> = vec![];
    let nregions = p.regions.len();
    w.line(format!(
        "# {}:{}: {}  (persistent: {} phase(s) per iteration)",
        file.name,
        p.line,
        file.line_text(p.line).trim(),
        nregions
    ));
    w.line(format!("{pid} = tl.program_id(0)"));
    w.line(format!("{nprog} = tl.num_programs(0)"));
    w.line(format!("{arrived} = tl.full((), 0, tl.int64)"));
    w.line(format!("for {phase} in range({phase_lo}, {phase_hi}):"));
    w.indent();
    if nregions == 1 {
        w.line(format!("{iter} = {phase}"));
    } else {
        w.line(format!("{iter} = {phase} // {nregions}"));
        w.line(format!("{region} = {phase} - {iter} * {nregions}"));
    }
    let scaled = match &step {
        Some(s) => format!("{iter} * {s}"),
        None => iter.clone(),
    };
    w.line(match &start {
        Some(s) => format!("{} = {s} + {scaled}", p.var),
        None => format!("{} = {scaled}", p.var),
    });
    for (r, (k, analysis)) in p.regions.iter().zip(&analyses).enumerate() {
        if nregions > 1 {
            w.line(format!("if {region} == {r}:"));
            w.indent();
        }
        let mut cx = Cx::new(file, k, analysis);
        cx.float_params = params
            .iter()
            .filter_map(|q| match q {
                Param::FloatScalar(n) => Some(n.clone()),
                _ => None,
            })
            .collect();
        // The host loop's variable is the kernel's own, different in every iteration.
        cx.host_ints.remove(&p.var);
        if let Some(c) = &k.comm {
            w.line(format!(
                "# {}:{}: {}",
                file.name,
                file.line_of(k.span.start as usize),
                file.line_text(file.line_of(k.span.start as usize)).trim()
            ));
            cx.comm(&mut w, c, &pid, &nprog)?;
        } else if k.dims.is_empty() {
            cx.pragma_comment(&mut w, k);
            // A `sequential for` region: one program runs it.
            w.line(format!("if {pid} == 0:"));
            w.indent();
            cx.region(&mut w, k, &[])?;
            w.dedent();
        } else {
            cx.pragma_comment(&mut w, k);
            cx.cg = put_targets.clone();
            // Programs per grid axis (axis 0 innermost), then a grid-stride loop over the
            // virtual programs of the region.
            let ndims = k.dims.len();
            let mut counts = vec![String::new(); ndims];
            for (d, dim) in k.dims.iter().enumerate() {
                let axis = ndims - 1 - d;
                let n = fresh(&format!("n{r}_{axis}"));
                let ExprKind::Int(s) = dim.range.step.kind else {
                    unreachable!("schedule keeps regions with literal steps only")
                };
                let (from, to) = (cx.expr(&dim.range.start)?, cx.expr(&dim.range.stop)?);
                let span = if s > 0 {
                    format!("({to}) - ({from})")
                } else {
                    format!("({from}) - ({to})")
                };
                let trips = if s.abs() == 1 {
                    span
                } else {
                    format!("tl.cdiv({span}, {})", s.abs())
                };
                let programs = match dim.simd {
                    None => trips,
                    Some(wd) => format!("tl.cdiv({trips}, {})", width_text(wd)),
                };
                w.line(format!("{n} = tl.maximum({programs}, 0)"));
                counts[axis] = n;
            }
            let vp = fresh("vp");
            w.line(format!(
                "for {vp} in range({pid}, {}, {nprog}):",
                counts.join(" * ")
            ));
            w.indent();
            let mut ids = vec![String::new(); ndims];
            if ndims == 1 {
                ids[0] = vp.clone();
            } else {
                let mut rest = vp.clone();
                for axis in 0..ndims {
                    let id = fresh(&format!("pid{r}_{axis}"));
                    if axis + 1 == ndims {
                        w.line(format!("{id} = {rest}"));
                    } else {
                        w.line(format!("{id} = {rest} % {}", counts[axis]));
                        let next = fresh(&format!("rest{r}_{axis}"));
                        w.line(format!("{next} = {rest} // {}", counts[axis]));
                        rest = next;
                    }
                    ids[axis] = id;
                }
            }
            cx.region(&mut w, k, &ids)?;
            w.dedent();
        }
        one_strip.append(&mut cx.one_strip);
        row_block.append(&mut cx.row_block);
        if nregions > 1 {
            w.dedent();
        }
    }
    let barriers: Vec<usize> = (0..nregions).filter(|r| p.barrier_after[*r]).collect();
    if !barriers.is_empty() {
        w.line("if GRID_SYNC:");
        w.indent();
        if barriers.len() < nregions {
            let cond: Vec<String> = barriers
                .iter()
                .map(|r| format!("({region} == {r})"))
                .collect();
            w.line(format!("if {}:", cond.join(" | ")));
            w.indent();
        }
        w.line(format!("{arrived} += {nprog}"));
        w.line(format!("_appyc_grid_barrier({sync}, {arrived})"));
        if barriers.len() < nregions {
            w.dedent();
        }
        w.dedent();
    }
    if !row_block.is_empty() {
        sig.push(ROW_BLOCK_PARAM.into());
    }
    if !one_strip.is_empty() {
        sig.push(ONE_STRIP_PARAM.into());
    }
    let mut head = Writer::new(0);
    // Phase numbers change from launch to launch (one launch per phase): specialising on them
    // (== 1, divisible by 16) would compile several copies of the kernel.
    head.line(format!(
        "@triton.jit(do_not_specialize=[\"{phase_lo}\", \"{phase_hi}\"])"
    ));
    head.line(format!("def {}({}):", p.name, sig.join(", ")));
    Ok(KernelCode {
        text: head.finish() + &w.finish(),
        params,
        host_args,
        uses_mvl: true,
        written_arrays: written,
        one_strip,
        row_block,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::{compile, Options};

    use crate::codegen::test_support::{function, generated};

    const TWO_PHASES: &str = "def f(A, B, M, N, T):
    for t in range(T):
        #pragma parallel for
        for i in range(1, M - 1):
            #pragma parallel for
            for j in range(1, N - 1):
                B[i, j] = A[i - 1, j] + A[i + 1, j] + t
        #pragma parallel for
        for i in range(1, M - 1):
            #pragma parallel for
            for j in range(1, N - 1):
                A[i, j] = B[i, j]
";

    #[test]
    fn a_persistent_kernel_runs_each_region_as_a_grid_stride_loop_of_one_phase() {
        let out = generated(TWO_PHASES);
        let k = function(&out, "_f_persistent0");
        // Phases: iteration and region from the phase number; the loop variable in the kernel.
        assert!(
            k.contains("for _phase in range(_phase_lo, _phase_hi):"),
            "{k}"
        );
        assert!(k.contains("_iteration = _phase // 2"), "{k}");
        assert!(k.contains("_region = _phase - _iteration * 2"), "{k}");
        assert!(k.contains("t = _iteration"), "{k}");
        // A 2-D region: programs per axis (a row block of the outer, the inner's lanes),
        // virtual programs split back.
        assert!(
            k.contains("_n0_1 = tl.maximum(tl.cdiv((M - 1) - (1), ROW_BLOCK), 0)"),
            "{k}"
        );
        assert!(
            k.contains("_n0_0 = tl.maximum(tl.cdiv((N - 1) - (1), MVL // ROW_BLOCK), 0)"),
            "{k}"
        );
        assert!(
            k.contains("for _vp in range(_pid, _n0_0 * _n0_1, _nprog):"),
            "{k}"
        );
        assert!(k.contains("_pid0_0 = _vp % _n0_0"), "{k}");
        assert!(
            k.contains("i = 1 + _pid0_1 * ROW_BLOCK + tl.arange(0, ROW_BLOCK)"),
            "{k}"
        );
        assert!(
            k.contains("j = 1 + _pid0_0 * (MVL // ROW_BLOCK) + tl.arange(0, MVL // ROW_BLOCK)"),
            "{k}"
        );
        // Both phases conflict with the next: a barrier after every phase, on the GPU only.
        assert!(k.contains("if GRID_SYNC:\n"), "{k}");
        assert!(!k.contains("if (_region =="), "{k}");
        assert!(k.contains("_appyc_grid_barrier(_sync, _arrived)"), "{k}");
        // The loop variable is the kernel's own, not a parameter.
        assert!(!k.lines().next().unwrap().contains(", t,"), "{k}");
    }

    #[test]
    fn the_host_loop_becomes_one_launcher_call() {
        let out = generated(TWO_PHASES);
        let f = function(&out, "f");
        assert_eq!(
            f.trim_end(),
            "def f(A, B, M, N, T):\n    _launch_f_persistent0(B, A, M, N, T)"
        );
        let l = function(&out, "_launch_f_persistent0");
        assert!(l.contains("n_t = int(T)"), "{l}");
        assert!(
            l.contains("_appyc_persistent(\n        _f_persistent0, n_t * 2,"),
            "{l}"
        );
    }

    #[test]
    fn barriers_are_only_where_phases_conflict() {
        let src = "def f(X, Y, N, T):
    for t in range(T):
        #pragma parallel for simd
        for i in range(N):
            X[i] = X[i] * 2.0
        #pragma parallel for simd
        for i in range(N):
            Y[i] = Y[i] + 1.0
";
        // Each region only touches its own element: still, the next iteration of a region
        // reads what other programs wrote, so each phase conflicts with its own next run.
        // Region 0 and region 1 are independent, so one barrier per iteration suffices.
        let out = generated(src);
        let k = function(&out, "_f_persistent0");
        assert!(k.contains("if (_region == 1):"), "{k}");
    }

    // ------------------------------------------------------------- one statement kind each

    /// The kernel `_{f}_kernel0` of the module compiled from `src`.
    fn kernel_of(src: &str, f: &str) -> String {
        function(&generated(src), &format!("_{f}_kernel0")).to_string()
    }

    /// Whether `k` has a line that is `line` followed by its `# t.py:N` comment, or `line` alone.
    fn has_line(k: &str, line: &str) -> bool {
        k.lines().any(|l| {
            let l = l.trim();
            l == line
                || l.strip_prefix(line)
                    .is_some_and(|rest| rest.starts_with("  # t.py:"))
        })
    }

    #[test]
    fn split_rows_store_partials_and_the_last_split_combines_them_in_order_then_stores() {
        let src = "def f(A, x, y, N, M):\n    #pragma parallel for simd\n    for j in range(M):\n        s = 0.0\n        for i in range(N):\n            s -= y[i] * A[i, j]\n        x[j] += s\n";
        let out = generated(src);
        let k = function(&out, "_f_kernel0");
        let lines = code_lines(k);
        // Each split walks its own rows, masked by its own end.
        let rows = line_at(
            &lines,
            "for _i_base in range(_appyc_rows_lo, _appyc_rows_hi, 32):",
        );
        assert!(has_line(k, "i_mask = i < _appyc_rows_hi"), "{k}");
        let partial = line_at(
            &lines,
            "tl.store(_appyc_part + _appyc_split * _appyc_stride, tl.sum(_s_rows, axis=0))",
        );
        let arrive = line_at(
            &lines,
            "_appyc_arrived = tl.atomic_add(_appyc_arrivals + tl.program_id(0), 1, sem=\"acq_rel\")",
        );
        let last = line_at(&lines, "if _appyc_arrived == tl.num_programs(1) - 1:");
        let reset = line_at(&lines, "tl.store(_appyc_arrivals + tl.program_id(0), 0)");
        let result = line_at(&lines, "s = s + _appyc_total");
        let store = line_at(
            &lines,
            "tl.store(x + j * x_stride0, tl.load(x + j * x_stride0, mask=j_mask) + s, mask=j_mask)",
        );
        assert!(rows < partial && partial < arrive && arrive < last, "{k}");
        assert!(last < reset && reset < result && result < store, "{k}");
        // The store runs only in the combining program.
        let indent = |l: &str| l.len() - l.trim_start().len();
        assert!(indent(lines[store]) > indent(lines[last]), "{k}");
        let launcher = function(&out, "_launch_f_kernel0");
        assert!(
            launcher.contains("    _f_kernel0, (_appyc_blocks, _appyc_splits,),"),
            "{launcher}"
        );
        assert!(
            launcher.contains("_appyc_row_split(_appyc_blocks, int(N) - int(0), 32, y.device)"),
            "{launcher}"
        );
    }

    #[test]
    fn a_store_of_lanes_is_masked_by_the_lanes_of_its_index() {
        let k = kernel_of(
            "def f(A, B, N):\n    #pragma parallel for simd\n    for i in range(N):\n        B[i] = A[i] * 2.0\n",
            "f",
        );
        assert!(has_line(&k, "i_mask = i < N"), "{k}");
        assert!(
            has_line(
                &k,
                "tl.store(B + i * B_stride0, tl.load(A + i * A_stride0, mask=i_mask) * 2.0, mask=i_mask)"
            ),
            "{k}"
        );
    }

    #[test]
    fn an_atomic_update_adds_its_operand_under_the_index_s_mask() {
        let k = kernel_of(
            "def f(keys, vals, out, N):\n    #pragma parallel for\n    for i in range(N):\n        #pragma atomic\n        out[keys[i]] -= vals[i]\n",
            "f",
        );
        assert!(
            has_line(
                &k,
                "tl.atomic_add(out + tl.load(keys + i * keys_stride0, mask=i_mask) * out_stride0, -(tl.load(vals + i * vals_stride0, mask=i_mask)), mask=i_mask)"
            ),
            "{k}"
        );
    }

    #[test]
    fn an_atomic_store_that_is_no_update_is_an_error() {
        let Err(e) = compile(
            &SourceFile::new(
                "t.py",
                "def f(keys, vals, out, N):\n    #pragma parallel for\n    for i in range(N):\n        #pragma atomic\n        out[keys[i]] = vals[i]\n",
            ),
            &Options::default(),
        ) else {
            panic!("an error expected");
        };
        assert!(
            e.message.contains("`#pragma atomic` needs an update"),
            "{}",
            e.message
        );
    }

    #[test]
    fn a_carried_local_starts_as_a_vector_of_the_update_s_dtype() {
        let k = kernel_of(
            // The store before the rows keeps the row tile in one program (no split_rows).
            "def f(A, r, M, N):\n    #pragma parallel for\n    for i in range(M):\n        r[i] = 0.0\n        s = 0.0\n        for j in range(N):\n            s += A[i, j]\n        r[i] = s\n",
            "f",
        );
        assert!(
            has_line(&k, "s = tl.full((MVL,), 0.0, A.dtype.element_ty)"),
            "{k}"
        );
        // The row loop is a row tile (strip_mine::row_tile): 32 rows of `j` a strip.
        assert!(has_line(&k, "for _j_base in range(0, N, 32):"), "{k}");
        assert!(
            has_line(&k, "tl.store(r + i * r_stride0, s, mask=i_mask)"),
            "{k}"
        );
    }

    /// The lines of `k` without their `# t.py:N` comments, indentation kept.
    fn code_lines(k: &str) -> Vec<&str> {
        k.lines()
            .map(|l| l.split("  # t.py:").next().unwrap_or(l))
            .collect()
    }

    /// The position of the line of `lines` that is `line` (indentation aside).
    fn line_at(lines: &[&str], line: &str) -> usize {
        lines
            .iter()
            .position(|l| l.trim() == line)
            .unwrap_or_else(|| panic!("no `{line}` in:\n{}", lines.join("\n")))
    }

    #[test]
    fn a_row_tile_adds_its_strips_into_a_2d_accumulator_and_reduces_its_rows_once() {
        let k = kernel_of(
            // The store before the rows keeps the row tile in one program (no split_rows).
            "def f(A, y, x, M, N):\n    #pragma parallel for simd\n    for j in range(N):\n        x[j] = 0.0\n        s = 0.0\n        for i in range(M):\n            s += y[i] * A[i, j]\n        x[j] = s\n",
            "f",
        );
        let l = code_lines(&k);
        let at = line_at(&l, "for _i_base in range(0, M, 32):");
        // [rows, lanes] of zeros in the dtype of the products, before the loop.
        assert_eq!(
            l[at - 1].trim(),
            "_s_rows = tl.zeros((32, MVL), (tl.zeros((), y.dtype.element_ty) + tl.zeros((), A.dtype.element_ty)).dtype)",
            "{k}"
        );
        assert_eq!(l[at + 1].trim(), "i = _i_base + tl.arange(0, 32)", "{k}");
        assert_eq!(l[at + 2].trim(), "i_mask = i < M", "{k}");
        // Rows on axis 0, the lanes (1-D, broadcast as the last axis) on axis 1; rows past M
        // add zero. No reduction inside the loop.
        assert_eq!(
            l[at + 3].trim(),
            "_s_rows = _s_rows + tl.where(i_mask[:, None] & j_mask, tl.load(y + i[:, None] * y_stride0, mask=i_mask[:, None]) * tl.load(A + i[:, None] * A_stride0 + j * A_stride1, mask=i_mask[:, None] & j_mask), 0)",
            "{k}"
        );
        // After the loop (at its indentation): the rows reduced once into the carried sum.
        let indent = |x: &str| x.len() - x.trim_start().len();
        assert_eq!(l[at + 4].trim(), "s = s + tl.sum(_s_rows, axis=0)", "{k}");
        assert_eq!(indent(l[at + 4]), indent(l[at]), "{k}");
        assert_eq!(k.matches("tl.sum(").count(), 1, "{k}");
        // The accumulator is a vector of the lanes, and so is its mask after the loop.
        assert!(k.contains("s = tl.full((MVL,), 0.0, "), "{k}");
        assert!(
            has_line(&k, "tl.store(x + j * x_stride0, s, mask=j_mask)"),
            "{k}"
        );
    }

    #[test]
    fn a_row_tile_s_max_min_and_subtraction_start_from_their_identities() {
        // (After an import: the prelude goes above the source's first statement.)
        let src = "import numpy as np\n\n\ndef f(A, y, x, lo, M, N):\n    #pragma parallel for simd\n    for j in range(N):\n        s = 0.0\n        m = A[0, j]\n        n = A[0, j]\n        for i in range(lo, M):\n            s -= A[i, j]\n            m = max(m, A[i, j])\n            n = min(n, A[i, j])\n            s += y[i] * A[i, j]\n        x[j] = s + m + n\n";
        let module = generated(src);
        let k = function(&module, "_f_kernel0");
        let l = code_lines(k);
        let at = line_at(&l, "for _i_base in range(lo, M, 32):");
        // One accumulator per carried value (the two updates of `s` share one), each from
        // its identity: the dtype's lowest value for max, its highest for min.
        assert_eq!(
            l[at - 3..at].iter().map(|x| x.trim()).collect::<Vec<_>>(),
            [
                "_s_rows = tl.zeros((32, MVL), (tl.zeros((), A.dtype.element_ty) + tl.zeros((), y.dtype.element_ty)).dtype)",
                "_m_rows = _appyc_lowest_like(tl.zeros((32, MVL), A.dtype.element_ty))",
                "_n_rows = _appyc_highest_like(tl.zeros((32, MVL), A.dtype.element_ty))",
            ],
            "{k}"
        );
        let a =
            "tl.load(A + i[:, None] * A_stride0 + j * A_stride1, mask=i_mask[:, None] & j_mask)";
        let m = "i_mask[:, None] & j_mask";
        assert_eq!(
            l[at + 3..at + 7].iter().map(|x| x.trim()).collect::<Vec<_>>(),
            [
                format!("_s_rows = _s_rows - tl.where({m}, {a}, 0)"),
                format!("_m_rows = tl.maximum(_m_rows, tl.where({m}, {a}, _m_rows))"),
                format!("_n_rows = tl.minimum(_n_rows, tl.where({m}, {a}, _n_rows))"),
                format!("_s_rows = _s_rows + tl.where({m}, tl.load(y + i[:, None] * y_stride0, mask=i_mask[:, None]) * {a}, 0)"),
            ],
            "{k}"
        );
        // The rows reduced once each, combined with the carried values (`m`'s start is A[0]).
        assert_eq!(
            l[at + 7..at + 10]
                .iter()
                .map(|x| x.trim())
                .collect::<Vec<_>>(),
            [
                "s = s + tl.sum(_s_rows, axis=0)",
                "m = tl.maximum(m, tl.max(_m_rows, axis=0))",
                "n = tl.minimum(n, tl.min(_n_rows, axis=0))",
            ],
            "{k}"
        );
        assert!(
            module.contains("def _appyc_lowest_like(x):")
                && module.contains("def _appyc_highest_like(x):"),
            "{module}"
        );
    }

    #[test]
    fn a_row_tile_update_without_the_rows_still_masks_the_rows_past_the_bound() {
        // `s += t` adds `t` once per row: the rows' mask makes it [rows, lanes].
        let k = kernel_of(
            "def f(A, x, M, N):\n    #pragma parallel for simd\n    for j in range(N):\n        t = A[0, j] * 0.5\n        s = 1.0\n        for i in range(M):\n            s += t\n        x[j] = s\n",
            "f",
        );
        assert!(
            has_line(
                &k,
                "_s_rows = _s_rows + tl.where(i_mask[:, None] & j_mask, t, 0)"
            ),
            "{k}"
        );
        // No array in the value: the dtype of the vector it reads (defined before the loop).
        assert!(
            has_line(&k, "_s_rows = tl.zeros((32, MVL), t.dtype)"),
            "{k}"
        );
    }

    #[test]
    fn a_row_tile_in_a_simd_loop_takes_the_strip_s_lanes() {
        let k = kernel_of(
            "def f(A, C, M, N):\n    #pragma parallel for\n    for i in range(N):\n        #pragma simd(64)\n        for j in range(N):\n            s = 0.0\n            for k in range(M):\n                s += A[k, i] * A[k, j]\n            C[i, j] = s\n",
            "f",
        );
        assert!(k.contains("s = tl.full(j.shape, 0.0, "), "{k}");
        assert!(
            has_line(&k, "_s_rows = tl.zeros((32, 64), A.dtype.element_ty)"),
            "{k}"
        );
        assert!(has_line(&k, "for _k_base in range(0, M, 32):"), "{k}");
        assert!(has_line(&k, "s = s + tl.sum(_s_rows, axis=0)"), "{k}");
        assert!(
            has_line(
                &k,
                "tl.store(C + i * C_stride0 + j * C_stride1, s, mask=j_mask)"
            ),
            "{k}"
        );
    }

    #[test]
    fn a_strip_mined_loop_defines_its_vector_index_and_mask() {
        // (The store before the strip keeps one row a program: no row block.)
        let k = kernel_of(
            "def f(A, B, M, N):\n    #pragma parallel for\n    for i in range(M):\n        B[i, 0] = 0.0\n        #pragma simd\n        for j in range(N):\n            B[i, j] = A[i, j] + 1.0\n",
            "f",
        );
        let body: Vec<&str> = k.lines().skip(4).collect();
        assert!(
            body[0]
                .trim()
                .starts_with("for _j_base in range(0, 1 if ONE_STRIP else N, MVL):"),
            "{k}"
        );
        assert_eq!(body[1].trim(), "j = _j_base + tl.arange(0, MVL)", "{k}");
        assert_eq!(body[2].trim(), "j_mask = j < N", "{k}");
        assert!(body[3].contains("mask=j_mask)  # t.py:7"), "{k}");
    }

    #[test]
    fn a_strip_loop_over_host_bounds_gets_the_one_strip_switch_and_its_launcher_sets_it() {
        let module = generated(
            "def f(A, B, M, N, lo):\n    #pragma parallel for\n    for i in range(M):\n        B[i, 0] = 0.0\n        #pragma simd\n        for j in range(lo + 1, N - 1):\n            B[i, j] = A[i, j] + 1.0\n",
        );
        let k = function(&module, "_f_kernel0");
        assert!(
            k.contains("MVL: tl.constexpr, ONE_STRIP: tl.constexpr = False):"),
            "{k}"
        );
        assert!(
            has_line(
                k,
                "for _j_base in range(lo + 1, lo + 1 + 1 if ONE_STRIP else N - 1, MVL):"
            ),
            "{k}"
        );
        // The launcher switches it on only for a non-empty extent within one strip.
        let launcher = function(&module, "_launch_f_kernel0");
        assert!(
            launcher.contains(
                "{\"MVL\": _appyc_mvl, \"ONE_STRIP\": 0 < int(N - 1) - int(lo + 1) <= _appyc_mvl}"
            ),
            "{launcher}"
        );
    }

    #[test]
    fn a_row_block_is_a_tile_of_rows_by_strip_lanes_sized_by_the_launcher() {
        let module = generated(
            "def f(A, B, M, N, lo):\n    #pragma parallel for\n    for i in range(1, M):\n        #pragma simd\n        for j in range(lo, N - 1):\n            B[i, j] = A[i - 1, j] + 1.0\n",
        );
        let k = function(&module, "_f_kernel0");
        assert!(
            k.contains(
                "MVL: tl.constexpr, ROW_BLOCK: tl.constexpr, ONE_STRIP: tl.constexpr = False):"
            ),
            "{k}"
        );
        // The program's rows (axis 0) and the strip's lanes (axis 1): MVL lanes in all.
        for line in [
            "i = 1 + tl.program_id(0) * ROW_BLOCK + tl.arange(0, ROW_BLOCK)  # t.py:3",
            "i_mask = i < M",
            "for _j_base in range(lo, lo + 1 if ONE_STRIP else N - 1, MVL // ROW_BLOCK):  # t.py:5",
            "j = _j_base + tl.arange(0, MVL // ROW_BLOCK)",
            "tl.store(B + i[:, None] * B_stride0 + j[None, :] * B_stride1, tl.load(A + (i[:, None] - 1) * A_stride0 + j[None, :] * A_stride1, mask=i_mask[:, None] & j_mask[None, :]) + 1.0, mask=i_mask[:, None] & j_mask[None, :])  # t.py:6",
        ] {
            assert!(has_line(k, line), "{line}\n{k}");
        }
        // The launcher sizes the block from the strip's extent, counts blocks of rows, and
        // compares the extent with the strip's share of MVL.
        let launcher = function(&module, "_launch_f_kernel0");
        for line in [
            "_appyc_row_block = _appyc_rows_a_program(_appyc_mvl, int(N - 1) - int(lo))",
            "_f_kernel0, ((n_i + _appyc_row_block - 1) // _appyc_row_block,),",
            "{\"MVL\": _appyc_mvl, \"ROW_BLOCK\": _appyc_row_block, \"ONE_STRIP\": 0 < int(N - 1) - int(lo) <= _appyc_mvl // _appyc_row_block}, num_warps=_appyc_warps,",
        ] {
            assert!(has_line(launcher, line), "{line}\n{launcher}");
        }
        // In a persistent loop: blocks of rows per virtual program, sized by the longest strip.
        let module = generated(
            "def f(A, B, M, N, T):\n    for t in range(T):\n        #pragma parallel for\n        for i in range(M):\n            #pragma simd\n            for j in range(N):\n                B[i, j] = A[i, j] + 1.0\n        #pragma parallel for\n        for i in range(M):\n            #pragma simd\n            for j in range(1, N - 1):\n                A[i, j] = B[i, j - 1] * B[i, j + 1]\n",
        );
        let k = function(&module, "_f_persistent0");
        assert!(
            has_line(k, "_n0_0 = tl.maximum(tl.cdiv((M) - (0), ROW_BLOCK), 0)"),
            "{k}"
        );
        let launcher = function(&module, "_launch_f_persistent0");
        assert!(
            has_line(
                launcher,
                "_appyc_row_block = _appyc_rows_a_program(_appyc_mvl, max(int(N), int(N - 1) - int(1)))"
            ),
            "{launcher}"
        );
    }

    #[test]
    fn a_strip_loop_whose_bounds_move_with_the_program_keeps_its_loop() {
        // A bound of the grid variable, a kernel local, or the host loop's own variable in a
        // persistent loop is not known to the launcher: no switch, no `ONE_STRIP` parameter.
        for src in [
            "def f(A, B, M, N):\n    #pragma parallel for\n    for i in range(M):\n        #pragma simd\n        for j in range(i + 1, N):\n            B[i, j] = A[i, j] + 1.0\n",
            "def f(A, B, M, N):\n    #pragma parallel for\n    for i in range(M):\n        n = N - i\n        #pragma simd\n        for j in range(n):\n            B[i, j] = A[i, j] + 1.0\n",
        ] {
            let k = kernel_of(src, "f");
            assert!(!k.contains("ONE_STRIP"), "{k}");
        }
        let module = generated(
            "def f(A, B, M, N, T):\n    for t in range(T):\n        #pragma parallel for\n        for i in range(M):\n            #pragma simd\n            for j in range(t, N):\n                B[i, j] = A[i, j] + 1.0\n",
        );
        let k = function(&module, "_f_persistent0");
        assert!(
            has_line(k, "for _j_base in range(t, N, MVL // ROW_BLOCK):"),
            "{k}"
        );
        assert!(!k.contains("ONE_STRIP"), "{k}");
        // Nor can it size a row block from such a strip: one row a program, still correct.
        let launcher = function(&module, "_launch_f_persistent0");
        assert!(has_line(launcher, "_appyc_row_block = 1"), "{launcher}");
    }

    #[test]
    fn a_2d_tile_spells_its_indices_as_a_column_and_a_row() {
        let k = kernel_of(
            "def f(A, B, L, M, N):\n    #pragma parallel for\n    for i in range(L):\n        #pragma :M=>simd :N=>simd\n        B[i, :M, :N] = A[i, :M, :N]\n",
            "f",
        );
        assert!(
            k.contains("B + i * B_stride0 + _i[:, None] * B_stride1 + _i1[None, :] * B_stride2"),
            "{k}"
        );
        assert!(
            k.contains("mask=_i1_mask[None, :] & _i_mask[:, None])"),
            "{k}"
        );
    }

    #[test]
    fn a_plain_loop_keeps_its_step_and_an_if_its_else() {
        let k = kernel_of(
            "def f(A, B, M, N):\n    #pragma parallel for\n    for i in range(M):\n        for j in range(1, N, 2):\n            if A[i, j] > 0.0:\n                B[i, j] = A[i, j]\n            else:\n                B[i, j] = 0.0\n",
            "f",
        );
        let body: Vec<&str> = k.lines().skip(3).map(str::trim).collect();
        assert!(body[0].starts_with("for j in range(1, N, 2):"), "{k}");
        assert!(
            body[1].starts_with("if tl.load(A + i * A_stride0 + j * A_stride1) > 0.0:"),
            "{k}"
        );
        assert_eq!(body[3], "else:", "{k}");
        assert!(
            body[4].starts_with("tl.store(B + i * B_stride0 + j * B_stride1, 0.0)"),
            "{k}"
        );
    }

    #[test]
    fn barriers_and_empty_bodies_print_as_such() {
        use crate::ir::build;
        let file = SourceFile::new("t.py", "#pragma parallel for\n");
        let k = build::kernel(vec![
            Stmt::new(StmtKind::Barrier, crate::frontend::source::Span::DUMMY),
            Stmt::new(
                StmtKind::If {
                    test: build::name("c"),
                    body: vec![],
                    orelse: vec![],
                },
                crate::frontend::source::Span::DUMMY,
            ),
        ]);
        let code = kernel(&k, &file).unwrap();
        let lines: Vec<&str> = code.text.lines().collect();
        assert_eq!(lines[1], "def k(c: \"fp64\"):", "{}", code.text);
        assert_eq!(lines[2], "    # t.py:1: #pragma parallel for");
        assert_eq!(lines[3], "    tl.debug_barrier()");
        assert_eq!(lines[4], "    if c:  # t.py:1");
        assert_eq!(lines[5], "        pass");
        assert_eq!(code.params, [Param::FloatScalar("c".into())]);
    }
}
