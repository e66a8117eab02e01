"""Each configuration is bracketed by the sizes IT was measured at
(:meth:`hpcds1mpi.surrogates.neighbour_bounds.NeighbourRuntimes.around`), whatever sizes other
configurations were measured at (s28 tester Y, heat.c after ``learn`` of a tune at 768)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from hpcds1mpi.surrogates import neighbour_bounds as nb

# s28 tester Y: 1 node x 1 rank x {1, 2} threads of heat.c; tune measured 1 thread at 768.
HEAT = {(1, 512): (0.1186, 1.54), (1, 768): (0.1404, 1.83), (1, 1024): (0.1783, 2.32),
        (2, 512): (0.196, 3.92), (2, 1024): (0.287, 5.72)}


def _runs(measured: dict, partition: str = "local") -> pd.DataFrame:
    """Training rows: {(threads, size): (runtime, energy)} of 1 node x 1 rank, cpu, fp64."""
    return pd.DataFrame([dict(workload="heatm", size=size, nodes=1, ranks_per_node=1,
                              threads=threads, device="cpu", precision="fp64",
                              partition=partition, status="ok", runtime_s=t, energy_j=e)
                         for (threads, size), (t, e) in measured.items()])


def _cols(predicted: dict, partition: str = "local") -> dict:
    """Candidates {threads: (runtime, energy)} as System 1 scores them."""
    threads = np.array(list(predicted), dtype=np.int64)
    runtime = np.array([t for t, _ in predicted.values()], dtype=float)
    energy = np.array([e for _, e in predicted.values()], dtype=float)
    n = len(threads)
    return {"nodes": np.ones(n, np.int64), "ranks_per_node": np.ones(n, np.int64),
            "threads": threads, "device": np.full(n, "cpu"), "precision": np.full(n, "fp64"),
            "partition": np.full(n, partition), "runtime_s": runtime,
            "runtime_lo": runtime * 0.93, "runtime_hi": runtime * 1.27,
            "energy_j": energy, "energy_lo": energy * 0.92, "energy_hi": energy * 1.14}


def _log_interpolated(lo: float, hi: float, size: float, s_lo: float, s_hi: float) -> float:
    t = math.log(size / s_lo) / math.log(s_hi / s_lo)
    return math.exp((1 - t) * math.log(lo) + t * math.log(hi))


def test_a_configuration_measured_either_side_is_interpolated_where_others_ran_at_the_size():
    """After learn the model put 1 x 1 x 2 at 173 ms / 1.66 J at 768, below both its runs
    (0.196 s / 3.92 J at 512, 0.287 s / 5.72 J at 1024), and energy picked it."""
    cols = _cols({1: (0.1404, 1.82), 2: (0.173, 1.66)})
    sizes = nb.bound_runtimes(cols, nb.NeighbourRuntimes.fit(_runs(HEAT)), "heatm", 768.0)
    assert sizes == {"local": (512.0, 1024.0)}
    runtime = _log_interpolated(0.196, 0.287, 768, 512, 1024)  # 0.245 s
    energy = _log_interpolated(3.92, 5.72, 768, 512, 1024)  # 4.9 J
    assert cols["runtime_s"] == pytest.approx([0.1404, runtime])
    assert cols["energy_j"] == pytest.approx([1.82, energy])  # the measured pair's, not 2.3 J
    eps = 1e-9  # the measured ends, through exp(log)
    assert cols["energy_lo"][1] <= 3.92 + eps and cols["energy_hi"][1] >= 5.72 - eps
    assert cols["runtime_lo"][1] <= 0.196 + eps and cols["runtime_hi"][1] >= 0.287 - eps
    # measured at 768 itself: the model, trained on that run, stands
    assert np.isnan(cols[nb.BELOW][0]) and cols[nb.MODEL][0] == pytest.approx(0.1404)
    assert (cols[nb.BELOW_SIZE][1], cols[nb.ABOVE_SIZE][1]) == (512.0, 1024.0)


def test_each_configuration_takes_its_own_nearest_sizes():
    """1 thread ran at 24, 32 and 40, 2 threads at 24 and 40 only: at 30, 1 thread between
    24 and 32 and 2 threads between 24 and 40 (was: 2 threads kept the model's 0.5 s)."""
    runs = _runs({(1, 24): (1.0, 10.0), (1, 32): (1.4, 14.0), (1, 40): (2.0, 20.0),
                  (2, 24): (1.5, 15.0), (2, 40): (3.0, 30.0)})
    cols = _cols({1: (9.0, 90.0), 2: (0.5, 5.0)})
    sizes = nb.bound_runtimes(cols, nb.NeighbourRuntimes.fit(runs), "heatm", 30.0)
    assert sizes == {"local": (24.0, 32.0)}  # the nearest either side of any row
    assert cols["runtime_s"] == pytest.approx([_log_interpolated(1.0, 1.4, 30, 24, 32),
                                               _log_interpolated(1.5, 3.0, 30, 24, 40)])
    assert list(cols[nb.ABOVE_SIZE]) == [32.0, 40.0]


def test_runs_on_one_side_only_or_of_other_hardware_bound_nothing():
    runs = _runs({(1, 512): (0.12, 1.5), (1, 768): (0.14, 1.8), (2, 512): (0.2, 3.9)})
    measured = nb.NeighbourRuntimes.fit(runs)
    cols = _cols({1: (0.13, 1.7), 2: (0.17, 1.66)})
    assert nb.bound_runtimes(cols, measured, "heatm", 640.0) == {"local": (512.0, 768.0)}
    assert cols["runtime_s"][1] == 0.17  # 2 threads never ran above 640: the model's
    other = _cols({1: (0.13, 1.7), 2: (0.173, 1.66)})
    assert nb.bound_runtimes(other, nb.NeighbourRuntimes.fit(_runs(HEAT)), "heatm", 768.0,
                             {"local": None}) is None
    assert other["runtime_s"] == pytest.approx([0.13, 0.173])


def test_energy_unmeasured_follows_the_runtime():
    runs = _runs(HEAT).drop(columns="energy_j")
    cols = _cols({2: (0.173, 1.66)})
    nb.bound_runtimes(cols, nb.NeighbourRuntimes.fit(runs), "heatm", 768.0)
    assert cols["energy_j"][0] == pytest.approx(1.66 * cols["runtime_s"][0] / 0.173)


def test_the_disagreement_names_the_pick_s_own_sizes_and_compares_runs_at_the_same_sizes():
    runs = _runs({(1, 24): (1.0, 1.0), (1, 40): (2.0, 2.0), (2, 24): (1.5, 1.5),
                  (2, 40): (3.0, 3.0), (4, 32): (0.1, 0.1), (4, 24): (9.0, 9.0),
                  (4, 40): (9.0, 9.0)})
    cols = _cols({1: (1.9, 1.0), 2: (1.6, 1.0), 4: (9.0, 9.0)})
    sizes = nb.bound_runtimes(cols, nb.NeighbourRuntimes.fit(runs), "heatm", 30.0)
    cols["runtime_s"][1] = 1.0  # as if 2 threads' prediction had stood
    line = nb.disagreement(cols, 1, np.array([0, 1, 2]), 30.0, sizes)
    assert "1 node x 1 rank x 1 thread (cpu, fp64) ran faster at both size 24" in line
    assert "and size 40 (2 s vs 3 s)" in line
