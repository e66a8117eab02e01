"""``decide/tune_program``: how tune names and places a user's program."""

from __future__ import annotations

import pytest

from hpcds1mpi.errors import ConfigError


@pytest.mark.parametrize("program, said", [
    ("./fall {size}", "it runs fall, not grow"),
    ("./grow {size} deck2.in", "it runs grow with other arguments (adds 'deck2.in')"),
    ("./grow {size}", ""), ("./grow 100", ""), ("./grow -p {size}", "")])  # either line
def test_tune_says_before_any_run_that_its_program_is_not_the_measured_one(program, said):
    """s40 tester B8: `tune --program fall --label grow --model m_grow` ran fall from grow's
    pick in silence, then proposed `learn`, which pooled the two programs under one label."""
    from types import SimpleNamespace

    from hpcds1mpi.decide.tune_program import other_command

    levels = SimpleNamespace(workload="grow", command="./grow {size}",
                             other_commands=("./grow -p {size}",))
    line = other_command(levels, program)
    assert (said in line and "would pool the two under one label" in line) if said else \
        line == ""
