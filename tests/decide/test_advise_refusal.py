"""Why ``advise --rewrite`` writes nothing (:mod:`hpcds1mpi.decide.advise_refusal`), with the
shipped bundle on the lab partition: a program that may start its own ranks (GPAW's
``gpaw -P N``, s29 tester B1) keeps its layout."""

from __future__ import annotations

import pytest

from hpcds1mpi.errors import ConfigError
from tests.decide.test_advise import bundle, places, user_files  # noqa: F401 (fixtures)
from tests.decide.test_advise import run as advise_text

#: GPAW's documented self-launch: `gpaw -P N` runs mpiexec itself, no launch line.
SELF_LAUNCHED = """#!/bin/bash
#SBATCH --partition=standard
#SBATCH --nodes={nodes}
#SBATCH --ntasks-per-node=2
#SBATCH --time={time}
export OMP_NUM_THREADS=1
gpaw -P {ranks} python h2.py 25
"""


def run(text, bundle, places, **kw):
    return advise_text(text, bundle, places, workload="stencil", size=128, **kw)


def test_a_new_layout_for_a_program_that_may_start_its_own_ranks_is_refused(bundle, places):
    """s29 tester B1: the rewrite set --ntasks-per-node=1 and left `gpaw -P 2`: the job
    failed "not enough slots"."""
    # 2 nodes: the measured 1 node is recommended over it (s35 tester R6)
    a = run(SELF_LAUNCHED.format(nodes=2, time="00:30:00", ranks=4), bundle, places)
    assert a.recommended is not None and a.recommended.config != a.asked.config
    assert a.rewritten is None
    assert a.rewrite_refused.replace("refused", "would be refused", 1) in a.notes
    assert a.rewrite_refused.startswith(
        "--rewrite refused: no launch line (srun / mpirun / mpiexec / aprun / ibrun) was "
        "recognised (line 7 runs `gpaw -P 4 python h2.py 25`)"), a.rewrite_refused
    assert "\n" not in a.rewrite_refused
    assert a.asked.lines == [3, 4, 5, 6]  # the threads read from line 6's OMP_NUM_THREADS


def test_a_rewrite_that_keeps_the_layout_is_still_written(bundle, places):
    # 1 node x 2 ranks: the measured layout recommend's rules keep (s34 tester S1, s35 R6)
    a = run(SELF_LAUNCHED.format(nodes=1, time="10:00:00", ranks=2), bundle, places)
    assert a.recommended.config == a.asked.config and not a.rewrite_refused
    assert [c.line for c in a.changes] == [5] and "gpaw -P 2" in a.rewritten


def test_the_same_program_on_a_launch_line_is_rewritten(bundle, places):
    text = SELF_LAUNCHED.format(nodes=1, time="00:30:00", ranks=2).replace(
        "gpaw -P 2 python", "srun gpaw python")
    a = run(text, bundle, places)
    assert a.rewritten is not None and not a.rewrite_refused


def test_without_workload_the_verdict_names_the_line_and_the_models_workloads(bundle, places):
    """s29 tester B1: "no launched program was found, so the script names no workload the
    model was trained on (gpaw)", which read as if gpaw were not one."""
    text = SELF_LAUNCHED.format(nodes=1, time="00:30:00", ranks=2)
    a = advise_text(text, bundle, places)
    reason = a.verdict["reasons"][0]
    assert reason.startswith("no launch line (srun / mpirun / mpiexec / aprun / ibrun) was "
                             "recognised (line 7 runs `gpaw -P 2 python h2.py 25`), so its "
                             "workload is not known; the model has "), reason
    assert "stencil" in reason and reason.endswith("pass --workload (and --size) if it is one "
                                                   "of them")
    with pytest.raises(ConfigError, match=r"^no problem size for stencil in the script: no "
                       r"launch line .* \(line 7 runs `gpaw -P 2 python h2.py 25`\); pass "
                       r"--size$"):
        advise_text(text, bundle, places, workload="stencil")


#: s38 tester D4: a strong-scaling array, array task i on i ranks.
ARRAY = """#!/bin/bash
#SBATCH --partition=standard
#SBATCH --array=1-2
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=2
#SBATCH --time=00:05:00
srun -n {ranks} hpcds1mpi run gemm --size 512
"""


def test_a_new_layout_under_a_rank_count_not_known_here_is_refused(bundle, places):
    """The rewrite cut --ntasks-per-node to 1 under `srun -n $SLURM_ARRAY_TASK_ID`: array
    task 2 failed ("More processors requested than permitted")."""
    a = advise_text(ARRAY.format(ranks="$SLURM_ARRAY_TASK_ID"), bundle, places)
    assert a.recommended is not None and a.recommended.config != a.asked.config
    assert a.rewritten is None and a.rewrite_refused == (
        "--rewrite refused: line 7's srun -n $SLURM_ARRAY_TASK_ID is not known until the job "
        "runs (the array task's index, which differs from task to task), so a new allocation "
        "could hold fewer tasks or CPUs than the step asks, and Slurm would refuse it; the "
        "script keeps its layout (write the count as a number, or change the directives by "
        "hand for the largest count it takes)")
    known = advise_text(ARRAY.format(ranks="2"), bundle, places)
    assert known.rewritten is not None and not known.rewrite_refused
    mpirun = advise_text(ARRAY.format(ranks="$NP").replace("srun -n", "mpirun -np"), bundle,
                         places)
    assert mpirun.rewrite_refused.startswith("--rewrite refused: line 7's mpirun -np $NP is "
                                             "not known until the job runs, so")


#: s48 tester O8: two runs of one program, each asking the job's 2 ranks.
TWO_LAUNCHES = """#!/bin/bash
#SBATCH --partition=standard
#SBATCH --nodes=1
#SBATCH --ntasks=2
#SBATCH --time=00:05:00
mpirun.openmpi -np 2 hpcds1mpi run gemm --size 512
{launcher} {second} hpcds1mpi run gemm --size 512
"""


@pytest.mark.parametrize("launcher, second, written", [
    ("mpirun.openmpi", "-np 2", "`mpirun.openmpi -np 2` asks 2 ranks"),
    ("srun", "--ntasks=2", "`srun --ntasks=2` asks 2 ranks"),
    ("mpiexec.mpich", "-n 2", "`mpiexec.mpich -n 2` asks 2 ranks"),  # then shares 1 CPU
])
def test_a_new_layout_another_launch_line_would_not_fit_is_refused(bundle, places, launcher,
                                                                    second, written):
    """The rewrite cut --ntasks to 1 and line 6's -np to 1, and kept line 7's `-np 2`: the job
    had run, its rewrite failed "not enough slots"."""
    a = advise_text(TWO_LAUNCHES.format(launcher=launcher, second=second), bundle, places)
    assert a.recommended.config.nodes * a.recommended.config.ranks_per_node == 1
    assert a.rewritten is None and a.rewrite_refused == (
        f"--rewrite refused: line 7's {written} where the recommended layout has 1, and "
        "--rewrite edits line 6's launch only: line 7 would stop the rewritten job (not enough "
        "slots, a step Slurm refuses) or crowd its CPUs; the script keeps its layout (drop that "
        "line's count so that it takes the job's, or change it by hand)")


@pytest.mark.parametrize("second", ["-np $SLURM_NTASKS", "", "-np 1", "-np 4"])
def test_another_launch_line_that_fits_or_already_asked_more_keeps_the_rewrite(
        bundle, places, second):
    """The scheduler's count and none follow the rewritten directives; one rank fits; 4 ranks
    already stopped the job (a warning says so), which the rewrite does not change."""
    a = advise_text(TWO_LAUNCHES.format(launcher="mpirun.openmpi", second=second), bundle,
                    places)
    assert a.rewritten is not None and not a.rewrite_refused
    assert "#SBATCH --ntasks=1\n" in a.rewritten and " -np 1 hpcds1mpi run" in a.rewritten
