//! What the Triton printer needs to know of a kernel before printing it: its parameters and
//! the launcher's arguments, the arrays it writes, the dtypes of loop-carried locals and the
//! locals that hold per-lane values. `analyse` runs the steps below in order.

use super::kernel_code::Param;
use crate::ir::*;
use std::collections::{HashMap, HashSet};

/// What `analyse` finds in one kernel.
pub(super) struct Analysis {
    /// The kernel's parameters, in order (see `params`).
    pub(super) params: Vec<Param>,
    /// The launcher's own parameters (see `host_args`).
    pub(super) host_args: Vec<String>,
    pub(super) uses_mvl: bool,
    /// Arrays the kernel stores to.
    pub(super) written: Vec<String>,
    /// Loop-carried locals initialised by a literal, with the update that fixes their dtype.
    pub(super) carried: HashMap<String, Expr>,
    /// The same updates with the kernel's single-assignment locals replaced by their values,
    /// for the dtype only: a local defined after the init (`t = A[i, j]` inside the loop that
    /// does `s += t * x[j]`) is not known where the init is printed, its value is.
    pub(super) carried_dtype: HashMap<String, Expr>,
    /// Locals holding per-lane values of a `parallel for simd` program.
    pub(super) lane_vectors: HashSet<String>,
}

/// Appends `s` unless `v` has it already (orders of first use are part of the output).
pub(super) fn push_unique(v: &mut Vec<String>, s: &str) {
    if !v.iter().any(|x| x == s) {
        v.push(s.to_string());
    }
}

/// Free names, arrays, ranks, written arrays, integer-use of scalars, MVL use.
pub(super) fn analyse(k: &Kernel) -> Analysis {
    let mut uses = collect_uses(k);
    let free = free_names(&mut uses);
    let int_names = k.integer_names();
    Analysis {
        params: params(&free, &int_names),
        host_args: host_args(&free),
        uses_mvl: uses.uses_mvl,
        written: uses.written,
        carried: carried_locals(&uses.assigns),
        carried_dtype: carried_locals(&uses.assigns)
            .into_iter()
            .map(|(n, update)| (n, with_single_locals_inlined(update, &uses.assigns)))
            .collect(),
        lane_vectors: lane_vectors(k, &uses.assigns),
    }
}

/// What a kernel's grid and statements define and use, gathered in one walk.
struct Uses<'k> {
    /// Every expression of the grid ranges and the statements.
    exprs: Vec<&'k Expr>,
    /// Names the kernel defines: grid and loop variables, vector indices, assigned names.
    locals: HashSet<String>,
    /// Arrays stored to, in order of first store.
    written: Vec<String>,
    uses_mvl: bool,
    /// `name = value` assignments, in order.
    assigns: Vec<(&'k str, &'k Expr)>,
}

/// Walks the grid and the statements: locals, written arrays, assignments to names, MVL-wide
/// grids and strips.
fn collect_uses(k: &Kernel) -> Uses<'_> {
    let mut u = Uses {
        exprs: vec![],
        locals: HashSet::new(),
        written: vec![],
        uses_mvl: false,
        assigns: vec![],
    };
    for d in &k.dims {
        u.locals.insert(d.var.clone());
        u.exprs
            .extend([&d.range.start, &d.range.stop, &d.range.step]);
        u.uses_mvl |= matches!(d.simd, Some(Width::Mvl | Width::RowBlockLanes));
    }
    for s in &k.body {
        s.walk(&mut |st| {
            u.exprs.extend(st.exprs());
            match &st.kind {
                StmtKind::Assign { target, value, .. } => match &target.kind {
                    ExprKind::Name(n) => {
                        u.locals.insert(n.clone());
                        u.assigns.push((n, value));
                    }
                    ExprKind::Subscript { array, .. } => push_unique(&mut u.written, array),
                    _ => {}
                },
                StmtKind::For {
                    var, vector, kind, ..
                } => {
                    u.locals.insert(var.clone());
                    if let Some(v) = vector {
                        u.locals.insert(v.clone());
                    }
                    u.uses_mvl |= matches!(
                        kind,
                        LoopKind::StripMined {
                            width: Width::Mvl | Width::RowBlockLanes,
                            ..
                        }
                    );
                }
                _ => {}
            }
        });
    }
    u
}

/// The names a kernel takes from the host, in order of first use.
struct FreeNames {
    arrays: Vec<String>,
    /// The most indices any subscript of each array has.
    ranks: HashMap<String, usize>,
    /// `A.shape[d]` extents read.
    shapes: Vec<(String, usize)>,
    /// Names that are neither local nor arrays.
    scalars: Vec<String>,
}

/// Arrays, ranks, shapes and host scalars of the expressions; also notes MVL use.
fn free_names(u: &mut Uses) -> FreeNames {
    let mut arrays: Vec<String> = vec![];
    let mut ranks: HashMap<String, usize> = HashMap::new();
    let mut shapes: Vec<(String, usize)> = vec![];
    let mut scalars: Vec<String> = vec![];
    let (uses_mvl, locals) = (&mut u.uses_mvl, &u.locals);
    for e in &u.exprs {
        e.walk(&mut |x| match &x.kind {
            ExprKind::Subscript { array, indices } => {
                push_unique(&mut arrays, array);
                let r = ranks.entry(array.clone()).or_default();
                *r = (*r).max(indices.len());
            }
            ExprKind::Shape { array, dim } if !shapes.contains(&(array.clone(), *dim)) => {
                shapes.push((array.clone(), *dim));
            }
            ExprKind::Name(n) if n == "appy.MVL" => *uses_mvl = true,
            // A constexpr of the launcher's (`passes::row_block`), not a host scalar.
            ExprKind::Name(n) if n == ROW_BLOCK_NAME => {}
            ExprKind::Name(n) if !locals.contains(n) => push_unique(&mut scalars, n),
            ExprKind::Vidx { width, .. } => *uses_mvl |= *width == Width::Mvl,
            _ => {}
        });
    }
    scalars.retain(|s| !arrays.contains(s));
    FreeNames {
        arrays,
        ranks,
        shapes,
        scalars,
    }
}

/// The kernel's parameters: arrays, scalars (integer or fp64), every array's strides, shapes.
fn params(free: &FreeNames, int_names: &HashSet<String>) -> Vec<Param> {
    let mut params: Vec<Param> = free
        .arrays
        .iter()
        .map(|a| Param::Array(a.clone()))
        .collect();
    for s in &free.scalars {
        params.push(if int_names.contains(s) {
            Param::IntScalar(s.clone())
        } else {
            Param::FloatScalar(s.clone())
        });
    }
    for a in &free.arrays {
        for d in 0..free.ranks[a] {
            params.push(Param::Stride(a.clone(), d));
        }
    }
    for (a, d) in &free.shapes {
        params.push(Param::Shape(a.clone(), *d));
    }
    params
}

/// The launcher's own parameters: arrays, scalars, then arrays known only by their shapes.
fn host_args(free: &FreeNames) -> Vec<String> {
    let mut host_args = free.arrays.clone();
    host_args.extend(free.scalars.iter().cloned());
    for (a, _) in &free.shapes {
        push_unique(&mut host_args, a);
    }
    host_args
}

/// Literal-initialised locals that are assigned again, with their first non-literal value:
/// Triton needs one dtype per loop-carried value, so the init takes the dtype of the update.
fn carried_locals(assigns: &[(&str, &Expr)]) -> HashMap<String, Expr> {
    let mut carried = HashMap::new();
    let mut first_literal: HashSet<&str> = HashSet::new();
    for (name, value) in assigns {
        let is_literal = matches!(
            value.kind,
            ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::FloatSpecial(_) | ExprKind::Bool(_)
        );
        if is_literal && !carried.contains_key(*name) && !first_literal.contains(name) {
            first_literal.insert(name);
        } else if first_literal.contains(name) && !is_literal {
            carried
                .entry(name.to_string())
                .or_insert_with(|| (*value).clone());
        }
    }
    carried
}

/// `e` with every name the kernel assigns exactly once replaced by its value, a few levels
/// deep (values that read such locals are inlined in turn).
fn with_single_locals_inlined(e: Expr, assigns: &[(&str, &Expr)]) -> Expr {
    let mut count: HashMap<&str, usize> = HashMap::new();
    for (n, _) in assigns {
        *count.entry(n).or_default() += 1;
    }
    let single: HashMap<&str, &Expr> = assigns
        .iter()
        .filter(|(n, _)| count[n] == 1)
        .map(|(n, v)| (*n, *v))
        .collect();
    let mut e = e;
    // A bound on the depth (a local defined by another, ...): enough for what lowering makes.
    for _ in 0..4 {
        let mut changed = false;
        e = e.rewrite(&mut |x| match &x.kind {
            ExprKind::Name(n) => match single.get(n.as_str()) {
                Some(v) => {
                    changed = true;
                    (*v).clone()
                }
                None => x,
            },
            _ => x,
        });
        if !changed {
            break;
        }
    }
    e
}

/// Locals that hold per-lane values of a vectorised (`parallel for simd`) program: a literal
/// init of such a loop-carried local must already be a vector.
fn lane_vectors(k: &Kernel, assigns: &[(&str, &Expr)]) -> HashSet<String> {
    let mut lane_vectors: HashSet<String> = HashSet::new();
    if let Some(d) = k.dims.last().filter(|d| d.simd.is_some()) {
        lane_vectors.insert(d.var.clone());
        loop {
            let before = lane_vectors.len();
            for (name, value) in assigns {
                if mentions_outside_reductions(value, &lane_vectors) {
                    lane_vectors.insert(name.to_string());
                }
            }
            if lane_vectors.len() == before {
                break;
            }
        }
    }
    lane_vectors
}

fn mentions_outside_reductions(e: &Expr, names: &HashSet<String>) -> bool {
    match &e.kind {
        ExprKind::Name(n) => names.contains(n),
        ExprKind::Reduce { .. } => false,
        // One value per lane: the lanes it reads are its own.
        ExprKind::ReduceRows { value, .. } => mentions_outside_reductions(value, names),
        ExprKind::Subscript { indices, .. } => indices.iter().any(|i| match i {
            Index::At(x) => mentions_outside_reductions(x, names),
            Index::Slice { .. } | Index::NewAxis => false,
        }),
        ExprKind::Binary { left, right, .. } | ExprKind::Compare { left, right, .. } => {
            mentions_outside_reductions(left, names) || mentions_outside_reductions(right, names)
        }
        ExprKind::Unary { operand, .. } => mentions_outside_reductions(operand, names),
        ExprKind::BoolOp { values, .. } => {
            values.iter().any(|v| mentions_outside_reductions(v, names))
        }
        ExprKind::IfExp { test, body, orelse } => [test, body, orelse]
            .iter()
            .any(|v| mentions_outside_reductions(v, names)),
        ExprKind::Call { args, .. } => args.iter().any(|v| mentions_outside_reductions(v, names)),
        _ => false,
    }
}

/// The loads a 2-D sweep issues first when its loads go in two waves (`Cx::load_waves`): for
/// each array that `value` reads at several row offsets of the stored element `target[i, j]`,
/// its loads at the lowest and at the highest offset (of those, the one nearest column `j`).
/// With the row block between them they cover every row the program's tile reads, so once they
/// have arrived the sweep's other loads find their lines in the L1, whatever order ptxas would
/// have issued them in (docs/performance.md 54). Empty when the store is not to a 2-D element
/// or no array is read at two row offsets.
pub(super) fn first_load_wave<'e>(target: &Expr, value: &'e Expr) -> Vec<&'e Expr> {
    let ExprKind::Subscript { indices, .. } = &target.kind else {
        return vec![];
    };
    let [Index::At(row), Index::At(col)] = indices.as_slice() else {
        return vec![];
    };
    let (ExprKind::Name(row), ExprKind::Name(col)) = (&row.kind, &col.kind) else {
        return vec![];
    };
    // Per array, in order of first load: its loads as (row offset, |column offset|, the load).
    type Loads<'e> = Vec<(i64, i64, &'e Expr)>;
    let mut arrays: Vec<(&str, Loads<'e>)> = vec![];
    value.walk(&mut |e| {
        let ExprKind::Subscript { array, indices } = &e.kind else {
            return;
        };
        let [Index::At(r), Index::At(c)] = indices.as_slice() else {
            return;
        };
        if let (Some(dr), Some(dc)) = (offset_from(r, row), offset_from(c, col)) {
            match arrays.iter_mut().find(|(a, _)| a == array) {
                Some((_, loads)) => loads.push((dr, dc.abs(), e)),
                None => arrays.push((array, vec![(dr, dc.abs(), e)])),
            }
        }
    });
    let mut first = vec![];
    for (_, loads) in &arrays {
        let nearest = |at: i64| {
            loads
                .iter()
                .filter(|l| l.0 == at)
                .min_by_key(|l| l.1)
                .map(|l| l.2)
        };
        let (lo, hi) = (
            loads.iter().map(|l| l.0).min(),
            loads.iter().map(|l| l.0).max(),
        );
        if let (Some(lo), Some(hi)) = (lo, hi) {
            if lo < hi {
                first.extend(nearest(lo));
                first.extend(nearest(hi));
            }
        }
    }
    first
}

/// `e` as `var + c` (`var`, `var + c`, `c + var`, `var - c`): c.
fn offset_from(e: &Expr, var: &str) -> Option<i64> {
    let int = |x: &Expr| match x.kind {
        ExprKind::Int(v) => Some(v),
        _ => None,
    };
    let is_var = |x: &Expr| matches!(&x.kind, ExprKind::Name(n) if n == var);
    match &e.kind {
        ExprKind::Name(n) if n == var => Some(0),
        ExprKind::Binary { op, left, right } => match op {
            BinOp::Add if is_var(left) => int(right),
            BinOp::Add if is_var(right) => int(left),
            BinOp::Sub if is_var(left) => int(right).map(|v| -v),
            _ => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontend::source::Span;
    use crate::ir::build::{assign, elem, int, kernel, name};

    /// A kernel over `i in range(0, N)` (`parallel for simd` when `simd`) running `body`.
    fn grid_kernel(body: Vec<Stmt>, simd: bool) -> Kernel {
        let mut k = kernel(body);
        k.dims.push(ParallelDim {
            var: "i".into(),
            range: Range {
                start: int(0),
                stop: name("N"),
                step: int(1),
            },
            simd: simd.then_some(Width::Mvl),
            span: Span::DUMMY,
        });
        k
    }

    fn bin(op: BinOp, l: Expr, r: Expr) -> Expr {
        Expr::binary(op, l, r)
    }

    fn shape(array: &str, dim: usize) -> Expr {
        Expr::new(
            ExprKind::Shape {
                array: array.into(),
                dim,
            },
            Span::DUMMY,
        )
    }

    fn lt(l: Expr, r: Expr) -> Expr {
        Expr::new(
            ExprKind::Compare {
                op: CmpOp::Lt,
                left: Box::new(l),
                right: Box::new(r),
            },
            Span::DUMMY,
        )
    }

    fn set(names: &[&str]) -> HashSet<String> {
        names.iter().map(|n| n.to_string()).collect()
    }

    #[test]
    fn the_walk_finds_locals_written_arrays_and_mvl() {
        let k = grid_kernel(
            vec![
                assign(name("s"), elem("A", "i")),
                assign(elem("B", "i"), name("s")),
            ],
            true,
        );
        let u = collect_uses(&k);
        assert_eq!(u.locals, set(&["i", "s"]));
        assert_eq!(u.written, ["B"]);
        assert!(u.uses_mvl);
        assert_eq!(u.assigns.len(), 1);
        assert!(!collect_uses(&grid_kernel(vec![], false)).uses_mvl);
    }

    #[test]
    fn free_names_are_arrays_scalars_and_shapes_in_order_of_use() {
        // B[i] = A[i] * x + C.shape[0]
        let k = grid_kernel(
            vec![assign(
                elem("B", "i"),
                bin(
                    BinOp::Add,
                    bin(BinOp::Mul, elem("A", "i"), name("x")),
                    shape("C", 0),
                ),
            )],
            false,
        );
        let mut u = collect_uses(&k);
        let free = free_names(&mut u);
        assert_eq!(free.arrays, ["B", "A"]);
        assert_eq!(free.scalars, ["N", "x"]);
        assert_eq!(free.shapes, [("C".to_string(), 0)]);
        assert_eq!(free.ranks["A"], 1);
        let ints = k.integer_names();
        assert_eq!(
            params(&free, &ints),
            [
                Param::Array("B".into()),
                Param::Array("A".into()),
                Param::IntScalar("N".into()),
                Param::FloatScalar("x".into()),
                Param::Stride("B".into(), 0),
                Param::Stride("A".into(), 0),
                Param::Shape("C".into(), 0),
            ]
        );
        assert_eq!(host_args(&free), ["B", "A", "N", "x", "C"]);
    }

    #[test]
    fn a_scalar_reaching_an_index_through_a_local_is_an_integer() {
        // j = k + 1; B[j] = x; C[i] = (y < z) & (z < w); D[i] = n // 2
        let k = grid_kernel(
            vec![
                assign(name("j"), bin(BinOp::Add, name("k"), int(1))),
                assign(elem("B", "j"), name("x")),
                assign(
                    elem("C", "i"),
                    bin(
                        BinOp::BitAnd,
                        lt(name("y"), name("z")),
                        lt(name("z"), name("w")),
                    ),
                ),
                assign(elem("D", "i"), bin(BinOp::FloorDiv, name("n"), int(2))),
            ],
            false,
        );
        let ints = k.integer_names();
        for n in ["i", "j", "k", "N", "n"] {
            assert!(ints.contains(n), "{n} in {ints:?}");
        }
        // Comparisons combined by `&` say nothing of their operands.
        for n in ["x", "y", "z", "w"] {
            assert!(!ints.contains(n), "{n} in {ints:?}");
        }
    }

    #[test]
    fn a_literal_init_updated_later_is_carried() {
        // s = 0.0; s = s + A[i]; t = 1.0
        let update = bin(BinOp::Add, name("s"), elem("A", "i"));
        let init = Expr::new(ExprKind::Float(0.0), Span::DUMMY);
        let one = Expr::new(ExprKind::Float(1.0), Span::DUMMY);
        let assigns = [("s", &init), ("s", &update), ("t", &one)];
        let carried = carried_locals(&assigns);
        assert_eq!(carried.len(), 1);
        assert_eq!(carried["s"], update);
    }

    #[test]
    fn lane_vectors_follow_the_simd_grid_variable_but_not_through_reductions() {
        let reduce = Expr::new(
            ExprKind::Reduce {
                op: ReduceOp::Sum,
                value: Box::new(elem("A", "i")),
                lanes: None,
            },
            Span::DUMMY,
        );
        let body = vec![
            assign(name("v"), elem("A", "i")),
            assign(name("s"), bin(BinOp::Add, name("s"), name("v"))),
            assign(name("r"), reduce),
        ];
        let k = grid_kernel(body.clone(), true);
        let u = collect_uses(&k);
        assert_eq!(lane_vectors(&k, &u.assigns), set(&["i", "v", "s"]));
        let k = grid_kernel(body, false);
        assert!(lane_vectors(&k, &collect_uses(&k).assigns).is_empty());
    }
    /// `array[i + di, j + dj]`.
    fn at(array: &str, di: i64, dj: i64) -> Expr {
        let shifted = |v: &str, d: i64| match d {
            0 => name(v),
            d if d > 0 => bin(BinOp::Add, name(v), int(d)),
            d => bin(BinOp::Sub, name(v), int(-d)),
        };
        Expr::new(
            ExprKind::Subscript {
                array: array.into(),
                indices: vec![Index::At(shifted("i", di)), Index::At(shifted("j", dj))],
            },
            Span::DUMMY,
        )
    }

    fn sum(terms: Vec<Expr>) -> Expr {
        terms
            .into_iter()
            .reduce(|a, b| bin(BinOp::Add, a, b))
            .unwrap()
    }

    fn wave(value: &Expr) -> Vec<Expr> {
        first_load_wave(&at("B", 0, 0), value)
            .into_iter()
            .cloned()
            .collect()
    }

    #[test]
    fn a_five_point_sweep_loads_the_rows_above_and_below_first() {
        let value = sum(vec![
            at("A", 0, 0),
            at("A", 0, -1),
            at("A", 0, 1),
            at("A", 1, 0),
            at("A", -1, 0),
        ]);
        assert_eq!(wave(&value), vec![at("A", -1, 0), at("A", 1, 0)]);
    }

    #[test]
    fn a_nine_point_sweep_takes_the_loads_nearest_the_stored_column() {
        let mut terms = vec![];
        for di in [-1, 0, 1] {
            for dj in [-1, 1, 0] {
                terms.push(at("A", di, dj));
            }
        }
        assert_eq!(wave(&sum(terms)), vec![at("A", -1, 0), at("A", 1, 0)]);
    }

    #[test]
    fn a_one_sided_sweep_loads_its_two_rows_first_and_each_array_has_its_own() {
        let value = sum(vec![
            at("H", 0, 0),
            at("H", 1, 0),
            at("E", 0, 0),
            at("E", 0, 1),
            at("E", -2, 1),
        ]);
        assert_eq!(
            wave(&value),
            vec![at("H", 0, 0), at("H", 1, 0), at("E", -2, 1), at("E", 0, 0)]
        );
    }

    #[test]
    fn a_sweep_within_one_row_or_not_to_a_2d_element_has_no_first_wave() {
        let row = sum(vec![at("A", 0, -1), at("A", 0, 0), at("A", 0, 1)]);
        assert!(wave(&row).is_empty());
        let column = sum(vec![at("A", -1, 0), at("A", 1, 0)]);
        assert!(first_load_wave(&elem("B", "i"), &column).is_empty());
        // Rows of another index than the stored element's are no offsets of it.
        let other = Expr::new(
            ExprKind::Subscript {
                array: "A".into(),
                indices: vec![Index::At(name("k")), Index::At(name("j"))],
            },
            Span::DUMMY,
        );
        assert!(wave(&sum(vec![other, at("A", 1, 0)])).is_empty());
    }
}
