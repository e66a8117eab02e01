"""A Fortran program's bare stop code, read with the line the program stopped after.

gfortran writes ``ERROR STOP 2`` / ``STOP 2`` on stderr: the exit code again, no reason
(:data:`~hpcds1mpi.measure.program_lines.GENERIC_LINE` sets it aside, so a program's own
statement such as pw.x's "convergence NOT achieved" wins). Where the program stated no error,
though, the reason had become the launcher's text under it, Open MPI's "MPI_ABORT was invoked
on rank 0 in communicator MPI_COMM_WORLD with errorcode 2." (OpenCoarrays ends an ``ERROR
STOP`` in ``MPI_Abort``), and the program's last line, ``usage: heat N``, was lost (s32 tester
X5). :func:`stop_reason` gives the program's lines: its last line before the stop code and
the stop code ("usage: heat N; ERROR STOP 2").
"""

from __future__ import annotations

import re

#: A bare stop code, as gfortran and OpenCoarrays write it ("ERROR STOP 2", "STOP 1", "ERROR
#: STOP"); a stop with a message ("ERROR STOP matrix is singular") is a specific line instead.
STOP_CODE = re.compile(r"^(?:ERROR )?STOP(?: -?\d+)?$", re.IGNORECASE)


def stop_reason(streams: list[list[str]], kept: list[list[str]]) -> str:
    """"<the program's last line before it>; <stop code>" for the last bare stop code in
    ``streams`` (each stream's stripped lines, rank tags removed; stderr first), "" when
    there is none. The line before it is the program's last line above it in its stream
    (``kept``: each stream's :func:`~hpcds1mpi.measure.program_lines.program_lines`), else
    the other streams' last (stdout's, where a program writes its usage)."""
    for n, lines in enumerate(streams):
        stop = next((i for i in range(len(lines) - 1, -1, -1) if STOP_CODE.match(lines[i])),
                    None)
        if stop is None:
            continue
        before = [ln for ln in kept[n][:stop] if ln] or \
            [ln for m, other in enumerate(kept) if m != n for ln in other if ln]
        return f"{before[-1]}; {lines[stop]}" if before else lines[stop]
    return ""
