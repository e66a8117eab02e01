"""A count of none before a closing verb, shared by abnormal_ending and ending_error."""

from __future__ import annotations

import ast
import inspect

import pytest

from hpcds1mpi.measure.none_counted import counts_none


@pytest.mark.parametrize("before", [
    "0 of 10 tasks ", "none of the ranks ", "Summary: 0 jobs ", "Finished: 10 done, 0 ",
    "done; no tasks were ", "Done. 0 of 10 tasks ", "Done! none of the 10 jobs ", "Nothing ",
    "zero tasks ", "Ranks: 0 ", "Run summary - 0 ",
])
def test_a_count_of_none_before_the_verb_is_one(before):
    assert counts_none(before)


@pytest.mark.parametrize("before", [
    "rank=0 ", "node=0 ", "task: 0 ", "rank 0: ", "Process 0 ", "Rank: 0 of 4 ", "pid=0 ",
    "job #0 ", "Process zero ", "myrank: 0 ",  # ids (s44 review A2, E1)
    "4 ranks ", "Finished: 10 done, 2 ", "Done. 2 of 10 tasks ",  # counts of some (E2)
    "no solution found, ", "Solver v1.0 ", "",  # a quit's reason, a version, nothing
])
def test_an_id_a_count_of_some_or_other_words_is_none(before):
    assert not counts_none(before)


@pytest.mark.parametrize("before, verb", [
    ("Setup: no GPU found ", "aborting"), ("ERROR - no restart file found ", "aborting"),
    ("Summary: 0 jobs ", "terminating"),
])
def test_no_count_closes_the_programs_own_act_now(before, verb):
    """s46 review RV6: "no GPU found aborting" is a quit, not "0 aborted"."""
    assert counts_none(before)  # the words alone read as a count ...
    assert not counts_none(before, verb)  # ... but not before a verb of the act now
    assert counts_none(before, "aborted")


def test_both_readers_of_a_closing_line_use_the_one_count():
    """s44 review: abnormal_ending's NONE_COUNTED and ending_error's _COUNTED were one idea
    in two patterns, which drifted (an id read as a count in both)."""
    from hpcds1mpi.measure import abnormal_ending, ending_error

    for module in (abnormal_ending, ending_error):
        source = inspect.getsource(module)
        imported = {(node.module, alias.name) for node in ast.walk(ast.parse(source))
                    if isinstance(node, ast.ImportFrom) for alias in node.names}
        assert ("hpcds1mpi.measure.none_counted", "counts_none") in imported, module.__name__
        assert "0+|" not in source, module.__name__
