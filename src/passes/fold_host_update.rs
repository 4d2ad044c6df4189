//! Contract: a function-level host statement `X op= s` (`op` one of `+ - * /`, `s` a scalar)
//! directly before a region that stores every element of `X` exactly once, and reads `X` only
//! at the element it stores and only in that store, runs inside the region: the store reads
//! `stored_in(X[idx] op s, X[idx])` where it read `X[idx]`, and the kernel records the
//! statement as absorbed so the host no longer runs it. Each element is scaled once, before
//! its one use, and rounded to `X`'s dtype as NumPy's in-place operator rounds it, so the
//! results are the sequential program's.
//!
//! Why: symm's `C *= beta` before its one region was a launch of its own (8-12 us of host
//! time and 4.4 us of device time at the `paper` size, a tenth of the call) and a second pass
//! over C; folded, the region's store reads C once and writes it once.
//!
//! Runs on lowered kernels (after `fuse_into_reduction`, before strip-mining), on statements of
//! the function's own body: inside a host loop the schedule decides what runs where.
//! What qualifies:
//! - the statement stands alone on its lines (the host's text loses them) and is written in place (`X op= s`: `X = X * s` binds a new array and leaves the
//!   caller's untouched, so the source's text decides, not the normalised IR);
//! - `s` reads only numbers and names that hold scalars (`device_statements::scalar_names`);
//! - the region has no shared scalars, communication, temporaries, launch slices or fused
//!   regions; it stores `X` in one statement `X[v0, .., vn] = f`, one index a variable per
//!   dimension of `X` (its rank where every subscript of it agrees), each bound by a grid
//!   dimension or a loop around the store over `range(0, X.shape[d], 1)`; no other loop and no
//!   `if` encloses the store, so it runs exactly once per element;
//! - `X` appears nowhere else in the region, and in `f` only as `X[v0, .., vn]`.
//!
//! A tile nest (`passes::tile_dot`) stores the same element from its epilogue: the epilogue's
//! reads of its target are rewritten the same way.
//!
//! `s` may read a parameter, and a parameter never subscripted may still be an array the
//! caller passes (NumPy broadcasts `C *= D` for a `D` of `C`'s shape, or a row). Such an
//! operand reaches the kernel as a parameter of its own (`_C_operand`) that the host binds in
//! the statement's place with `_appyc_fold_operand(C, "*=", s)`: a number or a one-element
//! tensor is returned for the kernel to apply (the fold as above), anything else is applied
//! on the host, as written, and the kernel gets the operator's identity (`* 1.0`, `/ 1.0`,
//! `- 0.0`, `+ -0.0`: every element, a zero's sign too, stays as it is). An operand of numbers,
//! loop variables, names assigned only numbers, or names the region already uses as integers
//! is a scalar in every valid program and stays in the kernel's store as written.
//!
//! A statement shaped `X = X op s` right before a region that stores `X`, which does not
//! fold, gets a note (`appyc -v`) at the statement with the reason.

use crate::diag::Diagnostic;
use crate::frontend::source::{SourceFile, Span};
use crate::ir::*;
use crate::passes::device_statements::{ranks, scalar_names};
use std::collections::{HashMap, HashSet};

/// Folds every qualifying statement into the region after it; a statement that updates the
/// array the region stores and does not qualify gets a note saying why.
pub fn run(
    file: &SourceFile,
    func: &Function,
    kernels: &mut [Kernel],
    notes: &mut Vec<Diagnostic>,
) {
    let ranks = ranks(&func.body);
    let arrays: HashSet<String> = ranks.keys().cloned().collect();
    let mut names = Names {
        scalars: scalar_names(func, &arrays),
        // With every parameter taken for an array, what is left holds numbers whatever the
        // caller passes.
        numbers: scalar_names(func, &arrays.iter().chain(&func.params).cloned().collect()),
        used: func.names(),
    };
    names
        .used
        .extend(file.name_tokens(func.span).into_iter().map(|(n, _)| n));
    let region = |s: &Stmt| s.pragma.as_ref().map_or(s.span, |p| p.span.to(s.span));
    for pair in func.body.windows(2) {
        let Some(k) = kernels.iter_mut().find(|k| k.span == region(&pair[1])) else {
            continue;
        };
        let Some(update) = update_of(&pair[0]) else {
            continue;
        };
        if !stores(k, update.array) {
            continue;
        }
        match fold(file, k, &update, &ranks, &mut names) {
            Ok(folded) => *k = folded,
            Err(why) => {
                let text = file.text[update.span.range()].trim();
                notes.push(
                    Diagnostic::note(
                        update.span,
                        format!(
                            "`{text}` stays on the host, not in the store of the region after it"
                        ),
                    )
                    .with_label(why.reason(update.array)),
                );
            }
        }
    }
}

/// What the function's names may hold, and which it uses.
struct Names {
    /// Scalars in every call the compiler assumes (`device_statements::scalar_names`).
    scalars: HashSet<String>,
    /// Numbers whatever the caller passes: loop variables, names assigned only numbers.
    numbers: HashSet<String>,
    /// Every name of the function, so a new one is fresh.
    used: HashSet<String>,
}

/// `X = X op s` (normalize's form of `X op= s`): the array, the operator and the scalar.
struct Update<'a> {
    array: &'a str,
    op: BinOp,
    scalar: &'a Expr,
    /// The statement, its target and its value.
    span: Span,
    target: Span,
}

/// Why a statement `X = X op s` before a region that stores `X` stays on the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Refusal {
    Operator,
    NotInPlace,
    SharesLine,
    NotScalar,
    /// The region has what the fold does not handle (shared scalars, ...).
    Region(&'static str),
    OtherStatement,
    OtherElement,
    Guarded,
    Partial,
    Repeated,
}

impl Refusal {
    fn reason(self, x: &str) -> String {
        match self {
            Refusal::Operator => "only `+=`, `-=`, `*=` and `/=` fold into a store".into(),
            Refusal::NotInPlace => {
                format!("it binds a new `{x}` (the caller's keeps its values); only an in-place update folds")
            }
            Refusal::SharesLine => "another statement shares its line".into(),
            Refusal::NotScalar => "its operand reads more than numbers and scalar names".into(),
            Refusal::Region(what) => format!("the region {what}"),
            Refusal::OtherStatement => {
                format!("the region names `{x}` outside the one statement that stores it")
            }
            Refusal::OtherElement => {
                format!("the store reads `{x}` elsewhere than the element it stores")
            }
            Refusal::Guarded => format!("the store of `{x}` is under an `if` or atomic"),
            Refusal::Partial => format!("the region does not store every element of `{x}`"),
            Refusal::Repeated => {
                format!("the region stores some element of `{x}` more than once")
            }
        }
    }
}

/// `s` is `X = X op v` with `X` a name (an array `X op= v` normalised, or written so).
fn update_of(s: &Stmt) -> Option<Update<'_>> {
    let StmtKind::Assign {
        target,
        value,
        atomic: false,
    } = &s.kind
    else {
        return None;
    };
    let (ExprKind::Name(array), ExprKind::Binary { op, left, right }) = (&target.kind, &value.kind)
    else {
        return None;
    };
    matches!(&left.kind, ExprKind::Name(n) if n == array).then_some(Update {
        array,
        op: *op,
        scalar: right,
        span: s.span,
        target: target.span,
    })
}

/// Some statement of `k` stores an element of `array`.
fn stores(k: &Kernel, array: &str) -> bool {
    let mut found = false;
    for s in &k.body {
        s.walk(&mut |st| {
            if let StmtKind::Assign { target, .. } = &st.kind {
                found |= matches!(&target.kind, ExprKind::Subscript { array: a, .. } if a == array);
            }
        });
    }
    found
}

/// The statement's own conditions: the in-place operator, alone on its lines, a scalar
/// operand. Returns the operator's in-place spelling.
fn qualifies(
    file: &SourceFile,
    u: &Update,
    scalars: &HashSet<String>,
) -> Result<&'static str, Refusal> {
    let symbol = match u.op {
        BinOp::Add => "+=",
        BinOp::Sub => "-=",
        BinOp::Mul => "*=",
        BinOp::Div => "/=",
        _ => return Err(Refusal::Operator),
    };
    // normalize made `X op= s` into `X = X op s`; only the text still tells the two apart.
    let text = &file.text[u.target.end as usize..u.span.end as usize];
    if !text.trim_start().starts_with(symbol) {
        return Err(Refusal::NotInPlace);
    }
    // The host text loses the statement's lines: nothing else may stand on them.
    if !file.alone_on_lines(u.span) {
        return Err(Refusal::SharesLine);
    }
    let only_scalars = !u.scalar.any(&mut |x| match &x.kind {
        ExprKind::Name(n) => n == u.array || !scalars.contains(n),
        ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::Binary { .. } => false,
        ExprKind::Unary { .. } => false,
        _ => true,
    });
    if !only_scalars {
        return Err(Refusal::NotScalar);
    }
    Ok(symbol)
}

/// What of `k` the fold does not handle, if anything.
fn not_plain(k: &Kernel) -> Option<&'static str> {
    [
        (!k.shared.is_empty(), "has shared scalars"),
        (k.comm.is_some(), "communicates"),
        (!k.temps.is_empty(), "has temporaries"),
        (!k.bound.is_empty(), "is a sliced statement"),
        (
            !k.absorbed.is_empty(),
            "already runs host code folded or fused into it",
        ),
    ]
    .into_iter()
    .find_map(|(has, what)| has.then_some(what))
}

fn fold(
    file: &SourceFile,
    k: &Kernel,
    update: &Update,
    ranks: &HashMap<String, usize>,
    names: &mut Names,
) -> Result<Kernel, Refusal> {
    let symbol = qualifies(file, update, &names.scalars)?;
    if let Some(what) = not_plain(k) {
        return Err(Refusal::Region(what));
    }
    let &rank = ranks.get(update.array).ok_or(Refusal::Partial)?;
    let mut ranges: Vec<(&str, &Range)> =
        k.dims.iter().map(|d| (d.var.as_str(), &d.range)).collect();
    let element = the_store(&k.body, update.array, &mut ranges)?;
    covered_once(&element, update.array, rank, &ranges)?;
    // A name that may be an array makes the operand a parameter the host binds.
    let integers = k.integer_names();
    let may_be_array = update.scalar.any(&mut |x| {
        matches!(&x.kind, ExprKind::Name(n) if !names.numbers.contains(n) && !integers.contains(n))
    });
    let operand = may_be_array.then(|| {
        let base = format!("_{}_operand", update.array);
        let name = (0..)
            .map(|n| {
                if n == 0 {
                    base.clone()
                } else {
                    format!("{base}{n}")
                }
            })
            .find(|n| !names.used.contains(n))
            .expect("a fresh name");
        names.used.insert(name.clone());
        FoldOperand {
            name,
            array: update.array.to_string(),
            op: symbol,
            value: update.scalar.clone(),
        }
    });
    let by = operand.as_ref().map_or_else(
        || update.scalar.clone(),
        |o| Expr::name(&o.name, update.scalar.span),
    );
    let scaled = |x: &Expr| {
        Expr::new(
            ExprKind::Call {
                func: STORED_IN.into(),
                args: vec![Expr::binary(update.op, x.clone(), by.clone()), x.clone()],
            },
            x.span,
        )
    };
    let rewrite = |e: Expr| {
        e.rewrite(&mut |x| {
            if same_place(&x, &element) {
                scaled(&x)
            } else {
                x
            }
        })
    };
    let mut folded = k.clone();
    for s in folded.body.iter_mut() {
        rewrite_store(s, update.array, &rewrite);
    }
    if let Some(t) = folded.tiles.as_mut() {
        let target = t.target.clone();
        t.epilogue = t.epilogue.clone().rewrite(&mut |x| {
            if same_place(&x, &target) {
                scaled(&x)
            } else {
                x
            }
        });
    }
    folded
        .absorbed
        .push(Absorbed::statement(update.span, operand));
    Ok(folded)
}

/// The store `element` of `array` (rank `rank`) runs once for every element: one index
/// variable per dimension, each over the whole extent, and every loop around it one of them.
fn covered_once(
    element: &Expr,
    array: &str,
    rank: usize,
    ranges: &[(&str, &Range)],
) -> Result<(), Refusal> {
    let ExprKind::Subscript { indices, .. } = &element.kind else {
        unreachable!("the store's target is a subscript");
    };
    let mut seen = HashSet::new();
    let covers = indices.len() == rank
        && indices.iter().enumerate().all(|(dim, ix)| {
            let Index::At(Expr {
                kind: ExprKind::Name(v),
                ..
            }) = ix
            else {
                return false;
            };
            let whole = |r: &Range| {
                matches!(r.start.kind, ExprKind::Int(0))
                    && matches!(r.step.kind, ExprKind::Int(1))
                    && matches!(&r.stop.kind, ExprKind::Shape { array: a, dim: d } if a == array && *d == dim)
            };
            seen.insert(v.as_str()) && ranges.iter().any(|(var, r)| var == v && whole(r))
        });
    if !covers {
        return Err(Refusal::Partial);
    }
    // Every grid dimension and loop around the store binds one of its indices, each its own
    // (an inner loop that rebinds a name would repeat the store): the store runs once per
    // element.
    let distinct = ranges
        .iter()
        .map(|(var, _)| *var)
        .collect::<HashSet<_>>()
        .len()
        == ranges.len();
    if !distinct || !ranges.iter().all(|(var, _)| seen.contains(var)) {
        return Err(Refusal::Repeated);
    }
    Ok(())
}

/// The one statement of `body` that stores `array`, if `array` appears nowhere else but in its
/// value at the same element; `ranges` gets the loops around it, outermost first.
fn the_store<'a>(
    body: &'a [Stmt],
    array: &str,
    ranges: &mut Vec<(&'a str, &'a Range)>,
) -> Result<Expr, Refusal> {
    let mut found = None;
    for s in body {
        if !touches(s, array) {
            continue;
        }
        if found.is_some() {
            return Err(Refusal::OtherStatement);
        }
        found = Some(match &s.kind {
            StmtKind::For {
                var, range, body, ..
            } => {
                ranges.push((var, range));
                the_store(body, array, ranges)?
            }
            StmtKind::Assign {
                target,
                value,
                atomic: false,
            } => {
                let is_store =
                    matches!(&target.kind, ExprKind::Subscript { array: a, .. } if a == array);
                if !is_store {
                    return Err(Refusal::OtherStatement);
                }
                let stray = value.any(&mut |x| {
                    matches!(&x.kind, ExprKind::Subscript { array: a, .. } if a == array)
                        && !same_place(x, target)
                });
                let bare = value.any(&mut |x| matches!(&x.kind, ExprKind::Name(n) if n == array));
                if stray || bare || target.any(&mut |x| index_reads(x, array)) {
                    return Err(Refusal::OtherElement);
                }
                target.clone()
            }
            _ => return Err(Refusal::Guarded),
        });
    }
    // `run` asks only about regions that store `array`.
    found.ok_or(Refusal::Partial)
}

/// `x` is a subscript whose indices mention `array` (`X[X[i]]`).
fn index_reads(x: &Expr, array: &str) -> bool {
    let ExprKind::Subscript { indices, .. } = &x.kind else {
        return false;
    };
    indices.iter().any(|ix| match ix {
        Index::At(e) => e.any(&mut |y| y.mentions(array)),
        _ => true,
    })
}

/// `s` names `array` anywhere (subscript, shape or bare name).
fn touches(s: &Stmt, array: &str) -> bool {
    let mut found = false;
    s.walk(&mut |st| {
        if let StmtKind::For { range, .. } = &st.kind {
            for e in [&range.start, &range.stop, &range.step] {
                found |= mentions_array(e, array) && !shape_only(e, array);
            }
        }
        for e in st.exprs() {
            found |= mentions_array(e, array) && !shape_only(e, array);
        }
    });
    found
}

fn mentions_array(e: &Expr, array: &str) -> bool {
    e.any(&mut |x| match &x.kind {
        ExprKind::Name(n) => n == array,
        ExprKind::Subscript { array: a, .. } | ExprKind::Shape { array: a, .. } => a == array,
        _ => false,
    })
}

/// Every mention of `array` in `e` is its shape (a loop bound): no data of it is read.
fn shape_only(e: &Expr, array: &str) -> bool {
    !e.any(&mut |x| match &x.kind {
        ExprKind::Name(n) => n == array,
        ExprKind::Subscript { array: a, .. } => a == array,
        _ => false,
    })
}

/// Applies `rewrite` to the value of the store of `array` under `s`.
fn rewrite_store(s: &mut Stmt, array: &str, rewrite: &dyn Fn(Expr) -> Expr) {
    match &mut s.kind {
        StmtKind::For { body, .. } => body
            .iter_mut()
            .for_each(|s| rewrite_store(s, array, rewrite)),
        StmtKind::Assign { target, value, .. } => {
            if matches!(&target.kind, ExprKind::Subscript { array: a, .. } if a == array) {
                *value = rewrite(value.clone());
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::attach_pragmas::tests::attached_in;

    /// The kernels of `src` after `run`, each with its body printed, and the notes.
    fn folded_with_notes(src: &str) -> (Vec<(Kernel, String)>, Vec<Diagnostic>) {
        let (f, file) = attached_in(src).unwrap();
        let mut kernels = crate::passes::outline::run(&f).unwrap();
        for k in kernels.iter_mut() {
            crate::passes::tile_dot::run(k, &mut vec![]);
            crate::passes::promote_updates::run(k);
            crate::passes::lower_tensor::split(k).unwrap();
            crate::passes::insert_sync::run(k);
            let opts = crate::passes::lower_tensor::Options { auto_simd: true };
            crate::passes::lower_tensor::lower(k, &opts).unwrap();
        }
        let mut notes = vec![];
        run(&file, &f, &mut kernels, &mut notes);
        let kernels = kernels
            .into_iter()
            .map(|k| {
                let mut w = crate::codegen::writer::Writer::new(0);
                crate::codegen::python::stmts(&mut w, &k.body);
                (k, w.finish())
            })
            .collect();
        (kernels, notes)
    }

    fn folded(src: &str) -> Vec<(Kernel, String)> {
        folded_with_notes(src).0
    }

    /// The operand the host binds for the kernel's first folded statement.
    fn operand(k: &Kernel) -> Option<&FoldOperand> {
        match &k.absorbed.first()?.what {
            AbsorbedKind::Statement { operand } => operand.as_ref(),
            AbsorbedKind::Region => None,
        }
    }

    const HEAD: &str = "def f(alpha, beta, C, A, B):\n";
    const SCALE: &str = "    C *= beta\n";
    const REGION: &str = "    #pragma parallel for\n    for i in range(C.shape[0]):\n        #pragma simd\n        for j in range(C.shape[1]):\n            C[i, j] = C[i, j] + alpha * B[i, j]\n";

    #[test]
    fn an_in_place_scaling_runs_in_the_store_of_the_region_after_it() {
        let k = folded(&format!("{HEAD}{SCALE}{REGION}"));
        let [(kernel, body)] = k.as_slice() else {
            panic!("one kernel")
        };
        assert_eq!(kernel.absorbed.len(), 1, "{body}");
        // `beta` is a parameter: the kernel reads the operand the host binds.
        let o = operand(kernel).expect("an operand the host binds");
        assert_eq!(
            (o.name.as_str(), o.array.as_str(), o.op),
            ("_C_operand", "C", "*=")
        );
        assert_eq!(crate::ir::python::expr(&o.value), "beta");
        assert!(
            body.contains("C[i, j] = C.dtype.type(C[i, j] * _C_operand) + alpha * B[i, j]"),
            "{body}"
        );
        // Every operator, and a scalar expression of numbers and scalar names.
        for (op, printed) in [("+=", "+"), ("-=", "-"), ("/=", "/")] {
            let src = format!("{HEAD}    C {op} 2.0 * beta\n{REGION}");
            let (kernel, body) = &folded(&src)[0];
            assert_eq!(kernel.absorbed.len(), 1, "{src}");
            assert_eq!(operand(kernel).map(|o| o.op), Some(op), "{src}");
            let value = crate::ir::python::expr(&operand(kernel).unwrap().value);
            assert_eq!(value, "2.0 * beta", "{src}");
            let scaled = format!("C.dtype.type(C[i, j] {printed} _C_operand)");
            assert!(body.contains(&scaled), "{body}");
        }
    }

    #[test]
    fn an_operand_that_holds_a_number_in_every_call_stays_in_the_store() {
        // Numbers, names assigned only numbers, a name the region uses as an integer: no
        // caller can make them arrays, so the kernel reads them as written.
        let cases = [
            ("", "    C *= 0.5\n", "C[i, j] * 0.5"),
            ("    s = 2.0\n", "    C *= s * 3\n", "C[i, j] * (s * 3)"),
        ];
        for (before, update, scaled) in cases {
            let src = format!("{HEAD}{before}{update}{REGION}");
            let (kernel, body) = &folded(&src)[0];
            assert_eq!(kernel.absorbed.len(), 1, "{src}");
            assert!(operand(kernel).is_none(), "{src}");
            assert!(body.contains(scaled), "{body}");
        }
        let src = format!(
            "def f(n, C, B):\n    C += n\n{}",
            REGION.replace(
                "alpha * B[i, j]",
                "B[i, j]\n            for t in range(n):\n                B[i, j] = B[i, j] + 1.0"
            )
        );
        let (kernel, body) = &folded(&src)[0];
        assert_eq!(kernel.absorbed.len(), 1, "{src}");
        assert!(operand(kernel).is_none(), "{src}");
        assert!(body.contains("C[i, j] + n"), "{body}");
        // A name the function already uses is not taken.
        let src = format!("{HEAD}    _C_operand = 1\n{SCALE}{REGION}");
        let (kernel, _) = &folded(&src)[0];
        assert_eq!(operand(kernel).unwrap().name, "_C_operand1");
        // A local assigned from a parameter may hold an array.
        let src = format!("{HEAD}    s = beta * 2\n    C *= s\n{REGION}");
        let (kernel, _) = &folded(&src)[0];
        assert_eq!(operand(kernel).map(|o| o.name.as_str()), Some("_C_operand"));
    }

    #[test]
    fn a_matmul_tile_nest_scales_its_target_in_the_epilogue() {
        let src = format!(
            "{HEAD}{SCALE}    #pragma parallel for\n    for i in range(C.shape[0]):\n        #pragma simd\n        for j in range(C.shape[1]):\n            s = 0.0\n            for k in range(A.shape[1]):\n                s += A[i, k] * B[k, j]\n            C[i, j] = C[i, j] + alpha * s\n"
        );
        let (kernel, _) = &folded(&src)[0];
        let tiles = kernel.tiles.as_ref().expect("a tile nest");
        let epilogue = crate::ir::python::expr(&tiles.epilogue);
        assert!(
            epilogue.contains("C.dtype.type(C[i, j] * _C_operand)"),
            "{epilogue}"
        );
    }

    #[test]
    fn anything_else_stays_a_host_statement_and_a_note_says_why() {
        // (update, region, a word of the note's reason)
        let cases = [
            // Rebinding, not in place: the caller's array must stay as it was.
            (
                SCALE.replace("C *= beta", "C = C * beta"),
                REGION.to_string(),
                "binds a new `C`",
            ),
            (
                SCALE.replace("C *= beta", "C **= beta"),
                REGION.to_string(),
                "only `+=`, `-=`, `*=` and `/=`",
            ),
            // An array, not a scalar.
            (SCALE.replace("beta", "B"), REGION.to_string(), "operand"),
            (
                SCALE.replace("beta", "B[0, 0]"),
                REGION.to_string(),
                "operand",
            ),
            // Not every row or column is stored.
            (
                SCALE.to_string(),
                REGION.replace("range(C.shape[0])", "range(1, C.shape[0])"),
                "every element",
            ),
            (
                SCALE.to_string(),
                REGION.replace("range(C.shape[1])", "range(C.shape[1] - 1)"),
                "every element",
            ),
            (
                SCALE.to_string(),
                REGION.replace("range(C.shape[1])", "range(A.shape[1])"),
                "every element",
            ),
            // Another element, another statement, a bare read of the array.
            (
                SCALE.to_string(),
                REGION.replace("= C[i, j] +", "= C[j, i] +"),
                "elsewhere than the element",
            ),
            (
                SCALE.to_string(),
                REGION.replace(
                    "C[i, j] = C[i, j] +",
                    "A[i, j] = C[i, j]\n            C[i, j] = A[i, j] +",
                ),
                "outside the one statement",
            ),
            // The store runs more than once per element (an update in a loop is kept in a
            // local by promote_updates: a load and a store, two statements).
            (
                SCALE.to_string(),
                REGION.replace(
                    "            C[i, j]",
                    "            for t in range(3):\n                C[i, j]",
                ),
                "outside the one statement",
            ),
            (
                SCALE.to_string(),
                REGION.replace(
                    "            C[i, j]",
                    "            for j in range(C.shape[1]):\n                C[i, j]",
                ),
                "more than once",
            ),
            (
                SCALE.to_string(),
                REGION.replace(
                    "            C[i, j]",
                    "            if alpha > 0:\n                C[i, j]",
                ),
                "under an `if`",
            ),
            // Another statement on its line, which the host must still run.
            (
                SCALE.replace("C *= beta", "alpha = 2.0; C *= beta"),
                REGION.to_string(),
                "shares its line",
            ),
            // A sliced statement (its slices are the grid).
            (
                SCALE.to_string(),
                "    #pragma :=>parallel :=>parallel\n    C[:, :] = C[:, :] + alpha * B[:, :]\n"
                    .to_string(),
                "the region is a sliced statement",
            ),
        ];
        for (update, region, why) in cases {
            let src = format!("{HEAD}{update}{region}");
            let (k, notes) = folded_with_notes(&src);
            assert!(k.iter().all(|(k, _)| k.absorbed.is_empty()), "{src}");
            let [note] = notes.as_slice() else {
                panic!("{src}\n{notes:?}")
            };
            assert!(note.message.contains("stays on the host"), "{note:?}");
            assert!(
                note.label.as_deref().is_some_and(|l| l.contains(why)),
                "{src}\n{note:?}"
            );
            let file = SourceFile::new("t.py", &src);
            assert_eq!(file.line_of(note.span.start as usize), 2, "{note:?}");
        }
    }

    #[test]
    fn a_statement_that_is_no_update_of_the_stored_array_gets_no_note() {
        let cases = [
            // A statement between them.
            format!("{HEAD}{SCALE}    alpha = alpha * 2\n{REGION}"),
            // An update of an array the region does not store.
            format!("{HEAD}    A *= beta\n{REGION}"),
        ];
        for src in cases {
            let (k, notes) = folded_with_notes(&src);
            assert!(k.iter().all(|(k, _)| k.absorbed.is_empty()), "{src}");
            assert!(notes.is_empty(), "{src}\n{notes:?}");
        }
    }
}
