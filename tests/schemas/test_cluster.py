"""The cluster file's schema: a partition's GPU fields agree with its GPU count."""

from __future__ import annotations

import pytest

from hpcds1mpi.errors import ClusterFileError
from hpcds1mpi.schemas.cluster import cluster_tables

BASE = {"cores_per_node": 64, "memory_gb": 512}


def _check(**fields) -> dict:
    doc = {"clusters": {"x": {"partitions": {"g": {**BASE, **fields}}}}}
    return cluster_tables(doc, "site.toml")["x"]["partitions"]["g"]


@pytest.mark.parametrize("fields, given, count", [
    ({"gpu_memory_gb": 80}, "gpu_memory_gb", "no gpus_per_node"),
    ({"gpu_model": "a100"}, "gpu_model", "no gpus_per_node"),
    ({"idle_watts_gpu": 50}, "idle_watts_gpu", "no gpus_per_node"),
    ({"gpu_model": "a100", "gpu_memory_gb": 80, "max_watts_gpu": 400, "gpus_per_node": 0},
     "gpu_model, gpu_memory_gb, max_watts_gpu", "gpus_per_node is 0"),
])
def test_gpu_fields_without_a_gpu_count_are_refused_naming_the_missing_key(fields, given, count):
    """Was: accepted as a CPU partition ("0 GPUs (80.0 GB)"), so recommend --device gpu later
    said it had no GPUs."""
    with pytest.raises(ClusterFileError) as info:
        _check(**fields)
    message = str(info.value)
    assert message.startswith("site.toml: clusters.x.partitions.g: has ") and "\n" not in message
    assert f"has {given} but {count}; give gpus_per_node" in message


def test_a_cpu_partition_with_zero_gpu_fields_and_a_gpu_partition_are_kept():
    assert _check(gpus_per_node=0, gpu_memory_gb=0)["gpus_per_node"] == 0
    kept = _check(gpus_per_node=4, gpu_memory_gb=80, gpu_model="a100", idle_watts_gpu=50)
    assert (kept["gpus_per_node"], kept["gpu_model"]) == (4, "a100")


def test_fewer_cores_than_gpus_is_kept():
    """Possible hardware (Slurm allows it): said by Partition.hardware_notes, not refused."""
    assert _check(cores_per_node=2, gpus_per_node=4, gpu_memory_gb=80)["cores_per_node"] == 2
