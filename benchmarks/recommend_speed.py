"""Speed of the recommend path: cold ``hpcds1mpi recommend`` and System 1 on 10,000 configurations.

Goals (issue 19): ``hpcds1mpi recommend --workload stencil --size 300`` answers in <= 0.4 s
from a fresh process (bundle on disk, defaults as shipped); System 1 scores and chooses among
10,000+ configurations in <= 10 ms.

1. Cold recommend: ``--runs`` rounds of fresh processes, each round one run of the installed
   ``hpcds1mpi`` entry point, one fresh ``python -c pass`` (the part no code of ours can
   remove) and, with ``--baseline DIR``, the same command from that source tree, so all see
   the same machine. Wall and CPU seconds (user + system of the child: load inflates it far
   less than wall time), medians, best and spread. The children run with bytecode caching as
   an installed package has it (``PYTHONDONTWRITEBYTECODE`` dropped, ``PYTHONPYCACHEPREFIX``
   a fresh folder, so the read-only baseline tree is cached too) after one untimed round.
2. The answer: with ``--baseline``, ``recommend --json`` of both trees on the baseline's
   bundle for :data:`QUESTIONS` (workloads, sizes, objectives, constraints, a cluster file
   with a 10,000-candidate grid, a GPU, an unknown workload), every number compared to 1e-9.
3. System 1 on ~10,000 candidates: one partition whose grid has 11,595 valid configurations
   (128 cores, 16 nodes, 1 GPU per node), in fresh processes of each tree taking turns
   (``--scoring-rounds``), each loading the bundle once and timing ``--repeats`` calls after a
   warm-up: ``score+choose`` (grid, features, every model, feasibility, pick), ``predict``
   (the bundle's predict of the grid alone) and ``system1 only`` (score + choose with the
   predictions precomputed), each as wall time and as CPU time of the process (which a
   loaded machine inflates less).

The 1-minute load average is recorded before and after. Run: ``python
benchmarks/recommend_speed.py --baseline DIR`` (DIR: ``git archive COMMIT | tar -x -C DIR``;
a few minutes). Writes ``benchmarks/results/recommend_speed.json`` and ``.md``.
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
                cwd: str | None = None, env: dict | None = None) -> list[list[float]]:
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
                subprocess.run(args, cwd=cwd, stdout=subprocess.DEVNULL, check=True, env=env)
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


#: Questions whose ``--json`` answers must not change (``{clusters}``: benchmarks/clusters).
QUESTIONS = (
    "--workload stencil --size 300",
    "--workload stencil --size 128 --objective energy",
    "--workload gemm --size 1024 --objective balanced",
    "--workload cg --size 64 --objective edp",
    "--workload fft --size 128 --max-nodes 1 --deadline 0.5",
    "--workload nbody --size 4096 --energy-budget 50",
    "--workload mltrain --size 2048 --device cpu",
    "--workload stencil --size 256 --cluster {clusters}/cpu64.toml",
    "--workload gemm --size 2048 --cluster {clusters}/gpu64.toml --device gpu",
    "--workload stencil --size 200 --cluster {clusters}/gpu64.toml --objective balanced",
    "--workload myapp --size 100",
    "--workload stencil --size 5000",
    "--workload allreduce --size 65536 --objective energy",
    "--workload io --size 1048576",
)
TOLERANCE = 1e-9


def child_env(cache: str) -> dict:
    """The environment of timed children: bytecode cached in ``cache`` as an installed
    package has it (a session's PYTHONDONTWRITEBYTECODE would compile every module of ours
    from source in every run, and the read-only baseline tree can keep no cache of its own)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = cache
    return env


def differences(a, b, path: str = "") -> list[str]:
    """Where two JSON answers differ: numbers beyond :data:`TOLERANCE` (relative), anything
    else that is not equal."""
    import math

    if isinstance(a, dict) and isinstance(b, dict):
        return [d for k in sorted(set(a) | set(b))
                for d in differences(a.get(k, "<missing>"), b.get(k, "<missing>"), f"{path}.{k}")]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in differences(x, y, f"{path}[{i}]")]
    numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (a, b))
    if numbers:
        if a == b or (math.isnan(a) and math.isnan(b)) or \
                abs(a - b) <= TOLERANCE * max(1.0, abs(a), abs(b)):
            return []
        return [f"{path}: {a!r} vs {b!r}"]
    return [] if a == b else [f"{path}: {str(a)[:60]!r} vs {str(b)[:60]!r}"]


def same_answers(command: list[str], baseline: list[str], model: str, env: dict) -> list[dict]:
    """Each of :data:`QUESTIONS` asked of both commands (``--json --model MODEL``): the exit
    codes and, where both answered, the differences."""
    import shlex

    clusters = str(Path(__file__).resolve().parent / "clusters")
    out = []
    for question in QUESTIONS:
        args = ["recommend", *shlex.split(question.format(clusters=clusters)), "--json",
                "--model", model]
        runs = [subprocess.run(c + args, cwd="/", capture_output=True, text=True, env=env)
                for c in (command, baseline)]
        entry = {"question": question, "exit": [r.returncode for r in runs]}
        if all(r.returncode == 0 for r in runs):
            entry["differences"] = differences(*(json.loads(r.stdout) for r in runs))
        else:
            entry["differences"] = [] if runs[0].returncode == runs[1].returncode and \
                runs[0].stderr.strip() == runs[1].stderr.strip() else ["exit or error differs"]
        out.append(entry)
    return out


#: Timed in a fresh process of either tree (its own System 1, its own bundle reader).
_SCORING = """
import json, statistics, sys, time
from hpcds1mpi.cluster import Partition
from hpcds1mpi.decide import system1 as s1
from hpcds1mpi.decide.memory_limits import learn_memory_limits
from hpcds1mpi.decide.model_bundle import load_model
from hpcds1mpi.analysis.system1_speed import PrecomputedAnswer
model, repeats = json.loads(sys.argv[1])
bundle = load_model(model)
part = Partition("big", cores_per_node=128, memory_gb=512, max_nodes=16, gpus_per_node=1,
                 gpu_memory_gb=80)
grid = (getattr(s1, "candidate_columns", None) if getattr(bundle, "takes_columns", False)
        else None) or s1.candidate_frame
frame = grid("stencil", 300, [part])
limits = learn_memory_limits(bundle, [part])
stand_in = PrecomputedAnswer(bundle, bundle.predict(s1.candidate_frame("stencil", 300, [part])))
def timed(fn):
    fn(); fn()  # warm: caches filled, a model's forest laid out on its second grid
    out = []
    for _ in range(repeats):  # (wall, CPU of this process) per call
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        out.append((time.perf_counter() - t0, time.process_time() - c0))
    return out
def choose_with(m):
    return s1.choose(s1.score(m, "stencil", 300, [part], limits=limits), "time")
print(json.dumps({"candidates": len(frame), "score_choose": timed(lambda: choose_with(bundle)),
                  "predict": timed(lambda: bundle.predict(frame)),
                  "system1_only": timed(lambda: choose_with(stand_in)),
                  "n_models": sum(len(m) for m in bundle.model.members_.values()),
                  "family": bundle.manifest.get("family"),
                  "use_embedding": bool(bundle.manifest.get("use_embedding"))}))
"""


def tree_python(tree: str | None, body: str) -> list[str]:
    """``python -c BODY`` importing hpcds1mpi from ``tree`` (None: this checkout)."""
    if tree is None:
        return [sys.executable, "-c", body]
    shim = _BASELINE_SHIM.split("from hpcds1mpi.cli import main")[0]
    here = str(Path(__file__).resolve().parents[1])
    shim = shim.replace("{here!r}", repr(here)).replace("{tree!r}",
                                                        repr(str(Path(tree).resolve())))
    return [sys.executable, "-c", shim + body]


def scoring(model: str | None, repeats: int, rounds: int, baseline: str | None,
            env: dict) -> dict:
    """System 1 timings of this tree (and the baseline's), fresh processes taking turns."""
    trees = [None] + ([baseline] if baseline else [])
    runs: dict = {t: [] for t in trees}
    for r in range(rounds):
        for tree in (trees if r % 2 == 0 else trees[::-1]):  # alternate who goes first
            proc = subprocess.run(tree_python(tree, _SCORING) + [json.dumps([model, repeats])],
                                  cwd="/", capture_output=True, text=True, env=env, check=True)
            runs[tree].append(json.loads(proc.stdout.strip().splitlines()[-1]))

    def summary(results: list[dict]) -> dict:
        out = {k: results[0][k] for k in ("candidates", "n_models", "family", "use_embedding")}
        for key in ("score_choose", "predict", "system1_only"):
            wall = [t[0] for res in results for t in res[key]]
            cpu = [t[1] for res in results for t in res[key]]
            out[key] = {"median_ms": 1e3 * statistics.median(wall), "min_ms": 1e3 * min(wall),
                        "spread_ms": 1e3 * (max(wall) - min(wall)),
                        "cpu_median_ms": 1e3 * statistics.median(cpu),
                        "cpu_min_ms": 1e3 * min(cpu)}
        return out

    import numpy as np

    res = {"repeats": repeats, "rounds": rounds, "numpy": np.__version__,
           "this": summary(runs[None])}
    if baseline:
        res["baseline"] = summary(runs[baseline])
    return res


def _stats(values: list[float]) -> dict:
    return {"median": statistics.median(values), "min": min(values),
            "spread": max(values) - min(values)}


def markdown(res: dict) -> str:
    c, s = res["cold"], res["scoring"]
    ok = lambda good: "met" if good else "NOT met"  # noqa: E731
    t, b = s["this"], s.get("baseline")
    lines = [
        f"# Recommend speed ({res['date']})", "",
        f"Command: `{res['command_line']}`. Bundle: {res['bundle']} ({t['family']}, embedding "
        f"{'yes' if t['use_embedding'] else 'no'}, {t['n_models']} fitted models). 1-min load "
        f"average {res['load_before']:.1f} before, {res['load_after']:.1f} after, on "
        f"{os.cpu_count()} cores (shared machine); niceness {res['niceness']}. Children: "
        f"{res['children']}.", "",
        "| measure | this tree, median | min | baseline, same rounds | this / baseline | goal | |",
        "|---|---|---|---|---|---|---|",
    ]
    base = c.get("baseline")
    for what, key in (("wall s", "wall"), ("CPU s (user + system)", "cpu")):
        mine = c[key]
        theirs = base[key] if base else None
        lines.append(
            f"| cold `{' '.join(c['command'][-5:])}`, {what} ({c['runs']} rounds; spread "
            f"{mine['spread']:.2f}) | {mine['median']:.3f} | {mine['min']:.3f} | "
            + (f"{theirs['median']:.3f} (min {theirs['min']:.3f}) | "
               f"{mine['median'] / theirs['median']:.2f}x" if theirs else "| ")
            + f" | {COLD_GOAL_S} s | {ok(mine['median'] <= COLD_GOAL_S)} |")
    lines.append(f"| fresh `python -c pass` (floor), wall / CPU s | {c['floor']['wall']['median']:.3f}"
                 f" / {c['floor']['cpu']['median']:.3f} | {c['floor']['wall']['min']:.3f} | | | | |")
    for label, key in (("System 1 score + choose", "score_choose"),
                       ("of which bundle.predict", "predict"),
                       ("of which System 1's own work (stand-in answer, DataFrame path)",
                        "system1_only")):
        for what, med, low in (("wall ms", "median_ms", "min_ms"),
                               ("CPU ms", "cpu_median_ms", "cpu_min_ms")):
            goal = key == "score_choose"
            lines.append(
                f"| {label}, {t['candidates']} candidates, {what} | {t[key][med]:.1f} | "
                f"{t[key][low]:.1f} | "
                + (f"{b[key][med]:.1f} (min {b[key][low]:.1f}) | "
                   f"{t[key][med] / b[key][med]:.2f}x" if b else "| ")
                + (f" | {SCORE_GOAL_MS:.0f} ms | {ok(t[key][med] <= SCORE_GOAL_MS)} |"
                   if goal else " | | |"))
    lines += ["", f"Scoring: {s['rounds']} fresh processes of each tree taking turns, "
              f"{s['repeats']} timed calls each after a warm-up; medians over all calls.", ""]
    if res.get("answers") is not None:
        same = [a for a in res["answers"] if not a["differences"]]
        lines += [f"Same `--json` answers as the baseline (numbers to {TOLERANCE:g}, on the "
                  f"baseline's bundle): {len(same)} of {len(res['answers'])} questions.", ""]
        lines += [f"- `{a['question']}` (exit {a['exit'][0]}): "
                  + ("same" if not a["differences"] else "; ".join(a["differences"][:3]))
                  for a in res["answers"]]
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict:
    import tempfile

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None, help="bundle (default: the shipped one)")
    parser.add_argument("--runs", type=int, default=9, help="cold recommend rounds")
    parser.add_argument("--repeats", type=int, default=30, help="10k-scoring calls a process")
    parser.add_argument("--scoring-rounds", type=int, default=3,
                        help="scoring processes of each tree")
    parser.add_argument("--out-dir", default=str(RESULTS))
    parser.add_argument("--baseline", default=None, metavar="DIR",
                        help="a source tree of older code (git archive COMMIT | tar -x -C DIR): "
                             "timed interleaved with this one; answers compared")
    args = parser.parse_args(argv)

    load_before = os.getloadavg()[0]
    command = [*_entry_point(), "recommend", "--workload", "stencil", "--size", "300"]
    if args.model:
        command += ["--model", args.model]
    commands = [command, [sys.executable, "-c", "pass"]]
    if args.baseline:
        commands.append(baseline_command(args.baseline, command[len(_entry_point()):]))
    with tempfile.TemporaryDirectory(prefix="hpcds1mpi-pyc-") as cache:
        env = child_env(cache)
        interleaved(commands, 1, [], cwd="/", env=env)  # untimed: the bytecode cache filled
        cpu: list = []
        times = interleaved(commands, args.runs, cpu, cwd="/", env=env)
        answers = None
        if args.baseline:
            model = str(Path(args.model or Path(args.baseline) / "hpcds1mpi" / "data" /
                             "default_model").resolve())
            answers = same_answers(_entry_point(),
                                   baseline_command(args.baseline, [])[:3], model, env)
        score = scoring(args.model, args.repeats, args.scoring_rounds, args.baseline, env)
    res = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "command_line": " ".join(["python", "benchmarks/recommend_speed.py", *(argv or
                                                                               sys.argv[1:])]),
        "bundle": args.model or "shipped default (hpcds1mpi/data/default_model)",
        "load_before": load_before, "load_after": os.getloadavg()[0], "niceness": os.nice(0),
        "children": "bytecode cached (PYTHONPYCACHEPREFIX, one untimed round first), cwd /",
        "cold": {"command": command, "runs": args.runs, "goal_s": COLD_GOAL_S,
                 "wall": _stats(times[0]), "cpu": _stats(cpu[0]),
                 "times_s": times[0], "cpu_s": cpu[0],
                 "floor": {"wall": _stats(times[1]), "cpu": _stats(cpu[1])},
                 **({"baseline": {"tree": args.baseline, "wall": _stats(times[2]),
                                  "cpu": _stats(cpu[2]), "times_s": times[2],
                                  "cpu_s": cpu[2],
                                  "same_bundle_files": _same_bundle(args.model, args.baseline)}}
                    if args.baseline else {})},
        "answers": answers,
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
