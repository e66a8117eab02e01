"""One workload's training rows, selected once per bundle for every reader of its runs.

What was measured of a workload is read in several places: System 1's measured-here and
own-failure masks (:func:`~.measured_here.workload_runs`), the layouts it ran ok at and those
that never did (:mod:`.unfit_measured`), the layouts every run of which failed
(:mod:`.failed_layouts`) and a failing layout's measured time (:mod:`.failed_time`). Each had
compared the bundle's whole ``workload`` column with the name itself; :func:`workload_rows`
does it once per bundle and workload, and each reader keeps its own status and partition rules
(they differ on purpose).
"""

from __future__ import annotations

import numpy as np

#: The training columns a reader of a workload's runs may ask for (those the bundle has).
KEPT = ("status", "size", "partition", "nodes", "ranks_per_node", "threads", "device",
        "precision", "runtime_s", "error")


def workload_rows(bundle, workload: str) -> dict[str, np.ndarray] | None:
    """Column -> ``(n,)`` read-only array of ``workload``'s training rows (the :data:`KEPT`
    columns the bundle has, in the bundle's row order); None where the bundle keeps no
    training rows or they name no workload. A column the bundle lacks is absent: its reader
    raises ``KeyError`` as it did on the whole table."""
    from hpcds1mpi.decide import bundle_cache

    return bundle_cache.memo(bundle, ("workload_rows", str(workload)),
                             lambda: _select(bundle, str(workload)))


def _select(bundle, workload: str) -> dict[str, np.ndarray] | None:
    """:func:`workload_rows`, selected from the bundle's training rows."""
    from hpcds1mpi.decide import bundle_cache

    try:
        rows = bundle_cache.training_columns(bundle)
        ours = np.flatnonzero(np.asarray(rows["workload"]).astype(str) == workload)
    except (AttributeError, KeyError, TypeError):  # no training rows, or none with outcomes
        return None
    picked = {}
    for name in KEPT:
        if name in rows:
            picked[name] = np.asarray(rows[name])[ours]
            picked[name].setflags(write=False)  # shared by every caller
    return picked
