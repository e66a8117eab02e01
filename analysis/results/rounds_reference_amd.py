"""Issue 20: the reference measured in 3 rounds on one machine (session 12's AMD EPYC VM).

    python analysis/results/rounds_reference_amd.py   # -> analysis/results/rounds_reference_amd.md

Per kernel, how well one round's best holds in another round of the same sweep
(`analysis/retest.py`'s measure on rounds 0 vs 1, 1 vs 2, 0 vs 2: the median over the three
pairs), the noise between single rounds that each configuration's 3-round median averages out.
"""

from pathlib import Path

import numpy as np
import pandas as pd

from hpcds1mpi.analysis.retest import overall, problem_rows
from hpcds1mpi.records.telemetry import read_runs

DATA = Path(__file__).resolve().parents[2] / "data" / "reference_choice"
FILES = ["rounds_fft_nbody.h5", "rounds_gemm_amd.h5", "rounds_mltrain.h5", "rounds_rest.h5",
         "rounds_rest_large.h5"]

runs = pd.concat([read_runs(DATA / f) for f in FILES], ignore_index=True)
machines = sorted(runs["machine_id"].astype(str).unique())
lines = ["# The reference in 3 rounds on one machine (issue 20)", "",
         f"`python analysis/results/rounds_reference_amd.py`; files: {', '.join(FILES)}; "
         f"machine(s): {', '.join(machines)}.", "",
         "One round's best judged on another round of the same sweep (median over the pairs "
         "0-1, 1-2, 0-2):", "",
         "| kernel | problems | configurations (median) | moved (median) | same best | "
         "round-vs-round ceiling geomean | within 5 % |", "| --- | --- | --- | --- | --- | --- | --- |"]
for kernel, sub in runs.groupby("workload", sort=True):
    stats = [overall(problem_rows(sub[sub.seed == x], sub[sub.seed == y]))
             for x, y in ((0, 1), (1, 2), (0, 2))]
    rows = problem_rows(sub[sub.seed == 0], sub[sub.seed == 1])

    def med(key):
        return float(np.median([s[key] for s in stats]))

    lines.append(f"| {kernel} | {stats[0]['problems']} | "
                 f"{int(np.median([r['configs'] for r in rows]))} | "
                 f"{100 * med('moved_median'):.0f} % | {100 * med('same_best'):.0f} % | "
                 f"{100 * med('ceiling'):.1f} % | {100 * med('ceiling_within_5pct'):.0f} % |")
every = [overall(problem_rows(runs[runs.seed == x], runs[runs.seed == y]))
         for x, y in ((0, 1), (1, 2), (0, 2))]
lines.append(f"| all | {every[0]['problems']} | | "
             f"{100 * float(np.median([s['moved_median'] for s in every])):.0f} % | "
             f"{100 * float(np.median([s['same_best'] for s in every])):.0f} % | "
             f"{100 * float(np.median([s['ceiling'] for s in every])):.1f} % | "
             f"{100 * float(np.median([s['ceiling_within_5pct'] for s in every])):.0f} % |")
out = Path(__file__).with_suffix(".md")
out.write_text("\n".join(lines) + "\n")
print("\n".join(lines))
