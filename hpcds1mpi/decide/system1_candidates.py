"""System 1's candidate table: every valid configuration of a job on each partition (nodes x
ranks per node x threads x device x precision, from :func:`~hpcds1mpi.config.configuration_grid`,
kept per partition and knobs), trimmed by the user's :class:`Constraints` and the offered thread
counts and ranks per node, as plain arrays (:func:`candidate_columns`, a
:class:`~hpcds1mpi.surrogates.columns.Columns`) or as a pandas frame with categorical text
(:func:`candidate_frame`). :func:`hpcds1mpi.decide.system1.score` predicts from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

import numpy as np

from hpcds1mpi.config import DEVICES, PRECISIONS, configuration_grid
from hpcds1mpi.errors import ConfigError
from hpcds1mpi.surrogates.columns import Columns

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from hpcds1mpi.cluster import Partition


@dataclass
class Constraints:
    """User constraints: ``--max-nodes``, ``--deadline`` (s), ``--energy-budget`` (J)."""

    max_nodes: int | None = None
    deadline_s: float | None = None
    energy_budget_j: float | None = None
    devices: Sequence[str] | None = None
    precisions: Sequence[str] | None = None
    #: Thread counts and the most ranks per node offered (a program's measured levels).
    threads: Sequence[int] | None = None
    max_ranks_per_node: int | None = None


def candidate_frame(workload: str, size: int, partitions: Sequence["Partition"],
                    constraints: Constraints | None = None, uses_threads: bool = True
                    ) -> "pd.DataFrame":
    """The prediction input frame for every candidate on every partition (one row each).

    Text columns are pandas categoricals: building and comparing them costs microseconds where
    10,000 Python strings would cost milliseconds. :func:`candidate_columns` is the same
    table without pandas (what :func:`~.system1.score` builds).
    """
    import pandas as pd

    data, used = _candidate_arrays(workload, size, partitions, constraints, uses_threads)
    data["workload"] = pd.Categorical.from_codes(data["workload"], [workload])
    data["device"] = pd.Categorical.from_codes(data["device"], list(DEVICES))
    data["precision"] = pd.Categorical.from_codes(data["precision"], list(PRECISIONS))
    data["partition"] = pd.Categorical.from_codes(data["partition"], used)
    return pd.DataFrame({k: data[k] for k in _CANDIDATE_ORDER})


def candidate_columns(workload: str, size: int, partitions: Sequence["Partition"],
                      constraints: Constraints | None = None, uses_threads: bool = True
                      ) -> Columns:
    """:func:`candidate_frame`'s table as plain arrays (text as ``<U`` arrays)."""
    data, used = _candidate_arrays(workload, size, partitions, constraints, uses_threads)
    codes = {}
    for col, names in (("workload", [workload]), ("device", list(DEVICES)),
                       ("precision", list(PRECISIONS)), ("partition", used)):
        codes[col] = (data[col], names)
        data[col] = np.asarray(names, dtype=str)[data[col]]
    return Columns({k: data[k] for k in _CANDIDATE_ORDER}, codes)


_CANDIDATE_ORDER = ("workload", "size", "nodes", "ranks_per_node", "threads", "device",
                    "precision", "partition", "cores_per_node", "memory_gb", "gpus_per_node")


def _candidate_arrays(workload: str, size: int, partitions: Sequence["Partition"],
                      constraints: Constraints | None, uses_threads: bool
                      ) -> tuple[dict, list[str]]:
    """The candidate columns, text as codes (``workload`` into ``[workload]``, ``device``
    and ``precision`` into DEVICES / PRECISIONS, ``partition`` into the returned names)."""
    constraints = constraints or Constraints()
    blocks, used = [], []
    for part in partitions:
        devices = constraints.devices
        if devices is not None and part.gpus_per_node < 1:
            devices = [d for d in devices if d != "gpu"]
            if not devices:
                continue
        grid = _grid_of(part, constraints.max_nodes, devices, constraints.precisions,
                        uses_threads)
        grid = _within_levels(grid, constraints)
        n = len(grid["nodes"])
        if part.name not in used:
            used.append(part.name)
        grid["partition_code"] = np.full(n, used.index(part.name), dtype=np.int16)
        grid["cores_per_node"] = np.full(n, part.cores_per_node, dtype=np.int64)
        grid["memory_gb"] = np.full(n, float(part.memory_gb))
        grid["gpus_per_node"] = np.full(n, part.gpus_per_node, dtype=np.int64)
        blocks.append(grid)
    if not blocks:
        raise ConfigError("no partition can run the requested devices; check --device/--partition")
    columns = {k: np.concatenate([b[k] for b in blocks]) for k in blocks[0]}
    n = len(columns["nodes"])
    data = {
        "workload": np.zeros(n, dtype=np.int8),
        "size": np.full(n, int(size), dtype=np.int64),
        "device": columns.pop("device_code"),
        "precision": columns.pop("precision_code"),
        "partition": columns.pop("partition_code"),
        **columns,
    }
    return data, used


#: configuration_grid's answers kept (a service asks for the same few partitions' grids).
_GRIDS: dict = {}


def _grid_of(part, max_nodes, devices, precisions, uses_threads: bool) -> dict:
    """``configuration_grid``, kept per partition (all its fields) and knobs: a new dict of
    the kept arrays, which are read-only (every use above copies or masks them)."""
    key = (repr(part), max_nodes, None if devices is None else tuple(devices),
           None if precisions is None else tuple(precisions), bool(uses_threads))
    got = _GRIDS.get(key)
    if got is None:
        got = configuration_grid(part, max_nodes=max_nodes, devices=devices,
                                 precisions=precisions, uses_threads=uses_threads)
        for v in got.values():
            v.flags.writeable = False
        if len(_GRIDS) >= 256:
            _GRIDS.clear()
        _GRIDS[key] = got
    return dict(got)


def _within_levels(grid: dict, constraints: Constraints) -> dict:
    """The grid without thread counts and ranks per node the constraints leave out."""
    keep = None
    if constraints.threads is not None:
        keep = np.isin(grid["threads"], np.asarray(list(constraints.threads), dtype=np.int64))
    if constraints.max_ranks_per_node is not None:
        fits = grid["ranks_per_node"] <= int(constraints.max_ranks_per_node)
        keep = fits if keep is None else keep & fits
    return grid if keep is None else {k: v[keep] for k, v in grid.items()}
