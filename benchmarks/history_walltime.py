"""Speed of ``recommend --history``: a second call on the same job log, this tree against another.

``recommend --workload stencil --size 128 --history LOG --user U --time-limit 120`` as a user
runs it, in fresh processes of the installed entry point and of a baseline tree (``--baseline
DIR``: ``git archive COMMIT | tar -x -C DIR``) taking turns, ``--runs`` rounds after one untimed
call of each into its own empty cache folder (which fits the walltime model once: the timed
calls are the ones a user pays on every later question of the same history). Wall and CPU
seconds (user + system of the child) and peak memory (the child's max RSS), medians and spread,
and whether both trees printed the same answer. The 1-minute load average is recorded before
and after. Run: ``python benchmarks/history_walltime.py --baseline DIR LOG:USER ...``. Writes
``benchmarks/results/history_walltime.json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from recommend_speed import RESULTS, _entry_point, baseline_command, child_env  # noqa: E402


def question(log: str, user: str) -> list[str]:
    return ["recommend", "--workload", "stencil", "--size", "128", "--history", log,
            "--user", user, "--time-limit", "120"]


def timed(command: list[str], env: dict, cwd: str | None) -> tuple[float, float, float, str]:
    """(wall s, CPU s, peak RSS MB, stdout) of one fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(command[-10:])} failed ({proc.returncode}): "
                         f"{proc.stderr.strip()[-400:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, after.ru_maxrss / 1024, proc.stdout  # ru_maxrss: the largest child yet


def measure(log: str, user: str, baseline: str, runs: int, work: Path) -> dict:
    trees = {"this": (_entry_point(), None), "baseline": (baseline_command(baseline, []), "/")}
    out: dict = {}
    answers = {}
    for name, (command, cwd) in trees.items():
        env = child_env(str(work / "pycache"))
        env["HPCDS1MPI_CACHE"] = str(work / f"cache-{name}-{Path(log).name}")
        trees[name] = (command + question(log, user), cwd, env)
        answers[name] = timed(command + question(log, user), env, cwd)[3]  # the fit; untimed
        out[name] = {"wall": [], "cpu": []}
    for _ in range(runs):
        for name, (command, cwd, env) in trees.items():
            wall, cpu, _, text = timed(command, env, cwd)
            out[name]["wall"].append(wall)
            out[name]["cpu"].append(cpu)
            if text != answers[name]:
                raise SystemExit(f"{name}: a cached call answered otherwise than the first")
    for name in trees:
        for k in ("wall", "cpu"):
            values = out[name][k]
            out[name][k] = {"median": statistics.median(values), "min": min(values),
                            "max": max(values), "all": values}
    out["same_answer"] = answers["this"] == answers["baseline"]
    out["ratio_cpu"] = out["this"]["cpu"]["median"] / out["baseline"]["cpu"]["median"]
    out["ratio_wall"] = out["this"]["wall"]["median"] / out["baseline"]["wall"]["median"]
    return out


def peak_memory(log: str, user: str, baseline: str, work: Path) -> dict:
    """Each tree's peak RSS (MB) of one cached call, each in a process of its own."""
    peaks = {}
    for name, command, cwd in (("this", _entry_point(), None),
                               ("baseline", baseline_command(baseline, []), "/")):
        env = child_env(str(work / "pycache"))
        env["HPCDS1MPI_CACHE"] = str(work / f"cache-{name}-{Path(log).name}")
        probe = [sys.executable, "-c", "import resource, subprocess, sys; "
                 "subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True, cwd=" +
                 repr(cwd) + "); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)",
                 *command, *question(log, user)]
        peaks[name] = int(subprocess.run(probe, env=env, capture_output=True, text=True,
                                         check=True).stdout.split()[-1]) / 1024
    return peaks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("logs", nargs="+", metavar="LOG:USER")
    parser.add_argument("--baseline", required=True, metavar="DIR")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    load = [os.getloadavg()[0]]
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for item in args.logs:
            log, _, user = item.rpartition(":")
            res = measure(log, user, args.baseline, args.runs, Path(tmp))
            res["peak_rss_mb"] = peak_memory(log, user, args.baseline, Path(tmp))
            results[f"{Path(log).name} (user {user})"] = res
    load.append(os.getloadavg()[0])
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    data = {"when": stamp, "runs": args.runs, "load_1min": load, "baseline": args.baseline,
            "results": results}
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "history_walltime.json").write_text(json.dumps(data, indent=1) + "\n")
    lines = [f"# `recommend --history`, a call after the first ({stamp})", "",
             f"{args.runs} interleaved rounds of fresh processes; baseline tree "
             f"`{args.baseline}`; load average {load[0]:.1f} before, {load[1]:.1f} after.", "",
             "| log | CPU s, this (median) | baseline | this / baseline | wall s, this | "
             "baseline | peak RSS MB, this | baseline | same answer |",
             "|---|---|---|---|---|---|---|---|---|"]
    for name, r in results.items():
        lines.append(f"| {name} | {r['this']['cpu']['median']:.2f} | "
                     f"{r['baseline']['cpu']['median']:.2f} | {r['ratio_cpu']:.2f} | "
                     f"{r['this']['wall']['median']:.2f} | {r['baseline']['wall']['median']:.2f} "
                     f"| {r['peak_rss_mb']['this']:.0f} | {r['peak_rss_mb']['baseline']:.0f} | "
                     f"{'yes' if r['same_answer'] else 'NO'} |")
    (RESULTS / "history_walltime.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
