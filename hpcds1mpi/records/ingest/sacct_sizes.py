"""Counts and memory sizes in sacct text, and ReqMem as the whole job's request.

``sacct --units=G`` converts every number it takes for a size, counts too (ReqNodes 1 is
``0.00G``), and rounds a small size to 0 or to two decimals of a large unit: such a count is
unknown, a size rounded to 0 unknown, a coarse one read and said. ReqMem before Slurm 22.05
ends with ``n`` (per node) or ``c`` (per CPU): the whole job's request is that times the job's
nodes or CPUs — the allocated ones where the export has them, else the requested ones (s48
tester P18: ``2Gc`` with ReqCPUS 8 had been read as 2 GB) — and unknown where it has neither.
"""

from __future__ import annotations

import re
from collections import Counter

from .slurm_fields import int_or_none, parse_memory_bytes

#: A count written as a size: sacct --units=G prints ReqNodes 1 as 0.00G.
_SIZED_COUNT = re.compile(r"[0-9.]+[KMGTP]")
#: A memory size --units rounded to 0 (sacct without --units writes 0 as "0").
_ROUNDED_TO_ZERO = re.compile(r"0\.0+[KMGTP][nc]?")
#: A memory size --units wrote under 0.5 of its unit: its last decimal is over 1% of it.
_COARSE = re.compile(r"0\.[0-4]\d*[KMGTP][nc]?")

#: A ReqMem number without a unit.
UNITLESS_REQMEM = ("ReqMem without a unit (sacct always writes one, e.g. 1000M): mem_req_gb "
                   "NA")
#: A per-node or per-CPU ReqMem whose job has no node or CPU count in the export.
UNCOUNTED_REQMEM = ("ReqMem per node ('n') or per CPU ('c') with no node or CPU count to "
                    "multiply it by: mem_req_gb NA; export with NNodes and NCPUS (or ReqNodes "
                    "and ReqCPUS)")


class SizeReader:
    """One job's counts and sizes, remembering which columns ``--units`` spoilt so that each
    is said once (:meth:`say`)."""

    def __init__(self) -> None:
        self.sized: set[str] = set()  # count columns sacct --units wrote as sizes
        self.rounded: set[str] = set()  # memory columns --units rounded to 0
        self.coarse: set[str] = set()  # memory columns --units rounded to under 2 digits

    def count(self, row: dict, column: str) -> int | None:
        """A count column's value; one written as a size (sacct --units) is unknown (None):
        0.00G cannot be turned back into a count."""
        text = row.get(column)
        if text and _SIZED_COUNT.fullmatch(text.strip()):
            self.sized.add(column)
            return None
        return int_or_none(text)

    def memory(self, text: str | None, bare: int | None, column: str) -> float | None:
        """:func:`parse_memory_bytes`, but a size --units rounded to 0 (``0.00G``) is unknown
        (None): the job used some memory, under 0.005 G. One rounded to a coarse value
        (``0.01T``, anything from 5 to 15 GB) is read, and said."""
        if text and _ROUNDED_TO_ZERO.fullmatch(text.strip()):
            self.rounded.add(column)
            return None
        if text and _COARSE.fullmatch(text.strip()):
            self.coarse.add(column)
        return parse_memory_bytes(text, bare)

    def mem_req_gb(self, text: str | None, nodes: int | None,
                   cores: int | None) -> tuple[float | None, str | None]:
        """ReqMem -> (GB for the whole job, a note on why it is unknown or None).

        22.05 prints the job total with no suffix; older versions append ``n`` (per node,
        times ``nodes``) or ``c`` (per CPU, times ``cores``), unknown where that count is.
        sacct writes ReqMem with its unit, ``--noconvert`` too; a number without one (a
        hand-made export) could be MiB or bytes, so it is not read."""
        if not text or not text.strip():
            return None, None
        try:
            b = self.memory(text, None, "ReqMem")
            if b is None:
                return None, None
        except ValueError:
            if not re.fullmatch(r"[0-9.]+[nc]?", text.strip()):
                raise
            return None, UNITLESS_REQMEM
        per = {"n": nodes, "c": cores}
        suffix = text.strip()[-1]
        if suffix in per:
            if not per[suffix]:  # never one node's or CPU's share taken for the job's
                return None, UNCOUNTED_REQMEM
            b *= per[suffix]
        return b / 1024**2 / 1000, None  # MB (Slurm's MiB) -> GB, as cluster.py does for RealMemory

    def say(self, notes: Counter) -> None:
        """The columns ``--units`` spoilt in this job, one note each."""
        for column in sorted(self.sized):
            notes[f"{column} written as a size (sacct --units converts it too): read as "
                  "unknown; export without --units"] += 1
        for column in sorted(self.rounded):
            notes[f"{column} 0.00 in sacct --units' unit (a small value rounded to 0): read "
                  "as unknown, not 0; export without --units for exact values"] += 1
        for column in sorted(self.coarse):
            notes[f"{column} rounded by sacct --units to 2 decimals of a large unit "
                  "(8000M is written 0.01T, read as 10.5 GB): off by up to half; export "
                  "without --units for exact values"] += 1
