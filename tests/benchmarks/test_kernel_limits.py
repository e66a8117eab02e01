"""benchmarks/kernel_limits.py: the ratio logic of interleaved samples, and every limit sampler
runs (tiny sizes) and times the work it claims."""

from __future__ import annotations

import math

import pytest

from tests.benchmarks import load_benchmark


@pytest.fixture(scope="module")
def limits():
    return load_benchmark("kernel_limits")


def test_best_against_best_with_the_per_round_range_and_spreads(limits):
    # 10 units of kernel work, 20 of limit work: rates kernel 10/k, limit 20/l.
    kernel_s = [2.0, 1.0, 4.0]
    limit_s = [4.0, 4.0, 2.0]
    out = limits.summarize(kernel_s, limit_s, 10.0, 20.0)
    assert out["achieved"] == pytest.approx(10.0)  # fastest kernel round: 10 / 1
    assert out["limit"] == pytest.approx(10.0)  # fastest limit round: 20 / 2
    assert out["ratio"] == pytest.approx(1.0)
    # round by round: (5/5, 10/5, 2.5/10)
    assert out["ratio_low"] == pytest.approx(0.25) and out["ratio_high"] == pytest.approx(2.0)
    assert out["spread_kernel"] == pytest.approx(3.0) and out["spread_limit"] == pytest.approx(1.0)
    assert out["rounds"] == 3


def test_a_slower_kernel_has_a_ratio_below_one(limits):
    out = limits.summarize([3.0] * 5, [1.0] * 5, 1.0, 1.0)
    assert out["ratio"] == pytest.approx(1 / 3)
    assert out["spread_kernel"] == 0.0 and out["ratio_low"] == out["ratio_high"]


def test_no_samples_is_refused(limits):
    with pytest.raises(ValueError, match="at least one"):
        limits.summarize([], [1.0], 1.0, 1.0)


@pytest.mark.parametrize("name,size,precision", [
    ("gemm", 32, "fp64"), ("gemm", 32, "fp32"), ("gemm", 32, "bf16"), ("stencil", 8, "fp64"),
    ("cg", 8, "fp64"), ("fft", 8, "fp64"), ("nbody", 50, "fp32"), ("mltrain", 64, "fp32"),
])
def test_every_limit_samples_a_positive_time(limits, monkeypatch, name, size, precision):
    monkeypatch.setattr(limits, "FMA_N", 64)
    monkeypatch.setattr(limits, "TRIAD_N", 1 << 12)
    sampler, work, unit, what, goal = limits.limit_for(name, size, precision, 1, quick=True)
    seconds = sampler()
    assert 0 < seconds < 30 and math.isfinite(seconds)
    assert work > 0 and unit in ("GFLOP/s", "GB/s") and what and goal.startswith(">=")


def test_limits_count_the_work_they_time(limits):
    from hpcds1mpi import kernels

    assert limits.limit_for("gemm", 32, "fp64", 1)[1] == 2 * 32 ** 3
    assert limits.limit_for("fft", 8, "fp64", 1)[1] == kernels.get("fft").work(8, 1).flops
    assert limits.limit_for("mltrain", 64, "fp32", 1)[1] == kernels.get("mltrain").work(64, 1).flops
    assert limits.limit_for("io", 8, "fp64", 1) is None


def test_raw_file_sampler_writes_reads_and_cleans_up(limits, tmp_path):
    write_s, read_s = limits.raw_file_seconds(1 << 16, str(tmp_path))()
    assert write_s > 0 and read_s > 0
    assert list(tmp_path.iterdir()) == []
