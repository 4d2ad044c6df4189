"""Chart of cold first calls per NPBench case, before and after the start-up builds and the
flattened 3-D loops (performance.md 50): `before` from bench/gpu_cold_call.py's JSON (the code
before both changes), `after` from bench_npbench.py's JSON (appyc's cold first call), both on
one H100, with issue 23's 2 s target drawn.

    python3 bench/cold_call_chart.py bench/cold_call/before_h100.json \
        bench/npbench_first_calls_h100.json bench/npbench_first_calls_h100.png
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(before_path, after_path, png):
    before = {r["case"]: r["first_s"] for r in json.load(open(before_path)) if r["status"] == "ok"}
    rows = json.load(open(after_path))["rows"]
    after = {}
    for r in rows:
        if r.get("impl") == "appyc" and r.get("status") == "ok":
            after[r["kernel"]] = r["first_s"]  # a case name: `gemver`, `gemver.natural`
    cases = [c for c in before if c in after]
    fig, ax = plt.subplots(figsize=(12, 4.5))
    xs = range(len(cases))
    ax.bar([x - 0.2 for x in xs], [before[c] for c in cases], 0.4, label="before (nested loops, no start-up builds)")
    ax.bar([x + 0.2 for x in xs], [after[c] for c in cases], 0.4, label="after")
    ax.axhline(2.0, color="red", linestyle="--", linewidth=1, label="issue 23 target, 2 s")
    ax.set_xticks(list(xs))
    ax.set_xticklabels(cases, rotation=60, ha="right", fontsize=8)
    ax.set_ylabel("cold first call, s")
    ax.set_title("appyc cold first call (empty caches), NPBench paper size, one H100")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(png, dpi=120)
    print(f"wrote {png}: {len(cases)} cases")


if __name__ == "__main__":
    main(*sys.argv[1:4])
