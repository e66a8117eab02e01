"""A batch script's ``unset`` commands, read by its assignments' rules
(:mod:`hpcds1mpi.launch.script_unsets`)."""

from __future__ import annotations

from hpcds1mpi.launch.script_reading import read_script


def _unsets(body: str) -> list[tuple[str, int, int, bool, bool]]:
    """(name, line, line of the place it runs at, conditional, reaches the script's end)."""
    script = read_script("#!/bin/bash\n#SBATCH -N 1\n" + body)
    return [(u.name, u.line, script.text.count("\n", 0, u.value_span[0]) + 1, u.conditional,
             u.reaches(len(script.text))) for u in script.unsets]


def test_an_unset_runs_where_it_stands_or_where_its_function_is_called():
    """s46 review RV8: each was an unset for every later launch."""
    assert _unsets("unset A B\n( unset C )\nunset -f f\n") == [
        ("A", 3, 3, False, True), ("B", 3, 3, False, True), ("C", 4, 4, False, False)]
    assert _unsets("f() {\n  unset A\n}\ntrap f EXIT\nsrun ./app\nf\n") == [
        ("A", 4, 8, False, True)]  # none for the trap; the call's place
    assert _unsets("g() { unset A; }\nh() { g; }\nh | cat\nh\n") == [
        ("A", 3, 5, False, False), ("A", 3, 6, False, True)]


def test_an_unset_under_a_condition_is_marked_so():
    assert _unsets("if x; then unset A; fi\nunset B || true\nfalse || unset C\n"
                   "for i in 1; do unset D; done\n") == [
        ("A", 3, 3, True, True), ("B", 4, 4, False, True), ("C", 5, 5, True, True),
        ("D", 6, 6, True, True)]
    assert _unsets("f() {\n  if x; then unset A; fi\n}\nf\ng() { unset B; }\n"
                   "case $P in\n  big) g ;;\nesac\n") == [
        ("A", 4, 6, True, True), ("B", 7, 9, True, True)]
