"""Issue 20: the figures beside the rounds check that no command prints on its own.

    python analysis/results/retest_rounds_detail.py   # -> analysis/results/retest_rounds_detail.md

* single rounds compared (round 0 of `rounds_a.h5` against round 0 of `rounds_b.h5`, and the
  rounds of `rounds_a.h5` against each other), with `analysis/retest.py`'s measure;
* System 1's picks per kernel in `benchmarks/results/system1_eval_guard_choice.json` (judged on
  the single measurement) and `benchmarks/results/system1_eval_rounds.json` (fft, nbody, gemm
  judged on their rounds' medians): geometric mean % of best and share within 5 %.
"""

import json
import math
from collections import defaultdict
from pathlib import Path

import numpy as np

from hpcds1mpi.analysis.retest import overall, problem_rows
from hpcds1mpi.records.telemetry import read_runs

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data" / "reference_choice"
lines = ["# Rounds check, in detail (issue 20)", "",
         "`python analysis/results/retest_rounds_detail.py`.", "",
         "| compared | problems | moved (median) | same best | retest ceiling geomean | within 5 % |",
         "| --- | --- | --- | --- | --- | --- |"]
a, b = read_runs(DATA / "rounds_a.h5"), read_runs(DATA / "rounds_b.h5")
pairs = [("round 0 of rounds_a vs round 0 of rounds_b", a[a.seed == 0], b[b.seed == 0])]
pairs += [(f"rounds_a round {x} vs round {y}", a[a.seed == x], a[a.seed == y])
          for x, y in ((0, 1), (1, 2), (0, 2))]
for name, first, second in pairs:
    t = overall(problem_rows(first, second))
    lines.append(f"| {name} | {t['problems']} | {100 * t['moved_median']:.0f} % | "
                 f"{100 * t['same_best']:.0f} % | {100 * t['ceiling']:.1f} % | "
                 f"{100 * t['ceiling_within_5pct']:.0f} % |")
lines += ["", "System 1's leave-size-out picks per kernel (geometric mean % of best / share within 5 %):",
          "", "| kernel | single measurement | fft, nbody, gemm on their rounds |", "| --- | --- | --- |"]
cols = []
for f in ("system1_eval_guard_choice.json", "system1_eval_rounds.json"):
    by = defaultdict(list)
    for p in json.loads((ROOT / "benchmarks" / "results" / f).read_text())["leave_size_out_picks"]:
        by[p["workload"]].append(max(p["pct_of_best"] / 100, 1e-3))
        by["all"].append(max(p["pct_of_best"] / 100, 1e-3))
    cols.append({w: f"{100 * math.exp(np.mean(np.log(v))):.1f} % / "
                    f"{100 * np.mean(np.array(v) >= 1 / 1.05):.0f} %" for w, v in by.items()})
for w in sorted(cols[0], key=lambda w: (w == "all", w)):
    lines.append(f"| {w} | {cols[0][w]} | {cols[1].get(w, '-')} |")
text = "\n".join(lines) + "\n"
(ROOT / "analysis" / "results" / "retest_rounds_detail.md").write_text(text)
print(text, end="")
