"""CPU binding: the CPUs a process may use and pinning a rank's threads to its own cores."""

from __future__ import annotations

import os


def initial_cpus() -> list[int]:
    """The CPUs this process may run on at start (before any binding of ours)."""
    try:
        return sorted(os.sched_getaffinity(0))
    except AttributeError:  # macOS: no affinity API
        return list(range(os.cpu_count() or 1))


def bind(local_rank: int, ranks_on_node: int, threads: int, cpus: list[int]) -> str:
    """Bind this rank to ``threads`` distinct CPUs of ``cpus`` when ranks x threads fit.

    Returns the binding as text: ``"0-1"`` style CPU list, ``"unbound (oversubscribed: R x T >
    C cpus)"`` when they do not fit, or ``"unbound (no affinity API)"``.
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
    try:
        os.sched_setaffinity(0, mine)
    except OSError as exc:
        return f"unbound ({exc.strerror})"
    return ",".join(str(c) for c in mine)


def unbind(cpus: list[int]) -> None:
    """Let this process run on ``cpus`` again (the set :func:`initial_cpus` returned)."""
    if hasattr(os, "sched_setaffinity"):
        try:
            os.sched_setaffinity(0, cpus)
        except OSError:
            pass
