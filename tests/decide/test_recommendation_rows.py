"""Each row of a recommendation says whether it is extrapolated to a level never measured
(``unmeasured``: s31 tester Q5) and how many runs at this size its values are
(``measured_runs``: s31 tester QA), in the table and in the JSON rows."""

from __future__ import annotations

import pandas as pd
import pytest

from hpcds1mpi.decide import system1 as s1
from hpcds1mpi.decide.recommend import recommend
from hpcds1mpi.decide.recommendation import format_table, to_dict
from hpcds1mpi.decide.recommendation_rows import clean, json_row
from tests.fake_bundle import FakeBundle, fake_partitions, isolate_user_files

CPU = fake_partitions()["cpu"]
#: fp64 and fp32 offered; the bundle ran gemm at fp64 only, as the tester's mB.
BOTH_PRECISIONS = s1.Constraints(max_nodes=1, devices=["cpu"], precisions=["fp64", "fp32"],
                                 threads=[1], max_ranks_per_node=4)


@pytest.fixture(autouse=True)
def isolated_cache(tmp_path, monkeypatch):
    isolate_user_files(monkeypatch, tmp_path)


class Fp64Only(FakeBundle):
    """gemm measured at fp64 only: 1, 2 and 4 ranks at size 512, twice each."""

    def __init__(self):
        super().__init__(workloads=("gemm",), sizes=(256, 512))

    def training_frame(self) -> pd.DataFrame:
        return pd.DataFrame([dict(workload="gemm", size=512, nodes=1, ranks_per_node=r,
                                  threads=1, device="cpu", precision="fp64", partition="cpu",
                                  cores_per_node=16, memory_gb=64.0, gpus_per_node=0,
                                  status="ok", runtime_s=0.04 / r + k * 0.001,
                                  energy_j=0.4 / r, peak_rss_mb=60.0)
                             for r in (1, 2, 4) for k in (0, 1)])


def _answer():
    return recommend(Fp64Only(), "gemm", 512, [(None, CPU)], constraints=BOTH_PRECISIONS)


def test_json_rows_say_unmeasured_and_measured_runs():
    data = to_dict(_answer())
    rows = [data["pick"], *data["alternatives"], *data["front"], data["partitions"][0]["best"]]
    for row in rows:
        assert row["unmeasured"] == (row["precision"] != "fp64"), row
        assert row["measured_runs"] == (2 if row["precision"] == "fp64" else 0), row
    assert any(row["unmeasured"] for row in data["alternatives"])


def test_the_table_marks_unmeasured_rows_and_says_the_pick_was_measured():
    text = format_table(_answer())
    assert "measured (2 runs at this size)" in text.splitlines()[2]
    assert "unmeasured = a level never measured" in text
    table = text.split("Top alternatives")[1].split("Runtime")[0].splitlines()[2:]
    for line in filter(None, table):
        assert line.endswith("unmeasured") == (" fp64 " not in line), line


def test_rows_of_scores_without_the_columns_read_as_modelled_and_measured():
    choice = s1.choose(s1.score(FakeBundle(), "gemm", 512, [CPU], BOTH_PRECISIONS))
    for column in ("unmeasured", "measured_runs"):
        choice.scores.cols.pop(column, None)
    row = clean(json_row(choice, choice.index))
    assert row["unmeasured"] is False and row["measured_runs"] == 0
