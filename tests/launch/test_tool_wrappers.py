"""Profilers, debuggers and runners whose options are not read: the program is one of the
later words that are no option, paths first."""

from __future__ import annotations

from hpcds1mpi.launch.tool_wrappers import candidate_programs, is_tool


def test_a_tool_is_known_by_its_file_name():
    assert is_tool("nsys") and is_tool("/usr/bin/valgrind") and not is_tool("./wrap")


def test_paths_come_before_bare_words_and_options_are_left_out():
    assert candidate_programs(["nsys", "profile", "-o", "out", "--trace=mpi", "./app", "5"]) == \
        ["./app", "profile", "out", "5"]
