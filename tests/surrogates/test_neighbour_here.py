"""At a size the bundle measured, a configuration measured there is predicted by its runs
(:mod:`hpcds1mpi.surrogates.neighbour_here`; s31 tester Q1, on the shipped bundle)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from hpcds1mpi.cluster import load_clusters
from hpcds1mpi.decide import bundle_cache
from hpcds1mpi.decide import system1 as s1
from hpcds1mpi.decide.model_bundle import load_model
from hpcds1mpi.surrogates import neighbour_bounds as nb
from hpcds1mpi.surrogates import neighbour_here as nh

LAB = "tests/data/jobscripts/lab.toml"


@pytest.fixture(scope="module")
def shipped():
    return load_model(None)


def _lab():
    return list(load_clusters(LAB).values())[0].partitions["standard"]


def _score(bundle, workload: str, size: int, precisions=("fp32",)):
    return s1.score(bundle, workload, size, [_lab()],
                    s1.Constraints(max_nodes=1, devices=["cpu"], precisions=list(precisions)))


def _at(cols: dict, rpn: int, threads: int, precision: str) -> int:
    return int(np.flatnonzero((cols["ranks_per_node"] == rpn) & (cols["threads"] == threads)
                              & (cols["precision"] == precision))[0])


@pytest.mark.parametrize("size, run_ms", [(256, 77.6045), (200, 41.8099)])
def test_the_shipped_bundle_answers_its_own_run_at_a_measured_size(shipped, size, run_ms):
    """Q1: stencil 2 x 1 fp32 ran 77.6 ms at 256 and 41.8 ms at 200, read 64.4 ms
    (58.6-73.3 ms) and 34.1 ms (31-38.7 ms) with confidence 0.93."""
    cols = _score(shipped, "stencil", size).cols
    i = _at(cols, 2, 1, "fp32")
    assert cols["runtime_s"][i] * 1e3 == pytest.approx(run_ms, rel=1e-4)
    assert cols["runtime_lo"][i] <= run_ms / 1e3 <= cols["runtime_hi"][i]
    assert cols[nh.MEASURED_RUNS][i] == 1
    # the model's width at least, around the run
    model = cols[nb.MODEL][i]
    assert cols["runtime_hi"][i] / cols["runtime_lo"][i] >= 0.999 * (73.3 / 58.6)
    assert model * 1e3 == pytest.approx(64.4 if size == 256 else 34.1, rel=0.01)
    assert cols["energy_lo"][i] <= cols["energy_j"][i] <= cols["energy_hi"][i]


def test_every_measured_layout_of_the_shipped_bundle_lies_within_its_interval(shipped):
    """Q1: 259 of the bundle's 450 measured non-oversubscribed layouts lay outside their own
    interval (every workload; here the kernels that a 2-core lab partition runs)."""
    frame = bundle_cache.training_columns(shipped)
    rows = pd.DataFrame({c: np.asarray(frame[c]) for c in (
        "workload", "size", "ranks_per_node", "threads", "precision", "status", "runtime_s")})
    rows = rows[(rows["status"] == "ok") & (rows["ranks_per_node"] * rows["threads"] <= 2)]
    outside = []
    for (workload, size), runs in rows.groupby(["workload", "size"]):
        cols = _score(shipped, workload, int(size), sorted(set(runs["precision"]))).cols
        for r in runs.itertuples():
            i = _at(cols, r.ranks_per_node, r.threads, r.precision)
            if not cols["runtime_lo"][i] <= r.runtime_s <= cols["runtime_hi"][i] \
                    or cols[nh.MEASURED_RUNS][i] < 1:
                outside.append((workload, size, r.ranks_per_node, r.threads, r.precision))
    assert len(rows) > 400 and outside == []


def test_several_runs_give_their_median_and_an_interval_holding_them_all():
    runs = pd.DataFrame([dict(workload="prog", size=64, nodes=1, ranks_per_node=1, threads=1,
                              device="cpu", precision="fp64", partition="local", status=status,
                              runtime_s=t, energy_j=t * 10)
                         for t, status in ((1.0, "ok"), (1.3, "ok"), (2.0, "ok"),
                                           (0.1, "failed"))])
    cols = {"nodes": np.ones(2, np.int64), "ranks_per_node": np.array([1, 2]),
            "threads": np.ones(2, np.int64), "device": np.full(2, "cpu"),
            "precision": np.full(2, "fp64"), "partition": np.full(2, "local"),
            "runtime_s": np.array([0.5, 0.7]), "runtime_lo": np.array([0.45, 0.6]),
            "runtime_hi": np.array([0.55, 0.8]), "energy_j": np.array([5.0, 7.0]),
            "energy_lo": np.array([4.5, 6.0]), "energy_hi": np.array([5.5, 8.0])}
    moved = nh.hold_to_measured(cols, nb.NeighbourRuntimes.fit(runs), "prog", 64)
    assert moved.tolist() == [True, False] and cols[nh.MEASURED_RUNS].tolist() == [3, 0]
    assert cols["runtime_s"][0] == pytest.approx(1.3)  # the median of the ok runs
    assert cols["runtime_lo"][0] <= 1.0 * (1 + 1e-12) and cols["runtime_hi"][0] >= 2.0
    assert cols["runtime_s"][1] == 0.7  # never measured: the model's
    assert cols["energy_j"][0] == pytest.approx(13.0, rel=1e-6)
    assert not nh.hold_to_measured(cols, nb.NeighbourRuntimes.fit(runs), "prog", 65).any()
    other = {**cols, "partition": np.full(2, "big")}  # measured on other hardware: not held
    assert not nh.hold_to_measured(other, nb.NeighbourRuntimes.fit(runs), "prog", 64,
                                   {"big": None}).any()
