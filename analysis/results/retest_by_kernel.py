"""Issue 20: the race retests (`retest_race_*.json`) per kernel, from their per-problem rows.

    python analysis/results/retest_by_kernel.py   # -> analysis/results/retest_by_kernel.md
"""

import json
from pathlib import Path

import numpy as np

HERE = Path(__file__).parent
FILES = [("first round", "_first1"), ("first 3 rounds", "_first3"), ("3 rounds + race", "")]
PAIRS = ["retest_race_a_vs_race_b", "retest_race_gemm_a_vs_b"]

lines = ["# Race retests per kernel (issue 20)", "",
         "`python analysis/results/retest_by_kernel.py`: each `retest_*.json`'s problems grouped "
         "by kernel; the retest ceiling (geometric mean of both directions), the share of "
         "directions within 5 %, the share of problems with the same best.", "",
         "| file pair | rounds used | kernel | problems | geomean | within 5 % | same best |",
         "| --- | --- | --- | --- | --- | --- | --- |"]
for pair in PAIRS:
    for label, suffix in FILES:
        rows = json.loads((HERE / f"{pair}{suffix}.json").read_text())["problems"]
        for kernel in sorted({r["workload"] for r in rows}):
            mine = [r for r in rows if r["workload"] == kernel]
            scores = np.array([r[d] for r in mine for d in ("first_on_second", "second_on_first")])
            lines.append(f"| {pair} | {label} | {kernel} | {len(mine)} | "
                         f"{100 * np.exp(np.log(scores).mean()):.1f} % | "
                         f"{100 * (scores >= 1 / 1.05).mean():.0f} % | "
                         f"{100 * np.mean([r['best_first'] == r['best_second'] for r in mine]):.0f} % |")
(HERE / "retest_by_kernel.md").write_text("\n".join(lines) + "\n")
print("\n".join(lines))
