#!/usr/bin/env python3
"""The markdown table and PNG chart of bench/gpu_tolerance_loops.py's JSON (one run).

    python bench/tolerance_loops_table.py RUN.json OUT_STEM ["what new is" ["what old is"]]
        (writes OUT_STEM.md, .png)
"""
import json
import sys

WHAT = {
    "relax_1d": "1-D relaxation (relax_tol's math), N = 2^16",
    "jacobi_2d": "2-D Jacobi, 5 points",
}


def main(run, stem, new_is, old_is="4371136"):
    r = json.load(open(run))
    cases = [c for c in ("relax_1d", "jacobi_2d") if c in r]
    lines = [f"Relaxations to a tolerance, {r['device']}, one process (`{run}`). `new`: {new_is}; "
             f"`old`: {old_is}. "
             "`bare np.max`: the test as NumPy code after the sweep; `clause`: the sweep reduces "
             "`reduction(max:diff)` itself. Every result's sweep count and arrays equal NumPy's "
             "(1e-12). Steady state: median of calls timed as bench_npbench times them, the appyc "
             "builds alternating; first call: compile and tuning into an empty appyc cache (the "
             "machine's Triton cache warm from the builds before it in the run).", ""]
    for c in cases:
        impls = r[c]["impls"]
        jax = impls.get("JAX jit", {}).get("ms")
        shape = " x ".join(str(d) for d in r[c]["shape"])
        lines += [f"### {WHAT[c]} ({shape}, {r[c]['sweeps']} sweeps)", "",
                  "| implementation | steady ms | first call s | correct | vs JAX jit |",
                  "|---|---|---|---|---|"]
        for name, v in impls.items():
            ratio = f"{jax / v['ms']:.2f}x" if jax else "-"
            lines.append(f"| {name} | {v['ms']:.3f} | {v['first_s']:.2f} | "
                         f"{'yes' if v['ok'] else 'NO'} | {ratio} |")
        lines.append("")
    open(stem + ".md", "w").write("\n".join(lines))
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, len(cases), figsize=(6 * len(cases), 3.0))
    axes = axes if len(cases) > 1 else [axes]
    for ax, c in zip(axes, cases):
        impls = r[c]["impls"]
        names = list(impls)
        colors = ["#4c72b0" if n.startswith("appyc new") else "#8da0cb" if n.startswith("appyc old")
                  else "#c44e52" for n in names]
        ax.barh(names, [impls[n]["ms"] for n in names], color=colors)
        for i, n in enumerate(names):
            ax.text(impls[n]["ms"], i, f" {impls[n]['ms']:.1f} ms", va="center", fontsize=8)
        ax.set_xlabel("ms per call (steady state), lower is better")
        ax.set_title(f"{WHAT[c]}, {r[c]['sweeps']} sweeps", fontsize=9)
        ax.set_xlim(0, 1.25 * max(impls[n]["ms"] for n in names))
        ax.invert_yaxis()
    fig.suptitle(f"Relaxation to a tolerance ({r['device']})", fontsize=10)
    fig.tight_layout()
    fig.savefig(stem + ".png", dpi=120)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else "this stop's compiler",
         *sys.argv[4:5])
