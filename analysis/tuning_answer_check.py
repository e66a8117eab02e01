"""System 2's answer against its kept run, judged on another sweep of the same problems.

``benchmarks/tuning.py`` replays one telemetry: its "best" is the same measurement the answer
was picked from, so there the answer (the lowest run measured) is within 5 % whenever any run
was. This script judges the problems where the answer is not the run the search kept (the
report's ``answer`` and ``kept``: a faster run it set aside as within the noise) on *another*
sweep of the same machine and problems: is the answer faster than the kept run there, and
which of the two is within 5 % of that sweep's best?

    python analysis/tuning_answer_check.py REPORT.json OTHER.h5 [OTHER.h5 ...] [--out PATH]

``REPORT.json``: ``benchmarks/tuning.py --out`` of one set of sweeps (e.g. the ``_a`` files);
``OTHER``: the other sweeps (the ``_b`` files).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

METHODS = {"s1_s2": "System 1 + System 2", "s2_default": "System 2 from the default"}


def judge(report: dict, other: dict) -> dict:
    """Per method, the problems whose answer is not the kept run: (workload, size, answer /
    kept, answer / best, kept / best) in ``other`` ({(workload, size): {label: runtime}}), and
    a summary."""
    out = {}
    for key in METHODS:
        rows = []
        for e in report["per_problem"]:
            answer, kept = (e.get(key) or {}).get("answer"), (e.get(key) or {}).get("kept")
            times = other.get((e["workload"], int(e["size"])), {})
            if answer == kept or answer not in times or kept not in times:
                continue
            best, a, k = min(times.values()), times[answer], times[kept]
            rows.append((e["workload"], int(e["size"]), a / k, a / best, k / best))
        ratios = [r[2] for r in rows]
        out[key] = {"rows": rows, "notes": len(rows),
                    "answer_faster": sum(r < 1 for r in ratios),
                    "answer_within_5pct": sum(r[3] <= 1.05 for r in rows),
                    "kept_within_5pct": sum(r[4] <= 1.05 for r in rows),
                    "geomean_answer_over_kept": math.exp(sum(map(math.log, ratios)) / len(ratios))
                    if ratios else None}
    return out


def other_runtimes(files: list[str]) -> dict:
    """{(workload, size): {configuration label: median runtime}} of the successful runs."""
    from hpcds1mpi.config import OK, Configuration
    from hpcds1mpi.records import rounds

    runs = rounds.measured_outcomes(files, None, False)
    ok = runs[runs["status"] == OK]
    out: dict = {}
    for r in ok.itertuples(index=False):
        label = Configuration(int(r.nodes), int(r.ranks_per_node), int(r.threads),
                              str(r.device), str(r.precision)).label()
        out.setdefault((str(r.workload), int(r.size)), {})[label] = float(r.runtime_s)
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("report", help="benchmarks/tuning.py's .json")
    parser.add_argument("other", nargs="+", help="the other sweeps' telemetry (.h5)")
    parser.add_argument("--out", default=None, help="results path without suffix")
    parser.add_argument("--force", action="store_true",
                        help="replace results files already there")
    args = parser.parse_args(argv)
    if args.out:
        from hpcds1mpi.analysis.h1_results import claim_files

        claim_files([Path(args.out).with_suffix(".json"), Path(args.out).with_suffix(".md")],
                    args.force, "--out")
    try:
        report = json.loads(Path(args.report).read_text())
        report["per_problem"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        print(f"{args.report}: not a benchmarks/tuning.py report ({exc})", file=sys.stderr)
        return 2
    from hpcds1mpi.records import rounds

    other = rounds.read_or_exit(parser.prog, other_runtimes, args.other)
    result = judge(report, other)
    lines = ["# System 2's answer against its kept run, on another sweep", "",
             f"`python analysis/tuning_answer_check.py {args.report} {' '.join(args.other)}`: "
             f"the replayed problems of {', '.join(report['telemetry'])} where System 2's "
             "answer (the lowest run measured) is not the run its search kept, judged on the "
             "other sweeps' measurements of the same configurations.", "",
             "| method | problems with a note | answer faster there | answer within 5 % of "
             "that sweep's best | kept run within 5 % | geomean answer / kept |",
             "| --- | --- | --- | --- | --- | --- |"]
    for key, label in METHODS.items():
        r = result[key]
        g = r["geomean_answer_over_kept"]
        lines.append(f"| {label} | {r['notes']} | {r['answer_faster']} | "
                     f"{r['answer_within_5pct']} | {r['kept_within_5pct']} | "
                     f"{'-' if g is None else f'{g:.3f}'} |")
    lines += ["", "| method | workload | size | answer / kept | answer / best | kept / best |",
              "| --- | --- | --- | --- | --- | --- |"]
    for key, label in METHODS.items():
        lines += [f"| {label} | {w} | {s} | {a:.3f} | {ab:.3f} | {kb:.3f} |"
                  for w, s, a, ab, kb in result[key]["rows"]]
    text = "\n".join(lines) + "\n"
    if args.out:
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.with_suffix(".json").write_text(json.dumps(result, indent=1))
        out.with_suffix(".md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
