"""The least energy a job can take: what its nodes draw idle while it runs.

System 1's energy is modelled (a surrogate trained on modelled or measured rows); one that
learned from few node counts can predict less for many nodes than those nodes draw doing
nothing. :func:`floor_energy` raises every predicted energy to ``nodes x idle W per node x
runtime``; ``recommend`` says when its pick sits on that floor.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.cluster import Partition


def idle_watts(part: "Partition") -> float:
    """A node's idle draw, W: its own and its GPUs' (a node's GPUs idle when the job leaves them
    unused). The cluster file's ``idle_watts_node`` / ``idle_watts_gpu``, else the default
    figures modelled rows were computed with (``Partition.power_figures``)."""
    f = part.power_figures()
    return float(f["idle_watts_node"] + part.gpus_per_node * f["idle_watts_gpu"])


def floor_energy(cols: dict, partitions: Sequence["Partition"]) -> None:
    """Never less energy than the nodes draw idle: ``energy >= nodes x`` :func:`idle_watts`
    ``x runtime`` for the median and both bounds, in place on System 1's columns."""
    watts = [(p.name, idle_watts(p)) for p in partitions]
    names = cols["partition"]
    idle = np.full(len(names), watts[0][1] if watts else 0.0)
    for name, w in watts[1:]:  # one partition (the common case): no comparison
        idle[names == name] = w
    draw = idle * cols["nodes"]  # W while the job runs, at the least
    for energy, runtime in (("energy_j", "runtime_s"), ("energy_lo", "runtime_lo"),
                            ("energy_hi", "runtime_hi")):
        cols[energy] = np.maximum(cols[energy], draw * cols[runtime])
