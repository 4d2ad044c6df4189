//! The host side of a `#pragma distribute` loop (`passes::distribute`): under PEs (torchrun,
//! or the tests' stand-in) each rank cuts its block with halos from the global arrays onto the
//! symmetric heap, allocates the exchange flags, runs the distributed persistent kernel and
//! gathers every PE's rows back into the global arrays, on every rank; in one plain process the
//! loop runs as the single-GPU persistent kernel. The helpers are in templates/nvshmem.py.jinja.

use crate::passes::distribute::{self as d, Plan};

/// The statement that takes the loop's place: `spmd` (the distributed launch) between the
/// block set-up and the gather, or `single` (the single-GPU launch) without PEs. Its lines
/// after the first are indented by `indent`, the loop's own.
/// `site` names the loop for the reuse of its symmetric blocks by later calls (the function).
pub fn call(plan: &Plan, site: &str, spmd: &str, single: &str, indent: &str) -> String {
    let halo = plan.halo;
    let arrays = plan.arrays.join(", ");
    let first = &plan.arrays[0];
    let mut lines = vec![
        "if _appyc_nvshmem_distributed():".to_string(),
        format!(
            "    # #pragma distribute({arrays}): this PE's rows and {halo} halo row(s) each side"
        ),
        format!("    _appyc_global = ({arrays},)"),
        format!(
            "    {}, {}, {}, {}, {}, {}, {}, {}, {} = _appyc_dist_rows(_appyc_global, {halo})",
            d::R0,
            d::R1,
            d::OFFSET,
            d::ROWS,
            d::UP,
            d::DOWN,
            d::UP_HALO,
            d::OWN,
            d::SCRATCH
        ),
    ];
    for a in &plan.arrays {
        lines.push(format!(
            "    {a} = _appyc_dist_block({a}, {halo}, {}, {}, \"{site}.{a}\")",
            d::R0,
            d::R1
        ));
    }
    lines.push(format!(
        "    {} = _appyc_dist_symmetric(torch.zeros({}, dtype=torch.int64, device={first}.device), \"{site}.flags\")",
        d::FLAGS,
        plan.flags.max(1)
    ));
    lines.push(format!("    {spmd}"));
    for (i, a) in plan.arrays.iter().enumerate() {
        lines.push(format!(
            "    {a} = _appyc_dist_gather(_appyc_global[{i}], {a}, {halo})"
        ));
    }
    lines.push("else:".to_string());
    lines.push(format!("    {single}"));
    lines.join(&format!("\n{indent}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontend::source::Span;

    #[test]
    fn blocks_flags_launch_and_gather_in_order_then_the_single_gpu_branch() {
        let plan = Plan {
            loop_span: Span::DUMMY,
            arrays: vec!["A".into(), "B".into()],
            halo: 1,
            flags: 4,
        };
        let text = call(&plan, "f", "_launch_d(A, B)", "_launch_s(A, B)", "  ");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "if _appyc_nvshmem_distributed():");
        let at = |s: &str| lines.iter().position(|l| l.contains(s)).unwrap();
        assert!(at("_appyc_dist_rows(_appyc_global, 1)") < at("A = _appyc_dist_block(A, 1"));
        assert!(lines.iter().any(|l| l.ends_with("_appyc_r1, \"f.B\")")));
        assert!(at("B = _appyc_dist_block") < at("torch.zeros(4"));
        assert!(at("torch.zeros(4") < at("_launch_d(A, B)"));
        assert!(at("_launch_d(A, B)") < at("A = _appyc_dist_gather(_appyc_global[0], A, 1)"));
        assert_eq!(lines[lines.len() - 2], "  else:");
        assert_eq!(lines[lines.len() - 1], "      _launch_s(A, B)");
    }
}
