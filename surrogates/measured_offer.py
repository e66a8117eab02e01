"""What may be offered for a workload measured only at some levels, and what is left out.

A user's program (or a job-log label) declares no knobs, so :func:`measured_offer` offers
only the levels it was measured at (:class:`~hpcds1mpi.surrogates.levels.MeasuredLevels`),
one line per level left out and why. A program whose runs of 2+ threads kept about one core
busy per rank (:attr:`~hpcds1mpi.surrogates.levels.MeasuredLevels.idle_threads`) is offered
1 thread only: its thread levels were one computation (s41 tester A3). A kernel's
:class:`Offer` is built from its declared support by :mod:`hpcds1mpi.decide.offer`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:  # pragma: no cover
    from .levels import MeasuredLevels


@dataclass
class Offer:
    """What may be offered for a workload, and what was left out and why.

    Attributes:
        uses_threads: whether more than one thread per rank is offered at all.
        precisions, devices: the levels offered (None: everything the partition has).
        threads: thread counts offered (None: every count).
        max_ranks_per_node: the most ranks per node offered (None: the partition's cores).
        max_nodes: the most nodes offered (None: the caller's limit): a program whose ranks
            cannot be one job is offered only its measured nodes (``decide/offer.py``).
        left_out: one line per level left out, with its reason.
        levels: the measured levels behind the offer (None for a kernel).
    """

    uses_threads: bool = True
    precisions: list | None = None
    devices: list | None = None
    threads: list | None = None
    max_ranks_per_node: int | None = None
    max_nodes: int | None = None
    left_out: list[str] = field(default_factory=list)
    levels: MeasuredLevels | None = None


def measured_offer(levels: MeasuredLevels, devices_available: Sequence[str],
                   max_cores: int, precisions_known: Sequence[str] | None = None,
                   nodes_offered: int | None = None) -> Offer:
    """The offer of a program measured at ``levels``: only those levels.

    Args:
        levels: what it was measured with.
        devices_available: the devices the allowed partitions have (left-out lines name
            only what could otherwise have been offered).
        max_cores: the most cores per node of the allowed partitions.
        precisions_known: every precision (default :data:`hpcds1mpi.config.PRECISIONS`).
        nodes_offered: the most nodes the caller could pick (recommend); node counts above
            the program's measured most, up to it, are named as left out (System 1 picks
            them only where no measured count can run it: ``decide/measured_nodes.py``).
            None: node counts are not judged (``tune`` and ``mobo`` measure any).
    """
    from hpcds1mpi.config import PRECISIONS

    what = "this program" if levels.external else "this workload"
    left = []
    for p in precisions_known or PRECISIONS:
        if p not in levels.precisions:
            left.append(f"{p}: never measured for {what}")
    for d in devices_available:
        if d not in levels.devices:
            left.append(f"{d}: never measured for {what}")
    threads = [t for t in levels.threads if t <= max_cores]
    unmeasured = [t for t in range(1, max_cores + 1) if t not in levels.threads]
    if unmeasured and threads:
        left.append(f"threads {_ranges(unmeasured)}: never measured for {what} "
                    f"(measured {_ranges(threads)})")
    if levels.idle_threads and 1 in threads and max(threads) > 1:  # one computation, noise
        from hpcds1mpi.measure.thread_use import idle_threads_line

        threads = [1]
        left.append(idle_threads_line(levels.workload, levels.idle_threads, levels.command))
    rpn = levels.max_ranks_per_node
    if rpn and rpn < max_cores:
        left.append(f"ranks per node above {rpn}: beyond the measured maximum for {what}")
    most = max(levels.nodes) if levels.nodes else 0
    if nodes_offered is not None and most and nodes_offered > most:
        span = f"{most + 1}" if nodes_offered == most + 1 else f"{most + 1}-{nodes_offered}"
        left.append(f"nodes {span}: never measured for {what} (at most {most}); picked only "
                    "where no measured node count can run it")
    return Offer(uses_threads=bool(threads) and max(threads) > 1,
                 precisions=list(levels.precisions),
                 devices=[d for d in levels.devices if d in devices_available],
                 threads=threads or [1], max_ranks_per_node=rpn or None, left_out=left,
                 levels=levels)


def _ranges(values: Sequence[int]) -> str:
    """``1, 2, 5-8`` for integers: runs of three or more shown as a range."""
    groups: list[list[int]] = []
    for v in sorted(values):
        if groups and v == groups[-1][-1] + 1:
            groups[-1].append(v)
        else:
            groups.append([v])
    return ", ".join(f"{g[0]}-{g[-1]}" if len(g) > 2 else ", ".join(map(str, g)) for g in groups)


__all__ = ["Offer", "measured_offer"]
