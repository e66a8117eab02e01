"""A prediction between two measured sizes kept within what they measured
(:mod:`hpcds1mpi.surrogates.neighbour_bounds`)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from hpcds1mpi.surrogates import neighbour_bounds as nb
from hpcds1mpi.surrogates import neighbour_beyond as nbb


def _runs(measured: dict, partition: str = "local") -> pd.DataFrame:
    """Training rows: {(threads, size): runtime} of 1 node x 1 rank, cpu, fp64."""
    return pd.DataFrame([dict(workload="prog", size=size, nodes=1, ranks_per_node=1,
                              threads=threads, device="cpu", precision="fp64",
                              partition=partition, status="ok", runtime_s=t)
                         for (threads, size), t in measured.items()])


def _cols(predicted: dict, size: float = 30.0, partition: str = "local") -> dict:
    threads = np.array(list(predicted), dtype=np.int64)
    runtime = np.array(list(predicted.values()), dtype=float)
    n = len(threads)
    return {"nodes": np.ones(n, np.int64), "ranks_per_node": np.ones(n, np.int64),
            "threads": threads, "device": np.full(n, "cpu"), "precision": np.full(n, "fp64"),
            "partition": np.full(n, partition), "runtime_s": runtime,
            "runtime_lo": runtime * 0.9, "runtime_hi": runtime * 1.3,
            "energy_j": runtime * 10, "energy_lo": runtime * 9, "energy_hi": runtime * 13}


# s27 tester R, pw.x: 1 rank x 1 / 2 threads at sizes 24 and 40, and the model's 30.
PW = {(1, 24): 1.12, (1, 40): 2.85, (2, 24): 1.46, (2, 40): 2.77}


def test_a_prediction_above_both_measured_neighbours_is_replaced_by_their_interpolation():
    cols = _cols({1: 3.66, 2: 1.34})
    sizes = nb.bound_runtimes(cols, nb.NeighbourRuntimes.fit(_runs(PW)), "prog", 30.0)
    assert sizes == {"local": (24.0, 40.0)}
    t = math.log(30 / 24) / math.log(40 / 24)
    one = math.exp((1 - t) * math.log(1.12) + t * math.log(2.85))
    two = math.exp((1 - t) * math.log(1.46) + t * math.log(2.77))
    assert cols["runtime_s"] == pytest.approx([one, two])  # 1.68 s and 1.93 s
    assert cols["runtime_s"][0] < cols["runtime_s"][1]  # 1 thread faster, as measured at 30
    assert cols[nb.MODEL] == pytest.approx([3.66, 1.34])
    # the interval covers the measured pair; energy moved by the runtime's factor
    assert cols["runtime_lo"][0] <= 1.12 and cols["runtime_hi"][0] >= 2.85
    assert cols["energy_j"] == pytest.approx(np.asarray(cols["runtime_s"]) * 10)


def test_a_prediction_inside_the_pair_is_interpolated_too():
    """The trees' value between two sizes is one neighbour's leaf (s27 HPCC: N=400 predicted
    as N=300's 3.37 ms, measured 7.8 ms): the pair, interpolated, says more."""
    cols = _cols({1: 2.0, 2: 2.80})  # inside / just outside the pairs
    nb.bound_runtimes(cols, nb.NeighbourRuntimes.fit(_runs(PW)), "prog", 30.0)
    t = math.log(30 / 24) / math.log(40 / 24)
    assert cols["runtime_s"] == pytest.approx([
        math.exp((1 - t) * math.log(1.12) + t * math.log(2.85)),
        math.exp((1 - t) * math.log(1.46) + t * math.log(2.77))])


@pytest.mark.parametrize("size", [24.0, 40.0, 16.0, 50.0])
def test_nothing_is_bounded_at_a_measured_size_or_outside_the_measured_range(size):
    cols = _cols({1: 3.66, 2: 1.34}, size=size)
    assert nb.bound_runtimes(cols, nb.NeighbourRuntimes.fit(_runs(PW)), "prog", size) is None
    assert cols["runtime_s"] == pytest.approx([3.66, 1.34])


def test_a_configuration_measured_at_one_neighbour_only_or_failed_is_not_bounded():
    runs = _runs({(1, 24): 1.12, (1, 40): 2.85, (2, 24): 1.46})
    failed = _runs({(2, 40): 2.77}).assign(status="timeout")
    cols = _cols({1: 3.66, 2: 9.0})
    nb.bound_runtimes(cols, nb.NeighbourRuntimes.fit(pd.concat([runs, failed])), "prog", 30.0)
    assert cols["runtime_s"][1] == 9.0 and np.isnan(cols[nb.BELOW][1])


def test_repeated_measurements_count_by_their_geometric_mean_and_partitions_are_mapped():
    runs = pd.concat([_runs(PW, "trained"), _runs({(1, 24): 4.48}, "trained")])
    cols = _cols({1: 9.0, 2: 1.9}, partition="mine")
    sizes = nb.bound_runtimes(cols, nb.NeighbourRuntimes.fit(runs), "prog", 30.0,
                              {"mine": "trained"})
    assert sizes == {"mine": (24.0, 40.0)}
    assert cols[nb.BELOW][0] == pytest.approx(math.sqrt(1.12 * 4.48))


def test_a_pick_the_measurements_contradict_on_both_sides_is_said():
    runs = _runs({(1, 24): 1.0, (1, 40): 2.0, (2, 24): 1.5, (2, 40): 3.0})
    cols = _cols({1: 1.9, 2: 1.6})  # both inside their pairs: nothing is moved
    sizes = nb.bound_runtimes(cols, nb.NeighbourRuntimes.fit(runs), "prog", 30.0)
    line = nb.disagreement(cols, 1, np.array([0, 1]), 30.0, sizes)
    assert "1 node x 1 rank x 1 thread (cpu, fp64) ran faster at both size 24" in line
    assert nb.disagreement(cols, 0, np.array([0, 1]), 30.0, sizes) == ""


def test_an_order_made_by_the_bound_against_the_interpolation_is_said():
    cols = _cols({1: 3.66, 2: 1.34})
    sizes = nb.bound_runtimes(cols, nb.NeighbourRuntimes.fit(_runs(PW)), "prog", 30.0)
    cols["runtime_s"][1] = 1.5  # as if the pick's prediction had stood
    line = nb.disagreement(cols, 1, np.array([0, 1]), 30.0, sizes)
    assert "put 1 node x 1 rank x 1 thread (cpu, fp64) at 3.66 s, above both its runs" in line
    assert "takes 1.68 s against the pick's 1.93 s" in line


def test_beyond_the_measured_sizes_a_bigger_problem_is_never_predicted_faster():
    """s27 tester Q, NWChem: 7 waters predicted 0.76 s at 1 rank where 6 measured 9.2 s (and
    2 ranks, measured fastest at 6, lost the pick)."""
    nw = {(1, 4): 2.7, (1, 6): 9.2, (2, 4): 6.0, (2, 6): 5.5}
    measured = nb.NeighbourRuntimes.fit(_runs(nw))
    cols = _cols({1: 0.762, 2: 6.53}, size=7.0)
    assert nbb.bound_beyond(cols, measured, "prog", 7.0)
    # each run grown along the median measured slope (1 thread's 3.0, 2 threads' fall as 0)
    median = math.log(9.2 / 2.7) / math.log(6 / 4) / 2
    assert cols["runtime_s"] == pytest.approx(np.array([9.2, 5.5]) * (7 / 6) ** median)
    assert cols["energy_j"] == pytest.approx(np.asarray(cols["runtime_s"]) * 10)
    assert cols[nb.MODEL] == pytest.approx([0.762, 6.53])
    small = _cols({1: 5.0, 2: 1.0}, size=3.0)  # below the smallest: never slower than it ran
    assert nbb.bound_beyond(small, measured, "prog", 3.0)
    assert small["runtime_s"] == pytest.approx(np.array([2.7, 6.0]) * (3 / 4) ** median)
    inside = _cols({1: 0.5, 2: 0.5}, size=5.0)
    assert not nbb.bound_beyond(inside, measured, "prog", 5.0)
    assert inside["runtime_s"] == pytest.approx([0.5, 0.5])
    assert not nbb.bound_beyond(_cols({1: 0.5}, size=9.0), measured, "other", 9.0)


def test_a_partition_of_hardware_nothing_measured_is_not_bounded():
    """s27 review B2: a 64-core 'local' was held to the shipped 2-core 'local''s runtimes."""
    measured = nb.NeighbourRuntimes.fit(_runs(PW))
    cols = _cols({1: 3.66, 2: 1.34})
    assert nb.bound_runtimes(cols, measured, "prog", 30.0, {"local": None}) is None
    assert not nbb.bound_beyond(cols, measured, "prog", 50.0, {"local": None})
    assert cols["runtime_s"] == pytest.approx([3.66, 1.34])


def test_system1_bounds_only_the_hardware_the_runs_measured():
    from hpcds1mpi.cluster import Partition
    from hpcds1mpi.decide import system1 as s1
    from hpcds1mpi.decide.model_bundle import load_model

    bundle = load_model(None)
    big = Partition(name="local", cores_per_node=64, memory_gb=256.0, max_nodes=1)
    assert nb.MODEL not in s1.score(bundle, "cg", 36, [big]).cols


# s30 tester K3, dolfinx poisson, 1 x 1 x 1 and 1 x 1 x 2: measured (runtime s, peak MiB per
# rank) at 256 and 384; the trees gave 256's 148.8 MiB at 320 (it ran 179 MiB).
POISSON = {(1, 256): (0.2544, 149.199219), (1, 384): (0.7851, 216.082031),
           (2, 256): (0.2624, 149.0625), (2, 384): (0.97525, 216.152344)}


def _poisson_runs(runs: dict) -> pd.DataFrame:
    return _runs({k: t for k, (t, _) in runs.items()}).assign(
        peak_rss_mb=[m for _, m in runs.values()])


@pytest.mark.parametrize("size", [320.0, 350.0, 383.0])
def test_the_memory_need_between_measured_sizes_is_interpolated_not_a_step(size):
    cols = _cols({1: 0.45, 2: 0.5}, size=size)
    cols["peak_rss_mb"] = np.array([148.8, 148.7])
    nb.bound_runtimes(cols, nb.NeighbourRuntimes.fit(_poisson_runs(POISSON)), "prog", size)
    t = math.log(size / 256) / math.log(384 / 256)
    want = [math.exp((1 - t) * math.log(149.199219) + t * math.log(216.082031)),
            math.exp((1 - t) * math.log(149.0625) + t * math.log(216.152344))]
    assert cols["peak_rss_mb"] == pytest.approx(want)  # 320: 182.9 MiB, not 148.8
    assert 149.2 < cols["peak_rss_mb"][0] < 216.1


def test_the_memory_need_is_never_below_the_smaller_sizes_nor_set_without_both_runs():
    noisy = {**POISSON, (1, 384): (0.7851, 140.0)}  # the larger run measured less
    runs = _poisson_runs(noisy)
    runs.loc[(runs["threads"] == 2) & (runs["size"] == 384), "peak_rss_mb"] = float("nan")
    cols = _cols({1: 0.45, 2: 0.5}, size=320.0)
    cols["peak_rss_mb"] = np.array([100.0, 148.7])
    nb.bound_runtimes(cols, nb.NeighbourRuntimes.fit(runs), "prog", 320.0)
    assert cols["peak_rss_mb"] == pytest.approx([149.199219, 148.7])  # 2 threads: the model's


def test_between_two_measured_sizes_the_energy_interval_is_the_runtime_one_at_the_pairs_power():
    """s40 tester D2: stencil 1 x 1 x 2 at 112 read energy_hi 0.208 J over a 6.08 ms upper
    runtime (34 W on a node that draws at most 20 W; its runs at 96 and 128 drew 13.9 and
    12.1 W): the model's upper energy, scaled, not the pair's power."""
    runs = _runs(PW).assign(energy_j=lambda f: f["runtime_s"] * np.where(f["size"] == 24, 12.0,
                                                                          14.0))
    cols = _cols({1: 3.66, 2: 1.34})
    cols["energy_hi"] = cols["energy_hi"] * 5  # the model's end: 65 W
    cols["energy_lo"] = cols["energy_lo"] / 5
    nb.bound_runtimes(cols, nb.NeighbourRuntimes.fit(runs), "prog", 30.0)
    assert cols["energy_hi"] == pytest.approx(cols["runtime_hi"] * 14.0)
    assert cols["energy_lo"] == pytest.approx(cols["runtime_lo"] * 12.0)
    assert (cols["energy_lo"] <= cols["energy_j"]).all()
    assert (cols["energy_j"] <= cols["energy_hi"]).all()


def test_a_prediction_between_its_runs_is_said_below_their_interpolation_not_both_runs():
    """s40 tester D7: "at 0.064 s, below both its runs (0.0625 s, 0.159 s)"; 0.064 s is above
    the first: below their interpolation."""
    cols = _cols({1: 3.66, 2: 1.34})
    sizes = nb.bound_runtimes(cols, nb.NeighbourRuntimes.fit(_runs(PW)), "prog", 30.0)
    cols["runtime_s"][1] = 1.5  # as if the pick's prediction had stood
    cols[nb.MODEL][0] = 1.2  # between 1 thread's runs (1.12 s, 2.85 s), below the 1.68 s
    line = nb.disagreement(cols, 1, np.array([0, 1]), 30.0, sizes)
    assert "at 1.2 s, below the 1.68 s interpolated between its runs at sizes 24 and 40" in line
    assert "both its runs" not in line


def test_a_runtime_disagreement_is_no_reason_against_a_pick_by_another_objective():
    """s40 tester D7: under --objective energy the lowest-energy pick got the line that a
    faster layout was measured, and its confidence capped."""
    cols = _cols({1: 3.66, 2: 1.34})
    sizes = nb.bound_runtimes(cols, nb.NeighbourRuntimes.fit(_runs(PW)), "prog", 30.0)
    cols["runtime_s"][1] = 1.5
    assert nb.disagreement(cols, 1, np.array([0, 1]), 30.0, sizes, "time")
    for objective in ("energy", "edp", "balanced"):
        assert nb.disagreement(cols, 1, np.array([0, 1]), 30.0, sizes, objective) == ""
