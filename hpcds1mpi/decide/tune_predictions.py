"""System 1's view of a tuning session's space: predictions, their error, the starting pick.

:func:`model_predictions` scores the space with a model bundle (None when the bundle never
measured the workload), :func:`system1_start` is its best feasible pick, and
:func:`expected_improvement` ranks candidates for the search (:mod:`hpcds1mpi.decide.system2`);
:func:`model_partition` is the partition a bundle of this machine is asked about (None for
another machine's bundle, set aside with :func:`other_machine_note`).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

import numpy as np

from hpcds1mpi.config import Configuration
from hpcds1mpi.decide.tune_space import Space


@dataclass
class Predictions:
    """A model's view of every configuration of the space (aligned with ``space.configs``).

    Attributes:
        value: ``(n,)`` predicted objective (runtime s or energy J), NaN where unknown.
        spread: ``(n,)`` standard deviation of the log prediction over ensemble members.
        fail_prob: ``(n,)`` predicted probability of failure.
        feasible: ``(n,)`` False where System 1 rules the configuration out (fail, memory).
        unmeasured: per configuration, the levels of it the model never measured (e.g.
            ``("precision fp32",)``; ``()`` where it measured them all): its prediction
            there is a guess, which System 2 tries before trusting (s31 tester Q3). None:
            not known (every prediction taken as it stands).
        failing: ``(n,)`` True where System 1 rules the configuration out as predicted to
            fail (a part of ``~feasible``); None: not known. One of them run ok shows the
            failure predictions wrong for this job (s39 tester B4).
        beyond_nodes: ``(n,)`` True where the configuration is on more nodes than its
            program was ever measured on, which ``recommend`` picks only where no measured
            node count can run the job (:mod:`~hpcds1mpi.decide.measured_nodes`); None: not
            known.
        chosen: the index of ``recommend``'s pick among the space's configurations
            (:func:`~hpcds1mpi.decide.system1.choose` on their rows: a measured layout
            before a never-measured one not wholly better); None: not known.
    """

    value: np.ndarray
    spread: np.ndarray
    fail_prob: np.ndarray
    feasible: np.ndarray
    unmeasured: "list[tuple[str, ...]] | None" = None
    failing: "np.ndarray | None" = None
    beyond_nodes: "np.ndarray | None" = None
    chosen: int | None = None


def predictions_from_scores(space: Space, scores, objective: str = "time",
                            levels=None, chosen: bool = False) -> Predictions:
    """Align System 1's :class:`~hpcds1mpi.decide.system1.Scores` with ``space``; ``levels``:
    the workload's recorded measured levels (None: its never-measured levels are not known);
    ``chosen``: find :attr:`Predictions.chosen` too (:func:`recommend_choice`)."""
    from hpcds1mpi.decide.measured_nodes import beyond_measured_nodes
    from hpcds1mpi.surrogates.repeat_spread import median_interval

    cols = scores.cols
    n = len(space.configs)
    value = np.full(n, np.nan)
    spread = np.full(n, 0.5)
    fail = np.zeros(n)
    feasible = np.zeros(n, dtype=bool)
    failing = np.zeros(n, dtype=bool)
    beyond = np.zeros(n, dtype=bool)
    rows_beyond = beyond_measured_nodes(cols, np.arange(len(cols["nodes"])))
    col = "runtime" if objective != "energy" else "energy"
    # the median's interval: System 2 compares runs' medians, and measures their noise itself
    lows, highs = median_interval(cols, col)
    at = np.full(len(cols["nodes"]), -1)  # each row's index in the space, -1: not in it
    for i in range(len(cols["nodes"])):
        key = (int(cols["nodes"][i]), int(cols["ranks_per_node"][i]), int(cols["threads"][i]),
               str(cols["device"][i]), str(cols["precision"][i]))
        j = space._keys.get(key)
        if j is None:
            continue
        at[i] = j
        mid = float(cols[f"{col}_s" if col == "runtime" else "energy_j"][i])
        lo, hi = float(lows[i]), float(highs[i])
        value[j] = mid
        if lo > 0 and hi > 0 and math.isfinite(lo) and math.isfinite(hi):
            # lo/hi are the 10th/90th percentiles over members: +-1.2816 sigma in log space.
            spread[j] = max((math.log(hi) - math.log(lo)) / 2.5631, 0.02)
        fail[j] = float(cols["fail_prob"][i])
        feasible[j] = bool(cols["reason"][i] in ("", "deadline", "energy"))
        failing[j] = bool(cols["reason"][i] == "fail")
        beyond[j] = bool(rows_beyond[i])
    return Predictions(value, spread, fail, feasible, unmeasured_levels(space, levels),
                       failing, beyond,
                       recommend_choice(scores, at, objective) if chosen else None)


def recommend_choice(scores, at: np.ndarray, objective: str) -> int | None:
    """The index in the space of ``recommend``'s pick (:func:`~hpcds1mpi.decide.system1.
    choose`) among ``scores``' rows that are in it (``at``: each row's index there, -1 where
    none). M9 (s47): the tune's start had been the best prediction alone, which could be a
    never-measured layout that recommend, by that rule, does not pick."""
    from hpcds1mpi.decide.scores import Scores
    from hpcds1mpi.decide.system1 import choose

    rows = at >= 0
    if not rows.any():
        return None
    sub = Scores({k: np.asarray(v)[rows] for k, v in scores.cols.items()}, scores.workload,
                 scores.size, scores.limits, scores.measured_best, scores.neighbour_sizes)
    choice = choose(sub, "energy" if objective == "energy" else "time")
    return None if choice.index is None else int(at[rows][choice.index])


def unmeasured_levels(space: Space, levels) -> "list[tuple[str, ...]] | None":
    """Per configuration of ``space``, the levels of it the workload's recorded ``levels``
    (:class:`~hpcds1mpi.surrogates.levels.MeasuredLevels`) never had, e.g.
    ``("nodes above 1", "precision fp32")`` (:func:`~hpcds1mpi.decide.scores.never_measured`,
    as ``recommend`` judges them). None without recorded levels (the tuning replay)."""
    from hpcds1mpi.decide.scores import never_measured

    if levels is None:
        return None
    return [tuple(knob.level for knob in never_measured(config.as_dict(), levels))
            for config in space.configs]


def expected_improvement(best: float, mu_log: np.ndarray, sigma: np.ndarray) -> np.ndarray:
    """Expected relative improvement ``E[max(0, best - Y)] / best`` for log-normal ``Y``.

    Args:
        best: the best measured value (> 0).
        mu_log: ``(n,)`` mean of log Y.
        sigma: ``(n,)`` standard deviation of log Y (> 0).
    """
    from scipy.stats import norm

    sigma = np.maximum(sigma, 1e-6)
    z = (math.log(best) - mu_log) / sigma
    # E[max(0, b - Y)] = b * Phi(z) - exp(mu + s^2/2) * Phi(z - s)
    gain = best * norm.cdf(z) - np.exp(mu_log + sigma ** 2 / 2) * norm.cdf(z - sigma)
    return np.maximum(gain, 0.0) / best


#: At most one run in this many of the budget tries a guess (s31 reviewer: on a bundle measured
#: at one layout, fp64 only, every other rank count, thread count, precision and node count is
#: a never-measured level, and trying each spent the budget on guesses, multi-node ones too).
GUESS_SHARE = 4
#: The low end of a guess's predicted interval, in standard deviations of its log: the 2.5th
#: percentile. Not System 1's 10th (``runtime_lo``): at a level never measured the prediction
#: is a guess; s31 tester Q3's fp32 had its 10th percentile 1.2x above the best run, and ran
#: 1.8x faster than it.
LOW_END_Z = 1.96


def most_guesses(budget: int) -> int:
    """The most runs of a ``budget`` that try a never-measured level: ceil(budget / 4)."""
    return math.ceil(budget / GUESS_SHARE)


def could_beat(best: float, mu: np.ndarray, sigma: np.ndarray) -> np.ndarray:
    """``(n,)`` True where the low end of the predicted interval (log mean ``mu``, standard
    deviation ``sigma``) is below ``best``: the configuration could beat the best run."""
    return np.asarray(mu) - LOW_END_Z * np.asarray(sigma) < math.log(best)


def levels_left(predictions: Predictions, tried: set[int],
                among: np.ndarray | None = None) -> list[str]:
    """The never-measured levels (:attr:`Predictions.unmeasured`) that no tried configuration
    has, of the configurations ``among`` (``(n,)`` bool; None: every one)."""
    if predictions.unmeasured is None:
        return []
    covered = {level for i in tried for level in predictions.unmeasured[i]}
    return list(dict.fromkeys(
        level for i, levels in enumerate(predictions.unmeasured)
        if among is None or among[i] for level in levels if level not in covered))


def guess_to_try(predictions: Predictions, candidates: np.ndarray, gains: np.ndarray,
                 beats: np.ndarray, tried: set[int]) -> int | None:
    """The candidate to run before trusting the model's guesses: of those having a
    never-measured level no tried configuration has and that could beat the best run
    (``beats``, :func:`could_beat`), the one of the highest expected gain; None when there is
    none (s31 tester Q3: a tune stopped on a 0.2 % expected gain of fp32, a precision the
    bundle never ran, and fp32 was 1.8x faster).

    Args:
        candidates: ``(n,)`` True where a configuration may be run now.
        gains: ``(n,)`` the expected improvement of each.
        beats: ``(n,)`` True where the low end of its predicted interval is below the best run.
    """
    left = set(levels_left(predictions, tried))
    if not left:
        return None
    has = np.array([bool(left.intersection(levels)) for levels in predictions.unmeasured])
    ok = candidates & has & beats
    if not ok.any():
        return None
    return int(np.argmax(np.where(ok, gains, -np.inf)))


def untried_guesses(predictions: Predictions, tried: set[int], runnable: np.ndarray,
                    beats: np.ndarray | None, why: str) -> str:
    """What a tune's stop line says of the never-measured levels it did not try ("" when
    none): those that could beat the best run (``beats``; None: all) were left for ``why``
    (the budget, or the most guesses), the others as even their predicted low end is slower."""
    left = levels_left(predictions, tried, runnable)
    could = left if beats is None else levels_left(predictions, tried, runnable & beats)
    slower = [level for level in left if level not in could]
    out = ""
    if could:
        out += (f"; never tried: {', '.join(could)}, which the model never measured (its "
                f"predictions there are guesses: {why})")
    if slower:
        out += (f"; not tried: {', '.join(slower)}, which the model never measured, as even "
                "the low end of its predicted interval is slower than the best run")
    return out


def system1_start(space: Space, predictions: Predictions) -> Configuration | None:
    """System 1's pick within the space, by ``recommend``'s rule: its pick
    (:attr:`Predictions.chosen`) where known, else the best predicted feasible configuration
    on a node count its program was measured on, one beyond only where none of those is
    feasible (s39 tester B5: a tune started from a never-measured 2-node layout that
    recommend refused, and it crashed)."""
    ok = predictions.feasible & np.isfinite(predictions.value) & (predictions.value > 0)
    pick = predictions.chosen
    if pick is None or not ok[pick]:
        pick = best_predicted(predictions, ok)
    return None if pick is None else space.configs[pick]


def declined_note(space: Space, predictions: Predictions) -> str:
    """What the start line says where System 1's best prediction is a layout at a level never
    measured that ``recommend`` does not pick (:func:`system1_start` starts from its pick
    instead); "" otherwise. M9 (s47): the tune had called such a layout System 1's pick."""
    ok = predictions.feasible & np.isfinite(predictions.value) & (predictions.value > 0)
    best, start = best_predicted(predictions, ok), system1_start(space, predictions)
    if best is None or start is None or space.configs[best] == start:
        return ""
    levels = (predictions.unmeasured or [()] * len(space.configs))[best]
    if not levels:  # a tie ordered otherwise, not a layout declined
        return ""
    return (f"the best prediction, {space.configs[best].label()}, is at a level never "
            f"measured ({', '.join(levels)}): System 1 picks such a layout only where its whole "
            "interval lies below the measured ones', as recommend does, and the search may "
            "try it")


def best_predicted(predictions: Predictions, candidates: np.ndarray) -> int | None:
    """The index of the lowest predicted value among ``candidates`` (``(n,)`` bool), those on
    node counts the program was measured on first (:attr:`Predictions.beyond_nodes`); None
    when there is no candidate."""
    candidates = np.asarray(candidates, bool)
    if not candidates.any():
        return None
    beyond = predictions.beyond_nodes
    if beyond is not None and (candidates & ~beyond).any():
        candidates = candidates & ~beyond
    return int(np.argmin(np.where(candidates, predictions.value, np.inf)))


def none_feasible_note(predictions: Predictions) -> str:
    """Why a tune whose model rules out every configuration searches without it: a neighbour
    walk, as with no model (s39 tester B4: it stopped after one run, saying "every
    configuration the model considers feasible was measured" of a model that considered none
    feasible, and answered the slowest of three layouts)."""
    failing = predictions.failing
    what = ("to fail" if failing is not None and failing.all() else
            "to fail or to run out of memory" if failing is not None and failing.any()
            else "infeasible")
    return (f"the model predicts every configuration allowed {what} here, which runs will "
            "check: searching as without it (a walk over neighbours of the start)")


def failure_disproved_note(config: Configuration, fail_prob: float) -> str:
    """What a tune says when a configuration the model ruled out as failing ran ok: the
    model's failure predictions are wrong for this job and no longer rule any out."""
    return (f"{config.label()} ran ok where the model predicted it fails (failure probability "
            f"{fail_prob:.2f}): its failure predictions are set aside for this tune")


def ruled_out_said(space: Space, predictions: Predictions, feasible: np.ndarray,
                   tried: set[int]) -> str:
    """The stop line's note of the untried configurations the model rules out (``~feasible``;
    "" when none): a model's verdict, not a run's, so a user knows what a run could still
    check (s39 tester B4: a layout predicted to fail, never failed, was the fastest)."""
    left = [int(i) for i in np.flatnonzero(~np.asarray(feasible, bool)) if int(i) not in tried]
    if not left:
        return ""
    failing = predictions.failing
    named = []
    for i in left[:4]:
        fails = failing is not None and bool(failing[i])
        named.append(f"{space.configs[i].label()} (" + (
            f"predicted to fail, probability {float(predictions.fail_prob[i]):.2f})" if fails
            else "ruled out)"))
    more = f" and {len(left) - 4} more" if len(left) > 4 else ""
    return (f"; not run, as the model rules them out: {', '.join(named)}{more} (to measure "
            "one, start from it: --nodes, --ranks-per-node, --threads)")


def model_shift(space: Space, ratios: list[float], ratio_nodes: list[int]
                ) -> tuple[np.ndarray | float, np.ndarray | float]:
    """Per configuration: the log correction of the model's prediction and its uncertainty.

    A model is most wrong where it extrapolates, typically in node count (a bundle measured on
    one node predicts two). So the correction is the median log(measured / predicted) of the
    runs on the same node count; a node count with no run yet gets the median over all runs,
    with that median's size as extra uncertainty (whether the error carries over is unknown).
    Without this, two-node runs measured slower than predicted shifted the (right) one-node
    predictions up too, and the search stopped before trying one node (measured live).
    """
    if not ratios:
        return 0.0, 0.0
    overall = float(np.median(ratios))
    by_nodes: dict[int, float] = {}
    for n in set(ratio_nodes):
        by_nodes[n] = float(np.median([r for r, k in zip(ratios, ratio_nodes) if k == n]))
    nodes = np.array([c.nodes for c in space.configs])
    shift = np.array([by_nodes.get(int(n), overall) for n in nodes])
    transfer = np.array([0.0 if int(n) in by_nodes else abs(overall) for n in nodes])
    return shift, transfer


def model_predictions(bundle, space: Space, partition, workload: str, size: int,
                      objective: str = "time") -> Predictions | None:
    """System 1's predictions over ``space``; None when the bundle never measured the workload
    (its guesses would only mislead the search)."""
    from dataclasses import replace

    from hpcds1mpi.decide import system1 as s1
    from hpcds1mpi.decide.bundle_cache import measured_levels
    from hpcds1mpi.kernels import support as kernel_support

    if workload not in {str(w) for w in getattr(bundle, "workloads", [])}:
        return None
    uses_threads, precisions, devices = kernel_support(workload)
    max_nodes = max(c.nodes for c in space.configs)
    part = replace(partition, max_nodes=max(max_nodes, 1))
    scores = s1.score(bundle, workload, size, [part],
                      s1.Constraints(max_nodes=max_nodes, devices=devices,
                                     precisions=precisions), uses_threads=uses_threads)
    return predictions_from_scores(space, scores, objective,
                                   measured_levels(bundle).get(str(workload)), chosen=True)


def this_machine(partition, program: str | None = None) -> dict | None:
    """The machines-table row the tune's runs on ``partition`` will get here (their
    fingerprint, :func:`hpcds1mpi.measure.meters.fingerprint`): this host's hardware and the
    MPI library the runs load (a kernel's: this Python's mpi4py; a program's: its own, as
    ``sweep --command`` reads it). None where that cannot be read."""
    import shlex
    import socket
    import sys

    from hpcds1mpi.errors import HpcdsError
    from hpcds1mpi.measure.meters import fingerprint
    from hpcds1mpi.measure.program_mpi import program_mpi_library

    tokens = [sys.executable, "-c", "pass"] if program is None else shlex.split(program)
    try:
        library = program_mpi_library(tokens, dict(os.environ), "mpiexec")
        return fingerprint(partition, hostnames=[socket.gethostname()], mpi_library=library,
                           gpu_aware=False)
    except (HpcdsError, OSError, ValueError):  # unread: the hardware check alone decides
        return None


def model_partition(bundle, partition, machine: dict | None = None):
    """``partition`` as ``bundle`` is to be asked about it, or None where the bundle is of
    another machine (its pick would be one recommend escalates). It is the model's when the
    guard's hardware check matches it
    (:func:`~hpcds1mpi.decide.trained_hardware.matching_partition`), or when ``machine`` (this
    machine's row, :func:`this_machine`) is the bundle's by learn's rule
    (:func:`hpcds1mpi.measure.same_machine.known_as`): then it is asked with the trained
    partition's hardware. An allocation's share of a node (4 of its 25 GB) is the same
    machine, whose runs ``learn`` takes (s37 tester K1: tune had set the model aside)."""
    from dataclasses import replace

    from hpcds1mpi.decide.trained_hardware import matching_partition, trained_partitions
    from hpcds1mpi.measure.same_machine import known_as

    if matching_partition(bundle, partition) is not None:
        return partition
    match = None if machine is None else known_as(
        machine, set(getattr(bundle, "machine_ids", ()) or ()),
        trained_partitions(bundle))
    hw = trained_partitions(bundle).get(match[1]) if match else None
    if not hw:
        return None
    try:
        return replace(partition, cores_per_node=int(hw["cores_per_node"]),
                       memory_gb=float(hw["memory_gb"]),
                       gpus_per_node=int(hw.get("gpus_per_node", 0) or 0))
    except (KeyError, TypeError, ValueError):
        return None


def other_machine_note(partition) -> str:
    """Why a bundle is no start for a tune on ``partition`` (:func:`model_partition` None)."""
    return (f"the model was trained on other hardware than {partition.name} "
            f"({partition.cores_per_node} cores, {partition.gpus_per_node} GPUs, "
            f"{partition.memory_gb:g} GB); searching without it (a model of this machine is "
            "trained from runs here: `hpcds1mpi train`; `learn` adds runs only to a model of "
            "the machine they ran on)")


def verdict_note(bundle, workload: str, size: int, partition, model_dir=None) -> str | None:
    """What ``recommend`` says of this job where it does not act on its pick on its own (its
    verdict ``escalate`` or ``confirm``, with the reasons), for tune's start line; None when
    it is ``auto`` or refuses the question. A tune that said "start from System 1's pick"
    where recommend said "escalate: no settings guessed" (s31 tester Q3) hid that the start
    is a guess."""
    from hpcds1mpi.decide.job_verdict import recommend_verdict
    from hpcds1mpi.decide.guard import Verdict
    from hpcds1mpi.errors import HpcdsError

    try:
        verdict = recommend_verdict(bundle, workload, int(size), (None, partition),
                                    Verdict("auto"), model_dir=model_dir)
    except HpcdsError:  # the tune goes on from its own start; recommend's refusal is its own
        return None
    if verdict.verdict == "auto":
        return None
    what = "no settings guessed" if verdict.verdict == "escalate" else "confirm its pick"
    reasons = "; ".join(verdict.reasons)[:300]
    return (f"recommend's verdict on this job is {verdict.verdict} ({what}"
            + (f": {reasons}" if reasons else "") + "): System 1's pick is a guess the runs check")
