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
PAIRS = ((0, 1), (1, 2), (0, 2))


def row(name: str, sub, configs: str) -> str:
    """One table row: ``retest``'s measure on each pair of rounds of ``sub``, the median."""
    stats = [overall(problem_rows(sub[sub.seed == x], sub[sub.seed == y])) for x, y in PAIRS]

    def med(key):
        return float(np.median([s[key] for s in stats]))

    return (f"| {name} | {stats[0]['problems']} | {configs} | "
            f"{100 * med('moved_median'):.0f} % | {100 * med('same_best'):.0f} % | "
            f"{100 * med('ceiling'):.1f} % | {100 * med('ceiling_within_5pct'):.0f} % |")


for kernel, sub in runs.groupby("workload", sort=True):
    configs = [r["configs"] for r in problem_rows(sub[sub.seed == 0], sub[sub.seed == 1])]
    lines.append(row(kernel, sub, str(int(np.median(configs)))))
lines.append(row("all", runs, ""))
out = Path(__file__).with_suffix(".md")
out.write_text("\n".join(lines) + "\n")
print("\n".join(lines))
