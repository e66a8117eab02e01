"""recommend --history on the full Gaia log: this tree against a baseline tree, interleaved, repeated.

    python analysis/results/runtime_eval_recommend_timing.py [ROUNDS [BASELINE_TREE]]

(session 11 measured against /tmp/w11/base, an unpacked copy of b503ebe).
"""
import json, os, resource, subprocess, sys, tempfile, time
from pathlib import Path
HERE = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(HERE / "benchmarks"))
from recommend_speed import baseline_command
LOG = str((HERE / "../shared/data/joblogs/UniLu-Gaia-2014-1.swf.gz").resolve())
ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 4
BASE = sys.argv[2] if len(sys.argv) > 2 else "/tmp/w11/base"
tmp = Path(tempfile.mkdtemp())
def args(tag):
    return ["recommend", "--workload", "stencil", "--size", "128", "--history", LOG, "--user", "46",
            "--time-limit", "120", "--emit", "slurm", "-o", str(tmp / f"{tag}.sh")]
cmds = {"this": [str(HERE / ".venv/bin/hpcds1mpi"), *args("this")],
        "base": baseline_command(BASE, args("base"))}
res = {k: [] for k in cmds}
out = {}
for r in range(ROUNDS):
    order = ["this", "base"] if r % 2 == 0 else ["base", "this"]
    for k in order:
        load = os.getloadavg()[0]
        c0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        p = subprocess.run(cmds[k], capture_output=True, text=True, cwd="/")
        wall = time.perf_counter() - t0
        c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (c1.ru_utime - c0.ru_utime) + (c1.ru_stime - c0.ru_stime)
        assert p.returncode == 0, p.stderr[-2000:]
        out[k] = [l for l in p.stdout.splitlines() if l.startswith("walltime:")]
        res[k].append({"wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "load1": round(load, 2)})
        print(r, k, res[k][-1], flush=True)
import statistics as st
summary = {k: {"wall_median_s": st.median(x["wall_s"] for x in v), "cpu_median_s": st.median(x["cpu_s"] for x in v)} for k, v in res.items()}
summary["ratio_wall"] = summary["this"]["wall_median_s"] / summary["base"]["wall_median_s"]
summary["ratio_cpu"] = summary["this"]["cpu_median_s"] / summary["base"]["cpu_median_s"]
print(json.dumps({"runs": res, "summary": summary, "output": out}, indent=1))
