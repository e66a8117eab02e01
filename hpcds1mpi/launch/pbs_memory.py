"""The memory a PBS script asks per host: ``mem`` / ``vmem`` in its ``select`` chunks or
job-wide (``-l mem=8gb``), ``pmem`` / ``pvmem`` per process.

PBS writes a size as a whole number and a unit, ``b``, ``kb``, ``mb``, ``gb``, ``tb``, ``pb``
(or words, ``w``, ``kw``, ... of 8 bytes), in either case, the ``b`` optional after a multiple
(``4g``); no unit is bytes, and ``1kb`` is 1024 bytes (PBS's ``mb`` is a MiB), as OpenPBS's
``to_size`` reads it. A chunk's ``mem`` is the host's that runs the chunk (every
chunk of the select on one host under ``place=pack``); a job-wide ``mem`` is the job's, read
as spread evenly over its hosts (one host for an old-style request, which PBS turns into
``select=1``); ``pmem`` / ``pvmem`` hold each process, each rank of a host. Every one of them
is a limit, so the smallest is the one that kills the job first. A ``vmem`` counts virtual
memory, which is never less than the resident memory a need predicts.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hpcds1mpi.launch.pbs_request import arrangement, chunk_specs
from hpcds1mpi.launch.script_options import Option, to_int

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.launch.job_script import JobScript

#: Memory resources that hold a host's (a chunk's) or a job's processes together.
PER_HOST = ("mem", "vmem")
#: Memory resources that hold each process.
PER_PROCESS = ("pmem", "pvmem")
_SIZE = re.compile(r"(\d+)([kmgtp]?)([bw]?)", re.IGNORECASE | re.ASCII)
_POWERS = {"": 0, "k": 1, "m": 2, "g": 3, "t": 4, "p": 5}
UNITS = "b, kb, mb, gb or tb (1kb = 1024 bytes; no unit is bytes)"


def size_mib(value: str) -> float | None:
    """A PBS size (``4gb``, ``4g``, ``800mb``, ``1048576``, ``2GB``, ``1kw``) in MiB; None for
    a value that is no PBS size (``1.5gb``, ``4gib``, ``lots``), which qsub refuses."""
    m = _SIZE.fullmatch(value.strip())
    if m is None:
        return None
    number, power, unit = int(m.group(1)), m.group(2).lower(), m.group(3).lower()
    return number * 1024 ** _POWERS[power] * (8 if unit == "w" else 1) / 1024 ** 2


def size_text(mib: float) -> str:
    """``mib`` as PBS writes it, whole MiB rounded up (``1301mb``)."""
    return f"{math.ceil(mib)}mb"


@dataclass(frozen=True)
class MemoryAsk:
    """One memory limit of a PBS request, read per host.

    Attributes:
        resource: ``mem``, ``vmem``, ``pmem`` or ``pvmem``.
        option: the directive's resource, or the first chunk spec's term, where it is written.
        mib: what it gives a host of the layout read, MiB; None where its value is no size.
        how: how the script asks it, with its line (``select ...:mem=1mb (line 3)``).
        share: the hosts (a job-wide value) or the ranks of a host (a per-process one) it is
            counted over; 1 for a chunk's.
    """

    resource: str
    option: Option
    mib: float | None
    how: str
    share: int = 1

    @property
    def per_process(self) -> bool:
        return self.resource in PER_PROCESS

    @property
    def job_wide(self) -> bool:
        return self.option.name.startswith("l:") and not self.per_process

    def raised(self, request_mib: float) -> str:
        """The value that gives a host ``request_mib``, in this ask's own terms."""
        if self.per_process:
            return size_text(request_mib / max(1, self.share))
        return size_text(request_mib * (self.share if self.job_wide else 1))


def _chunk_asks(script: "JobScript", select: Option, ranks: int) -> list[MemoryAsk]:
    """The memory resources of the ``select`` chunks: the smallest chunk's (one chunk a host,
    as the layout is read), or every chunk's together under ``place=pack``; a per-process one
    over the ``ranks`` of a host."""
    chunks, asks = chunk_specs(select.value), []
    for resource in PER_HOST + PER_PROCESS:
        given = [(c, size_mib(c[resource])) for c in chunks if resource in c]
        if not given:
            continue
        term = script.select.get(resource) or Option(resource, given[0][0][resource],
                                                     select.line, select.span)
        share = ranks if resource in PER_PROCESS else 1
        if any(mib is None for _, mib in given):
            bad = next(c[resource] for c, mib in given if mib is None)
            asks.append(MemoryAsk(resource, term, None,
                                  f"select ...:{resource}={bad} (line {select.line})"))
        elif arrangement(script) == "pack" and not share > 1:
            if len(given) == len(chunks):  # else the queue's default fills the others
                total = sum((to_int(c.get("count")) or 1) * mib for c, mib in given)
                asks.append(MemoryAsk(resource, term, total, f"{resource} of its chunks "
                                      f"together, place=pack (line {select.line})"))
        else:
            chunk, mib = min(given, key=lambda g: g[1])
            how = f"select ...:{resource}={chunk[resource]} (line {select.line})"
            asks.append(MemoryAsk(resource, term, mib * share, how + (
                f" x {share} ranks per host" if share > 1 else ""), share))
    return asks


def memory_asks(script: "JobScript", ranks_per_node: int) -> list[MemoryAsk]:
    """Every memory limit the PBS ``script`` gives a host running ``ranks_per_node`` ranks, the
    select's first, then the job-wide ones; [] for a Slurm script or one that asks none."""
    if script.scheduler != "pbs":
        return []
    d, asks = script.directives, []
    select = d.get("l:select")
    hosts, ranks = max(1, script.nodes or 1), max(1, int(ranks_per_node))
    if select is not None and select.value:
        asks += _chunk_asks(script, select, ranks)
    for resource in PER_HOST + PER_PROCESS:
        opt = d.get(f"l:{resource}")
        if opt is None or not opt.value:
            continue
        mib, how = size_mib(opt.value), f"-l {resource}={opt.value} (line {opt.line})"
        share = ranks if resource in PER_PROCESS else hosts
        if mib is None:
            asks.append(MemoryAsk(resource, opt, None, how, share))
        elif resource in PER_PROCESS:
            asks.append(MemoryAsk(resource, opt, mib * share, how + f" x {share} "
                                  f"rank{'s' if share > 1 else ''} per host", share))
        else:
            asks.append(MemoryAsk(resource, opt, mib / share, how + (
                f" over {share} hosts" if share > 1 else ""), share))
    return asks


def rewritten_asks(script: "JobScript", nodes: int, ranks_per_node: int) -> list[MemoryAsk]:
    """The readable memory limits of ``script`` as a rewrite to ``nodes`` hosts of
    ``ranks_per_node`` ranks leaves them (:mod:`hpcds1mpi.launch.pbs_rewrite`): the first chunk
    spec's (the others are dropped), a job-wide ``mem`` / ``vmem`` moved into the chunk and so
    asked per host (a Torque ``-l nodes=`` request keeps it job-wide, over ``nodes``), a
    per-process one over ``ranks_per_node``."""
    if script.scheduler != "pbs":
        return []
    d, out = script.directives, []
    torque = "l:nodes" in d and not script.select
    terms = [(script.select.get(r), False) for r in PER_HOST + PER_PROCESS]
    terms += [(d.get(f"l:{r}"), True) for r in PER_HOST + PER_PROCESS]
    for opt, job_wide in terms:
        mib = size_mib(opt.value) if opt is not None and opt.value else None
        if mib is None:
            continue
        resource = opt.name.removeprefix("l:")
        how = f"{'-l ' if job_wide else 'select ...:'}{resource}={opt.value} (line {opt.line})"
        if resource in PER_PROCESS:
            out.append(MemoryAsk(resource, opt, mib * ranks_per_node, how, ranks_per_node))
        elif job_wide and torque:
            out.append(MemoryAsk(resource, opt, mib / nodes, how, nodes))
        elif not job_wide or resource not in script.select:  # else dropped for the chunk's
            out.append(MemoryAsk(resource, opt, mib, how))
    return out


def unreadable_sizes(asks: list[MemoryAsk]) -> list[str]:
    """One line for each ask whose value is no PBS size: qsub refuses it."""
    return [f"the script asks {a.how}, which is no PBS size and qsub refuses: write a whole "
            f"number with {UNITS}" for a in asks if a.mib is None]


__all__ = ["MemoryAsk", "PER_HOST", "PER_PROCESS", "memory_asks", "rewritten_asks", "size_mib",
           "size_text", "unreadable_sizes"]
