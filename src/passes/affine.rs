//! Affine forms over opaque atoms: enough symbolic algebra to decide that two slices have the
//! same length or differ by a constant (`2:N` against `1:N-1`).

use crate::ir::*;
use std::collections::BTreeMap;

/// A linear combination of opaque atoms with integer coefficients, to compare slice bounds
/// symbolically (`2:N` vs `1:N-1` differ by the constant 1).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Affine {
    terms: BTreeMap<String, i64>,
    constant: i64,
}

impl Affine {
    pub fn of(e: &Expr) -> Affine {
        match &e.kind {
            ExprKind::Int(v) => Affine {
                constant: *v,
                ..Default::default()
            },
            ExprKind::Binary { op, left, right } => {
                let (l, r) = (Affine::of(left), Affine::of(right));
                match op {
                    BinOp::Add => l.add(&r, 1),
                    BinOp::Sub => l.add(&r, -1),
                    BinOp::Mul if l.terms.is_empty() => r.scale(l.constant),
                    BinOp::Mul if r.terms.is_empty() => l.scale(r.constant),
                    _ => Affine::atom(e),
                }
            }
            ExprKind::Unary {
                op: UnaryOp::Neg,
                operand,
            } => Affine::of(operand).scale(-1),
            _ => Affine::atom(e),
        }
    }
    pub fn atom(e: &Expr) -> Affine {
        let mut terms = BTreeMap::new();
        terms.insert(crate::ir::python::expr(e), 1);
        Affine { terms, constant: 0 }
    }
    /// A name as an affine form of itself.
    pub fn symbol(name: &str) -> Affine {
        Affine {
            terms: BTreeMap::from([(name.to_string(), 1)]),
            constant: 0,
        }
    }
    /// The symbolic terms, atom (as printed) to coefficient.
    pub fn terms(&self) -> &BTreeMap<String, i64> {
        &self.terms
    }
    pub fn constant(&self) -> i64 {
        self.constant
    }
    pub fn add(mut self, o: &Affine, sign: i64) -> Affine {
        for (k, v) in &o.terms {
            *self.terms.entry(k.clone()).or_default() += sign * v;
        }
        self.terms.retain(|_, v| *v != 0);
        self.constant += sign * o.constant;
        self
    }
    pub fn sub(&self, o: &Affine) -> Affine {
        self.clone().add(o, -1)
    }
    pub fn scale(mut self, k: i64) -> Affine {
        self.terms.values_mut().for_each(|v| *v *= k);
        self.terms.retain(|_, v| *v != 0);
        self.constant *= k;
        self
    }
    pub fn is_zero(&self) -> bool {
        self.terms.is_empty() && self.constant == 0
    }
    /// The same symbolic terms with another constant: `N - 1` → `N - k` (NumPy's negative
    /// bounds count from the end of the same dimension).
    pub fn with_constant(&self, constant: i64) -> Affine {
        Affine {
            terms: self.terms.clone(),
            constant,
        }
    }
    /// The constant, when there are no other terms.
    pub fn as_constant(&self) -> Option<i64> {
        self.terms.is_empty().then_some(self.constant)
    }
    /// `self` under `facts`, forms known to be zero: each fact in turn eliminates one of its
    /// atoms of coefficient ±1 from `self` and from the facts after it (Gaussian elimination
    /// over the integers). Constant when the facts make `self` one, for facts that each keep
    /// such an atom.
    pub fn reduced_by(&self, facts: &[Affine]) -> Affine {
        let mut facts = facts.to_vec();
        let mut out = self.clone();
        for i in 0..facts.len() {
            let fact = facts[i].clone();
            let Some((pivot, c)) = fact.terms.iter().find(|(_, c)| c.abs() == 1) else {
                continue;
            };
            // With c = ±1, subtracting (k / c) · fact = (k · c) · fact clears the pivot's k.
            let eliminate = |a: &Affine| match a.terms.get(pivot) {
                Some(&k) => a.clone().add(&fact, -k * c),
                None => a.clone(),
            };
            out = eliminate(&out);
            for later in facts.iter_mut().skip(i + 1) {
                *later = eliminate(later);
            }
        }
        out
    }
    /// `base + offset` when the offset is a constant, else `base + (offset expression)`.
    pub fn added_to(&self, base: Expr) -> Expr {
        let span = base.span;
        if self.terms.is_empty() {
            return match self.constant {
                0 => base,
                c if c > 0 => Expr::binary(BinOp::Add, base, Expr::int(c, span)),
                c => Expr::binary(BinOp::Sub, base, Expr::int(-c, span)),
            };
        }
        // Non-constant offsets only arise from equal-length slices at different symbolic
        // starts (`A[i, k:k+n]` against `B[i, :n]`): index them with the offset expression.
        let mut e: Option<Expr> = None;
        for (atom, coef) in &self.terms {
            let a = Expr::new(ExprKind::Name(atom.clone()), span);
            let term = if *coef == 1 {
                a
            } else {
                Expr::binary(BinOp::Mul, Expr::int(*coef, span), a)
            };
            e = Some(match e {
                None => term,
                Some(prev) => Expr::binary(BinOp::Add, prev, term),
            });
        }
        let mut off = e.expect("non-empty terms");
        if self.constant != 0 {
            off = Expr::binary(BinOp::Add, off, Expr::int(self.constant, span));
        }
        Expr::binary(BinOp::Add, base, off)
    }
}

/// Names, integers, shapes, `+ - *` and negation only: what `Affine::of` reads term by term
/// (anything else would be one opaque atom).
pub fn reads_exactly(e: &Expr) -> bool {
    let mut ok = true;
    e.walk(&mut |e| match &e.kind {
        ExprKind::Name(_) | ExprKind::Int(_) | ExprKind::Shape { .. } => {}
        ExprKind::Binary {
            op: BinOp::Add | BinOp::Sub | BinOp::Mul,
            ..
        } => {}
        ExprKind::Unary {
            op: UnaryOp::Neg, ..
        } => {}
        _ => ok = false,
    });
    ok
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontend::source::Span;

    fn n(s: &str) -> Expr {
        Expr::name(s, Span::DUMMY)
    }
    fn i(v: i64) -> Expr {
        Expr::int(v, Span::DUMMY)
    }

    #[test]
    fn shifted_slices_have_equal_extent() {
        // 2:N vs 1:N-1
        let a = Affine::of(&n("N")).sub(&Affine::of(&i(2)));
        let b = Affine::of(&Expr::binary(BinOp::Sub, n("N"), i(1))).sub(&Affine::of(&i(1)));
        assert_eq!(a, b);
        let c = Affine::of(&Expr::binary(BinOp::Mul, i(2), n("N")));
        assert_ne!(a, c);
        assert_eq!(
            Affine::of(&i(3)).sub(&Affine::of(&i(1))).as_constant(),
            Some(2)
        );
    }

    #[test]
    fn facts_known_zero_reduce_a_difference_to_a_constant_through_each_other() {
        let s = Affine::symbol;
        // (B - 1) - (N - 1) under N = A and B - 2 = A - 2: zero, through both facts.
        let d = s("B").add(&s("N"), -1);
        let facts = [s("N").sub(&s("A")), s("B").sub(&s("A"))];
        assert_eq!(d.reduced_by(&facts).as_constant(), Some(0));
        assert_eq!(d.reduced_by(&facts[..1]).as_constant(), None);
        // A constant offset survives; an unrelated atom stays.
        let d = s("B").add(&s("N"), -1).add(&Affine::of(&i(3)), 1);
        assert_eq!(d.reduced_by(&facts).as_constant(), Some(3));
        assert_eq!(s("M").reduced_by(&facts).as_constant(), None);
        // A fact of coefficient 2 alone eliminates nothing.
        let twice = s("N").scale(2).sub(&s("A").scale(2));
        assert_eq!(s("N").sub(&s("A")).reduced_by(&[twice]).as_constant(), None);
    }
}
