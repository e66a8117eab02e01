"""The jobs of a group running at a moment: how many, and how long they had run by then.

A scheduler knows this when a job is submitted -- which of the user's jobs are running and
since when -- though not how long they will run. :func:`running_at` answers it for every job of
a table at once (sorted arrays, a sparse table of range maxima and vectorised binary searches;
no per-job loop): Curie's 313k jobs take about a second.
"""

from __future__ import annotations

import numpy as np


def running_spans(start: np.ndarray, submit: np.ndarray, end: np.ndarray, known: np.ndarray,
                  limit: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(start, stop) whole seconds of each logged job's run as a later submission can tell it,
    for :func:`running_at`: from its start (``start`` rounded up, int64 max where missing; never
    before its own ``submit``, so that no job is running at its own submit time) to its ``end``
    where its run time is ``known``; a job whose end the log does not know (Gaia's 127 "partial"
    jobs) until its start plus its requested time (``limit``, s), the most it could have run --
    whether an end is ever logged is not known at a submission (s49 review). A job without a
    start, or without an end and a request, is never running (start int64 min)."""
    imin, imax = np.iinfo(np.int64).min, np.iinfo(np.int64).max
    usable = (start != imax) & (known | np.isfinite(limit))
    start = np.where(usable, np.maximum(start, submit), imin)
    most = np.ceil(np.nan_to_num(limit, nan=0.0)).astype(np.int64)
    stop = np.where(known, end, np.where(usable, np.where(usable, start, 0) + most, imax))
    return start, stop


def running_at(codes: np.ndarray, start: np.ndarray, end: np.ndarray, t: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per query ``i``: the jobs of code ``codes[i]`` running at ``t[i]`` (started strictly
    before it, not ended by it) -- how many, and how long the earliest and the latest of them
    had run by then (s; NaN where none). A scheduler knows this at submission; the run times
    of those jobs it does not, and none is read (a changed future end after ``t`` changes
    nothing).

    ``start``/``end`` are whole seconds (int64; a missing start: int64 min, never counted; a
    missing end: int64 max, still running)."""
    imin = np.iinfo(np.int64).min
    count = np.zeros(len(t))
    longest = np.full(len(t), np.nan)
    newest = np.full(len(t), np.nan)
    asked = t > imin  # a job without a submit time asks nothing
    ok = start > imin
    if ok.any() and asked.any():
        parts = _running(codes[ok], start[ok], end[ok], codes[asked], t[asked])
        for out, part in zip((count, longest, newest), parts):
            out[asked] = part
    return count, longest, newest


def _running(job_codes: np.ndarray, start: np.ndarray, end: np.ndarray, codes: np.ndarray,
             t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`running_at` for jobs that have a start and queries that have a time."""
    imin = np.iinfo(np.int64).min
    n_q = len(t)
    longest = np.full(n_q, np.nan)
    newest = np.full(n_q, np.nan)
    order = np.lexsort((start, job_codes))
    c, s, e = job_codes[order], start[order], end[order]
    # A job started and ended within one second ran for none of any later second.
    e = np.maximum(e, s + 1)
    n = len(c)
    # Composite keys (code, time) so that one sorted search answers every (code, time) query.
    t0 = int(min(s.min(), t.min()))
    span = int(max(s.max(), t.max())) - t0 + 2
    lo = np.searchsorted(c, codes, side="left")
    # Started strictly before t: positions [lo, p).
    p = np.searchsorted(c * span + (s - t0), codes * span + (t - t0), side="left")
    p = np.maximum(p, lo)
    # Ended by t (end <= t): counted among the group's ends sorted the same way.
    ended_order = np.lexsort((e, c))
    ce, ee = c[ended_order], np.minimum(e[ended_order], t0 + span - 1)
    q = np.searchsorted(ce * span + (np.maximum(ee, t0) - t0), codes * span + (t - t0),
                        side="right")
    lo_e = np.searchsorted(ce, codes, side="left")
    # Every job that ended by t started before it (its end is at least one second later).
    count = np.maximum(p - lo - np.maximum(q - lo_e, 0), 0).astype(float)
    # Range maxima of the end times (start order) by a sparse table: the earliest running
    # job is the first position whose prefix maximum passes t, the latest the last one.
    levels = [e]
    while (1 << len(levels)) <= n:
        prev, half = levels[-1], 1 << (len(levels) - 1)
        levels.append(np.maximum(prev[:-half], prev[half:]) if len(prev) > half else prev[:0])

    def range_max(a, b):  # max of e[a:b], b > a
        k = np.floor(np.log2(np.maximum(b - a, 1))).astype(int)
        out = np.full(len(a), imin)
        for lev in np.unique(k):
            sel = k == lev
            tab = levels[lev]
            out[sel] = np.maximum(tab[a[sel]], tab[b[sel] - (1 << lev)])
        return out

    has = (p > lo)
    has[has] = range_max(lo[has], p[has]) > t[has]
    idx = np.flatnonzero(has)
    # Earliest: the smallest m in (lo, p] with max(e[lo:m]) > t.
    a, b = lo[idx] + 1, p[idx]
    for _ in range(64):
        act = a < b
        if not act.any():
            break
        mid = (a + b) // 2
        passed = range_max(lo[idx], mid) > t[idx]
        b = np.where(act & passed, mid, b)
        a = np.where(act & ~passed, mid + 1, a)
    longest[idx] = t[idx] - s[a - 1]
    # Latest: the largest m in [lo, p) with max(e[m:p]) > t.
    a, b = lo[idx], p[idx] - 1
    for _ in range(64):
        act = a < b
        if not act.any():
            break
        mid = (a + b + 1) // 2
        passed = range_max(mid, p[idx]) > t[idx]
        a = np.where(act & passed, mid, a)
        b = np.where(act & ~passed, mid - 1, b)
    newest[idx] = t[idx] - s[a]
    return count, longest, newest
