"""A job script's shell functions: a body runs where it is called, as the last definition
before the call has it, braces or parentheses; a launch in a function no call runs is said
(s43 tester J8)."""

from __future__ import annotations

import pytest

from hpcds1mpi.decide.script_functions import definitions, launch_call, uncalled_launch
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
    assert [tuple(d)[:5] for d in definitions(script, works)] == [
        ("a", 5, 7, True, True), ("b", 8, 8, False, True), ("c", 9, 9, False, False)]


@pytest.mark.parametrize("body, before, after", [
    # the call of a function whose body only calls the launch's function is the launch
    ("inner() { " + LAUNCH + "; }\nouter() { inner; }\nouter\n", None, None),
    ("inner() {\n  " + LAUNCH + "\n}\nouter() {\n  inner\n}\npython3 pre.py\nouter\n",
     (11, "python3 pre.py"), None),
    ("inner() { " + LAUNCH + "; }\nmid() { inner; }\nouter() { mid; }\nouter\npython3 x.py\n",
     None, (9, "python3 x.py")),
    # more work in the outer body is said as that, not as the launch's function
    ("inner() { " + LAUNCH + "; }\nouter() { inner; python3 post.py; }\nouter\n", None,
     (7, "outer (runs python3 post.py)")),
])
def test_a_launch_called_from_another_function_runs_at_the_outer_call(body, before, after):
    """Was (s44 tester N4): `outer() { inner; }` / `outer` placed inner's launch at its
    definition and said `outer (runs inner)` ran after it."""
    script, launch = _read(body)
    assert (work_before(script, launch), work_after(script, launch)) == (before, after)
    assert launch_call(script, definitions(script), launch)[1] == \
        max(n for n, text in enumerate((HEAD + body).split("\n"), 1) if text == "outer")


def test_a_body_calls_the_definition_in_force_when_it_runs():
    """Was (s44 tester N4, FY3's item 5): `b() { a; }` was matched to the `a` before it by
    name; bash runs the `a` last defined before `b`'s call."""
    from hpcds1mpi.decide.script_workload import choose_launch, running_launches

    body = ("a() { srun -n 4 ./app 40; }\nb() { a; }\na() { srun -n 2 ./app 40; }\nb\n")
    script, _ = _read(body)
    first, second = script.launches
    assert "defined again on line 7 before any call" in uncalled_launch(script, first)
    assert uncalled_launch(script, second) == ""
    assert running_launches(script) == [second]
    assert choose_launch(script, [], {})[1] is second
    assert launch_call(script, definitions(script), second)[1] == 8
    assert work_after(script, second) is None
    # defined again after the call: the call ran the first, which is then the launch
    script, _ = _read("a() { srun -n 4 ./app 40; }\nb() { a; }\nb\na() { srun -n 2 ./app; }\n")
    assert uncalled_launch(script, script.launches[0]) == ""
    assert "never called" in uncalled_launch(script, script.launches[1])
