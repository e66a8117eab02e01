"""System 1: score every valid configuration of a job at once and pick one per objective.

For a problem (workload, size) and one or more partitions, System 1 builds the whole grid of
valid configurations (nodes x ranks per node x threads x device x precision) as arrays
(:mod:`~hpcds1mpi.decide.system1_candidates`, with the user's :class:`Constraints`), asks the
surrogate ensemble for all of them in one ``Bundle.predict`` call, removes configurations that
any ensemble member expects to fail (``fail_prob_max``; where the bundle ran the workload, its
own runs say instead: :mod:`~hpcds1mpi.decide.own_failures`) or that need more memory than the
partition can give (limits learned from out-of-memory failures; beyond the measured sizes a
kernel needs at least its declared working set: :mod:`~hpcds1mpi.decide.memory_limits`, a
program its peak grown as measured: :mod:`~hpcds1mpi.decide.memory_growth`),
applies the user's constraints, and picks per objective (energy never below the layout's
modelled draw, :mod:`~hpcds1mpi.decide.energy_floor`; which candidates are beyond the
measured levels: :func:`~hpcds1mpi.decide.scores.unmeasured_rows`):

* ``time`` — the lowest predicted median runtime;
* ``energy`` — the lowest predicted energy;
* ``edp`` — the lowest energy x runtime;
* ``balanced`` — the knee of the runtime–energy Pareto front (the front point farthest from
  the chord between its two ends, in log-normalised units).

A user's program is not picked on more nodes than it ever ran on while a measured node count
can run it (:mod:`~hpcds1mpi.decide.measured_nodes`). Its confidence combines the ensemble's
spread at the pick and the margin to the runner-up (:mod:`hpcds1mpi.decide.confidence`).

Everything here is numpy (a grid is :class:`~hpcds1mpi.surrogates.columns.Columns`); no torch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Sequence

import numpy as np

from hpcds1mpi.config import Configuration
from hpcds1mpi.decide import bundle_cache
from hpcds1mpi.decide.beyond_edge import (edge_confidence, edge_frame, edge_size, hold_to_edge,
                                          inside_size, shared_edge_answer, steepest_growth)
from hpcds1mpi.decide.confidence import ConfidenceModel, measured_best_lookup, pick_confidence
from hpcds1mpi.decide.column_arrays import column_array
from hpcds1mpi.decide.energy_floor import FLOOR_WATTS, busy_share, floor_energy, floor_watts
from hpcds1mpi.decide.measured_here import candidate_codes, measured_at
from hpcds1mpi.decide.measured_nodes import (MOST_MEASURED_NODES, NODES_MEASURED,
                                             held_back_line, measured_first,
                                             most_measured_nodes, nodes_measured,
                                             pick_beyond_reach_line, unmeasured_nodes_note)
from hpcds1mpi.decide.memory_growth import grown_need_mb
from hpcds1mpi.decide.memory_limits import (MemoryLimit, declared_need_mb, memory_need_and_limit,
                                            trained_limits)
from hpcds1mpi.decide.own_failures import FAILED_SIZES, failed_near_note, own_failures
from hpcds1mpi.decide.scaling_floor import (floor_to_perfect_scaling, layout_groups,
                                            no_unproven_speedup, scaling_note)
from hpcds1mpi.decide.scores import (UNMEASURED, Scores, neighbour_runtimes, repeat_spread,
                                     unmeasured_rows)
# Constraints and the candidate tables are importable from here too.
from hpcds1mpi.decide.system1_candidates import Constraints, candidate_columns, candidate_frame
from hpcds1mpi.decide.system1_front import knee, pareto_front_2d  # importable from here too
from hpcds1mpi.decide.timed_out import bound_by_timeouts, raise_to_timeouts, timed_out_note
from hpcds1mpi.decide.trained_hardware import (as_trained, measured_partition,
                                              trained_names)
from hpcds1mpi.decide.unmeasured_bounds import (measured_before_unmeasured, passed_over_note,
                                                widen_beyond_nodes, widen_unmeasured)
from hpcds1mpi.errors import ConfigError, ModelError
from hpcds1mpi.surrogates.columns import takes_columns
from hpcds1mpi.surrogates.neighbour_beyond import bound_beyond, one_size_note
from hpcds1mpi.surrogates.neighbour_bounds import bound_runtimes, disagreement
from hpcds1mpi.surrogates.neighbour_here import hold_to_measured
from hpcds1mpi.surrogates.repeat_spread import add_repeat_columns, cover_repeats

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from hpcds1mpi.cluster import Partition

OBJECTIVES = ("time", "energy", "edp", "balanced")
#: A configuration is excluded when any ensemble member's failure probability reaches this.
FAIL_PROB_MAX = 0.5
#: The most confidence of a pick the measured neighbouring sizes contradict: below the guard's
#: CONFIDENCE_AUTO (0.7), so such a pick is confirmed, not applied.
DOUBTED_CONFIDENCE = 0.5

# --------------------------------------------------------------------------------------------
# Scoring


#: The columns System 1 reads from a bundle's answer (mobo's reading needs them too).
PRED_COLUMNS = ("runtime_s", "runtime_lo", "runtime_hi", "energy_j", "energy_lo", "energy_hi",
                "fail_prob", "fail_prob_max", "peak_rss_mb")
#: Of those, what a bundle may lack: ``train`` leaves out the memory target where too few
#: runs measured it (programs under slurmstepd, s37 tester K4); the need is then the declared
#: one, or not judged (:func:`~hpcds1mpi.decide.memory_limits.memory_need_and_limit`).
OPTIONAL_COLUMNS = ("peak_rss_mb",)


def score(bundle, workload: str, size: int, partitions: Sequence["Partition"],
          constraints: Constraints | None = None, limits: dict[str, MemoryLimit] | None = None,
          uses_threads: bool = True, frame: "pd.DataFrame | None" = None) -> Scores:
    """Predict every candidate at once and mark which are feasible.

    Args:
        bundle: the model bundle.
        workload, size: the problem (size > 0).
        partitions: where it may run.
        constraints: user constraints.
        limits: memory limits per partition (learned when None).
        uses_threads: False when the workload cannot use threads.
        frame: a ready candidate table, Columns or DataFrame (evaluation replays measured
            configurations).

    Raises:
        ConfigError: size <= 0 or no partition.
        ModelError: the bundle's answer lacks a column or has the wrong length.
    """
    constraints = constraints or Constraints()
    if frame is None:
        frame = grid(bundle, workload, size, partitions, constraints, uses_threads)
    else:
        _check_question(size, partitions)
    return scores_from_prediction(bundle, workload, size, partitions, constraints, limits,
                                  frame, bundle.predict(model_table(bundle, frame, partitions)))


def model_table(bundle, frame, partitions: Sequence["Partition"]):
    """``frame`` as the bundle is asked about it: a partition with a trained partition's
    hardware under another name is predicted under the trained name (the name is a model
    feature; :func:`~hpcds1mpi.decide.trained_hardware.trained_names`). ``frame`` itself,
    which the answer is read from, keeps the user's names; without such a partition it is
    what is returned."""
    return as_trained(frame, trained_names(bundle, partitions))


def grid(bundle, workload: str, size: int, partitions: Sequence["Partition"],
         constraints: Constraints | None = None, uses_threads: bool = True):
    """The question's checked candidate table, the kind ``bundle`` predicts from: what
    :func:`score` predicts, and each question of ``system1_batch.score_many``.

    Raises:
        ConfigError: size <= 0, no partition, or no partition can run the devices asked.
    """
    _check_question(size, partitions)
    build = candidate_columns if takes_columns(bundle) else candidate_frame  # a stand-in
    return build(workload, int(size), partitions, constraints or Constraints(), uses_threads)


def _check_question(size, partitions) -> None:
    if not isinstance(size, (int, np.integer)) or isinstance(size, bool) or size <= 0:
        raise ConfigError(f"--size must be a positive integer, got {size!r}")
    if not partitions:
        raise ConfigError("no partition to choose from; check --cluster / --partition")


def scores_from_prediction(bundle, workload, size, partitions, constraints, limits, frame, pred
                           ) -> Scores:
    """:func:`score` once ``pred = bundle.predict(frame)`` is known (``system1_batch``)."""
    missing = [c for c in PRED_COLUMNS if c not in pred.columns and c not in OPTIONAL_COLUMNS]
    if missing or len(pred) != len(frame):
        raise ModelError(f"model answer lacks {', '.join(missing) or 'rows'}; "
                         "retrain the bundle with this version")
    cols = {c: column_array(frame, c) for c in
            ("nodes", "ranks_per_node", "threads", "device", "precision", "partition")}
    for col in PRED_COLUMNS:  # an optional column the bundle never learnt: unknown (NaN)
        cols[col] = np.asarray(pred[col], dtype=float) if col in pred.columns \
            else np.full(len(frame), np.nan)
    # Optional (bundles that recorded it): the workload's measured noise, for the confidence.
    cols["runtime_noise"] = np.asarray(pred["runtime_noise"], dtype=float) \
        if "runtime_noise" in pred.columns else np.full(len(frame), np.nan)
    # Measurements bound only the hardware they ran on (a same-named partition of other
    # hardware had been held to the 2-core machine's runtimes: s27 review B2), of its CPU and
    # generation (s38 tester K2).
    measured = neighbour_runtimes(bundle)
    same = {p.name: measured_partition(bundle, p) for p in partitions}
    around = bound_runtimes(cols, measured, workload, size, same)  # within the sizes
    bound_beyond(cols, measured, workload, size, same)  # beyond its own sizes: its edge run
    hold_to_measured(cols, measured, workload, size, same)  # at its own size: its runs (Q1)
    add_repeat_columns(cols, repeat_spread(bundle), workload, size, same)  # one run's band
    # the layout's modelled power, at its workload's measured busy share (s47 tester N1)
    cols[FLOOR_WATTS] = watts = floor_watts(
        cols, partitions, busy_share(bundle, workload, cols, partitions))
    floor_energy(cols, partitions, watts)
    levels = bundle_cache.measured_levels(bundle).get(str(workload))
    cols[UNMEASURED] = unmeasured_rows(cols, levels)  # e.g. a GPU never run: s31 tester Q5
    widen_unmeasured(cols)  # no narrower than the measured ones (s31 verifier V4)
    cols[MOST_MEASURED_NODES] = most_measured_nodes(len(cols["nodes"]), levels)
    cols[NODES_MEASURED] = nodes_measured(len(cols["nodes"]), levels)
    widen_beyond_nodes(cols)  # wider the farther beyond the measured nodes (s34 tester S1)
    codes = candidate_codes(cols)  # made once, where one of those below needs them
    # ran longer (s40 tester B12): before the rules below read the measured layouts (s47 L1)
    bound_by_timeouts(bundle, workload, size, cols, same, codes)
    layout = layout_groups(cols)  # read by both rules below, twice by the second
    floor_to_perfect_scaling(cols, layout)  # no faster than perfect scaling allows (s33 P1)
    no_unproven_speedup(cols, layout)  # nor surely faster than measured (s40 tester B9)
    if limits is None:
        limits = trained_limits(bundle, partitions)
    # beyond the measured sizes no surer than at their edge (s40 tester B2, B4)
    at_edge = _edge_answer(bundle, workload, size, partitions, constraints, limits, frame,
                           measured, cols)
    # Last: a measured candidate's shown interval holds its own repeats (s40 tester C1), and a
    # never-measured one is shown no surer (s42 review R2); the rules above, System 2 and the
    # edge read the median's interval (repeat_spread.median_interval): one run's scatter is
    # not the median's uncertainty.
    cover_repeats(cols, (widen_unmeasured, partial(no_unproven_speedup, groups=layout)))
    raise_to_timeouts(cols)  # the bound holds the final ends too
    floor_energy(cols, partitions, watts)
    measured_sizes = (getattr(bundle, "size_range", None) or {}).get(str(workload))
    # a program declares no memory model: past its sizes its peak grows as measured (J7)
    declared = grown_need_mb(cols, measured, workload, size, same, measured_sizes) \
        if levels is not None and levels.external else declared_need_mb(
            workload, size, cols["nodes"] * cols["ranks_per_node"], cols["precision"],
            measured_sizes)
    need, mem_limit = memory_need_and_limit(cols, partitions, limits, declared)
    cols["mem_need_mb"] = need
    cols["mem_limit_mb"] = mem_limit
    reason = np.full(len(need), "", dtype="<U8")  # "", fail, memory, deadline, energy
    runtime, energy = cols["runtime_s"], cols["energy_j"]
    bad_pred = ~np.isfinite(runtime) | ~np.isfinite(energy) | (runtime <= 0)
    # The workload's own runs, not other programs' sizes, say whether it fails (s39 B3).
    own_failures(bundle, workload, size, cols, same, codes)
    # A run measured ok at this very size outranks the failure classifier (s29 tester C5).
    ok_here, cols["measured_failed"] = measured_at(bundle, workload, size, cols, same, codes)
    memory = np.isfinite(need) & (need > mem_limit)
    fail = ((cols["fail_prob_max"] >= FAIL_PROB_MAX) & ~ok_here) | bad_pred \
        | (cols["measured_failed"] & ~memory)  # out of memory there: said so, not "fail"
    if constraints.deadline_s is not None:
        reason[cols["runtime_hi"] > constraints.deadline_s] = "deadline"
    if constraints.energy_budget_j is not None:
        costly = cols["energy_hi"] > constraints.energy_budget_j
        reason[costly & (reason == "")] = "energy"
    reason[memory] = "memory"
    reason[fail] = "fail"
    cols["reason"] = reason
    cols["feasible"] = ~(fail | memory) & (reason == "")
    return Scores(cols=cols, workload=workload, size=int(size), limits=limits,
                  measured_best=measured_best_lookup(bundle, partitions), neighbour_sizes=around,
                  edge=at_edge)


def _edge_answer(bundle, workload, size, partitions, constraints, limits, frame, measured,
                 cols) -> Scores | None:
    """The question's grid scored at the workload's nearest measured size where ``size`` is
    beyond them all, after widening ``cols``' intervals to it
    (:func:`~hpcds1mpi.decide.beyond_edge.hold_to_edge`); None inside the sizes. Questions
    past the same edge share it (:func:`~hpcds1mpi.decide.beyond_edge.shared_edge_answer`)."""
    edge = edge_size(bundle, workload, int(size))
    # The key reads the question's columns as they are; the grid is copied only where it is
    # scored (most questions past an edge find its answer kept: issue 20, s46).
    table = None if edge is None else edge_frame(frame, edge, copy=False)
    if table is None:
        return None
    asked = model_table(bundle, table, partitions)

    def compute():
        table = edge_frame(frame, edge)  # a copy: a kept answer's columns are frozen
        try:
            pred = bundle.predict(model_table(bundle, table, partitions))
        except ModelError:  # a caller's table without the hardware columns (mobo's reading)
            return None
        answer = scores_from_prediction(bundle, workload, edge, partitions, constraints,
                                        limits, table, pred)
        # and so no surer than between the two outermost sizes (s40 tester B7)
        answer.edge = _scored_at(bundle, workload, inside_size(measured, workload, edge),
                                 partitions, constraints, limits, frame)
        return answer

    key = (str(workload), edge, tuple(repr(p) for p in partitions), repr(constraints),
           tuple(sorted((str(k), repr(v)) for k, v in limits.items())))
    at_edge = shared_edge_answer(bundle, key, asked, compute)
    if at_edge is None:
        return None
    hold_to_edge(cols, at_edge.cols, size, edge,
                 steepest_growth(measured, workload, above=size > edge),
                 at_edge._caps if at_edge.shared else None)
    floor_energy(cols, partitions, cols[FLOOR_WATTS])  # a lower end widened: still floored
    return at_edge


def _scored_at(bundle, workload, size, partitions, constraints, limits, frame
               ) -> Scores | None:
    """``frame``'s grid scored at ``size`` (None: none, or a table it cannot be asked at)."""
    table = None if size is None else edge_frame(frame, size)
    if table is None:
        return None
    try:
        pred = bundle.predict(model_table(bundle, table, partitions))
    except ModelError:
        return None
    return scores_from_prediction(bundle, workload, size, partitions, constraints, limits,
                                  table, pred)


# --------------------------------------------------------------------------------------------
# Choosing


def objective_values(cols, objective: str) -> np.ndarray:
    """The value each candidate is ranked by (lower is better) for ``time``/``energy``/``edp``
    (``cols``: a dict of arrays or DataFrame with ``runtime_s`` and ``energy_j``)."""
    runtime = np.asarray(cols["runtime_s"], dtype=float)
    energy = np.asarray(cols["energy_j"], dtype=float)
    if objective == "time":
        return runtime
    if objective == "energy":
        return energy
    if objective == "edp":
        return runtime * energy
    raise ConfigError(f"objective must be one of {', '.join(OBJECTIVES)}, got {objective!r}")


@dataclass
class Choice:
    """System 1's answer for one problem.

    Attributes:
        index: row of the pick in ``scores.frame`` (None when nothing is feasible).
        ranking: feasible rows, best first, by the objective (``balanced``: the knee first,
            then the rest by normalised distance to the knee).
        front: feasible rows on the runtime–energy Pareto front, sorted by runtime.
        objective: the objective used.
        spread: relative runtime interval width at the pick, (hi - lo) / median.
        margin: relative objective gap between the pick and the runner-up.
        confidence: probability the pick is within 5 % of the best (calibrated or not).
        calibrated: whether ``confidence`` came from a held-out calibration.
        noise: the measured repeat noise of the workload's training runs (NaN: unknown).
        neighbour_note: why the measurements at the sizes around contradict the pick, or
            that it ran at one other size only (then ``confidence`` is at most
            :data:`DOUBTED_CONFIDENCE`), or ``""``.
        nodes_note: which candidate on more nodes than its program was ever measured on was
            predicted better than the pick, yet ranked after it
            (:mod:`~hpcds1mpi.decide.measured_nodes`), and that the pick is at a level
            never measured (:mod:`~hpcds1mpi.decide.unmeasured_bounds`), or ``""``.
        held_back: where the model's best is a kernel's candidate beyond twice the nodes it
            was measured on, held back, the verdict's reason to confirm
            (:func:`~hpcds1mpi.decide.measured_nodes.confirm_held_back`), or ``""``.
    """

    scores: Scores
    index: int | None
    ranking: np.ndarray
    front: np.ndarray
    objective: str
    spread: float = float("nan")
    margin: float = float("nan")
    confidence: float = 0.0
    calibrated: bool = False
    noise: float = float("nan")
    neighbour_note: str = ""
    nodes_note: str = ""
    held_back: str = ""

    @property
    def pick(self) -> dict | None:  # noqa: D102
        return None if self.index is None else self.scores.row(self.index)

    def config(self, row: int | None = None) -> Configuration:
        r = self.scores.cols
        i = self.index if row is None else row
        return Configuration(int(r["nodes"][i]), int(r["ranks_per_node"][i]),
                             int(r["threads"][i]), str(r["device"][i]), str(r["precision"][i]))


def choose(scores: Scores, objective: str = "time",
           confidence_model: ConfidenceModel | None = None) -> Choice:
    """Pick the best feasible candidate for ``objective``.

    Returns:
        a :class:`Choice`; ``index`` is None when nothing is feasible.
    """
    if objective not in OBJECTIVES:
        raise ConfigError(f"objective must be one of {', '.join(OBJECTIVES)}, got {objective!r}")
    cols = scores.cols
    # A program's candidates on node counts it never ran on come after all the others, a
    # kernel's beyond twice its most measured nodes too (s34 tester S1).
    feasible, after = measured_first(cols, np.flatnonzero(cols["feasible"]))
    confidence_model = confidence_model or ConfidenceModel()
    if len(feasible) == 0:
        return Choice(scores, None, feasible, feasible, objective)
    runtime, energy = cols["runtime_s"], cols["energy_j"]
    by_time = np.argsort(runtime[feasible], kind="stable") if objective == "time" else None
    # The time ranking's sort orders the front too (one sort of the grid, not two).
    front = feasible[pareto_front_2d(runtime[feasible], energy[feasible], order=by_time)]
    if objective == "balanced":
        k = front[knee(runtime[front], energy[front])]
        # Rank the rest by their distance to the knee in log-normalised units.
        lr, le = np.log(runtime[feasible]), np.log(energy[feasible])
        sr = (lr.max() - lr.min()) or 1.0
        se = (le.max() - le.min()) or 1.0
        dist = np.hypot((lr - math.log(runtime[k])) / sr, (le - math.log(energy[k])) / se)
        # Knee first; others by how much worse they are than the knee in the sum of both.
        value = np.maximum(lr - math.log(runtime[k]), 0) / sr + \
            np.maximum(le - math.log(energy[k]), 0) / se + 1e-3 * dist
        value[feasible == k] = -1.0
        ranking = feasible[np.argsort(value, kind="stable")]
        vals = runtime * energy  # the margin of a balanced pick is measured in EDP
    else:
        vals = objective_values(cols, objective)
        ranking = feasible[by_time if by_time is not None
                           else np.argsort(vals[feasible], kind="stable")]
    raised_note = scaling_note(cols, int(ranking[0]))  # the model's best, held to physics: P1
    first = int(ranking[0])
    ranking, beyond_note = measured_before_unmeasured(cols, ranking, objective)  # V4
    index = int(ranking[0])
    if index != first and not beyond_note and index not in front:  # s40 tester D14
        beyond_note = passed_over_note(cols, first, index, objective)
    lo, hi = cols["runtime_lo"][index], cols["runtime_hi"][index]
    spread = float(max(hi - lo, 0.0) / runtime[index]) if runtime[index] > 0 else float("inf")
    margin = (abs(float((vals[ranking[1]] - vals[index]) / vals[index])) if vals[index] else 0.0
              ) if len(ranking) > 1 else 1.0  # the relative gap to the runner-up
    nodes_note = unmeasured_nodes_note(cols, scores.workload, index, after, vals)
    held_back = held_back_line(cols, scores.workload, index, after, vals) or \
        pick_beyond_reach_line(cols, scores.workload, index)
    if nodes_note:  # the model puts a candidate ahead of the pick: no margin to speak of
        margin = 0.0
    nodes_note = "; ".join(n for n in (nodes_note, beyond_note, raised_note) if n)
    ranking = np.concatenate([ranking, after[np.argsort(vals[after], kind="stable")]])
    confidence, noise = pick_confidence(confidence_model, scores, index, spread, margin)
    failed = cols[FAILED_SIZES][index] if FAILED_SIZES in cols else ""
    note = disagreement(cols, index, feasible, scores.size, scores.neighbour_sizes, objective) \
        or one_size_note(cols, index, scores.size, failed) \
        or failed_near_note(cols, index, scores.size) \
        or timed_out_note(cols, index, scores.size)  # s29 tester C1, s39 tester B2, s40 B12
    if note or (UNMEASURED in cols and cols[UNMEASURED][index]):  # extrapolated: s31 Q5
        confidence = min(confidence, DOUBTED_CONFIDENCE)
    if scores.edge is not None:  # beyond the sizes no surer than at their edge (B2), nor
        # than between the two outermost of them (the edge's own edge: B7)
        cap = edge_confidence(scores.edge, objective, confidence_model, choose)
        if cap is not None:
            confidence = min(confidence, cap)
    return Choice(scores, index, ranking, front, objective, spread, margin, confidence,
                  confidence_model.calibrated, noise, note, nodes_note, held_back)


def recommend_system1(bundle, workload: str, size: int, partitions: Sequence["Partition"],
                      objective: str = "time", constraints: Constraints | None = None,
                      confidence_model: ConfidenceModel | None = None,
                      limits: dict[str, MemoryLimit] | None = None) -> Choice:
    """Score and choose in one call (the library entry point)."""
    return choose(score(bundle, workload, size, partitions, constraints, limits), objective,
                  confidence_model)
