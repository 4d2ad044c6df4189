//! comm: `nvshmem.Putmem` / `nvshmem.SignalWait` statements of host time loops become
//! communication phases of the loop's persistent kernel (`Kernel`s with `comm` set), and the
//! calls' context rules are checked (pragma-spec/library-calls.yaml).
//!
//! *After*: every loop-context call is a statement directly in the body of a plain host `for`
//! loop and has a `Kernel` whose span is that statement (so the schedule sees it as one of the
//! loop's regions); views have every dimension indexed, open and negative bounds resolved; host
//! calls (`my_pe`, `n_pes`) are outside regions. `Symmetric` names the arrays the host must
//! allocate on the symmetric heap.

use crate::diag::{Diagnostic, Result};
use crate::frontend::libcalls::{Context, LibCall};
use crate::frontend::source::Span;
use crate::ir::*;
use crate::passes::normalize::negative_indices;
use std::collections::HashMap;

/// Arrays that live on the symmetric heap: targets of puts and flag arrays.
#[derive(Debug, Default, Clone)]
pub struct Symmetric {
    pub arrays: Vec<String>,
    /// The flag arrays among them: NVSHMEM signals are 64-bit words, so the host checks their
    /// allocations' dtype (`codegen::host`).
    pub flags: Vec<String>,
}

pub fn run(func: &Function, calls: &[LibCall], kernels: &mut Vec<Kernel>) -> Result<Symmetric> {
    let mut sym = Symmetric::default();
    if calls.is_empty() {
        return Ok(sym);
    }
    check_outside_regions(calls, kernels)?;
    let ranks = ranks(kernels, calls);
    let loops = time_loops(func, calls)?;
    let mut count = 0;
    for (the_loop, loop_calls) in loops {
        let phases = loop_phases(the_loop, &loop_calls, kernels, &ranks, &mut sym, &mut count)?;
        kernels.extend(phases);
    }
    kernels.sort_by_key(|k| k.span.start);
    Ok(sym)
}

/// No library call inside a parallel region: a kernel cannot make it.
fn check_outside_regions(calls: &[LibCall], kernels: &[Kernel]) -> Result<()> {
    let inside_region = |span: Span| {
        kernels
            .iter()
            .any(|k| k.span.start <= span.start && span.end <= k.span.end)
    };
    for c in calls {
        let what = format!("`{}.{}`", c.module, c.name);
        if inside_region(c.span) {
            let help = match c.context {
                Context::Host => "call it in host code before the loop and pass the value in",
                Context::Loop => {
                    "put the call directly in the body of the host time loop, between regions"
                }
            };
            return Err(
                Diagnostic::error(c.span, format!("{what} inside a parallel region"))
                    .with_label("a kernel cannot make this call")
                    .with_help(help),
            );
        }
    }
    Ok(())
}

/// The host loops that hold the loop-context calls directly, each with its calls, in the
/// order of their first call; a call in no such loop is an error.
fn time_loops<'f, 'c>(
    func: &'f Function,
    calls: &'c [LibCall],
) -> Result<Vec<(&'f Stmt, Vec<&'c LibCall>)>> {
    let mut loops: Vec<(&Stmt, Vec<&LibCall>)> = vec![];
    for c in calls.iter().filter(|c| c.context == Context::Loop) {
        let the_loop = c.stmt.and_then(|s| enclosing_loop(&func.body, s));
        let Some(the_loop) = the_loop else {
            let what = format!("`{}.{}`", c.module, c.name);
            return Err(Diagnostic::error(
                c.span,
                format!("{what} outside a persistent cooperative kernel"),
            )
            .with_label("a wait here would not run together with its peers' puts and can deadlock")
            .with_help(
                "write it as a statement of its own in a host `for t in range(...)` loop whose body is \
                 parallel regions and nvshmem calls: appyc runs that loop as one persistent kernel",
            ));
        };
        match loops.iter_mut().find(|(l, _)| l.span == the_loop.span) {
            Some((_, v)) => v.push(c),
            None => loops.push((the_loop, vec![c])),
        }
    }
    Ok(loops)
}

/// The communication phases of one time loop: a `Kernel` per call, named `_comm<count>` in
/// order. A put's slot counts the puts before it in a run of consecutive calls; a wait lists
/// the arrays the loop's puts on its flag array write.
fn loop_phases(
    the_loop: &Stmt,
    loop_calls: &[&LibCall],
    kernels: &[Kernel],
    ranks: &HashMap<String, usize>,
    sym: &mut Symmetric,
    count: &mut usize,
) -> Result<Vec<Kernel>> {
    let StmtKind::For { body, .. } = &the_loop.kind else {
        unreachable!()
    };
    let written = written_in(kernels, the_loop.span);
    let mut new: Vec<Kernel> = vec![];
    let mut slot = 0;
    let mut puts: Vec<(String, String)> = vec![]; // (flag array, dest array)
    for s in body {
        let Some(c) = loop_calls.iter().find(|c| c.stmt == Some(s.span)) else {
            slot = 0;
            continue;
        };
        let (comm, args) = match c.name.as_str() {
            "Putmem" => {
                let put = put_phase(c, slot, &written, ranks, sym, &mut puts)?;
                slot += 1;
                put
            }
            "SignalWait" => {
                slot = 0;
                wait_phase(c, ranks, sym)?
            }
            other => unreachable!("a loop-context call `{other}` the pass does not know"),
        };
        let name = format!("_comm{count}");
        *count += 1;
        let call = Expr::new(
            ExprKind::Call {
                func: format!("{}.{}", c.module, c.name),
                args,
            },
            c.span,
        );
        let mut k = build_kernel(name, s.span);
        k.body = vec![Stmt::new(StmtKind::Expr(call), s.span)];
        k.comm = Some(comm);
        new.push(k);
    }
    // A wait stands for the writes of every put on its flag array (the paper's "mapping of
    // signals to array indices"): those arrays are read only after it.
    for k in &mut new {
        if let Some(Comm::Wait { flag, targets, .. }) = &mut k.comm {
            let f = array_of(flag);
            for (pf, dest) in &puts {
                if *pf == f {
                    push(targets, dest);
                }
            }
        }
    }
    Ok(new)
}

/// `Putmem(dest, src, pe[, flag, signal])`: the views completed and checked, the arrays
/// recorded as symmetric, `(flag array, dest array)` added to `puts`; blocking when the loop
/// writes `src`. The phase and the call's arguments.
fn put_phase(
    c: &LibCall,
    slot: usize,
    written: &[String],
    ranks: &HashMap<String, usize>,
    sym: &mut Symmetric,
    puts: &mut Vec<(String, String)>,
) -> Result<(Comm, Vec<Expr>)> {
    let arg = |i: usize| c.args[i].clone();
    let dest = view(arg(0).expect("required"), c.arg_spans[0], ranks)?;
    let src = view(arg(1).expect("required"), c.arg_spans[1], ranks)?;
    let (nd, ns) = (sliced(&dest), sliced(&src));
    if nd != ns || nd == 0 || nd > 2 {
        return Err(Diagnostic::error(
            c.span,
            format!("`Putmem` views must slice the same number of dimensions, one or two (dest slices {nd}, src {ns})"),
        )
        .with_help("put a row, a column or a sub-block; a bigger block is several puts"));
    }
    if arg(3).is_some() != arg(4).is_some() {
        let at = if arg(3).is_some() {
            c.arg_spans[3]
        } else {
            c.arg_spans[4]
        };
        return Err(Diagnostic::error(
            at,
            "`Putmem` takes `flag` and `signal` together or neither",
        ));
    }
    let flag = match arg(3) {
        Some(f) => Some(flag_elem(f, c.arg_spans[3], ranks)?),
        None => None,
    };
    let (dname, sname) = (array_of(&dest), array_of(&src));
    push(&mut sym.arrays, &dname);
    if let Some(f) = &flag {
        push(&mut sym.arrays, &array_of(f));
        push(&mut sym.flags, &array_of(f));
        puts.push((array_of(f), dname.clone()));
    }
    let blocking = written.contains(&sname);
    let mut args = vec![dest.clone(), src.clone(), arg(2).expect("required")];
    args.extend(flag.clone());
    let comm = Comm::Put {
        dest,
        src,
        pe: arg(2).expect("required"),
        flag,
        blocking,
        slot,
    };
    Ok((comm, args))
}

/// `SignalWait(flag, signal)`: the flag's array recorded as symmetric; the phase (its targets
/// filled in by `loop_phases`) and the call's arguments.
fn wait_phase(
    c: &LibCall,
    ranks: &HashMap<String, usize>,
    sym: &mut Symmetric,
) -> Result<(Comm, Vec<Expr>)> {
    let flag = flag_elem(c.args[0].clone().expect("required"), c.arg_spans[0], ranks)?;
    push(&mut sym.arrays, &array_of(&flag));
    push(&mut sym.flags, &array_of(&flag));
    let signal = c.args[1].clone().expect("required");
    let args = vec![flag.clone(), signal.clone()];
    Ok((
        Comm::Wait {
            flag,
            signal,
            targets: vec![],
        },
        args,
    ))
}

fn build_kernel(name: String, span: Span) -> Kernel {
    Kernel {
        name,
        dims: vec![],
        body: vec![],
        num_warps: None,
        span,
        pragma_span: span,
        bound: vec![],
        temps: vec![],
        checks: vec![],
        shared: vec![],
        tiles: None,
        split_rows: None,
        absorbed: vec![],
        tf32: false,
        comm: None,
    }
}

fn push(v: &mut Vec<String>, s: &str) {
    if !v.iter().any(|x| x == s) {
        v.push(s.to_string());
    }
}

/// The plain host `for` loop whose body holds the statement at `stmt` directly.
fn enclosing_loop(body: &[Stmt], stmt: Span) -> Option<&Stmt> {
    for s in body {
        match &s.kind {
            StmtKind::For {
                kind: LoopKind::Plain,
                body: inner,
                ..
            } => {
                if inner.iter().any(|x| x.span == stmt) {
                    return Some(s);
                }
                if let Some(l) = enclosing_loop(inner, stmt) {
                    return Some(l);
                }
            }
            StmtKind::For { body: inner, .. }
            | StmtKind::HostBlock { body: inner, .. }
            | StmtKind::While { body: inner, .. } => {
                if let Some(l) = enclosing_loop(inner, stmt) {
                    return Some(l);
                }
            }
            StmtKind::If { body, orelse, .. } => {
                if let Some(l) = enclosing_loop(body, stmt).or_else(|| enclosing_loop(orelse, stmt))
                {
                    return Some(l);
                }
            }
            _ => {}
        }
    }
    None
}

/// Arrays written by the regions inside `span` (temporaries included).
fn written_in(kernels: &[Kernel], span: Span) -> Vec<String> {
    let mut out = vec![];
    for k in kernels
        .iter()
        .filter(|k| span.start <= k.span.start && k.span.end <= span.end)
    {
        for s in &k.body {
            s.walk(&mut |st| {
                if let StmtKind::Assign { target, .. } = &st.kind {
                    if let ExprKind::Subscript { array, .. } = &target.kind {
                        push(&mut out, array);
                    }
                }
            });
        }
        for (t, _) in &k.temps {
            push(&mut out, t);
        }
    }
    out
}

/// The most indices any use of an array has: its rank as far as the function shows.
fn ranks(kernels: &[Kernel], calls: &[LibCall]) -> HashMap<String, usize> {
    let mut ranks: HashMap<String, usize> = HashMap::new();
    let mut see = |e: &Expr| {
        e.walk(&mut |x| {
            if let ExprKind::Subscript { array, indices } = &x.kind {
                let r = ranks.entry(array.clone()).or_default();
                *r = (*r).max(
                    indices
                        .iter()
                        .filter(|i| !matches!(i, Index::NewAxis))
                        .count(),
                );
            }
        })
    };
    for k in kernels {
        for b in &k.bound {
            see(&b.1);
            see(&b.2);
        }
        for s in &k.body {
            s.walk(&mut |st| st.exprs().into_iter().for_each(&mut see));
        }
    }
    for c in calls {
        c.args.iter().flatten().for_each(&mut see);
    }
    ranks
}

fn array_of(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Subscript { array, .. } => array.clone(),
        _ => unreachable!("views are subscripts"),
    }
}

fn sliced(e: &Expr) -> usize {
    match &e.kind {
        ExprKind::Subscript { indices, .. } => indices
            .iter()
            .filter(|i| matches!(i, Index::Slice { .. }))
            .count(),
        _ => 0,
    }
}

/// `A[...]` (or `A`) with every dimension indexed, open and negative bounds resolved.
fn view(e: Expr, span: Span, ranks: &HashMap<String, usize>) -> Result<Expr> {
    let (array, mut indices) = match e.kind {
        ExprKind::Name(n) => (n, vec![]),
        ExprKind::Subscript { array, indices } => (array, indices),
        _ => {
            return Err(Diagnostic::error(
                span,
                "a `Putmem` view must be an array or a subscript of one (`A[i, lo:hi]`)",
            ))
        }
    };
    if indices.iter().any(|i| matches!(i, Index::NewAxis)) {
        return Err(Diagnostic::error(span, "`None` in a `Putmem` view"));
    }
    let rank = ranks.get(&array).copied().unwrap_or(0).max(indices.len());
    while indices.len() < rank {
        indices.push(Index::Slice {
            lo: None,
            hi: None,
            span,
        });
    }
    let indices = indices
        .into_iter()
        .enumerate()
        .map(|(d, ix)| match ix {
            Index::Slice { lo, hi, span } => Index::Slice {
                lo: Some(lo.unwrap_or_else(|| Expr::int(0, span))),
                hi: Some(hi.unwrap_or_else(|| {
                    Expr::new(
                        ExprKind::Shape {
                            array: array.clone(),
                            dim: d,
                        },
                        span,
                    )
                })),
                span,
            },
            other => other,
        })
        .collect();
    Ok(negative_indices(Expr::new(
        ExprKind::Subscript { array, indices },
        e.span,
    )))
}

/// `flags[k]`: one element of an array.
fn flag_elem(e: Expr, span: Span, ranks: &HashMap<String, usize>) -> Result<Expr> {
    let v = view(e, span, ranks)?;
    if sliced(&v) != 0 {
        return Err(Diagnostic::error(
            span,
            "a flag is one element of a symmetric integer array (`flags[k]`)",
        ));
    }
    Ok(v)
}
