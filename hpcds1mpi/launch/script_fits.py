"""Whether the scheduler would refuse what a job script asks for on a partition: more CPUs
per node (ranks per node x CPUs per task, or a PBS chunk's ``ncpus``) or GPUs per node than a
node has. ``advise`` gives the asked side no prediction then, only this line."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hpcds1mpi.launch.pbs_request import host_cpus

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.cluster import Partition
    from hpcds1mpi.launch.job_script import JobScript


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'s' if count != 1 else ''}"


def refused_request(script: "JobScript", per_node: int, threads: int,
                    partition: "Partition") -> str:
    """Why the scheduler refuses the script's request on ``partition`` ("" when it does
    not): more CPUs per node (ranks per node x CPUs per task, or a PBS chunk's ``ncpus``)
    or GPUs per node than a node has. The threads alone do not say it: ``--cpus-per-task=64``
    with ``OMP_NUM_THREADS=2`` reserves 64 CPUs per rank, and Slurm refuses it ("Requested
    node configuration is not available")."""
    cores, name = partition.cores_per_node, partition.name
    host = host_cpus(script) if script.scheduler == "pbs" else None
    cpus = script.cpus_per_task
    if host and host[0] > cores:
        return f"line {host[1]}: {host[2]}, but partition {name!r} has {cores} cores per node"
    if cpus and cpus > threads and per_node * cpus > cores:  # equal: check_fits says it
        return (f"{_plural(per_node, 'rank')} x {cpus} CPUs per task = {per_node * cpus} CPUs "
                f"per node, but partition {name!r} has {cores}")
    if script.gpus_per_node > partition.gpus_per_node:
        return (f"{_plural(script.gpus_per_node, 'GPU')} per node asked, but partition "
                f"{name!r} has {partition.gpus_per_node}")
    return ""
