"""The registry's answers about what a workload may be offered (kernels/__init__.py)."""

from __future__ import annotations

import pytest

from hpcds1mpi import kernels
from hpcds1mpi.cluster import Partition

CPU = Partition(name="cpu", cores_per_node=8, memory_gb=32, max_nodes=4, gpus_per_node=0)
GPU = Partition(name="gpu", cores_per_node=8, memory_gb=32, max_nodes=4, gpus_per_node=2,
                gpu_memory_gb=16)


@pytest.mark.parametrize("workload, partition, expected", [
    ("allreduce", GPU, (False, ["fp64", "fp32"], ["cpu", "gpu"])),
    ("gemm", CPU, (True, ["fp64", "fp32", "bf16"], ["cpu"])),       # no GPU on the partition
    ("mltrain", GPU, (True, ["fp64", "fp32", "bf16"], ["cpu"])),    # declares CPU only
    (None, GPU, (True, None, ["cpu", "gpu"])),                      # a user's program
    ("my_app", CPU, (True, None, ["cpu"])),                         # a job-log label
])
def test_offered_is_what_the_kernel_declares_and_the_partition_has(workload, partition, expected):
    assert kernels.offered(workload, partition) == expected
