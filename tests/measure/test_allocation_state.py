"""A launch that failed because its Slurm allocation ended is interrupted, not failed."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.helpers import logging_command as _fake

from hpcds1mpi.measure.allocation_state import allocation_end
from hpcds1mpi.records import telemetry
from tests.helpers import hpcds1mpi_exe
# s35 tester X3's copied variables, and a running 1-node, 1-CPU job (a fixture)
from tests.test_slurm_allocation import COPIED, _squeue_logged, running_job  # noqa: F401


def test_outside_an_allocation_nothing_ended():
    assert allocation_end({"PATH": "/usr/bin:/bin"}) == ""


@pytest.mark.slurm
def test_a_cancelled_allocation_stops_the_sweep_with_the_run_interrupted(slurm, tmp_path):
    """Was (s28 tester U): `scancel` of the sweep's salloc recorded the run `failed` (with a
    line of Open MPI's help text as its reason), learnt by train, and the sweep went on."""
    out = tmp_path / "c.h5"
    command = "sh -c 'scancel $SLURM_JOB_ID; sleep 3; exit 3' size-{size}"  # $0: two sizes
    proc = subprocess.run(
        ["salloc", "-N1", "-n1", "-J", "hpcds1mpi-cancel", "--time=3", hpcds1mpi_exe(), "sweep",
         "--command", command, "--label", "c", "--sizes", "1,2", "--nodes", "1",
         "--ranks-per-node", "1", "--threads", "1", "--precisions", "fp64", "--launcher",
         "srun", "--min-repeats", "1", "--max-repeats", "1", "--out", str(out),
         "--no-progress"], capture_output=True, text=True, timeout=120, env=slurm.env,
        cwd=tmp_path, stdin=subprocess.DEVNULL)
    lines = [ln for ln in proc.stderr.splitlines() if "error:" in ln]
    assert proc.returncode != 0 and len(lines) == 1, proc.stderr
    assert "was cancelled" in lines[0] and "--resume inside a new allocation" in lines[0]
    runs = telemetry.read_runs(out)
    assert list(runs["status"]) == ["interrupted"], runs[["status", "error"]]
    assert sys.executable  # the sweep ran this Python's hpcds1mpi


def _sweep_a_failing_program(tmp_path, sizes: str, program=None):
    """``exit 3`` (or ``program``) swept at ``sizes`` by mpiexec (as the tester's local
    mpirun: SLURM_JOB_ID would pick srun): (summary, notes said, runs)."""
    from hpcds1mpi.cluster import Partition
    from hpcds1mpi.measure import external, external_plan

    if program is None:
        program = tmp_path / "failer.sh"
        program.write_text("#!/bin/sh\nexit 3\n")
        program.chmod(0o755)
    plan = external_plan.build_external_plan(f"{program} {{size}}", "failer", sizes=sizes,
                                             min_repeats=1, max_repeats=1, min_time=0)
    said: list[str] = []
    summary = external.run_external(plan, str(tmp_path / "f.h5"), Partition("p", 2, 4.0),
                                    progress=False, say=said.append, launcher="mpiexec")
    return summary, said, telemetry.read_runs(tmp_path / "f.h5")


def test_a_stale_slurm_job_id_leaves_the_programs_failure_its_own(tmp_path, monkeypatch):
    """Was (s28 tester Z6): outside any allocation, a finished job's SLURM_JOB_ID turned the
    program's exit 3 into "the Slurm allocation (job ...) has ended", recorded interrupted."""
    bin_dir = tmp_path / "bin"  # squeue as a real one answers for a job it no longer holds
    _fake(bin_dir, "squeue", 'case "$*" in *-j*) echo "slurm_load_jobs error: Invalid job id '
          'specified" >&2; exit 1;; esac', tmp_path / "squeue.log")
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    monkeypatch.setenv("SLURM_JOB_ID", "56435899")
    summary, said, runs = _sweep_a_failing_program(tmp_path, "1,2")
    assert list(runs["status"]) == ["failed", "failed"], runs[["status", "error"]]
    assert all(error.startswith("exit code 3") for error in runs["error"])
    notes = [line for line in said if "SLURM_JOB_ID=56435899" in line]
    assert len(notes) == 1 and "names no running allocation" in notes[0], said


def test_a_squeue_that_does_not_answer_is_said_once_and_not_asked_again(tmp_path, monkeypatch):
    """Was (s28 tester Z5): a hung squeue cost 2 x 15 s after every failed launch, silently."""
    from hpcds1mpi.measure import allocation_state

    monkeypatch.setattr(allocation_state, "ASK_TIMEOUT_S", 0.5)
    bin_dir, log = tmp_path / "bin", tmp_path / "squeue.log"
    _fake(bin_dir, "squeue", "exec sleep 30", log)
    _fake(bin_dir, "sacct", "exec sleep 30", tmp_path / "sacct.log")
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    monkeypatch.setenv("SLURM_JOB_ID", "424242")
    summary, said, runs = _sweep_a_failing_program(tmp_path, "1,2,3")
    assert list(runs["status"]) == ["failed"] * 3, runs[["status", "error"]]
    assert len(log.read_text().splitlines()) == 1, log.read_text()
    assert not (tmp_path / "sacct.log").exists()  # no allocation seen: no sacct either
    notes = [line for line in said if "squeue did not answer" in line]
    assert len(notes) == 1 and "recorded failed" in notes[0], said


def test_an_allocation_whose_squeue_stops_answering_is_not_asked_again(tmp_path):
    from hpcds1mpi.measure.allocation_state import Allocation

    bin_dir, log = tmp_path / "bin", tmp_path / "squeue.log"
    _fake(bin_dir, "squeue", "exec sleep 30", log)
    notes: list[str] = []
    allocation = Allocation("424242", {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}",
                                       "SLURM_JOB_ID": "424242"}, notes.append, timeout_s=0.3)
    assert [allocation.end() for _ in range(3)] == ["", "", ""]
    assert len(log.read_text().splitlines()) == 1 and len(notes) == 1, notes


@pytest.mark.slurm
def test_a_sweep_outlasting_its_job_stops_with_its_run_interrupted(slurm, tmp_path):
    """Was (s33 tester A8): past the job's time limit, before Slurm marks it ended, srun
    refuses new steps ("Job/step already completing or completed"); the sweep recorded the
    rest ``unsupported`` and exited 0. It stops at the first, ``interrupted``, exit 1."""
    out = tmp_path / "t.h5"
    command = "sh -c 'sleep 3' size-{size}"  # 3 s a launch: ~20 within the minute, 40 given
    proc = subprocess.run(
        ["salloc", "-N1", "-n1", "-J", "hpcds1mpi-timelimit", "--time=1", hpcds1mpi_exe(),
         "sweep", "--command", command, "--label", "t", "--sizes",
         ",".join(map(str, range(1, 41))), "--nodes", "1", "--ranks-per-node", "1",
         "--threads", "1", "--precisions", "fp64", "--launcher", "srun", "--min-repeats", "1",
         "--max-repeats", "1", "--out", str(out), "--no-progress"], capture_output=True,
        text=True, timeout=150, env=slurm.env, cwd=tmp_path, stdin=subprocess.DEVNULL)
    runs = telemetry.read_runs(out)
    assert "unsupported" not in set(runs["status"]), runs[["status", "error"]].tail()
    assert proc.returncode != 0 and len(runs) < 40, (proc.returncode, proc.stderr[-2000:])
    assert list(runs["status"]).count("interrupted") == 1, runs[["status", "error"]].tail()
    assert "--resume" in proc.stderr


@pytest.mark.slurm
def test_another_jobs_figures_beside_a_running_jobs_id_are_not_watched(
        slurm, running_job, tmp_path, monkeypatch):
    """s35 fixer L1: with SLURM_* copied from another job beside running job J's id (perhaps
    another user's J), the sweep watched J, and a launch that failed as J ended was recorded
    ``interrupted`` and stopped the sweep; it is the program's failure, with one note."""
    from hpcds1mpi import slurm_allocation
    from hpcds1mpi.measure.allocation_state import Allocation

    monkeypatch.setattr(slurm_allocation, "_FIRST_STATES", {})  # asked afresh, said afresh
    monkeypatch.setattr(slurm_allocation, "_SAID_LEFTOVER", set())
    monkeypatch.setenv(slurm_allocation.LEFTOVER_VARIABLE, "")  # restored to unset after
    monkeypatch.delenv(slurm_allocation.LEFTOVER_VARIABLE)
    for name in [name for name in os.environ if name.startswith("SLURM_")]:
        monkeypatch.delenv(name)
    job = running_job
    path, log = _squeue_logged(tmp_path)
    monkeypatch.setenv("PATH", path["PATH"])
    own = {"SLURM_NNODES": "1", "SLURM_JOB_NUM_NODES": "1", "SLURM_JOB_CPUS_PER_NODE": "1",
           "SLURM_JOB_PARTITION": "debug"}
    env = {**os.environ, "SLURM_CONF": slurm.conf, "SLURM_JOB_ID": job}
    assert Allocation.at_start({**env, **own}) is not None  # its own figures: watched
    for name, value in {"SLURM_CONF": slurm.conf, "SLURM_JOB_ID": job, **COPIED}.items():
        monkeypatch.setenv(name, value)
    # the program ends J, as J's end would come under a launch, then fails on its own
    program = tmp_path / "failer.sh"
    program.write_text(f"#!/bin/sh\nscancel {job}\nsleep 2\nexit 3\n")
    program.chmod(0o755)
    summary, said, runs = _sweep_a_failing_program(tmp_path, "1,2", program)
    assert list(runs["status"]) == ["failed", "failed"], runs[["status", "error"]]
    notes = [line for line in said if f"SLURM_JOB_ID={job}" in line]
    assert len(notes) == 1 and "contradict" in notes[0] and \
        "a failed launch is the program's failure" in notes[0], said
    asked = [line for line in log.read_text().splitlines() if "-j" in line.split()]
    assert asked == [f"-h -j {job} -o %T %D %C %P"]  # one answer for every reader
