"""Speed of the recommend path: cold ``hpcds1mpi recommend`` and System 1 on 10,000 configurations.

Goals (issue 19): ``hpcds1mpi recommend --workload stencil --size 300`` answers in <= 0.4 s
wall from a fresh process (bundle on disk, nothing warm, defaults as shipped); System 1 scores
10,000 configurations in <= 10 ms.

1. Cold recommend: ``--runs`` fresh processes of the installed ``hpcds1mpi`` entry point (the
   bundle shipped with the package unless ``--model``), interleaved one for one with a fresh
   ``python -c pass`` (the part no code of ours can remove), so both see the same machine;
   median, best and spread (max - min) of each, and the ratio of the medians: on a shared
   machine the ratio moves less than either time.
2. System 1 on ~10,000 candidates: one partition whose grid has about 10,000 valid
   configurations (128 cores, 16 nodes, 1 GPU per node); the bundle is loaded once, the grid
   is scored ``--repeats`` times, median reported. Timed three ways, each its own median:
   ``score+choose`` (everything System 1 does: grid, features, every model, feasibility,
   pick), ``predict`` (the bundle's predict alone on the same frame), and ``system1 only``
   (score + choose with the predictions precomputed).

Each number is measured in this run; the 1-minute load average is recorded before and after
(the machine is a shared 2-core box: re-run in a quiet period for clean numbers).

Run: ``python benchmarks/recommend_speed.py`` (about 30 s; on a shared machine
``nice -n -10 python benchmarks/recommend_speed.py``, recorded in the results). Writes
``benchmarks/results/recommend_speed.json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"
COLD_GOAL_S = 0.4
SCORE_GOAL_MS = 10.0


def _entry_point() -> list[str]:
    exe = Path(sys.executable).with_name("hpcds1mpi")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "hpcds1mpi"]


def cold_runs(args: list[str], runs: int) -> list[float]:
    """Wall seconds of ``runs`` fresh processes running ``args`` (output discarded)."""
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        proc = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        times.append(time.perf_counter() - t0)
        if proc.returncode != 0:
            raise SystemExit(f"{' '.join(args)} failed ({proc.returncode}): "
                             f"{proc.stderr.strip()[-400:]}")
    return times


def interleaved(commands: list[list[str]], runs: int, cpu: list | None = None,
                cwd: str | None = None) -> list[list[float]]:
    """``cold_runs`` of each command, one run of each in turn, ``runs`` rounds; ``cpu``
    (a list) gets each command's CPU seconds (user + system) per run, which load inflates
    far less than wall time."""
    import resource

    def used() -> float:
        u = resource.getrusage(resource.RUSAGE_CHILDREN)
        return u.ru_utime + u.ru_stime

    out: list[list[float]] = [[] for _ in commands]
    if cpu is not None:
        cpu[:] = [[] for _ in commands]
    for _ in range(runs):
        for k, (times, args) in enumerate(zip(out, commands)):
            before = used()
            if cwd is None:
                times += cold_runs(args, 1)
            else:  # a baseline tree: run where this checkout's folders are not on sys.path
                t0 = time.perf_counter()
                subprocess.run(args, cwd=cwd, stdout=subprocess.DEVNULL, check=True)
                times.append(time.perf_counter() - t0)
            if cpu is not None:
                cpu[k].append(used() - before)
    return out


#: Runs the CLI of another source tree (``--baseline``) in this venv: the editable install's
#: finder is pointed at that tree before anything of hpcds1mpi is imported.
_BASELINE_SHIM = (
    "import sys, glob, importlib\n"
    "name = [p for p in sys.modules if p.startswith('__editable___hpcds1mpi')] or "
    "[m.split('/')[-1][:-3] for m in glob.glob(sys.prefix + '/lib/python*/site-packages/"
    "__editable___hpcds1mpi*_finder.py')]\n"
    "f = importlib.import_module(name[0])\n"
    "f.MAPPING.update({k: v.replace({here!r}, {tree!r}) for k, v in f.MAPPING.items()})\n"
    "from hpcds1mpi.cli import main\n"
    "sys.argv[0] = 'hpcds1mpi'\n"
    "main()\n")


def baseline_command(tree: str, args: list[str]) -> list[str]:
    """``hpcds1mpi ARGS`` run from another source tree (``git archive COMMIT | tar -x -C
    TREE``) in this venv, as a fresh process: run it with ``cwd="/"`` so that this checkout's
    folders are not on ``sys.path``. Also used by ``mobo.py`` and ``serve.py``."""
    here = str(Path(__file__).resolve().parents[1])
    shim = _BASELINE_SHIM.replace("{here!r}", repr(here)).replace(
        "{tree!r}", repr(str(Path(tree).resolve())))
    return [sys.executable, "-c", shim, *args]


def _same_bundle(model: str | None, tree: str) -> bool:
    """Whether the baseline tree reads the same bundle files as this run (its shipped bundle
    unless ``--model``)."""
    import hashlib

    def digest(folder: Path) -> str:
        h = hashlib.sha256()
        for p in sorted(folder.glob("*")):
            h.update(p.name.encode() + p.read_bytes())
        return h.hexdigest()

    here = Path(model) if model else Path(__file__).resolve().parents[1] / "hpcds1mpi" / \
        "data" / "default_model"
    there = Path(model) if model else Path(tree) / "hpcds1mpi" / "data" / "default_model"
    return digest(here) == digest(there)


def scoring(model: str | None, repeats: int) -> dict:
    """Median timings of System 1 on a ~10,000-candidate grid (bundle loaded once)."""
    import numpy as np

    from hpcds1mpi.analysis.system1_speed import scoring_times
    from hpcds1mpi.cluster import Partition
    from hpcds1mpi.decide.model_bundle import load_model

    bundle = load_model(model)
    part = Partition("big", cores_per_node=128, memory_gb=512, max_nodes=16, gpus_per_node=1,
                     gpu_memory_gb=80)
    times = scoring_times(bundle, "stencil", 300, part, repeats=repeats)
    stats = {k: {"median_ms": 1e3 * statistics.median(times[k]), "min_ms": 1e3 * min(times[k]),
                 "spread_ms": 1e3 * (max(times[k]) - min(times[k]))}
             for k in ("score_choose", "predict", "system1_only")}
    return {"n_candidates": times["candidates"], "repeats": repeats, **stats,
            "n_models_scored": int(sum(len(m) for m in bundle.model.members_.values())),
            "family": bundle.manifest.get("family"),
            "use_embedding": bool(bundle.manifest.get("use_embedding")),
            "numpy": np.__version__}


def markdown(res: dict) -> str:
    c, s = res["cold"], res["scoring"]
    ok = lambda good: "met" if good else "NOT met"  # noqa: E731
    lines = [
        f"# Recommend speed ({res['date']})", "",
        f"Bundle: {res['bundle']} ({s['family']}, embedding {'yes' if s['use_embedding'] else 'no'}, "
        f"{s['n_models_scored']} fitted models). 1-min load average {res['load_before']:.1f} "
        f"before, {res['load_after']:.1f} after, on {os.cpu_count()} cores (shared machine); "
        f"scheduling niceness {res.get('niceness', 0)}"
        + (" (run with `nice -n -10`, as the reference sweep was, so other users' jobs "
           "delay it less)" if res.get("niceness", 0) < 0 else "") + ".", "",
        "| measure | median | min | goal | |", "|---|---|---|---|---|",
        f"| cold `{' '.join(c['command'][-4:])}` ({c['runs']} fresh processes, interleaved "
        f"with the floor; spread {c['spread_s']:.2f} s) | "
        f"{c['median_s']:.2f} s | {c['min_s']:.2f} s | {COLD_GOAL_S} s | {ok(c['median_s'] <= COLD_GOAL_S)} |",
        f"| fresh `python -c pass` (floor; spread {c['python_spread_s']:.2f} s) | "
        f"{c['python_median_s']:.2f} s | {c['python_min_s']:.2f} s | | |",
        f"| cold recommend / floor (medians) | {c['ratio_to_python']:.1f}x | | | |",
        f"| cold recommend, CPU s (user + system) | {c['cpu_median_s']:.2f} s | "
        f"{min(c['cpu_s']):.2f} s | | |",
        *([f"| baseline `{c['baseline']}` cold recommend, same rounds | "
           f"{c['baseline_median_s']:.2f} s | {min(c['baseline_times_s']):.2f} s | | |",
           f"| baseline, CPU s | {c['baseline_cpu_median_s']:.2f} s | "
           f"{min(c['baseline_cpu_s']):.2f} s | | |",
           f"| this / baseline, CPU medians | {c['cpu_median_s'] / c['baseline_cpu_median_s']:.2f}x"
           " | | | |",
           f"| same `--json` answer as the baseline on one bundle (else: the keys that "
           f"differ) | {c.get('baseline_same_output')} (timed runs: each its own shipped bundle; "
           f"identical files: {c.get('baseline_same_bundle')}) | | | |"] if c.get("baseline")
          else []),
        f"| System 1 score + choose, {s['n_candidates']} candidates | "
        f"{s['score_choose']['median_ms']:.1f} ms | {s['score_choose']['min_ms']:.1f} ms | "
        f"{SCORE_GOAL_MS:.0f} ms | {ok(s['score_choose']['median_ms'] <= SCORE_GOAL_MS)} |",
        f"| of which bundle.predict | {s['predict']['median_ms']:.1f} ms | "
        f"{s['predict']['min_ms']:.1f} ms | | |",
        f"| of which System 1's own work | {s['system1_only']['median_ms']:.1f} ms | "
        f"{s['system1_only']['min_ms']:.1f} ms | | |",
        "", f"Scoring medians over {s['repeats']} repeats after one warm-up call.", "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None, help="bundle (default: the shipped one)")
    parser.add_argument("--runs", type=int, default=7, help="cold recommend processes")
    parser.add_argument("--repeats", type=int, default=30, help="10k-scoring repeats")
    parser.add_argument("--out-dir", default=str(RESULTS))
    parser.add_argument("--baseline", default=None, metavar="DIR",
                        help="a source tree of older code (git archive COMMIT | tar -x -C DIR): "
                             "its cold recommend is timed interleaved with this one's")
    args = parser.parse_args(argv)

    load_before = os.getloadavg()[0]
    command = [*_entry_point(), "recommend", "--workload", "stencil", "--size", "300"]
    if args.model:
        command += ["--model", args.model]
    cpu: list = []
    commands = [command, [sys.executable, "-c", "pass"]]
    if args.baseline:
        commands.append(baseline_command(args.baseline, command[len(_entry_point()):]))
    times = interleaved(commands, args.runs, cpu, cwd="/" if args.baseline else None)
    same_output = None
    if args.baseline:  # the answer itself (--json: pick, numbers, verdict, alternatives,
        # front), this code against the baseline's on one bundle (--model, else the
        # baseline's shipped one); the table's wording is others' to change
        same_model = ["--model", str(Path(args.model or Path(args.baseline) / "hpcds1mpi" /
                                          "data" / "default_model").resolve())]
        answers = [json.loads(subprocess.run(c + ["--json"] + same_model, cwd="/",
                                             capture_output=True, text=True, check=True).stdout)
                   for c in (command, commands[2])]
        same_output = sorted(k for k in set(answers[0]) | set(answers[1])
                             if answers[0].get(k) != answers[1].get(k)) or True
    cold, floor = times[0], times[1]
    score = scoring(args.model, args.repeats)
    res = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "bundle": args.model or "shipped default (hpcds1mpi/data/default_model)",
        "load_before": load_before, "load_after": os.getloadavg()[0], "niceness": os.nice(0),
        "cold": {"command": command, "runs": args.runs, "times_s": cold,
                 "median_s": statistics.median(cold), "min_s": min(cold),
                 "spread_s": max(cold) - min(cold), "python_times_s": floor,
                 "python_median_s": statistics.median(floor), "python_min_s": min(floor),
                 "python_spread_s": max(floor) - min(floor),
                 "ratio_to_python": statistics.median(cold) / statistics.median(floor),
                 "cpu_s": cpu[0], "cpu_median_s": statistics.median(cpu[0]),
                 "python_cpu_median_s": statistics.median(cpu[1]),
                 **({"baseline": args.baseline, "baseline_times_s": times[2],
                     "baseline_median_s": statistics.median(times[2]),
                     "baseline_cpu_s": cpu[2],
                     "baseline_cpu_median_s": statistics.median(cpu[2]),
                     "baseline_same_output": same_output,
                     "baseline_same_bundle": _same_bundle(args.model, args.baseline)}
                    if args.baseline else {}),
                 "goal_s": COLD_GOAL_S},
        "scoring": {**score, "goal_ms": SCORE_GOAL_MS},
    }
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "recommend_speed.json").write_text(json.dumps(res, indent=2))
    (out / "recommend_speed.md").write_text(markdown(res))
    print(markdown(res))
    return res


if __name__ == "__main__":
    main()
