"""A job script whose program no recognised launch line runs
(:mod:`hpcds1mpi.launch.script_unlaunched`; GPAW's self-launch, s29 tester B1)."""

from __future__ import annotations

from hpcds1mpi.launch.script_reading import read_script
from hpcds1mpi.launch.script_unlaunched import layout_refusal, no_launch, program_line

GPAW = """#!/bin/bash
#SBATCH -J h2
#SBATCH -p debug
#SBATCH -N 1
#SBATCH --ntasks-per-node=2
#SBATCH -t 00:20:00
export OMP_NUM_THREADS=1
gpaw -P 2 python h2.py 25
"""


def test_the_line_that_runs_the_program_is_named():
    script = read_script(GPAW)
    assert program_line(script) == (8, "gpaw -P 2 python h2.py 25")
    assert no_launch(script) == ("no launch line (srun / mpirun / mpiexec / aprun / ibrun) was "
                                 "recognised (line 8 runs `gpaw -P 2 python h2.py 25`)")
    refusal = layout_refusal(script)
    assert refusal.startswith("--rewrite refused: no launch line") and "\n" not in refusal
    assert "line 8 runs `gpaw -P 2" in refusal and "launch it with srun or mpirun" in refusal


def test_set_up_lines_redirections_and_continuations_are_read_past():
    script = read_script("#!/bin/bash\n#SBATCH -N 1\nmodule load gpaw\ncd $SLURM_SUBMIT_DIR\n"
                         "env OMP_PROC_BIND=close time ./app \\\n  40 > out.txt 2>&1\n"
                         "echo done\nexit 0\n")
    assert program_line(script) == (5, "./app 40")
    assert program_line(read_script("#!/bin/bash\n#SBATCH -N 1\nnice -n 5 taskset -c 0-1 "
                                    "gpaw -P 2 python h2.py\n")) == (3, "gpaw -P 2 python h2.py")
    assert program_line(read_script("#!/bin/bash\n#SBATCH -N 1\nmodule list\n")) is None
    assert "and no line runs a program" in no_launch(
        read_script("#!/bin/bash\n#SBATCH -N 1\necho hi\n"))


def test_the_threads_are_read_from_the_scripts_environment():
    """s29 tester B1: `export OMP_NUM_THREADS=1` before `gpaw -P 2 ...` was "neither
    OMP_NUM_THREADS nor CPUs per task are set": without a launch line it was not read."""
    script = read_script(GPAW.replace("OMP_NUM_THREADS=1", "OMP_NUM_THREADS=2"))
    assert script.launch is None and script.threads == 2 and script.lines["threads"] == [7]
    assert not any("neither OMP_NUM_THREADS" in n for n in script.notes), script.notes
    assert script.notes[0].startswith("no launch line (srun / mpirun / mpiexec / aprun / ibrun) "
                                      "was recognised (line 8 runs `gpaw -P 2")
    # set after the program ran: not its threads
    later = read_script(GPAW.replace("export OMP_NUM_THREADS=1\n", "") +
                        "export OMP_NUM_THREADS=4\n")
    assert later.threads == 1
