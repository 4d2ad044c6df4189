//! Contract: which array each name of a rebinding group (`A, B = B, A`, rotations through a
//! temporary) holds at each phase of a persistent loop, in every iteration that can differ,
//! found by running the loop's rebind steps on the group's arrays. It changes nothing.
//!
//! Why: the barrier analysis compares what phases touch. Spelling every name of a group as
//! one array (the conservative view) makes every phase that writes one buffer conflict with
//! every phase that reads the other, so smooth_swap's five phases a step (the interior and
//! four edges, writing B, reading A) each ended with a grid barrier. With the arrays the
//! names hold, the phases of one step touch two different buffers and share one barrier;
//! across a swap the next step's reads meet this step's writes and still get theirs.
//!
//! Rebinding only copies references between names, so the bindings at the start of an
//! iteration are a function of those at the start of the last one, over finitely many
//! states: following them until a state repeats covers every iteration (a first iteration
//! whose temporaries are not bound yet included).

use super::host_steps::{HostSteps, StepKind};
use crate::ir::*;
use std::collections::HashMap;

/// The iterations that can differ: `phases[k][r]` maps each group name bound at phase `r` of
/// iteration state `k` to the array (a slot, the launcher's name) it holds; `next[k]` is the
/// state of the iteration after one in state `k`.
#[derive(Debug, Clone, PartialEq)]
pub struct Bindings {
    pub phases: Vec<Vec<HashMap<String, String>>>,
    pub next: Vec<usize>,
}

/// At most this many distinct iteration states are followed; a loop with more (never seen:
/// a rotation of n arrays has n) keeps the conservative view.
const MAX_STATES: usize = 64;

impl Bindings {
    /// The bindings of a loop of `nphases` phases, or `None` past `MAX_STATES`.
    pub fn of(steps: &HostSteps, nphases: usize) -> Option<Bindings> {
        let mut start: HashMap<String, String> = HashMap::new();
        for g in &steps.groups {
            for s in &g.slots {
                start.insert(s.clone(), s.clone());
            }
        }
        let mut starts: Vec<HashMap<String, String>> = vec![];
        let mut phases = vec![];
        let mut next = vec![];
        loop {
            if let Some(seen) = starts.iter().position(|s| *s == start) {
                if let Some(last) = next.last_mut() {
                    *last = seen;
                }
                return Some(Bindings { phases, next });
            }
            if starts.len() == MAX_STATES {
                return None;
            }
            if let Some(last) = next.last_mut() {
                *last = starts.len();
            }
            starts.push(start.clone());
            let mut now = start;
            let mut at = vec![];
            for r in 0..=nphases {
                for step in steps.steps.iter().filter(|s| s.before == r) {
                    if let (StepKind::Rebind, ExprKind::Name(from)) = (&step.kind, &step.value.kind)
                    {
                        match now.get(from).cloned() {
                            Some(array) => now.insert(step.target.clone(), array),
                            None => now.remove(&step.target),
                        };
                    }
                }
                if r < nphases {
                    at.push(now.clone());
                }
            }
            phases.push(at);
            next.push(0);
            start = now;
        }
    }

    /// The state `d` iterations after state `k`.
    pub fn after(&self, k: usize, d: usize) -> usize {
        (0..d).fold(k, |k, _| self.next[k])
    }
}

/// `k` with each group name spelled as the array it holds (`binding`); names not bound yet
/// keep their own spelling.
pub fn bound_arrays(k: &Kernel, binding: &HashMap<String, String>) -> Kernel {
    k.with_arrays_renamed(&|a| binding.get(a).cloned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontend::source::Span;
    use crate::schedule::host_steps::{Group, Step};

    fn rebind(before: usize, target: &str, from: &str) -> Step {
        Step {
            before,
            target: target.into(),
            value: Expr::new(ExprKind::Name(from.into()), Span::DUMMY),
            kind: StepKind::Rebind,
            span: Span::DUMMY,
        }
    }

    fn held(b: &Bindings, k: usize, r: usize, name: &str) -> Option<String> {
        b.phases[k][r].get(name).cloned()
    }

    #[test]
    fn a_swap_alternates_two_states_and_a_rotation_three() {
        // A, B = B, A after the last of two phases, through two temporaries.
        let steps = HostSteps {
            steps: vec![
                rebind(2, "_s", "B"),
                rebind(2, "_s1", "A"),
                rebind(2, "A", "_s"),
                rebind(2, "B", "_s1"),
            ],
            groups: vec![Group {
                names: ["A", "B", "_s", "_s1"].map(String::from).to_vec(),
                slots: ["A", "B"].map(String::from).to_vec(),
            }],
            ..Default::default()
        };
        let b = Bindings::of(&steps, 2).unwrap();
        // The first iteration (temporaries unbound), then the two of the swap's cycle.
        assert_eq!(b.phases.len(), 3);
        assert_eq!(held(&b, 0, 1, "A").as_deref(), Some("A"));
        assert_eq!(held(&b, 1, 0, "A").as_deref(), Some("B"));
        assert_eq!(held(&b, 1, 0, "B").as_deref(), Some("A"));
        assert_eq!(held(&b, 2, 0, "A").as_deref(), Some("A"));
        assert_eq!(held(&b, 0, 0, "_s"), None);
        assert_eq!(held(&b, 1, 0, "_s").as_deref(), Some("B"));
        assert_eq!((b.after(0, 1), b.after(0, 2), b.after(2, 1)), (1, 2, 1));
        // A rotation of three arrays, mid-iteration: three states, then the first again.
        let steps = HostSteps {
            steps: vec![
                rebind(1, "_t", "X"),
                rebind(1, "X", "Y"),
                rebind(1, "Y", "Z"),
                rebind(1, "Z", "_t"),
            ],
            groups: vec![Group {
                names: ["X", "Y", "Z", "_t"].map(String::from).to_vec(),
                slots: ["X", "Y", "Z"].map(String::from).to_vec(),
            }],
            ..Default::default()
        };
        let b = Bindings::of(&steps, 2).unwrap();
        assert_eq!(b.phases.len(), 4);
        assert_eq!(held(&b, 0, 0, "X").as_deref(), Some("X"));
        assert_eq!(held(&b, 0, 1, "X").as_deref(), Some("Y"));
        assert_eq!(held(&b, 0, 1, "_t").as_deref(), Some("X"));
        assert_eq!((b.after(0, 3), b.after(1, 3)), (3, 1));
    }
}
