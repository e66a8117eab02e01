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


def test_the_workload_a_model_measured_a_command_as_is_found_by_the_command():
    """s41 review F7: a model knowing ``python3 app.py`` as ``python3`` went unused under the
    file-name label ``app.py``."""
    from types import SimpleNamespace

    from hpcds1mpi.decide.tune_program import model_label

    def levels(command, *others):
        return SimpleNamespace(external=True, command=command, other_commands=others)

    bundle = SimpleNamespace(workloads={"python3", "other", "gemm"}, _measured_levels={
        "python3": levels("python3 app.py {size}"), "other": levels("./other {size}", ""),
        "gemm": SimpleNamespace(external=False)})
    assert model_label(bundle, "python3 app.py {size}") == "python3"
    assert model_label(bundle, "./other {size}") == "other"
    assert model_label(bundle, "./new {size}") is None
