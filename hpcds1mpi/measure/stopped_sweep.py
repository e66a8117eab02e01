"""A program sweep stopped while a launch is in flight (SIGINT, SIGTERM, a launch that ends the
sweep): the run in flight is recorded ``interrupted`` and the sweep ends in one line."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from hpcds1mpi.errors import SweepInterrupted

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.measure.plan import RunSpec


class Terminated(BaseException):
    """Raised in the main thread by the SIGTERM handler (a BaseException: passes every
    ``except Exception``)."""


def on_sigterm(signum, frame):
    """The SIGTERM handler a sweep installs: stop it as Ctrl-C would."""
    raise Terminated()


def stop_interrupted(writer, row: dict, spec: "RunSpec", out: str, cause: str, effect: str,
                     headline: str, again: str = "rerun with --resume") -> None:
    """Record the run in flight ``interrupted`` (``cause`` while it ran; ``effect``) and end
    the sweep with one line: the run says nothing of the program and is never learnt.

    Raises:
        SweepInterrupted: always.
    """
    row.update(status="interrupted", finished_at=time.time(),
               error=f"{cause} while this ran; {effect}; --resume runs it again")
    writer.record(row, {})
    kept = sum(r["status"] != "interrupted" for r in writer.store.runs.values())
    raise SweepInterrupted(
        f"{headline}: {spec.workload} size {spec.size} {spec.config.label()} is recorded "
        f"interrupted; {kept} finished runs are kept in {out}; {again}") from None
