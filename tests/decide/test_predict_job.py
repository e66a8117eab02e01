"""``/v1/predict`` and ``Model.predict``'s one function: the guard's verdict on the job, and a
job the model never saw (workload, size, hardware, a GPU it cannot compare) said first in each
scored row's ``extrapolated``."""

from __future__ import annotations

import pytest

from hpcds1mpi.cluster import Partition
from hpcds1mpi.config import Configuration
from hpcds1mpi.decide import guard
from hpcds1mpi.decide.predict_job import job_beyond_measured, predict_job
from tests.fake_bundle import PARTITIONS, FakeBundle, isolate_user_files


@pytest.fixture(autouse=True)
def isolated_cache(tmp_path, monkeypatch):
    isolate_user_files(monkeypatch, tmp_path)


def _ask(bundle, workload, size, part, configs):
    ref = guard.reference(bundle)
    return predict_job(bundle, workload, size, part, configs,
                       guard.load_calibration(bundle, None, ref), ref)


CPU = Partition("cpu", cores_per_node=16, memory_gb=64.0, max_nodes=4)


def test_a_job_on_hardware_never_trained_on_at_an_unmeasured_size_says_both_in_each_row():
    bundle = FakeBundle()  # sizes 256-2048
    other = Partition("big", cores_per_node=64, memory_gb=512, max_nodes=2)
    verdict, rows = _ask(bundle, "gemm", 100000, other,
                         [Configuration(1, 2, 1), Configuration(9, 1, 1)])
    assert verdict.verdict == "escalate"
    assert rows[0]["valid"] and rows[0]["extrapolated"][:2] == [
        "partition big (64 cores, 0 GPUs, 512 GB) never trained on",
        "size 100000 outside the measured sizes 256–2048"]
    assert not rows[1]["valid"] and rows[1]["extrapolated"] == []  # not scored
    assert job_beyond_measured(bundle, "gemm", 100000, other, verdict) == \
        rows[0]["extrapolated"][:2]


def test_a_familiar_job_adds_nothing():
    verdict, rows = _ask(FakeBundle(), "gemm", 1024, CPU, [Configuration(1, 2, 1)])
    assert verdict.checks["hardware"] == "pass"
    assert not any(x.startswith(("partition ", "size ", "workload ", "GPU "))
                   for x in rows[0]["extrapolated"])


def test_a_gpu_row_on_a_gpu_the_model_does_not_record_says_so():
    no_gpu_info = {n: {k: v for k, v in hw.items() if k != "gpu_memory_gb"}
                   for n, hw in PARTITIONS.items()}
    k80 = Partition("k80", cores_per_node=8, memory_gb=64, max_nodes=2, gpus_per_node=2,
                    gpu_memory_gb=12, gpu_model="tesla-k80")
    _, (gpu, cpu) = _ask(FakeBundle(partitions=no_gpu_info), "gemm", 1024, k80,
                         [Configuration(1, 1, 1, "gpu", "fp32"), Configuration(1, 1, 1)])
    assert gpu["extrapolated"][0].startswith("GPU tesla-k80 12 GB of partition k80 not "
                                             "compared with the one measured on gpu-big")
    assert not any("GPU tesla-k80" in x for x in cpu["extrapolated"])
