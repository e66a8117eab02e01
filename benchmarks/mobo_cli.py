"""The ``hpcds1mpi mobo`` command users run, timed beside an older tree's and an in-process run.

Used by ``benchmarks/mobo.py --cli-runs N [--cli-seeds S,...] [--baseline DIR]``: each round runs,
in turn, ``hpcds1mpi mobo`` on the first problem (a fresh process with the shipped defaults:
method mobo, torch threads 1, outputs written and plotted) at that round's seed, the baseline
tree's command with the same arguments (alternating which goes first), ``mobo.run`` on the
same problem and seed here (imports warm, values looked up), and a fresh ``python -c pass``.
CPU seconds (user + system of each child, its own children included) are the steadier figure
on a shared machine; each command's hypervolume ratio to the exact front is recorded per seed,
so a faster search that finds a worse front shows.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def cli_command(args, name: str, budget: int) -> list[str]:
    """``hpcds1mpi mobo ...`` for problem ``name`` (``workload:size``) with the benchmark's args."""
    workload, size = name.rsplit(":", 1) if ":" in name else (name, "0")
    exe = Path(sys.executable).with_name("hpcds1mpi")
    command = [str(exe)] if exe.exists() else [sys.executable, "-m", "hpcds1mpi"]
    command += ["mobo", "--workload", workload, "--size", size, "--space", args.space,
                "--node-counts", args.node_counts, "--budget", str(budget),
                "--energy-from", args.energy_from]
    command += ["--model", str(Path(args.model).resolve())] if args.model else ["--analytic"]
    command += ["--cluster", str(Path(args.cluster).resolve())] if args.cluster else (
        [] if args.model else ["--cluster", str(HERE / "clusters" / "gpu64.toml")])
    command += ["--partition", args.partition] if args.partition else []
    command += ["--model-partition", args.model_partition] if args.model_partition else []
    return command


def cli_timing(args, first) -> dict:
    """Rounds of the command, the baseline's, the in-process run and ``python -c pass``."""
    import resource
    import subprocess
    import tempfile

    from hpcds1mpi.surrogates import mobo

    name, problem, _ = first
    budget = args.wall_budget or 300
    command = cli_command(args, name, budget)
    n_lead = 1 if len(command) > 1 and command[1] == "mobo" else 3  # the exe, or python -m x
    seeds = [int(s) for s in str(args.cli_seeds).split(",")] if args.cli_seeds else [0]
    exact_hv = None

    def child_cpu() -> float:
        return sum(resource.getrusage(resource.RUSAGE_CHILDREN)[:2])  # user + system

    runs = {"cli": [], "in_process": [], "python": []}
    cpu = {"cli": [], "in_process": []}  # CPU seconds: what a loaded machine cannot inflate
    quality = []  # per round: seed, HV ratio of each command, same front as the baseline
    keys = ["cli"]
    if args.baseline:
        sys.path.insert(0, str(HERE))
        from recommend_speed import baseline_command

        baseline = baseline_command(args.baseline, command[n_lead:])
        runs["baseline"], cpu["baseline"] = [], []
        keys.append("baseline")

    def timed(key: str, cmd: list[str], out: str, seed: int) -> dict:
        t0, c0 = time.perf_counter(), child_cpu()
        proc = subprocess.run(cmd + ["--out", out, "--seed", str(seed)], capture_output=True,
                              text=True, cwd="/")
        runs[key].append(time.perf_counter() - t0)
        cpu[key].append(child_cpu() - c0)
        if proc.returncode != 0:
            raise SystemExit(f"{key}: {' '.join(cmd[:3])}... failed: {proc.stderr.strip()[-300:]}")
        return json.loads(Path(out, "mobo.json").read_text())

    with tempfile.TemporaryDirectory() as tmp:
        for k in range(args.cli_runs):
            seed = seeds[k % len(seeds)]
            load = os.getloadavg()[0]
            docs = {}
            for key in (keys if k % 2 == 0 else keys[::-1]):  # neither always meets one load
                docs[key] = timed(key, command if key == "cli" else baseline, f"{tmp}/{key}{k}",
                                  seed)
            exact_hv = docs["cli"]["exact_hv"]
            row = {"round": k + 1, "seed": seed, "load_avg_1min_before": load,
                   **{f"{key}_hv_ratio": docs[key]["hv_ratio_to_exact"] for key in keys},
                   **{f"{key}_front_size": len(docs[key]["front"]) for key in keys}}
            if args.baseline:
                row["same_front_and_hv"] = all(docs["cli"][x] == docs["baseline"][x]
                                               for x in ("front", "hv", "failed_evaluations"))
            quality.append(row)
            c0 = time.process_time()
            res = mobo.run(problem, "mobo", budget, seed=seed)
            runs["in_process"].append(res.wall_s)
            cpu["in_process"].append(time.process_time() - c0)
            row["in_process_hv_ratio"] = res.hv_at(budget) / exact_hv
            row["in_process_hv_ratio_at"] = {e: res.hv_at(e) / exact_hv for e in (25, 50, 100, budget)}
            reached = [i + 1 for i, h in enumerate(res.hv_trace) if h >= exact_hv * (1 - 1e-12)]
            row["in_process_evaluations_to_exact_front"] = reached[0] if reached else None
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"], check=True)
            runs["python"].append(time.perf_counter() - t0)
            print(f"cli round {k + 1}, seed {seed}: command {runs['cli'][-1]:.1f} s "
                  f"({cpu['cli'][-1]:.1f} s CPU, HV ratio {row['cli_hv_ratio']:.6f})"
                  + (f", baseline {runs['baseline'][-1]:.1f} s ({cpu['baseline'][-1]:.1f} s CPU, "
                     f"HV ratio {row['baseline_hv_ratio']:.6f}, same front and HV: "
                     f"{row['same_front_and_hv']})" if args.baseline else "")
                  + f", in-process {runs['in_process'][-1]:.1f} s ({cpu['in_process'][-1]:.1f} s "
                  f"CPU), python -c pass {runs['python'][-1]:.2f} s (load {load:.1f})", flush=True)
    out = {"command": " ".join(command[n_lead:]), "budget": budget, "seeds": seeds,
           "runs": runs, "cpu_s": cpu, "quality": quality,
           "load_avg_1min_after": os.getloadavg()[0]}
    if args.baseline:
        out["baseline_tree"] = args.baseline
        out["baseline_same_front_and_hv"] = [q["same_front_and_hv"] for q in quality]
    for key, values in cpu.items():
        out[f"{key}_cpu"] = {"median_s": statistics.median(values), "best_s": min(values)}
    for key, values in runs.items():
        out[key] = {"median_s": statistics.median(values), "best_s": min(values),
                    "spread_s": max(values) - min(values)}
    out["cli_over_in_process"] = out["cli"]["median_s"] / out["in_process"]["median_s"]
    return out


def cli_lines(c: dict) -> list[str]:
    """The results file's section on the command (markdown lines)."""
    lines = ["", f"The command users run, `hpcds1mpi {c['command']} --seed S` (fresh process, "
             f"shipped defaults), {len(c['runs']['cli'])} rounds (seeds "
             f"{', '.join(str(q['seed']) for q in c['quality'])}) interleaved with the same run "
             "in process and a fresh `python -c pass`:", "",
             "| path | median s | best s | spread s |", "| --- | --- | --- | --- |"]
    rows = [("cli", "command (CLI)"), ("in_process", "mobo.run in process"),
            ("python", "python -c pass")] + ([("baseline", f"baseline `{c['baseline_tree']}`, "
                                              "same command")] if c.get("baseline_tree") else [])
    for key, label in rows:
        lines.append(f"| {label} | {c[key]['median_s']:.2f} | {c[key]['best_s']:.2f} | "
                     f"{c[key]['spread_s']:.2f} |")
    lines.append(f"| command, CPU s (user + system) | {c['cli_cpu']['median_s']:.2f} | "
                 f"{c['cli_cpu']['best_s']:.2f} | |")
    if c.get("baseline_tree"):
        lines.append(f"| baseline, CPU s | {c['baseline_cpu']['median_s']:.2f} | "
                     f"{c['baseline_cpu']['best_s']:.2f} | |")
    lines.append(f"| in process, CPU s | {c['in_process_cpu']['median_s']:.2f} | "
                 f"{c['in_process_cpu']['best_s']:.2f} | |")
    head = ["round", "seed", "load (1 min)", "command HV ratio", "command CPU s"]
    head += ["baseline HV ratio", "baseline CPU s", "same front and HV"] if c.get("baseline_tree") else []
    lines += ["", "Quality and cost per round (HV ratio: hypervolume of the command's front / the "
              "exact front's, fixed reference point):", "", "| " + " | ".join(head) + " |",
              "|" + " --- |" * len(head)]
    for i, q in enumerate(c["quality"]):
        cells = [str(q["round"]), str(q["seed"]), f"{q['load_avg_1min_before']:.1f}",
                 f"{q['cli_hv_ratio']:.6f}", f"{c['cpu_s']['cli'][i]:.1f}"]
        if c.get("baseline_tree"):
            cells += [f"{q['baseline_hv_ratio']:.6f}", f"{c['cpu_s']['baseline'][i]:.1f}",
                      str(q["same_front_and_hv"])]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "The same search in process (this tree), per seed: HV ratio after 25 / 50 / 100 / "
              f"{c['budget']} evaluations, and the evaluation at which the exact front was complete:", ""]
    for q in c["quality"]:
        at = q["in_process_hv_ratio_at"]
        lines.append(f"- seed {q['seed']}: " + " / ".join(f"{at[e]:.4f}" for e in at)
                     + f"; exact front complete at evaluation {q['in_process_evaluations_to_exact_front']}")
    if c.get("baseline_tree"):
        lines.append(f"\nCommand / baseline, CPU medians: "
                     f"{c['cli_cpu']['median_s'] / c['baseline_cpu']['median_s']:.2f}x "
                     f"(wall {c['cli']['median_s'] / c['baseline']['median_s']:.2f}x). 1-min load "
                     f"average {c.get('load_avg_1min_after', float('nan')):.1f} at the end.")
    lines.append(f"\nCLI / in-process (wall medians): {c['cli_over_in_process']:.2f}x; goal: "
                 f"the {c['budget']}-evaluation command <= 30 s. On a shared machine the CPU "
                 "seconds are the steadier figure (a quiet machine's wall time is about them).")
    return lines
