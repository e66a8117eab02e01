"""Whether a kernel's run fits a node's memory, by the kernel's own declared working set.

A sweep plan's sizes are bounded absolutely (2^40), so a typo (``--sizes 32,1024`` for
stencil: about 26 GB a rank) ran the kernel until the operating system killed it for memory,
on a login node taking other users' memory first. :func:`memory_problem` says, before
anything runs, where a CPU run's declared working set per node is above the memory a job
there may use (:attr:`~hpcds1mpi.cluster.Partition.usable_memory_gb`: the allocation's share
inside one). The declared set is the kernel's fp64 figure (``WorkModel.memory_bytes``): an
upper bound for the narrower precisions. GPU runs hold their arrays on the device and are not
judged here.
"""

from __future__ import annotations


def memory_need_gb(kernel, size: int, config) -> float | None:
    """The declared working set per node (GB) of ``kernel`` at ``size`` on ``config``; None
    where the kernel cannot say (its work model refuses the size or layout)."""
    try:
        per_rank = float(kernel.work(size, config.nodes * config.ranks_per_node).memory_bytes)
    except (ValueError, ZeroDivisionError, ArithmeticError, TypeError):
        return None
    return per_rank * config.ranks_per_node / 1e9


def memory_problem(kernel, size: int, config, partition) -> str | None:
    """Why ``kernel`` at ``size`` on ``config`` cannot run in ``partition``'s memory, or None
    when it fits (or is a GPU run, or the kernel cannot say)."""
    if config.device != "cpu":
        return None
    need = memory_need_gb(kernel, size, config)
    have = float(partition.usable_memory_gb or 0.0)
    if need is None or have <= 0 or need <= have:
        return None
    return (f"{kernel.name} size {size} on {config.label()} needs about {need:.1f} GB per node "
            f"(its declared working set), over the {have:.1f} GB a job may use there: it would "
            "be killed for memory, taking the machine's memory from others first")
