"""The measured-neighbours correction: residuals only from models that did not see their
size, interpolated in log size between the two measured sizes around a question, nothing
outside the measured range or for an unmeasured configuration; kept through save and load."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from hpcds1mpi.surrogates import bundle as bundle_module
from hpcds1mpi.surrogates.columns import as_columns
from hpcds1mpi.surrogates.features import INPUT_COLUMNS
from hpcds1mpi.surrogates.size_neighbours import (SizeNeighbours, config_code, config_codes,
                                                  out_of_fold_log_runtime)
from tests.surrogates.test_bundle import make_runs


def _rows(sizes, configs, workload="fft", partition="p"):
    return pd.DataFrame([dict(workload=workload, partition=partition, size=s, nodes=n,
                              ranks_per_node=r, threads=t, device="cpu", precision="fp64",
                              status="ok", runtime_s=1.0)
                         for s in sizes for n, r, t in configs])


def test_config_codes_tell_configurations_apart():
    rows = _rows([8], [(1, 1, 1), (1, 2, 1), (1, 1, 2), (2, 1, 1), (1, 1, 1)])
    codes = config_codes(rows)
    assert codes[0] == codes[4] and len(set(codes[:4])) == 4
    other = rows.assign(precision=["fp32", "fp64", "fp64", "fp64", "bogus"])
    assert len(set(config_codes(other))) == 5
    # One configuration's code (System 1's pick) is its row's, the unknown text too.
    other = other.assign(device=["cpu", "gpu", "cpu", "tpu", "cpu"])
    assert [config_code(*r) for r in other[["nodes", "ranks_per_node", "threads", "device",
                                           "precision"]].itertuples(index=False)] \
        == config_codes(other).tolist()


def _fitted(weight=1.0):
    # residual of configuration A: 0.2 at size 10, 0.4 at size 1000; B only at 10: -0.3
    rows = pd.concat([_rows([10], [(1, 1, 1), (1, 2, 1)]), _rows([1000], [(1, 1, 1)])],
                     ignore_index=True)
    oof = -np.array([0.2, -0.3, 0.4])  # measured log runtime is 0: residual = -oof
    return SizeNeighbours.fit(rows, oof, weight)


@pytest.mark.parametrize("size, expected_a, expected_b", [
    (10, 0.2, -0.3),                # a measured size: its own residual
    (100, 0.3, -0.3),               # half-way in log size; B measured at one neighbour only
    (10 ** 1.5, 0.25, -0.3),        # a quarter of the way
    (1000, 0.4, 0.0),               # B never measured at 1000
    (5, 0.0, 0.0), (2000, 0.0, 0.0),  # outside the measured range: the model alone
])
def test_correction_interpolates_between_measured_sizes(size, expected_a, expected_b):
    query = _rows([size], [(1, 1, 1), (1, 2, 1), (1, 1, 4)])
    got = _fitted().log_correction(query)
    assert got == pytest.approx([expected_a, expected_b, 0.0])
    assert _fitted(0.5).log_correction(query) == pytest.approx(0.5 * got)
    assert _fitted(0.5).log_correction(as_columns(query)) == pytest.approx(0.5 * got)


def test_other_workloads_and_partitions_get_nothing():
    fitted = _fitted()
    assert not fitted.log_correction(_rows([100], [(1, 1, 1)], workload="gemm")).any()
    assert not fitted.log_correction(_rows([100], [(1, 1, 1)], partition="q")).any()
    assert fitted.summary() == {"weight": 1.0, "problems": 2, "configurations": 3}


def test_residuals_come_from_models_that_never_saw_their_size():
    runs = make_runs(sizes=(16, 24, 32, 48))
    seen = []

    class Constant:
        def __init__(self, sizes):
            self.sizes = sizes

        def predict(self, rows):
            assert not set(rows["size"]) & self.sizes  # no row of a size it trained on
            return pd.DataFrame({"runtime_s": np.full(len(rows), 2.0)})

    def train(rows):
        seen.append(set(rows["size"]))
        return Constant(set(rows["size"]))

    got = out_of_fold_log_runtime(runs, train)
    ok = (runs["status"] == "ok").to_numpy()
    assert len(seen) == 4 and all(len(s) == 3 for s in seen)  # leave one size out
    assert np.allclose(got[ok], math.log(2.0)) and np.isnan(got[~ok]).all()


def test_bundle_applies_the_correction_and_keeps_it(tmp_path, monkeypatch):
    runs = make_runs(sizes=(16, 24, 32, 48, 64))
    plain = bundle_module.train_bundle(runs, n_members=2, use_embedding=False, threads=1)
    corrected = bundle_module.train_bundle(runs, n_members=2, use_embedding=False, threads=1,
                                           neighbours=0.5)
    query = runs[runs["size"] == 32][list(INPUT_COLUMNS)].reset_index(drop=True)
    base, moved = plain.predict(query), corrected.predict(query)
    factor = np.exp(corrected.model.size_neighbours_.log_correction(query))
    assert not np.allclose(factor, 1.0)
    for col in ("runtime_s", "runtime_hi", "energy_j"):
        assert np.allclose(moved[col], base[col] * factor)
    assert np.allclose(moved["fail_prob"], base["fail_prob"])
    ranking = corrected.manifest["metrics"]["ranking"]
    assert ranking["size_neighbours"]["weight"] == 0.5
    assert plain.manifest["metrics"]["ranking"]["size_neighbours"] is None
    corrected.save(tmp_path / "b")
    again = bundle_module.load_bundle(tmp_path / "b")
    assert np.allclose(again.predict(query)["runtime_s"], moved["runtime_s"])
    assert "neighbouring sizes" in (tmp_path / "b" / "README.txt").read_text()
    corrected.model.size_neighbours_.weight = 0.0  # weight 0 is the model alone
    assert np.allclose(corrected.predict(query)["runtime_s"], base["runtime_s"])
