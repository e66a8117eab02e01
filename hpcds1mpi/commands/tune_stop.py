"""How ``tune`` stops on SIGTERM or Ctrl-C: one line saying what was kept and to rerun tune,
and the trial launch in flight ended with it (s33 tester C6: a silent exit 143, its
``mpiexec ... sweep`` still writing a run after tune was gone)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable

#: What a stopped tune leaves: the trials' runs are in --out, and tune has no --resume.
KEPT = "the runs measured so far are kept there; rerun tune with the same --out to continue"


def stop_cleanly(out: str) -> Callable[[], None]:
    """From now on SIGTERM ends tune with one line (exit 1), Ctrl-C with the same line (exit
    130), each after ending tune's children; returns what undoes it (for click's
    ``call_on_close``)."""
    from hpcds1mpi.runtime.processes import children_end_first
    from hpcds1mpi.writers import catch_sigterm, uncatch_sigterm

    stack = contextlib.ExitStack()
    catch_sigterm(out, "tune's telemetry", KEPT)
    stack.callback(uncatch_sigterm)
    stack.enter_context(children_end_first())
    return stack.close
