"""The two-node test Slurm itself: MPI across both nodes, detection inside a job, walltime kill."""

from __future__ import annotations

import json
import re
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.conftest import SLURM_FINAL_STATES

pytestmark = pytest.mark.slurm

MPI_PROBE = textwrap.dedent("""\
    import json, os
    from mpi4py import MPI
    comm = MPI.COMM_WORLD
    print(json.dumps({"rank": comm.Get_rank(), "size": comm.Get_size(),
                      "nodeid": int(os.environ["SLURM_NODEID"]),
                      "node": os.environ.get("SLURMD_NODENAME")}), flush=True)
""")


def _write_job(path: Path, body: str, directives: list[str]) -> Path:
    lines = ["#!/bin/bash", *(f"#SBATCH {d}" for d in directives), "set -eu", body, ""]
    path.write_text("\n".join(lines))
    return path


@pytest.fixture(scope="module", autouse=True)
def walltime_job(slurm, tmp_path_factory):
    """The walltime-kill job (``sleep 300`` under ``--time=1``), submitted when the module
    starts: Slurm kills it only after 60-90 s, which the module's other tests (one CPU a node
    at most, beside its one CPU) now spend; its test, last, waits for what is left."""
    folder = tmp_path_factory.mktemp("walltime")
    script = _write_job(folder / "timeout.sh", "sleep 300",
                        ["-N1 -n1", "--time=1", f"--output={folder / 'timeout.out'}"])
    job = slurm.sbatch(script, cwd=folder)
    yield job
    slurm.cmd(["scancel", str(job)], check=False)  # a run that skipped its test: no sleeper left


def _json_lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


def _mpi_job(slurm, tmp_path: Path, mpi: str, python: str = sys.executable
             ) -> tuple[str, list[dict]]:
    probe = tmp_path / "probe.py"
    probe.write_text(MPI_PROBE)
    out = tmp_path / f"mpi-{mpi}.out"
    script = _write_job(tmp_path / f"mpi-{mpi}.sh",
                        f"srun --mpi={mpi} --kill-on-bad-exit=1 {python} {probe}",
                        ["-N2 --ntasks-per-node=1", "--time=2", f"--output={out}",
                         "--job-name=hpcds-mpi-probe"])
    _, state, text = slurm.run_job(lambda: slurm.sbatch(script, cwd=tmp_path), out, timeout=120)
    return state, _json_lines(text)


def test_two_node_mpi_job_spans_both_nodes(slurm, tmp_path):
    state, ranks = _mpi_job(slurm, tmp_path, "pmi2")
    assert state == "COMPLETED", ranks
    assert sorted(r["rank"] for r in ranks) == [0, 1]
    assert {r["size"] for r in ranks} == {2}
    assert sorted(r["nodeid"] for r in ranks) == [0, 1]
    assert sorted(r["node"] for r in ranks) == ["n1", "n2"]


@pytest.mark.skipif(not Path("/usr/lib/python3/dist-packages/mpi4py").is_dir(),
                    reason="Debian's python3-mpi4py (Open MPI) is not installed")
def test_open_mpi_under_srun_pmix_spans_both_nodes(slurm, tmp_path):
    """Was: every 2-node srun --mpi=pmix step failed ("task 1 launch failed": both emulated
    nodes made srun's PMIx folder in one /tmp, "File exists"); each node has its TmpFS now."""
    state, ranks = _mpi_job(slurm, tmp_path, "pmix", "/usr/bin/python3")
    assert state == "COMPLETED", ranks
    assert sorted(r["rank"] for r in ranks) == [0, 1] and {r["size"] for r in ranks} == {2}
    assert sorted(r["node"] for r in ranks) == ["n1", "n2"]


def test_without_pmi2_each_rank_is_a_singleton(slurm, tmp_path):
    # The check above can fail: without the PMI the mpich wheel understands, srun starts two
    # independent size-1 worlds. This is why job scripts must say --mpi=pmi2.
    state, ranks = _mpi_job(slurm, tmp_path, "none")
    assert state == "COMPLETED", ranks
    assert [r["size"] for r in ranks] == [1, 1]


def test_detect_slurm_inside_a_job_sees_the_partition(slurm, tmp_path):
    out = tmp_path / "detect.out"
    code = ("import json; from hpcds1mpi.cluster import detect_slurm; c = detect_slurm(); "
            "p = c.partition(); print(json.dumps({'cluster': c.name, **p.as_dict()}))")
    script = _write_job(tmp_path / "detect.sh", f'{sys.executable} -c "{code}"',
                        ["-N1 -n1", "--time=2", f"--output={out}"])
    state = slurm.wait(slurm.sbatch(script, cwd=tmp_path), timeout=120)
    assert state == "COMPLETED", out.read_text()
    (info,) = _json_lines(out.read_text())
    conf = Path(slurm.conf).read_text()
    cpus = int(re.search(r"NodeName=n\[1-2\].*\bCPUs=(\d+)", conf).group(1))
    assert info["name"] == "debug" and info["slurm_partition"] == "debug"
    assert info["cluster"] == re.search(r"^ClusterName=(\S+)", conf, re.M).group(1)
    assert info["cores_per_node"] == cpus
    assert info["memory_gb"] == pytest.approx(4.0)


def test_a_hung_job_fails_with_its_python_stacks(slurm, tmp_path):
    """The harness: a job that never ends fails its test in bounded time, is cancelled, and
    the failure shows where its Python process hung (SIGABRT + PYTHONFAULTHANDLER)."""
    program = tmp_path / "hang.py"
    program.write_text("import time\n\ndef stuck_in_a_test_hang():\n    time.sleep(600)\n\n"
                       "stuck_in_a_test_hang()\n")
    out = tmp_path / "hang.out"
    script = _write_job(tmp_path / "hang.sh", f"srun {sys.executable} {program}",
                        ["-N1 -n1", "--time=5", f"--output={out}"])
    jobs = []

    def submit():
        jobs.append(slurm.sbatch(script, cwd=tmp_path))
        return jobs[-1]

    with pytest.raises(pytest.fail.Exception) as failure:
        slurm.run_job(submit, out, timeout=10)
    assert len(jobs) == 1 and f"Slurm job {jobs[0]} still RUNNING" in str(failure.value)
    assert "stuck_in_a_test_hang" in str(failure.value)  # the stack, from the job's output
    deadline = time.monotonic() + 30
    while slurm.job_state(jobs[0]) not in SLURM_FINAL_STATES and time.monotonic() < deadline:
        time.sleep(0.5)
    assert slurm.job_state(jobs[0]) in SLURM_FINAL_STATES


@pytest.mark.slow
def test_walltime_kill_ends_in_timeout(slurm, walltime_job):
    # --time=1 is one minute; slurmctld checks limits every ~30 s, so the job ends 60-100 s
    # after its submission (at the module's start: see walltime_job).
    assert slurm.wait(walltime_job, timeout=180) == "TIMEOUT"
