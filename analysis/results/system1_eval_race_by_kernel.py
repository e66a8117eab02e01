"""Issue 20: System 1's leave-size-out picks of `benchmarks/results/system1_eval_race_*.json`
per kernel (geometric mean % of best, share within 5 %), and on fft + nbody together
(race_{a,b}: fft and nbody from a race file, the rest from the rounds files; race_full_a: every
kernel from a race file; race_pooled: both race sweeps of every kernel pooled, the recipe
chosen per fold, or `_shipped`: the shipped recipe fixed).

    python analysis/results/system1_eval_race_by_kernel.py   # -> ..._by_kernel.md beside it
"""

import json
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results"
RUNS = ["race_a_3", "race_a_all", "race_b_3", "race_b_all", "race_full_a_3", "race_full_a_all",
        "race_pooled_3", "race_pooled_all", "race_pooled_shipped"]


def cell(picks) -> str:
    pct = np.array([p["pct_of_best"] for p in picks], float)
    return (f"{np.exp(np.log(pct).mean()):.1f} % / {100 * (pct >= 100 / 1.05).mean():.0f} % "
            f"({len(pct)})")


lines = ["# System 1 per kernel on the race files (issue 20)", "",
         "`python analysis/results/system1_eval_race_by_kernel.py`: each cell geometric mean % "
         "of the best / share within 5 % (picks), from `benchmarks/results/system1_eval_<run>.json`.",
         ""]
table = {run: json.loads((RESULTS / f"system1_eval_{run}.json").read_text())["leave_size_out_picks"]
         for run in RUNS}
kernels = sorted({p["workload"] for picks in table.values() for p in picks})
lines += ["| kernel | " + " | ".join(RUNS) + " |", "| --- |" + " --- |" * len(RUNS)]
for kernel in kernels + ["fft + nbody"]:
    wanted = {"fft", "nbody"} if kernel == "fft + nbody" else {kernel}
    lines.append(f"| {kernel} | " + " | ".join(
        cell([p for p in table[run] if p["workload"] in wanted]) for run in RUNS) + " |")
out = Path(__file__).with_suffix(".md")
out.write_text("\n".join(lines) + "\n")
print("\n".join(lines))
