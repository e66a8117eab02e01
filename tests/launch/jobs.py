"""Jobs, partitions and a site shared by the launch room's tests."""

from __future__ import annotations

from pathlib import Path

from hpcds1mpi.cluster import Cluster, Partition
from hpcds1mpi.config import Configuration
from hpcds1mpi.launch.directives import BatchJob, time_limit_s

GOLDEN = Path(__file__).parents[1] / "golden"

CPU = Partition("cpu", cores_per_node=64, memory_gb=256, max_nodes=16)
GPU = Partition("gpu", cores_per_node=32, memory_gb=512, max_nodes=8, gpus_per_node=4,
                gpu_memory_gb=40, slurm_partition="gpu_a100")


def site(**kw) -> Cluster:
    base = dict(name="site", partitions={"cpu": CPU, "gpu": GPU}, account="proj42",
                qos="normal", modules=["openmpi/4.1.5", "cuda/12.2"], gres_syntax="gpus-per-node",
                mpi="pmix", preamble=["source /etc/profile"])
    base.update(kw)
    return Cluster(**base)


def cpu_job(**kw) -> BatchJob:
    base = dict(config=Configuration(4, 16, 4, "cpu", "fp32"), partition=CPU,
                program="./stencil --n {size} --precision {precision}", size=4096,
                time_limit_s=time_limit_s(600.0), cluster=site(), job_name="stencil-run",
                output="logs/stencil-run.out")  # PBS has no %j: a plain path
    base.update(kw)
    return BatchJob(**base)


def gpu_job(**kw) -> BatchJob:
    base = dict(config=Configuration(2, 4, 8, "gpu", "bf16"), partition=GPU, program="./gemm",
                time_limit_s=25 * 3600, cluster=site(account="", qos=""), job_name="gemm-gpu",
                exclusive=True)
    base.update(kw)
    return BatchJob(**base)


def golden(name: str) -> list[str]:
    return (GOLDEN / name).read_text().splitlines()


