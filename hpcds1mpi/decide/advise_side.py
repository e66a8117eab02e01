"""System 1's numbers for one side of ``advise`` (the script's layout, or the recommended one).

A layout the recommendation's grid holds is read from the grid's own row, so that the asked
layout and the recommended one are judged on one table: a candidate at a level never measured
is floored there by the measured rows beside it (:mod:`~hpcds1mpi.decide.scaling_floor`),
which a table of that one candidate does not have (s33: the asked 2-node layout read 14.5 ms
alone, 15.7 ms in the grid). A layout the grid lacks is scored beside the grid's measured rows,
as ``predict`` scores it (:mod:`~hpcds1mpi.decide.named_scores`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.cluster import Partition
    from hpcds1mpi.config import Configuration

#: The predictions a side takes from its row.
SIDE_COLUMNS = ("runtime_s", "runtime_lo", "runtime_hi", "energy_j", "energy_lo", "energy_hi",
                "fail_prob")


def unmeasured(bundle, workload: str, config: "Configuration") -> list[str]:
    """The parts of ``config`` at levels ``workload`` was never measured at (predictions
    extrapolate there), worded as a recommendation's extrapolated pick
    (:func:`~hpcds1mpi.decide.scores.unmeasured_lines`)."""
    from hpcds1mpi.decide.bundle_cache import measured_levels
    from hpcds1mpi.decide.scores import unmeasured_lines

    return unmeasured_lines(config.as_dict(), measured_levels(bundle).get(workload))


def grid_row(cols: dict | None, partition: str, config: "Configuration") -> int | None:
    """The row of ``cols`` (a recommendation's candidate columns) that is ``config`` on
    ``partition``; None where there is none."""
    if not cols or "partition" not in cols:
        return None
    match = np.asarray(cols["partition"]) == partition
    for key, value in config.as_dict().items():
        if key not in cols:
            return None
        match &= np.asarray(cols[key]) == value
    rows = np.flatnonzero(match)
    return int(rows[0]) if len(rows) else None


def predict_side(bundle, workload: str, size: int, partition: "Partition",
                 config: "Configuration", side, grid: dict | None = None):
    """Fill ``side`` with System 1's predictions for ``config``: its row of ``grid`` (the
    recommendation's columns for this workload and size) where it has one, else scored as
    ``predict`` scores it."""
    at = grid_row(grid, partition.name, config)
    if at is not None:
        row = {key: grid[key][at] for key in (*SIDE_COLUMNS, "reason", "mem_need_mb")
               if key in grid}
    else:  # scored as predict and recommend score it (s35 tester R9)
        import pandas as pd

        from hpcds1mpi.decide.named_scores import score_named
        from hpcds1mpi.kernels import offered

        frame = pd.DataFrame([{
            "workload": workload, "size": int(size), "nodes": config.nodes,
            "ranks_per_node": config.ranks_per_node, "threads": config.threads,
            "device": config.device, "precision": config.precision,
            "partition": partition.name, "cores_per_node": partition.cores_per_node,
            "memory_gb": float(partition.memory_gb), "gpus_per_node": partition.gpus_per_node}])
        row = {key: values[0] for key, values in score_named(
            bundle, workload, size, partition, frame,
            uses_threads=offered(workload, partition)[0]).items()}
    for key in SIDE_COLUMNS:
        setattr(side, key, float(row[key]))
    from hpcds1mpi.decide.advise_memory import host_need_per_node

    side.mem_need_mib = host_need_per_node(row.get("mem_need_mb", float("nan")), config.device,
                                           config.ranks_per_node)  # s40 tester D12
    side.problem = {"fail": "predicted to fail", "memory": "predicted to run out of memory"
                    }.get(str(row.get("reason", "")), "")
    side.unmeasured = unmeasured(bundle, workload, config)
    if side.problem:  # its time is its own failed runs', never the runs beside it (s43 L2)
        from hpcds1mpi.decide.failed_time import measured_failure_time

        side.failed_after_s = measured_failure_time(
            bundle, workload, size, partition.name, config)
    return side
