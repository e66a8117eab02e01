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
  noise, ``n = 2 (2 cv / 0.05)^2`` (both configurations measured n times; a planning figure);
* ``ceiling`` / ``ceiling_within_5pct`` — the *re-measurement ceiling*: every configuration's
  repeats are resampled (bootstrap, as if the problem were measured again with as many repeats)
  and the configuration that is best on all the repeats is scored against the resampled best
  (geometric mean of best / its runtime, and the share of draws within 5 %). A picker that knew
  the true order would score about this against data this noisy: what any model's "% of best"
  on the file can reach.

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
#: Bootstrap draws of the re-measurement ceiling (seeded: the figure is reproducible).
DRAWS = 400


def remeasure_ceiling(walls: list[np.ndarray], draws: int = DRAWS, seed: int = 0) -> tuple:
    """(geometric-mean score, share within 5 %) of the configuration best on all of ``walls``
    (one array of repeat times per configuration) when each is measured again: its repeats
    resampled with replacement, the median taken, scored against the resampled best."""
    rng = np.random.default_rng(seed)
    true_best = int(np.argmin([np.median(w) for w in walls]))
    medians = np.stack([np.median(rng.choice(w, size=(draws, len(w))), axis=1) for w in walls])
    score = medians.min(axis=0) / medians[true_best]
    return float(np.exp(np.log(score).mean())), float((score >= 1 / (1 + RESOLVABLE_GAP)).mean())


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
        every = [walls.get(r) for r in sub["run_id"]]  # a run without repeats: its median
        every = [w if w is not None and len(w) else np.array([t], float)
                 for w, t in zip(every, sub["runtime_s"].to_numpy(float))]
        ceiling, ceiling_within = remeasure_ceiling(every)
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
            "ceiling": ceiling, "ceiling_within_5pct": ceiling_within,
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
            **_ceilings(mine),
        })
    return table


def _ceilings(rows: list[dict]) -> dict:
    """The re-measurement ceiling over ``rows``' problems, aggregated as System 1's evaluation
    aggregates picks: geometric mean over problems, mean share within 5 %."""
    return {"ceiling": float(np.exp(np.mean([math.log(r["ceiling"]) for r in rows]))),
            "ceiling_within_5pct": float(np.mean([r["ceiling_within_5pct"] for r in rows]))}


def overall(rows: list[dict]) -> dict:
    """The ceiling over every problem of the file."""
    return {"problems": len(rows), **_ceilings(rows)}


def markdown(source: str, table: list[dict], total: dict | None = None) -> str:
    """The per-kernel table as markdown."""
    lines = [f"# Best vs runner-up in `{source}`", "",
             "Medians over each kernel's problems (workload, size, nodes). `separated`: share of "
             "problems whose best and runner-up differ by more than 2 standard errors of their "
             "repeats; `runner-up within 5 %`: share where the choice between them costs under 5 %; "
             "`repeats for 5 %`: repeats per configuration that would separate a 5 % gap at the "
             "measured cv (planning figure, `2 (2 cv / 0.05)^2`). `ceiling`: the re-measurement "
             f"ceiling ({DRAWS} bootstrap draws of every configuration's repeats): the geometric-"
             "mean % of best, and the share of problems within 5 %, that the configuration best "
             "on all repeats gets when the problem is measured again; no model's pick can "
             "expect more on this file.", "",
             "| kernel | problems | configs | noise (range/median) | cv | best→runner-up gap "
             "| separated | runner-up within 5 % | repeats | repeats for 5 % | ceiling geomean "
             "| ceiling within 5 % |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for t in table:
        lines.append(f"| {t['workload']} | {t['problems']} | {t['configurations']:.0f} | "
                     f"{t['noise']:.1%} | {t['cv']:.1%} | {t['gap']:.1%} | {t['separated']:.0%} | "
                     f"{t['within_5pct']:.0%} | {t['repeats']:.0f} | {t['repeats_needed']:.0f} | "
                     f"{t['ceiling']:.1%} | {t['ceiling_within_5pct']:.0%} |")
    if total:
        lines.append(f"| **all** | {total['problems']} | | | | | | | | | "
                     f"**{total['ceiling']:.1%}** | **{total['ceiling_within_5pct']:.0%}** |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("telemetry")
    parser.add_argument("--json", dest="json_out")
    parser.add_argument("--markdown", dest="md_out")
    parser.add_argument("--force", action="store_true",
                        help="replace results files already there")
    args = parser.parse_args(argv)
    from hpcds1mpi.analysis.h1_results import claim_files

    claim_files([p for p in (args.json_out, args.md_out) if p], args.force,
                "--json / --markdown path")
    from hpcds1mpi.records.telemetry import read_detail, read_runs

    rows = problem_rows(read_runs(args.telemetry), read_detail(args.telemetry, "repeats"))
    if not rows:
        print(f"choice_noise: no problem in {args.telemetry} has two ok configurations with "
              "repeats; measure more configurations", file=sys.stderr)
        return 2
    table, total = per_kernel(rows), overall(rows)
    report(markdown(args.telemetry, table, total), args.md_out, args.json_out,
           {"source": args.telemetry, "kernels": table, "all": total, "problems": rows})
    return 0


def report(text: str, md_out: str | None, json_out: str | None, payload: dict) -> None:
    """Print ``text``; write it to ``md_out`` and ``payload`` to ``json_out`` when given."""
    print(text, end="")
    if md_out:
        with open(md_out, "w") as fh:
            fh.write(text)
    if json_out:
        with open(json_out, "w") as fh:
            json.dump(payload, fh, indent=1)


if __name__ == "__main__":
    sys.exit(main())
