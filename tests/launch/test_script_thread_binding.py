"""A job script's -bind-to core leaving a rank's threads one core (s31 tester P3)."""

from __future__ import annotations

from hpcds1mpi.launch.mpi_names import MPICH, OPENMPI
from hpcds1mpi.launch.script_binding import binding_note
from hpcds1mpi.launch.launch_line_checks import launch_checks
from hpcds1mpi.launch.script_reading import read_script
from hpcds1mpi.launch.script_rewrite import Layout, rewrite
from hpcds1mpi.launch.script_thread_binding import one_core_warning

#: The tester's adv/A.sbatch (hydra) and adv/D.pbs (a bare mpiexec).
A_SBATCH = """#!/bin/bash
#SBATCH -J heat
#SBATCH -N 1
#SBATCH --ntasks-per-node=2
#SBATCH -t 00:20:00
mpiexec.mpich -ppn 2 -n 2 -genv OMP_NUM_THREADS 2 -bind-to core ./heat 2000 100
export OMP_NUM_THREADS=1
"""
D_PBS = """#!/bin/bash
#PBS -N heat
#PBS -l select=2:ncpus=2:mpiprocs=1:ompthreads=2
#PBS -l walltime=00:30:00
cd $PBS_O_WORKDIR
mpiexec -f $PBS_NODEFILE -ppn 1 -n 2 -bind-to core ./heat 2000 100
export OMP_NUM_THREADS=2
"""


def test_bind_to_core_for_two_threads_is_warned_of_with_the_fix_for_its_mpi(tmp_path):
    script = read_script(A_SBATCH)
    warnings = launch_checks(script, str(tmp_path))[0]  # mpiexec.mpich: MPICH by its name
    assert ("line 6: -bind-to core binds each rank to one core, which its 2 threads share "
            "(they run as one): give -bind-to core:2") in warnings
    pbs = read_script(D_PBS)
    said = one_core_warning(pbs, pbs.launch, None)  # a bare mpiexec: either MPI's fix
    assert said.endswith("give -bind-to core:2 for MPICH / Intel MPI's hydra, --map-by "
                         "slot:PE=2 for Open MPI")
    assert one_core_warning(pbs, pbs.launch, OPENMPI).endswith("give --map-by slot:PE=2")


def test_a_count_or_one_thread_is_no_warning():
    for text in (A_SBATCH.replace("-bind-to core", "-bind-to core:2"),
                 A_SBATCH.replace("OMP_NUM_THREADS 2", "OMP_NUM_THREADS 1"),
                 A_SBATCH.replace("-bind-to core", "-bind-to numa")):
        script = read_script(text)
        assert one_core_warning(script, script.launch, MPICH) is None, text


def test_rewrite_gives_hydra_a_core_per_thread_and_says_so():
    script = read_script(A_SBATCH)
    text, _ = rewrite(script, Layout(1, 1, 2, cores_per_node=2), MPICH)
    assert "-genv OMP_NUM_THREADS 2 -bind-to core:2 ./heat" in text
    assert "line 6: --rewrite gives hydra -bind-to core:2" in binding_note(
        script, Layout(1, 1, 2, cores_per_node=2), MPICH)
    one = rewrite(read_script(text), Layout(1, 2, 1, cores_per_node=2), MPICH)[0]
    assert "-bind-to core ./heat" in one  # back to one core a rank for one thread
    assert "-bind-to core ./heat" in rewrite(script, Layout(1, 1, 2), OPENMPI)[0]  # not hydra's


#: The tester's adv/a1.sh (s40 A4): Open MPI's mpirun giving its rank two cores itself.
PE_SBATCH = """#!/bin/bash
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=1
#SBATCH --cpus-per-task=2
export OMP_NUM_THREADS=2
mpirun --np 1 --map-by slot:PE=2 --bind-to core ./hyb 30000
"""


def test_a_map_by_that_gives_a_rank_its_threads_cores_is_no_warning(tmp_path):
    """s40 tester A4: `--map-by slot:PE=2 --bind-to core` (and `ppr:1:node:PE=2`, what sweep
    gives Open MPI) was warned as binding a rank to one core, the fix the option written."""
    for mapping in ("slot:PE=2", "ppr:1:node:PE=2", "node:pe=4", "core:PE=2",
                    "slot:PE=2,oversubscribe"):
        script = read_script(PE_SBATCH.replace("slot:PE=2", mapping))
        assert one_core_warning(script, script.launch, OPENMPI) is None, mapping
        assert not [w for w in launch_checks(script, str(tmp_path))[0] if "binds" in w]
    script = read_script(PE_SBATCH.replace("--map-by slot:PE=2", "--cpus-per-proc 2"))
    assert one_core_warning(script, script.launch, OPENMPI) is None  # Open MPI 4's spelling
    script = read_script(PE_SBATCH.replace("OMP_NUM_THREADS=2", "OMP_NUM_THREADS=4"))
    assert one_core_warning(script, script.launch, OPENMPI) == (
        "line 6: --bind-to core with 2 cores per rank binds each rank to 2 cores, which its 4 "
        "threads share: give PE=4 in its --map-by")
    script = read_script(PE_SBATCH.replace("slot:PE=2", "slot:PE=1"))
    assert one_core_warning(script, script.launch, OPENMPI).endswith("give --map-by slot:PE=2")


#: The tester's elk/nothr.sbatch (s46 H3): Open MPI's mpirun with no binding of its own.
DEFAULT_SBATCH = """#!/bin/bash
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=1
#SBATCH --cpus-per-task=2
#SBATCH --time=00:05:00
cd runs/4-1-2b
mpirun.openmpi --allow-run-as-root -np 1 elk-lapw
"""


def test_open_mpi_default_binding_of_two_ranks_or_fewer_is_warned_of(tmp_path):
    """s46 tester H3: Open MPI binds each rank of a job of 2 ranks or fewer to one core by
    default, so 1 rank x 2 threads ran as 1 x 1; only the written --bind-to core was warned."""
    for text in (DEFAULT_SBATCH, DEFAULT_SBATCH.replace("cd runs", "export OMP_NUM_THREADS=2\ncd "
                                                        "runs"),
                 DEFAULT_SBATCH.replace(" -np 1", "")):  # no -n: the job's 1 task
        script = read_script(text)
        said = one_core_warning(script, script.launch, OPENMPI)
        assert said is not None and "binds each rank to one core by default" in said, text
        assert said.endswith("give --map-by slot:PE=2 (or --bind-to none)")
        assert said in launch_checks(script, str(tmp_path))[0]  # mpirun.openmpi: by its name
    two = read_script(DEFAULT_SBATCH.replace("ntasks-per-node=1", "ntasks-per-node=2")
                      .replace("-np 1", "-np 2"))
    assert "(here 2)" in one_core_warning(two, two.launch, OPENMPI)


def test_open_mpi_default_binding_is_no_warning_where_it_gives_a_rank_more_cores():
    """Above 2 ranks Open MPI binds to a socket / NUMA domain; a binding, an oversubscribed
    node or another MPI (hydra binds none by default) is not Open MPI's default core."""
    script = read_script(DEFAULT_SBATCH.replace("ntasks-per-node=1", "ntasks-per-node=3")
                         .replace("-np 1", "-np 3"))
    assert one_core_warning(script, script.launch, OPENMPI) is None
    for option in ("--bind-to none", "--map-by slot:PE=2", "--cpus-per-proc 2",
                   "--mca hwloc_base_binding_policy none", "--oversubscribe"):
        script = read_script(DEFAULT_SBATCH.replace("-np 1", f"-np 1 {option}"))
        assert one_core_warning(script, script.launch, OPENMPI) is None, option
    script = read_script(DEFAULT_SBATCH.replace(
        "cd runs", "export OMPI_MCA_hwloc_base_binding_policy=none\ncd runs"))
    assert one_core_warning(script, script.launch, OPENMPI) is None
    script = read_script(DEFAULT_SBATCH)
    assert one_core_warning(script, script.launch, MPICH) is None
    assert one_core_warning(script, script.launch, None) is None
    script = read_script(DEFAULT_SBATCH.replace("cpus-per-task=2", "cpus-per-task=1"))
    assert one_core_warning(script, script.launch, OPENMPI) is None
