//! The printer's context for one kernel (`Cx`), shared by every form, and the statements it
//! prints: a region's grid variables, assignments to locals, stores, atomic updates, plain
//! loops and `if`s. The other statements' methods are in `strips` (strip-mined loops), `rows`
//! (row tiles, split rows) and `comm` (communication); expressions are in `expr`.
//!
//! Design decisions:
//! - One `Cx` a kernel (or a region of a persistent kernel) holds what printing has learnt so
//!   far: the masks that guard each vector name, how tile indices are spelled, the strip loops
//!   the launcher sizes. Its fields are `pub(super)` for the other files of the printer; those
//!   the tile printer reads or sets are `pub(crate)`.
//! - Masks follow names, not uses: a name assigned from lanes takes their masks, and a load or
//!   store is masked by the masks of the names its index reads.
//! - A loop-carried local initialised by a literal is initialised in its update's dtype (and
//!   the lanes' shape): Triton refuses a variable that changes type in a loop.

use crate::codegen::analysis::{first_load_wave, Analysis};
use crate::codegen::kernel_code::Param;
use crate::codegen::writer::Writer;
use crate::diag::{Diagnostic, Result};
use crate::frontend::source::SourceFile;
use crate::ir::python::binop_prec;
use crate::ir::*;
use std::collections::{BTreeSet, HashMap, HashSet};

/// The printer's state for one kernel (shared with the tile printer, hence `pub(crate)`).
pub(crate) struct Cx<'a> {
    pub(crate) file: &'a SourceFile,
    /// Vector name → the mask expressions that guard its lanes.
    pub(crate) masks: HashMap<String, BTreeSet<String>>,
    pub(super) float_params: HashSet<String>,
    /// Local names initialised by a literal and updated later: their init gets a fixed dtype.
    pub(super) carried: HashMap<String, Expr>,
    /// Those updates as the init's dtype reads them (`Analysis::carried_dtype`).
    pub(super) carried_dtype: HashMap<String, Expr>,
    /// Locals holding per-lane values of a `parallel for simd` program, and its width.
    pub(super) lane_vectors: HashSet<String>,
    pub(super) lane_width: Option<Width>,
    /// Tile indices and how they are spelled (`_i0[:, None]`).
    pub(crate) tile_names: HashMap<String, String>,
    /// Names known to hold integers: loop variables and integer parameters.
    pub(crate) int_names: HashSet<String>,
    /// Row indices of row tiles (axis 0 of a 2-D tile): `ReduceRows` reduces them away.
    pub(super) rows: HashSet<String>,
    /// Widths of the enclosing 1-D strip-mined loops: the lanes of a row tile inside one.
    pub(super) strips: Vec<Width>,
    /// The row tile being printed has its rows split over grid axis 1 (`passes::split_rows`):
    /// its results are combined across the splits, and what follows runs in one program.
    pub(super) splitting: bool,
    /// Integer parameters the kernel never binds: host values, the same in every program, so a
    /// bound made of them can be evaluated by the launcher.
    pub(super) host_ints: HashSet<String>,
    /// The strip loops printed with the `ONE_STRIP` switch (see `KernelCode::one_strip`).
    pub(super) one_strip: Vec<(Expr, Expr, Width)>,
    /// The strips of row blocks (see `KernelCode::row_block`).
    pub(super) row_block: Vec<Option<(Expr, Expr)>>,
    /// A 2-D store's loads go in two waves (`analysis::first_load_wave`), the second after a
    /// CTA barrier that waits for the first: set for the regions of a kernel that communicates.
    pub(super) load_waves: bool,
    /// Loads already issued into locals for the store being printed, and those locals' names.
    pub(super) preloaded: Vec<(Expr, String)>,
}

pub(super) fn width_text(w: Width) -> String {
    match w {
        Width::Mvl => "MVL".into(),
        Width::Fixed(n) => n.to_string(),
        Width::RowBlock => "ROW_BLOCK".into(),
        // Printed only where an argument stands alone (`tl.arange(0, w)`, a range's step).
        Width::RowBlockLanes => "MVL // ROW_BLOCK".into(),
    }
}

pub(super) fn mask_arg(mask: &BTreeSet<String>) -> String {
    if mask.is_empty() {
        String::new()
    } else {
        format!(
            ", mask={}",
            mask.iter().cloned().collect::<Vec<_>>().join(" & ")
        )
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
    pub(crate) fn new(file: &'a SourceFile, k: &Kernel, analysis: &Analysis) -> Cx<'a> {
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
            carried_dtype: analysis.carried_dtype.clone(),
            lane_vectors: analysis.lane_vectors.clone(),
            // A row block's rows are a tile axis, not lanes that carry locals.
            lane_width: k
                .dims
                .last()
                .and_then(|d| d.simd)
                .filter(|w| !matches!(w, Width::RowBlock | Width::RowBlockLanes)),
            tile_names: HashMap::new(),
            int_names: int_names(k, analysis),
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
            load_waves: false,
            preloaded: vec![],
        }
    }

    /// `# file:line: #pragma ...`: where the region comes from.
    pub(crate) fn pragma_comment(&self, w: &mut Writer, k: &Kernel) {
        let line = self.file.line_of(k.span.start as usize);
        let pragma_text = self.file.line_text(line).trim();
        w.line(format!("# {}:{}: {}", self.file.name, line, pragma_text));
    }

    /// A region's grid variables and body. `program_ids[axis]` is the program's coordinate on
    /// grid axis `axis` (`tl.program_id(axis)` in a kernel of its own, a virtual program's
    /// coordinate inside a persistent kernel); the innermost dimension is axis 0.
    pub(super) fn region(
        &mut self,
        w: &mut Writer,
        k: &Kernel,
        program_ids: &[String],
    ) -> Result<()> {
        self.dims(w, k, program_ids)?;
        self.block(w, &k.body)
    }

    /// The grid variables of a region (see `region`).
    pub(super) fn dims(
        &mut self,
        w: &mut Writer,
        k: &Kernel,
        program_ids: &[String],
    ) -> Result<()> {
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

    pub(super) fn src(&self, span: crate::frontend::source::Span) -> String {
        format!(
            "# {}:{}",
            self.file.name,
            self.file.line_of(span.start as usize)
        )
    }

    pub(super) fn block(&mut self, w: &mut Writer, body: &[Stmt]) -> Result<()> {
        if body.is_empty() {
            w.line("pass");
        }
        for s in body {
            self.stmt(w, s)?;
        }
        Ok(())
    }

    /// One statement, by kind.
    pub(super) fn stmt(&mut self, w: &mut Writer, s: &Stmt) -> Result<()> {
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
            | StmtKind::While { .. }
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
        match self.dtype_of(self.carried_dtype.get(n).unwrap_or(update), n) {
            // An infinite start is max's or min's identity: over integers it is the dtype's
            // extreme (Triton cannot fill an integer with an infinity).
            Some(dt) if value.kind == ExprKind::FloatSpecial("-inf") => {
                format!("_appyc_lowest_like(tl.zeros({shape}, {dt}))")
            }
            Some(dt) if value.kind == ExprKind::FloatSpecial("inf") => {
                format!("_appyc_highest_like(tl.zeros({shape}, {dt}))")
            }
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

    /// `tl.store` of an element (or the lanes of a vector) of an array; with `load_waves`, its
    /// first wave of loads into locals before it.
    fn store(&mut self, w: &mut Writer, target: &Expr, value: &Expr, src: &str) -> Result<()> {
        let ptr = self.pointer(target)?;
        let mask = self.mask_of(target);
        if self.load_waves {
            self.first_wave(w, target, value)?;
        }
        let val = self.expr(value);
        self.preloaded.clear();
        w.line(format!(
            "tl.store({ptr}, {}{})  {src}",
            val?,
            mask_arg(&mask)
        ));
        Ok(())
    }

    /// The first wave of a 2-D store's loads, each into a local that `expr` prints in its place,
    /// then (on the GPU) the CTA barrier that waits for them: every warp's later loads then hit
    /// the lines they brought into the L1, in whatever order ptxas issues them.
    fn first_wave(&mut self, w: &mut Writer, target: &Expr, value: &Expr) -> Result<()> {
        // Only a store of a whole tile (every index a tile index): a store of one element, in a
        // loop a `sequential for` region runs, would wait at a CTA barrier per element.
        let ExprKind::Subscript { indices, .. } = &target.kind else {
            return Ok(());
        };
        let tile_index = |ix: &Index| match ix {
            Index::At(e) => matches!(&e.kind, ExprKind::Name(n) if self.tile_names.contains_key(n)),
            _ => false,
        };
        if !indices.iter().all(tile_index) {
            return Ok(());
        }
        let first = first_load_wave(target, value);
        if first.is_empty() {
            return Ok(());
        }
        let mut names = vec![];
        for (n, load) in first.into_iter().enumerate() {
            let name = format!("_appyc_wave{n}");
            w.line(format!("{name} = {}", self.expr(load)?));
            self.preloaded.push((load.clone(), name.clone()));
            names.push(name);
        }
        w.line("if GRID_SYNC:");
        w.indent();
        w.line(format!(
            "_appyc_nvshmem_loads_arrived({})",
            names.join(" + ")
        ));
        w.dedent();
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
}

#[cfg(test)]
mod tests {
    use crate::codegen::test_support::{has_line, kernel_of};
    use crate::driver::{compile, Options};
    use crate::frontend::source::SourceFile;

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
                "tl.store(B + i * B_stride0, _appyc_np_float(tl.load(A + i * A_stride0, mask=i_mask)) * 2.0, mask=i_mask)"
            ),
            "{k}"
        );
    }

    #[test]
    fn array_elements_meeting_a_float_compute_as_numpy_does() {
        // NumPy: an integer array times a Python float, or divided, is float64; a Python int
        // (the loop variable) divided by a float array keeps the array's type.
        let k = kernel_of(
            "def f(K, D, X, Y, Z, W, N):\n    #pragma parallel for simd\n    for i in range(N):\n        Y[i] = K[i] * 0.5 + i * 0.5\n        Z[i] = 1.5 - K[i] / D[i]\n        W[i] = i / X[i] + K[i] * N\n",
            "f",
        );
        let load = |a: &str| format!("tl.load({a} + i * {a}_stride0, mask=i_mask)");
        for line in [
            format!(
                "tl.store(Y + i * Y_stride0, _appyc_np_float({}) * 0.5 + i.to(tl.float64) * 0.5, mask=i_mask)",
                load("K")
            ),
            // The quotient is a float already: not converted again.
            format!(
                "tl.store(Z + i * Z_stride0, 1.5 - _appyc_np_float({}) / _appyc_np_float({}), mask=i_mask)",
                load("K"),
                load("D")
            ),
            format!(
                "tl.store(W + i * W_stride0, i / _appyc_np_float({}) + {} * N, mask=i_mask)",
                load("X"),
                load("K")
            ),
        ] {
            assert!(has_line(&k, &line), "{line}\n{k}");
        }
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

    #[test]
    fn a_carried_init_takes_the_dtype_of_a_local_defined_after_it() {
        // `t` is defined inside the loop, after `s = 0.0` is printed: its value decides.
        let k = kernel_of(
            "def f(A, x, r, M, N):\n    #pragma parallel for\n    for i in range(M):\n        s = 0.0\n        #pragma simd\n        for j in range(N):\n            t = A[i, j]\n            s += t * x[j]\n        r[i] = s\n",
            "f",
        );
        assert!(
            has_line(
                &k,
                "s = tl.full((), 0.0, (tl.zeros((), A.dtype.element_ty) + tl.zeros((), x.dtype.element_ty)).dtype)"
            ),
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
}
