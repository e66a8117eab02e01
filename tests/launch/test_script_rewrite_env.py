"""Rewriting the thread variables a launch line sets for its ranks, in every spelling the
launchers document, and a note that names what the rewrite set."""

from __future__ import annotations

import pytest

from hpcds1mpi.launch.script_reading import read_script
from hpcds1mpi.launch.script_rewrite import Layout, rewrite, thread_carriers, threads_note

HYDRA = ("#!/bin/bash\n#SBATCH --partition=regular\n#SBATCH -N 2\n#SBATCH --exclusive\n"
         "#SBATCH -t 04:00:00\nmodule load intel intelmpi\nexport I_MPI_PIN_DOMAIN=omp\n"
         "mpiexec.hydra -n 16 -ppn 8 -genv OMP_NUM_THREADS 4 ./app 128\n")


def test_hydras_genv_name_value_takes_the_new_threads():
    """s29 tester D1: `-genv OMP_NUM_THREADS 4` was read (4 threads) but kept by the rewrite
    to 1 thread, so 2 ranks per node ran 4 threads each on 2 cores."""
    script = read_script(HYDRA)
    assert script.threads == 4
    out, changes = rewrite(script, Layout(64, 2, 1))
    assert "mpiexec.hydra -n 128 -ppn 2 -genv OMP_NUM_THREADS 1 ./app 128\n" in out
    assert read_script(out).threads == 1


@pytest.mark.parametrize("spelled, written", [
    ("-genv OMP_NUM_THREADS 4", "-genv OMP_NUM_THREADS 2"),  # Intel MPI, MPICH hydra
    ("-env OMP_NUM_THREADS 4", "-env OMP_NUM_THREADS 2"),  # hydra, per executable
    ("-genv OMP_NUM_THREADS=4", "-genv OMP_NUM_THREADS=2"),
    ("-x OMP_NUM_THREADS=4", "-x OMP_NUM_THREADS=2"),  # Open MPI
    ("-genv OMP_NUM_THREADS '4'", "-genv OMP_NUM_THREADS 2"),
])
def test_every_spelling_of_a_launch_lines_threads_is_rewritten(spelled, written):
    text = f"#!/bin/bash\n#SBATCH -N 1\nmpiexec -n 2 {spelled} ./app 8\n"
    out, _ = rewrite(read_script(text), Layout(1, 1, 2))
    assert f"mpiexec -n 1 {written} ./app 8\n" in out


def test_a_scheduler_variable_given_as_a_word_of_its_own_is_kept():
    text = "#SBATCH -N 1 -c 4\nmpiexec -n 2 -genv OMP_NUM_THREADS $SLURM_CPUS_PER_TASK ./app\n"
    out, _ = rewrite(read_script(text), Layout(1, 1, 2))
    assert "-genv OMP_NUM_THREADS $SLURM_CPUS_PER_TASK ./app\n" in out and "-c 2" in out


def test_the_note_names_what_the_rewrite_set():
    """s29 tester D1: the note said the rewrite set the threads 'in the CPUs per task (and
    OMP_NUM_THREADS where the script sets it)' where it had set neither."""
    script = read_script(HYDRA)
    note = threads_note(script, Layout(64, 2, 1))
    assert "it sets 1 thread per rank in `-genv OMP_NUM_THREADS 1` only" in note
    hybrid = read_script("#SBATCH --ntasks=8\n#SBATCH --cpus-per-task=4\n"
                         "export OMP_NUM_THREADS=$SLURM_CPUS_PER_TASK\nsrun ./prog 128\n")
    assert thread_carriers(hybrid, Layout(4, 2, 1)) == [
        "`--cpus-per-task=1`", "`OMP_NUM_THREADS=$SLURM_CPUS_PER_TASK`"]
    bare = read_script("#SBATCH -N 2\nmpiexec.hydra -n 4 ./app 128\n")
    # (the rewrite sets OMP_NUM_THREADS=1 where nothing did: s38 tester D3)
    assert thread_carriers(bare, Layout(2, 2, 1)) == ["`OMP_NUM_THREADS=1`"]


@pytest.mark.parametrize("outer", ["export OMP_NUM_THREADS=2\n", ""])
def test_a_subshells_export_is_left_and_the_launchs_own_threads_rewritten(outer):
    """s45 S1: the rewrite edits the assignment the launch inherits, never a subshell's that
    ended before it (`( export OMP_NUM_THREADS=8; ./prep )` stays as the user wrote it)."""
    prep = "( export OMP_NUM_THREADS=8; ./prep )\n"
    text = f"#!/bin/bash\n#SBATCH -N 1\n#SBATCH -n 2\n{outer}{prep}srun ./app 96\n"
    out, _ = rewrite(read_script(text), Layout(1, 1, 4))
    export = "export OMP_NUM_THREADS=4\n"
    kept = f"{export}{prep}" if outer else f"{prep}{export}"  # edited, else added
    assert out.endswith(f"{kept}srun -c 4 ./app 96\n")
    assert read_script(out).threads == 4
