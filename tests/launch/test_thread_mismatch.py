"""A program's own thread option against the OMP_NUM_THREADS its job script sets (s37 tester
G2)."""

from __future__ import annotations

from hpcds1mpi.launch import script_request as sr
from hpcds1mpi.launch.script_reading import read_script
from hpcds1mpi.launch.thread_mismatch import disagreement_warning

#: The tester's script: OMP_NUM_THREADS=2 and gmx_mpi mdrun -ntomp 1, which mdrun refuses.
WRONG_GMX = ("#!/bin/bash\n#SBATCH -N 1\n#SBATCH --ntasks-per-node=1\n"
             "#SBATCH --cpus-per-task=2\n#SBATCH -t 00:10:00\nexport OMP_NUM_THREADS=2\n"
             "mpirun.openmpi -np 1 gmx_mpi mdrun -s md.tpr -ntomp 1 -nb cpu -nsteps 150 "
             "-deffnm run\n")


def _read(text: str, command: str):
    script = read_script(text)
    script.command = command
    sr.resolve_launch(script, script.launch)
    return script


def test_gromacs_thread_option_against_omp_num_threads_is_a_warning_that_it_stops():
    """s37 tester G2: only a note ("-ntomp 1 is read as the threads per rank"), though mdrun
    stops at once: "Environment variable OMP_NUM_THREADS (2) and the number of threads
    requested on the command line (1) have different values"."""
    script = _read(WRONG_GMX, "gmx_mpi mdrun -s ../../md.tpr -ntomp {threads} -nb cpu "
                              "-nsteps {size} -deffnm md")
    assert script.threads == 1
    assert script.warnings == [
        "line 7: the program's -ntomp 1 and OMP_NUM_THREADS=2 disagree: GROMACS's mdrun stops "
        "at once with \"Fatal error: Environment variable OMP_NUM_THREADS (2) and the number "
        "of threads requested on the command line (1) have different values\", so the job "
        "fails as written; make them equal (set OMP_NUM_THREADS=1, or give -ntomp 2)"]
    assert not any("-ntomp 1" in n for n in script.notes)
    same = _read(WRONG_GMX.replace("OMP_NUM_THREADS=2", "OMP_NUM_THREADS=1"),
                 "gmx_mpi mdrun -ntomp {threads}")
    assert same.warnings == []


def test_another_programs_thread_option_is_a_warning_of_what_was_measured():
    script = _read("#SBATCH -N 1 -c 4\nexport OMP_NUM_THREADS=4\nsrun ./solver --nt=2 in.dat\n",
                   "./solver --nt={threads} in.dat")
    assert script.threads == 2
    (warning,) = script.warnings
    assert warning.startswith("line 3: the program's --nt=2 and OMP_NUM_THREADS=4 disagree: "
                              "the sweep measured it only with the two equal; as written its "
                              "ranks run 2 threads each")
    assert warning.endswith("make them equal (set OMP_NUM_THREADS=2, or give --nt=4)")


def test_hpcds1mpis_own_threads_stay_a_note():
    # -c 2: the CPUs its 2 threads need (without it they oversubscribe 1: s45 tester B1)
    script = read_script("#SBATCH -N 1 -c 2\nexport OMP_NUM_THREADS=1\nsrun hpcds1mpi run stencil"
                         " --size 9 --threads 2\n")
    assert script.warnings == [] and any("--threads 2" in n for n in script.notes)


def test_the_fix_names_the_option_as_written():
    assert disagreement_warning(3, "/opt/gromacs/bin/gmx_mpi_d", "-ntomp 4", 4,
                                "ompthreads=2", 2).endswith(
        "(set ompthreads=4, or give -ntomp 2)")
