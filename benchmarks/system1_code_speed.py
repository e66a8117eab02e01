"""System 1's score + choose on the ~11,600-configuration grid of ``analysis/system1_speed.py``
(stencil 300, a 128-core, 16-node, 1-GPU partition), one code tree against another: each round
one fresh process per tree, the order turning each round, the same bundle for both, 3 warm-up
calls then 15 timed ones per process; per round the ratio of the two medians.

    python benchmarks/system1_code_speed.py --baseline-tree OLD --bundle DIR [--rounds 30]
        [--out benchmarks/results/system1_code_speed]

(``analysis/system1_speed.py`` compares two bundles with one code; this compares two codes
with one bundle.)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

CHILD = r'''
import json, statistics, sys, time
from hpcds1mpi.cluster import Partition
from hpcds1mpi.decide import system1 as s1
from hpcds1mpi.decide.memory_limits import learn_memory_limits
from hpcds1mpi.decide.model_bundle import load_model
bundle = load_model(sys.argv[1])
part = Partition("big", cores_per_node=128, memory_gb=512, max_nodes=16, gpus_per_node=1,
                 gpu_memory_gb=80)
limits = learn_memory_limits(bundle, [part])
for _ in range(3):  # warm: kept grids, compiled caches loaded
    s1.choose(s1.score(bundle, "stencil", 300, [part], limits=limits))
wall, cpu = [], []
for _ in range(15):
    t0, c0 = time.perf_counter(), time.process_time()
    s1.choose(s1.score(bundle, "stencil", 300, [part], limits=limits))
    wall.append(time.perf_counter() - t0)
    cpu.append(time.process_time() - c0)
print(json.dumps({"wall": statistics.median(wall), "cpu": statistics.median(cpu)}))
'''


def run(tree: str, bundle: str) -> dict:
    env = {**os.environ, "PYTHONPATH": tree}
    proc = subprocess.run([sys.executable, "-c", CHILD, bundle], env=env, cwd=tree,
                          capture_output=True, text=True, check=True, timeout=300)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline-tree", required=True, help="the code to compare against")
    parser.add_argument("--bundle", required=True, help="the bundle both score with")
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--out", default="benchmarks/results/system1_code_speed")
    args = parser.parse_args(argv)
    here = str(Path(__file__).resolve().parents[1])
    res = {"base": [], "new": [], "ratio_wall": [], "ratio_cpu": []}
    load0 = os.getloadavg()[0]
    for r in range(args.rounds):
        pair = (("base", args.baseline_tree), ("new", here))
        got = {name: run(tree, args.bundle) for name, tree in (pair if r % 2 == 0 else pair[::-1])}
        for name in ("base", "new"):
            res[name].append(got[name])
        res["ratio_wall"].append(got["new"]["wall"] / got["base"]["wall"])
        res["ratio_cpu"].append(got["new"]["cpu"] / got["base"]["cpu"])
    med = {f"{n}_{m}_ms": 1e3 * statistics.median(x[m] for x in res[n])
           for n in ("base", "new") for m in ("wall", "cpu")}
    summary = {"rounds": args.rounds, "baseline_tree": args.baseline_tree, "bundle": args.bundle,
               "ratio_wall": statistics.median(res["ratio_wall"]),
               "ratio_cpu": statistics.median(res["ratio_cpu"]),
               "ratio_cpu_range": [min(res["ratio_cpu"]), max(res["ratio_cpu"])],
               "load": [load0, os.getloadavg()[0]], **med}
    out = Path(args.out)
    out.with_suffix(".json").write_text(json.dumps({**res, "summary": summary}, indent=1))
    out.with_suffix(".md").write_text(
        f"# System 1 on ~11,600 configurations: this code against `{args.baseline_tree}`\n\n"
        f"`python benchmarks/system1_code_speed.py --baseline-tree {args.baseline_tree} "
        f"--bundle {args.bundle} --rounds {args.rounds}`: stencil 300 on a 128-core, 16-node, "
        f"1-GPU partition's whole grid; per round one fresh process per tree (order turning), "
        f"3 warm-up and 15 timed score + choose calls each; 1-min load {load0:.2f} before, "
        f"{os.getloadavg()[0]:.2f} after.\n\n"
        "| code | wall median | CPU median |\n| --- | --- | --- |\n"
        f"| baseline | {med['base_wall_ms']:.2f} ms | {med['base_cpu_ms']:.2f} ms |\n"
        f"| this tree | {med['new_wall_ms']:.2f} ms | {med['new_cpu_ms']:.2f} ms |\n\n"
        f"Median of the per-round ratios this / baseline: wall {summary['ratio_wall']:.2f}, "
        f"CPU {summary['ratio_cpu']:.2f} (range {summary['ratio_cpu_range'][0]:.2f}-"
        f"{summary['ratio_cpu_range'][1]:.2f}).\n")
    print(out.with_suffix(".md").read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
