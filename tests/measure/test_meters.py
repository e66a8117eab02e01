"""Measurement helpers: modelled power, peak RSS, fingerprint, RAPL."""

from __future__ import annotations

import numpy as np
import pytest

from hpcds1mpi.cluster import Partition
from hpcds1mpi.measure import meters


def test_modelled_power_is_linear_in_busy_cores_and_capped():
    part = Partition("p", cores_per_node=4, memory_gb=8, idle_watts_node=100, max_watts_node=300)
    model = meters.power_model(part)
    assert model.source == "cluster file"
    idle = meters.modelled_power(model, nodes=2, window_s=10, cpu_s=0)
    assert idle == pytest.approx(200)
    two_busy = meters.modelled_power(model, nodes=2, window_s=10, cpu_s=20)
    assert two_busy == pytest.approx(200 + 2 * 50)
    # More CPU seconds than cores exist (oversubscription, clock skew) is capped at all cores.
    assert meters.modelled_power(model, nodes=1, window_s=1, cpu_s=99) == pytest.approx(300)
    gpu = meters.modelled_power(model, nodes=1, window_s=10, cpu_s=0, gpus=2, gpu_busy_s=10)
    assert gpu == pytest.approx(100 + 2 * (60 + 340 * 0.5))
    default = meters.power_model(Partition("q", cores_per_node=2, memory_gb=8))
    assert default.source == "default per-core figures" and default.idle_watts_node == 6
    assert "busy cores" in default.describe()


def test_peak_rss_reset_sees_this_configuration_only():
    big = np.ones(60 * 2**20 // 8)  # 60 MiB, touched
    del big
    reset = meters.reset_peak_rss()
    after_reset, source = meters.peak_rss_mb(reset)
    if not reset:
        pytest.skip("this kernel does not allow resetting VmHWM")
    assert source == "vmhwm"
    grown = np.ones(80 * 2**20 // 8)
    peak, _ = meters.peak_rss_mb(reset)
    assert peak - after_reset > 60
    del grown


def test_fingerprint_and_machine_id():
    part = Partition("p", cores_per_node=2, memory_gb=8)
    row = meters.fingerprint(part, hostnames=["b", "a", "a"], mpi_library="MPICH 5",
                              gpu_aware=False)
    assert row["hostnames"] == "a,b" and row["physical_cores"] >= 1 and row["memory_gb"] > 0
    assert len(row["machine_id"]) == 16
    other = dict(row, hostnames="c")
    assert meters.machine_id(other) == row["machine_id"]  # host names do not enter it
    assert meters.machine_id(dict(row, mpi_library="Open MPI 5")) != row["machine_id"]
    assert "numpy" in row["packages"]


def test_rapl_absent_here_is_not_an_error():
    meter = meters.RaplMeter()
    assert meter.available == bool(meter.zones)
