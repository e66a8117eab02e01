"""Beyond the measured sizes a prediction, its interval and its energy are held to what the
nearest measured size ran (:func:`hpcds1mpi.surrogates.neighbour_bounds.bound_beyond`; s28
testers T4 and U9, with their measured runs)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from hpcds1mpi.surrogates import neighbour_bounds as nb

#: CP2K (tester T): {(ranks per node, threads, cutoff): (seconds, joules)} on one node.
CP2K = {(1, 1, 150): (2.252, 21.65), (1, 1, 250): (4.2565, 50.76),
        (1, 2, 150): (2.435, 30.33), (1, 2, 250): (5.149, 67.70),
        (2, 1, 150): (0.895, 14.68), (2, 1, 250): (8.3575, 93.56)}
#: ABINIT (tester U): the same at ecut 12 and 20.
ABINIT = {(1, 1, 12): (1.50, 17.9), (1, 1, 20): (4.45, 45.96),
          (1, 2, 12): (1.45, 17.1), (1, 2, 20): (4.85, 48.0),
          (2, 1, 12): (1.35, 20.5), (2, 1, 20): (3.55, 43.31),
          (2, 2, 12): (0.90, 14.8), (2, 2, 20): (3.40, 42.76)}


def _measured(runs: dict) -> nb.NeighbourRuntimes:
    return nb.NeighbourRuntimes.fit(pd.DataFrame([
        dict(workload="prog", size=s, nodes=1, ranks_per_node=r, threads=t, device="cpu",
             precision="fp64", partition="local", status="ok", runtime_s=v, energy_j=e)
        for (r, t, s), (v, e) in runs.items()]))


def _cols(rpn: int, threads: int, point: float, lo: float, hi: float, energy: float,
          energy_lo: float, energy_hi: float) -> dict:
    one = lambda v, dtype=float: np.array([v], dtype=dtype)  # noqa: E731
    return {"nodes": one(1, np.int64), "ranks_per_node": one(rpn, np.int64),
            "threads": one(threads, np.int64), "device": np.array(["cpu"]),
            "precision": np.array(["fp64"]), "partition": np.array(["local"]),
            "runtime_s": one(point), "runtime_lo": one(lo), "runtime_hi": one(hi),
            "energy_j": one(energy), "energy_lo": one(energy_lo), "energy_hi": one(energy_hi)}


def _bound(runs, size, *prediction, rpn=1, threads=1) -> dict:
    cols = _cols(rpn, threads, *prediction)
    nb.bound_beyond(cols, _measured(runs), "prog", size)
    return {k: float(v[0]) for k, v in cols.items() if k.startswith(("runtime", "energy"))}


def test_past_the_largest_size_neither_the_interval_nor_the_energy_falls_below_the_edge_run():
    """T4: cp2k 1 x 1 at cutoff 350 read 4.26 s (3.25 s-4.48 s), 37.8 J (35.3-53.6 J), where
    250 had measured 4.26 s and 50.8 J; 350 then measured 12.6 s (10.1-15.0 s)."""
    got = _bound(CP2K, 350, 3.5, 3.25, 4.48, 31.0, 29.0, 44.0)
    assert got["runtime_s"] == pytest.approx(4.2565)  # the point rule as it was
    assert got["runtime_lo"] >= 4.2565 and got["runtime_hi"] >= 15.0
    assert got["energy_j"] >= 50.76 and got["energy_lo"] >= 50.76
    assert got["energy_lo"] <= got["energy_j"] <= got["energy_hi"]
    # the interval is no narrower, relative to the point, than the model's
    assert (got["runtime_hi"] - got["runtime_lo"]) / got["runtime_s"] >= (4.48 - 3.25) / 3.5


def test_a_prediction_at_the_edge_run_still_gets_an_interval_that_widens_with_the_distance():
    """U9: abinit 2 x 1 read 3.55 s (1.74 s-3.7 s) at ecut 24, 28 and 32 alike (the point the
    size-20 run, so nothing moved); measured 3.9 s at 24 and 4.4-9 s at 32."""
    ends = {s: _bound(ABINIT, s, 3.55, 1.74, 3.7, 40.0, 20.0, 42.0, rpn=2)
            for s in (24, 28, 32)}
    assert all(e["runtime_s"] == pytest.approx(3.55) for e in ends.values())
    assert all(e["runtime_lo"] >= 3.55 for e in ends.values())
    assert ends[24]["runtime_hi"] >= 3.9 and ends[32]["runtime_hi"] >= 9.0
    assert ends[24]["runtime_hi"] < ends[28]["runtime_hi"] < ends[32]["runtime_hi"]
    assert all(e["energy_j"] >= 43.31 * (1 - 1e-9) for e in ends.values())


def test_below_the_smallest_size_the_same_holds_mirrored():
    got = _bound(ABINIT, 10, 2.0, 1.0, 2.4, 20.0, 10.0, 24.0, rpn=2)
    assert got["runtime_s"] == pytest.approx(1.35) and got["runtime_hi"] <= 1.35 + 1e-9
    assert got["runtime_lo"] < 1.35 * (10 / 12)  # wider towards the smaller size
    assert got["energy_j"] == pytest.approx(20.0 * 1.35 / 2.0)  # energy follows the runtime


def test_within_the_measured_sizes_nothing_moves():
    cols = _cols(1, 1, 3.0, 2.0, 4.0, 30.0, 20.0, 40.0)
    assert not nb.bound_beyond(cols, _measured(CP2K), "prog", 200)
    assert float(cols["runtime_lo"][0]) == 2.0


def test_the_steepest_measured_growth_is_kept_per_end_and_clipped():
    growth = _measured(CP2K).growth[("prog", "local")]
    # 2 x 1 grew 0.895 -> 8.36 s from 150 to 250: a slope of 4.4, clipped
    assert growth == (pytest.approx(nb.MAX_GROWTH), pytest.approx(nb.MAX_GROWTH))
    one_size = {k: v for k, v in CP2K.items() if k[2] == 250}
    assert np.isnan(_measured(one_size).growth[("prog", "local")]).all()
