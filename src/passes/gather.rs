//! gather: a host loop whose iterations only accumulate into one array (`X[idx] += v`) becomes
//! one `parallel for` region that computes each element of `X` as a sum over the loop.
//!
//! *Before* (symm as APPy users write it): a host loop over `v` whose `parallel for` scatters
//! into rows `k < v` (`C[k, j] += a(v, j, k)`), sums into a private scalar that a private
//! temporary row carries to a bare row update `C[v, :] += b(v, :) + temp`. The compiled program
//! ran one persistent kernel of a phase (and a grid barrier) per `v`.
//! *After*: the loop is one region over the target's elements `(r, c)`: `s = 0`, one sequential
//! loop per contribution over the iteration variables the target index does not fix (`for v in
//! range(r + 1, hi): s += a(v, c, r)`, the private sum `for k in range(0, r): s += ...`), then
//! `X[r, c] = X[r, c] + rest + s`: `tile_dot`'s scalar-accumulator shape, so a matrix product
//! becomes `tl.dot` tiles; anything else runs through the general lowering.
//!
//! Design decisions, and why:
//! - *Legality is about dependences, never names*: the iterations commute (up to the
//!   reassociation of sums the invariant allows) when (a) every array the loop writes that may
//!   be live outside one iteration (the *target*) is only updated by `X[idx] = X[idx] + value`,
//!   read nowhere else in the loop, and no value reads an array the loop writes; (b) every other
//!   array the loop writes is a private temporary: written at `T[j]` over the whole column range
//!   of its `parallel for`, before any read, read only whole by a bare row update of the host
//!   body, not an argument and never named after the loop, so its element at `j` is replaced by
//!   the value computed for it (forward substitution); (c) scalars the loop assigns are private
//!   accumulators of the `parallel for` body (a zero start, `+=` updates in inner loops, reads
//!   at the start's level after the updates) and, like the loop variable, never named after the
//!   loop (the source's tokens decide: `return v` is not in the IR).
//! - *Re-indexing by inversion*: each index of the target must be one iteration variable plus
//!   an offset free of iteration variables (an invertible map); those variables become the
//!   region's row and column, the others a sequential sum. Loop bounds are difference
//!   constraints (`x >= w + e`, `x < w + e`, at most one iteration variable a bound): each goes
//!   to the later of its two variables in the new order (flipped when that is the bound's own
//!   variable), which keeps the iteration set exact; a row or column without a bound of its own
//!   gets one through the sum variable it is tied to (`k < v < hi` gives `k < hi - 1`), an
//!   over-approximation is enough since the sum loops keep every constraint (extra rows sum
//!   nothing).
//! - *One region per loop*: all contributions merge into one element loop when each one's
//!   rows and columns lie inside the region's and the region's satisfy each one's own bounds
//!   (proved by constant differences of affine forms); a loop into two arrays, bounds whose
//!   maximum cannot be decided without `max`/`min`, or a bound that is not a difference
//!   constraint keeps the loop as it was. Correctness first: a refusal changes nothing and
//!   `appyc -v` names the statement and the reason.
//! - *Broadcast reads*: a bare row update's full slice `Y[v, :]` of another extent than the
//!   target's is read at `c % Y.shape[d]`, NumPy's broadcasting of a length-1 dimension (in a
//!   valid program the extents agree otherwise, and the modulo is the identity).
//! - *Dtypes are not seen*: the sum is stored once, so where NumPy rounds each step's store
//!   (an integer target updated by float values truncates every iteration) the result can
//!   differ by more than reassociation; float targets and integer targets of integer values
//!   agree. An element of the region no update reaches is stored back as `X + 0` (a `-0.0`
//!   becomes `0.0`).
//! - *Where*: after `attach_pragmas` (the pragmas tell the `parallel for` and its inner loops)
//!   and before `device_statements`, which would turn the bare row update into a region of its
//!   own; the result is an ordinary function-level region for `outline`, so no later pass and
//!   no schedule decision knows this pass exists. Only loops directly in the function's body are
//!   considered (a loop inside a host loop repeats, and liveness would have to cover it).

use crate::diag::Diagnostic;
use crate::frontend::source::{SourceFile, Span};
use crate::ir::pragma::{Directive, Pragma};
use crate::ir::*;
use crate::passes::affine::Affine;
use crate::passes::tensor::{is_product_call, reduction_call};
use std::collections::{HashMap, HashSet};

/// Rewrites every eligible host loop of `func`; a loop that holds a `parallel for` and is not
/// eligible gets a note (`appyc -v`) naming the statement and the reason.
pub fn run(func: &mut Function, file: &SourceFile, notes: &mut Vec<Diagnostic>) {
    for at in 0..func.body.len() {
        let s = &func.body[at];
        let StmtKind::For {
            kind: LoopKind::Plain,
            body,
            ..
        } = &s.kind
        else {
            continue;
        };
        if s.pragma.is_some() || !body.iter().any(|b| b.is_parallel_loop()) {
            continue;
        }
        match gather(func, at, file) {
            Ok(region) => func.body[at] = region,
            // Only a loop that accumulates (some `X[idx] += v`) is worth a note: a time loop
            // that assigns its arrays was never a candidate.
            Err(Refusal { span, why }) if accumulates(s) => {
                let line = file.line_of(s.span.start as usize);
                notes.push(
                    Diagnostic::note(
                        span,
                        format!("the host loop at line {line} is not gathered into one region"),
                    )
                    .with_label(why),
                );
            }
            Err(_) => {}
        }
    }
}

/// Whether some statement of `s` updates an array element by `+=` (or `-=`).
fn accumulates(s: &Stmt) -> bool {
    let mut found = false;
    s.walk(&mut |st| {
        if let StmtKind::Assign { target, value, .. } = &st.kind {
            found |= matches!(target.kind, ExprKind::Subscript { .. })
                && matches!(as_reduction(target, value), Some((ReduceOp::Sum, _)));
        }
    });
    found
}

/// Why a loop stays as written, and the statement that decided it.
#[derive(Debug)]
struct Refusal {
    span: Span,
    why: String,
}

fn refuse<T>(span: Span, why: impl Into<String>) -> Result<T, Refusal> {
    Err(Refusal {
        span,
        why: why.into(),
    })
}

/// `for var in range(lo, hi)` (step 1).
#[derive(Debug, Clone)]
struct Loop {
    var: String,
    lo: Expr,
    hi: Expr,
}

/// A private sum an iteration computes: the sum of each term over its loops.
#[derive(Debug, Clone)]
struct Sum {
    parts: Vec<(Vec<Loop>, Expr)>,
}

/// A private accumulator: where it starts (loop depth) and what is added to it.
#[derive(Debug, Clone)]
struct Acc {
    depth: usize,
    parts: Vec<(Vec<Loop>, Expr)>,
    read: bool,
}

/// One `X[index] += value` with the loops around it, the host loop first; each index is an
/// iteration variable plus an offset.
#[derive(Debug, Clone)]
struct Update {
    nest: Vec<Loop>,
    index: Vec<(String, Expr)>,
    value: Expr,
    span: Span,
    /// Names that stand for the column in `value`'s private sums (a temporary's `j`).
    aliases: Vec<String>,
}

/// The marker of private sum `n` inside a value (never printed: emission replaces it).
fn placeholder(n: usize, span: Span) -> Expr {
    Expr::name(&format!("\u{0}sum{n}"), span)
}

fn placeholder_index(e: &Expr) -> Option<usize> {
    match &e.kind {
        ExprKind::Name(n) => n.strip_prefix("\u{0}sum")?.parse().ok(),
        _ => None,
    }
}

/// The name a bare row update's column has until emission names it.
const SLICE_COL: &str = "\u{0}col";

/// What walking the loop's body finds.
struct Walk<'a> {
    func: &'a Function,
    /// Arrays the loop assigns elements of.
    written: HashSet<String>,
    /// Parameters never subscripted: scalars a bare row update may read.
    scalar_params: HashSet<String>,
    target: Option<String>,
    temps: HashMap<String, (Loop, Expr)>,
    accs: HashMap<String, Acc>,
    sums: Vec<Sum>,
    updates: Vec<Update>,
    /// Every loop variable of the loop's body (a bare statement must not read one).
    inner_vars: HashSet<String>,
    /// The host loop's variable.
    host: String,
}

/// The region that replaces `func.body[at]`, or why the loop stays.
fn gather(func: &Function, at: usize, file: &SourceFile) -> Result<Stmt, Refusal> {
    let s = &func.body[at];
    let StmtKind::For {
        var, range, body, ..
    } = &s.kind
    else {
        unreachable!("run passes host loops")
    };
    if !matches!(range.step.kind, ExprKind::Int(1)) {
        return refuse(s.span, "the loop's step is not 1");
    }
    for b in [&range.start, &range.stop] {
        if b.any(&mut |x| matches!(x.kind, ExprKind::Subscript { .. } | ExprKind::Call { .. })) {
            return refuse(
                s.span,
                "a bound of the loop reads an element or calls a function",
            );
        }
    }
    let host = Loop {
        var: var.clone(),
        lo: range.start.clone(),
        hi: range.stop.clone(),
    };
    let mut walk = Walk::new(func, body);
    walk.host = var.clone();
    walk.stmts(body, &mut vec![host.clone()])?;
    let Some(target) = walk.target.clone() else {
        return refuse(s.span, "the loop updates no array with `+=`");
    };
    walk.check_liveness(s, &host, file)?;
    let region = build(&walk, &target, &host, s)?;
    Ok(region_stmt(region, s, body, file))
}

impl<'a> Walk<'a> {
    fn new(func: &'a Function, body: &[Stmt]) -> Self {
        let mut written = HashSet::new();
        let mut inner_vars = HashSet::new();
        for s in body {
            s.walk(&mut |st| match &st.kind {
                StmtKind::Assign { target, .. } => {
                    if let ExprKind::Subscript { array, .. } = &target.kind {
                        written.insert(array.clone());
                    }
                }
                StmtKind::For { var, .. } => {
                    inner_vars.insert(var.clone());
                }
                _ => {}
            });
        }
        let mut subscripted = HashSet::new();
        for s in &func.body {
            s.walk(&mut |st| {
                for e in st.exprs() {
                    e.walk(&mut |x| {
                        if let ExprKind::Subscript { array, .. } = &x.kind {
                            subscripted.insert(array.clone());
                        }
                    });
                }
            });
        }
        let scalar_params = func
            .params
            .iter()
            .filter(|p| !subscripted.contains(*p))
            .cloned()
            .collect();
        Walk {
            func,
            written,
            scalar_params,
            target: None,
            temps: HashMap::new(),
            accs: HashMap::new(),
            sums: vec![],
            updates: vec![],
            inner_vars,
            host: String::new(),
        }
    }

    fn stmts(&mut self, body: &[Stmt], nest: &mut Vec<Loop>) -> Result<(), Refusal> {
        for s in body {
            match &s.kind {
                StmtKind::For {
                    var,
                    range,
                    body,
                    kind,
                    ..
                } => {
                    self.inner_loop(s, *kind, range, nest.len())?;
                    nest.push(Loop {
                        var: var.clone(),
                        lo: range.start.clone(),
                        hi: range.stop.clone(),
                    });
                    self.stmts(body, nest)?;
                    nest.pop();
                }
                StmtKind::Assign {
                    target,
                    value,
                    atomic: false,
                } => self.assign(s, target, value, nest)?,
                StmtKind::Pass => {}
                _ => return refuse(s.span, "a statement other than loops and assignments"),
            }
        }
        Ok(())
    }

    /// A `parallel for` directly in the host loop, `simd` or plain loops inside it.
    fn inner_loop(
        &self,
        s: &Stmt,
        kind: LoopKind,
        range: &Range,
        depth: usize,
    ) -> Result<(), Refusal> {
        let clauses_free = match s.pragma.as_ref().map(|p| &p.directive) {
            Some(Directive::ParallelFor {
                shared, reduction, ..
            }) => shared.is_empty() && reduction.is_empty(),
            _ => true,
        };
        let fits = match kind {
            LoopKind::Parallel { .. } => depth == 1 && clauses_free,
            LoopKind::Simd(_) | LoopKind::Plain => depth >= 2,
            _ => false,
        };
        if !fits {
            return refuse(
                s.span,
                "a loop other than one `parallel for` with `simd` or plain loops inside it",
            );
        }
        if !matches!(range.step.kind, ExprKind::Int(1)) {
            return refuse(s.span, "an inner loop's step is not 1");
        }
        for b in [&range.start, &range.stop] {
            self.clean(b, s.span)?;
        }
        Ok(())
    }

    /// `e` reads no array the loop writes and no private scalar.
    fn clean(&self, e: &Expr, span: Span) -> Result<(), Refusal> {
        let mut bad = None;
        e.walk(&mut |x| match &x.kind {
            ExprKind::Subscript { array, .. } | ExprKind::Name(array)
                if self.written.contains(array) =>
            {
                bad.get_or_insert_with(|| format!("reads `{array}`, which the loop writes"));
            }
            ExprKind::Name(n) if self.accs.contains_key(n) => {
                bad.get_or_insert_with(|| {
                    format!("reads the private sum `{n}` before it is complete")
                });
            }
            _ => {}
        });
        match bad {
            Some(why) => refuse(span, format!("a value or bound {why}")),
            None => Ok(()),
        }
    }

    fn assign(
        &mut self,
        s: &Stmt,
        target: &Expr,
        value: &Expr,
        nest: &[Loop],
    ) -> Result<(), Refusal> {
        let depth = nest.len();
        match &target.kind {
            ExprKind::Name(n) => self.scalar(s, n, target, value, nest),
            ExprKind::Subscript { array, indices } => {
                if let Some((ReduceOp::Sum, operand)) = as_reduction(target, value) {
                    let term = match operand {
                        ReductionOperand::Plain(e) => e.clone(),
                        ReductionOperand::Negated(e) => Expr::new(
                            ExprKind::Unary {
                                op: UnaryOp::Neg,
                                operand: Box::new(e.clone()),
                            },
                            e.span,
                        ),
                    };
                    if self.target.as_ref().is_some_and(|t| t != array) {
                        return refuse(s.span, "the loop accumulates into two arrays");
                    }
                    self.target = Some(array.clone());
                    return if depth == 1 {
                        self.row_update(s, array, indices, term, nest)
                    } else {
                        self.update(s, indices, term, nest)
                    };
                }
                let is_col = depth == 2
                    && matches!(indices.as_slice(), [Index::At(e)] if matches!(&e.kind, ExprKind::Name(j) if *j == nest[1].var));
                if !is_col || self.temps.contains_key(array) || self.func.params.contains(array) {
                    return refuse(
                        s.span,
                        format!("`{array}[...] = ...` is neither an update `+=` nor a private temporary written once at the `parallel for`'s column"),
                    );
                }
                if self.target.as_deref() == Some(array.as_str()) {
                    return refuse(s.span, format!("`{array}` is both updated and assigned"));
                }
                let value = self.resolve(value, depth, s.span)?;
                self.temps.insert(array.clone(), (nest[1].clone(), value));
                Ok(())
            }
            _ => refuse(
                s.span,
                "an assignment to something other than a name or an element",
            ),
        }
    }

    /// A private accumulator's zero start or `+=` update.
    fn scalar(
        &mut self,
        s: &Stmt,
        n: &str,
        target: &Expr,
        value: &Expr,
        nest: &[Loop],
    ) -> Result<(), Refusal> {
        let depth = nest.len();
        if depth < 2 {
            return refuse(s.span, format!("`{n}` is a host scalar the loop assigns"));
        }
        let zero = matches!(value.kind, ExprKind::Int(0))
            || matches!(value.kind, ExprKind::Float(v) if v == 0.0);
        if zero {
            self.accs.insert(
                n.to_string(),
                Acc {
                    depth,
                    parts: vec![],
                    read: false,
                },
            );
            return Ok(());
        }
        let update = as_reduction(target, value).filter(|(op, _)| *op == ReduceOp::Sum);
        let (Some((_, operand)), Some(acc)) = (update, self.accs.get(n)) else {
            return refuse(
                s.span,
                format!("`{n} = ...` is neither a zero start nor a `+=` of a private sum"),
            );
        };
        if acc.read || depth <= acc.depth {
            return refuse(s.span, format!("`{n}` is updated after it is read"));
        }
        let term = match operand {
            ReductionOperand::Plain(e) => e.clone(),
            ReductionOperand::Negated(e) => negate(e.clone()),
        };
        self.clean(&term, s.span)?;
        let loops = nest[acc.depth..].to_vec();
        self.accs
            .get_mut(n)
            .expect("checked")
            .parts
            .push((loops, term));
        Ok(())
    }

    /// `value` with complete private sums read at their own level replaced by placeholders.
    fn resolve(&mut self, value: &Expr, depth: usize, span: Span) -> Result<Expr, Refusal> {
        let mut bad: Option<String> = None;
        let mut sums = std::mem::take(&mut self.sums);
        let accs = &mut self.accs;
        let out = value.clone().rewrite(&mut |x| match &x.kind {
            ExprKind::Name(n) if accs.contains_key(n) => {
                let acc = accs.get_mut(n).expect("checked");
                if acc.depth != depth {
                    bad.get_or_insert_with(|| {
                        format!("reads `{n}` outside the loop level it sums at")
                    });
                    return x;
                }
                acc.read = true;
                sums.push(Sum {
                    parts: acc.parts.clone(),
                });
                placeholder(sums.len() - 1, x.span)
            }
            _ => x,
        });
        self.sums = sums;
        if let Some(why) = bad {
            return refuse(span, format!("a value {why}"));
        }
        self.clean(&out, span)?;
        Ok(out)
    }

    /// `X[index] += term` inside the `parallel for`.
    fn update(
        &mut self,
        s: &Stmt,
        indices: &[Index],
        term: Expr,
        nest: &[Loop],
    ) -> Result<(), Refusal> {
        let vars: HashSet<String> = nest.iter().map(|l| l.var.clone()).collect();
        let mut index = vec![];
        for ix in indices {
            let Index::At(e) = ix else {
                return refuse(s.span, "the target index is a slice inside the loop nest");
            };
            match lin(e, &vars) {
                Some(Lin { var: Some(v), free }) if !index.iter().any(|(w, _)| *w == v) => {
                    index.push((v, free))
                }
                _ => {
                    return refuse(
                        s.span,
                        format!(
                            "the target index `{}` is not an iteration variable plus an offset: the update cannot be inverted",
                            python::expr(e)
                        ),
                    )
                }
            }
        }
        let value = self.resolve(&term, nest.len(), s.span)?;
        let reads_sum = value.any(&mut |x| placeholder_index(x).is_some());
        if reads_sum && index.len() < nest.len() {
            return refuse(s.span, "a scattered update reads a private sum");
        }
        self.updates.push(Update {
            nest: nest.to_vec(),
            index,
            value,
            span: s.span,
            aliases: vec![],
        });
        Ok(())
    }

    /// A bare update of the host body, `X[v, :] += value` (full slices, at most one), its
    /// temporaries read whole.
    fn row_update(
        &mut self,
        s: &Stmt,
        array: &str,
        indices: &[Index],
        term: Expr,
        nest: &[Loop],
    ) -> Result<(), Refusal> {
        let host = &nest[0].var;
        let mut index = vec![];
        let mut col_dim = None;
        for (d, ix) in indices.iter().enumerate() {
            match ix {
                Index::At(e) if matches!(&e.kind, ExprKind::Name(n) if n == host) => {
                    index.push((host.clone(), Expr::int(0, e.span)))
                }
                Index::Slice {
                    lo: None, hi: None, ..
                } if col_dim.is_none() => {
                    col_dim = Some(d);
                    index.push((SLICE_COL.to_string(), Expr::int(0, s.span)));
                }
                _ => {
                    return refuse(
                        s.span,
                        "a bare update's target is not the loop's row with at most one full slice",
                    )
                }
            }
        }
        let mut loops = nest.to_vec();
        let extent = col_dim.map(|d| {
            Expr::new(
                ExprKind::Shape {
                    array: array.to_string(),
                    dim: d,
                },
                s.span,
            )
        });
        if let Some(extent) = &extent {
            loops.push(Loop {
                var: SLICE_COL.to_string(),
                lo: Expr::int(0, s.span),
                hi: extent.clone(),
            });
        }
        let mut aliases = vec![];
        let value = self.row_value(s, &term, extent.as_ref(), col_dim, array, &mut aliases)?;
        self.updates.push(Update {
            nest: loops,
            index,
            value,
            span: s.span,
            aliases,
        });
        Ok(())
    }

    /// A bare update's value per element: full slices at the column, temporaries replaced by
    /// what the iteration stored in them.
    fn row_value(
        &mut self,
        s: &Stmt,
        term: &Expr,
        extent: Option<&Expr>,
        col_dim: Option<usize>,
        target: &str,
        aliases: &mut Vec<String>,
    ) -> Result<Expr, Refusal> {
        let col = Expr::name(SLICE_COL, s.span);
        // Element by element only: a reduction or product over the slices (or anything the
        // kernel language lacks, which ran on the host) keeps the loop.
        let whole = term.any(&mut |x| match &x.kind {
            ExprKind::Call { func, args } => {
                reduction_call(func, args.len()).is_some() || is_product_call(func)
            }
            ExprKind::Unsupported(_) => true,
            _ => false,
        });
        if whole {
            return refuse(
                s.span,
                "a bare update's value is not element-wise (a reduction, a product or host code)",
            );
        }
        let mut bad: Option<String> = None;
        let host = self.host.clone();
        let value = term.clone().rewrite(&mut |x| match &x.kind {
            ExprKind::Name(n) if self.temps.contains_key(n) => {
                let (l, v) = &self.temps[n];
                let covers = matches!(l.lo.kind, ExprKind::Int(0))
                    && extent.is_some_and(|e| Affine::of(e) == Affine::of(&l.hi));
                if !covers {
                    bad.get_or_insert_with(|| format!("`{n}` is read whole but written over `range({}, {})`", python::expr(&l.lo), python::expr(&l.hi)));
                }
                aliases.push(l.var.clone());
                v.clone()
            }
            ExprKind::Name(n) if self.written.contains(n) => {
                bad.get_or_insert_with(|| format!("reads `{n}` before the iteration writes it"));
                x
            }
            ExprKind::Name(n) => {
                let ok = self.scalar_params.contains(n) || *n == host || n.starts_with('\u{0}');
                if !ok || self.inner_vars.contains(n) {
                    bad.get_or_insert_with(|| format!("reads `{n}`, which may be an array or a value of the loop's last iteration"));
                }
                x
            }
            ExprKind::Subscript { array, indices } if !self.written.contains(array) => {
                let slices = indices.iter().filter(|i| matches!(i, Index::Slice { .. })).count();
                let full = indices.iter().all(|i| !matches!(i, Index::Slice { lo: Some(_), .. } | Index::Slice { hi: Some(_), .. } | Index::NewAxis));
                if slices > 1 || !full || (slices == 1 && extent.is_none()) {
                    bad.get_or_insert_with(|| format!("reads `{array}` with a slice other than one full `:`"));
                    return x;
                }
                let indices = indices
                    .iter()
                    .enumerate()
                    .map(|(d, i)| match i {
                        Index::Slice { .. } if *array == target && Some(d) == col_dim => Index::At(col.clone()),
                        Index::Slice { .. } => Index::At(Expr::binary(
                            BinOp::Mod,
                            col.clone(),
                            Expr::new(ExprKind::Shape { array: array.clone(), dim: d }, x.span),
                        )),
                        other => other.clone(),
                    })
                    .collect();
                Expr::new(ExprKind::Subscript { array: array.clone(), indices }, x.span)
            }
            ExprKind::Subscript { array, .. } => {
                bad.get_or_insert_with(|| format!("reads `{array}`, which the loop writes"));
                x
            }
            _ => x,
        });
        if let Some(why) = bad {
            return refuse(s.span, format!("a bare update {why}"));
        }
        Ok(value)
    }

    /// (b), (c): temporaries are no arguments, and neither they nor the loop's scalars nor its
    /// variable are named after the loop.
    fn check_liveness(&self, s: &Stmt, host: &Loop, file: &SourceFile) -> Result<(), Refusal> {
        let mut private: Vec<&str> = vec![host.var.as_str()];
        private.extend(self.accs.keys().map(|k| k.as_str()));
        private.extend(self.temps.keys().map(|k| k.as_str()));
        let after = names_after(file, self.func, s.span);
        for name in private {
            if after.contains(name) {
                return refuse(
                    s.span,
                    format!("`{name}` is private to an iteration but named after the loop"),
                );
            }
        }
        Ok(())
    }
}

fn negate(e: Expr) -> Expr {
    let span = e.span;
    Expr::new(
        ExprKind::Unary {
            op: UnaryOp::Neg,
            operand: Box::new(e),
        },
        span,
    )
}

/// The names of the function's tokens after `span` ends.
fn names_after(file: &SourceFile, func: &Function, span: Span) -> HashSet<String> {
    file.name_tokens(func.span)
        .into_iter()
        .filter_map(|(name, at)| (at >= span.end).then_some(name))
        .collect()
}

/// `var + free` (`free` names no iteration variable), or `free` alone.
#[derive(Debug, Clone, PartialEq)]
struct Lin {
    var: Option<String>,
    free: Expr,
}

fn lin(e: &Expr, vars: &HashSet<String>) -> Option<Lin> {
    if !e.any(&mut |x| matches!(&x.kind, ExprKind::Name(n) if vars.contains(n))) {
        return Some(Lin {
            var: None,
            free: e.clone(),
        });
    }
    match &e.kind {
        ExprKind::Name(n) => Some(Lin {
            var: Some(n.clone()),
            free: Expr::int(0, e.span),
        }),
        ExprKind::Binary {
            op: BinOp::Add,
            left,
            right,
        } => {
            let (a, b) = (lin(left, vars)?, lin(right, vars)?);
            if a.var.is_some() && b.var.is_some() {
                return None;
            }
            Some(Lin {
                var: a.var.or(b.var),
                free: add_free(&a.free, &b.free, 1),
            })
        }
        ExprKind::Binary {
            op: BinOp::Sub,
            left,
            right,
        } => {
            let (a, b) = (lin(left, vars)?, lin(right, vars)?);
            if b.var.is_some() {
                return None;
            }
            Some(Lin {
                var: a.var,
                free: add_free(&a.free, &b.free, -1),
            })
        }
        _ => None,
    }
}

/// `a + sign * b`, folded where both are constants or one is zero.
fn add_free(a: &Expr, b: &Expr, sign: i64) -> Expr {
    let (fa, fb) = (Affine::of(a), Affine::of(b));
    if let (Some(x), Some(y)) = (fa.as_constant(), fb.as_constant()) {
        return Expr::int(x + sign * y, a.span);
    }
    match (fa.as_constant(), fb.as_constant()) {
        (_, Some(0)) => a.clone(),
        (Some(0), _) if sign > 0 => b.clone(),
        (_, Some(c)) if c * sign < 0 => {
            Expr::binary(BinOp::Sub, a.clone(), Expr::int(-c * sign, a.span))
        }
        (_, Some(c)) => Expr::binary(BinOp::Add, a.clone(), Expr::int(c * sign, a.span)),
        _ => Expr::binary(
            if sign > 0 { BinOp::Add } else { BinOp::Sub },
            a.clone(),
            b.clone(),
        ),
    }
}

fn lin_expr(l: &Lin, span: Span) -> Expr {
    match &l.var {
        None => l.free.clone(),
        Some(v) => add_free(&Expr::name(v, span), &l.free, 1),
    }
}

/// `a - b` when it is a constant.
fn diff(a: &Lin, b: &Lin) -> Option<i64> {
    (a.var == b.var)
        .then(|| Affine::of(&a.free).sub(&Affine::of(&b.free)).as_constant())
        .flatten()
}

/// One bound of an iteration variable: `on >= bound` (lower) or `on < bound`.
#[derive(Debug, Clone)]
struct Cons {
    on: String,
    lower: bool,
    bound: Lin,
}

/// The chosen range of each placed variable.
type Bounds = HashMap<String, (Lin, Lin)>;

fn fresh(base: &str, used: &mut HashSet<String>) -> String {
    let base = base.trim_start_matches('\u{0}');
    let name = (0..)
        .map(|n| format!("{base}_{n}"))
        .find(|n| !used.contains(n))
        .expect("some name is free");
    used.insert(name.clone());
    name
}

/// `e` with every name `map` answers for replaced (simultaneously).
fn subst(e: &Expr, map: &HashMap<String, Expr>) -> Expr {
    e.clone().rewrite(&mut |x| match &x.kind {
        ExprKind::Name(n) => map.get(n).cloned().unwrap_or(x),
        _ => x,
    })
}

/// The smallest (`low`) or largest value `l` takes over the placed variables' ranges, as an
/// expression free of them.
fn extreme(l: &Lin, b: &Bounds, low: bool) -> Option<Lin> {
    let Some(w) = &l.var else {
        return Some(l.clone());
    };
    let (lo, hi) = b.get(w)?;
    let end = if low {
        extreme(lo, b, true)?
    } else {
        let h = extreme(hi, b, false)?;
        Lin {
            var: None,
            free: add_free(&h.free, &Expr::int(1, h.free.span), -1),
        }
    };
    Some(Lin {
        var: None,
        free: add_free(&end.free, &l.free, 1),
    })
}

/// Whether `a >= b` for every value of the placed variables.
fn always_ge(a: &Lin, b: &Lin, bounds: &Bounds) -> bool {
    if let Some(d) = diff(a, b) {
        return d >= 0;
    }
    match (extreme(a, bounds, true), extreme(b, bounds, false)) {
        (Some(la), Some(hb)) => diff(&la, &hb).is_some_and(|d| d >= 0),
        _ => false,
    }
}

/// The tightest of `list` (the largest lower bound or the smallest upper one), when one is
/// provably so.
fn pick(list: &[Lin], lower: bool, bounds: &Bounds) -> Option<Lin> {
    let mut best = list.first()?.clone();
    for c in &list[1..] {
        let (hi, lo) = if lower { (c, &best) } else { (&best, c) };
        if always_ge(hi, lo, bounds) {
            best = c.clone();
        } else if !always_ge(
            if lower { &best } else { c },
            if lower { c } else { &best },
            bounds,
        ) {
            return None;
        }
    }
    Some(best)
}

/// An update placed in the region: its variables renamed, its bounds on the region's row and
/// column, and its sum loops.
struct Placed {
    /// Own bounds (lower, upper) and a projected range, per target dimension.
    own: Vec<(Vec<Lin>, Vec<Lin>)>,
    support: Vec<Option<(Lin, Lin)>>,
    /// The variables the update sums over, in order, with their constraints.
    sum_vars: Vec<String>,
    cons: Vec<Cons>,
    map: HashMap<String, Expr>,
    value: Expr,
}

/// The constraints of `u`'s nest in the region's names, each on the later of its variables.
fn place(u: &Update, names: &[String], used: &mut HashSet<String>) -> Result<Placed, Refusal> {
    let mut map: HashMap<String, Expr> = HashMap::new();
    for ((v, off), n) in u.index.iter().zip(names) {
        map.insert(v.clone(), add_free(&Expr::name(n, u.span), off, -1));
    }
    let mut sum_vars = vec![];
    for l in &u.nest {
        if map.contains_key(&l.var) {
            continue;
        }
        let name = if names.contains(&l.var) || l.var.starts_with('\u{0}') {
            fresh(&l.var, used)
        } else {
            l.var.clone()
        };
        map.insert(l.var.clone(), Expr::name(&name, u.span));
        sum_vars.push(name);
    }
    let order: Vec<String> = names.iter().chain(&sum_vars).cloned().collect();
    let vars: HashSet<String> = order.iter().cloned().collect();
    let pos = |v: &str| order.iter().position(|o| o == v);
    let not_difference = || {
        refuse(
            u.span,
            "a loop bound around this update is not a difference constraint (`w + e`)",
        )
    };
    let mut cons = vec![];
    for l in &u.nest {
        let x = lin(&map[&l.var], &vars);
        let (lo, hi) = (
            lin(&subst(&l.lo, &map), &vars),
            lin(&subst(&l.hi, &map), &vars),
        );
        let (
            Some(Lin {
                var: Some(xv),
                free: xf,
            }),
            Some(lo),
            Some(hi),
        ) = (x, lo, hi)
        else {
            return not_difference();
        };
        for (lower, b) in [(true, lo), (false, hi)] {
            let bound = Lin {
                var: b.var.clone(),
                free: add_free(&b.free, &xf, -1),
            };
            let flip = b.var.as_deref().is_some_and(|w| pos(w) > pos(&xv));
            cons.push(if flip {
                Cons {
                    on: b.var.expect("flip has a variable"),
                    lower: !lower,
                    bound: Lin {
                        var: Some(xv.clone()),
                        free: add_free(&Expr::int(1, u.span), &bound.free, -1),
                    },
                }
            } else {
                Cons {
                    on: xv.clone(),
                    lower,
                    bound,
                }
            });
        }
    }
    let own = names.iter().map(|n| own_bounds(&cons, n)).collect();
    let support = names.iter().map(|n| projected(&cons, n)).collect();
    Ok(Placed {
        own,
        support,
        sum_vars,
        cons,
        value: subst(&u.value, &map),
        map,
    })
}

fn own_bounds(cons: &[Cons], on: &str) -> (Vec<Lin>, Vec<Lin>) {
    let of = |lower: bool| {
        cons.iter()
            .filter(|c| c.on == on && c.lower == lower)
            .map(|c| c.bound.clone())
            .collect()
    };
    (of(true), of(false))
}

/// A range that holds every value of `x` in the iteration set: its own bounds, else one
/// through a variable tied to it (`w >= x + e`, `w < U` give `x < U - e`).
fn projected(cons: &[Cons], x: &str) -> Option<(Lin, Lin)> {
    let (lows, highs) = own_bounds(cons, x);
    let free = |w: &str, lower: bool| {
        cons.iter()
            .find(|c| c.on == w && c.lower == lower && c.bound.var.is_none())
            .map(|c| c.bound.free.clone())
    };
    let tied = |lower: bool| {
        cons.iter().find_map(|c| {
            if c.bound.var.as_deref() != Some(x) || c.lower == lower {
                return None;
            }
            let e = &c.bound.free;
            let end = free(&c.on, lower)?;
            Some(Lin {
                var: None,
                free: if lower {
                    // w < x + e, w >= L: x >= L - e + 1.
                    add_free(&add_free(&end, e, -1), &Expr::int(1, e.span), 1)
                } else {
                    // w >= x + e, w < U: x < U - e.
                    add_free(&end, e, -1)
                },
            })
        })
    };
    let lo = lows.first().cloned().or_else(|| tied(true))?;
    let hi = highs.first().cloned().or_else(|| tied(false))?;
    Some((lo, hi))
}

/// The region's element loops: row (and column) names and ranges, and the column loop's body.
struct Region {
    names: Vec<String>,
    ranges: Vec<(Lin, Lin)>,
    body: Vec<Stmt>,
}

impl Region {
    /// Whether a sum's bounds depend on the column (`C[j, k]` summed over `v >= k`): then the
    /// column cannot be a `simd` loop (vector lanes need scalar bounds for the loops inside).
    fn sums_bounded_by_column(&self) -> bool {
        fn mentions(body: &[Stmt], var: &str) -> bool {
            body.iter().any(|st| match &st.kind {
                StmtKind::For { range, body, .. } => {
                    range.start.mentions(var) || range.stop.mentions(var) || mentions(body, var)
                }
                _ => false,
            })
        }
        self.names.len() == 2 && mentions(&self.body, &self.names[1])
    }
}

/// The merged region of every update, or why the updates do not merge.
fn build(walk: &Walk, target: &str, host: &Loop, s: &Stmt) -> Result<Region, Refusal> {
    let rank = walk.updates[0].index.len();
    if let Some(u) = walk.updates.iter().find(|u| u.index.len() != rank) {
        return refuse(u.span, "the updates index the target with different ranks");
    }
    if !(1..=2).contains(&rank) {
        return refuse(
            walk.updates[0].span,
            "the target is not a vector or a matrix",
        );
    }
    let mut used = walk.func.names();
    // The region's rows are the loop's own when a bare update writes row `v`: the update
    // that owns them names the row and column.
    let owner = walk
        .updates
        .iter()
        .position(|u| u.index[0].0 == host.var)
        .unwrap_or(0);
    let mut names: Vec<String> = vec![];
    for d in 0..rank {
        let candidates = std::iter::once(&walk.updates[owner]).chain(&walk.updates);
        let name = candidates
            .map(|u| u.index[d].0.clone())
            .find(|n| !n.starts_with('\u{0}') && !names.contains(n));
        names.push(name.unwrap_or_else(|| fresh(if d == 0 { "r" } else { "c" }, &mut used)));
    }
    used.extend(names.iter().cloned());
    let mut placed = vec![];
    for u in &walk.updates {
        placed.push(place(u, &names, &mut used)?);
    }
    let mut bounds: Bounds = HashMap::new();
    let mut ranges = vec![];
    for (d, n) in names.iter().enumerate() {
        let p = &placed[owner];
        let (lows, highs) = &p.own[d];
        let support = p.support[d].clone();
        let lo = pick(lows, true, &bounds).or_else(|| support.clone().map(|s| s.0));
        let hi = pick(highs, false, &bounds).or_else(|| support.map(|s| s.1));
        let (Some(lo), Some(hi)) = (lo, hi) else {
            return refuse(
                walk.updates[owner].span,
                "the target's range cannot be bounded",
            );
        };
        bounds.insert(n.clone(), (lo.clone(), hi.clone()));
        ranges.push((lo, hi));
    }
    for (u, p) in walk.updates.iter().zip(&placed) {
        contained(u, p, &names, &bounds)?;
    }
    let span = s.span;
    let mut used_s = false;
    let acc = fresh("s", &mut used);
    let mut sums: Vec<Stmt> = vec![];
    let mut rest: Vec<(i64, Expr)> = vec![];
    for (u, p) in walk.updates.iter().zip(&placed) {
        if p.sum_vars.is_empty() {
            let own = direct(walk, u, p, &names, &acc, &mut used, &mut sums, &mut used_s)?;
            rest.extend(own);
        } else {
            sums.push(sum_nest(u, p, &bounds, &acc)?);
            used_s = true;
        }
    }
    let element = Expr::new(
        ExprKind::Subscript {
            array: target.to_string(),
            indices: names
                .iter()
                .map(|n| Index::At(Expr::name(n, span)))
                .collect(),
        },
        span,
    );
    let mut value = element.clone();
    for (sign, e) in rest {
        value = Expr::binary(if sign > 0 { BinOp::Add } else { BinOp::Sub }, value, e);
    }
    if used_s {
        value = Expr::binary(BinOp::Add, value, Expr::name(&acc, span));
    }
    let mut body = vec![];
    if used_s {
        body.push(Stmt::assign(
            Expr::name(&acc, span),
            Expr::new(ExprKind::Float(0.0), span),
            span,
        ));
    }
    body.extend(sums);
    body.push(Stmt::assign(element, value, walk.updates[0].span));
    Ok(Region {
        names,
        ranges,
        body,
    })
}

/// Every update's rows and columns lie in the region's, and the region's satisfy its bounds.
fn contained(u: &Update, p: &Placed, names: &[String], b: &Bounds) -> Result<(), Refusal> {
    for (d, n) in names.iter().enumerate() {
        let (lo, hi) = &b[n];
        let (lows, highs) = &p.own[d];
        let Some((slo, shi)) = &p.support[d] else {
            return refuse(
                u.span,
                format!("the update's `{n}` range cannot be bounded"),
            );
        };
        let ok = lows.iter().all(|l| always_ge(lo, l, b))
            && highs.iter().all(|h| always_ge(h, hi, b))
            && always_ge(slo, lo, b)
            && always_ge(hi, shi, b);
        if !ok {
            return refuse(
                u.span,
                format!(
                    "this update's `{n}` range is not provably the region's (`range({}, {})`)",
                    python::expr(&lin_expr(lo, u.span)),
                    python::expr(&lin_expr(hi, u.span))
                ),
            );
        }
    }
    Ok(())
}

/// `for v in ...: s = s + value` over an update's sum variables.
fn sum_nest(u: &Update, p: &Placed, region: &Bounds, acc: &str) -> Result<Stmt, Refusal> {
    let mut bounds = region.clone();
    let mut loops = vec![];
    for v in &p.sum_vars {
        let (lows, highs) = own_bounds(&p.cons, v);
        let (Some(lo), Some(hi)) = (pick(&lows, true, &bounds), pick(&highs, false, &bounds))
        else {
            return refuse(
                u.span,
                format!("the bounds of `{v}` need a `max` or `min` once inverted"),
            );
        };
        loops.push((v.clone(), lin_expr(&lo, u.span), lin_expr(&hi, u.span)));
        bounds.insert(v.clone(), (lo, hi));
    }
    let add = Expr::binary(BinOp::Add, Expr::name(acc, u.span), p.value.clone());
    Ok(nest_loops(
        &loops,
        Stmt::assign(Expr::name(acc, u.span), add, u.span),
        u.span,
    ))
}

fn nest_loops(loops: &[(String, Expr, Expr)], inner: Stmt, span: Span) -> Stmt {
    loops.iter().rev().fold(inner, |body, (var, lo, hi)| {
        Stmt::new(
            StmtKind::For {
                var: var.clone(),
                range: Range {
                    start: lo.clone(),
                    stop: hi.clone(),
                    step: Expr::int(1, span),
                },
                body: vec![body],
                kind: LoopKind::Plain,
                vector: None,
                num_warps: None,
            },
            span,
        )
    })
}

/// The additive terms of `e`, with their signs.
fn additive(e: &Expr, sign: i64, out: &mut Vec<(i64, Expr)>) {
    match &e.kind {
        ExprKind::Binary {
            op: op @ (BinOp::Add | BinOp::Sub),
            left,
            right,
        } => {
            additive(left, sign, out);
            additive(right, if *op == BinOp::Add { sign } else { -sign }, out);
        }
        ExprKind::Unary {
            op: UnaryOp::Neg,
            operand,
        } => additive(operand, -sign, out),
        _ => out.push((sign, e.clone())),
    }
}

/// `e` as `coef * P` for the one private sum `P` it reads (`None`: coefficient 1).
fn factor_out(e: &Expr) -> Option<(usize, Option<Expr>)> {
    if let Some(n) = placeholder_index(e) {
        return Some((n, None));
    }
    let ExprKind::Binary {
        op: BinOp::Mul,
        left,
        right,
    } = &e.kind
    else {
        return None;
    };
    let reads = |x: &Expr| x.any(&mut |y| placeholder_index(y).is_some());
    let (inner, other) = match (reads(left), reads(right)) {
        (true, false) => (left, right),
        (false, true) => (right, left),
        _ => return None,
    };
    let (n, coef) = factor_out(inner)?;
    let coef = match coef {
        None => (**other).clone(),
        Some(c) => Expr::binary(BinOp::Mul, (**other).clone(), c),
    };
    Some((n, Some(coef)))
}

/// A direct update (every iteration variable fixed by the target): its private sums folded
/// into the accumulator where they enter linearly, else summed into locals of their own; the
/// terms left for the store.
#[allow(clippy::too_many_arguments)]
fn direct(
    walk: &Walk,
    u: &Update,
    p: &Placed,
    names: &[String],
    acc: &str,
    used: &mut HashSet<String>,
    out: &mut Vec<Stmt>,
    used_s: &mut bool,
) -> Result<Vec<(i64, Expr)>, Refusal> {
    let mut map = p.map.clone();
    let col = names.get(1).map(|c| Expr::name(c, u.span));
    for a in &u.aliases {
        if let Some(c) = &col {
            map.insert(a.clone(), c.clone());
        }
    }
    let mut terms = vec![];
    additive(&p.value, 1, &mut terms);
    let mut rest = vec![];
    for (sign, term) in terms {
        if let Some((n, coef)) = factor_out(&term) {
            let scale = |x: Expr| match &coef {
                None => x,
                Some(c) => Expr::binary(BinOp::Mul, c.clone(), x),
            };
            let op = if sign > 0 { BinOp::Add } else { BinOp::Sub };
            out.extend(sum_parts(
                &walk.sums[n],
                &map,
                names,
                used,
                acc,
                op,
                &scale,
                u.span,
            ));
            *used_s = true;
            continue;
        }
        let mut local = term.clone();
        for n in 0..walk.sums.len() {
            if !term.any(&mut |y| placeholder_index(y) == Some(n)) {
                continue;
            }
            let name = fresh("t", used);
            out.push(Stmt::assign(
                Expr::name(&name, u.span),
                Expr::new(ExprKind::Float(0.0), u.span),
                u.span,
            ));
            out.extend(sum_parts(
                &walk.sums[n],
                &map,
                names,
                used,
                &name,
                BinOp::Add,
                &|x| x,
                u.span,
            ));
            let marker = placeholder(n, u.span);
            local = local.rewrite(&mut |y| {
                if same_place(&y, &marker) {
                    Expr::name(&name, u.span)
                } else {
                    y
                }
            });
        }
        rest.push((sign, local));
    }
    Ok(rest)
}

/// The loops of a private sum, in the region's names, each adding `scale(term)` into `acc`.
#[allow(clippy::too_many_arguments)]
fn sum_parts(
    sum: &Sum,
    map: &HashMap<String, Expr>,
    names: &[String],
    used: &mut HashSet<String>,
    acc: &str,
    op: BinOp,
    scale: &dyn Fn(Expr) -> Expr,
    span: Span,
) -> Vec<Stmt> {
    let mut out = vec![];
    for (loops, term) in &sum.parts {
        let mut map = map.clone();
        let mut nest = vec![];
        for l in loops {
            let (lo, hi) = (subst(&l.lo, &map), subst(&l.hi, &map));
            let name = if names.contains(&l.var) {
                fresh(&l.var, used)
            } else {
                l.var.clone()
            };
            map.insert(l.var.clone(), Expr::name(&name, span));
            nest.push((name, lo, hi));
        }
        let value = Expr::binary(op, Expr::name(acc, span), scale(subst(term, &map)));
        out.push(nest_loops(
            &nest,
            Stmt::assign(Expr::name(acc, span), value, span),
            span,
        ));
    }
    out
}

/// The region as a statement in the loop's place: `parallel for` rows, `simd` columns.
fn region_stmt(r: Region, s: &Stmt, body: &[Stmt], file: &SourceFile) -> Stmt {
    let span = s.span;
    let line = file.line_of(span.start as usize);
    let at = Span::new(span.start as usize, span.start as usize);
    let (num_warps, tf32) = body
        .iter()
        .find_map(|b| match b.pragma.as_ref().map(|p| &p.directive) {
            Some(Directive::ParallelFor {
                num_warps, tf32, ..
            }) => Some((*num_warps, *tf32)),
            _ => None,
        })
        .unwrap_or((None, false));
    let for_loop = |var: &str, range: &(Lin, Lin), body: Vec<Stmt>, kind: LoopKind, directive| {
        let mut st = Stmt::new(
            StmtKind::For {
                var: var.to_string(),
                range: Range {
                    start: lin_expr(&range.0, span),
                    stop: lin_expr(&range.1, span),
                    step: Expr::int(1, span),
                },
                body,
                kind,
                vector: None,
                num_warps: if matches!(kind, LoopKind::Parallel { .. }) {
                    num_warps
                } else {
                    None
                },
            },
            span,
        );
        st.pragma = Some(Pragma {
            directive,
            span: at,
            line,
        });
        st
    };
    let sums_bounded_by_column = r.sums_bounded_by_column();
    let mut body = r.body;
    if r.names.len() == 2 {
        // Lanes along the row when the sums allow it; otherwise one program an element.
        let (kind, directive) = if sums_bounded_by_column {
            let parallel = Directive::ParallelFor {
                simd: None,
                num_warps: None,
                shared: vec![],
                reduction: vec![],
                tf32,
            };
            (LoopKind::Parallel { simd: None }, parallel)
        } else {
            (LoopKind::Simd(Width::Mvl), Directive::Simd(Width::Mvl))
        };
        body = vec![for_loop(&r.names[1], &r.ranges[1], body, kind, directive)];
    }
    for_loop(
        &r.names[0],
        &r.ranges[0],
        body,
        LoopKind::Parallel { simd: None },
        Directive::ParallelFor {
            simd: None,
            num_warps,
            shared: vec![],
            reduction: vec![],
            tf32,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codegen::writer::Writer;
    use crate::passes::attach_pragmas::tests::attached;

    /// The function after the pass, its notes.
    fn gathered(src: &str) -> (Function, Vec<Diagnostic>) {
        let mut f = attached(src).expect("pragmas attach");
        let file = SourceFile::new("t.py", src);
        let mut notes = vec![];
        run(&mut f, &file, &mut notes);
        (f, notes)
    }

    fn printed(body: &[Stmt]) -> String {
        let mut w = Writer::new(0);
        crate::codegen::python::stmts(&mut w, body);
        w.finish()
    }

    /// The loop stays exactly as written and the note gives `why` at the statement of `line`.
    fn refused(src: &str, why: &str, line: usize) {
        let before = attached(src).expect("pragmas attach");
        let (after, notes) = gathered(src);
        assert_eq!(before.body, after.body, "the loop was rewritten");
        let file = SourceFile::new("t.py", src);
        let [note] = notes.as_slice() else {
            panic!("{notes:?}")
        };
        assert!(
            note.label.as_deref().is_some_and(|l| l.contains(why)),
            "{note:?}"
        );
        assert_eq!(file.line_of(note.span.start as usize), line, "{note:?}");
    }

    const SYMM: &str = "def symm(alpha, beta, C, A, B):
    temp2 = np.empty((C.shape[1],), dtype=C.dtype)
    for i in range(C.shape[0]):
        #pragma parallel for
        for j in range(C.shape[1]):
            acc = 0.0
            #pragma simd
            for k in range(i):
                C[k, j] += alpha * B[i, j] * A[i, k]
                acc += B[k, j] * A[i, k]
            temp2[j] = acc
        C[i, :] += alpha * B[i, :] * A[i, i] + alpha * temp2
    return C
";

    #[test]
    fn symm_s_scatter_and_private_row_become_one_region_of_sums_tile_dot_takes() {
        let (f, notes) = gathered(SYMM);
        assert!(notes.is_empty(), "{notes:?}");
        let text = printed(&f.body[1..2]);
        // The scatter `C[k, j]` for `k < i` inverted: row `i` sums the iterations above it;
        // `temp2[j]` replaced by the sum the iteration stored in it, folded into `s`.
        let want = "#pragma parallel for
for i in range(0, C.shape[0], 1):
    #pragma simd
    for j in range(0, C.shape[1], 1):
        s_0 = 0.0
        for i_0 in range(i + 1, C.shape[0], 1):
            s_0 = s_0 + alpha * B[i_0, j] * A[i_0, i]
        for k in range(0, i, 1):
            s_0 = s_0 + alpha * (B[k, j] * A[i, k])
        C[i, j] = C[i, j] + alpha * B[i, j % B.shape[1]] * A[i, i] + s_0
";
        assert_eq!(text, want);
        let mut kernels = crate::passes::outline::run(&f).expect("outlines");
        assert_eq!(kernels.len(), 1);
        crate::passes::tile_dot::run(&mut kernels[0], &mut vec![]);
        assert!(kernels[0].tiles.is_some(), "tile_dot refused the region");
    }

    #[test]
    fn a_triangular_parallel_loop_below_the_row_becomes_rows_from_one() {
        let src = "def f(L, B, C):
    for k in range(C.shape[0]):
        #pragma parallel for
        for i in range(k + 1, C.shape[0]):
            #pragma simd
            for j in range(C.shape[1]):
                C[i, j] += L[i, k] * B[k, j]
";
        let (f, notes) = gathered(src);
        assert!(notes.is_empty(), "{notes:?}");
        let text = printed(&f.body);
        assert!(
            text.starts_with("#pragma parallel for\nfor i in range(1, C.shape[0], 1):"),
            "{text}"
        );
        assert!(text.contains("for k in range(0, i, 1):"), "{text}");
    }

    #[test]
    fn sums_bounded_by_the_column_make_the_column_a_parallel_loop_not_simd_lanes() {
        // `C[j, k]` for `k <= v`: column k sums `v` from k on. Vector lanes along k would need
        // per-lane bounds for that loop, which the lowering refuses (it compiled before this
        // pass and must still compile): one program an element instead.
        let src = "def f(L, B, C):
    for v in range(L.shape[0]):
        #pragma parallel for
        for j in range(C.shape[0]):
            #pragma simd
            for k in range(v + 1):
                C[j, k] += L[v, k] * B[v, j]
";
        let (f, notes) = gathered(src);
        assert!(notes.is_empty(), "{notes:?}");
        let text = printed(&f.body);
        let want = "#pragma parallel for
for j in range(0, C.shape[0], 1):
    #pragma parallel for
    for k in range(0, L.shape[0], 1):
        s_0 = 0.0
        for v in range(k, L.shape[0], 1):
            s_0 = s_0 + L[v, k] * B[v, j]
        C[j, k] = C[j, k] + s_0
";
        assert_eq!(text, want);
    }

    #[test]
    fn a_value_that_reads_the_accumulated_array_keeps_the_loop() {
        let src = "def f(C):
    for i in range(1, C.shape[0]):
        #pragma parallel for simd
        for j in range(C.shape[1]):
            C[i, j] += C[i - 1, j]
";
        refused(src, "reads `C`, which the loop writes", 5);
    }

    #[test]
    fn a_temporary_read_before_the_iteration_writes_it_keeps_the_loop() {
        let src = "def f(C, B):
    t = np.empty((C.shape[1],))
    for i in range(C.shape[0]):
        C[i, :] += t
        #pragma parallel for
        for j in range(C.shape[1]):
            t[j] = B[i, j]
";
        refused(src, "reads `t` before the iteration writes it", 4);
    }

    #[test]
    fn a_temporary_named_after_the_loop_keeps_the_loop() {
        let src = "def f(C, B):
    t = np.empty((C.shape[1],))
    for i in range(C.shape[0]):
        #pragma parallel for
        for j in range(C.shape[1]):
            t[j] = B[i, j]
        C[i, :] += t
    return t
";
        refused(
            src,
            "`t` is private to an iteration but named after the loop",
            3,
        );
    }

    #[test]
    fn the_loop_variable_named_after_the_loop_keeps_the_loop() {
        let src = "def f(C, B):
    for i in range(C.shape[0]):
        #pragma parallel for
        for j in range(C.shape[1]):
            C[i, j] += B[i, j]
    return i
";
        refused(
            src,
            "`i` is private to an iteration but named after the loop",
            2,
        );
    }

    #[test]
    fn a_target_index_that_is_not_invertible_keeps_the_loop() {
        let src = "def f(C, A):
    for i in range(A.shape[0]):
        #pragma parallel for
        for j in range(C.shape[1]):
            #pragma simd
            for k in range(i):
                C[k // 2, j] += A[i, k]
";
        refused(
            src,
            "the target index `k // 2` is not an iteration variable",
            7,
        );
    }

    #[test]
    fn an_assignment_that_is_no_update_keeps_the_loop() {
        let src = "def f(C, A):
    for i in range(A.shape[0]):
        #pragma parallel for
        for j in range(C.shape[1]):
            C[i, j] += A[i, j]
            #pragma simd
            for k in range(i):
                C[k, j] = A[i, k]
";
        refused(src, "is neither an update `+=` nor a private temporary", 8);
    }

    #[test]
    fn a_bare_update_that_reduces_its_slices_keeps_the_loop() {
        let src = "def f(C, B):
    for i in range(C.shape[0]):
        #pragma parallel for
        for j in range(C.shape[1]):
            C[i, j] += B[i, j]
        C[i, :] += np.sum(B[i, :])
";
        refused(src, "not element-wise", 6);
        let src = src.replace("np.sum(B[i, :])", "B[i, :] @ B");
        refused(&src, "not element-wise", 6);
    }

    #[test]
    fn updates_of_two_arrays_keep_the_loop() {
        let src = "def f(C, D, A):
    for i in range(A.shape[0]):
        #pragma parallel for
        for j in range(C.shape[1]):
            C[i, j] += A[i, j]
            D[i, j] += A[i, j]
";
        refused(src, "accumulates into two arrays", 6);
    }

    #[test]
    fn a_column_sum_into_a_vector_is_one_parallel_loop_over_the_vector() {
        let src = "def f(A, y, x):
    for i in range(A.shape[0]):
        #pragma parallel for simd
        for j in range(A.shape[1]):
            x[j] += A[i, j] * y[i]
";
        let (f, notes) = gathered(src);
        assert!(notes.is_empty(), "{notes:?}");
        let want = "#pragma parallel for
for j in range(0, A.shape[1], 1):
    s_0 = 0.0
    for i in range(0, A.shape[0], 1):
        s_0 = s_0 + A[i, j] * y[i]
    x[j] = x[j] + s_0
";
        assert_eq!(printed(&f.body), want);
    }
}
