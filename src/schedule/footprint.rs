//! Which elements a region may touch, per array: a box of index intervals for every access, so
//! that two phases writing different parts of one array (fdtd_2d's `ey[0, :]` and
//! `ey[1:, :]`) need no grid barrier between them.
//!
//! Each index is an affine form of the region's loop variables and of symbols that hold still
//! through the whole host loop; a loop variable is replaced by its range's ends (recursively, for
//! bounds that move with an outer variable), taking each term's lower or upper end by the sign
//! of its coefficient. Anything else in an index (a local, a load, the host loop's variable,
//! which differs between the iterations a barrier must also separate) makes that dimension
//! unknown. Two accesses are apart only when some dimension's intervals are provably disjoint:
//! their ends differ by a constant.

use crate::ir::*;
use crate::passes::affine::Affine;
use std::collections::{HashMap, HashSet};

/// An inclusive interval of one index, `None` where unknown.
type Interval = Option<(Affine, Affine)>;
/// One access: an interval per index; empty for "any element".
type Access = Vec<Interval>;

#[derive(Debug, Default)]
pub struct Footprint {
    reads: HashMap<String, Vec<Access>>,
    writes: HashMap<String, Vec<Access>>,
    /// Writes that copy another array's element at the same index (`B[i, 0] = A[i, 0]`), with
    /// that array: two of them from one array store the same value wherever they meet, so
    /// their order does not matter while neither phase writes the array they copy
    /// (smooth_swap's four edge copies overlap at the corners).
    copies: HashMap<String, Vec<(Access, String)>>,
}

/// How deep loop bounds may refer to other loops' variables before an index counts as unknown.
const NESTING: u32 = 8;

impl Footprint {
    /// The accesses of `k`; `varying` holds the names that change between iterations of the
    /// host loop (its variable).
    pub fn of(k: &Kernel, varying: &HashSet<String>) -> Footprint {
        let mut fp = Footprint::default();
        // Communication: a put reads its source here and writes only on the target PE (ordered
        // there by the wait); a wait reads its flag and stands for the writes of the puts on it.
        match &k.comm {
            Some(Comm::Put { src, .. }) => {
                if let ExprKind::Subscript { array, .. } = &src.kind {
                    fp.reads.entry(array.clone()).or_default().push(vec![]);
                }
                return fp;
            }
            Some(Comm::Wait { flag, targets, .. }) => {
                if let ExprKind::Subscript { array, .. } = &flag.kind {
                    fp.reads.entry(array.clone()).or_default().push(vec![]);
                }
                for t in targets {
                    fp.writes.entry(t.clone()).or_default().push(vec![]);
                }
                return fp;
            }
            None => {}
        }
        let cx = Bounds::of(k, varying);
        let read = |e: &Expr, fp: &mut Footprint| {
            e.walk(&mut |x| {
                if let ExprKind::Subscript { array, indices } = &x.kind {
                    fp.reads
                        .entry(array.clone())
                        .or_default()
                        .push(cx.access(indices));
                }
            })
        };
        for d in &k.dims {
            for e in [&d.range.start, &d.range.stop, &d.range.step] {
                read(e, &mut fp);
            }
        }
        for s in &k.body {
            s.walk(&mut |st| {
                if let StmtKind::Assign {
                    target,
                    value,
                    atomic,
                } = &st.kind
                {
                    if let ExprKind::Subscript { array, indices } = &target.kind {
                        match copied_array(target, value).filter(|_| !*atomic) {
                            Some(from) => fp
                                .copies
                                .entry(array.clone())
                                .or_default()
                                .push((cx.access(indices), from)),
                            None => fp
                                .writes
                                .entry(array.clone())
                                .or_default()
                                .push(cx.access(indices)),
                        }
                        for ix in indices {
                            if let Index::At(e) = ix {
                                read(e, &mut fp);
                            }
                        }
                    }
                    read(value, &mut fp);
                } else {
                    for e in st.exprs() {
                        read(e, &mut fp);
                    }
                }
            });
        }
        for (t, _) in &k.temps {
            fp.writes.entry(t.clone()).or_default().push(vec![]);
        }
        fp
    }

    /// Whether a write of one may meet a read or write of the other at some element (two
    /// copies from one array aside, while neither writes that array).
    pub fn conflicts(&self, other: &Footprint) -> bool {
        let meets = |writes: &HashMap<String, Vec<Access>>,
                     touched: &HashMap<String, Vec<Access>>| {
            writes.iter().any(|(array, ws)| {
                touched
                    .get(array)
                    .is_some_and(|ts| ws.iter().any(|w| ts.iter().any(|t| !disjoint(w, t))))
            })
        };
        let (mine, theirs) = (self.all_writes(), other.all_writes());
        let copies_meet = self.copies.iter().any(|(array, cs)| {
            other.copies.get(array).is_some_and(|os| {
                cs.iter().any(|(c, from)| {
                    os.iter().any(|(o, other_from)| {
                        let same_value = from == other_from
                            && !mine.contains_key(from)
                            && !theirs.contains_key(from);
                        !same_value && !disjoint(c, o)
                    })
                })
            })
        });
        meets(&mine, &other.reads)
            || meets(&self.writes, &theirs)
            || meets(&theirs, &self.reads)
            || meets(&other.writes, &mine)
            || copies_meet
    }

    /// Every write, copies included.
    fn all_writes(&self) -> HashMap<String, Vec<Access>> {
        let mut all = self.writes.clone();
        for (array, cs) in &self.copies {
            all.entry(array.clone())
                .or_default()
                .extend(cs.iter().map(|(a, _)| a.clone()));
        }
        all
    }
}

/// The array `value` copies when it is that array's element at `target`'s very indices
/// (another array than `target`'s).
fn copied_array(target: &Expr, value: &Expr) -> Option<String> {
    let (
        ExprKind::Subscript { array, indices },
        ExprKind::Subscript {
            array: from,
            indices: from_indices,
        },
    ) = (&target.kind, &value.kind)
    else {
        return None;
    };
    let same_indices = same_place(
        &Expr::new(
            ExprKind::Subscript {
                array: from.clone(),
                indices: indices.clone(),
            },
            target.span,
        ),
        &Expr::new(
            ExprKind::Subscript {
                array: from.clone(),
                indices: from_indices.clone(),
            },
            value.span,
        ),
    );
    (from != array && same_indices).then(|| from.clone())
}

/// Some dimension's intervals provably do not meet.
fn disjoint(a: &Access, b: &Access) -> bool {
    a.iter().zip(b).any(|(x, y)| match (x, y) {
        (Some((alo, ahi)), Some((blo, bhi))) => {
            let below = |hi: &Affine, lo: &Affine| hi.sub(lo).as_constant().is_some_and(|d| d < 0);
            below(ahi, blo) || below(bhi, alo)
        }
        _ => false,
    })
}

/// The ranges of a region's loop variables and the names that may stand as symbols.
struct Bounds {
    ranges: HashMap<String, (Affine, Affine)>,
    /// Names the region binds (locals, loop variables) or the host loop changes.
    unstill: HashSet<String>,
}

impl Bounds {
    fn of(k: &Kernel, varying: &HashSet<String>) -> Bounds {
        let mut ranges = HashMap::new();
        let mut unstill: HashSet<String> = varying.clone();
        // A name bound more than once (assigned besides being a loop's variable, two loops of
        // one name) has no one range.
        let mut bound_twice = HashSet::new();
        let mut bind = |name: &str, range: Option<(&Range, bool)>| {
            if !unstill.insert(name.to_string()) {
                bound_twice.insert(name.to_string());
            }
            if let Some(ends) = range.and_then(|(r, upward)| ends(r, upward)) {
                ranges.insert(name.to_string(), ends);
            }
        };
        for d in &k.dims {
            bind(&d.var, Some((&d.range, false)));
        }
        for s in &k.body {
            s.walk(&mut |st| match &st.kind {
                StmtKind::Assign { target, .. } => {
                    if let ExprKind::Name(n) = &target.kind {
                        bind(n, None);
                    }
                }
                StmtKind::For {
                    var,
                    range,
                    vector,
                    kind,
                    ..
                } => {
                    // A strip-mined loop walks upward by its width (a name, for MVL): its base
                    // and its lanes stay in [start, stop).
                    let upward = matches!(kind, LoopKind::StripMined { .. });
                    bind(var, Some((range, upward)));
                    if let Some(v) = vector {
                        bind(v, Some((range, upward)));
                    }
                }
                _ => {}
            });
        }
        ranges.retain(|v, _| !bound_twice.contains(v));
        Bounds { ranges, unstill }
    }

    fn access(&self, indices: &[Index]) -> Access {
        if indices.iter().any(|ix| !matches!(ix, Index::At(_))) {
            return vec![];
        }
        indices
            .iter()
            .map(|ix| match ix {
                Index::At(e) => self.interval(&Affine::of(e), NESTING),
                _ => None,
            })
            .collect()
    }

    /// `[lo, hi]` of `e` over the loops' ranges, in symbols that hold still.
    fn interval(&self, e: &Affine, depth: u32) -> Interval {
        let mut lo = Affine::default().with_constant(e.constant());
        let mut hi = lo.clone();
        for (atom, &coef) in e.terms() {
            let (tlo, thi) = if let Some((vlo, vhi)) = self.ranges.get(atom) {
                let depth = depth.checked_sub(1)?;
                let (lo_lo, _) = self.interval(vlo, depth)?;
                let (_, hi_hi) = self.interval(vhi, depth)?;
                (lo_lo, hi_hi)
            } else if self.is_symbol(atom) {
                (Affine::symbol(atom), Affine::symbol(atom))
            } else {
                return None;
            };
            let (tlo, thi) = if coef > 0 { (tlo, thi) } else { (thi, tlo) };
            lo = lo.add(&tlo.scale(coef), 1);
            hi = hi.add(&thi.scale(coef), 1);
        }
        Some((lo, hi))
    }

    /// A plain name the region never binds and the host loop never changes.
    fn is_symbol(&self, atom: &str) -> bool {
        let mut chars = atom.chars();
        chars.next().is_some_and(|c| c.is_alphabetic() || c == '_')
            && chars.all(|c| c.is_alphanumeric() || c == '_')
            && !self.unstill.contains(atom)
    }
}

/// Inclusive ends of a range with a literal non-zero step (or one known to go `upward`).
fn ends(r: &Range, upward: bool) -> Option<(Affine, Affine)> {
    let step = match r.step.kind {
        ExprKind::Int(step) => step,
        _ if upward => 1,
        _ => return None,
    };
    let (start, stop) = (Affine::of(&r.start), Affine::of(&r.stop));
    match step {
        s if s > 0 => Some((start, stop.add(&Affine::default().with_constant(1), -1))),
        s if s < 0 => Some((stop.add(&Affine::default().with_constant(1), 1), start)),
        _ => None,
    }
}
