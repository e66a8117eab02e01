"""End to end on the real two-node test Slurm (scripts/slurm-up): recommend -> sbatch -> the job
runs with exactly the recommended layout; calibration sweep -> learn -> familiar; a sweep killed
by its walltime and resumed; the PBS script through the qsub wrapper; sacct ingestion.

The walltime-kill job (> 60 s) is submitted first, by the module fixture, so it runs while the
other tests use the second node; its test comes last but one and only waits for what is left.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.helpers import hpcds1mpi_exe, mpiexec

pytestmark = pytest.mark.slurm

from tests.slurm import CLUSTER_TOML
# Each rank writes what Slurm told it, then becomes the real command (exec keeps the PID, so
# the MPI start-up of the command is the rank's own).
PROBE = textwrap.dedent("""\
    import json, os, sys
    keys = ["SLURM_JOB_ID", "SLURM_JOB_NUM_NODES", "SLURM_NTASKS_PER_NODE", "SLURM_CPUS_PER_TASK",
            "SLURM_NODEID", "SLURM_PROCID", "SLURM_NTASKS", "SLURMD_NODENAME", "OMP_NUM_THREADS",
            "PMI_RANK", "PMI_SIZE", "HPCDS1MPI_PRECISION"]
    rank = os.environ.get("PMI_RANK") or os.environ.get("SLURM_PROCID") or "0"
    out = sys.argv[1]
    with open(os.path.join(out, f"rank{rank}.json"), "w") as fh:
        json.dump({k: os.environ.get(k) for k in keys}, fh)
    os.execv(sys.argv[2], sys.argv[2:])
""")
# The walltime job: ~100 configurations of >= 1 s each (> 100 s), killed after 60-95 s.
WALL_SIZES = ",".join(str(n) for n in range(320, 720, 8))
WALL_ARGS = ["--kernel", "gemm", "--sizes", WALL_SIZES, "--ranks-per-node", "1", "--threads", "1",
             "--precisions", "fp64,fp32", "--min-time", "1.0", "--max-repeats", "5000",
             "--warmup", "0", "--snapshot-every", "5", "--cluster", "cluster.toml",
             "--partition", "debug", "--no-progress", "--out", "wall.h5"]


class E2E:
    """Shared state of the module: directory, model, jobs submitted (for sacct)."""

    def __init__(self, slurm, root: Path):
        self.slurm = slurm
        self.root = root
        self.cluster = root / "cluster.toml"
        self.jobs: dict[str, int] = {}
        self.wall_job: int | None = None

    def cli(self, *argv: str, timeout: float = 240, check: bool = True
            ) -> subprocess.CompletedProcess:
        res = subprocess.run([hpcds1mpi_exe(), *argv], capture_output=True, text=True,
                             timeout=timeout, cwd=self.root, env=self.slurm.env)
        if check and res.returncode != 0:
            pytest.fail(f"hpcds1mpi {' '.join(argv)} exited {res.returncode}: {res.stderr[-2000:]}")
        return res

    def submit(self, name: str, script: Path, *args: str) -> int:
        job_id = self.slurm.sbatch(script, *args, cwd=self.root)
        self.jobs[name] = job_id
        return job_id

    def run(self, name: str, submit, output: str, timeout: float) -> tuple[int, str, str]:
        """Submit (``submit()`` returns the job id) and wait: (job id, state, output text).

        Resubmits once after the Slurm pmi2 wire-up error (``SlurmCluster.run_job``)."""
        job, state, text = self.slurm.run_job(submit, output, timeout)
        self.jobs[name] = job
        return job, state, text

    def show(self, job_id: int) -> dict:
        text = self.slurm.cmd(["scontrol", "show", "job", "-o", str(job_id)]).stdout
        return dict(re.findall(r"(\S+?)=(\S+)", text))


def _wall_script(root: Path, time_limit: str, resume: bool) -> Path:
    path = root / f"wall-{'resume' if resume else 'first'}.sh"
    argv = [hpcds1mpi_exe(), "sweep", *WALL_ARGS] + (["--resume", "--retry-crashed"] if resume else [])
    path.write_text("\n".join([
        "#!/bin/bash", "#SBATCH -N1 -n1", f"#SBATCH --time={time_limit}",
        "#SBATCH --job-name=e2e-wall", f"#SBATCH --output={root}/wall-%j.out",
        f"srun --mpi=pmi2 {' '.join(argv)}", ""]))
    return path


@pytest.fixture(scope="module")
def e2e(slurm, tmp_path_factory) -> E2E:
    root = tmp_path_factory.mktemp("e2e")
    root.chmod(0o755)
    state = E2E(slurm, root)
    state.cluster.write_text(CLUSTER_TOML)
    (root / "probe.py").write_text(PROBE)
    # (3) first, so the > 60 s walltime kill overlaps with the other tests.
    state.wall_job = state.submit("wall", _wall_script(root, "1", resume=False))
    # A small real sweep of this machine as partition `debug`, and a quick bundle from it.
    res = subprocess.run(
        [mpiexec(), "-n", "2", hpcds1mpi_exe(), "sweep", "--kernel", "gemm", "--sizes", "128,256",
         "--ranks-per-node", "1,2", "--threads", "1,2", "--precisions", "fp64,fp32",
         "--min-time", "0.02", "--max-repeats", "3", "--cluster", str(state.cluster),
         "--partition", "debug", "--out", str(root / "base.h5"), "--no-progress"],
        capture_output=True, text=True, timeout=180, cwd=root)
    assert res.returncode == 0, res.stderr[-2000:]
    state.cli("train", "--telemetry", "base.h5", "--out", "model", "--members", "2",
              "--no-embedding")
    return state


def _read_ranks(folder: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted(folder.glob("rank*.json"))]


# ---------------------------------------------------------------------------------- (1)


def test_recommended_slurm_script_runs_with_exactly_the_recommended_layout(e2e):
    probe_out = e2e.root / "rec-ranks"
    probe_out.mkdir()
    program = (f"{sys.executable} {e2e.root / 'probe.py'} {probe_out} {hpcds1mpi_exe()} run gemm "
               "--size 256 --threads {threads} --device {device} --precision {precision} --json")
    res = e2e.cli("recommend", "--workload", "gemm", "--size", "256", "--cluster", "cluster.toml",
                  "--model", "model", "--max-nodes", "2", "--emit", "slurm", "--program", program,
                  "--job-output", f"{e2e.root}/rec-%j.out", "-o", "rec.sbatch", "--json")
    rec = json.loads(res.stdout)
    pick = rec["pick"]
    assert pick is not None, rec["verdict"]
    script = (e2e.root / "rec.sbatch").read_text()
    assert "srun " in script and "--mpi=pmi2" in script
    job, state, output = e2e.run(
        "recommended", lambda: e2e.slurm.sbatch(e2e.root / "rec.sbatch", cwd=e2e.root),
        f"{e2e.root}/rec-%j.out", timeout=180)
    assert state == "COMPLETED", output
    ranks = _read_ranks(probe_out)
    nodes, rpn, threads = pick["nodes"], pick["ranks_per_node"], pick["threads"]
    assert len(ranks) == nodes * rpn
    for r in ranks:
        assert int(r["SLURM_JOB_NUM_NODES"]) == nodes
        assert int(r["SLURM_NTASKS_PER_NODE"]) == rpn
        assert int(r["SLURM_CPUS_PER_TASK"]) == threads
        assert int(r["OMP_NUM_THREADS"]) == threads
        assert r["HPCDS1MPI_PRECISION"] == pick["precision"]
    node_ids = sorted(int(r["SLURM_NODEID"]) for r in ranks)
    assert node_ids == sorted(list(range(nodes)) * rpn)
    # The kernel itself saw the same layout and succeeded.
    (run,) = [json.loads(line) for line in (e2e.root / f"rec-{job}.out").read_text().splitlines()
              if line.startswith("{")]
    assert (run["nodes"], run["ranks_per_node"], run["threads"], run["precision"], run["status"]) \
        == (nodes, rpn, threads, pick["precision"], "ok")


# ---------------------------------------------------------------------------------- (2)


def test_calibration_sweep_then_learn_makes_the_job_familiar(e2e):
    before = json.loads(e2e.cli("recommend", "--workload", "stencil", "--size", "24",
                                "--cluster", "cluster.toml", "--model", "model", "--json").stdout)
    assert before["verdict"]["verdict"] == "escalate" and before["pick"] is None
    e2e.cli("recommend", "--workload", "stencil", "--size", "24", "--cluster", "cluster.toml",
            "--model", "model", "--emit", "slurm", "--job-output", f"{e2e.root}/calib-%j.out",
            "-o", "calib.sbatch")
    script = (e2e.root / "calib.sbatch").read_text()
    steps = before["calibration"]
    assert script.count("srun ") == len(steps) and script.count("--mpi=pmi2") == len(steps)
    # The steps run with --resume: a resubmission measures only what the first attempt missed.
    job, state, output = e2e.run(
        "calibration", lambda: e2e.slurm.sbatch(e2e.root / "calib.sbatch", cwd=e2e.root),
        f"{e2e.root}/calib-%j.out", timeout=240)
    assert state == "COMPLETED", output
    from hpcds1mpi.records.telemetry import read_runs

    calib = read_runs(e2e.root / "calibration.h5")
    assert len(calib) == len(steps)
    assert set(calib["status"]) == {"ok"}, calib[["status", "error"]]
    measured = {(r.nodes, r.ranks_per_node, r.threads, r.precision) for r in calib.itertuples()}
    wanted = {(s["config"]["nodes"], s["config"]["ranks_per_node"], s["config"]["threads"],
               s["config"]["precision"]) for s in steps}
    assert measured == wanted
    # Same machine as the base sweep (this machine, partition debug): learn must accept it.
    base = read_runs(e2e.root / "base.h5")
    assert set(calib["machine_id"]) == set(base["machine_id"])
    e2e.cli("telemetry", "merge", "base.h5", "calibration.h5", "--out", "merged.h5")
    assert len(read_runs(e2e.root / "merged.h5")) == len(base) + len(calib)
    e2e.cli("learn", "--model", "model", "--telemetry", "calibration.h5", "--out", "model2")
    after = json.loads(e2e.cli("recommend", "--workload", "stencil", "--size", "24",
                               "--cluster", "cluster.toml", "--model", "model2", "--json").stdout)
    assert after["verdict"]["verdict"] != "escalate", after["verdict"]
    assert after["verdict"]["checks"]["name"] == "pass"
    assert after["pick"] is not None and after["pick"]["partition"] == "debug"


# ---------------------------------------------------------------------------------- (4)


def test_pbs_script_through_the_qsub_wrapper(e2e):
    e2e.cli("recommend", "--workload", "gemm", "--size", "256", "--cluster", "cluster.toml",
            "--model", "model", "--emit", "pbs", "--job-output", f"{e2e.root}/pbs-out.txt",
            "-o", "rec.pbs")
    script = (e2e.root / "rec.pbs").read_text()
    select = re.search(r"select=(\d+):ncpus=(\d+):mpiprocs=(\d+)", script)
    nodes, mpiprocs = int(select.group(1)), int(select.group(3))
    res = e2e.slurm.cmd(["qsub", "rec.pbs"], cwd=e2e.root)
    job = int(res.stdout.strip().split(".")[0])
    e2e.jobs["pbs"] = job
    info = e2e.show(job)
    assert info["JobName"] == "hpcds1mpi-gemm" and info["Partition"] == "debug"
    assert info["TimeLimit"] == "00:01:00"  # #PBS -l walltime
    assert info["NumNodes"].split("-")[0] == str(nodes)
    assert info["NumTasks"] == str(nodes * mpiprocs)
    assert e2e.slurm.wait(job, timeout=180) == "COMPLETED"
    # The wrapper ignores `#PBS -o` / `-j oe` in the script (docs/slurm.md): output goes to
    # <script>.o<job id> in the submit directory.
    out = e2e.root / f"rec.pbs.o{job}"
    assert out.exists() and not (e2e.root / "pbs-out.txt").exists()
    assert re.search(r"gemm size=256 \S+ \(\d+ ranks\): ok", out.read_text()), out.read_text()


def test_pbs_two_node_select_through_the_qsub_wrapper(e2e):
    from hpcds1mpi.launch.directives import BatchJob
    from hpcds1mpi.launch.scripts import render
    from hpcds1mpi.cluster import load_cluster
    from hpcds1mpi.config import Configuration

    cluster = load_cluster(e2e.cluster)
    probe_out = e2e.root / "pbs-ranks"
    probe_out.mkdir()
    job = BatchJob(Configuration(2, 2, 1), cluster.partition("debug"),
                   program=[sys.executable, str(e2e.root / "probe.py"), str(probe_out),
                            sys.executable, "-c", "from mpi4py import MPI; "
                            "print('world', MPI.COMM_WORLD.Get_size())"],
                   cluster=cluster, job_name="e2e-pbs2", time_limit_s=120)
    (e2e.root / "two.pbs").write_text(render(job, "pbs"))
    infos = []

    def qsub() -> int:
        job_id = int(e2e.slurm.cmd(["qsub", "two.pbs"], cwd=e2e.root).stdout.strip().split(".")[0])
        infos.append(e2e.show(job_id))
        return job_id

    job_id, state, out = e2e.run("pbs2", qsub, f"{e2e.root}/two.pbs.o%j", timeout=180)
    assert (infos[-1]["NumNodes"].split("-")[0], infos[-1]["NumTasks"]) == ("2", "4")
    assert state == "COMPLETED", out
    ranks = _read_ranks(probe_out)
    assert out.count("world") == 4 and out.count("4") == 4, out  # 4 ranks (lines interleave)
    assert sorted(int(r["PMI_RANK"]) for r in ranks) == [0, 1, 2, 3]
    assert {r["PMI_SIZE"] for r in ranks} == {"4"}
    assert sorted(int(r["SLURM_NODEID"]) for r in ranks) == [0, 0, 1, 1]  # 2 per node


# ---------------------------------------------------------------------------------- (3)


def test_walltime_killed_sweep_resumes_without_loss_or_duplicates(e2e):
    from hpcds1mpi.measure.plan import build_plan, load_plan_file  # noqa: F401
    from hpcds1mpi.records.telemetry import read_runs

    state = e2e.slurm.wait(e2e.wall_job, timeout=200)
    assert state == "TIMEOUT", (e2e.root / f"wall-{e2e.wall_job}.out").read_text()[-2000:]
    first = read_runs(e2e.root / "wall.h5")
    planned = len(WALL_SIZES.split(",")) * 2
    assert 0 < len(first[first["status"] == "ok"]) < planned
    job = e2e.submit("wall-resume", _wall_script(e2e.root, "5", resume=True))
    assert e2e.slurm.wait(job, timeout=200) == "COMPLETED", \
        (e2e.root / f"wall-{job}.out").read_text()[-2000:]
    final = read_runs(e2e.root / "wall.h5")
    assert len(final) == planned
    assert final["run_id"].is_unique
    assert set(final["status"]) == {"ok"}, final["status"].value_counts()
    # Every run finished before the kill kept its measurement (nothing re-run).
    kept = first[first["status"] == "ok"].set_index("run_id")["runtime_s"]
    again = final.set_index("run_id").loc[kept.index, "runtime_s"]
    assert (again == kept).all()
    sizes = sorted(set(final["size"]))
    assert sizes == [int(s) for s in WALL_SIZES.split(",")]


# ---------------------------------------------------------------------------------- (5)


def test_sacct_records_of_these_jobs_are_ingested(e2e):
    if not e2e.slurm.accounting:
        pytest.skip("the test Slurm runs without accounting (HPCDS1MPI_SLURM_ACCOUNTING=0)")
    from hpcds1mpi.errors import IngestError
    from hpcds1mpi.records.ingest import ingest

    ids = dict(e2e.jobs)
    assert {"recommended", "calibration", "wall", "wall-resume"} <= set(ids), ids
    capture = e2e.root / "sacct.txt"
    want = {str(i) for i in ids.values()}
    table = None
    for _ in range(60):  # slurmdbd receives end records asynchronously
        res = e2e.slurm.cmd(["sacct", "-P", "--format=ALL", "-j",
                             ",".join(str(i) for i in ids.values())])
        capture.write_text(res.stdout)
        try:
            table = ingest([capture])
            table = table[0] if isinstance(table, tuple) else table
        except IngestError:
            table = None
        if table is not None and want <= set(table["job_id"].astype(str)):
            break
        time.sleep(0.5)
    assert table is not None, capture.read_text()[:2000]
    rows = {str(r["job_id"]): r for r in table.to_dict("records")}
    assert want <= set(rows), (sorted(rows), want)
    status = {name: rows[str(i)]["status"] for name, i in ids.items()}
    assert status["wall"] == "timeout"
    assert all(status[n] == "ok" for n in ("recommended", "calibration", "wall-resume")), status
    assert rows[str(ids["wall"])]["workload"] == "e2e-wall"
    assert rows[str(ids["recommended"])]["partition"] == "debug"
