"""System 1's view of a tuning space: expected improvement, System 1's pick."""

from __future__ import annotations

import numpy as np
import pytest

from hpcds1mpi.cluster import Partition
from hpcds1mpi.decide import tune_predictions
from hpcds1mpi.decide.tune_space import build_space


def test_expected_improvement_is_zero_far_above_and_positive_below():
    ei = tune_predictions.expected_improvement(1.0, np.log(np.array([10.0, 0.5])), np.array([0.05, 0.05]))
    assert ei[0] < 1e-9 and ei[1] == pytest.approx(1 - 0.5 * np.exp(0.05 ** 2 / 2), rel=1e-6)


def test_system1_start_is_the_best_feasible_prediction():
    space = build_space(Partition("p", cores_per_node=4, memory_gb=16, max_nodes=1), max_nodes=1)
    n = len(space.configs)
    value = np.arange(n, 0, -1, dtype=float)
    feasible = np.ones(n, bool)
    feasible[-1] = False  # the lowest prediction is ruled out
    preds = tune_predictions.Predictions(value, np.full(n, 0.1), np.zeros(n), feasible)
    assert tune_predictions.system1_start(space, preds) == space.configs[-2]
    preds.feasible[:] = False
    assert tune_predictions.system1_start(space, preds) is None


def test_a_bundle_of_another_machine_is_set_aside_with_a_note():
    """Was: an H200 bundle's pick used as the start on a 2-core node, without a word."""
    from types import SimpleNamespace

    here = Partition("local", cores_per_node=2, memory_gb=25.3, max_nodes=1)
    h200 = SimpleNamespace(partitions={"gpu_h200": {"cores_per_node": 64, "memory_gb": 1000,
                                                    "gpus_per_node": 4}})
    assert tune_predictions.model_partition(h200, here) is None
    note = tune_predictions.other_machine_note(here)
    assert note.startswith("the model was trained on other hardware than local (2 cores")
    same = SimpleNamespace(partitions={"box": {"cores_per_node": 2, "memory_gb": 25,
                                               "gpus_per_node": 0}})
    assert tune_predictions.model_partition(same, here) is here


def test_an_allocation_of_the_model_machine_is_the_model_machine_as_learn_judges_it():
    """s37 tester K1: `tune` inside `salloc -p debug` on the model's own node read the
    allocation's 4 GB share as "other hardware" and searched without the model, while `learn`
    took the same runs as the model's machine (its fingerprint under the trained partition's
    name is the bundle's id). Tune now applies learn's rule (``same_machine.known_as``)."""
    from types import SimpleNamespace

    from hpcds1mpi.measure.meters import machine_id
    from hpcds1mpi.measure.same_machine import renamed_machines

    row = {"partition": "debug", "cpu_model": "AMD EPYC", "physical_cores": 2,
           "logical_cores": 2, "memory_gb": 25.3, "gpu_model": "", "gpu_count": 0,
           "gpu_memory_gb": 0.0, "mpi_library": "MPICH Version: 5.0.2"}
    trained = machine_id({**row, "partition": "local"})
    bundle = SimpleNamespace(machine_ids={trained}, partitions={
        "local": {"cores_per_node": 2, "memory_gb": 25.3, "gpus_per_node": 0}})
    allocation = Partition("debug", cores_per_node=2, memory_gb=4, max_nodes=1)
    # learn's decision on these runs: the bundle's machine under another partition name
    assert renamed_machines({"x": row}, bundle.machine_ids, bundle.partitions) == {
        "x": (trained, "local")}
    asked = tune_predictions.model_partition(bundle, allocation, row)
    assert asked is not None and asked.name == "debug" and asked.memory_gb == 25.3
    # another MPI library is another machine, for tune as for learn
    other = {**row, "mpi_library": "Open MPI v4.1.4"}
    assert tune_predictions.model_partition(bundle, allocation, other) is None
    assert tune_predictions.model_partition(bundle, allocation, None) is None


def test_the_levels_never_measured_are_named_per_configuration_from_the_recorded_levels():
    """s31 tester Q3: System 2 tries these before trusting the model's guess there. s31
    reviewer: read from the bundle's recorded levels (``scores.never_measured``), not guessed
    back from System 1's true/false column."""
    from hpcds1mpi.surrogates.levels import MeasuredLevels

    space = build_space(Partition("p", cores_per_node=2, memory_gb=16, max_nodes=2),
                        max_nodes=2, precisions=["fp64", "fp32"])
    # The bundle ran fp64 on one node, one thread, 1 or 2 ranks.
    levels = MeasuredLevels("gemm", False, precisions=("fp64",), devices=("cpu",),
                            threads=(1,), ranks_per_node=(1, 2), nodes=(1,))
    got = dict(zip((c.label() for c in space.configs),
                   tune_predictions.unmeasured_levels(space, levels)))
    assert got["N1xR2xT1-cpu-fp64"] == ()
    assert got["N1xR2xT1-cpu-fp32"] == ("precision fp32",)
    assert got["N2xR1xT2-cpu-fp32"] == ("nodes above 1", "threads 2", "precision fp32")
    assert tune_predictions.unmeasured_levels(space, None) is None  # the replay: not known


def test_guesses_are_at_most_a_quarter_of_the_budget_and_only_those_that_could_win():
    assert [tune_predictions.most_guesses(b) for b in (1, 4, 5, 8, 9)] == [1, 1, 2, 2, 3]
    beats = tune_predictions.could_beat(1.0, np.log(np.array([1.5, 1.5, 0.9])),
                                        np.array([0.3, 0.1, 0.01]))
    assert beats.tolist() == [True, False, True]  # 1.5 x exp(-1.96 x 0.3) = 0.83 < 1


def test_system1_start_keeps_to_the_measured_node_counts_as_recommend_does():
    """Was (s39 tester B5): a tune in a 2-node allocation started from 2 nodes x 1 x 2, the
    best prediction, on a node count the program never ran on, which recommend refuses; it
    crashed. The start is recommend's pick: the best on a measured node count."""
    space = build_space(Partition("p", cores_per_node=2, memory_gb=16, max_nodes=2), max_nodes=2)
    n = len(space.configs)
    value = np.array([1.0 if c.nodes == 2 else 2.0 + c.threads for c in space.configs])
    beyond = np.array([c.nodes == 2 for c in space.configs])
    preds = tune_predictions.Predictions(value, np.full(n, 0.1), np.zeros(n), np.ones(n, bool),
                                         beyond_nodes=beyond)
    start = tune_predictions.system1_start(space, preds)
    assert start.nodes == 1 and start.threads == 1
    preds.feasible[~beyond] = False  # only beyond feasible: picked there, as recommend does
    assert tune_predictions.system1_start(space, preds).nodes == 2


def test_system2_reads_the_median_interval_not_one_runs_repeats():
    """System 2 compares runs' medians and measures their noise itself: a measured pick's
    interval that holds its repeats (s40 tester C1) is not the spread of its median."""
    from hpcds1mpi.decide import system1 as s1
    from tests.decide.test_beyond_edge import CPU, ONE_NODE, Grow, GrowRepeats

    space = build_space(CPU, max_nodes=1, devices=["cpu"], precisions=["fp64"])
    spreads = []
    for bundle in (Grow(), GrowRepeats()):
        scores = s1.score(bundle, "grow", 16000, [CPU], ONE_NODE)
        assert (scores.cols["runtime_lo"] / scores.cols["runtime_s"]).min() < 0.15 \
            or bundle.__class__ is Grow  # the shown interval holds the repeats
        spreads.append(tune_predictions.predictions_from_scores(space, scores).spread)
    measured = np.isfinite(spreads[0]) & (spreads[0] != 0.5)
    assert measured.any()
    assert spreads[1][measured] == pytest.approx(spreads[0][measured])


def test_the_start_is_the_layout_recommend_picks_not_a_never_measured_best_prediction():
    """M9 (s47): the start had been the best prediction alone. The shipped bundle's fft at 64
    on up to 2 nodes predicts 2 nodes x 2 ranks fp32 best, never measured above 1 node, whose
    interval does not lie below the measured 1 node x 2 ranks fp32's: recommend picks the
    measured one, and tune called the other System 1's pick. It now starts from recommend's
    pick and says why the best prediction is not it."""
    from hpcds1mpi.decide import system1 as s1
    from hpcds1mpi.decide.model_bundle import load_model
    from hpcds1mpi.decide.tune_space import workload_space

    bundle = load_model(None)
    lab = Partition("standard", cores_per_node=2, memory_gb=25.3, max_nodes=4)
    space = workload_space(lab, "fft", max_nodes=2, cores_per_node=2)
    preds = tune_predictions.model_predictions(bundle, space, lab, "fft", 64)
    ok = preds.feasible & np.isfinite(preds.value)
    best = space.configs[tune_predictions.best_predicted(preds, ok)]
    assert best.label() == "N2xR2xT1-cpu-fp32"  # the best prediction, never measured there
    scores = s1.score(bundle, "fft", 64, [lab], s1.Constraints(max_nodes=2))
    start = tune_predictions.system1_start(space, preds)
    assert start.label() == "N1xR2xT1-cpu-fp32"
    assert s1.choose(scores, "time").config() == start  # recommend's pick, in the space
    assert tune_predictions.declined_note(space, preds) == (
        "the best prediction, N2xR2xT1-cpu-fp32, is at a level never measured (nodes above "
        "1): System 1 picks such a layout only where its whole interval lies below the "
        "measured ones', as recommend does, and the search may try it")
    preds.chosen = None  # without recommend's pick (a replay): the best prediction, unsaid
    assert tune_predictions.system1_start(space, preds) == best
    assert tune_predictions.declined_note(space, preds) == ""
