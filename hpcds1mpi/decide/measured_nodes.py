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

A kernel's work model carries its prediction only so far: the shipped bundle, measured on one
node, picked stencil 256 on 4096 nodes at 0.0448 ms where one node measured 77.6 ms, a 1,730x
speed-up no run supports (s34 tester S1). So a kernel's candidates on more than
:data:`NODE_REACH` times its most measured node count are ranked after the others the same way,
and where the model put one first, :func:`beyond_reach_line` says so for the guard's verdict
(at most confirm: measure at more nodes first).
"""

from __future__ import annotations

import numpy as np

#: The candidate column: the most nodes the candidate's program was measured on, 0 for a
#: kernel (or a workload whose levels are unknown), which the rule leaves alone.
MOST_MEASURED_NODES = "program_nodes_measured"
#: The candidate column: the most nodes the candidate's workload (a kernel's too) was measured
#: on, 0 where its levels are unknown.
NODES_MEASURED = "workload_nodes_measured"
#: How many times its most measured node count a kernel is picked on at most (the guard's size
#: rule alike: up to 2x beyond the measured sizes asks to confirm, further escalates).
NODE_REACH = 2


def most_measured_nodes(count: int, levels) -> np.ndarray:
    """``(count,)`` the :data:`MOST_MEASURED_NODES` column of ``count`` candidates of one
    workload whose :class:`~hpcds1mpi.surrogates.levels.MeasuredLevels` are ``levels``."""
    most = max(levels.nodes) if levels is not None and levels.external and levels.nodes else 0
    return np.full(count, int(most), dtype=np.int64)


def nodes_measured(count: int, levels) -> np.ndarray:
    """``(count,)`` the :data:`NODES_MEASURED` column of ``count`` candidates of one workload
    (kernel or program) whose measured levels are ``levels``."""
    most = max(levels.nodes) if levels is not None and levels.nodes else 0
    return np.full(count, int(most), dtype=np.int64)


def reach(cols: dict, rows: np.ndarray) -> np.ndarray:
    """``(len(rows),)`` the most nodes System 1 ranks candidate ``rows`` as predicted at: a
    program's most measured, a kernel's :data:`NODE_REACH` times its; 0: no bound known."""
    none = np.zeros(len(rows), dtype=np.int64)
    program, measured = cols.get(MOST_MEASURED_NODES), cols.get(NODES_MEASURED)
    program = none if program is None else program[rows]
    kernel = none if measured is None else measured[rows] * NODE_REACH
    return np.where(program > 0, program, kernel)


def beyond_measured_nodes(cols: dict, rows: np.ndarray) -> np.ndarray:
    """``(len(rows),)`` True where candidate ``rows`` are on more nodes than their
    :func:`reach`: a user's program beyond the most it was measured on, a kernel beyond
    :data:`NODE_REACH` times its."""
    most = reach(cols, rows)
    return (most > 0) & (cols["nodes"][rows] > most)


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
    layout = (f"{nodes} nodes x {ranks} rank{'s' if ranks > 1 else ''} x {threads} "
              f"thread{'s' if threads > 1 else ''} is predicted {_predicted(cols, best)} "
              f"against the pick's {_predicted(cols, pick)}")
    if most <= 0:  # a kernel beyond its reach (s34 tester S1)
        return f"{layout}, but {beyond_reach_line(cols, workload, best)}"
    return (f"{nodes} nodes was never measured for {workload} (at most {most} "
            f"node{'s' if most > 1 else ''}): {layout}, an extrapolation no run of it "
            f"supports, so it is not picked: measure it (sweep --nodes {most},{nodes})")


def held_back_line(cols: dict, workload: str, pick: int, after: np.ndarray,
                   values: np.ndarray) -> str:
    """:func:`beyond_reach_line` of the best of ``after`` where it is a kernel's candidate
    predicted better than the ``pick`` by ``values`` (lower is better), else ``""``: the
    verdict's reason (:func:`confirm_held_back`)."""
    if not len(after):
        return ""
    best = int(after[np.argmin(values[after])])
    program = cols.get(MOST_MEASURED_NODES)
    if not values[best] < values[pick] or (program is not None and program[best] > 0):
        return ""
    return beyond_reach_line(cols, workload, best)


def pick_beyond_reach_line(cols: dict, workload: str, pick: int) -> str:
    """:func:`beyond_reach_line` of the ``pick`` itself where it is a kernel's candidate beyond
    its reach, else ``""``: where nothing within reach is feasible (a deadline only a far
    extrapolation meets), the pick lies beyond and must say so (s34 review: stencil 256 with a
    50-ms deadline picked 2,048 nodes from runs on one, without a word)."""
    program = cols.get(MOST_MEASURED_NODES)
    rows = np.array([pick])
    if (program is not None and program[pick] > 0) or NODES_MEASURED not in cols \
            or not beyond_measured_nodes(cols, rows)[0]:
        return ""
    return beyond_reach_line(cols, workload, pick).replace(
        "so it is not picked", "picked only because nothing within reach meets the request")


def confirm_held_back(verdict, choice) -> None:
    """In place: ``verdict`` (a guard :class:`~hpcds1mpi.decide.guard.Verdict`) held at
    ``confirm`` at most, with ``choice``'s :attr:`held_back` line as a reason, where System 1
    (``choice``, or None) held back a candidate the model put first beyond the measured nodes'
    reach: no "auto" for a pick the model itself thinks slower (s34 tester S1). Not escalated:
    the pick within reach is measured or near it, and a calibration measures few nodes."""
    line = getattr(choice, "held_back", "") if choice is not None else ""
    if not line:
        return
    verdict.checks["measured_nodes"] = "confirm"
    if verdict.verdict == "auto":
        verdict.verdict = "confirm"
    verdict.reasons.append(line)


def beyond_reach_line(cols: dict, workload: str, row: int) -> str:
    """Why candidate ``row``, a kernel's on more than :data:`NODE_REACH` times the most nodes
    it was measured on, is no prediction to act on, and how to measure more nodes first."""
    nodes, most = int(cols["nodes"][row]), int(cols[NODES_MEASURED][row])
    steps = ",".join(str(most * 2 ** k) for k in range(3))
    return (f"{workload} was measured on at most {most} node{'s' if most > 1 else ''} and "
            f"{nodes} nodes is more than {NODE_REACH}x beyond, an extrapolation no run "
            f"supports, so it is not picked: measure at more nodes first (sweep --kernel "
            f"{workload} --nodes {steps} in an allocation of {most * 4} nodes)")


def _predicted(cols: dict, row: int) -> str:
    return f"{float(cols['runtime_s'][row]):.3g} s, {float(cols['energy_j'][row]):.3g} J"


__all__ = ["MOST_MEASURED_NODES", "NODES_MEASURED", "NODE_REACH", "beyond_measured_nodes",
           "beyond_reach_line", "confirm_held_back", "held_back_line", "measured_first",
           "most_measured_nodes", "nodes_measured", "pick_beyond_reach_line", "reach",
           "unmeasured_nodes_note"]
