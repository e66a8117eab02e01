"""The lines a tune ends with: values said as what they are, no file named that is not there."""

from __future__ import annotations

from hpcds1mpi.config import Configuration
from hpcds1mpi.decide import system2
from hpcds1mpi.decide.tune_report import report_lines

START = Configuration(1, 2, 1)


def _result(best, trials, **kw) -> system2.TuneResult:
    return system2.TuneResult(kw.pop("objective", "time"), START, best,
                              trials[0].value if best else float("nan"), trials,
                              "budget of 1 runs spent", 0.03, **kw)


def _trial(status="ok", value=2.0, stored=""):
    return system2.Trial(START, status, value, value, value * 10, 0.0, "start", stored=stored)


def test_no_success_names_the_file_only_when_it_was_written(tmp_path):
    """Was: "no configuration ran successfully in 4 run(s); see tune_s.h5", no such file."""
    out = tmp_path / "t.h5"
    lines, found = report_lines(_result(None, [_trial("crashed", float("nan"))]), str(out), "time")
    assert not found and lines == ["no configuration ran successfully in 1 run(s); "
                                   "nothing was recorded"]
    out.write_bytes(b"")
    assert report_lines(_result(None, [_trial("crashed")]), str(out), "time")[0][0].endswith(
        f"see {out}")


def test_energy_is_said_modelled_and_stored_runs_reused(tmp_path):
    trials = [_trial(stored="already in t.h5"), _trial()]
    result = _result(START, trials, objective="energy", energy_source="modelled")
    lines, found = report_lines(result, "t.h5", "energy")
    assert found and "2 J modelled measured" not in lines[0]
    assert lines[0].startswith("best: N1xR2xT1-cpu-fp64  2 J modelled (start")
    assert "after 1 run(s) and 1 stored in t.h5 (not run again)" in lines[0]


def test_a_model_of_other_hardware_is_not_offered_the_runs_learn_would_refuse():
    """Was (s30 tester L): "the model was trained on other hardware ... searching without it",
    then "add them to the model with `hpcds1mpi learn --model DIR`", which learn refuses."""
    result = _result(START, [_trial()] * 4)
    lines, _ = report_lines(result, "t.h5", "time", other_model="elk-model")
    assert lines[-1] == ("every run is in t.h5; elk-model is of other hardware, so make a model "
                         "of this machine: `hpcds1mpi train --telemetry t.h5 --out DIR`")
    assert "learn --model DIR" in report_lines(result, "t.h5", "time")[0][-1]


def test_too_few_runs_for_a_model_are_not_sent_to_train():
    """Was (s38 tester F8): "make a model of this machine: `hpcds1mpi train --telemetry
    tune1.h5 --out DIR`" after 3 runs, which train refuses ("a model needs at least 4")."""
    result = _result(START, [_trial(), _trial(), _trial("failed", float("nan")), _trial()])
    line = report_lines(result, "t.h5", "time", other_model="elk-model")[0][-1]
    assert "needs at least 4 ok runs (3 here)" in line and "larger --budget" in line
    assert line == ("every run is in t.h5; elk-model is of other hardware, and a model of this "
                    "machine needs at least 4 ok runs (3 here): tune again into t.h5 with a "
                    "larger --budget, or sweep this machine, then `hpcds1mpi train --telemetry "
                    "t.h5 --out DIR`")


def test_a_failed_start_is_said_failed_not_nan():
    """Was (s39 tester B5): "(start N2xR1xT2-cpu-fp64 nan s)" of a start that segfaulted."""
    trials = [_trial("failed", float("nan")), _trial()]
    result = system2.TuneResult("time", START, START, 2.0, trials, "budget spent", 0.03)
    line = report_lines(result, "t.h5", "time")[0][0]
    assert "(start N1xR2xT1-cpu-fp64 failed)" in line and "nan" not in line


def test_the_suggested_commands_quote_their_paths_to_paste():
    """Was (s39 tester D5): "`hpcds1mpi learn --model DIR --telemetry tune 2's.h5`", which bash
    reads as an open quote; and DIR although --model was given."""
    import shlex

    result = _result(START, [_trial()] * 4)
    out = "tune 2's.h5"
    learn = report_lines(result, out, "time", model_dir="my model")[0][-1]
    command = learn.split("`")[1]
    assert shlex.split(command) == ["hpcds1mpi", "learn", "--model", "my model",
                                    "--telemetry", out]
    assert report_lines(result, out, "time")[0][-1].split("`")[1].split()[3] == "DIR"
    for runs in ([_trial()] * 4, [_trial()] * 2):  # train's two lines
        train = report_lines(_result(START, runs), out, "time", other_model="m")[0][-1]
        assert shlex.split(train.split("`")[1]) == ["hpcds1mpi", "train", "--telemetry", out,
                                                    "--out", "DIR"]
    newline = report_lines(result, "a\nb.h5", "time")[0][-1]
    assert "\n" not in newline and "--telemetry $'a\\nb.h5'" in newline
