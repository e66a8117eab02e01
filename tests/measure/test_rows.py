"""Row assembly: the runs-table row and detail rows from an Outcome and per-rank infos."""

from __future__ import annotations

import math

import pytest

from hpcds1mpi.cluster import Partition
from hpcds1mpi.config import Configuration
from hpcds1mpi.kernels import WorkModel
from hpcds1mpi.measure import meters
from hpcds1mpi.measure.plan import RunSpec
from hpcds1mpi.measure.rows import base_row, energy_columns, finish_row, spread, work_columns
from hpcds1mpi.measure.runner import Outcome

PART = Partition("p", cores_per_node=4, memory_gb=8, idle_watts_node=100, max_watts_node=300)
SPEC = RunSpec("k", 16, Configuration(1, 2, 1, "cpu", "fp64"), seed=3)


class _Kernel:
    def work(self, size, ranks):
        return WorkModel(flops=10.0 * size * ranks, bytes_moved=8.0, messages=2.0,
                         comm_bytes=16.0, memory_bytes=32.0)


class _NoWorkModel:
    def work(self, size, ranks):
        raise NotImplementedError


def _info(rank: int, **extra) -> dict:
    info = {"rank": rank, "hostname": "h", "local_rank": rank, "binding": str(rank),
            "cpu_s": 1.5, "rss_mb": 100.0 + rank, "rss_source": "vmhwm",
            "rank_wall": [0.5, 0.7], "rank_mpi": [0.1, 0.1], "elapsed_s": 2.0, "warmup": 1,
            "gpu": False}
    info.update(extra)
    return info


def test_spread():
    s = spread([1.0, 2.0, 4.0])
    assert s["runtime_s"] == 2.0 and s["noise"] == pytest.approx(1.5) and s["repeats"] == 3
    assert s["runtime_min_s"] == 1.0 and s["runtime_max_s"] == 4.0 and s["measured_s"] == 7.0
    assert spread([]) == {"repeats": 0}
    import math

    one = spread([1.5])  # one repeat has no spread: unknown, never a measured 0
    assert one["repeats"] == 1 and math.isnan(one["noise"]) and one["runtime_s"] == 1.5


def test_base_row_is_crashed_until_finished():
    row = base_row(SPEC, "m1", PART, "s1")
    assert row["status"] == "crashed" and row["kind"] == "kernel"
    assert (row["run_id"], row["ranks"], row["seed"], row["partition"]) == (SPEC.run_id, 2, 3, "p")


def test_work_columns_and_a_kernel_without_a_work_model():
    assert work_columns(_Kernel(), 16, 2) == {
        "work_flops": 320.0, "work_bytes": 8.0, "comm_messages": 2.0, "comm_bytes": 16.0,
        "mem_bytes_per_rank": 32.0}
    assert work_columns(_NoWorkModel(), 16, 2) == {}


def test_finish_row_from_an_ok_outcome():
    outcome = Outcome(wall=[0.6, 0.8], rank_wall=[0.5, 0.7], rank_mpi=[0.1, 0.1], rank_cpu=1.5,
                      rel_error=1e-12, blas_threads=1)
    model = meters.power_model(PART)
    row, detail = finish_row(dict(base_row(SPEC, "m1", PART, "s1"), attempt=1), outcome,
                             [_info(0), _info(1)], model, _Kernel(), SPEC, 2.5)
    assert row["status"] == "ok" and row["error"] == "" and row["elapsed_s"] == 2.5
    assert row["runtime_s"] == pytest.approx(0.7) and row["repeats"] == 2
    assert row["binding"] == "r0:0;r1:1" and row["hostnames"] == "h"
    assert row["peak_rss_mb"] == 101.0 and row["cpu_s"] == 3.0
    assert row["mpi_fraction"] == pytest.approx(0.2 / 1.2)
    assert row["work_flops"] == 320.0
    # No RAPL here: the partition's power model over the measured repeats.
    watts = meters.modelled_power(model, nodes=1, window_s=1.4, cpu_s=3.0)
    assert row["energy_source"] == "modelled" and row["avg_power_w"] == pytest.approx(watts)
    assert row["energy_j"] == pytest.approx(watts * 0.7)
    assert "gpu_source" not in row  # CPU runs leave the GPU columns empty
    assert [d["wall_s"] for d in detail["repeats"]] == [0.6, 0.8]
    assert [d["rank"] for d in detail["ranks"]] == [0, 1]
    assert len(detail["rank_repeats"]) == 4


def test_finish_row_driver_error_and_missing_outcome_are_failed():
    model = meters.power_model(PART)
    row, _ = finish_row(base_row(SPEC, "m", PART, "s"), Outcome(wall=[0.1]),
                        [_info(0), _info(1, driver_error="OSError: bind")], model, _Kernel(),
                        SPEC, 1.0)
    assert (row["status"], row["error"]) == ("failed", "OSError: bind")
    row, detail = finish_row(base_row(SPEC, "m", PART, "s"), None, [_info(0)], model,
                             _Kernel(), SPEC, 1.0)
    assert row["status"] == "failed" and detail["repeats"] == []
    assert "energy_j" not in row  # nothing was timed


def test_energy_prefers_rapl_then_nvml_then_the_model():
    model = meters.power_model(PART)
    row = {"runtime_s": 1.0, "repeats": 2, "measured_s": 2.0, "cpu_s": 2.0}
    rapl = energy_columns(row, [_info(0, rapl_j=50.0), _info(1)], model, 1)
    assert rapl["energy_source"] == "rapl" and rapl["avg_power_w"] == pytest.approx(25.0)
    assert rapl["power_model"] == ""
    gpu = [_info(0, gpu=True, nvml_j=40.0), _info(1, gpu=True, nvml_j=40.0)]
    mixed = energy_columns(row, [dict(i, rapl_j=50.0) for i in gpu], model, 1)
    assert mixed["energy_source"] == "rapl+nvml" and mixed["avg_power_w"] == pytest.approx(65.0)
    nvml = energy_columns(row, gpu, model, 1)
    cpu_watts = meters.modelled_power(model, nodes=1, window_s=2.0, cpu_s=2.0)
    assert nvml["energy_source"] == "nvml+modelled"
    assert nvml["avg_power_w"] == pytest.approx(40.0 + cpu_watts)
    none = energy_columns(row, [_info(0, gpu=True, nvml_j=math.nan)], model, 1)
    assert none["energy_source"] == "modelled" and "GPUs x" in none["power_model"]
    assert energy_columns({"runtime_s": None}, [_info(0)], model, 1) == {}
