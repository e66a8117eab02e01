"""Which runtime a program's model learned, in words: the line ``recommend`` prints
(:func:`runtime_line`) and the few words a conflict between two sources names
(:func:`runtime_words`). The sources are the telemetry's ``launch`` ``runtime`` entries
(``measure/readings.py`` writes them), kept per program in
:attr:`hpcds1mpi.surrogates.levels.MeasuredLevels.runtime`."""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from .levels import MeasuredLevels

#: ``runtime`` of a program whose rows do not say (telemetry or a bundle older than it).
UNKNOWN = "unknown"
#: How ``runtime`` starts for a program timed by its own output.
OWN_TIME = "program's own time (--time-regex "


def runtime_words(source: str) -> str:
    """A runtime source in a few words, its regex shell-quoted (pasteable)."""
    from hpcds1mpi.measure.readings import WALL

    if source == WALL:
        return "the launch's wall time"
    if source.startswith(OWN_TIME):
        return f"--time-regex {shlex.quote(source[len(OWN_TIME):].removesuffix(')'))}"
    return source


def runtime_line(levels: "MeasuredLevels | None") -> str | None:
    """One line saying which runtime the model was trained on for a program (None: a kernel
    or job-log workload, whose runtime is not a choice of the sweep)."""
    if levels is None or not levels.runtime:
        return None
    from hpcds1mpi.measure.readings import WALL

    parts = []
    for source in levels.runtime.split("; "):
        if source == WALL:
            parts.append("the launch's wall time (MPI and start-up included; sweep with "
                         "--time-regex to train on the program's own time)")
        elif source.startswith("program's own time"):
            regex = source.partition("--time-regex ")[2].removesuffix(")")
            # shell-quoted, as typed to sweep: a repr doubles every backslash
            parts.append(f"the program's own reported time (--time-regex {shlex.quote(regex)})")
        elif source == UNKNOWN:
            parts.append("unknown (its telemetry or this bundle predates the record; retrain "
                         "on telemetry from this version to know)")
        else:
            parts.append(source)
    mixed = " (its telemetry files differ: mixed)" if len(parts) > 1 else ""
    return f"runtime: {'; '.join(parts)}{mixed}"
