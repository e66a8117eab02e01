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


def test_tune_reads_a_program_as_the_models_sweep_did_where_not_told_otherwise():
    """s46 tester H7: `tune --program --model` of a model trained on FreeFem++'s own "solve
    time" timed its trials by the launch's wall time, and its closing `learn` refused them."""
    from types import SimpleNamespace

    from hpcds1mpi.decide.tune_program import model_readings
    from hpcds1mpi.measure.readings import WALL
    from surrogates.runtime_words import OWN_TIME

    def bundle(runtime, measured_with=None):
        levels = SimpleNamespace(external=True, runtime=runtime, measured_with=measured_with,
                                 command="FreeFem++-mpi p.edp -nw -n {size}")
        return SimpleNamespace(workloads={"ff"}, _measured_levels={"ff": levels})

    given = {"--time-regex": None, "--fom-regex": None, "--ranks-regex": "procs (\\d+)",
             "--fail-regex": None, "--output-file": None, "--workdir": None}
    said = []
    model = bundle(OWN_TIME + "solve time ([0-9.]+) s)", {
        "fom_regex": "integral ([0-9.]+)", "ranks_regex": "np (\\d+)", "output_file": "",
        "workdir": "", "setup": "", "fail_regex": ""})
    read = model_readings(model, "ff", "FreeFem++-mpi p.edp -n {size}", given, said.append)
    assert read["--time-regex"] == "solve time ([0-9.]+) s"
    assert read["--fom-regex"] == "integral ([0-9.]+)"
    assert read["--ranks-regex"] == "procs (\\d+)"  # the user's own wins
    assert read["--output-file"] is None and read["--fail-regex"] is None  # none recorded
    assert said == ["reads ff as the model's sweep did, with --time-regex 'solve time ([0-9.]+) "
                    "s' and --fom-regex 'integral ([0-9.]+)' (give --time-regex / --fom-regex "
                    "to read it otherwise)"]
    said.clear()
    assert model_readings(bundle(WALL), "ff", "FreeFem++-mpi p.edp", given, said.append) == given
    assert model_readings(model, "ff", "./other {size}", given, said.append) == given  # B8
    assert model_readings(SimpleNamespace(workloads=set(), _measured_levels={}), "ff", "x",
                          given, said.append) == given and not said
