"""Memory limits: learned from measured out-of-memory runs, nominal otherwise, and the need
each candidate is judged by (per node on CPU, per GPU on GPU)."""

from __future__ import annotations

import numpy as np
import pytest

from hpcds1mpi.decide.memory_limits import (
    MemoryLimit,
    learn_memory_limits,
    memory_need_and_limit,
)
from tests.fake_bundle import FakeBundle, fake_partitions

PARTS = fake_partitions()


def test_memory_limit_is_learned_from_measured_oom_not_nominal():
    limits = learn_memory_limits(FakeBundle(), list(PARTS.values()))
    small = limits["gpu-small"]
    assert small.gpu_source == "measured" and small.failures > 0
    # The card is 6 GB on paper; the measured failures put the limit near 3 GB.
    assert 2900 <= small.gpu_mb <= 3500 < 0.9 * small.nominal_gpu_mb
    assert limits["cpu"].node_source == "nominal"
    assert limits["cpu"].node_mb == pytest.approx(0.9 * 64000)


def test_need_is_per_node_on_cpu_per_gpu_on_gpu_and_unknown_partitions_get_nominal():
    cols = {"device": np.array(["cpu", "gpu", "cpu"], dtype=object),
            "ranks_per_node": np.array([4, 2, 2]),
            "peak_rss_mb": np.array([100.0, 700.0, 10.0]),
            "partition": np.array(["gpu-small", "gpu-small", "cpu"], dtype=object)}
    limits = {"gpu-small": MemoryLimit("gpu-small", node_mb=1000.0, gpu_mb=3000.0)}
    need, limit = memory_need_and_limit(cols, [PARTS["gpu-small"], PARTS["cpu"]], limits)
    assert need.tolist() == [400.0, 700.0, 20.0]
    assert limit.tolist() == [1000.0, 3000.0, pytest.approx(0.9 * 64000)]
    nominal = MemoryLimit.nominal(PARTS["gpu-small"])
    assert (nominal.node_mb, nominal.gpu_mb) == (pytest.approx(0.9 * 32000),
                                                 pytest.approx(0.9 * 6000))
    assert nominal.node_source == nominal.gpu_source == "nominal"


# -- a kernel's declared working set (item 9 of the new-user pass) -----------------------------


def test_declared_need_is_the_kernels_own_memory_model_per_rank_and_precision():
    from hpcds1mpi.decide.memory_limits import declared_need_mb
    from hpcds1mpi.kernels import get

    ranks = np.array([1, 8, 1, 8])
    got = declared_need_mb("stencil", 5000, ranks, np.array(["fp64", "fp64", "fp32", "bf16"]))
    kernel = get("stencil")
    # MiB, the learned peak's unit it is fmax'ed with (s40 tester D1: was decimal MB)
    want = [kernel.work(5000, r).memory_bytes / 2 ** 20 for r in (1, 8)]
    assert got == pytest.approx([want[0], want[1], want[0] / 2, want[1] / 4])
    assert got[0] > 2e6  # ~3 TB for one rank at 5000^3 points
    assert declared_need_mb("my-program", 5000, ranks) is None  # declares no memory model
    # a kernel's option deck has its kernel's arrays (s41 tester D5: it had no floor)
    assert declared_need_mb("stencil+sweeps.100", 5000, ranks) == pytest.approx(
        declared_need_mb("stencil", 5000, ranks))
    # Within the measured sizes the measured (learned) need stands.
    assert declared_need_mb("stencil", 5000, ranks, measured_sizes=(40, 5000)) is None
    assert declared_need_mb("stencil", 5000, ranks, measured_sizes=(40, 256)) is not None
    far = declared_need_mb("stencil", 5000, np.array([10**9, 1, 10**9]))  # no table that big
    assert far[1] == pytest.approx(want[0]) and far[0] == far[2] < far[1]


def test_need_is_at_least_the_declared_working_set():
    cols = {"device": np.array(["cpu", "gpu"]), "ranks_per_node": np.array([2, 1]),
            "peak_rss_mb": np.array([100.0, np.nan]), "partition": np.array(["cpu", "cpu"])}
    part = PARTS["cpu"]
    need, _ = memory_need_and_limit(cols, [part], {}, declared_mb=np.array([5000.0, 70.0]))
    assert need.tolist() == [10000.0, 70.0]  # per node on CPU; a NaN learned need gives way
    need, _ = memory_need_and_limit(cols, [part], {}, declared_mb=np.array([10.0, np.nan]))
    assert need[0] == 200.0  # the learned need where it is larger


def _with_oom_row(error: str, peak_rss_mb: float) -> FakeBundle:
    """The fake bundle with one more ``oom`` row on its ``cpu`` partition (64 GB a node, no
    ``oom`` of its own): 1 node x 2 ranks at size 256, its reason ``error``."""
    import pandas as pd

    bundle = FakeBundle()
    frame = bundle.training_frame()
    row = frame[(frame["partition"] == "cpu") & (frame["ranks_per_node"] > 1)].iloc[[0]].copy()
    row["status"], row["error"], row["peak_rss_mb"] = "oom", error, peak_rss_mb
    bundle._frame = pd.concat([frame.assign(error=""), row], ignore_index=True)
    return bundle


KILL_9 = ("exit code 137 (out of memory): mpirun.openmpi noticed that process rank 0 with PID 0 "
          "on node vm exited on signal 9 (Killed).")


def test_a_sigkill_far_under_the_memory_teaches_no_limit():
    # s46 testers G1, H1: a kill -9 of a rank at 133 MB on a 25 GB node, stored oom by an
    # older hpcds1mpi, set the node's limit to 375 MB; it is no out-of-memory measurement.
    limit = learn_memory_limits(_with_oom_row(KILL_9, 132.8), [PARTS["cpu"]])["cpu"]
    assert limit.node_source == "nominal" and limit.failures == 0
    assert limit.node_mb == pytest.approx(0.9 * 64000)


@pytest.mark.parametrize("error, peak", [
    (KILL_9, 20000.0),  # 40000 MiB a node of 64000: near it
    ("exit code 137 (out of memory): slurmstepd: error: Detected 1 oom_kill event in "
     "StepId=7.0", 100.0),  # Slurm's word
    ("exit code 137 (out of memory): killed by signal 9 near the memory available (its "
     "ranks' peak 40000 MiB a node, 62% of 64000 MiB): Killed", float("nan")),
    ("oom: MemoryError", float("nan")),  # a kernel's
    ("", float("nan")),  # an ingested job Slurm called OUT_OF_MEMORY
])
def test_an_oom_with_evidence_still_teaches_the_limit(error, peak):
    limit = learn_memory_limits(_with_oom_row(error, peak), [PARTS["cpu"]])["cpu"]
    assert limit.node_source == "measured" and limit.failures == 1
