"""A job script's shell functions: a body runs where it is called, as the last definition
before the call has it, braces or parentheses; a launch in a function no call runs is said
(s43 tester J8)."""

from __future__ import annotations

import pytest

from hpcds1mpi.decide.script_functions import definitions, uncalled_launch
from hpcds1mpi.decide.shell_lines import line_commands
from hpcds1mpi.decide.work_after_launch import first_work, work_after, work_before
from hpcds1mpi.launch.script_reading import read_script

HEAD = "#!/bin/bash\n#SBATCH -N 1\n#SBATCH --ntasks-per-node=4\n#SBATCH --time=00:30:00\n"
LAUNCH = "mpirun -np 4 ./prog 128"


def _read(body: str):
    script = read_script(HEAD + body)
    return script, script.launch


@pytest.mark.parametrize("body, before, after", [
    # a subshell body runs where it is called, never at its definition
    ("post() ( python3 plot.py )\n" + LAUNCH + "\npost\n", None, (7, "post (runs python3 plot.py)")),
    ("post() (\n  python3 plot.py\n)\n" + LAUNCH + "\npost\n", None, (9, "post (runs python3 plot.py)")),
    ("post() (python3 plot.py)\n" + LAUNCH + "\n", None, None),  # never called
    # the last definition before the call is the one it runs
    ("post() { python3 plot.py; }\npost() { :; }\n" + LAUNCH + "\npost\n", None, None),
    ("post() { :; }\npost() { python3 plot.py; }\n" + LAUNCH + "\npost\n", None,
     (8, "post (runs python3 plot.py)")),
    ("post() { :; }\n" + LAUNCH + "\npost\npost() { python3 plot.py; }\npost\n", None,
     (9, "post (runs python3 plot.py)")),
])
def test_a_body_runs_where_called_as_its_last_definition_has_it(body, before, after):
    script, launch = _read(body)
    assert (work_before(script, launch), work_after(script, launch)) == (before, after)


@pytest.mark.parametrize("body, said", [
    ("run_sim() { " + LAUNCH + "; }\necho hi\n", "which is never called"),
    ("run_sim() { " + LAUNCH + "; }\nrun_sim() { echo no; }\nrun_sim\n",
     "which is defined again on line 6 before any call"),
    ("run_sim() {\n  " + LAUNCH + "\n}\nrun_sim\n", ""),
    ("run_sim() { " + LAUNCH + "; }\nmain() { run_sim; }\nmain\n", ""),  # called from main
    (LAUNCH + "\n", ""),
])
def test_a_launch_in_a_function_no_call_runs_is_said(body, said):
    script, launch = _read(body)
    found = uncalled_launch(script, launch)
    assert said in found if said else found == ""
    if said:
        assert found.startswith(f"line {launch.line}: the launch is in the function `run_sim`")


def test_definitions_give_name_lines_and_what_the_body_runs():
    script, _ = _read("a() {\n  " + LAUNCH + "\n}\nb() ( python3 x.py )\nfunction c { :; }\n")
    works = lambda line: bool(first_work(line_commands(line)))  # noqa: E731
    assert [tuple(d) for d in definitions(script, works)] == [
        ("a", 5, 7, True, True), ("b", 8, 8, False, True), ("c", 9, 9, False, False)]
