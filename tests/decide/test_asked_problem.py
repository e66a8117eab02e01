"""Why the asked layout gets no prediction, as ``advise`` says it (its ``!`` line): an srun
step whose threads share one bound CPU (s38 tester D1), a step Slurm refuses for asking more
than its job holds (D2), Open MPI's mpirun with more ranks than the job has tasks (s45 A4)."""

from __future__ import annotations

from hpcds1mpi.decide.advise import advise
from hpcds1mpi.decide.model_bundle import DEFAULT_MODEL

# advise's own fixtures: the shipped bundle, the lab cluster's places, the user's files aside.
from tests.decide.test_advise import bundle, places, user_files  # noqa: F401
#: The tester's s27: the threads share one CPU on Slurm 22.05 to 23.02.
SHARED = """#!/bin/bash
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=1
#SBATCH --cpus-per-task=2
#SBATCH --time=00:05:00
export OMP_NUM_THREADS=$SLURM_CPUS_PER_TASK
srun --cpu-bind=cores hpcds1mpi run gemm --size 512 --threads 2
"""
#: The tester's s41 with a kernel: the step asks 2 tasks per node of a job holding 1.
REFUSED = """#!/bin/bash
#SBATCH -N 2
#SBATCH -t 00:05:00
srun --ntasks-per-node=2 hpcds1mpi run gemm --size 512
"""
#: The tester's job-abi4 with a kernel: Open MPI's mpirun starts 2 ranks in a job of 1 task.
SLOTS = """#!/bin/bash
#SBATCH -N 1
#SBATCH --ntasks=1
#SBATCH -t 00:05:00
mpirun.openmpi -np 2 hpcds1mpi run gemm --size 512
"""



def _release(monkeypatch, number, text):
    from hpcds1mpi.launch import srun_cpus  # (the old code had no release: s38 D1)

    monkeypatch.setattr(srun_cpus, "slurm_release",
                        lambda: srun_cpus.Release(number, text) if number else None)


def test_threads_sharing_one_bound_cpu_get_no_prediction(bundle, places, monkeypatch):
    _release(monkeypatch, (22, 5), "22.05.8")
    a = advise(SHARED, bundle, places, model_dir=DEFAULT_MODEL)
    assert a.asked.config.threads == 2 and not a.asked.predicted
    assert a.asked.problem.startswith("line 7: --cpu-bind=cores binds each task to its 1 CPU, "
                                      "which its 2 threads share (srun 22.05.8 here")
    assert a.runtime_change_pct is None  # no "0 % shorter" for a job that shares a core
    assert any(n.startswith("line 7: --rewrite adds -c 2 to srun") for n in a.notes)


def test_a_release_that_gives_the_cpus_keeps_the_prediction(bundle, places, monkeypatch):
    _release(monkeypatch, (23, 11), "23.11.4")
    assert advise(SHARED, bundle, places, model_dir=DEFAULT_MODEL).asked.predicted
    _release(monkeypatch, None, "")
    unknown = advise(SHARED, bundle, places, model_dir=DEFAULT_MODEL)
    assert unknown.asked.predicted and any("on Slurm 22.05 to 23.02 srun does not take" in n
                                           for n in unknown.notes)


def test_a_step_slurm_refuses_is_said_not_predicted(bundle, places):
    a = advise(REFUSED, bundle, places, model_dir=DEFAULT_MODEL)
    assert not a.asked.predicted and a.runtime_change_pct is None
    assert a.asked.problem.startswith("line 4: srun asks 4 tasks x 1 CPU (2 per node), but the "
                                      "job holds 2 CPUs, 1 per node")
    assert "#SBATCH --ntasks-per-node=2" in a.asked.problem


def test_more_ranks_than_mpirun_has_slots_is_said_not_predicted(bundle, places):
    """s45 tester A4: read as 1 x 2 ranks and predicted; the job fails 'not enough slots'."""
    a = advise(SLOTS, bundle, places, model_dir=DEFAULT_MODEL)
    assert not a.asked.predicted and a.runtime_change_pct is None
    assert a.asked.problem.startswith("line 5: Open MPI's mpirun.openmpi starts 2 ranks, but "
                                      "the job has 1 task, its slots: it stops at once")


def test_this_machine_s_size_is_said_as_such_where_the_real_partition_is_unknown(
        bundle, monkeypatch):
    """s48 tester Q5: with no Slurm to read, "2 nodes asked but partition 'local' has at most
    1" read as the size of the partition the job goes to; 'local' is this machine, and
    --cluster FILE judges it on the real one. A cluster file's partition is said as before."""
    from hpcds1mpi.cluster import Partition
    from hpcds1mpi.launch import partition_limits

    monkeypatch.setattr(partition_limits, "_CACHE", {(None, ""): None})  # Slurm not there
    monkeypatch.setenv("SLURM_CONF", "")
    local = [(None, Partition("local", cores_per_node=2, memory_gb=25.3))]  # max_nodes 1
    text = REFUSED.replace("srun --ntasks-per-node=2 ", "srun ")
    a = advise(text, bundle, local, model_dir=DEFAULT_MODEL, default_queue=True)
    assert a.asked.problem == ("2 nodes asked but partition 'local' has at most 1 ('local' is "
                               "this machine, not the partition the job is sent to: pass "
                               "--cluster FILE naming that partition to judge it there)")
    named = advise(text, bundle, local, model_dir=DEFAULT_MODEL)  # a described partition
    assert named.asked.problem == "2 nodes asked but partition 'local' has at most 1"
