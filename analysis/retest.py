"""Test-retest: does a problem's fastest configuration stay the fastest when measured again?

    python -m hpcds1mpi.analysis.retest FIRST SECOND [--first-rounds N] [--json OUT]
        [--markdown OUT]

``choice_noise``'s re-measurement ceiling resamples the repeats of one measurement, which were
taken back to back: it sees the scatter within a run, not a machine whose speed drifts between
runs (a shared host, frequency, cache and memory neighbours). Measuring the same problems again
later does. For every problem (workload, size, partition, nodes) with at least two ``ok``
configurations in both files, on the configurations both measured:

* ``first_on_second`` — the runtime of the second file's best over the first file's best
  configuration's runtime *in the second file* (1: the first file's pick is still the best);
  ``second_on_first`` the other way round;
* ``moved`` — the median over configurations of |log(second runtime / first runtime)|.

The *retest ceiling* is the geometric mean of both directions over all problems, and the share
of directions within 5 %: what a picker that had seen one measurement perfectly would score
when judged on the other. A file whose retest ceiling is low cannot rank a model better than
that, whatever its within-run ceiling says. Nothing is modelled: runtimes as stored.

``--first-rounds N`` keeps each sweep's first N rounds only (seeds from its lowest on), e.g.
to judge a sweep's race rounds (:mod:`hpcds1mpi.measure.race`) against the rounds before them.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from hpcds1mpi.analysis.choice_noise import CONFIG, PROBLEM, RESOLVABLE_GAP, report


def problem_rows(first, second) -> list[dict]:
    """One dict per problem measured in both runs tables (see the module docstring)."""
    from hpcds1mpi.records.rounds import collapse_rounds

    # The same problem on another machine is another problem (a different CPU's speeds are no
    # retest): the machine is part of the key wherever both tables say which it was.
    machine = ["machine_id"] if {"machine_id"} <= set(first) & set(second) else []
    keys = machine + PROBLEM + CONFIG

    def ok(runs):
        # A sweep in rounds: one outcome per configuration first (a failed round stays failed).
        runs = collapse_rounds(runs)
        runs = runs[runs["status"] == "ok"]
        return runs.groupby(keys)["runtime_s"].median()

    both = ok(first).to_frame("first").join(ok(second).to_frame("second"), how="inner")
    both = both[(both["first"] > 0) & (both["second"] > 0)]

    problem = len(machine) + len(PROBLEM)

    def label(sub, i):
        return "/".join(str(v) for v in sub.index[i][problem:])

    out = []
    for key, sub in both.groupby(level=list(range(problem)), sort=True):
        if len(sub) < 2:
            continue
        key = key[len(machine):]
        a, b = sub["first"].to_numpy(float), sub["second"].to_numpy(float)
        best_a, best_b = int(np.argmin(a)), int(np.argmin(b))
        out.append({**dict(zip(PROBLEM, (k.item() if hasattr(k, "item") else k for k in key))),
                    "configs": int(len(sub)), "best_first": label(sub, best_a),
                    "best_second": label(sub, best_b),
                    "first_on_second": float(b.min() / b[best_a]),
                    "second_on_first": float(a.min() / a[best_b]),
                    "moved": float(np.median(np.abs(np.log(b / a))))})
    return out


def overall(rows: list[dict]) -> dict:
    """The retest ceiling over ``rows``: geometric mean and share within 5 % of both directions."""
    scores = np.array([r[d] for r in rows for d in ("first_on_second", "second_on_first")])
    return {"problems": len(rows),
            "ceiling": float(np.exp(np.log(scores).mean())),
            "ceiling_within_5pct": float((scores >= 1 / (1 + RESOLVABLE_GAP)).mean()),
            "same_best": float(np.mean([r["best_first"] == r["best_second"] for r in rows])),
            "moved_median": float(np.median([r["moved"] for r in rows]))}


def markdown(first: str, second: str, rows: list[dict], total: dict) -> str:
    lines = [f"# Test-retest: `{first}` against `{second}`", "",
             "Per problem, on the configurations both measured: the other measurement's best "
             "over each measurement's best configuration judged in the other (100 %: still the "
             "best), and the median |log ratio| of a configuration's two runtimes. "
             "`python -m hpcds1mpi.analysis.retest FIRST SECOND`.", "",
             "| problem | configs | best (first) | best (second) | first's best on second "
             "| second's best on first | moved |", "| --- | --- | --- | --- | --- | --- | --- |"]
    where = len({(r["partition"], r["nodes"]) for r in rows}) > 1  # else one place for all
    for r in rows:
        name = f"{r['workload']} {r['size']}" + (
            f" ({r['partition']}, {r['nodes']} nodes)" if where else "")
        lines.append(f"| {name} | {r['configs']} | {r['best_first']} | "
                     f"{r['best_second']} | {100 * r['first_on_second']:.0f} % | "
                     f"{100 * r['second_on_first']:.0f} % | {100 * r['moved']:.0f} % |")
    lines += ["", f"**Retest ceiling** over {total['problems']} problems: geometric mean "
              f"{100 * total['ceiling']:.1f} %, {100 * total['ceiling_within_5pct']:.0f} % within "
              f"5 %; the same best in {100 * total['same_best']:.0f} %; a configuration's runtime "
              f"moved a median {100 * total['moved_median']:.0f} % between the two."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("first")
    parser.add_argument("second")
    from hpcds1mpi.records import rounds

    rounds.add_arguments(parser, pool=False)
    parser.add_argument("--json", dest="json_out")
    parser.add_argument("--markdown", dest="md_out")
    parser.add_argument("--force", action="store_true",
                        help="replace results files already there")
    args = parser.parse_args(argv)
    from hpcds1mpi.analysis.h1_results import claim_files

    claim_files([p for p in (args.json_out, args.md_out) if p], args.force,
                "--json / --markdown path")
    from hpcds1mpi.records.telemetry import read_runs

    from hpcds1mpi.errors import HpcdsError

    try:
        first, second = read_runs(args.first), read_runs(args.second)
        if args.first_rounds is not None:
            first = rounds.first_rounds(first, args.first_rounds)
            second = rounds.first_rounds(second, args.first_rounds)
    except (OSError, HpcdsError) as exc:
        print(f"retest: {exc}; give two telemetry files written by hpcds1mpi sweep",
              file=sys.stderr)
        return 2
    rows = problem_rows(first, second)
    if not rows:
        machines = [sorted(set(t["machine_id"].astype(str))) if "machine_id" in t else []
                    for t in (first, second)]
        other = (f" on the same machine (first: {', '.join(machines[0])}; second: "
                 f"{', '.join(machines[1])})" if machines[0] and machines[1]
                 and not set(machines[0]) & set(machines[1]) else "")
        print(f"retest: {args.first} and {args.second} share no problem with two ok "
              f"configurations{other}; measure the same problems in both, on one machine",
              file=sys.stderr)
        return 2
    total = overall(rows)
    report(markdown(args.first, args.second, rows, total), args.md_out, args.json_out,
           {"first": args.first, "second": args.second, "first_rounds": args.first_rounds,
            "all": total, "problems": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
