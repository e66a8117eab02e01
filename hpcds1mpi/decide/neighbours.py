"""Distance of rows to their nearest reference rows: the familiarity guard's measure.

One function per step so the guard (:mod:`~hpcds1mpi.decide.guard`) and its batch
(:mod:`~hpcds1mpi.decide.guard_batch`) compute every distance the same way, bit for bit.
"""

from __future__ import annotations

import numpy as np

from hpcds1mpi.runtime.blas_threads import one_blas_thread


def knn_distance(query: np.ndarray, ref: np.ndarray, k: int,
                 ref_norms: np.ndarray | None = None) -> np.ndarray:
    """Mean distance of each query row to its ``k`` nearest reference rows. ``(q,)``.

    Args:
        ref_norms: ``(ref ** 2).sum(axis=1)`` when the caller keeps it (the same bits).
    """
    if len(ref) == 0:
        return np.full(len(query), np.inf)
    k = min(k, len(ref))
    # BLAS, on one thread (threads spun for this small product: 25 ms CPU a question). Not
    # numpy's own loop, which saves a cold recommend the ~10 ms of the limiter: |q|^2 + |r|^2
    # - 2 q.r cancels, and its other rounding moved the distance by 3e-9 (relative).
    with one_blas_thread():
        cross = query @ ref.T
    if ref_norms is None:
        ref_norms = np.sum(ref ** 2, axis=1)
    # (|q|^2 + |r|^2) - 2 q.r, in that order, without the temporaries of the plain expression
    # (each a query-by-reference array: a third of this function's time).
    cross *= 2.0
    d2 = np.add(np.sum(query ** 2, axis=1)[:, None], ref_norms[None, :])
    d2 -= cross
    np.maximum(d2, 0.0, out=d2)
    return np.sqrt(pop_smallest(d2, k)).mean(axis=1)


def pop_smallest(work: np.ndarray, k: int) -> np.ndarray:
    """The ``k`` smallest of each row of ``work``, ascending, NaN counting as the largest:
    ``(rows, k)``. ``work`` is overwritten.

    ``k`` passes of ``argmin``, not ``np.partition``: for the guard's 3 neighbours among ~1,700
    reference rows the partition (introselect, row by row) took 1.4 ms of 48 query rows,
    these passes 0.1 ms. Ascending, so the mean always sums in one order.
    """
    nan = np.isnan(work)
    if nan.any():
        work[nan] = np.inf
    rows = np.arange(len(work))
    out = np.empty((len(work), k))
    for j in range(k):
        at = work.argmin(axis=1)
        out[:, j] = work[rows, at]
        work[rows, at] = np.inf
    return out


__all__ = ["knn_distance", "pop_smallest"]
