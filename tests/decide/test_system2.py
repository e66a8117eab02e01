"""System 2's search on known tables (the real runs: tests/commands/test_tune.py)."""

from __future__ import annotations

import numpy as np
import pytest

from hpcds1mpi.decide import system2
from hpcds1mpi.decide import tune_predictions
from hpcds1mpi.decide import tune_space
from hpcds1mpi.config import Configuration


def _space(cores: int = 4, nodes: int = 1) -> tune_space.Space:
    from hpcds1mpi.cluster import Partition

    part = Partition("p", cores_per_node=cores, memory_gb=16, max_nodes=nodes)
    return tune_space.build_space(part, max_nodes=nodes, precisions=["fp64", "fp32"])


def _table_evaluator(table: dict, calls: list):
    """evaluate() over a dict config-label -> runtime (None = the run fails)."""
    def evaluate(config: Configuration) -> dict:
        calls.append(config.label())
        value = table.get(config.label(), 10.0)
        if value is None:
            return {"status": "oom", "error": "out of memory", "run_id": config.label()}
        return {"status": "ok", "runtime_s": value, "runtime_min_s": value * 0.99,
                "repeats": 3, "energy_j": value * 100, "run_id": config.label()}
    return evaluate


def _predictions(space, table: dict, spread: float = 0.1) -> tune_predictions.Predictions:
    n = len(space.configs)
    value = np.array([table.get(c.label(), 10.0) or 10.0 for c in space.configs], float)
    return tune_predictions.Predictions(value, np.full(n, spread), np.zeros(n), np.ones(n, bool))


# ------------------------------------------------------------------------- the search itself


def test_keeps_improvements_reverts_regressions_excludes_failures():
    space = _space()
    start = Configuration(1, 4, 1)
    table = {start.label(): 4.0,
             "N1xR2xT2-cpu-fp64": 6.0,   # slower: reverted
             "N1xR2xT1-cpu-fp64": None,  # fails: excluded
             "N1xR4xT1-cpu-fp32": 2.0}   # better: kept
    calls = []
    result = system2.tune(space, start, _table_evaluator(table, calls), budget=20)
    decisions = {t.config.label(): t.decision for t in result.trials}
    assert calls[:4] == [start.label(), "N1xR2xT2-cpu-fp64", "N1xR2xT1-cpu-fp64",
                         "N1xR4xT1-cpu-fp32"]
    assert decisions[start.label()] == "start"
    assert decisions["N1xR2xT2-cpu-fp64"] == "reverted"
    assert decisions["N1xR2xT1-cpu-fp64"] == "excluded"
    assert decisions["N1xR4xT1-cpu-fp32"] == "kept"
    assert result.best == Configuration(1, 4, 1, "cpu", "fp32") and result.best_value == 2.0
    # Excluded and reverted configurations are never run again from the new best.
    assert len(calls) == len(set(calls)) == result.runs  # nothing run twice
    assert "local optimum" in result.stop_reason


def test_a_within_noise_result_does_not_move_the_search_but_is_the_answer():
    space = _space()
    start = Configuration(1, 4, 1)
    # 2 % better but the measured noise is 10 %: a real tuner must not chase that (the
    # search stays at the start), nor recommend the slower run it measured.
    table = {start.label(): 1.0, "N1xR4xT1-cpu-fp32": 0.98}
    calls = []

    def evaluate(config):
        calls.append(config)
        value = table.get(config.label(), 2.0)
        return {"status": "ok", "runtime_s": value, "runtime_min_s": value * 0.9, "repeats": 5}

    result = system2.tune(space, start, evaluate, budget=10)
    assert result.noise == pytest.approx(0.1)
    decisions = {t.config.label(): t.decision for t in result.trials}
    assert decisions["N1xR4xT1-cpu-fp32"] == "reverted"
    # Said as faster / slower (s34: a bare "-2.0 % vs" read as worse).
    reasons = {t.config.label(): t.reason for t in result.trials}
    assert reasons["N1xR4xT1-cpu-fp32"].startswith(
        "2.0 % faster than N1xR4xT1-cpu-fp64, within the noise; ")
    # The search did not move: it stopped once the start's neighbours were measured.
    assert result.runs == 4 and all(c in space.neighbours(start) for c in calls[1:])
    assert "every neighbour of N1xR4xT1-cpu-fp64" in result.stop_reason
    assert result.best == Configuration(1, 4, 1, "cpu", "fp32") and result.best_value == 0.98
    assert "2.0 % lower than N1xR4xT1-cpu-fp64" in result.note and "10.0 %" in result.note
    assert result.as_dict()["note"] == result.note


def test_the_answer_is_the_run_kept_when_nothing_measured_lower():
    space = _space()
    start = Configuration(1, 4, 1)
    result = system2.tune(space, start, _table_evaluator({start.label(): 1.0}, []), budget=3)
    assert result.best == start and result.best_value == 1.0 and result.note == ""


def test_model_guided_search_stops_when_expected_gain_is_below_noise():
    space = _space()
    start = Configuration(1, 2, 2)
    table = {c.label(): 5.0 for c in space.configs}
    table[start.label()] = 1.0
    calls = []
    result = system2.tune(space, start, _table_evaluator(table, calls),
                          predictions=_predictions(space, table), budget=10, min_runs=1)
    assert result.runs == 1 and calls == [start.label()]
    assert "below the noise floor 3.0 %, above the" in result.stop_reason
    # By default confirmation runs of the best alternatives come first: one run cannot tell
    # the pick from its runner-up, however sure the model is.
    calls.clear()
    result = system2.tune(space, start, _table_evaluator(table, calls),
                          predictions=_predictions(space, table), budget=10)
    assert result.runs == system2.DEFAULT_MIN_RUNS > 1 and calls[0] == start.label()
    assert "below the noise floor 3.0 %, above the" in result.stop_reason


def test_model_error_keeps_the_search_going_when_predictions_are_overconfident():
    """Members that agree (tiny spread) while the model is wrong: the measured/predicted
    ratios' spread must widen the expected improvement so the true winner is still tried."""
    space = _space()
    start = Configuration(1, 2, 2)
    predicted = {c.label(): 1.1 for c in space.configs}  # predicted 10 % slower
    predicted[start.label()] = 1.0
    truth = {c.label(): 0.5 for c in space.configs}  # every alternative twice as fast
    truth[start.label()] = 1.0
    preds = _predictions(space, predicted)
    preds.spread[:] = 0.001  # overconfident ensemble: its own spread says "no chance"
    calls = []
    result = system2.tune(space, start, _table_evaluator(truth, calls), predictions=preds,
                          budget=len(space.configs), min_runs=1)
    assert result.runs >= 2, result.stop_reason
    assert result.best_value == 0.5 and result.best != start


def test_a_model_wrong_on_two_nodes_does_not_stop_the_search_before_one_node():
    """Measured live: a one-node bundle predicted two nodes 5x faster than they are; the
    two-node runs' error must not be carried to the (right) one-node predictions unchecked."""
    space = _space(cores=2, nodes=2)
    truth = {c.label(): (1.0 + 0.1 * c.threads + 0.05 * c.ranks_per_node)
             * (1.5 if c.nodes == 2 else 1.0) for c in space.configs}
    truth["N1xR2xT1-cpu-fp32"] = 0.5  # the real winner: one node
    predicted = {k: (v / 5 if k.startswith("N2") else v) for k, v in truth.items()}
    preds = _predictions(space, predicted, spread=0.05)
    start = tune_predictions.system1_start(space, preds)
    assert start.nodes == 2  # System 1 is fooled
    calls = []
    result = system2.tune(space, start, _table_evaluator(truth, calls), predictions=preds,
                          budget=len(space.configs))
    assert result.best == Configuration(1, 2, 1, "cpu", "fp32"), (calls, result.stop_reason)


def test_model_guided_search_goes_straight_to_the_predicted_winner():
    space = _space()
    start = Configuration(1, 4, 1)
    table = {c.label(): 5.0 for c in space.configs}
    table[start.label()] = 4.0
    table["N1xR1xT2-cpu-fp32"] = 1.0
    calls = []
    result = system2.tune(space, start, _table_evaluator(table, calls),
                          predictions=_predictions(space, table), budget=10)
    assert calls[:2] == [start.label(), "N1xR1xT2-cpu-fp32"]
    assert result.best == Configuration(1, 1, 2, "cpu", "fp32")
    # Nothing else is expected to beat it: the search stops after the minimum runs.
    assert result.runs == system2.DEFAULT_MIN_RUNS
    assert "below the noise floor 3.0 %, above the" in result.stop_reason


def test_budget_and_bad_start():
    space = _space()
    calls = []
    result = system2.tune(space, Configuration(1, 4, 1), _table_evaluator({}, calls), budget=2)
    assert result.runs == 2 and "budget" in result.stop_reason
    from hpcds1mpi.errors import ConfigError

    with pytest.raises(ConfigError, match="does not fit"):
        system2.tune(space, Configuration(1, 8, 1), _table_evaluator({}, []))


def test_failed_start_moves_on_to_a_working_configuration():
    space = _space()
    start = Configuration(1, 4, 1)
    calls = []
    result = system2.tune(space, start, _table_evaluator({start.label(): None}, calls), budget=3)
    assert result.trials[0].decision == "excluded"
    assert result.best is not None and result.best != start


def test_run_noise_ignores_one_slow_repeat():
    row = {"runtime_s": 1.0, "runtime_min_s": 0.97, "runtime_max_s": 9.0, "repeats": 5,
           "noise": 8.03}
    assert system2.run_noise(row) == pytest.approx(0.03)
    assert system2.run_noise({"runtime_s": 1.0, "repeats": 1}) == 0.0


def test_a_run_set_aside_under_a_noise_that_fell_later_is_not_called_within_the_noise():
    """Each run is judged against the noise known when it ran; when the median falls later,
    the answer's note must not claim its lead is within the (final) noise."""
    from hpcds1mpi.cluster import Partition

    part = Partition("p", cores_per_node=8, memory_gb=16, max_nodes=2)
    space = tune_space.build_space(part, max_nodes=2, precisions=["fp64", "fp32"])
    start = Configuration(1, 8, 1)
    first, second, third, fourth = space.neighbours(start)[:4]
    # (runtime, noise): the first alternative is 25 % faster but both runs are 30 % noisy
    # (set aside); later quiet runs bring the noise down to the floor and keep a 17 % gain.
    table = {start: (1.0, 0.3), first: (0.75, 0.3), second: (2.0, 0.01), third: (2.0, 0.01),
             fourth: (0.83, 0.01)}

    def evaluate(config):
        value, noise = table.get(config, (3.0, 0.01))
        return {"status": "ok", "runtime_s": value, "runtime_min_s": value * (1 - noise),
                "repeats": 3}

    result = system2.tune(space, start, evaluate, budget=12)
    assert result.best == first and result.best_value == 0.75
    assert result.noise == pytest.approx(system2.NOISE_FLOOR)
    assert "9.6 % lower than" in result.note and "within the measured noise" not in result.note
    assert "set aside as within the noise measured when it ran" in result.note


def test_runs_the_telemetry_file_already_held_are_said_and_not_spent_from_the_budget():
    """Was: a tune on an existing --out showed the file's old runs as new runs and spent the
    budget on them (nothing ran)."""
    space = _space()
    start = tune_space.default_config(space, 4)
    plain = _table_evaluator({start.label(): 2.0}, calls := [])

    def evaluate(config):
        row = plain(config)
        if len(calls) <= 2:  # the first two answered from the file
            row["stored"] = "already in t.h5 (measured 2026-12-04 14:49), not run again"
        return row

    lines = []
    result = system2.tune(space, start, evaluate, budget=2, log=lines.append)
    assert result.runs == 2 and result.reused == 2 and len(result.trials) == 4
    assert lines[0].startswith("stored: ") and "not run again" in lines[0]
    assert lines[2].startswith("run 1: ") and result.stop_reason == "budget of 2 runs spent"
    assert result.as_dict()["reused"] == 2


def test_the_noise_is_said_as_the_floor_when_the_runs_measured_less():
    space = _space()
    start = tune_space.default_config(space, 4)
    table = {c.label(): 5.0 for c in space.configs}
    table[start.label()] = 1.0
    result = system2.tune(space, start, _table_evaluator(table, []), budget=2)
    assert result.noise_said == "noise floor 3.0 %, above the 1.0 % runs measured"
    assert "measured noise" not in result.trials[1].reason
    loud = system2.tune(space, start, _table_evaluator(table, []), budget=2, noise_floor=0.001)
    assert loud.noise_said == "measured noise 1.0 %"


def test_the_answer_says_where_its_energy_came_from():
    space = _space()
    start = tune_space.default_config(space, 4)
    plain = _table_evaluator({}, [])
    result = system2.tune(space, start, lambda c: {**plain(c), "energy_source": "modelled"},
                          objective="energy", budget=1)
    assert result.energy_source == "modelled"


def test_a_runs_notes_are_said_after_its_line_and_kept_in_its_trial():
    """s30 tester N3: tune's best was a run that exited 0 but said it did not converge; the
    sweep's note on it (the runner's ``notes``) is said once, and is in tune's JSON."""
    space = _space()
    start = Configuration(1, 4, 1)
    plain = _table_evaluator({start.label(): 1.0}, [])
    note = f"note: app size 1 {start.label()}: ok, but the program said \"NOT converged\""

    def evaluate(config: Configuration) -> dict:
        row = plain(config)
        return {**row, "notes": [note]} if config == start else row

    said: list[str] = []
    result = system2.tune(space, start, evaluate, budget=2, log=said.append)
    assert said.count(note) == 1 and said[said.index(note) - 1].startswith("run 1:")
    assert result.trials[0].as_dict()["notes"] == [note]
    assert result.trials[1].as_dict()["notes"] == []


# ---------------------------------------------- levels the model never measured (s31 tester Q3)


def _fp32_unmeasured(space, fp32: float = 4.8) -> tune_predictions.Predictions:
    """The model measured fp64 only and guesses fp32 slower than fp64 (an expected gain inside
    the noise, though its interval reaches below the best): the tester's gemm bundle, whose
    fp32 was in fact 1.8x faster."""
    table = {c.label(): (fp32 if c.precision == "fp32" else 10.0) for c in space.configs}
    table.update(_FP64)
    table["N1xR4xT1-cpu-fp32"] = fp32 - 0.2  # the best predicted fp32
    preds = _predictions(space, table, spread=0.01)
    preds.unmeasured = [("precision fp32",) if c.precision == "fp32" else ()
                        for c in space.configs]
    return preds


#: The fp64 runtimes, predicted and measured alike (the model is right where it measured).
_FP64 = {"N1xR4xT1-cpu-fp64": 4.0, "N1xR2xT2-cpu-fp64": 4.4, "N1xR2xT1-cpu-fp64": 4.6}


def _fp32_truth(space) -> dict:
    truth = {c.label(): (5.0 if c.precision == "fp32" else 8.0) for c in space.configs}
    truth.update(_FP64)
    truth["N1xR4xT1-cpu-fp32"] = 2.2
    return truth


def test_a_precision_the_model_never_measured_is_tried_before_the_noise_stop():
    """Was: "stopped: expected improvement 0.2 % of the best candidate (N1xR2xT1-cpu-fp32) is
    below the noise floor", fp32 never run; measured, it was 1.8x faster than fp64."""
    space = _space()
    start = Configuration(1, 4, 1)
    calls, lines = [], []
    result = system2.tune(space, start, _table_evaluator(_fp32_truth(space), calls),
                          predictions=_fp32_unmeasured(space), budget=8, log=lines.append)
    assert "N1xR4xT1-cpu-fp32" in calls
    assert result.best == Configuration(1, 4, 1, "cpu", "fp32")
    assert any(line.startswith("trying N1xR4xT1-cpu-fp32: the model never measured precision "
                               "fp32") for line in lines)
    assert "tried first what the model never measured: precision fp32 (N1xR4xT1-cpu-fp32)" \
        in result.stop_reason
    assert "never tried" not in result.stop_reason


def test_a_guess_that_could_not_beat_the_best_run_is_not_tried_and_said():
    """s31 reviewer: every never-measured level was tried whatever its prediction; one whose
    predicted interval stays above the best run is not, and the stop line says so."""
    space = _space()
    start = Configuration(1, 4, 1)
    calls = []
    result = system2.tune(space, start, _table_evaluator(_fp32_truth(space), calls),
                          predictions=_fp32_unmeasured(space, fp32=12.0), budget=8)
    assert not any(label.endswith("fp32") for label in calls), calls
    assert result.stop_reason.startswith("expected improvement")
    assert result.stop_reason.endswith(
        "; not tried: precision fp32, which the model never measured, as even the low end of "
        "its predicted interval is slower than the best run")


def test_guesses_are_at_most_a_quarter_of_the_budget_in_order_of_expected_gain():
    """s31 reviewer: a bundle of one layout, fp64 only, has every other thread count and
    precision never measured; each was tried, spending the budget on guesses."""
    space = _space()
    start = Configuration(1, 4, 1)
    table = {c.label(): 4.6 + 0.1 * c.threads for c in space.configs}
    table.update(_FP64)
    table["N1xR1xT1-cpu-fp64"] = 4.7
    table["N1xR2xT2-cpu-fp64"] = 4.9  # threads 2: never measured, like threads 4 and fp32
    preds = _predictions(space, table, spread=0.01)
    preds.unmeasured = [tuple(([f"threads {c.threads}"] if c.threads > 1 else [])
                              + (["precision fp32"] if c.precision == "fp32" else []))
                        for c in space.configs]
    calls, lines = [], []
    result = system2.tune(space, start, _table_evaluator(table, calls), predictions=preds,
                          budget=8, log=lines.append)
    tries = [line for line in lines if line.startswith("trying ")]
    assert len(tries) == 2 and result.runs < 8, lines
    # the highest expected gain first: fp32 (4.7), threads 2 (4.8); threads 3 and 4 left
    assert tries[0].endswith("-cpu-fp32: the model never measured precision fp32, so its "
                             "prediction there is a guess"), tries
    assert tries[1].startswith("trying N1xR1xT2-cpu-fp64: the model never measured threads 2")
    assert "; never tried: threads 3, threads 4, which the model never measured (its predictions there " \
        "are guesses: at most 2 of a budget of 8 runs try them; a larger --budget tries more)" \
        in result.stop_reason, result.stop_reason


def test_a_budget_spent_before_a_never_measured_level_is_tried_says_so():
    space = _space()
    start = Configuration(1, 4, 1)
    result = system2.tune(space, start, _table_evaluator({start.label(): 4.0}, []),
                          predictions=_fp32_unmeasured(space), budget=1)
    assert result.stop_reason.startswith("budget of 1 runs spent; never tried: precision fp32, "
                                         "which the model never measured")


def test_without_unmeasured_levels_the_noise_stop_is_unchanged():
    space = _space()
    start = Configuration(1, 4, 1)
    preds = _fp32_unmeasured(space)
    preds.unmeasured = None  # a model that measured every level: its guess stands
    calls = []
    result = system2.tune(space, start, _table_evaluator({start.label(): 4.0}, calls),
                          predictions=preds, budget=8)
    assert result.stop_reason.startswith("expected improvement")
    assert "never measured" not in result.stop_reason


# ------------------------------------------------------- a model whose failure verdicts are wrong


def _failing_everywhere(space, table: dict) -> tune_predictions.Predictions:
    """The model of s39 tester B4: every configuration predicted to fail (a classifier that
    carried another program's crashes over), so none feasible."""
    preds = _predictions(space, table)
    n = len(space.configs)
    return tune_predictions.Predictions(preds.value, preds.spread, np.full(n, 0.6),
                                        np.zeros(n, bool), failing=np.ones(n, bool))


def test_a_model_that_rules_out_everything_does_not_stop_the_search_after_one_run():
    """Was (s39 tester B4): one run, then "stopped: every configuration the model considers
    feasible was measured", answering the slowest of 3 layouts; it considered none feasible."""
    space = _space(cores=2)
    start = Configuration(1, 2, 1)
    table = {start.label(): 8.5, "N1xR1xT2-cpu-fp64": 7.9, "N1xR1xT1-cpu-fp64": 0.58}
    lines, calls = [], []
    result = system2.tune(space, start, _table_evaluator(table, calls),
                          predictions=_failing_everywhere(space, table), log=lines.append)
    assert result.runs > 1 and "N1xR1xT1-cpu-fp64" in calls
    assert result.best == Configuration(1, 1, 1)
    assert "considers feasible" not in result.stop_reason
    assert any("predicts every configuration allowed to fail" in line and "without it" in line
               for line in lines)


def test_a_run_ok_where_the_model_predicted_a_failure_sets_its_failure_verdicts_aside():
    space = _space(cores=2)
    start = Configuration(1, 2, 1)
    table = {start.label(): 8.5, "N1xR1xT2-cpu-fp64": 7.9, "N1xR1xT1-cpu-fp64": 0.58}
    preds = _failing_everywhere(space, table)
    preds.feasible[space.index(Configuration(1, 1, 2))] = True  # one the model lets run
    preds.failing[space.index(Configuration(1, 1, 2))] = False
    lines, calls = [], []
    result = system2.tune(space, start, _table_evaluator(table, calls), predictions=preds,
                          log=lines.append)
    assert any("ran ok where the model predicted it fails" in line for line in lines)
    assert "N1xR1xT1-cpu-fp64" in calls and result.best == Configuration(1, 1, 1)


def test_a_run_looks_its_configuration_up_in_the_space_once(monkeypatch):
    """The run's row in the per-candidate arrays is found once, not once per array (it was
    up to five times a run)."""
    space = _space(cores=2)
    start = Configuration(1, 2, 1)
    table = {start.label(): 8.5, "N1xR1xT2-cpu-fp64": 7.9, "N1xR1xT1-cpu-fp64": 0.58}
    preds = _failing_everywhere(space, table)
    preds.feasible[space.index(Configuration(1, 1, 2))] = True
    preds.failing[space.index(Configuration(1, 1, 2))] = False
    looked, index = [], space.index
    monkeypatch.setattr(space, "index", lambda config: looked.append(config) or index(config))
    lines, calls = [], []
    system2.tune(space, start, _table_evaluator(table, calls), predictions=preds,
                 log=lines.append)
    assert any("ran ok where the model predicted it fails" in line for line in lines)
    assert len(looked) == len(calls)  # model-guided: no neighbour lists looked up


def test_the_stop_names_what_the_model_ruled_out_and_was_not_run():
    """s39 tester B4 (memhog 640): stopped without trying 2 ranks x 1 thread, predicted to
    fail, never failed, the fastest; unsaid."""
    space = _space(cores=2)
    start = Configuration(1, 1, 1)
    table = {start.label(): 0.88, "N1xR1xT2-cpu-fp64": None, "N1xR2xT1-cpu-fp64": 0.79}
    preds = _predictions(space, table)
    ruled = space.index(Configuration(1, 2, 1))
    preds.feasible[:] = False
    preds.feasible[[space.index(start), space.index(Configuration(1, 1, 2))]] = True
    preds.failing = ~preds.feasible
    preds.fail_prob[ruled] = 0.35
    result = system2.tune(space, start, _table_evaluator(table, []), predictions=preds)
    assert "every configuration the model considers feasible was measured" in result.stop_reason
    assert "N1xR2xT1-cpu-fp64 (predicted to fail, probability 0.35)" in result.stop_reason


def test_a_budget_stop_names_what_the_model_ruled_out_too():
    """s48: a stop on the budget said nothing of the configurations the model ruled out, so a
    tune of an fp64-only bundle whose failure guesses ruled out fp32 was silent about it."""
    space = _space(cores=2)
    start = Configuration(1, 1, 1)
    table = {start.label(): 0.88, "N1xR1xT2-cpu-fp64": 0.9, "N1xR2xT1-cpu-fp64": 0.79}
    preds = _predictions(space, table)
    ruled = space.index(Configuration(1, 2, 1))
    preds.feasible[ruled] = False
    preds.failing = ~preds.feasible
    preds.fail_prob[ruled] = 0.6
    result = system2.tune(space, start, _table_evaluator(table, []), predictions=preds,
                          budget=1)
    assert result.stop_reason.startswith("budget of 1 runs spent"), result.stop_reason
    assert "not run, as the model rules them out: N1xR2xT1-cpu-fp64 (predicted to fail, " \
        "probability 0.60)" in result.stop_reason, result.stop_reason


# ------------------------------------------------- node counts the program was never measured on


def test_the_search_keeps_to_the_measured_node_counts_until_they_are_all_run():
    """Was (s39 tester B5): crashy, measured on 1 node, tuned in a 2-node allocation: after
    its 1-node start the search ran 2 nodes x 1 rank x 2 threads (predicted fastest; never
    measured, which recommend does not pick), and it segfaulted."""
    space = _space(cores=2, nodes=2)
    predicted = {c.label(): (0.009 if c.nodes == 2 else 0.02) for c in space.configs}
    predicted["N1xR1xT2-cpu-fp64"] = 0.017
    truth = {c.label(): (None if c.nodes == 2 else 0.02) for c in space.configs}
    truth["N1xR1xT2-cpu-fp64"] = 0.017
    preds = _predictions(space, predicted, spread=0.05)
    preds.beyond_nodes = np.array([c.nodes == 2 for c in space.configs])
    start = tune_predictions.system1_start(space, preds)
    assert start == Configuration(1, 1, 2, "cpu", "fp64")
    one_node = sum(1 for c in space.configs if c.nodes == 1)
    calls, lines = [], []
    result = system2.tune(space, start, _table_evaluator(truth, calls), predictions=preds,
                          budget=one_node, log=lines.append)
    assert all(label.startswith("N1") for label in calls), calls
    assert result.best == start
    assert "not run: 2 node(s), where the program was never measured (at most 1)" in \
        result.stop_reason and "--nodes 2" in result.stop_reason
    # Once every one-node configuration is run, a larger budget goes on, saying why.
    calls.clear()
    system2.tune(space, start, _table_evaluator(truth, calls), predictions=preds,
                 budget=one_node + 1, min_runs=one_node + 1, log=lines.append)
    assert calls[-1].startswith("N2") and all(c.startswith("N1") for c in calls[:-1])
    assert any("every configuration on the node counts the program was measured on is run"
               in line for line in lines)
