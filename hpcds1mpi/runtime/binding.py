"""CPU binding: the CPUs a process may use and pinning a rank's threads to its own cores.

Under ``srun`` each task starts pinned to its own CPUs (one by default, ``--cpus-per-task``
otherwise), so one rank's affinity is not its node's CPUs: a configuration with fewer ranks
than were launched uses the CPUs of the launched ranks that sit it out. The CPUs a node may
use are the union of the start affinities of the ranks launched on it (:func:`node_cpus`).
"""

from __future__ import annotations

import os


def initial_cpus() -> list[int]:
    """The CPUs this process may run on at start (before any binding of ours)."""
    try:
        return sorted(os.sched_getaffinity(0))
    except AttributeError:  # macOS: no affinity API
        return list(range(os.cpu_count() or 1))


def node_cpus(start_cpus: list[list[int]], node_keys: list[str], key: str) -> list[int]:
    """The CPUs the ranks launched on one node may use together.

    Args:
        start_cpus: per rank of the communicator, its :func:`initial_cpus`.
        node_keys: per rank, the key naming its node (``NodeLayout.node_keys``).
        key: the node's key.

    Returns:
        The sorted union of the start affinities of the node's ranks.
    """
    return sorted({c for cpus, k in zip(start_cpus, node_keys) if k == key for c in cpus})


def bind(local_rank: int, ranks_on_node: int, threads: int, cpus: list[int],
         own: list[int] | None = None) -> str:
    """Bind this rank to ``threads`` distinct CPUs of ``cpus`` when ranks x threads fit.

    Args:
        local_rank: this rank's index on its node.
        ranks_on_node: ranks of the configuration on the node.
        threads: threads per rank.
        cpus: the node's CPUs (:func:`node_cpus`).
        own: this rank's start affinity (:func:`initial_cpus`; default ``cpus``): CPUs bound
            beyond it are said in the text, and it is kept when they cannot be had.

    Returns the binding as text: ``"0,1"`` style CPU list (``"0,1 (beyond the task's 0)"``
    when it widens the launcher's mask), ``"unbound (oversubscribed: R x T > C cpus)"`` when
    they do not fit, or ``"unbound (...)"`` with the reason the binding failed.
    """
    if not hasattr(os, "sched_setaffinity"):
        return "unbound (no affinity API)"
    if ranks_on_node * threads > len(cpus):
        try:
            os.sched_setaffinity(0, cpus)
        except OSError:
            pass
        return f"unbound (oversubscribed: {ranks_on_node} x {threads} > {len(cpus)} cpus)"
    mine = cpus[local_rank * threads:(local_rank + 1) * threads]
    text = ",".join(str(c) for c in mine)
    try:
        os.sched_setaffinity(0, mine)
    except OSError as exc:
        # A cgroup narrower than the launch's masks: run on what the launcher gave, and say so.
        return f"unbound ({exc.strerror} binding to {text}; ran on {_cpu_text(own or cpus)})"
    beyond = own is not None and not set(mine) <= set(own)
    return f"{text} (beyond the task's {_cpu_text(own)})" if beyond else text


def _cpu_text(cpus: list[int]) -> str:
    return ",".join(str(c) for c in cpus)


def unbind(cpus: list[int]) -> None:
    """Let this process run on ``cpus`` again (its own :func:`initial_cpus`)."""
    if hasattr(os, "sched_setaffinity"):
        try:
            os.sched_setaffinity(0, cpus)
        except OSError:
            pass
