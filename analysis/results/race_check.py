"""Issue 20: what race rounds (``hpcds1mpi.measure.race``) changed in a sweep measured in rounds.

    python analysis/results/race_check.py NAME FILE...   # -> analysis/results/race_check_NAME.md

Per kernel: how many problems raced, how many runs that took, how often the race changed which
configuration is best (the median of the first ``rounds`` against the median of every round),
the best's lead over the runner-up before and after, and how the race rounds ran against the
same configuration's first rounds (a drift of the machine while the sweep ran).
"""

import json
import sys
from pathlib import Path

import h5py
import numpy as np
import pandas as pd

from hpcds1mpi.records.rounds import collapse_rounds
from hpcds1mpi.records.telemetry import read_runs

PROBLEM = ["workload", "size", "sweep_id"]
CONFIG = ["nodes", "ranks_per_node", "threads", "device", "precision"]


def best_and_lead(folded: pd.DataFrame) -> pd.DataFrame:
    """Per problem: the best configuration's label and its lead over the runner-up (runner-up
    median / best median - 1), from one folded row per configuration (ok rows only)."""
    ok = folded[folded["status"] == "ok"].copy()
    ok["label"] = ok[CONFIG].astype(str).agg("x".join, axis=1)
    out = []
    for key, group in ok.groupby(PROBLEM, sort=True):
        times = group.sort_values("runtime_s")
        lead = (times["runtime_s"].iloc[1] / times["runtime_s"].iloc[0] - 1
                if len(times) > 1 else np.inf)
        out.append((*key, times["label"].iloc[0], lead))
    return pd.DataFrame(out, columns=[*PROBLEM, "best", "lead"])


def read(path: str) -> pd.DataFrame:
    """The runs of one file, each with its round (0 = the plan's first seed) and whether that
    round is a race round."""
    with h5py.File(path, "r") as f:
        sweep = json.loads(f.attrs["plan"]).get("sweep", {})
    runs = read_runs(path)
    runs["round"] = runs["seed"].astype(int) - int(sweep.get("seed", 0))
    runs["race"] = runs["round"] >= int(sweep.get("rounds", 1))
    return runs


def row(name: str, part: pd.DataFrame, race_part: pd.DataFrame, drift: pd.Series) -> str:
    spread = (f"{drift.median():.2f} ({drift.min():.2f}-{drift.max():.2f})" if len(drift)
              else "-")
    return (f"| {name} | {len(part)} | {race_part.groupby(PROBLEM).ngroups} | {len(race_part)} | "
            f"{100 * (part['best_before'] != part['best_after']).mean():.0f} % | "
            f"{100 * part['lead_before'].median():.1f} % -> "
            f"{100 * part['lead_after'].median():.1f} % | "
            f"{100 * (part['lead_before'] >= 0.05).mean():.0f} % -> "
            f"{100 * (part['lead_after'] >= 0.05).mean():.0f} % | {spread} |")


def main(name: str, files: list[str]) -> str:
    runs = pd.concat([read(f).assign(file=f) for f in files], ignore_index=True)
    raced = runs[runs["race"]]
    plain = runs.drop(columns=["round", "race", "file"])
    before = best_and_lead(collapse_rounds(plain[~runs["race"]]))
    after = best_and_lead(collapse_rounds(plain))
    both = before.merge(after, on=PROBLEM, suffixes=("_before", "_after"))
    key = PROBLEM + CONFIG
    ok = runs[runs["status"] == "ok"]
    first = ok[~ok["race"]].groupby(key)["runtime_s"].median()
    later = ok[ok["race"]].groupby(key)["runtime_s"].median()
    drift = (later / first.reindex(later.index)).dropna()
    when = runs["started_at"].astype(float)
    took = runs["finished_at"].astype(float) - when
    cost = [f"{Path(f).name}: race {took[(runs['file'] == f) & runs['race']].sum():.0f} s of run "
            f"time beside {took[(runs['file'] == f) & ~runs['race']].sum():.0f} s for its rounds"
            for f in files]
    lines = [f"# What race rounds changed: {name} (issue 20)", "",
             f"`python analysis/results/race_check.py {name} {' '.join(files)}`; machine(s): "
             f"{', '.join(sorted(runs['machine_id'].astype(str).unique()))}; measured "
             f"{pd.Timestamp(when.min(), unit='s'):%Y-%m-%d %H:%M}-"
             f"{pd.Timestamp(when.max(), unit='s'):%H:%M} UTC; {len(raced)} race runs "
             f"({'; '.join(cost)}).", "",
             "| kernel | problems | raced | race runs | best changed by the race | best's lead "
             "over the runner-up, median (before -> after) | lead >= 5 % (before -> after) | "
             "race rounds / first rounds of the raced configurations (median, range) |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for kernel, part in both.groupby("workload", sort=True):
        lines.append(row(kernel, part, raced[raced["workload"] == kernel],
                         drift[drift.index.get_level_values("workload") == kernel]))
    lines.append(row("all", both, raced, drift))
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit("usage: python analysis/results/race_check.py NAME FILE...")
    text = main(sys.argv[1], sys.argv[2:])
    (Path(__file__).parent / f"race_check_{sys.argv[1]}.md").write_text(text)
    print(text)
