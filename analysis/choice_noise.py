"""How well a telemetry file separates each problem's best configuration from its runner-up.

    python -m hpcds1mpi.analysis.choice_noise TELEMETRY [--json OUT] [--markdown OUT]

A problem is (workload, size, partition, nodes); its configurations are the rest of the knobs.
For every problem with at least two ``ok`` configurations this reports, from the measured
repeats (the ``repeats`` table: one wall time per repeat, the slowest rank's):

* ``noise`` — the run's (max - min) / median over its repeats, as stored;
* ``cv`` — the repeats' coefficient of variation (standard deviation / mean);
* ``gap`` — the runner-up's median runtime over the best's, minus one;
* ``separated`` — whether the gap is larger than twice the standard error of the difference of
  the two means (a two-sided Welch z of 2, about 95 %): the measurement can tell them apart;
* ``repeats_needed`` — the repeats per configuration that would separate a gap of 5 % at that
  noise, ``n = 2 (2 cv / 0.05)^2`` (both configurations measured n times; a planning figure).

Per kernel it prints the medians and the share of separated problems, so repeats can be chosen
from the noise (``plans/reference_choice.toml``). Nothing here is modelled: every figure comes
from the stored repeats.
"""

from __future__ import annotations

import argparse
import json
import math
import sys

import numpy as np

PROBLEM = ["workload", "size", "partition", "nodes"]
CONFIG = ["ranks_per_node", "threads", "device", "precision"]
RESOLVABLE_GAP = 0.05


def problem_rows(runs, repeats) -> list[dict]:
    """One dict per problem: best and runner-up, their gap and whether repeats separate them."""
    ok = runs[runs["status"] == "ok"]
    walls = repeats.groupby("run_id")["wall_s"].apply(lambda s: s.to_numpy(float))
    out = []
    for key, sub in ok.groupby(PROBLEM, sort=True):
        if len(sub) < 2:
            continue
        sub = sub.sort_values("runtime_s")
        best, second = sub.iloc[0], sub.iloc[1]
        a, b = walls.get(best["run_id"]), walls.get(second["run_id"])
        if a is None or b is None or len(a) < 2 or len(b) < 2:
            continue
        gap = float(second["runtime_s"] / best["runtime_s"] - 1.0)
        se = math.sqrt(a.var(ddof=1) / len(a) + b.var(ddof=1) / len(b))
        cv = float(np.median([a.std(ddof=1) / a.mean(), b.std(ddof=1) / b.mean()]))
        out.append({
            **dict(zip(PROBLEM, (k.item() if hasattr(k, "item") else k for k in key))),
            "configurations": int(len(sub)),
            "best": "/".join(str(best[c]) for c in CONFIG),
            "runner_up": "/".join(str(second[c]) for c in CONFIG),
            "gap": gap, "cv": cv,
            "noise": float(np.nanmedian(sub["noise"].to_numpy(float))),
            "separated": bool(b.mean() - a.mean() > 2.0 * se),
            "repeats_needed": int(math.ceil(2 * (2 * cv / RESOLVABLE_GAP) ** 2)),
            "repeats": int(min(len(a), len(b))),
        })
    return out


def per_kernel(rows: list[dict]) -> list[dict]:
    """The per-kernel summary of :func:`problem_rows`."""
    kernels = sorted({r["workload"] for r in rows})
    table = []
    for name in kernels:
        mine = [r for r in rows if r["workload"] == name]
        med = (lambda col: float(np.median([r[col] for r in mine])))
        table.append({
            "workload": name, "problems": len(mine),
            "configurations": med("configurations"), "noise": med("noise"), "cv": med("cv"),
            "gap": med("gap"), "separated": sum(r["separated"] for r in mine) / len(mine),
            "within_5pct": sum(r["gap"] <= RESOLVABLE_GAP for r in mine) / len(mine),
            "repeats": med("repeats"), "repeats_needed": med("repeats_needed"),
        })
    return table


def markdown(source: str, table: list[dict]) -> str:
    """The per-kernel table as markdown."""
    lines = [f"# Best vs runner-up in `{source}`", "",
             "Medians over each kernel's problems (workload, size, nodes). `separated`: share of "
             "problems whose best and runner-up differ by more than 2 standard errors of their "
             "repeats; `runner-up within 5 %`: share where the choice between them costs under 5 %; "
             "`repeats for 5 %`: repeats per configuration that would separate a 5 % gap at the "
             "measured cv (planning figure, `2 (2 cv / 0.05)^2`).", "",
             "| kernel | problems | configs | noise (range/median) | cv | best→runner-up gap "
             "| separated | runner-up within 5 % | repeats | repeats for 5 % |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for t in table:
        lines.append(f"| {t['workload']} | {t['problems']} | {t['configurations']:.0f} | "
                     f"{t['noise']:.1%} | {t['cv']:.1%} | {t['gap']:.1%} | {t['separated']:.0%} | "
                     f"{t['within_5pct']:.0%} | {t['repeats']:.0f} | {t['repeats_needed']:.0f} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("telemetry")
    parser.add_argument("--json", dest="json_out")
    parser.add_argument("--markdown", dest="md_out")
    args = parser.parse_args(argv)
    from hpcds1mpi.records.telemetry import read_detail, read_runs

    rows = problem_rows(read_runs(args.telemetry), read_detail(args.telemetry, "repeats"))
    if not rows:
        print(f"choice_noise: no problem in {args.telemetry} has two ok configurations with "
              "repeats; measure more configurations", file=sys.stderr)
        return 2
    table = per_kernel(rows)
    text = markdown(args.telemetry, table)
    print(text, end="")
    if args.md_out:
        with open(args.md_out, "w") as fh:
            fh.write(text)
    if args.json_out:
        with open(args.json_out, "w") as fh:
            json.dump({"source": args.telemetry, "kernels": table, "problems": rows}, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
