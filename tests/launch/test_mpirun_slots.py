"""Open MPI's ``mpirun -n N`` in a Slurm job of fewer tasks stops at once ("not enough
slots"): advise must say so, not predict it (s45 tester A4). The cases were run on the test
Slurm (22.05.8, 2 nodes of 2 cores): Open MPI 4.1.4 refused ``-np 2`` in ``--ntasks=1`` and
in ``-n 1 -c 2``; MPICH's and Intel MPI's ``mpiexec -n 2`` ran 2 ranks there."""

from __future__ import annotations

import pytest

from hpcds1mpi.launch.mpi_names import MPICH, OPENMPI
from hpcds1mpi.launch.mpirun_slots import other_launch_slots, shared_cpus, slots_refused
from hpcds1mpi.launch.script_reading import read_script

ABI4 = ("#!/bin/bash\n#SBATCH -J si\n#SBATCH -N 1\n#SBATCH --ntasks=1\n#SBATCH -t 00:05:00\n"
        "cd abi2/28-2-1\nmpirun.openmpi -np 2 abinit si.abi\n")


def _read(text: str):
    script = read_script(text)
    return script, script.launches[0]


def test_more_ranks_than_the_job_tasks_is_refused_with_the_fix():
    script, launch = _read(ABI4)
    said = slots_refused(script, launch, OPENMPI)
    assert said == ("line 7: Open MPI's mpirun.openmpi starts 2 ranks, but the job has 1 task, "
                    "its slots: it stops at once (not enough slots); ask #SBATCH --ntasks=2, "
                    "or give mpirun.openmpi --oversubscribe")


@pytest.mark.parametrize("directives, line, refused", [
    ("#SBATCH -n 1 -c 2\n", "mpirun.openmpi -np 2 ./a", True),  # run: refused
    ("#SBATCH -n 2\n", "mpirun.openmpi -np 2 ./a", False),
    ("#SBATCH -N 2\n", "mpirun.openmpi -np 2 ./a", False),  # -N alone: a task a node
    ("#SBATCH -N 2\n", "mpirun.openmpi -np 3 ./a", True),
    ("#SBATCH -N 1 --ntasks-per-node=2\n", "mpirun.openmpi -np 2 ./a", False),
    ("#SBATCH -n 1\n", "mpirun.openmpi --oversubscribe -np 2 ./a", False),
    ("#SBATCH -n 1\n", "mpirun.openmpi --map-by core:OVERSUBSCRIBE -np 2 ./a", False),
    ("#SBATCH -n 1\n", "mpirun.openmpi --host n1:2 -np 2 ./a", False),  # its own slots
    ("#SBATCH -n 1 --exclusive\n", "mpirun.openmpi -np 2 ./a", False),  # not judged
    ("#SBATCH -N 1-2 -n 1\n", "mpirun.openmpi -np 2 ./a", False),
    ("#SBATCH -n 1\n", "mpirun.openmpi ./a", False),  # a rank on each slot
])
def test_the_job_tasks_are_the_slots(directives, line, refused):
    script, launch = _read(f"#!/bin/bash\n{directives}{line}\n")
    assert bool(slots_refused(script, launch, OPENMPI)) is refused


def test_hydra_and_srun_are_not_judged_here():
    """hydra runs the ranks over the job's CPUs (run: mpiexec.mpich -n 2 in --ntasks=1), and
    srun's refusal is step_fit's."""
    script, launch = _read("#!/bin/bash\n#SBATCH -n 1\nmpiexec.mpich -n 2 ./a\n")
    assert slots_refused(script, launch, MPICH) == ""
    script, launch = _read("#!/bin/bash\n#SBATCH -n 1\nsrun -n 2 ./a\n")
    assert slots_refused(script, launch, OPENMPI) == ""


def test_a_pbs_script_is_not_judged():
    script, launch = _read("#!/bin/bash\n#PBS -l select=1:ncpus=2:mpiprocs=1\n"
                           "mpirun.openmpi -np 2 ./a\n")
    assert slots_refused(script, launch, OPENMPI) == ""


@pytest.mark.parametrize("directives, lines", [
    ("#SBATCH -n 1\n", "export OMPI_MCA_rmaps_base_oversubscribe=1\nmpirun.openmpi -np 2 ./a"),
    ("#SBATCH -n 1\n", "OMPI_MCA_rmaps_base_oversubscribe=true mpirun.openmpi -np 2 ./a"),
    ("#SBATCH -n 1\n", "mpirun.openmpi --mca rmaps_base_oversubscribe 1 -np 2 ./a"),
    ("#SBATCH -n 1\n", "mpirun.openmpi -mca rmaps_base_oversubscribe true --mca btl self "
                       "-np 2 ./a"),
    ("#SBATCH -n 1\n", "export OMPI_MCA_rmaps_base_oversubscribe=$ON\nmpirun.openmpi -np 2 ./a"),
])
def test_the_mca_parameter_that_allows_oversubscribing_is_read(directives, lines):
    """s46 review RV2: run on the test Slurm, both the variable and ``--mca`` let a
    ``--ntasks=1`` job run ``-np 2``; advise said it stops at once."""
    script, launch = _read(f"#!/bin/bash\n{directives}{lines}\n")
    assert slots_refused(script, launch, OPENMPI) == ""


@pytest.mark.parametrize("lines", [
    "export OMPI_MCA_rmaps_base_oversubscribe=0\nmpirun.openmpi -np 2 ./a",
    "mpirun.openmpi --mca rmaps_base_oversubscribe false -np 2 ./a",
    "(export OMPI_MCA_rmaps_base_oversubscribe=1)\nmpirun.openmpi -np 2 ./a",
    "mpirun.openmpi --mca btl self -np 2 ./a",
])
def test_the_mca_parameter_off_or_not_reaching_the_launch_still_stops_it(lines):
    script, launch = _read(f"#!/bin/bash\n#SBATCH -n 1\n{lines}\n")
    assert "it stops at once (not enough slots)" in slots_refused(script, launch, OPENMPI)


@pytest.mark.parametrize("directives, line, said", [
    # s46 review RV2: each stopped on the test Slurm ("not enough slots")
    ("#SBATCH -N 1\n#SBATCH --ntasks=1\n", "mpirun.openmpi -c 2 ./a",
     "starts 2 ranks, but the job has 1 task, its slots: it stops at once (not enough slots); "
     "ask #SBATCH --ntasks=2, or give"),
    ("#SBATCH -N 1\n#SBATCH --ntasks=1\n", "mpirun.openmpi -npernode 2 ./a",
     "starts 2 ranks (2 per node), but the job has 1 task, its slots: it stops at once (not "
     "enough slots); ask #SBATCH --ntasks=2 --ntasks-per-node=2, or give"),
    ("#SBATCH -N 1\n#SBATCH --ntasks=1\n", "mpirun.openmpi --map-by ppr:2:node ./a",
     "starts 2 ranks (2 per node), but"),
    ("#SBATCH -N 2\n", "mpirun.openmpi -N 2 ./a",
     "starts 4 ranks (2 per node), but the job has 2 tasks, its slots: it stops at once (not "
     "enough slots); ask #SBATCH --ntasks-per-node=2, or give"),
])
def test_a_rank_count_given_otherwise_than_by_n_is_judged_too(directives, line, said):
    script, launch = _read(f"#!/bin/bash\n{directives}{line}\n")
    assert said in slots_refused(script, launch, OPENMPI)
    assert launch.program == "./a"


@pytest.mark.parametrize("directives, line", [
    ("#SBATCH -N 2 --ntasks-per-node=2\n", "mpirun.openmpi -npernode 2 ./a"),
    ("#SBATCH -N 1 -n 4\n", "mpirun.openmpi --map-by ppr:2:node ./a"),
    ("#SBATCH -n 1\n", "mpirun.openmpi -ppn 2 ./a"),  # hydra's spelling: host_spelling's
    ("#SBATCH -n 1\n", "mpirun.openmpi --map-by ppr:2:socket ./a"),  # sockets not known
])
def test_a_count_per_node_within_the_slots_is_not_refused(directives, line):
    script, launch = _read(f"#!/bin/bash\n{directives}{line}\n")
    assert slots_refused(script, launch, OPENMPI) == ""


def test_a_launch_line_other_than_the_one_read_is_judged_too():
    """s48 tester O8: the line advise reads ran 1 rank, a second `mpirun.openmpi -np 2` of a
    --ntasks=1 job went unsaid, and the job stopped there; the line read is the asked
    layout's problem (asked_problem), not said twice."""
    from hpcds1mpi.launch.script_request import resolve_launch

    script = read_script("#!/bin/bash\n#SBATCH -N 1\n#SBATCH --ntasks=1\n"
                         "mpirun.openmpi -np 1 ./a 400\nmpirun.openmpi -np 2 ./a 300\n")
    resolve_launch(script, script.launches[0])
    first, second = script.launches
    assert other_launch_slots(script, first, OPENMPI) == ""
    assert other_launch_slots(script, second, OPENMPI) == slots_refused(script, second, OPENMPI)
    assert other_launch_slots(script, second, OPENMPI).startswith(
        "line 5: Open MPI's mpirun.openmpi starts 2 ranks, but the job has 1 task")


@pytest.mark.parametrize("directives, line, said", [
    # s49: each ran its ranks in the job (the test Slurm, mpiexec.mpich and Intel's mpiexec)
    ("#SBATCH --ntasks=2\n", "mpiexec -n 8 ./a",
     "line 3: mpiexec starts 8 ranks, but the job has 2 tasks: hydra (MPICH, Intel MPI) runs "
     "them all, sharing the job's CPUs (8 ranks on 2 CPUs), each slower for it; ask #SBATCH "
     "--ntasks=8, or give mpiexec -n 2"),
    ("#SBATCH -N 1 --ntasks=1\n", "mpiexec.mpich -np 2 ./a",
     "starts 2 ranks, but the job has 1 task: hydra (MPICH, Intel MPI) runs them all, sharing "
     "the job's CPUs (2 ranks on 1 CPU)"),
    ("#SBATCH -N 1 --ntasks=1\n", "mpiexec.hydra --np 2 ./a", "(2 ranks on 1 CPU)"),
    ("#SBATCH -n 1 -c 2\n", "mpiexec -n 4 ./a", "(4 ranks on 2 CPUs)"),
    ("#SBATCH -N 2 --ntasks=2\n", "mpiexec -ppn 2 ./a",
     "starts 4 ranks (2 per node), but the job has 2 tasks: hydra (MPICH, Intel MPI) runs "
     "them all, sharing the job's CPUs (4 ranks on 2 CPUs), each slower for it; ask #SBATCH "
     "--ntasks=4 --ntasks-per-node=2, or give mpiexec -ppn 1"),
    ("#SBATCH -N 2\n", "mpiexec --ppn 3 ./a", "ask #SBATCH --ntasks-per-node=3, or give "
                                                "mpiexec -ppn 1"),
    ("#SBATCH -N 1 --ntasks=1\n", "mpiexec -perhost 2 ./a", "starts 2 ranks (2 per node)"),
])
def test_hydra_asking_more_ranks_than_the_job_tasks_is_warned_of(directives, line, said):
    """s49: MPICH's and Intel MPI's hydra run more ranks than the job's tasks on its CPUs, no
    word; advise warned of Open MPI's only (which stops)."""
    script, launch = _read(f"#!/bin/bash\n{directives}{line}\n")
    assert said in shared_cpus(script, launch, MPICH)
    assert slots_refused(script, launch, MPICH) == ""  # it runs: no refusal


@pytest.mark.parametrize("directives, line", [
    ("#SBATCH --ntasks=2\n", "mpiexec -n 2 ./a"),
    ("#SBATCH --ntasks=2\n", "mpiexec ./a"),  # a rank on each slot
    ("#SBATCH -N 2\n", "mpiexec -ppn 1 ./a"),
    ("#SBATCH -N 2 --ntasks=4\n", "mpiexec -n 2 -ppn 4 ./a"),  # -n wins
    ("#SBATCH -n 1\n", "mpiexec -hosts n1:2 -n 2 ./a"),  # its own slots
    ("#SBATCH -n 1\n", "mpiexec -f hosts.txt -n 2 ./a"),
    ("#SBATCH -n 1 --exclusive\n", "mpiexec -n 2 ./a"),  # not judged
    ("#SBATCH -n 1\n", "mpiexec -n $NP ./a"),  # not known
    ("#SBATCH -n 1\n", "srun -n 2 ./a"),  # step_fit's
    ("#SBATCH -n 1 -c 4\n", "mpiexec -n 4 ./a"),  # a CPU each: nothing shared
])
def test_hydra_within_the_job_tasks_or_not_judged_says_nothing(directives, line):
    script, launch = _read(f"#!/bin/bash\n{directives}{line}\n")
    assert shared_cpus(script, launch, MPICH) == ""


def test_open_mpi_or_an_unknown_mpi_gets_no_sharing_warning():
    """Open MPI's mpirun stops instead (slots_refused); a launcher whose MPI is not known is
    not guessed."""
    script, launch = _read("#!/bin/bash\n#SBATCH -n 1\nmpirun -np 2 ./a\n")
    assert shared_cpus(script, launch, OPENMPI) == shared_cpus(script, launch, None) == ""
    assert slots_refused(script, launch, OPENMPI) != ""
    pbs, launch = _read("#!/bin/bash\n#PBS -l select=1:ncpus=2:mpiprocs=1\n"
                        "mpiexec -n 2 ./a\n")
    assert shared_cpus(pbs, launch, MPICH) == ""
