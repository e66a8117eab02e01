"""The Slurm allocation's figures are believed only for a job Slurm says is running (s32 T4)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest

from hpcds1mpi import slurm_allocation
from hpcds1mpi.slurm_allocation import in_allocation, leftover_job
from tests.helpers import hpcds1mpi_exe, logging_command

#: The leftovers of s32 tester T4: a job that does not run, on a 4 x 64-core "allocation".
LEFTOVERS = {"SLURM_NNODES": "4", "SLURM_CPUS_ON_NODE": "64", "SLURM_JOB_PARTITION": "compute",
             "SLURM_MEM_PER_NODE": "200000"}


@pytest.fixture(autouse=True)
def _fresh_answers(monkeypatch):
    """Each test asks Slurm afresh (the answers are kept per process)."""
    monkeypatch.setattr(slurm_allocation, "_FIRST_STATES", {})
    monkeypatch.setattr(slurm_allocation, "_SAID_LEFTOVER", set())
    monkeypatch.setenv(slurm_allocation.LEFTOVER_VARIABLE, "")  # restored to unset after
    monkeypatch.delenv(slurm_allocation.LEFTOVER_VARIABLE)


def _ended_job(slurm) -> str:
    """The id of a real allocation that has ended (salloc of ``true``)."""
    proc = slurm.cmd(["salloc", "-N1", "-n1", "--time=1", "true"], timeout=60)
    return re.search(r"Granted job allocation (\d+)", proc.stderr).group(1)


def _squeue_logged(tmp_path) -> tuple[dict, "os.PathLike"]:
    """PATH with a squeue that logs each call, then runs the real one."""
    log = tmp_path / "squeue.log"
    logging_command(tmp_path / "bin", "squeue", f'exec {shutil.which("squeue")} "$@"', log)
    return {"PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}"}, log


def _cluster_beside(slurm, job: str, variables: dict, path: dict):
    """`hpcds1mpi cluster` run with ``variables`` beside ``job``'s id (no other SLURM_*)."""
    env = {**{k: v for k, v in slurm.env.items() if not k.startswith("SLURM_")},
           "SLURM_CONF": slurm.conf, "SLURM_JOB_ID": job, **variables, **path}
    return subprocess.run([hpcds1mpi_exe(), "cluster"], env=env, capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL)


@pytest.mark.slurm
def test_leftover_slurm_variables_of_an_ended_job_are_ignored_with_one_note(slurm, tmp_path):
    """Was (s32 tester T4): `hpcds1mpi cluster` said "slurm/slurm: 4 nodes x 64 cores ...
    this allocation holds 64 cores" on a 2-core VM, from a job that did not run."""
    job = _ended_job(slurm)
    path, log = _squeue_logged(tmp_path)
    proc = _cluster_beside(slurm, job, LEFTOVERS, path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("local/local: 1 nodes x "), proc.stdout
    assert "64 cores" not in proc.stdout and "allocation holds" not in proc.stdout
    notes = proc.stderr.splitlines()
    assert len(notes) == 1 and notes[0].startswith(f"note: SLURM_JOB_ID={job} names no "
                                                   "running allocation"), proc.stderr
    assert "unset them" in notes[0]
    asked = [line for line in log.read_text().splitlines() if "-j" in line.split()]
    assert asked == [f"-h -j {job} -o %T %D %C %P"]  # once per process


@pytest.mark.slurm
def test_a_real_allocation_is_read_in_salloc_and_under_srun(slurm, tmp_path):
    """The check must never drop a live allocation: salloc's shell and a step both read it."""
    path, log = _squeue_logged(tmp_path)
    env = {**{k: v for k, v in slurm.env.items() if not k.startswith("SLURM_")},
           "SLURM_CONF": slurm.conf, **path}
    script = f"{hpcds1mpi_exe()} cluster; srun -N1 -n1 {hpcds1mpi_exe()} cluster"
    proc = subprocess.run(["salloc", "-N2", "-p", "debug", "--time=2", "sh", "-c", script],
                          env=env, capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)
    lines = [ln for ln in proc.stdout.splitlines() if ln.strip()]
    assert proc.returncode == 0 and len(lines) == 2, (proc.stdout, proc.stderr)
    assert all(ln.startswith("hpcds1mpi/debug: 2 nodes x ") for ln in lines), lines
    assert "note: SLURM_JOB_ID" not in proc.stderr
    # salloc's shell asks once; the step's process has slurmstepd above it and asks nothing
    assert len(log.read_text().splitlines()) == 1


@pytest.mark.slurm
def test_the_answer_is_asked_once_and_said_once(slurm, tmp_path, capsys):
    job = _ended_job(slurm)
    path, log = _squeue_logged(tmp_path)
    env = {"SLURM_CONF": slurm.conf, "SLURM_JOB_ID": job, **LEFTOVERS, **path}
    assert [in_allocation(env) for _ in range(3)] == [False, False, False]
    assert leftover_job(env).startswith(f"SLURM_JOB_ID={job} names no running allocation")
    assert len([ln for ln in log.read_text().splitlines() if "-j" in ln.split()]) == 1
    assert capsys.readouterr().err.count("note: SLURM_JOB_ID=") == 1


def test_where_slurm_does_not_answer_the_variables_are_believed(tmp_path):
    """No squeue here, or one that answers nothing: an allocation cannot be told from a
    leftover, so SLURM_JOB_ID is believed as before (inside one Slurm always answers)."""
    empty = tmp_path / "empty"
    empty.mkdir()
    assert in_allocation({"SLURM_JOB_ID": "123", "PATH": str(empty)})
    log = tmp_path / "squeue.log"
    logging_command(tmp_path / "bin", "squeue", "echo 'fatal: no configuration' >&2; exit 1",
                    log)
    env = {"SLURM_JOB_ID": "123", "PATH": f"{tmp_path / 'bin'}:/usr/bin:/bin"}
    assert in_allocation(env) and in_allocation(env)
    assert len(log.read_text().splitlines()) == 2  # the job, then the list: once per process
    assert not in_allocation({"PATH": str(empty)})


def test_a_squeue_that_hangs_is_bounded_and_not_asked_again(tmp_path, monkeypatch):
    monkeypatch.setattr(slurm_allocation, "ASK_TIMEOUT_S", 0.3)
    log = tmp_path / "squeue.log"
    logging_command(tmp_path / "bin", "squeue", "exec sleep 30", log)
    env = {"SLURM_JOB_ID": "123", "PATH": f"{tmp_path / 'bin'}:/usr/bin:/bin"}
    assert in_allocation(env) and in_allocation(env)
    assert len(log.read_text().splitlines()) == 1


@pytest.mark.slurm
def test_leftover_variables_choose_no_srun_and_no_allocation_nodes(slurm, tmp_path):
    """The readers beside the partition's (s32 tester T4): the launcher, the nodes a sweep can
    reach and tune's allocation take a leftover job id as no allocation."""
    from hpcds1mpi.decide import tune_space
    from hpcds1mpi.launch import launcher_discovery, launchers
    from hpcds1mpi.measure.reachable_nodes import reachable_nodes

    job = _ended_job(slurm)
    env = {**os.environ, "SLURM_CONF": slurm.conf, "SLURM_JOB_ID": job, **LEFTOVERS}
    assert not launcher_discovery.in_slurm(env)
    assert reachable_nodes(launchers.local("mpiexec"), env)[0] == 1  # this machine, not 4
    part = type("P", (), {"usable_cores_per_node": 2, "cores_per_node": 2})()
    assert tune_space.allocation(part, "srun", env=env) == (1, 2)


@pytest.mark.slurm
def test_the_leftover_note_is_said_once_per_run_not_per_rank(slurm):
    """s32 verifier V3: `mpiexec -n 2 hpcds1mpi ...` said the note once per rank, and a
    sweep's launches each again; the first rank says it, and its children are told."""
    from tests.helpers import run_mpi

    job = _ended_job(slurm)
    env = {"SLURM_CONF": slurm.conf, "SLURM_JOB_ID": job, **LEFTOVERS}
    proc = run_mpi(2, [hpcds1mpi_exe(), "cluster"], env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.count(f"SLURM_JOB_ID={job} names no running allocation") == 1
    told = {**os.environ, **env, slurm_allocation.LEFTOVER_VARIABLE: job}
    child = subprocess.run([hpcds1mpi_exe(), "cluster"], env=told, capture_output=True,
                           text=True, timeout=120)
    assert child.returncode == 0 and "names no running allocation" not in child.stderr
    assert "local" in child.stdout  # still this machine, without asking Slurm again


def test_the_job_memory_is_what_slurm_gave_not_the_node():
    """s33 tester A1: salloc -N2 on a partition with DefMemPerCPU=500 holds 500M per CPU
    (real `scontrol show job` text), not the node's 4000M."""
    from pathlib import Path

    text = (Path(__file__).parent / "data" / "slurm_limits" / "job_work_n2.txt").read_text()
    assert slurm_allocation.job_memory_mb(text, 1) == 500.0
    assert slurm_allocation.job_memory_mb(text, 2) == 1000.0
    assert slurm_allocation.job_memory_mb("JobId=1 MinMemoryNode=3G", 4) == 3072.0
    assert slurm_allocation.job_memory_mb("JobId=1", 4) == 0.0


# -- another running job's id beside other figures (s35 tester X3) -----------------------------

#: s35 tester X3's copied variables: 2 nodes x 64 CPUs, beside a 1-node, 1-CPU job's id.
COPIED = {"SLURM_NNODES": "2", "SLURM_JOB_NUM_NODES": "2", "SLURM_CPUS_ON_NODE": "64",
          "SLURM_JOB_CPUS_PER_NODE": "64(x2)", "SLURM_JOB_PARTITION": "debug"}


@pytest.fixture
def running_job(slurm):
    """A real 1-node, 1-CPU job that sleeps (the tester's `sbatch -N1 --wrap 'sleep 900'`),
    running; cancelled after the test."""
    import time

    job = slurm.cmd(["sbatch", "--parsable", "-N1", "-n1", "-p", "debug", "--time=3",
                     "-o", "/dev/null", "--wrap", "sleep 170"]).stdout.strip().split(";")[0]
    try:
        deadline = time.monotonic() + 90
        while slurm.job_state(int(job)) != "RUNNING":
            if time.monotonic() > deadline:
                pytest.fail(f"job {job} did not start in 90 s ({slurm.job_state(int(job))})")
            time.sleep(0.5)
        yield job
    finally:
        slurm.cmd(["scancel", job], check=False)


@pytest.mark.slurm
def test_another_jobs_figures_beside_a_running_jobs_id_are_ignored_with_one_note(
        slurm, running_job, tmp_path):
    """Was (s35 tester X3): `hpcds1mpi cluster` said "slurm/debug: 2 nodes x 64 cores" of a
    running 1-node, 1-CPU job, and recommend wrote --ntasks-per-node=64, which pends for ever."""
    job = running_job
    path, log = _squeue_logged(tmp_path)
    proc = _cluster_beside(slurm, job, COPIED, path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("local/local: 1 nodes x "), proc.stdout
    notes = proc.stderr.splitlines()
    assert len(notes) == 1 and notes[0].startswith(
        f"note: SLURM_JOB_ID={job} is a running job of 1 node and 1 CPU in partition debug, "
        "which SLURM_JOB_NUM_NODES=2, SLURM_NNODES=2, SLURM_CPUS_ON_NODE=64, "
        "SLURM_JOB_CPUS_PER_NODE=64(x2) contradict"), proc.stderr
    assert "unset them" in notes[0] and f"srun --jobid={job}" in notes[0]
    asked = [line for line in log.read_text().splitlines() if "-j" in line.split()]
    assert asked == [f"-h -j {job} -o %T %D %C %P"]  # the state's one call, no second
    # the job's own figures are believed as before: no note, its one node and CPU
    own = {**COPIED, "SLURM_NNODES": "1", "SLURM_JOB_NUM_NODES": "1",
           "SLURM_JOB_CPUS_PER_NODE": "1"}
    del own["SLURM_CPUS_ON_NODE"]
    proc = _cluster_beside(slurm, job, own, path)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert proc.stdout.startswith("slurm/debug: 1 nodes x ") and "holds 1 cores" in \
        proc.stdout, proc.stdout


@pytest.mark.slurm
def test_another_jobs_figures_choose_no_srun_no_allocation_nodes_and_no_tune_allocation(
        slurm, running_job):
    """The readers beside the partition's take the contradicted variables as no allocation."""
    from hpcds1mpi.decide import tune_space
    from hpcds1mpi.launch import launcher_discovery, launchers
    from hpcds1mpi.measure.reachable_nodes import reachable_nodes

    env = {**os.environ, "SLURM_CONF": slurm.conf, "SLURM_JOB_ID": running_job, **COPIED}
    assert not in_allocation(env) and not launcher_discovery.in_slurm(env)
    assert reachable_nodes(launchers.local("mpiexec"), env)[0] == 1  # this machine, not 2
    part = type("P", (), {"usable_cores_per_node": 2, "cores_per_node": 2})()
    assert tune_space.allocation(part, "srun", env=env) == (1, 2)


def test_what_contradicts_the_job_is_named_and_what_agrees_is_not():
    """The rule of s35 tester X3, on squeue's figures of a job (no Slurm needed)."""
    facts = slurm_allocation.JobFacts("RUNNING", nodes=2, cpus=4, partition="debug")
    agreeing = {"SLURM_NNODES": "2", "SLURM_JOB_NUM_NODES": "2", "SLURM_CPUS_ON_NODE": "2",
                "SLURM_JOB_CPUS_PER_NODE": "2(x2)", "SLURM_JOB_PARTITION": "debug"}
    assert slurm_allocation.contradicted(agreeing, facts) == []
    assert slurm_allocation.contradicted({"SLURM_JOB_CPUS_PER_NODE": "1,2"}, facts) == []
    assert slurm_allocation.contradicted(
        {"SLURM_NNODES": "1", "SLURM_JOB_CPUS_PER_NODE": "4,2(x2)", "SLURM_CPUS_ON_NODE": "8",
         "SLURM_JOB_PARTITION": "long"}, facts) == [
        "SLURM_NNODES=1", "SLURM_CPUS_ON_NODE=8", "SLURM_JOB_CPUS_PER_NODE=4,2(x2)",
        "SLURM_JOB_PARTITION=long"]
    # counts that are no numbers are the reader's to refuse; unknown figures compare nothing
    assert slurm_allocation.contradicted({"SLURM_NNODES": "x", "SLURM_JOB_CPUS_PER_NODE":
                                          "9" * 5000}, facts) == []
    assert slurm_allocation.contradicted(COPIED, slurm_allocation.JobFacts("RUNNING")) == []
    assert slurm_allocation.total_cpus("4,2(x3)") == 10 and slurm_allocation.total_cpus("a") \
        is None
