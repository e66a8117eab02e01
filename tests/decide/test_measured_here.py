"""At a size the bundle measured, the runs outrank the failure classifier
(:mod:`hpcds1mpi.decide.measured_here`; s29 tester C5: psmall at size 1 ran ok on 1 rank and
failed on 2 and 4, PETSc's DMDA refusing a grid finer than the ranks, yet every layout was
predicted to fail and recommend escalated)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from hpcds1mpi.decide import recommend as rec_mod
from hpcds1mpi.decide import system1 as s1
from hpcds1mpi.decide.measured_here import failed_here_note, measured_at
from hpcds1mpi.decide.recommendation import format_table
from tests.fake_bundle import FakeBundle, fake_partitions, fake_places, isolate_user_files

CPU = fake_partitions()["cpu"]
ONE_NODE = s1.Constraints(max_nodes=1, devices=["cpu"], precisions=["fp64"], threads=[1],
                          max_ranks_per_node=4)
#: The tester's psmall runs {(ranks per node, size): (status, seconds)} on one node.
RUNS = {(1, 1): ("ok", 0.006973), (2, 1): ("failed", 0.697), (4, 1): ("failed", 2.33),
        (1, 2): ("ok", 0.002136), (2, 2): ("ok", 0.00271), (4, 2): ("ok", 0.009561)}


@pytest.fixture(autouse=True)
def isolated_cache(tmp_path, monkeypatch):
    isolate_user_files(monkeypatch, tmp_path)


class Small(FakeBundle):
    """psmall's runs; the failure classifier says 0.63 everywhere, as the tester's did."""

    def __init__(self):
        super().__init__(workloads=("psmall",), sizes=(1, 2))

    def training_frame(self) -> pd.DataFrame:
        return pd.DataFrame([dict(workload="psmall", size=s, nodes=1, ranks_per_node=r,
                                  threads=1, device="cpu", precision="fp64", partition="cpu",
                                  cores_per_node=16, memory_gb=64.0, gpus_per_node=0,
                                  status=st, runtime_s=v, energy_j=v * 8, peak_rss_mb=40.0)
                             for (r, s), (st, v) in RUNS.items()])

    def predict(self, df: pd.DataFrame) -> pd.DataFrame:
        out = super().predict(df)
        out["runtime_s"], out["runtime_lo"], out["runtime_hi"] = 0.007, 0.006, 0.009
        out["energy_j"], out["energy_lo"], out["energy_hi"] = 0.05, 0.04, 0.06
        out["fail_prob"], out["fail_prob_max"], out["peak_rss_mb"] = 0.33, 0.63, 40.0
        return out


def _rows(scores: s1.Scores, rpn: int) -> np.ndarray:
    return np.flatnonzero(scores.cols["ranks_per_node"] == rpn)


def test_a_layout_measured_ok_at_the_size_is_not_vetoed_by_the_failure_classifier():
    scores = s1.score(Small(), "psmall", 1, [CPU], ONE_NODE)
    assert scores.cols["feasible"][_rows(scores, 1)].all()
    assert (scores.cols["reason"][_rows(scores, 2)] == "fail").all()
    assert s1.choose(scores).pick["ranks_per_node"] == 1
    note = failed_here_note(scores.cols, 1)
    assert note.startswith("measured failing at size 1: 1 node x 2 ranks x 1 thread")
    assert "4 ranks" in note


def test_beyond_the_sizes_the_nearest_runs_decide_and_the_classifier_only_where_none_ran():
    # Every layout ran ok at 2, the nearest size to 3: the classifier's 0.63 no longer vetoes
    # them (s39 tester B3, decide/own_failures.py); 3 ranks never ran, the classifier decides.
    scores = s1.score(Small(), "psmall", 3, [CPU], ONE_NODE)
    ran = np.isin(scores.cols["ranks_per_node"], [1, 2, 4])
    assert scores.cols["feasible"][ran].all() and not scores.cols["feasible"][~ran].any()
    assert failed_here_note(scores.cols, 3) == ""


def test_runs_on_other_hardware_do_not_count():
    cols = {"nodes": np.ones(2, np.int64), "ranks_per_node": np.array([1, 2]),
            "threads": np.ones(2, np.int64), "device": np.full(2, "cpu"),
            "precision": np.full(2, "fp64"), "partition": np.full(2, "cpu")}
    ok, failed = measured_at(Small(), "psmall", 1, cols, {"cpu": None})
    assert not ok.any() and not failed.any()
    ok, failed = measured_at(Small(), "psmall", 1, cols)
    assert ok.tolist() == [True, False] and failed.tolist() == [False, True]


def test_recommend_picks_the_measured_layout_and_names_the_failed_ones():
    rec = rec_mod.recommend(Small(), "psmall", 1, fake_places("cpu"))
    assert rec.picked is not None and rec.picked.choice.pick["ranks_per_node"] == 1
    assert "measured failing at size 1: 1 node x 2 ranks" in format_table(rec)


def test_where_every_layout_fails_the_rejection_names_those_that_ran_and_failed(monkeypatch):
    monkeypatch.setitem(RUNS, (1, 1), ("failed", 0.7))  # no layout ran ok at size 1
    rec = rec_mod.recommend(Small(), "psmall", 1, fake_places("cpu"))
    assert rec.picked is None
    line = [l for l in format_table(rec).splitlines() if l.startswith("✗ lab/cpu")][0]
    assert "every configuration is predicted to fail here (measured failing at size 1: " \
        "1 node x 1 rank x 1 thread" in line


class Wide(Small):
    """psmall's runs with its second size measured at 3."""

    def __init__(self):
        FakeBundle.__init__(self, workloads=("psmall",), sizes=(1, 3))

    def training_frame(self) -> pd.DataFrame:
        frame = super().training_frame()
        frame.loc[frame["size"] == 2, "size"] = 3
        return frame


def test_between_two_sizes_a_layout_ran_ok_at_it_is_not_vetoed():
    """Was (s29 verifier V2-4): 1 rank ran ok at sizes 1 and 3, yet at 2 the classifier's
    0.63 vetoed it like the layouts that failed at 1."""
    scores = s1.score(Wide(), "psmall", 2, [CPU], ONE_NODE)
    assert scores.cols["feasible"][_rows(scores, 1)].all()
    # 2 and 4 ranks failed at 1 and ran ok at 3: at 2, nearer 3 in log size, their runs give
    # them 0.37, not the classifier's 0.63 (s39 tester B3; psmall's 2 ranks ran ok at 2)
    for rpn in (2, 4):
        assert scores.cols["fail_prob_max"][_rows(scores, rpn)] == \
            pytest.approx(1 - np.log(2) / np.log(3))
        assert scores.cols["feasible"][_rows(scores, rpn)].all()
    assert failed_here_note(scores.cols, 2) == ""  # nothing was measured at 2


class Gap(Small):
    """1 rank ok at 1 and 3 but failed at 2; 2 ranks ok at 1, 2 and 3."""

    def __init__(self):
        FakeBundle.__init__(self, workloads=("psmall",), sizes=(1, 3))

    def training_frame(self) -> pd.DataFrame:
        runs = {(1, 1): "ok", (1, 2): "failed", (1, 3): "ok",
                (2, 1): "ok", (2, 2): "ok", (2, 3): "ok"}
        return pd.DataFrame([dict(workload="psmall", size=s, nodes=1, ranks_per_node=r,
                                  threads=1, device="cpu", precision="fp64", partition="cpu",
                                  cores_per_node=16, memory_gb=64.0, gpus_per_node=0,
                                  status=st, runtime_s=0.01, energy_j=0.08, peak_rss_mb=40.0)
                             for (r, s), st in runs.items()])


def test_a_failure_between_the_ok_sizes_keeps_the_veto():
    cols = {"nodes": np.ones(2, np.int64), "ranks_per_node": np.array([1, 2]),
            "threads": np.ones(2, np.int64), "device": np.full(2, "cpu"),
            "precision": np.full(2, "fp64"), "partition": np.full(2, "cpu")}
    ok, failed = measured_at(Gap(), "psmall", 2.5, cols)
    assert ok.tolist() == [False, True] and not failed.any()
    ok, failed = measured_at(Gap(), "psmall", 2, cols)
    assert ok.tolist() == [False, True] and failed.tolist() == [True, False]
    ok, failed = measured_at(Gap(), "psmall", 4, cols)  # past the sizes: the classifier's
    assert not ok.any() and not failed.any()
