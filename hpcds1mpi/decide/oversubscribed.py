"""Measured layouts with more ranks x threads than cores, which recommend never offers.

System 1's grid keeps ranks per node x threads within a node's cores (inside an allocation,
its share of them: :func:`hpcds1mpi.config.configuration_grid`), so a sweep's oversubscribed
layouts are never offered, even where they ran faster than the pick at the size asked:
crashy 800 ran 4 ranks x 1 thread on a 2-core node in 104 ms, its pick 1 x 1 211 ms, and the
answer said nothing (s39 tester B8). :func:`oversubscribed_line` is the one line recommend
says of them.
"""

from __future__ import annotations

import numpy as np

#: The most such layouts named on the line (fastest first).
NAMED = 3


def oversubscribed_line(bundle, workload: str, size: float, partition, pick_runtime_s: float,
                        threads_offered=None) -> str:
    """One line naming the layouts of ``workload`` measured ok at ``size`` on ``partition``'s
    hardware with more ranks x threads than the cores a job may use there (inside an
    allocation its share, the count the grid offers up to: s39 review, a 4 x 1 faster than the
    pick in an allocation of 2 of 4 cores had been neither offered nor named) and a median
    runtime below the pick's ``pick_runtime_s``; ``""`` when there is none (or no training rows
    to read). ``threads_offered`` (the offer's thread counts; None: any): a layout at another
    count is not named, its time being noise (a program that ignored its threads, s41 A3)."""
    from hpcds1mpi.config import OK
    from hpcds1mpi.decide import bundle_cache
    from hpcds1mpi.decide.measured_here import layout_text
    from hpcds1mpi.decide.recommendation import format_time
    from hpcds1mpi.decide.trained_hardware import measured_partition

    trained = measured_partition(bundle, partition)
    if trained is None or not np.isfinite(pick_runtime_s):
        return ""
    try:
        rows = bundle_cache.training_columns(bundle)
        col = {c: np.asarray(rows[c]) for c in ("workload", "size", "partition", "status",
                                                "nodes", "ranks_per_node", "threads",
                                                "device", "precision", "runtime_s")}
    except (AttributeError, KeyError):  # no training rows kept
        return ""
    cores = partition.usable_cores_per_node  # as configuration_grid caps what it offers
    ranks, threads = col["ranks_per_node"].astype(int), col["threads"].astype(int)
    runtime = col["runtime_s"].astype(float)
    on = ((col["workload"].astype(str) == str(workload))
          & np.isclose(col["size"].astype(float), float(size), rtol=1e-9, atol=0.0)
          & (col["partition"].astype(str) == trained) & (col["status"].astype(str) == OK)
          & (ranks * threads > cores) & np.isfinite(runtime)
          & (np.isin(threads, list(threads_offered)) if threads_offered else True))
    layouts: dict[tuple, list[float]] = {}
    for i in np.flatnonzero(on).tolist():
        key = (int(col["nodes"][i]), int(ranks[i]), int(threads[i]), str(col["device"][i]),
               str(col["precision"][i]))
        layouts.setdefault(key, []).append(float(runtime[i]))
    faster = sorted((float(np.median(v)), k) for k, v in layouts.items()
                    if float(np.median(v)) < pick_runtime_s)
    if not faster:
        return ""
    named = [f"{layout_text(*key)} {format_time(s)}" for s, key in faster[:NAMED]]
    more = f" and {len(faster) - NAMED} more" if len(faster) > NAMED else ""
    whose = (f"the node's {cores} cores" if cores == partition.cores_per_node else
             f"the {cores} core{'s' if cores > 1 else ''} per node this allocation holds "
             f"(of the node's {partition.cores_per_node})")
    return (f"measured faster than the pick ({format_time(pick_runtime_s)}) at size {size:g} but "
            f"with more ranks x threads than {whose}, so not offered: "
            f"{'; '.join(named)}{more}")
