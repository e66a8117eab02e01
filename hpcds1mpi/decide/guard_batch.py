"""The familiarity guard for many jobs at once: one embedding pass, each job judged as alone.

A job's learned distance (:func:`~hpcds1mpi.decide.guard.job_distance`) places it at the
reference configurations (48 rows), computes their features and embedding
(``bundle.design``: a fixed cost per call of ~2 ms on the shipped bundle, whatever the rows)
and takes each row's distance to its nearest training rows. :func:`job_distances` computes
the features of every job's rows in one ``design`` call (a row's features do not depend on
the other rows), then the neighbour distances of each job on its own rows, with the same
shapes as the one-job path, so each distance equals :func:`job_distance`'s (the tests hold
them equal, bit for bit). Jobs asked twice in one pass (the same workload, size and
partition: a question asked for two objectives) are computed once.

A job whose rows cannot be built gets its own exception in its place; should the stacked
``design`` fail, each job is computed alone, so one job's error is never another's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import numpy as np

from hpcds1mpi.decide import guard as guard_mod
from hpcds1mpi.decide.guard_reference import query_frame
from hpcds1mpi.decide.system1_batch import each_alone, stacked_call
from hpcds1mpi.decide.trained_hardware import matching_partition

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.decide.guard import GuardCalibration, Reference, Verdict


def _distance(ref: "Reference", emb, k: int) -> float:
    """The job's distance from its rows' design matrix, as ``rows_distance`` + ``median``."""
    return guard_mod.median(guard_mod.design_distance(ref, emb, k=k))


def job_distances(bundle, ref: "Reference", jobs: Sequence[tuple], k: int) -> list:
    """The learned distance of each job, one ``design`` call for all.

    Args:
        jobs: ``(workload, size, trained partition name or None)`` each.
        k: neighbours (the calibration's ``k``).

    Returns:
        one entry per job: its distance (a float, ``inf`` with no query rows), or the
        exception :func:`~hpcds1mpi.decide.guard.job_distance` would have raised.
    """
    project = each_alone(bundle, "design" if hasattr(bundle, "design") else "embed")
    out: list = [None] * len(jobs)
    rows: dict[int, object] = {}
    for i, (workload, size, partition) in enumerate(jobs):
        if ref.measured(workload, size, partition):  # as job_distance: 0 (s31 tester Q2)
            out[i] = 0.0
            continue
        try:
            q = query_frame(bundle, ref, workload, size, partition)
        except Exception as exc:  # noqa: BLE001 - the job's own error, kept in place
            out[i] = exc
            continue
        if len(q) == 0:
            out[i] = float("inf")
        else:
            rows[i] = q
    if not rows:
        return out
    order = list(rows)
    # None: each job alone, so its error stays its own.
    emb_all = stacked_call(
        lambda table, groups: np.asarray(project(table, groups), dtype=float),
        [rows[i] for i in order], "the bundle's design")
    start = 0
    for i in order:
        n = len(rows[i])
        try:
            # A copy in the stacked answer's memory order, not a view: the neighbour product
            # then gets an array laid out as the one-job path's (the shipped bundle's design
            # is Fortran-ordered), so BLAS takes the same path and rounds alike (a C-ordered
            # copy moved a distance in its 16th digit).
            emb = emb_all[start:start + n].copy(order="K") if emb_all is not None \
                else project(rows[i])
            out[i] = _distance(ref, emb, k)
        except Exception as exc:  # noqa: BLE001
            out[i] = exc
        start += n
    return out


def judge_many(bundle, jobs: Sequence[tuple], calibration: "GuardCalibration",
               ref: "Reference", memo=None) -> list:
    """:func:`~hpcds1mpi.decide.guard.judge` for many jobs, their distances in one pass.

    Args:
        jobs: ``(workload, size, partition, confidence or None)`` each.
        memo: distances kept from earlier calls for this bundle and ``ref`` (a
            :class:`~hpcds1mpi.decide.batch_memo.Kept`; the calibration's ``k`` is in its
            keys): used, and this call's kept. None: nothing kept.

    Returns:
        one entry per job: its :class:`~hpcds1mpi.decide.guard.Verdict` (equal to
        ``judge``'s), or the exception ``judge`` would have raised for it.
    """
    out: list = [None] * len(jobs)
    keys: dict[int, tuple] = {}
    for i, (workload, size, partition, _) in enumerate(jobs):
        try:
            # The type is in the key: the query rows carry the size as given.
            keys[i] = (str(workload), type(size), size, matching_partition(bundle, partition))
        except Exception as exc:  # noqa: BLE001
            out[i] = exc
    found: dict = {}
    if memo is not None:
        for key in keys.values():
            kept = memo.get((key, calibration.k))
            if kept is not None:
                found[key] = kept
    unique = [key for key in dict.fromkeys(keys.values()) if key not in found]
    for key, distance in zip(unique, job_distances(
            bundle, ref, [(w, s, p) for w, _, s, p in unique], calibration.k)):
        found[key] = distance
        if memo is not None and not isinstance(distance, BaseException):
            memo.put((key, calibration.k), distance)
    for i, key in keys.items():
        distance = found[key]
        if isinstance(distance, BaseException):
            out[i] = distance
            continue
        workload, size, partition, confidence = jobs[i]
        try:
            out[i] = guard_mod.judge(bundle, workload, size, partition, calibration, ref,
                                     confidence, distance=distance)
        except Exception as exc:  # noqa: BLE001
            out[i] = exc
    return out


def verdict_or_raise(entry) -> "Verdict":
    """A :func:`judge_many` entry as ``judge`` would return it (its exception raised)."""
    if isinstance(entry, BaseException):
        raise entry
    return entry


__all__ = ["job_distances", "judge_many", "verdict_or_raise"]
