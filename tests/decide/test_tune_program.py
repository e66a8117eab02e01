"""``decide/tune_program``: how tune names and places a user's program."""

from __future__ import annotations

import pytest

from hpcds1mpi.decide.tune_program import workload_label
from hpcds1mpi.errors import ConfigError


def test_a_file_name_no_label_can_hold_gives_a_label_built_from_it_and_says_so():
    """s39 tester D10: 'my app' was taken as the label and refused after the launch probe,
    as if the user had given it."""
    said = []
    cases = {"./my app": "my_app", "/x/a*b": "a_b", "it's": "it_s", "日本 x": "日本_x"}
    for program_file, label in cases.items():
        assert workload_label(program_file, None, said.append) == label, program_file
    assert len(said) == len(cases)  # every name was changed, and said
    # a name that is a label stays it (the review of s39: café had become cafe, ./.hidden
    # hidden, 日本 external — the label of every program swept without --label)
    for name in ("./app", "café.x", "./.hidden", "_run.sh", "日本"):
        assert workload_label(name, None, said.append) == name.removeprefix("./")
    assert len(said) == len(cases)
    assert "'my_app'" in said[0] and "'my app'" in said[0] and "--label NAME" in said[0]


def test_a_given_label_is_kept_or_refused_and_a_kernels_file_name_names_label():
    assert workload_label("./my app", "mine", print) == "mine"
    with pytest.raises(ConfigError, match="--label 'x y'"):
        workload_label("./app", "x y", print)
    with pytest.raises(ConfigError, match="give --label NAME"):
        workload_label("./gemm", None, print)


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
