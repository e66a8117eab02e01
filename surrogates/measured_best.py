"""Which configuration measured fastest at the sizes around a question (issue 20).

System 1's pick at a size it was not trained on is most often right when the same
configuration also measured fastest at the measured sizes on either side: on the AMD rounds
reference a pick that was the measured best at both neighbours was within 5 % of the best in
most held-out problems, one that was the best at neither in few. :class:`MeasuredBest` keeps,
per (workload, partition), the measured sizes and the code of the fastest ``ok``
configuration at each (the bundle's training rows; nothing is predicted), and
:meth:`MeasuredBest.share` answers, for a row, the share of the sizes bracketing it at which
the row's configuration was that fastest one. It is an input of System 1's confidence
(:mod:`hpcds1mpi.decide.confidence`), not of the ranking.
"""

from __future__ import annotations

import bisect
import math

import numpy as np

from hpcds1mpi.config import OK

from .size_neighbours import config_code, config_codes


class MeasuredBest:
    """The fastest measured configuration at each measured size.

    Attributes:
        groups: (workload, partition) -> (sorted log sizes ``(m,)``, configuration code of the
            fastest ok row at each ``(m,)``; see :func:`~.size_neighbours.config_codes`).
    """

    def __init__(self, groups: dict):
        self.groups = groups
        # The same as plain lists, for one row at a time (no array calls: ~2 us, not ~25).
        self._lists = {k: (g[0].tolist(), g[1].tolist()) for k, g in groups.items()}

    @classmethod
    def fit(cls, table) -> "MeasuredBest":
        """From training rows (a DataFrame or :class:`~.columns.Columns` with the problem,
        configuration, ``status`` and ``runtime_s`` columns). Rows not ``ok`` or without a
        positive finite runtime are left out; a size where nothing ran ok has no entry."""
        status = np.asarray(table["status"]).astype(str)
        runtime = np.asarray(table["runtime_s"], dtype=float)
        ok = (status == OK) & np.isfinite(runtime) & (runtime > 0)
        if not ok.any():
            return cls({})
        idx = np.flatnonzero(ok)
        workloads = np.asarray(table["workload"]).astype(str)[idx]
        partitions = np.asarray(table["partition"]).astype(str)[idx]
        sizes = np.asarray(table["size"], dtype=float)[idx]
        codes = config_codes(table[idx] if hasattr(table, "coded") else table.iloc[idx])
        runtime = runtime[idx]
        # One sort: by workload and partition, then size, then runtime (stable: of equal
        # runtimes the first row measured); the first row of each size is its fastest.
        order = np.lexsort((runtime, sizes, partitions, workloads))
        w, p, s = workloads[order], partitions[order], sizes[order]
        first = np.ones(len(order), dtype=bool)
        first[1:] = (w[1:] != w[:-1]) | (p[1:] != p[:-1]) | (s[1:] != s[:-1])
        w, p, s, best = w[first], p[first], s[first], codes[order][first]
        starts = np.flatnonzero(np.r_[True, (w[1:] != w[:-1]) | (p[1:] != p[:-1])])
        groups = {}
        for a, b in zip(starts, np.r_[starts[1:], len(w)]):
            groups[(str(w[a]), str(p[a]))] = (np.log(s[a:b]), best[a:b])
        return cls(groups)

    def share(self, table) -> np.ndarray:
        """``(n,)`` for each row: the share (0, 0.5 or 1) of the measured sizes around its size
        at which its configuration measured fastest. Around means the size itself when it was
        measured, else the nearest measured size below and above it, else (outside the
        measured range) the nearest end. NaN where its workload and partition were never
        measured."""
        n = len(table)
        out = np.full(n, np.nan)
        if not n or not self.groups:
            return out
        workloads = np.asarray(table["workload"]).astype(str)
        partitions = np.asarray(table["partition"]).astype(str)
        log_sizes = np.log(np.asarray(table["size"], dtype=float))
        codes = None
        for key in set(zip(workloads.tolist(), partitions.tolist())):
            group = self.groups.get(key)
            if group is None:
                continue
            if codes is None:
                codes = config_codes(table)
            rows = np.flatnonzero((workloads == key[0]) & (partitions == key[1]))
            lo, hi = _around(group[0], log_sizes[rows])
            out[rows] = 0.5 * ((codes[rows] == group[1][lo]).astype(float)
                               + (codes[rows] == group[1][hi]))
        return out


    def share_of(self, workload: str, size: float, partition: str, nodes: int,
                 ranks_per_node: int, threads: int, device: str, precision: str) -> float:
        """:meth:`share` of one row given by its values (System 1's pick: no arrays)."""
        group = self._lists.get((str(workload), str(partition)))
        if group is None:
            return float("nan")
        levels, best = group
        x = math.log(float(size))
        hi = min(bisect.bisect_left(levels, x), len(levels) - 1)
        exact = abs(levels[hi] - x) <= 1e-8 + 1e-5 * abs(x)  # np.isclose, as _around
        lo = hi if exact or levels[hi] < x else max(hi - 1, 0)
        code = config_code(nodes, ranks_per_node, threads, device, precision)
        return 0.5 * (float(best[lo] == code) + float(best[hi] == code))


def _around(levels: np.ndarray, log_sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Indices into ``levels`` of the measured sizes around each of ``log_sizes`` (both the
    same where only one counts: a measured size, or outside the range)."""
    last = len(levels) - 1
    hi = np.minimum(np.searchsorted(levels, log_sizes), last)  # first level >= the size
    # At a measured size, or above the range (hi is then the last), that size alone; below
    # the range hi is 0 and so is lo.
    lo = np.where(np.isclose(levels[hi], log_sizes) | (levels[hi] < log_sizes), hi,
                  np.maximum(hi - 1, 0))
    return lo, hi
