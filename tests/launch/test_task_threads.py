"""Threads per rank beyond the CPUs Slurm gives a task (1 without ``--cpus-per-task``,
whatever OMP_NUM_THREADS says) are warned of (s45 tester B1)."""

from __future__ import annotations

from hpcds1mpi.launch.script_reading import read_script

S9 = ("#!/bin/bash\n#SBATCH -t 5\n#SBATCH -n 2\nexport OMP_NUM_THREADS=2\n"
      "mpirun.openmpi -np 2 pw.x -i si-20.in\nexport OMP_NUM_THREADS=1\n")


def test_threads_without_cpus_per_task_are_warned_of():
    script = read_script(S9)
    assert script.warnings == [
        "line 4: OMP_NUM_THREADS=2 runs 2 threads per rank, but the job asks no "
        "--cpus-per-task: Slurm gives each task 1 CPU, and places the tasks by it: its 2 "
        "threads oversubscribe them; ask #SBATCH --cpus-per-task=2"]


def test_fewer_cpus_per_task_than_threads_are_warned_of():
    script = read_script("#SBATCH -N 1 --ntasks-per-node=2 -c 1\nexport OMP_NUM_THREADS=4\n"
                         "mpirun -np 2 ./a\n")
    assert any("asks --cpus-per-task=1: Slurm gives each task 1 CPU" in w
               and "its 4 threads" in w for w in script.warnings)


def test_the_program_own_threads_count_too():
    script = read_script("#SBATCH -N 1\nsrun hpcds1mpi run --threads 2 stencil --size 8\n")
    assert any(w.startswith("line 2: --threads 2 runs 2 threads per rank") for w in
               script.warnings)


def test_threads_the_cpus_hold_are_not_warned_of():
    for text in ("#SBATCH -n 2 -c 2\nexport OMP_NUM_THREADS=2\nsrun ./a\n",
                 "#SBATCH -n 2 -c 2\nexport OMP_NUM_THREADS=$SLURM_CPUS_PER_TASK\nsrun ./a\n",
                 "#SBATCH -n 2\nexport OMP_NUM_THREADS=1\nsrun ./a\n",
                 "#SBATCH -n 2\nsrun ./a\n",
                 "#SBATCH -n 2 --exclusive\nexport OMP_NUM_THREADS=2\nsrun ./a\n",
                 "#PBS -l select=1:ncpus=2:mpiprocs=2\nexport OMP_NUM_THREADS=2\n"
                 "mpiexec -n 2 ./a\n"):
        assert not read_script(text).warnings, text
