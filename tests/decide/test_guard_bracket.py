"""The guard between two measured sizes of one configuration (s38 tester A8): a model that
embeds the sizes between them off the line (MPB on 16, 24, 32, 48 escalated 37-40 as "far from
everything measured") is judged against how far it wanders there, not called far."""

from __future__ import annotations

import numpy as np
import pytest

from hpcds1mpi.decide import guard
from tests.fake_bundle import FakeBundle, fake_partitions

PARTS = fake_partitions()


class Bumped(FakeBundle):
    """gemm's embedding bulges smoothly between its measured 1024 and 2048 (zero at both)."""

    def embed(self, df):
        out = super().embed(df)
        size = df["size"].to_numpy(float)
        inside = (df["workload"] == "gemm").to_numpy() & (size > 1024) & (size < 2048)
        out[inside, 3:] += 3.0 * np.sin(np.pi * np.log2(size[inside] / 1024.0))[:, None]
        return out


@pytest.fixture(scope="module")
def bumped():
    plain = FakeBundle()
    bundle = Bumped()
    return bundle, guard.reference(bundle), guard.calibrate(plain, guard.reference(plain))


def test_a_size_between_measured_sizes_is_not_far_where_the_model_wanders(bumped):
    bundle, ref, cal = bumped
    for size in (1100, 1300, 1448, 1600, 1900):
        distance = guard.job_distance(bundle, ref, "gemm", size, "cpu")
        v = guard.judge(bundle, "gemm", size, PARTS["cpu"], cal, ref, confidence=0.99)
        assert v.checks["learned"] == "pass", (size, distance, v.reasons)
        assert not any("far from everything" in r for r in v.reasons)
    # The old rule escalated the bulge's top (the learned distance alone):
    assert guard.job_distance(bundle, ref, "gemm", 1448, "cpu") > cal.escalate_threshold


def test_beyond_the_range_and_a_never_seen_workload_still_escalate(bumped):
    bundle, ref, cal = bumped
    assert guard.judge(bundle, "gemm", 200000, PARTS["cpu"], cal, ref).verdict == "escalate"
    v = guard.judge(bundle, "never-seen-app", 1448, PARTS["cpu"], cal, ref, confidence=0.99)
    assert v.checks["learned"] == "escalate" and v.verdict == "escalate"


def test_a_bracket_is_one_configurations_two_nearest_measured_sizes_at_most_4x_apart():
    from hpcds1mpi.decide.guard_bracket import bracket

    bundle = FakeBundle(sizes=(256, 512))  # and the frame's 4096, 8192
    assert bracket(bundle, "gemm", 300, "cpu") == (256.0, 512.0)
    assert bracket(bundle, "gemm", 1000, "cpu") is None  # 512-4096 is 8x: not interpolated
    assert bracket(bundle, "gemm", 512, "cpu") is None  # measured: no bracket needed
    assert bracket(bundle, "gemm", 300, None) is None and bracket(bundle, "nope", 300, "cpu") is None
