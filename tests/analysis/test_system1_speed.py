"""System 1's timing helper: the stand-in answers with the precomputed frame, every kind is
timed the asked number of times."""

from __future__ import annotations

from hpcds1mpi.analysis.system1_speed import PrecomputedAnswer, scoring_times
from hpcds1mpi.cluster import Partition
from tests.fake_bundle import FakeBundle


class CountingBundle(FakeBundle):
    calls = 0

    def predict(self, df):
        type(self).calls += 1
        return super().predict(df)


def test_stand_in_never_calls_the_model():
    bundle = CountingBundle()
    stand_in = PrecomputedAnswer(bundle, "answer")
    assert stand_in.predict(None) == "answer" and bundle.calls == 0
    assert stand_in.training_frame() is bundle.training_frame()


def test_scoring_times_counts_and_calls():
    part = Partition("p", cores_per_node=8, memory_gb=32, max_nodes=2)
    CountingBundle.calls = 0
    times = scoring_times(CountingBundle(), "gemm", 512, part, repeats=3)
    assert times["candidates"] > 10
    assert [len(times[k]) for k in ("score_choose", "predict", "system1_only")] == [3, 3, 3]
    assert all(t > 0 for k in ("score_choose", "predict", "system1_only") for t in times[k])
    # One answer precomputed; 1 + 3 score calls and 1 + 3 bare predicts through the model;
    # the System-1-only calls (and the limits, learned from the training frame) add none
    # beyond the one predict of the training rows that ran out of memory.
    assert CountingBundle.calls == 1 + 4 + 4 + 1
