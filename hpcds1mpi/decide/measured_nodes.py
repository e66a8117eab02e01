"""A user's program is not picked on more nodes than it was ever measured on (s28 tester T6).

A registered kernel has a work model (its flops, bytes and messages per rank come from the
size and the layout), so the trees' prediction at a node count no run had follows that model.
A user's program (a sweep of ``--program`` / ``--command``, or a job-log label) has none: its
features at two nodes are its one-node features with more ranks and cores, and the trees'
answer there is whatever those features meant for other rows. CP2K measured on one node only
(2 ranks: 8.36 s) was recommended 2 nodes x 1 rank at 3.59 s, faster than every layout it ran.

So System 1 ranks such a candidate after every candidate on a node count the program was
measured at: it is picked only where none of those is feasible, or where the caller named it
(``/v1/predict``, ``advise`` of a script that asks for it: they score the layout given, not a
ranking). Where the rule moved a candidate the model put first, the answer says so and how to
measure it (:func:`unmeasured_nodes_note`). Between measured node counts is interpolation and
stays ranked as predicted (as :func:`~hpcds1mpi.decide.scores.unmeasured_rows` has it).
"""

from __future__ import annotations

import numpy as np

#: The candidate column: the most nodes the candidate's program was measured on, 0 for a
#: kernel (or a workload whose levels are unknown), which the rule leaves alone.
MOST_MEASURED_NODES = "program_nodes_measured"


def most_measured_nodes(count: int, levels) -> np.ndarray:
    """``(count,)`` the :data:`MOST_MEASURED_NODES` column of ``count`` candidates of one
    workload whose :class:`~hpcds1mpi.surrogates.levels.MeasuredLevels` are ``levels``."""
    most = max(levels.nodes) if levels is not None and levels.external and levels.nodes else 0
    return np.full(count, int(most), dtype=np.int64)


def beyond_measured_nodes(cols: dict, rows: np.ndarray) -> np.ndarray:
    """``(len(rows),)`` True where candidate ``rows`` of a user's program are on more nodes
    than it was ever measured on."""
    most = cols.get(MOST_MEASURED_NODES)
    if most is None:
        return np.zeros(len(rows), dtype=bool)
    return (most[rows] > 0) & (cols["nodes"][rows] > most[rows])


def measured_first(cols: dict, feasible: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(first, after)``: the ``feasible`` rows System 1 ranks first, and those it ranks only
    after them (on node counts their program was never measured on; empty when nothing else is
    feasible, so such a row can still be picked)."""
    beyond = beyond_measured_nodes(cols, feasible)
    if not beyond.any() or beyond.all():
        return feasible, feasible[:0]
    return feasible[~beyond], feasible[beyond]


def unmeasured_nodes_note(cols: dict, workload: str, pick: int, after: np.ndarray,
                          values: np.ndarray) -> str:
    """One line when a row in ``after`` (see :func:`measured_first`) is predicted better than
    the ``pick`` by the objective's ``values`` (lower is better), else ``""``."""
    if not len(after):
        return ""
    best = int(after[np.argmin(values[after])])
    if not values[best] < values[pick]:
        return ""
    nodes, most = int(cols["nodes"][best]), int(cols[MOST_MEASURED_NODES][best])
    ranks, threads = int(cols["ranks_per_node"][best]), int(cols["threads"][best])
    return (f"{nodes} nodes was never measured for {workload} (at most {most} "
            f"node{'s' if most > 1 else ''}): "
            f"{nodes} nodes x {ranks} rank{'s' if ranks > 1 else ''} x {threads} "
            f"thread{'s' if threads > 1 else ''} is predicted {_predicted(cols, best)} against "
            f"the pick's {_predicted(cols, pick)}, an extrapolation no run of it supports, so "
            f"it is not picked: measure it (sweep --nodes {most},{nodes})")


def _predicted(cols: dict, row: int) -> str:
    return f"{float(cols['runtime_s'][row]):.3g} s, {float(cols['energy_j'][row]):.3g} J"


__all__ = ["MOST_MEASURED_NODES", "beyond_measured_nodes", "measured_first",
           "most_measured_nodes", "unmeasured_nodes_note"]
