//! The kernel IR: a small, typed-by-shape subset of Python that every pass reads and rewrites.
//!
//! The frontend lowers each compiled function body into these statements; the passes turn
//! high-level APPy (pragmas, `simd` loops, slices) into "assembly APPy" (strip-mined loops over
//! vector indices), and the printers in `codegen` render that either as Triton or as Python.

pub mod expr;
pub mod pragma;
pub mod python;

use crate::frontend::source::Span;
pub use pragma::Pragma;

pub use expr::*;

/// `range(start, stop, step)` after normalisation.
#[derive(Debug, Clone, PartialEq)]
pub struct Range {
    pub start: Expr,
    pub stop: Expr,
    pub step: Expr,
}

/// How a loop runs. Set from pragmas by `attach_pragmas`, refined by later passes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoopKind {
    /// A plain Python loop: host code at function level, a sequential loop inside a kernel.
    Plain,
    /// `parallel for`: one worker per iteration; `simd` makes each worker take a vector of them.
    Parallel { simd: Option<Width> },
    /// `sequential for`: one worker runs every iteration.
    Sequential,
    /// `simd` on an inner loop, before strip-mining.
    Simd(Width),
    /// A strip-mined loop: `var` steps by the width, `vector` holds `vidx(var, width, stop)`.
    StripMined {
        width: Width,
        /// In a 2-D tile, the axis this loop's vector spans (0: rows, 1: columns).
        tile: Option<u8>,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub enum StmtKind {
    /// `target = value` where target is a name or a subscript. `+=` etc. become this (normalize).
    Assign {
        target: Expr,
        value: Expr,
        /// Set by `#pragma atomic`.
        atomic: bool,
    },
    /// `target op= value`, before `normalize` turns it into an `Assign`.
    AugAssign {
        target: Expr,
        op: BinOp,
        value: Expr,
    },
    /// A `for` over something other than `range`, a `while` or a `with`: host-only control flow
    /// whose body may still hold parallel loops.
    HostBlock {
        what: &'static str,
        body: Vec<Stmt>,
    },
    /// `while test:` (without `else`): host control flow; `schedule` may run it on the device.
    While {
        test: Expr,
        body: Vec<Stmt>,
    },
    For {
        var: String,
        range: Range,
        body: Vec<Stmt>,
        kind: LoopKind,
        /// For `StripMined` loops: the name bound to the vector index inside the body.
        vector: Option<String>,
        /// `num_warps(N)` from the pragma (top-level parallel loops only).
        num_warps: Option<u32>,
    },
    If {
        test: Expr,
        body: Vec<Stmt>,
        orelse: Vec<Stmt>,
    },
    /// An expression statement (only calls are meaningful).
    Expr(Expr),
    Pass,
    /// Worker-wide barrier inserted by `insert_sync`.
    Barrier,
    /// A statement with no kernel meaning (while, return, with, ...): fine in host code,
    /// an error inside a parallel region. The string names it for the message.
    Other(&'static str),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
    /// The pragma written above this statement, if any (set by `attach_pragmas`).
    pub pragma: Option<Pragma>,
}

impl Stmt {
    pub fn new(kind: StmtKind, span: Span) -> Self {
        Stmt {
            kind,
            span,
            pragma: None,
        }
    }

    /// A plain (non-atomic) `target = value`.
    pub fn assign(target: Expr, value: Expr, span: Span) -> Self {
        Stmt::new(
            StmtKind::Assign {
                target,
                value,
                atomic: false,
            },
            span,
        )
    }

    pub fn is_parallel_loop(&self) -> bool {
        matches!(
            self.kind,
            StmtKind::For {
                kind: LoopKind::Parallel { .. } | LoopKind::Sequential,
                ..
            }
        )
    }

    /// Visits this statement and every nested statement, parents first.
    pub fn walk<'a>(&'a self, f: &mut dyn FnMut(&'a Stmt)) {
        f(self);
        match &self.kind {
            StmtKind::For { body, .. }
            | StmtKind::HostBlock { body, .. }
            | StmtKind::While { body, .. } => body.iter().for_each(|s| s.walk(f)),
            StmtKind::If { body, orelse, .. } => {
                body.iter().chain(orelse.iter()).for_each(|s| s.walk(f))
            }
            _ => {}
        }
    }

    /// Rewrites every expression of this statement and its nested statements with `f`.
    pub fn rewrite_exprs(&mut self, f: &mut dyn FnMut(Expr) -> Expr) {
        let mut one = |e: &mut Expr| {
            let old = std::mem::replace(e, Expr::int(0, e.span));
            *e = f(old);
        };
        match &mut self.kind {
            StmtKind::Assign { target, value, .. } | StmtKind::AugAssign { target, value, .. } => {
                one(target);
                one(value);
            }
            StmtKind::For { range, body, .. } => {
                one(&mut range.start);
                one(&mut range.stop);
                one(&mut range.step);
                body.iter_mut().for_each(|s| s.rewrite_exprs(f));
            }
            StmtKind::HostBlock { body, .. } => body.iter_mut().for_each(|s| s.rewrite_exprs(f)),
            StmtKind::While { test, body } => {
                one(test);
                body.iter_mut().for_each(|s| s.rewrite_exprs(f));
            }
            StmtKind::If { test, body, orelse } => {
                one(test);
                body.iter_mut()
                    .chain(orelse.iter_mut())
                    .for_each(|s| s.rewrite_exprs(f));
            }
            StmtKind::Expr(e) => one(e),
            _ => {}
        }
    }

    /// Every name this statement and its nested ones mention: loop variables, names read or
    /// assigned, arrays indexed or measured.
    pub fn names(&self) -> std::collections::HashSet<String> {
        let mut used = std::collections::HashSet::new();
        self.walk(&mut |st| {
            if let StmtKind::For { var, .. } = &st.kind {
                used.insert(var.clone());
            }
            for e in st.exprs() {
                e.walk(&mut |x| match &x.kind {
                    ExprKind::Name(n) => {
                        used.insert(n.clone());
                    }
                    ExprKind::Subscript { array, .. } | ExprKind::Shape { array, .. } => {
                        used.insert(array.clone());
                    }
                    _ => {}
                });
            }
        });
        used
    }

    /// `name = value`, not atomic: (the target, its name, the value).
    pub fn name_assignment(&self) -> Option<(&Expr, &str, &Expr)> {
        match &self.kind {
            StmtKind::Assign {
                target,
                value,
                atomic: false,
            } => match &target.kind {
                ExprKind::Name(n) => Some((target, n, value)),
                _ => None,
            },
            _ => None,
        }
    }

    /// Every expression directly held by this statement (not by nested statements).
    pub fn exprs(&self) -> Vec<&Expr> {
        match &self.kind {
            StmtKind::Assign { target, value, .. } | StmtKind::AugAssign { target, value, .. } => {
                vec![target, value]
            }
            StmtKind::For { range, .. } => vec![&range.start, &range.stop, &range.step],
            StmtKind::If { test, .. } | StmtKind::While { test, .. } => vec![test],
            StmtKind::Expr(e) => vec![e],
            _ => vec![],
        }
    }
}

/// A function to compile: its body in IR plus where it sits in the source.
#[derive(Debug, Clone)]
pub struct Function {
    pub name: String,
    pub params: Vec<String>,
    pub body: Vec<Stmt>,
    pub span: Span,
}

impl Function {
    /// Every name the function uses (parameters, loop variables, variables, arrays), so that
    /// names a pass makes up never collide with the user's.
    pub fn names(&self) -> std::collections::HashSet<String> {
        let mut used: std::collections::HashSet<String> = self.params.iter().cloned().collect();
        for s in &self.body {
            used.extend(s.names());
        }
        used
    }
}

/// Recognises a reduction update `t = t op v`, `t = max(t, v)`, `t = np.maximum(t, v)` and
/// returns the operator and `v`. Subtraction is a sum of the negation.
pub fn as_reduction<'a>(
    target: &Expr,
    value: &'a Expr,
) -> Option<(ReduceOp, ReductionOperand<'a>)> {
    match &value.kind {
        ExprKind::Binary { op, left, right } if **left == *target || same_place(left, target) => {
            match op {
                BinOp::Add => Some((ReduceOp::Sum, ReductionOperand::Plain(right))),
                BinOp::Sub => Some((ReduceOp::Sum, ReductionOperand::Negated(right))),
                _ => None,
            }
        }
        ExprKind::Call { func, args } if args.len() == 2 => {
            let op = match func.as_str() {
                "max" | "np.maximum" | "numpy.maximum" => ReduceOp::Max,
                "min" | "np.minimum" | "numpy.minimum" => ReduceOp::Min,
                _ => return None,
            };
            if same_place(&args[0], target) {
                Some((op, ReductionOperand::Plain(&args[1])))
            } else if same_place(&args[1], target) {
                Some((op, ReductionOperand::Plain(&args[0])))
            } else {
                None
            }
        }
        _ => None,
    }
}

/// The `v` of a reduction update; `Negated` for `t -= v`.
#[derive(Debug, Clone, Copy)]
pub enum ReductionOperand<'a> {
    Plain(&'a Expr),
    Negated(&'a Expr),
}

/// Structural equality ignoring spans: `y[i]` on both sides of `y[i] = y[i] + v`.
pub fn same_place(a: &Expr, b: &Expr) -> bool {
    fn strip(e: &Expr) -> Expr {
        e.clone().rewrite(&mut |mut x| {
            x.span = Span::DUMMY;
            if let ExprKind::Subscript { indices, .. } = &mut x.kind {
                for ix in indices {
                    if let Index::Slice { span, .. } = ix {
                        *span = Span::DUMMY;
                    }
                }
            }
            x
        })
    }
    strip(a) == strip(b)
}

impl Kernel {
    /// Every name the kernel binds: its grid's variables, locals, loop variables and vector
    /// indices.
    pub fn bound_names(&self) -> std::collections::HashSet<String> {
        let mut names: std::collections::HashSet<String> =
            self.dims.iter().map(|d| d.var.clone()).collect();
        for s in &self.body {
            s.walk(&mut |st| match &st.kind {
                StmtKind::Assign { target, .. } => {
                    if let ExprKind::Name(n) = &target.kind {
                        names.insert(n.clone());
                    }
                }
                StmtKind::For { var, vector, .. } => {
                    names.insert(var.clone());
                    names.extend(vector.clone());
                }
                _ => {}
            });
        }
        names
    }

    /// Whether the kernel names the array `name`: an element of it, or its shape (in the body or
    /// in a bound of its grid).
    pub fn names_array(&self, name: &str) -> bool {
        let names = |x: &Expr| matches!(&x.kind, ExprKind::Subscript { array, .. } | ExprKind::Shape { array, .. } if array == name);
        let mut found = self.dims.iter().any(|d| {
            [&d.range.start, &d.range.stop]
                .iter()
                .any(|e| e.any(&mut |x| names(x)))
        });
        for s in &self.body {
            s.walk(&mut |st| {
                for e in st.exprs() {
                    found |= e.any(&mut |x| names(x));
                }
            });
        }
        found
    }

    /// The kernel with every array `rename` answers for (in subscripts and shapes, in its body
    /// and its grid's bounds) spelled as the answer.
    pub fn with_arrays_renamed(&self, rename: &dyn Fn(&str) -> Option<String>) -> Kernel {
        let mut k = self.clone();
        let mut one = |e: Expr| {
            e.rewrite(&mut |mut x| {
                if let ExprKind::Subscript { array, .. } | ExprKind::Shape { array, .. } =
                    &mut x.kind
                {
                    if let Some(new) = rename(array) {
                        *array = new;
                    }
                }
                x
            })
        };
        for s in k.body.iter_mut() {
            s.rewrite_exprs(&mut one);
        }
        for d in k.dims.iter_mut() {
            for e in [&mut d.range.start, &mut d.range.stop, &mut d.range.step] {
                *e = one(std::mem::replace(e, Expr::int(0, e.span)));
            }
        }
        k
    }

    /// Every name the kernel uses (variables, arrays, loop variables), so that names the
    /// compiler makes up never collide with the user's.
    pub fn names(&self) -> std::collections::HashSet<String> {
        let mut used: std::collections::HashSet<String> =
            self.dims.iter().map(|d| d.var.clone()).collect();
        for s in &self.body {
            s.walk(&mut |st| {
                for e in st.exprs() {
                    e.walk(&mut |x| match &x.kind {
                        ExprKind::Name(n) => {
                            used.insert(n.clone());
                        }
                        ExprKind::Subscript { array, .. } | ExprKind::Shape { array, .. } => {
                            used.insert(array.clone());
                        }
                        _ => {}
                    });
                }
                if let StmtKind::For { var, vector, .. } = &st.kind {
                    used.insert(var.clone());
                    used.extend(vector.iter().cloned());
                }
            });
        }
        used
    }

    /// The names the kernel uses as integers: every name an integer root reaches (a bound of
    /// its grid or of a loop, an index, a slice bound, an nvshmem argument, a vector index's
    /// start and bound, an operand of `//`, `%` or a bitwise operator that is no boolean),
    /// directly or through the locals assigned from them. The printer makes such host scalars
    /// integer parameters, and the schedule types them alike.
    pub fn integer_names(&self) -> std::collections::HashSet<String> {
        let mut roots: Vec<&Expr> = vec![];
        let mut assigns: Vec<(&str, &Expr)> = vec![];
        for d in &self.dims {
            roots.extend([&d.range.start, &d.range.stop, &d.range.step]);
        }
        for s in &self.body {
            s.walk(&mut |st| {
                match &st.kind {
                    StmtKind::Assign { target, value, .. } => {
                        if let ExprKind::Name(n) = &target.kind {
                            assigns.push((n, value));
                        }
                    }
                    StmtKind::For { range, .. } => {
                        roots.extend([&range.start, &range.stop, &range.step])
                    }
                    _ => {}
                }
                for e in st.exprs() {
                    e.walk(&mut |x| integer_operands(x, &mut roots));
                }
            });
        }
        let mut ints: std::collections::HashSet<String> = Default::default();
        while let Some(e) = roots.pop() {
            e.walk(&mut |x| {
                if let ExprKind::Name(n) = &x.kind {
                    if ints.insert(n.clone()) {
                        roots.extend(assigns.iter().filter(|(m, _)| m == n).map(|(_, v)| *v));
                    }
                }
            });
        }
        ints
    }
}

/// The operands of `x` that are used as integers (`Kernel::integer_names`' roots).
fn integer_operands<'e>(x: &'e Expr, roots: &mut Vec<&'e Expr>) {
    match &x.kind {
        ExprKind::Subscript { indices, .. } => {
            for ix in indices {
                match ix {
                    Index::At(i) => roots.push(i),
                    // Only views of nvshmem calls keep slices this late.
                    Index::Slice { lo, hi, .. } => roots.extend(lo.iter().chain(hi.iter())),
                    Index::NewAxis => {}
                }
            }
        }
        // PE numbers and signals are integers.
        ExprKind::Call { func, args } if func.starts_with("nvshmem.") => roots.extend(args.iter()),
        ExprKind::Vidx { start, bound, .. } => roots.extend([&**start, &**bound]),
        ExprKind::Binary {
            op:
                BinOp::FloorDiv
                | BinOp::Mod
                | BinOp::BitAnd
                | BinOp::BitOr
                | BinOp::BitXor
                | BinOp::LShift
                | BinOp::RShift,
            left,
            right,
        } => {
            // `(lo <= x) & (x < hi)` combines booleans: its comparisons say nothing of whether
            // `lo` and `hi` are integers.
            for side in [left, right] {
                if !side.is_boolean() {
                    roots.push(side);
                }
            }
        }
        _ => {}
    }
}

/// A name for a compiler-made variable: `_base`, then `_base1`, `_base2`, ... whichever is not
/// in `used` yet (it is added).
pub fn fresh_name(base: &str, used: &mut std::collections::HashSet<String>) -> String {
    let base = base.trim_start_matches('_');
    (0..)
        .map(|k| {
            if k == 0 {
                format!("_{base}")
            } else {
                format!("_{base}{k}")
            }
        })
        .find(|name| used.insert(name.clone()))
        .expect("some name is free")
}

/// One dimension of a kernel's grid: a `parallel for` loop of the nest.
#[derive(Debug, Clone)]
pub struct ParallelDim {
    pub var: String,
    pub range: Range,
    /// `parallel for simd`: each program takes a vector of iterations.
    pub simd: Option<Width>,
    pub span: Span,
}

/// A top-level parallel region, outlined: becomes one `@triton.jit` kernel and one launcher.
#[derive(Debug, Clone)]
pub struct Kernel {
    pub name: String,
    /// Outermost first. Empty for a `sequential for` region (one program runs `body`).
    pub dims: Vec<ParallelDim>,
    pub body: Vec<Stmt>,
    pub num_warps: Option<u32>,
    /// The whole region in the source: from the pragma line to the end of the loop.
    pub span: Span,
    /// The pragma that opened the region.
    pub pragma_span: Span,
    /// For a function-level tensor statement: the slices `(grid, lo, hi)` of its `parallel`
    /// dimensions, each run by the variable of `dims[grid]` (a dimension has one entry per slice
    /// that names it, so split-off statements that slice another array still find it).
    pub bound: Vec<(usize, Expr, Expr)>,
    /// Temporary arrays `(name, like)` the launcher allocates with `torch.empty_like(like)`.
    pub temps: Vec<(String, String)>,
    /// Conditions the launcher checks before launching.
    pub checks: Vec<LaunchCheck>,
    /// A communication statement (`nvshmem.Putmem`/`SignalWait`) made a phase of a persistent
    /// kernel: `dims` is empty and `body` holds the call, so the analyses see its arrays and
    /// scalars; the printer lowers it from here.
    pub comm: Option<Comm>,
    /// The `shared(x, ...)` scalars of the region's `parallel for` (`passes::shared_scalars`).
    pub shared: Vec<SharedScalar>,
    /// The region as 2-D output tiles computed with `tl.dot` (`passes::tile_dot`), launched
    /// instead of `body` when the arrays' dtypes allow it; `body` stays the general lowering.
    pub tiles: Option<TileNest>,
    /// `tf32` on the region's `parallel for`: float32 tiles may round to TF32.
    pub tf32: bool,
    /// The rows of the body's row tile may be split over a second grid axis
    /// (`passes::split_rows`); ignored where the region is a phase of a persistent kernel.
    pub split_rows: Option<SplitRows>,
    /// Source the host code no longer runs because this kernel does: regions fused into it
    /// (`passes::fuse_into_reduction`), host statements folded into its store
    /// (`passes::fold_host_update`).
    pub absorbed: Vec<Absorbed>,
}

/// Source that a kernel runs in place of the host: its span (for a region, pragma to end).
#[derive(Debug, Clone, PartialEq)]
pub struct Absorbed {
    pub span: Span,
    pub what: AbsorbedKind,
}

#[derive(Debug, Clone, PartialEq)]
pub enum AbsorbedKind {
    Region,
    /// A host statement `X op= s` folded into the kernel's store (`passes::fold_host_update`).
    Statement {
        /// Where `s` may be an array: the kernel reads a parameter the host binds first.
        operand: Option<FoldOperand>,
    },
}

/// The operand of a folded `X op= s` whose `s` may be an array (it reads a parameter): the
/// host binds `name = _appyc_fold_operand(X, "op=", s)`, which hands a scalar to the kernel
/// and applies an array itself, handing the kernel the operator's identity.
#[derive(Debug, Clone, PartialEq)]
pub struct FoldOperand {
    /// The kernel's parameter, a name the function does not use.
    pub name: String,
    pub array: String,
    /// `*=`, `/=`, `+=` or `-=`.
    pub op: &'static str,
    pub value: Expr,
}

impl Absorbed {
    pub fn region(span: Span) -> Self {
        Absorbed {
            span,
            what: AbsorbedKind::Region,
        }
    }

    pub fn statement(span: Span, operand: Option<FoldOperand>) -> Self {
        Absorbed {
            span,
            what: AbsorbedKind::Statement { operand },
        }
    }
}

/// A row tile whose rows the launcher may split over grid axis 1: `at` is its index in the
/// kernel's body. The statements after it run once per column block, in the program that
/// combines the splits' partial results.
#[derive(Debug, Clone, PartialEq)]
pub struct SplitRows {
    pub at: usize,
}

/// A matmul-shaped nest: for every `(row, col)` of the output, `target = epilogue`, where
/// `epilogue` reads `acc`, the sum over every reduction of its terms' products. Its iterations
/// are independent (the target is written only at its own element, and the terms read no array
/// the region writes), so they can be computed in any order and grouped into tiles.
#[derive(Debug, Clone)]
pub struct TileNest {
    /// The grid loop (`i`): unit step.
    pub row: TileAxis,
    /// The output's other loop (`j`); its bounds may be affine in `row.var`.
    pub col: TileAxis,
    pub reductions: Vec<TileReduction>,
    /// `C[i, j]`: one index is `row.var`, one is `col.var`, the others mention neither.
    pub target: Expr,
    /// The name `epilogue` uses for the accumulated sum.
    pub acc: String,
    /// The value stored at `target`: reads `acc`, `target` itself, `row.var` and `col.var`.
    pub epilogue: Expr,
    /// Every array the nest reads or writes: the launcher takes the tiles only when they all
    /// have one floating dtype.
    pub arrays: Vec<String>,
}

/// A loop of a tile nest: `for var in range(start, stop)`.
#[derive(Debug, Clone)]
pub struct TileAxis {
    pub var: String,
    pub start: Expr,
    pub stop: Expr,
}

/// One reduction loop: `acc += Σ_k Σ_terms left(row, k) * right(k, col)`.
#[derive(Debug, Clone)]
pub struct TileReduction {
    /// Bounds may mention `row.var` or `col.var`, not both (the condition then masks the
    /// operand that has that variable).
    pub axis: TileAxis,
    pub terms: Vec<DotTerm>,
}

/// `scale * left * right`: `left` mentions no `col.var`, `right` no `row.var`, `scale` (the
/// factors that mention no loop variable) neither; a negated term came from `-=` or a unary
/// minus.
#[derive(Debug, Clone)]
pub struct DotTerm {
    pub left: Expr,
    pub right: Expr,
    pub scale: Option<Expr>,
    pub negated: bool,
}

/// A host scalar named by `shared(...)`.
#[derive(Debug, Clone)]
pub struct SharedScalar {
    pub var: String,
    /// The one-element array the kernel updates in its place (empty while `ReadOnly`).
    pub buffer: String,
    pub update: SharedUpdate,
    /// The array whose dtype, promoted with the scalar's value, is the buffer's dtype.
    pub like: Option<String>,
    /// The name in the pragma (for a `live_out` result, its first assignment in the region).
    pub span: Span,
    /// Not named by the pragma: the host reads the region's value after it, here
    /// (`passes::live_out`).
    pub implicit: Option<Span>,
    /// What the launch passes for the scalar's value before the region, where not the name:
    /// `locals().get("x")` where it may be unbound then, a reduction's identity where the
    /// region computes it afresh (`passes::scalar_reductions`).
    pub passed: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SharedUpdate {
    /// Only read in the loop: passed to every worker as it is.
    ReadOnly,
    /// `x += v`, `x = max(x, v)`, ...: a reduction across workers.
    Reduce(ReduceOp),
    /// `x = v`: the last store wins.
    Store,
}

impl SharedUpdate {
    pub fn describe(self) -> String {
        match self {
            SharedUpdate::ReadOnly => "reads".into(),
            SharedUpdate::Reduce(op) => format!("a {} reduction", op.name()),
            SharedUpdate::Store => "plain stores".into(),
        }
    }
}

/// One `nvshmem` call in a time loop (see pragma-spec/library-calls.yaml).
#[derive(Debug, Clone, PartialEq)]
pub enum Comm {
    Put {
        /// Views `A[...]` with every dimension indexed: `At` or a slice with both bounds.
        dest: Expr,
        src: Expr,
        pe: Expr,
        /// `flags[k]`: one element.
        flag: Option<Expr>,
        /// The blocking variant: the loop writes `src` again.
        blocking: bool,
        /// Position in a run of consecutive puts: the program that issues it.
        slot: usize,
    },
    Wait {
        flag: Expr,
        signal: Expr,
        /// The arrays the puts signalling this flag array write: read after the wait.
        targets: Vec<String>,
    },
}

/// A size condition the compiler relies on but cannot prove.
#[derive(Debug, Clone)]
pub enum LaunchCheck {
    /// An `le(N)` dimension: `extent <= N`.
    AtMost(Expr, u32, Span),
    /// Two slices meeting in one expression have equal lengths (NumPy's broadcasting rule).
    Equal(Expr, Expr, Span),
}

/// True if the expression is a tensor in sliced index notation: it slices, adds axes, or
/// reduces/contracts an array (`np.sum`, `@`, ...), so it needs tensor lowering.
pub fn is_tensor_expr(e: &Expr) -> bool {
    e.any(&mut |x| match &x.kind {
        ExprKind::Subscript { indices, .. } => indices
            .iter()
            .any(|i| matches!(i, Index::Slice { .. } | Index::NewAxis)),
        ExprKind::Broadcast { .. } => true,
        _ => false,
    })
}

/// Small constructors for the passes' unit tests.
#[cfg(test)]
pub mod build {
    use super::*;

    pub fn name(s: &str) -> Expr {
        Expr::name(s, Span::DUMMY)
    }
    pub fn int(v: i64) -> Expr {
        Expr::int(v, Span::DUMMY)
    }
    /// `array[index]` with a name as the index.
    pub fn elem(array: &str, index: &str) -> Expr {
        Expr::new(
            ExprKind::Subscript {
                array: array.into(),
                indices: vec![Index::At(name(index))],
            },
            Span::DUMMY,
        )
    }
    pub fn assign(target: Expr, value: Expr) -> Stmt {
        Stmt::new(
            StmtKind::Assign {
                target,
                value,
                atomic: false,
            },
            Span::DUMMY,
        )
    }
    pub fn kernel(body: Vec<Stmt>) -> Kernel {
        Kernel {
            name: "k".into(),
            dims: vec![],
            body,
            num_warps: None,
            span: Span::DUMMY,
            pragma_span: Span::DUMMY,
            bound: vec![],
            temps: vec![],
            checks: vec![],
            shared: vec![],
            comm: None,
            tiles: None,
            split_rows: None,
            absorbed: vec![],
            tf32: false,
        }
    }
}
