"""The measured layouts every run of which failed, for recommend's ``left_out`` list.

Such a layout is never offered, yet recommend's list did not name it: GetDP's 1 rank, failed at
all 4 sizes measured (exit 1 without MPI_Finalize), was simply missing beside "fp32: never
measured", while advise said "its runs failed at every one of the 4 sizes measured" (s43 tester
L3). :func:`every_run_failed_lines` gives one line per such layout, as advise says it.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

#: The parts of a layout, with the words a line names them by.
_PARTS = (("nodes", "nodes"), ("ranks_per_node", "ranks per node"), ("threads", "threads"),
          ("device", "device"), ("precision", "precision"))


def every_run_failed_lines(bundle, workload: str, partition: str) -> list[str]:
    """One line per layout of ``workload`` on ``partition`` whose measured runs all failed
    ("ranks per node 1: every run failed (4 of 4, at sizes 25-100): <its commonest reason>"),
    named by the parts in which the measured layouts differ; [] where there is none or the
    bundle holds no training rows. Read once per bundle, workload and partition: every
    recommend with a pick asks it."""
    from hpcds1mpi.decide import bundle_cache

    return list(bundle_cache.memo(bundle, ("every_run_failed", workload, partition),
                                  lambda: _failed_lines(bundle, workload, partition)))


def _failed_lines(bundle, workload: str, partition: str) -> list[str]:
    """:func:`every_run_failed_lines`, read from the bundle's training rows."""
    from hpcds1mpi.config import FAILED_TO_RUN, OK
    from hpcds1mpi.decide.workload_rows import workload_rows
    from hpcds1mpi.measure.printable import clipped, printable

    rows = workload_rows(bundle, workload)
    if rows is None:
        return []
    try:
        on = rows["partition"].astype(str) == partition
        parts = {key: rows[key][on] for key, _ in _PARTS}
        status = rows["status"].astype(str)[on]
        sizes = np.asarray(rows["size"], dtype=float)[on]
        errors = rows["error"].astype(str)[on] if "error" in rows \
            else np.full(len(status), "", dtype=object)
    except KeyError:  # training rows without outcomes
        return []
    layouts = list(zip(*(parts[key].tolist() for key, _ in _PARTS)))
    differing = [i for i in range(len(_PARTS)) if len({lay[i] for lay in layouts}) > 1] or \
        list(range(len(_PARTS)))
    lines = []
    for layout in sorted(set(layouts), key=str):
        mine = np.array([lay == layout for lay in layouts], dtype=bool)
        failed = mine & np.isin(status, sorted(FAILED_TO_RUN))
        if not failed.any() or (mine & (status == OK)).any():
            continue
        ran = mine & (failed | (status == OK))
        at = np.unique(sizes[failed])
        span = f"size {at[0]:g}" if len(at) == 1 else f"sizes {at[0]:g}-{at[-1]:g}"
        name = ", ".join(f"{_PARTS[i][1]} {layout[i]}" for i in differing)
        reason = Counter(e for e in errors[failed].tolist() if e).most_common(1)
        said = f": {clipped(printable(reason[0][0]), 160)}" if reason else ""
        lines.append(f"{name}: every run failed ({int(failed.sum())} of {int(ran.sum())}, at "
                     f"{span}){said}")
    return lines
