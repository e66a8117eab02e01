"""Profilers, debuggers and runners: the program is one word, after ``--``, else the first word
that is no option's value (each tool's options that take one listed), an unknown option's
next word offered only where it names an executable and the clear word does not look like one."""

from __future__ import annotations

import pytest

from hpcds1mpi.launch.tool_wrappers import (candidate_programs, is_tool, program_positions,
                                             program_starts, split_value)


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


@pytest.mark.parametrize("words, program", [
    (["nsys", "profile", "-o", "/scratch/prof", "./app"], ["./app"]),
    (["nsys", "profile", "--output", "/scratch/prof", "-t", "mpi,cuda", "app", "5"], ["app"]),
    (["nsys", "profile", "--weird", "/scratch/x", "./app"], ["./app"]),  # nsys: all valued
    (["perf", "record", "-o", "/scratch/perf.data", "-g", "./app"], ["./app"]),
    (["strace", "-f", "-o", "/tmp/trace.log", "-e", "trace=network", "./app"], ["./app"]),
    (["gdb", "-x", "/home/u/cmds.gdb", "-batch", "--args", "./app", "5"], ["./app"]),
    (["valgrind", "--log-file=/scratch/v.log", "-q", "./app"], ["./app"]),
    (["heaptrack", "-o", "/scratch/ht", "./app"], ["./app"]),
    (["ncu", "-o", "/scratch/rep", "--set", "full", "./app"], ["./app"]),
    (["hpcrun", "--unknown", "/bin/sh", "./app"], ["./app"]),  # a path to an executable
])
def test_an_options_value_written_as_a_path_is_never_the_program(words, program):
    """s42: ``nsys profile -o /scratch/prof ./app`` read ``/scratch/prof`` as the program
    (the first path), then said it matched no workload."""
    assert candidate_programs(words) == program


def test_an_unknown_options_executable_value_does_not_beat_a_clear_program(tmp_path,
                                                                           monkeypatch):
    """An option not known here may take a value: the word after it is the program only
    where the clear word after it does not look like one."""
    app = tmp_path / "app"
    app.write_text("#!/bin/sh\n")
    app.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert candidate_programs(["hpcrun", "--wrap", str(app), "./sim", "5"]) == ["./sim"]
    assert candidate_programs(["hpcrun", "--wrap", "app", "sim", "5"]) == ["app", "sim"]
    assert candidate_programs(["hpcrun", "--wrap", "./sim", "5"]) == ["./sim", "5"]
    assert candidate_programs(["hpcrun", "--wrap", "./sim", "in.dat"]) == ["./sim", "in.dat"]
    assert candidate_programs(["hpcrun", "--wrap", "/x/prof", "sim"]) == ["/x/prof", "sim"]
    assert candidate_programs(["tau_exec", "-ebs", "-T", "mpi", "./sim", "in"]) == ["./sim"]


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


@pytest.mark.parametrize("line, said", [
    ("valgrind --log-file /tmp/v.log ./app", "`--log-file /tmp/v.log` runs `/tmp/v.log`"),
    ("valgrind -q --tool memcheck ./app 9", "`--tool memcheck` runs `memcheck`"),
    ("/usr/bin/valgrind --suppressions s.supp ./app", "write `--suppressions=s.supp`"),
    ("valgrind --log-file=/tmp/v.log ./app", ""),
    ("valgrind -q --tool=memcheck ./app --opt x", ""),  # the program's own options
    ("valgrind ./app --log-file x", ""),
    ("nsys profile -o out ./app", ""),  # nsys takes its values as the next word
])
def test_a_value_given_as_the_next_word_to_a_tool_taking_it_after_equals_is_said(line, said):
    """s43 tester J6: valgrind runs the next word as the program (measured: "/tmp/v.log:
    command not found"); advise had only said the program matches no workload."""
    found = split_value(line.split())
    assert said in found if said else found == ""


@pytest.mark.parametrize("words", [
    ["ltrace", "-L", "./app", "in.dat"],  # -L: "do NOT display library calls"
    ["likwid-pin", "-c", "0-3", "-i", "./app", "in.dat"],  # -i: NUMA interleave
    ["likwid-perfctr", "-C", "0", "-g", "FLOPS_DP", "-i", "./app"],  # -i: print CPU info
    ["likwid-perfctr", "-V", "3", "-C", "0", "-g", "FLOPS_DP", "./app"],  # -V <level>
    ["likwid-perfctr", "-C", "0", "-S", "20ms", "./app"],  # perfctr's -S <time>
    ["likwid-pin", "-S", "-c", "0", "./app"],  # pin's -S: sweep, a flag
    ["ltrace", "-w", "3", "-S", "./app"]])
def test_each_tools_flags_and_valued_options_are_those_of_its_help(tmp_path, monkeypatch,
                                                                   words):
    """s43 review R6: ltrace -L and likwid -i had been read as taking a value (the program
    was skipped as it), likwid-perfctr -V as a flag (its level read as the program)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "app").write_text("#!/bin/sh\n")
    (tmp_path / "app").chmod(0o755)
    assert candidate_programs(words)[0] == "./app"


def test_a_listed_options_executable_value_is_offered_last_where_nothing_else_looks_one(
        tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "app").write_text("#!/bin/sh\n")
    (tmp_path / "app").chmod(0o755)
    assert candidate_programs(["strace", "-o", "./app", "prog"]) == ["prog", "./app"]
    assert candidate_programs(["strace", "-o", "./app", "./prog"]) == ["./prog"]
