"""The note for a script that launches more than once: its time limit kept, said in its
scheduler's form."""

from __future__ import annotations

from hpcds1mpi.launch import script_repeats as sr
from hpcds1mpi.launch.script_reading import read_script


def test_a_script_that_launches_more_than_once_gets_one_note():
    once = read_script("#SBATCH -t 30\nsrun ./app 1\n")
    assert sr.repeats_note(once, 60) is None
    looped = read_script("#SBATCH -t 30\nfor i in 1 2 3; do srun ./app $i; done\n")
    note = sr.repeats_note(looped, 60)
    assert note.startswith("the script launches more than once (line 2, inside a loop)")
    assert "walltime (00:01:00) covers one launch" in note and "keeps its --time (00:30:00)" in note
    several = read_script("#!/bin/bash\nsrun ./pre\nsrun ./app 1\n")
    note = sr.repeats_note(several, 120)
    assert "(lines 2, 3)" in note and "none set: the partition's default" in note
    assert "--rewrite edits the launch options of line 2 only" in note


def test_only_the_launches_the_script_runs_are_counted():
    """s44 tester N4: a launch in a function defined again before its call never runs."""
    script = read_script("#!/bin/bash\na() { srun -n 4 ./app; }\nb() { a; }\n"
                         "a() { srun -n 2 ./app; }\nb\n")
    assert sr.repeats_note(script, 60) is not None  # every launch line, by default
    assert sr.repeats_note(script, 60, script.launches[1:]) is None


def test_the_note_lists_a_few_of_many_launch_lines():
    """A generated script of 5,000 launch lines got a note listing every one of them."""
    many = read_script("#SBATCH -t 30\n" + "srun ./app\n" * 5000)
    note = sr.repeats_note(many, 60)
    assert "(lines 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 and 4990 more)" in note and len(note) < 400


def test_the_kept_time_limit_of_a_pbs_script_is_said_in_pbs_form():
    """s28 tester V9: a PBS walltime was shown as Slurm's 1-12:00:00."""
    looped = read_script("#PBS -l select=1:ncpus=2\n#PBS -l walltime=36:00:00\n"
                         "for i in 1 2; do mpiexec ./app; done\n")
    note = sr.repeats_note(looped, 90000)
    assert "the recommended walltime (25:00:00)" in note
    assert "--rewrite keeps its walltime (36:00:00)" in note
