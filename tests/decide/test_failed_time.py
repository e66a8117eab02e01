"""A failing layout's time is its own failed runs' (:mod:`hpcds1mpi.decide.failed_time`; s43
tester L2: GetDP's 1 rank, failed after 3.52 s at size 50, was given the 2 ranks' 1.47 s)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from hpcds1mpi.config import Configuration
from hpcds1mpi.decide.failed_time import measured_failure_time
from tests.fake_bundle import FakeBundle, isolate_user_files

#: GetDP's runs {(ranks per node, size): (status, seconds)} on one node.
RUNS = {(1, 50): ("failed", 3.52), (1, 50, "again"): ("failed", 3.60), (2, 50): ("ok", 1.47),
        (1, 25): ("failed", 4.85), (2, 25): ("ok", 2.1)}


@pytest.fixture(autouse=True)
def isolated_cache(tmp_path, monkeypatch):
    isolate_user_files(monkeypatch, tmp_path)


class GetDP(FakeBundle):
    def __init__(self):
        super().__init__(workloads=("getdp",), sizes=(25, 50))

    def training_frame(self) -> pd.DataFrame:
        return pd.DataFrame([dict(workload="getdp", size=k[1], nodes=1, ranks_per_node=k[0],
                                  threads=1, device="cpu", precision="fp64", partition="cpu",
                                  cores_per_node=16, memory_gb=64.0, gpus_per_node=0,
                                  status=st, runtime_s=v, energy_j=v * 8, peak_rss_mb=40.0)
                             for k, (st, v) in RUNS.items()])


def _layout(ranks: int) -> Configuration:
    return Configuration(nodes=1, ranks_per_node=ranks, threads=1, device="cpu",
                         precision="fp64")


def test_the_time_is_the_layouts_own_failed_runs_median_at_that_size():
    assert measured_failure_time(GetDP(), "getdp", 50, "cpu", _layout(1)) == pytest.approx(3.56)
    assert measured_failure_time(GetDP(), "getdp", 25, "cpu", _layout(1)) == pytest.approx(4.85)


@pytest.mark.parametrize("size, ranks, partition", [
    (35, 1, "cpu"),  # not measured at that size
    (50, 2, "cpu"),  # the layout that ran: never its time
    (50, 1, "gpu"),  # another partition's
])
def test_no_time_where_the_layout_has_no_failed_run_there(size, ranks, partition):
    assert math.isnan(measured_failure_time(GetDP(), "getdp", size, partition, _layout(ranks)))
