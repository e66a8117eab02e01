"""Measurement helpers: modelled power, peak RSS, CPU binding, fingerprint, progress."""

from __future__ import annotations

import io
import os

import numpy as np
import pytest

from hpcds1mpi.measure import meters as measure
from hpcds1mpi.runtime import binding
from hpcds1mpi.cluster import Partition
from hpcds1mpi.measure.sweep import Progress, spread


def test_modelled_power_is_linear_in_busy_cores_and_capped():
    part = Partition("p", cores_per_node=4, memory_gb=8, idle_watts_node=100, max_watts_node=300)
    model = measure.power_model(part)
    assert model.source == "cluster file"
    idle = measure.modelled_power(model, nodes=2, window_s=10, cpu_s=0)
    assert idle == pytest.approx(200)
    two_busy = measure.modelled_power(model, nodes=2, window_s=10, cpu_s=20)
    assert two_busy == pytest.approx(200 + 2 * 50)
    # More CPU seconds than cores exist (oversubscription, clock skew) is capped at all cores.
    assert measure.modelled_power(model, nodes=1, window_s=1, cpu_s=99) == pytest.approx(300)
    gpu = measure.modelled_power(model, nodes=1, window_s=10, cpu_s=0, gpus=2, gpu_busy_s=10)
    assert gpu == pytest.approx(100 + 2 * (60 + 340 * 0.5))
    default = measure.power_model(Partition("q", cores_per_node=2, memory_gb=8))
    assert default.source == "default per-core figures" and default.idle_watts_node == 6
    assert "busy cores" in default.describe()


def test_peak_rss_reset_sees_this_configuration_only():
    big = np.ones(60 * 2**20 // 8)  # 60 MiB, touched
    del big
    reset = measure.reset_peak_rss()
    after_reset, source = measure.peak_rss_mb(reset)
    if not reset:
        pytest.skip("this kernel does not allow resetting VmHWM")
    assert source == "vmhwm"
    grown = np.ones(80 * 2**20 // 8)
    peak, _ = measure.peak_rss_mb(reset)
    assert peak - after_reset > 60
    del grown


def test_bind_distinct_cpus_or_unbound_when_oversubscribed():
    cpus = binding.initial_cpus()
    try:
        if len(cpus) >= 2:
            assert binding.bind(1, 2, 1, cpus) == str(cpus[1])
            assert os.sched_getaffinity(0) == {cpus[1]}
        text = binding.bind(0, len(cpus) + 1, 1, cpus)
        assert text.startswith("unbound (oversubscribed")
        assert os.sched_getaffinity(0) == set(cpus)
    finally:
        binding.unbind(cpus)
    assert os.sched_getaffinity(0) == set(cpus)


def test_fingerprint_and_machine_id():
    part = Partition("p", cores_per_node=2, memory_gb=8)
    row = measure.fingerprint(part, hostnames=["b", "a", "a"], mpi_library="MPICH 5",
                              gpu_aware=False)
    assert row["hostnames"] == "a,b" and row["physical_cores"] >= 1 and row["memory_gb"] > 0
    assert len(row["machine_id"]) == 16
    other = dict(row, hostnames="c")
    assert measure.machine_id(other) == row["machine_id"]  # host names do not enter it
    assert measure.machine_id(dict(row, mpi_library="Open MPI 5")) != row["machine_id"]
    assert "numpy" in row["packages"]


def test_rapl_absent_here_is_not_an_error():
    meter = measure.RaplMeter()
    assert meter.available == bool(meter.zones)


def test_spread_and_progress():
    s = spread([1.0, 2.0, 4.0])
    assert s["runtime_s"] == 2.0 and s["noise"] == pytest.approx(1.5) and s["repeats"] == 3
    assert spread([]) == {"repeats": 0}
    stream = io.StringIO()
    bar = Progress(20, stream=stream)
    for done in range(1, 21):
        bar.update(done)
    lines = stream.getvalue().splitlines()
    assert 10 <= len(lines) <= 11  # one line per 10 % when not a terminal
    assert lines[-1].startswith("[" + "#" * 30 + "] 20/20 configs")
