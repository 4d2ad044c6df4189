#!/usr/bin/env python3
"""The markdown table and PNG chart of bench/gpu_bare_reduction.py's JSON (one run).

    python bench/bare_reduction_table.py RUN.json OUT_STEM   (writes OUT_STEM.md and OUT_STEM.png)
"""
import json
import sys


def main(run, stem):
    r = json.load(open(run))
    impls = r["impls"]
    jax = impls.get("JAX jit", {}).get("ms")
    lines = [f"relax_tol's math, N = 2^16, {r['sweeps']} sweeps, one H200, one process (`{run}`); "
             "every result's sweep count and arrays equal NumPy's. First calls are of this process; "
             "the machine's Triton cache may be warm from an earlier run.", "",
             "| implementation | steady ms | first call s | correct | vs JAX jit |", "|---|---|---|---|---|"]
    for name, v in impls.items():
        ratio = f"{jax / v['ms']:.2f}x" if jax else "-"
        lines.append(f"| {name} | {v['ms']:.3f} | {v['first_s']:.2f} | {'yes' if v['ok'] else 'NO'} | {ratio} |")
    open(stem + ".md", "w").write("\n".join(lines) + "\n")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    names = list(impls)
    fig, ax = plt.subplots(figsize=(7, 2.6))
    ax.barh(names, [impls[n]["ms"] for n in names], color=["#4c72b0", "#55a868", "#c44e52"][:len(names)])
    for i, n in enumerate(names):
        ax.text(impls[n]["ms"], i, f" {impls[n]['ms']:.2f} ms", va="center")
    ax.set_xlabel("ms per call (steady state), lower is better")
    ax.set_title("relax to a tolerance (one H200)", fontsize=10)
    ax.set_xlim(0, 1.2 * max(impls[n]["ms"] for n in names))
    ax.invert_yaxis()
    fig.tight_layout()
    fig.savefig(stem + ".png", dpi=120)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
