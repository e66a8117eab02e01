"""Profilers, debuggers and runners whose options are not read: the program is one word,
after ``--``, else the first path, else the first bare word that follows no option."""

from __future__ import annotations

import pytest

from hpcds1mpi.launch.tool_wrappers import (candidate_programs, is_tool, program_positions,
                                             program_starts)


def test_a_tool_is_known_by_its_file_name():
    assert is_tool("nsys") and is_tool("/usr/bin/valgrind") and not is_tool("./wrap")


@pytest.mark.parametrize("words, program", [
    (["nsys", "profile", "-o", "out", "--trace=mpi", "./app", "5"], ["./app"]),
    (["nsys", "profile", "-o", "stencil", "./myapp", "48"], ["./myapp"]),  # s42 tester F7
    (["hpcrun", "-e", "CPUTIME", "-o", "stencil", "./myapp"], ["./myapp"]),
    (["valgrind", "./myapp", "stencil"], ["./myapp"]),  # its argument is no program
    (["nsys", "profile", "-o", "stencil", "myapp", "48"], ["myapp"]),  # no path: past -o's
    (["valgrind", "hpcds1mpi", "run", "--threads", "2", "stencil"], ["hpcds1mpi"]),
    (["perf", "stat", "-e", "cycles", "--", "app", "5"], ["app"]),
    (["gdb", "--args", "app", "5"], ["app"]),  # a known flag takes no value
    (["strace", "-f", "-o", "log", "app"], ["app"]),
    (["gdb", "--args"], [])])
def test_the_program_is_one_word_never_an_options_value_or_an_argument(words, program):
    """s42 tester F7: every later bare word had been a candidate, so the ``-o`` value of
    ``nsys profile -o stencil ./myapp`` named the workload when ``./myapp`` matched none."""
    assert candidate_programs(words) == program


def test_a_value_that_names_a_program_on_path_may_be_the_program(tmp_path, monkeypatch):
    """``tool -x app``: whether -x takes a value is not known here, so ``app`` is tried
    where it is on PATH, before the first word that follows no option."""
    (tmp_path / "app").write_text("#!/bin/sh\n")
    (tmp_path / "app").chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert program_positions(["hpcrun", "-x", "app", "5"]) == [2, 3]
    assert program_positions(["hpcrun", "-o", "log", "app", "5"]) == [3]


@pytest.mark.parametrize("words, start", [
    (["hpcds1mpi", "run", "stencil"], [0]),
    (["apptainer", "exec", "sim.sif", "hpcds1mpi", "run", "--threads", "2", "stencil"], [3]),
    (["apptainer", "exec", "--nv", "sim.sif", "valgrind", "-q", "./app", "5"], [6]),
    (["valgrind", "--tool=memcheck", "hpcds1mpi", "run"], [2]),
    (["apptainer", "run", "sim.sif"], [])])
def test_the_program_starts_past_every_runner_and_tool(words, start):
    """s42 tester F8: the program's own options were looked for at the runner's words."""
    assert program_starts(words) == start
