//! distribute: the regions of a host loop under `#pragma distribute(A, B)` become SPMD code on
//! one PE's block of rows of the named arrays (row indices stay global and are shifted onto the
//! block, row loops clipped to the owned rows) with halo exchanges (NVSHMEM puts with flags and
//! waits, as communication phases) before each region that reads rows a neighbour owns.
//!
//! *After* (on the returned copy of the kernels; the originals stay the single-GPU program):
//! every access of a distributed array indexes its row as `v + c - _appyc_o` where `v` is the
//! region's row loop variable, and that loop runs only over the rows the PE owns
//! ([`R0`, `R1`) for the written rows); `X.shape[0]` reads the global row count ([`ROWS`]);
//! every region that reads a row `v + c` with `c` not its written offset is preceded, since the
//! array was last written, by an exchange of that array's `halo` edge rows with both
//! neighbours whose flags count iterations (monotone, one put per flag an iteration), and no
//! PE can put into a neighbour's halo before that neighbour has read it (another exchange
//! orders them, or an acknowledgement on a second flag set: `acks`). Accesses a row split
//! cannot serve are errors at the access.

use crate::diag::{Diagnostic, Result};
use crate::frontend::source::Span;
use crate::ir::pragma::Directive;
use crate::ir::*;
use crate::passes::affine::Affine;

/// The first global row this PE owns.
pub const R0: &str = "_appyc_r0";
/// One past the last global row this PE owns.
pub const R1: &str = "_appyc_r1";
/// Global row `g` is row `g - _appyc_o` of the block (`R0 - halo`).
pub const OFFSET: &str = "_appyc_o";
/// The global row count (`X.shape[0]` of the global arrays).
pub const ROWS: &str = "_appyc_rows";
/// The neighbour above (owning the rows before `R0`), and the one below; they wrap around the
/// PEs, so an edge PE's puts land in halo rows outside the global array, which no region reads.
pub const UP: &str = "_appyc_up";
pub const DOWN: &str = "_appyc_down";
/// Where the halo below the block starts on the neighbour above: `halo + its row count`.
pub const UP_HALO: &str = "_appyc_up_halo";
/// This PE's row count: its last `halo` owned rows start at block row `OWN`.
pub const OWN: &str = "_appyc_own";
/// The flag words, two an exchange (the halo above, the halo below) then two an
/// acknowledgement, on the symmetric heap.
pub const FLAGS: &str = "_appyc_flags";
/// A block row no region reads (after the halo below): acknowledgements put into it.
pub const SCRATCH: &str = "_appyc_scratch";

/// What the host side of a distributed loop needs (`codegen`).
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// The `for` statement.
    pub loop_span: Span,
    /// The named arrays, in the pragma's order.
    pub arrays: Vec<String>,
    /// Halo rows on each side of a block.
    pub halo: i64,
    /// Flag words (two an exchange).
    pub flags: usize,
}

/// The loop's plan and the function's kernels with the loop's regions distributed and its
/// exchanges inserted (each exchange phase shares the span of the region it precedes and
/// stands before it, so the schedule runs them in that order).
#[derive(Debug, Clone)]
pub struct Distributed {
    pub plan: Plan,
    pub kernels: Vec<Kernel>,
}

/// The distributed form of the function's `#pragma distribute` loop, if it has one.
pub fn run(func: &Function, kernels: &[Kernel]) -> Result<Option<Distributed>> {
    let mut loops = vec![];
    for s in &func.body {
        s.walk(&mut |st| {
            if let Some(Directive::Distribute { arrays, .. }) =
                st.pragma.as_ref().map(|p| &p.directive)
            {
                loops.push((st, arrays.clone()));
            }
        });
    }
    let Some((the_loop, arrays)) = loops.first().cloned() else {
        return Ok(None);
    };
    if let Some((second, _)) = loops.get(1) {
        return Err(Diagnostic::error(
            second.pragma.as_ref().map_or(second.span, |p| p.span),
            "a second `#pragma distribute` loop in one function",
        )
        .with_help("distribute one time loop per function; call a second function for another"));
    }
    let StmtKind::For { var, range, .. } = &the_loop.kind else {
        unreachable!("attach_pragmas puts `distribute` on plain for loops")
    };
    let names: Vec<String> = arrays.iter().map(|(n, _)| n.clone()).collect();
    let at = the_loop.pragma.as_ref().map_or(the_loop.span, |p| p.span);
    for (n, span) in &arrays {
        let used = kernels
            .iter()
            .filter(|k| the_loop.span.start <= k.span.start && k.span.end <= the_loop.span.end)
            .any(|k| k.names_array(n));
        if !used {
            return Err(Diagnostic::error(
                *span,
                format!("`{n}` is named in `distribute` but no region of the loop indexes it"),
            ));
        }
    }
    let inside: Vec<usize> = (0..kernels.len())
        .filter(|&i| {
            let k = &kernels[i];
            the_loop.span.start <= k.span.start && k.span.end <= the_loop.span.end
        })
        .collect();
    if inside.is_empty() {
        return Err(Diagnostic::error(
            at,
            "a `distribute` loop without parallel regions",
        ));
    }
    let mut regions = vec![];
    for &i in &inside {
        regions.push(region(&kernels[i], &names)?);
    }
    let halo = regions
        .iter()
        .flat_map(|r| r.reads.iter().map(move |(_, c)| (c - r.written).abs()))
        .max()
        .unwrap_or(0);
    let exchanges = exchanges(&regions);
    let acks = acks(&regions, &exchanges);
    let signal = iteration(var, range, at);
    let mut out: Vec<Kernel> = vec![];
    let mut count = 0;
    let mut push = |mut p: Kernel, out: &mut Vec<Kernel>| {
        p.name = format!("_dist{count}");
        count += 1;
        out.push(p);
    };
    // Flags: two an exchange, then two an acknowledgement.
    let ack_flag = |a: usize| 2 * (exchanges.len() + a);
    for (i, k) in kernels.iter().enumerate() {
        let Some(r) = inside.iter().position(|&j| j == i) else {
            out.push(k.clone());
            continue;
        };
        for (e, x) in exchanges.iter().enumerate().filter(|(_, x)| x.before == r) {
            for (a, ack) in acks.iter().enumerate().filter(|(_, a)| a.before == e) {
                for p in ack_waits(ack_flag(a), ack.lag, &signal, k) {
                    push(p, &mut out);
                }
            }
            let rank = regions[r].rank(&x.array).unwrap_or(1);
            for p in exchange(&x.array, rank, e, halo, &signal, k, at)? {
                push(p, &mut out);
            }
        }
        out.push(regions[r].kernel.clone());
        for (a, ack) in acks.iter().enumerate().filter(|(_, a)| a.after == r) {
            let rank = regions[r].rank(&ack.array).unwrap_or(1);
            for p in ack_puts(&ack.array, rank, ack_flag(a), halo, &signal, k) {
                push(p, &mut out);
            }
        }
    }
    Ok(Some(Distributed {
        plan: Plan {
            loop_span: the_loop.span,
            arrays: names,
            halo,
            flags: 2 * (exchanges.len() + acks.len()),
        },
        kernels: out,
    }))
}

/// One region of the loop, distributed, and what it reads.
#[derive(Debug)]
struct Region {
    kernel: Kernel,
    /// The row offset of its writes (`B[i + c] = ...`).
    written: i64,
    /// Distributed arrays it writes.
    writes: Vec<String>,
    /// (array, row offset) of each distributed read.
    reads: Vec<(String, i64)>,
    /// (array, rank) of every distributed array it indexes.
    ranks: Vec<(String, usize)>,
}

impl Region {
    /// Arrays read at a row another PE may own.
    fn needs(&self) -> Vec<&str> {
        let mut out: Vec<&str> = vec![];
        for (a, c) in &self.reads {
            if *c != self.written && !out.contains(&a.as_str()) {
                out.push(a);
            }
        }
        out
    }
    fn rank(&self, array: &str) -> Option<usize> {
        self.ranks.iter().find(|(a, _)| a == array).map(|(_, r)| *r)
    }
}

/// One access of a distributed array: its row index, whether it is a write, the whole access.
struct Access<'a> {
    array: &'a str,
    row: Option<&'a Expr>,
    rank: usize,
    write: bool,
    at: Span,
}

/// The accesses of distributed arrays in `k` (and writes of other arrays, as errors).
fn accesses<'k>(k: &'k Kernel, arrays: &[String]) -> Result<Vec<Access<'k>>> {
    let mut out = vec![];
    let mut bad: Option<Diagnostic> = None;
    let read = |e: &'k Expr, out: &mut Vec<Access<'k>>| {
        e.walk(&mut |x| {
            if let ExprKind::Subscript { array, indices } = &x.kind {
                if arrays.contains(array) {
                    out.push(access(array, indices, false, x.span));
                }
            }
        })
    };
    for d in &k.dims {
        for e in [&d.range.start, &d.range.stop, &d.range.step] {
            read(e, &mut out);
        }
    }
    for s in &k.body {
        s.walk(&mut |st| match &st.kind {
            StmtKind::Assign { target, value, .. } => {
                if let ExprKind::Subscript { array, indices } = &target.kind {
                    if arrays.contains(array) {
                        out.push(access(array, indices, true, target.span));
                    } else if bad.is_none() {
                        bad = Some(
                            Diagnostic::error(
                                target.span,
                                format!("a region of a `distribute` loop writes `{array}`, which is not distributed"),
                            )
                            .with_help(format!(
                                "name it in `#pragma distribute(...)`, so that each PE writes its own rows of `{array}`"
                            )),
                        );
                    }
                    for ix in indices {
                        if let Index::At(e) = ix {
                            read(e, &mut out);
                        }
                    }
                }
                read(value, &mut out);
            }
            _ => st.exprs().into_iter().for_each(|e| read(e, &mut out)),
        });
    }
    match bad {
        Some(d) => Err(d),
        None => Ok(out),
    }
}

fn access<'a>(array: &'a str, indices: &'a [Index], write: bool, at: Span) -> Access<'a> {
    let row = match indices.first() {
        Some(Index::At(e)) => Some(e),
        _ => None,
    };
    Access {
        array,
        row,
        rank: indices
            .iter()
            .filter(|i| !matches!(i, Index::NewAxis))
            .count(),
        write,
        at,
    }
}

/// The loop variables of a region: its grid dimensions' and its loops' (and their vectors).
fn loop_vars(k: &Kernel) -> Vec<String> {
    let mut out: Vec<String> = k.dims.iter().map(|d| d.var.clone()).collect();
    for s in &k.body {
        s.walk(&mut |st| {
            if let StmtKind::For { var, vector, .. } = &st.kind {
                out.push(var.clone());
                out.extend(vector.clone());
            }
        });
    }
    out
}

/// `v + c` of a row index: the loop variable and the constant; `None` for anything else.
fn row_form(e: &Expr, vars: &[String]) -> Option<(String, i64)> {
    let a = Affine::of(e);
    match a.terms().iter().collect::<Vec<_>>().as_slice() {
        [(v, 1)] if vars.contains(v) => Some(((*v).clone(), a.constant())),
        _ => None,
    }
}

fn unservable(a: &Access, why: &str) -> Diagnostic {
    Diagnostic::error(
        a.at,
        format!("`{}` is split by rows among the PEs, but {why}", a.array),
    )
    .with_label("a row split cannot serve this access")
    .with_help(format!(
        "a region of a `distribute` loop may read `{}[i + c, ...]` (its written row `i` plus a constant) \
         and write `{}[i, ...]`; leave the array out of `distribute` if the loop only reads it",
        a.array, a.array
    ))
}

/// Checks one region and distributes it: `X.shape[0]` of a distributed array becomes the
/// global row count, its row loop is clipped to the owned rows, its row indices shifted.
fn region(k: &Kernel, arrays: &[String]) -> Result<Region> {
    let mut k = k.clone();
    let span = k.span;
    if let Some(s) = k.shared.first() {
        return Err(Diagnostic::error(
            s.span,
            format!(
                "a region of a `distribute` loop reduces the scalar `{}`",
                s.var
            ),
        )
        .with_help(
            "each PE would hold a partial result: reductions across PEs are not distributed yet",
        ));
    }
    if let Some((t, _)) = k.temps.first() {
        return Err(Diagnostic::error(
            span,
            format!("a region of a `distribute` loop needs a temporary array (`{t}`)"),
        )
        .with_help(
            "write the result into another distributed array instead of reading the target",
        ));
    }
    let global_rows = |e: Expr| match &e.kind {
        ExprKind::Shape { array, dim: 0 } if arrays.contains(array) => Expr::name(ROWS, e.span),
        _ => e,
    };
    for d in k.dims.iter_mut() {
        for e in [&mut d.range.start, &mut d.range.stop, &mut d.range.step] {
            *e = std::mem::replace(e, Expr::int(0, span)).rewrite(&mut |x| global_rows(x));
        }
    }
    for s in k.body.iter_mut() {
        s.rewrite_exprs(&mut |x| x.rewrite(&mut |y| global_rows(y)));
    }
    // The launcher's checks compare global extents too (`A[2:]` against `1:L-1`).
    let global = |e: &mut Expr| {
        *e = std::mem::replace(e, Expr::int(0, span)).rewrite(&mut |x| global_rows(x));
    };
    for c in k.checks.iter_mut() {
        match c {
            LaunchCheck::AtMost(e, _, _) => global(e),
            LaunchCheck::Equal(a, b, _) => {
                global(a);
                global(b);
            }
        }
    }
    for (_, lo, hi) in k.bound.iter_mut() {
        global(lo);
        global(hi);
    }
    let vars = loop_vars(&k);
    let list = accesses(&k, arrays)?;
    let mut row_var: Option<(String, i64)> = None;
    let mut reads = vec![];
    let mut writes: Vec<String> = vec![];
    let mut ranks: Vec<(String, usize)> = vec![];
    // The written rows first: they decide the region's row variable.
    for a in list
        .iter()
        .filter(|a| a.write)
        .chain(list.iter().filter(|a| !a.write))
    {
        match ranks.iter().find(|(n, _)| n == a.array) {
            Some((_, r)) if *r != a.rank => {
                return Err(unservable(
                    a,
                    "it is indexed with different numbers of indices",
                ))
            }
            Some(_) => {}
            None => ranks.push((a.array.to_string(), a.rank)),
        }
        let Some(row) = a.row else {
            return Err(unservable(
                a,
                "this access takes a slice or all of its rows",
            ));
        };
        let Some((v, c)) = row_form(row, &vars) else {
            return Err(unservable(
                a,
                &format!(
                    "this access reads row `{}`, which is not a loop variable plus a constant",
                    crate::ir::python::expr(row)
                ),
            ));
        };
        match &row_var {
            None if a.write => row_var = Some((v, c)),
            None => return Err(unservable(a, "the region writes no distributed array")),
            Some((w, _)) if *w != v => {
                // Names the compiler made (slices, reductions) mean nothing to the user.
                let why = if v.starts_with('_') || w.starts_with('_') {
                    "this access's rows run along another axis of the region than the rows it writes \
                     (a transposed or whole-column read)"
                        .to_string()
                } else {
                    format!("this access's row follows `{v}`, while the region writes the rows of `{w}`")
                };
                return Err(unservable(a, &why));
            }
            Some((_, cw)) if a.write && *cw != c => {
                return Err(unservable(
                    a,
                    "the region writes rows at two different offsets",
                ))
            }
            Some(_) => {}
        }
        if a.write {
            if !writes.iter().any(|w| w == a.array) {
                writes.push(a.array.to_string());
            }
        } else {
            reads.push((a.array.to_string(), c));
        }
    }
    let Some((var, written)) = row_var else {
        return Err(Diagnostic::error(
            span,
            "a region of a `distribute` loop that writes no distributed array",
        )
        .with_help("every region of the loop must write rows of an array named in `distribute`"));
    };
    clip(&mut k, &var, written)?;
    shift(&mut k, arrays);
    Ok(Region {
        kernel: k,
        written,
        writes,
        reads,
        ranks,
    })
}

/// The loop of `var` (a grid dimension or a loop of the body) runs over the rows the PE owns:
/// `range(max(start, R0 - c), min(stop, R1 - c))` for writes at offset `c`.
fn clip(k: &mut Kernel, var: &str, written: i64) -> Result<()> {
    let bound = |name: &str, span: Span| {
        let e = Expr::name(name, span);
        match written {
            0 => e,
            c => Expr::binary(BinOp::Sub, e, Expr::int(c, span)),
        }
    };
    let clip_range = |r: &mut Range, span: Span| -> Result<()> {
        if !matches!(r.step.kind, ExprKind::Int(1)) {
            return Err(Diagnostic::error(
                span,
                "the row loop of a region in a `distribute` loop must have step 1",
            ));
        }
        let call = |f: &str, a: Expr, b: Expr| {
            Expr::new(
                ExprKind::Call {
                    func: f.into(),
                    args: vec![a, b],
                },
                span,
            )
        };
        let start = std::mem::replace(&mut r.start, Expr::int(0, span));
        r.start = call("max", start, bound(R0, span));
        let stop = std::mem::replace(&mut r.stop, Expr::int(0, span));
        r.stop = call("min", stop, bound(R1, span));
        Ok(())
    };
    if let Some(d) = k.dims.iter_mut().find(|d| d.var == var) {
        return clip_range(&mut d.range, d.span);
    }
    let mut result = Ok(());
    let mut found = false;
    for s in k.body.iter_mut() {
        clip_in(s, var, &mut |r, span| {
            found = true;
            result = clip_range(r, span);
        });
    }
    debug_assert!(found, "the row variable is a loop variable");
    result
}

/// Calls `f` on the range of the loop binding `var` (as its variable or its vector).
fn clip_in(s: &mut Stmt, var: &str, f: &mut dyn FnMut(&mut Range, Span)) {
    let span = s.span;
    match &mut s.kind {
        StmtKind::For {
            var: v,
            vector,
            range,
            body,
            ..
        } => {
            if v == var || vector.as_deref() == Some(var) {
                f(range, span);
            }
            body.iter_mut().for_each(|b| clip_in(b, var, f));
        }
        StmtKind::If { body, orelse, .. } => {
            body.iter_mut()
                .chain(orelse.iter_mut())
                .for_each(|b| clip_in(b, var, f));
        }
        _ => {}
    }
}

/// Every row index of a distributed array, `g`, becomes `g - OFFSET`: the block's row.
fn shift(k: &mut Kernel, arrays: &[String]) {
    let mut f = |e: Expr| match e.kind {
        ExprKind::Subscript { array, mut indices } if arrays.contains(&array) => {
            if let Some(Index::At(row)) = indices.first_mut() {
                let g = std::mem::replace(row, Expr::int(0, e.span));
                *row = Expr::binary(BinOp::Sub, g, Expr::name(OFFSET, e.span));
            }
            Expr::new(ExprKind::Subscript { array, indices }, e.span)
        }
        kind => Expr::new(kind, e.span),
    };
    for s in k.body.iter_mut() {
        s.rewrite_exprs(&mut |x| x.rewrite(&mut f));
    }
}

/// An exchange of `array`'s edge rows before region `before`.
#[derive(Debug, Clone, PartialEq)]
struct Exchange {
    array: String,
    before: usize,
}

/// Where the exchanges go: an array is exchanged before a region that reads a neighbour's rows
/// of it when some region wrote it since the region before that read it (cyclically, so the
/// writes of the previous iteration count). An array the loop never writes keeps the halos
/// the block was given at the start.
fn exchanges(regions: &[Region]) -> Vec<Exchange> {
    let n = regions.len();
    let mut out = vec![];
    for j in 0..n {
        for x in regions[j].needs() {
            // The previous reader, or this region itself a whole iteration back.
            let prev = (1..=n)
                .map(|d| (j + n - d) % n)
                .find(|&i| regions[i].needs().contains(&x))
                .expect("j reads x");
            let span = if prev == j { n } else { (j + n - prev) % n };
            let dirty = (0..span)
                .map(|d| (prev + d) % n)
                .any(|i| regions[i].writes.iter().any(|w| w == x));
            if dirty {
                out.push(Exchange {
                    array: x.to_string(),
                    before: j,
                });
            }
        }
    }
    out
}

/// One phase of an iteration, for the race check.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Step {
    Exchange(usize),
    Region(usize),
}

fn steps(regions: &[Region], exchanges: &[Exchange]) -> Vec<Step> {
    let mut out = vec![];
    for r in 0..regions.len() {
        for (e, _) in exchanges.iter().enumerate().filter(|(_, x)| x.before == r) {
            out.push(Step::Exchange(e));
        }
        out.push(Step::Region(r));
    }
    out
}

/// An acknowledgement: after region `after` (the last to read the halo of an exchange's array)
/// every PE tells both neighbours, with a one-element put of `array` (which that region
/// writes, so the schedule puts a grid barrier between the region and the put) counted on
/// the second flag set; exchange `before` (the next of that array) first waits for both
/// neighbours' acknowledgements, of its own iteration less `lag`.
#[derive(Debug, Clone, PartialEq)]
struct Ack {
    after: usize,
    array: String,
    before: usize,
    lag: i64,
}

/// What keeps a PE from putting into a neighbour's halo of `X` before that neighbour has read
/// the halo's previous contents. A neighbour reads them in the regions between the exchange
/// that brought them and the next exchange of `X` (`last`: the last of those). When some region
/// from `last` on writes an array `Y` that is exchanged before that next exchange, the sender
/// reaches it only after waiting for the neighbour's puts of `Y`, which the neighbour made
/// after a grid barrier that followed `last` (the schedule separates a write of `Y` from the
/// put that reads it): Listing 8's order, nothing to add. Otherwise an [`Ack`].
fn acks(regions: &[Region], exchanges: &[Exchange]) -> Vec<Ack> {
    let steps = steps(regions, exchanges);
    let len = steps.len();
    let get = |p: usize| steps[p % len];
    let mut out = vec![];
    for (e, x) in exchanges.iter().enumerate() {
        let p = steps.iter().position(|s| *s == Step::Exchange(e)).unwrap();
        let next = (p + 1..=p + len)
            .find(|&q| matches!(get(q), Step::Exchange(f) if exchanges[f].array == x.array))
            .unwrap();
        let last = (p + 1..next)
            .filter(|&q| matches!(get(q), Step::Region(r) if regions[r].needs().contains(&x.array.as_str())))
            .max()
            .expect("an exchange has readers");
        let ordered = (last..next).any(|w| {
            let Step::Region(r) = get(w) else {
                return false;
            };
            (w + 1..next).any(|q| {
                matches!(get(q), Step::Exchange(f) if exchanges[f].array != x.array
                    && regions[r].writes.contains(&exchanges[f].array))
            })
        });
        if ordered {
            continue;
        }
        let (Step::Region(after), Step::Exchange(before)) = (get(last), get(next)) else {
            unreachable!("found as a region and an exchange")
        };
        out.push(Ack {
            after,
            array: regions[after].writes[0].clone(),
            before,
            lag: (next / len) as i64 - (last / len) as i64,
        });
    }
    out
}

/// The iteration number (from 1) of the loop `for var in range`: the value every flag reaches
/// in that iteration, one put a flag an iteration.
fn iteration(var: &str, range: &Range, at: Span) -> Expr {
    let v = Expr::name(var, at);
    let from_start = match range.start.kind {
        ExprKind::Int(0) => v,
        _ => Expr::binary(BinOp::Sub, v, range.start.clone()),
    };
    let count = match range.step.kind {
        ExprKind::Int(1) => from_start,
        _ => Expr::binary(BinOp::FloorDiv, from_start, range.step.clone()),
    };
    Expr::binary(BinOp::Add, count, Expr::int(1, at))
}

/// The phases of exchange `e` of `array` (before `region`): puts of the first `halo` owned rows
/// into the halo below the block of the PE above and of the last ones into the halo above the
/// block of the PE below, each counted on the receiver's flag, then waits for both of this
/// PE's flags. A row of a 3-D array is a plane: one put each.
fn exchange(
    array: &str,
    rank: usize,
    e: usize,
    halo: i64,
    signal: &Expr,
    region: &Kernel,
    at: Span,
) -> Result<Vec<Kernel>> {
    let span = region.span;
    let name = |n: &str| Expr::name(n, span);
    let int = |v: i64| Expr::int(v, span);
    let plus = |a: Expr, c: i64| {
        if c == 0 {
            a
        } else {
            Expr::binary(BinOp::Add, a, int(c))
        }
    };
    let flag = |k: usize| flag_elem(k, span);
    let cols = |first: usize| -> Vec<Index> {
        (first..rank)
            .map(|d| Index::Slice {
                lo: Some(int(0)),
                hi: Some(Expr::new(
                    ExprKind::Shape {
                        array: array.into(),
                        dim: d,
                    },
                    span,
                )),
                span,
            })
            .collect()
    };
    // (rows from, how many): one view of `halo` rows, or one a plane.
    let view = |from: Expr, plane: Option<i64>| -> Expr {
        let mut indices = match plane {
            None => vec![Index::Slice {
                lo: Some(from.clone()),
                hi: Some(plus(from, halo)),
                span,
            }],
            Some(p) => vec![Index::At(plus(from, p))],
        };
        indices.extend(cols(1));
        Expr::new(
            ExprKind::Subscript {
                array: array.into(),
                indices,
            },
            span,
        )
    };
    let planes: Vec<Option<i64>> = match rank {
        1 | 2 => vec![None],
        3 => (0..halo).map(Some).collect(),
        _ => {
            return Err(Diagnostic::error(
                at,
                format!("`distribute` splits arrays of 1 to 3 dimensions; `{array}` has {rank}"),
            ))
        }
    };
    let per_flag = planes.len() as i64;
    let value = if per_flag == 1 {
        signal.clone()
    } else {
        Expr::binary(BinOp::Mul, signal.clone(), int(per_flag))
    };
    let mut out = vec![];
    let mut slot = 0;
    // Up: my first rows (block rows halo..) into the halo below the block above.
    // Down: my last rows (block rows OWN..) into the halo above the block below (rows 0..).
    for (pe, dest_from, src_from, f) in [
        (UP, name(UP_HALO), int(halo), 2 * e + 1),
        (DOWN, int(0), name(OWN), 2 * e),
    ] {
        for &p in &planes {
            let dest = view(dest_from.clone(), p);
            let src = view(src_from.clone(), p);
            let comm = Comm::Put {
                dest: dest.clone(),
                src: src.clone(),
                pe: name(pe),
                flag: Some(flag(f)),
                blocking: true,
                slot,
            };
            let args = vec![dest, src, name(pe), flag(f), value.clone()];
            out.push(phase(region, "nvshmem.Putmem", args, comm));
            slot += 1;
        }
    }
    for f in [2 * e, 2 * e + 1] {
        let comm = Comm::Wait {
            flag: flag(f),
            signal: value.clone(),
            targets: vec![array.to_string()],
        };
        let args = vec![flag(f), value.clone()];
        out.push(phase(region, "nvshmem.SignalWait", args, comm));
    }
    Ok(out)
}

/// The waits of an acknowledgement (flags `flag` and `flag + 1`, from both neighbours), for
/// the iteration `lag` before this one (0 before the first: no wait).
fn ack_waits(flag: usize, lag: i64, signal: &Expr, region: &Kernel) -> Vec<Kernel> {
    let span = region.span;
    let value = match lag {
        0 => signal.clone(),
        l => Expr::binary(BinOp::Sub, signal.clone(), Expr::int(l, span)),
    };
    (flag..flag + 2)
        .map(|f| {
            let flag = flag_elem(f, span);
            let comm = Comm::Wait {
                flag: flag.clone(),
                signal: value.clone(),
                targets: vec![],
            };
            phase(
                region,
                "nvshmem.SignalWait",
                vec![flag, value.clone()],
                comm,
            )
        })
        .collect()
}

/// The puts of an acknowledgement after `region`: one element of `array` (its first owned
/// row's first element, which `region` writes: a grid barrier comes first) into the scratch
/// row of each neighbour's block ([`SCRATCH`], never read), counted on the neighbour's flag
/// (`flag + 1` on the PE above: from below; `flag` on the PE below: from above).
fn ack_puts(
    array: &str,
    rank: usize,
    flag: usize,
    halo: i64,
    signal: &Expr,
    region: &Kernel,
) -> Vec<Kernel> {
    let span = region.span;
    let one = |row: Expr| -> Expr {
        let mut indices = vec![];
        if rank == 1 {
            indices.push(Index::Slice {
                lo: Some(row.clone()),
                hi: Some(Expr::binary(BinOp::Add, row, Expr::int(1, span))),
                span,
            });
        } else {
            indices.push(Index::At(row));
            indices.extend((1..rank - 1).map(|_| Index::At(Expr::int(0, span))));
            indices.push(Index::Slice {
                lo: Some(Expr::int(0, span)),
                hi: Some(Expr::int(1, span)),
                span,
            });
        }
        Expr::new(
            ExprKind::Subscript {
                array: array.into(),
                indices,
            },
            span,
        )
    };
    [(UP, flag + 1, 0), (DOWN, flag, 1)]
        .into_iter()
        .map(|(pe, f, slot)| {
            let dest = one(Expr::name(SCRATCH, span));
            let src = one(Expr::int(halo, span));
            let comm = Comm::Put {
                dest: dest.clone(),
                src: src.clone(),
                pe: Expr::name(pe, span),
                flag: Some(flag_elem(f, span)),
                blocking: true,
                slot,
            };
            let args = vec![
                dest,
                src,
                Expr::name(pe, span),
                flag_elem(f, span),
                signal.clone(),
            ];
            phase(region, "nvshmem.Putmem", args, comm)
        })
        .collect()
}

/// `_appyc_flags[k]`.
fn flag_elem(k: usize, span: Span) -> Expr {
    Expr::new(
        ExprKind::Subscript {
            array: FLAGS.into(),
            indices: vec![Index::At(Expr::int(k as i64, span))],
        },
        span,
    )
}

/// A communication phase standing before `region` (its span), its call in the body for the
/// analyses (names, arrays, scalars).
fn phase(region: &Kernel, func: &str, args: Vec<Expr>, comm: Comm) -> Kernel {
    let span = region.span;
    let call = Expr::new(
        ExprKind::Call {
            func: func.into(),
            args,
        },
        span,
    );
    Kernel {
        name: String::new(),
        dims: vec![],
        body: vec![Stmt::new(StmtKind::Expr(call), span)],
        num_warps: None,
        span,
        pragma_span: span,
        bound: vec![],
        temps: vec![],
        checks: vec![],
        comm: Some(comm),
        shared: vec![],
        tiles: None,
        tf32: false,
        split_rows: None,
        absorbed: vec![],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontend::pragma::collect_pragmas;
    use crate::frontend::source::SourceFile;

    /// The source's first function through the passes before this one (lowered, vectorised
    /// and strip-mined as the driver does when `simd` is written), then this pass.
    fn run_src(src: &str) -> Result<Distributed> {
        let file = SourceFile::new("t.py", src);
        let func = crate::passes::attach_pragmas::tests::attached(src)?;
        let pragmas = collect_pragmas(&file)?;
        let mut kernels = crate::passes::outline::run(&func)?;
        crate::passes::live_out::run(&file, &func, &mut kernels);
        let opts = crate::passes::lower_tensor::Options { auto_simd: true };
        for k in kernels.iter_mut() {
            crate::passes::shared_scalars::run(k, &pragmas, &mut vec![])?;
            crate::passes::promote_updates::run(k);
            crate::passes::lower_tensor::split(k)?;
            crate::passes::insert_sync::run(k);
            crate::passes::lower_tensor::lower(k, &opts)?;
            crate::passes::strip_mine::run(k)?;
        }
        Ok(run(&func, &kernels)?.expect("a distribute loop"))
    }

    fn error(src: &str) -> String {
        run_src(src).unwrap_err().message
    }

    /// A 2-D loop of two sweeps, `B` from `A` then `A` from `B`, each `X[i, j]` from `reads`
    /// (`{X}` stands for the array read).
    fn two_sweeps(reads: &str) -> String {
        let sweep = |dst: &str, src: &str| {
            format!(
                "        #pragma parallel for\n        for i in range(2, M - 2):\n            #pragma simd\n            for j in range(2, N - 2):\n                {dst}[i, j] = {}\n",
                reads.replace("{X}", src)
            )
        };
        format!(
            "def f(A, B, M, N, T):\n    #pragma distribute(A, B)\n    for t in range(T):\n{}{}",
            sweep("B", "A"),
            sweep("A", "B")
        )
    }

    #[test]
    fn halo_of_a_five_point_stencil_is_one_row_exchanged_before_each_sweep() {
        let d = run_src(&two_sweeps(
            "0.2 * ({X}[i, j] + {X}[i - 1, j] + {X}[i + 1, j] + {X}[i, j - 1] + {X}[i, j + 1])",
        ))
        .unwrap();
        assert_eq!(d.plan.halo, 1);
        assert_eq!(d.plan.arrays, ["A", "B"]);
        // Two exchanges (A before the first sweep, B before the second), two flags each.
        assert_eq!(d.plan.flags, 4);
        let order: Vec<String> = d
            .kernels
            .iter()
            .map(|k| match &k.comm {
                Some(Comm::Put { dest, .. }) => format!("put {}", crate::ir::python::expr(dest)),
                Some(Comm::Wait { flag, .. }) => format!("wait {}", crate::ir::python::expr(flag)),
                None => "region".into(),
            })
            .collect();
        assert_eq!(
            order,
            [
                "put A[_appyc_up_halo:_appyc_up_halo + 1, 0:A.shape[1]]",
                "put A[0:0 + 1, 0:A.shape[1]]",
                "wait _appyc_flags[0]",
                "wait _appyc_flags[1]",
                "region",
                "put B[_appyc_up_halo:_appyc_up_halo + 1, 0:B.shape[1]]",
                "put B[0:0 + 1, 0:B.shape[1]]",
                "wait _appyc_flags[2]",
                "wait _appyc_flags[3]",
                "region",
            ]
        );
    }

    #[test]
    fn halo_of_a_nine_point_stencil_is_one_row_and_of_a_radius_two_star_two() {
        let box9 =
            "({X}[i - 1, j - 1] + {X}[i - 1, j] + {X}[i - 1, j + 1] + {X}[i, j - 1] + {X}[i, j] \
                    + {X}[i, j + 1] + {X}[i + 1, j - 1] + {X}[i + 1, j] + {X}[i + 1, j + 1]) / 9.0";
        assert_eq!(run_src(&two_sweeps(box9)).unwrap().plan.halo, 1);
        let star = "({X}[i - 2, j] + {X}[i - 1, j] + {X}[i, j] + {X}[i + 1, j] + {X}[i + 2, j] \
                    + {X}[i, j - 2] + {X}[i, j + 2]) / 7.0";
        assert_eq!(run_src(&two_sweeps(star)).unwrap().plan.halo, 2);
    }

    #[test]
    fn halo_of_one_sided_stencils_is_their_reach_on_their_side() {
        assert_eq!(
            run_src(&two_sweeps("{X}[i, j] - 0.5 * {X}[i - 1, j]"))
                .unwrap()
                .plan
                .halo,
            1
        );
        assert_eq!(
            run_src(&two_sweeps("{X}[i + 2, j] - {X}[i, j]"))
                .unwrap()
                .plan
                .halo,
            2
        );
        // Reading only the row it writes: nothing to exchange.
        let d = run_src(&two_sweeps("2.0 * {X}[i, j - 1]")).unwrap();
        assert_eq!((d.plan.halo, d.plan.flags), (0, 0));
        assert!(d.kernels.iter().all(|k| k.comm.is_none()));
    }

    #[test]
    fn a_tensor_statement_stencil_has_the_halo_of_its_shifted_slices() {
        let src = "def f(A, B, M, N, T):
    #pragma distribute(A, B)
    for t in range(T):
        #pragma 2:M-2=>parallel 1:N-1=>parallel
        B[2:M-2, 1:N-1] = A[4:M, 1:N-1] + A[0:M-4, 1:N-1] + A[2:M-2, :N-2]
        #pragma 1:M-1=>parallel 1:N-1=>parallel
        A[1:M-1, 1:N-1] = B[1:M-1, 1:N-1]
";
        // B = f(A) reads two rows away; A = B reads nothing of a neighbour's: only A is
        // exchanged, and the copy back orders nothing, so the first sweep acknowledges
        // (putting an element of B, which it writes) and the next exchange of A waits for
        // that acknowledgement of the iteration before.
        let d = run_src(src).unwrap();
        assert_eq!((d.plan.halo, d.plan.flags), (2, 4));
        let order: Vec<String> = d
            .kernels
            .iter()
            .map(|k| match &k.comm {
                Some(Comm::Put { dest, src, .. }) => format!(
                    "put {} <- {}",
                    crate::ir::python::expr(dest),
                    crate::ir::python::expr(src)
                ),
                Some(Comm::Wait { flag, signal, .. }) => format!(
                    "wait {} >= {}",
                    crate::ir::python::expr(flag),
                    crate::ir::python::expr(signal)
                ),
                None => "region".into(),
            })
            .collect();
        assert_eq!(
            order,
            [
                "wait _appyc_flags[2] >= t + 1 - 1",
                "wait _appyc_flags[3] >= t + 1 - 1",
                "put A[_appyc_up_halo:_appyc_up_halo + 2, 0:A.shape[1]] <- A[2:2 + 2, 0:A.shape[1]]",
                "put A[0:0 + 2, 0:A.shape[1]] <- A[_appyc_own:_appyc_own + 2, 0:A.shape[1]]",
                "wait _appyc_flags[0] >= t + 1",
                "wait _appyc_flags[1] >= t + 1",
                "region",
                "put B[_appyc_scratch, 0:1] <- B[2, 0:1]",
                "put B[_appyc_scratch, 0:1] <- B[2, 0:1]",
                "region",
            ]
        );
    }

    #[test]
    fn listing_8_order_needs_no_acknowledgement_but_a_copied_back_result_does() {
        // Two sweeps that alternate arrays order each other; one sweep whose result is
        // copied back needs the second flag set.
        let d = run_src(&two_sweeps("{X}[i - 1, j]")).unwrap();
        assert_eq!(d.plan.flags, 4);
        let src = "def f(A, B, N, T):
    #pragma distribute(A, B)
    for t in range(T):
        #pragma parallel for simd
        for i in range(1, N - 1):
            B[i] = A[i - 1] + A[i + 1]
        #pragma parallel for simd
        for i in range(1, N - 1):
            A[i] = B[i]
";
        let d = run_src(src).unwrap();
        assert_eq!(d.plan.flags, 4);
        let scratch: Vec<String> = d
            .kernels
            .iter()
            .filter_map(|k| match &k.comm {
                Some(Comm::Put { dest, .. }) => Some(crate::ir::python::expr(dest)),
                _ => None,
            })
            .filter(|d| d.contains("_appyc_scratch"))
            .collect();
        assert_eq!(scratch, ["B[_appyc_scratch:_appyc_scratch + 1]"; 2]);
    }

    #[test]
    fn an_array_the_loop_only_reads_keeps_the_halo_it_was_given() {
        let src = "def f(A, B, C, M, N, T):
    #pragma distribute(A, B, C)
    for t in range(T):
        #pragma parallel for
        for i in range(1, M - 1):
            for j in range(N):
                B[i, j] = A[i - 1, j] + C[i + 1, j]
        #pragma parallel for
        for i in range(1, M - 1):
            for j in range(N):
                A[i, j] = B[i + 1, j] * C[i - 1, j]
";
        let d = run_src(src).unwrap();
        assert_eq!((d.plan.halo, d.plan.flags), (1, 4));
        let targets: Vec<&str> = d
            .kernels
            .iter()
            .filter_map(|k| match &k.comm {
                Some(Comm::Wait { targets, .. }) => Some(targets[0].as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(targets, ["A", "A", "B", "B"]);
    }

    #[test]
    fn an_array_is_exchanged_only_where_it_changed_since_its_last_reader() {
        // A is read by the first and third sweeps and written by the second: one exchange,
        // before the third; the first sweep of the next iteration reads the halo it brought,
        // and nothing exchanged after that sweep orders the neighbours' next puts of A, so it
        // acknowledges (with an element of B, which it writes) and the exchange waits for it.
        let src = "def f(A, B, C, N, T):
    #pragma distribute(A, B, C)
    for t in range(T):
        #pragma parallel for simd
        for i in range(1, N - 1):
            B[i] = A[i - 1] + A[i + 1]
        #pragma parallel for simd
        for i in range(1, N - 1):
            A[i] = 0.5 * B[i]
        #pragma parallel for simd
        for i in range(1, N - 1):
            C[i] = A[i + 1] - C[i]
";
        let d = run_src(src).unwrap();
        let order: Vec<&str> = d
            .kernels
            .iter()
            .map(|k| match &k.comm {
                Some(Comm::Put { .. }) => "put",
                Some(Comm::Wait { .. }) => "wait",
                None => "region",
            })
            .collect();
        assert_eq!(
            order,
            [
                "region", "put", "put", "region", "wait", "wait", "put", "put", "wait", "wait",
                "region"
            ]
        );
        assert_eq!(d.plan.flags, 4);
        let acks: Vec<String> = d
            .kernels
            .iter()
            .filter_map(|k| match &k.comm {
                Some(Comm::Wait {
                    flag,
                    signal,
                    targets,
                }) if targets.is_empty() => Some(format!(
                    "{} >= {}",
                    crate::ir::python::expr(flag),
                    crate::ir::python::expr(signal)
                )),
                _ => None,
            })
            .collect();
        // The acknowledgement of this iteration's first sweep: no lag.
        assert_eq!(
            acks,
            ["_appyc_flags[2] >= t + 1", "_appyc_flags[3] >= t + 1"]
        );
    }

    #[test]
    fn regions_are_clipped_to_the_owned_rows_and_shifted_onto_the_block() {
        let d = run_src(&two_sweeps("{X}[i - 1, j]")).unwrap();
        let region = d.kernels.iter().find(|k| k.comm.is_none()).unwrap();
        let r = &region.dims[0].range;
        assert_eq!(crate::ir::python::expr(&r.start), "max(2, _appyc_r0)");
        assert_eq!(crate::ir::python::expr(&r.stop), "min(M - 2, _appyc_r1)");
        let mut rows = vec![];
        for s in &region.body {
            s.walk(&mut |st| {
                for e in st.exprs() {
                    e.walk(&mut |x| {
                        if let ExprKind::Subscript { array, indices } = &x.kind {
                            if let Some(Index::At(row)) = indices.first() {
                                rows.push(format!("{array}[{}]", crate::ir::python::expr(row)));
                            }
                        }
                    })
                }
            })
        }
        assert!(rows.contains(&"B[i - _appyc_o]".to_string()), "{rows:?}");
        assert!(
            rows.contains(&"A[i - 1 - _appyc_o]".to_string()),
            "{rows:?}"
        );
    }

    #[test]
    fn a_region_writing_a_row_ahead_owns_the_rows_it_writes() {
        let src = "def f(A, B, N, T):
    #pragma distribute(A, B)
    for t in range(T):
        #pragma parallel for simd
        for i in range(N - 1):
            B[i + 1] = A[i] + A[i + 1]
        #pragma parallel for simd
        for i in range(1, N):
            A[i] = B[i] - B[i - 1]
";
        let d = run_src(src).unwrap();
        assert_eq!(d.plan.halo, 1);
        let first = d.kernels.iter().find(|k| k.comm.is_none()).unwrap();
        let r = &first.dims[0].range;
        assert_eq!(crate::ir::python::expr(&r.start), "max(0, _appyc_r0 - 1)");
        assert_eq!(
            crate::ir::python::expr(&r.stop),
            "min(N - 1, _appyc_r1 - 1)"
        );
    }

    #[test]
    fn accesses_a_row_split_cannot_serve_are_refused() {
        let loop_of = |body: &str| {
            format!(
                "def f(A, B, idx, M, N, T):\n    #pragma distribute(A, B)\n    for t in range(T):\n        #pragma parallel for\n        for i in range(M):\n            for j in range(N):\n{body}\n        #pragma parallel for\n        for i in range(M):\n            for j in range(N):\n                A[i, j] = B[i, j]\n"
            )
        };
        let cases = [
            ("                B[i, j] = A[j, i]", "follows `j`"),
            (
                "                B[i, j] = A[M - 1 - i, j]",
                "row `M - 1 - i`",
            ),
            ("                B[i, j] = A[idx[i], j]", "row `idx[i]`"),
            ("                B[i, j] = A[0, j]", "row `0`"),
            (
                "                B[i, j] = A[i, j] + A[i - 1]",
                "different numbers of indices",
            ),
        ];
        for (body, why) in cases {
            let e = error(&loop_of(body));
            assert!(
                e.contains("`A` is split by rows among the PEs") && e.contains(why),
                "{body}: {e}"
            );
        }
        let column = "def f(A, B, M, N, T):
    #pragma distribute(A, B)
    for t in range(T):
        #pragma parallel for
        for i in range(M):
            s = 0.0
            for k in range(M):
                s += A[k, 0]
            B[i, 0] = s
";
        let e = error(column);
        assert!(
            e.contains("`A` is split by rows") && e.contains("follows `k`"),
            "{e}"
        );
        let sum = "def f(A, B, M, N, T):
    #pragma distribute(A, B)
    for t in range(T):
        #pragma parallel for
        for i in range(M):
            B[i, 0] = np.sum(A[:, i])
";
        let e = error(sum);
        assert!(
            e.contains("another axis of the region") && e.contains("whole-column"),
            "{e}"
        );
    }

    #[test]
    fn writes_outside_the_named_arrays_and_reductions_are_refused() {
        let src = "def f(A, C, N, T):
    #pragma distribute(A)
    for t in range(T):
        #pragma parallel for simd
        for i in range(1, N - 1):
            C[i] = A[i - 1]
";
        assert!(error(src).contains("writes `C`, which is not distributed"));
        let src = "def f(A, B, N, T):
    s = 0.0
    #pragma distribute(A, B)
    for t in range(T):
        #pragma parallel for reduction(+:s)
        for i in range(1, N - 1):
            B[i] = A[i - 1]
            s += A[i]
";
        assert!(error(src).contains("reduces the scalar `s`"));
    }

    #[test]
    fn arrays_are_named_once_used_by_the_loop_and_the_axis_is_zero() {
        let src = "def f(A, B, N, T):
    #pragma distribute(A, B)
    for t in range(T):
        #pragma parallel for simd
        for i in range(1, N - 1):
            A[i] = 2.0 * A[i]
";
        assert!(error(src).contains("`B` is named in `distribute` but no region"));
        let src = "def f(A, N, T):
    #pragma distribute(A) axis(1)
    for t in range(T):
        #pragma parallel for simd
        for i in range(1, N - 1):
            A[i] = 2.0 * A[i]
";
        assert!(error(src).contains("splits axis 0 (rows) only for now, not axis 1"));
    }

    #[test]
    fn a_flag_reaches_the_iteration_number_from_one() {
        let at = Span::DUMMY;
        let r = |start: i64, step: i64| Range {
            start: Expr::int(start, at),
            stop: Expr::name("T", at),
            step: Expr::int(step, at),
        };
        let show = |e: Expr| crate::ir::python::expr(&e);
        assert_eq!(show(iteration("t", &r(0, 1), at)), "t + 1");
        assert_eq!(show(iteration("t", &r(1, 1), at)), "t - 1 + 1");
        assert_eq!(show(iteration("t", &r(3, 2), at)), "(t - 3) // 2 + 1");
    }

    #[test]
    fn a_three_dimensional_array_puts_a_plane_per_halo_row() {
        let src = "def f(A, B, L, M, N, T):
    #pragma distribute(A, B)
    for t in range(T):
        #pragma 2:L-2=>parallel 1:M-1=>parallel 1:N-1=>parallel
        B[2:L-2, 1:M-1, 1:N-1] = A[:L-4, 1:M-1, 1:N-1] + A[4:, 1:M-1, 1:N-1] + A[2:L-2, :M-2, 1:N-1]
        #pragma 2:L-2=>parallel 1:M-1=>parallel 1:N-1=>parallel
        A[2:L-2, 1:M-1, 1:N-1] = B[3:L-1, 1:M-1, 1:N-1] - B[1:L-3, 1:M-1, 1:N-1]
";
        let d = run_src(src).unwrap();
        assert_eq!(d.plan.halo, 2);
        let puts = d
            .kernels
            .iter()
            .filter(|k| matches!(k.comm, Some(Comm::Put { .. })))
            .count();
        // Two planes up and two down, for each of the two exchanges.
        assert_eq!(puts, 8);
        let waits: Vec<String> = d
            .kernels
            .iter()
            .filter_map(|k| match &k.comm {
                Some(Comm::Wait { signal, .. }) => Some(crate::ir::python::expr(signal)),
                _ => None,
            })
            .collect();
        assert_eq!(waits[0], "(t + 1) * 2");
    }
}
