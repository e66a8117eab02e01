"""recommend's left-out list names a layout every run of which failed
(:mod:`hpcds1mpi.decide.failed_layouts`; s43 tester L3: GetDP's 1 rank, failed at all 4 sizes,
was missing from it while advise said so)."""

from __future__ import annotations

import pandas as pd
import pytest

from hpcds1mpi.decide import recommend as rec_mod
from hpcds1mpi.decide.failed_layouts import every_run_failed_lines
from tests.fake_bundle import FakeBundle, fake_places, isolate_user_files

WHY = "exit code 1: mpirun has exited due to process rank 0 exiting improperly"
#: GetDP's runs {(ranks per node, size): (status, seconds)}: 1 rank failed everywhere.
RUNS = {**{(1, s): ("failed", 3.0) for s in (25, 50, 70, 100)},
        **{(2, s): ("ok", 1.5) for s in (25, 50, 70, 100)}, (4, 25): ("failed", 1.0),
        (4, 50): ("ok", 1.2)}


@pytest.fixture(autouse=True)
def isolated_cache(tmp_path, monkeypatch):
    isolate_user_files(monkeypatch, tmp_path)


class GetDP(FakeBundle):
    def __init__(self):
        super().__init__(workloads=("getdp",), sizes=(25, 50, 70, 100))

    def training_frame(self) -> pd.DataFrame:
        return pd.DataFrame([dict(workload="getdp", size=s, nodes=1, ranks_per_node=r,
                                  threads=1, device="cpu", precision="fp64", partition="cpu",
                                  cores_per_node=16, memory_gb=64.0, gpus_per_node=0,
                                  status=st, error=WHY if st == "failed" else "",
                                  runtime_s=v, energy_j=v * 8, peak_rss_mb=40.0)
                             for (r, s), (st, v) in RUNS.items()])


def test_a_layout_that_failed_at_every_size_gets_one_line_a_partly_failed_one_none():
    assert every_run_failed_lines(GetDP(), "getdp", "cpu") == [
        f"ranks per node 1: every run failed (4 of 4, at sizes 25-100): {WHY}"]
    assert every_run_failed_lines(GetDP(), "getdp", "gpu") == []
    assert every_run_failed_lines(GetDP(), "other", "cpu") == []


def test_recommends_left_out_list_names_it():
    rec = rec_mod.recommend(GetDP(), "getdp", 35, fake_places("cpu"))
    assert rec.picked is not None
    assert any(line.startswith("ranks per node 1: every run failed (4 of 4") for line in
               rec.left_out), rec.left_out
