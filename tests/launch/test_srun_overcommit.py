"""srun is given --overcommit where a step asks more CPUs of a node than the allocation holds
(s31 tester P4: without it srun refused the step, and the refusal was recorded as the
program's failure)."""

from __future__ import annotations

from hpcds1mpi.config import Configuration
from hpcds1mpi.launch import launchers
from hpcds1mpi.launch.srun_overcommit import asks_overcommit, overcommit_note


def test_a_step_over_the_allocations_cpus_is_given_overcommit_and_said():
    srun = launchers.local("srun", mpi="pmi2", cores=2)
    over, fits = Configuration(1, 2, 2, "cpu", "fp64"), Configuration(1, 2, 1, "cpu", "fp64")
    assert "--overcommit" in srun.tokens(over) and "--overcommit" not in srun.tokens(fits)
    assert srun.notes(fits) == []
    (note,) = srun.notes(over)
    assert note.startswith("2 rank(s) x 2 thread(s) on a node whose allocation holds 2 cpu(s): "
                           "srun is given --overcommit")
    assert srun.tokens(over)[-2:] == ["--mpi=pmi2", "--overcommit"]  # the user's options last


def test_the_users_own_overcommit_is_not_given_twice():
    over = Configuration(1, 2, 2, "cpu", "fp64")
    for given in (("-O",), ("--overcommit",), ("--overc",)):
        srun = launchers.local("srun", args=given, cores=2)
        assert srun.tokens(over).count("--overcommit") == given.count("--overcommit")
        assert srun.tokens(over)[-1] == given[0]
        assert overcommit_note(over, 2, given) == ""
    assert not asks_overcommit(("--overlap", "-o", "out.txt"))


def test_unknown_cpus_and_a_batch_script_never_overcommit():
    """A script's job asks what its step needs, so the scheduler refuses the job itself."""
    over = Configuration(1, 2, 2, "cpu", "fp64")
    assert "--overcommit" not in launchers.local("srun").tokens(over)
    assert "--overcommit" not in launchers.for_script("slurm", None, cores=2).tokens(over)
