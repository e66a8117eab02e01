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

import numpy as np

from hpcds1mpi.config import OK

from .columns import is_columns
from .size_neighbours import config_code, config_codes


class MeasuredBest:
    """The fastest measured configuration at each measured size.

    Attributes:
        groups: (workload, partition) -> (sorted sizes ``(m,)``, configuration code of the
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
        codes = config_codes(table[idx] if is_columns(table) else table.iloc[idx])
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
            groups[(str(w[a]), str(p[a]))] = (s[a:b], best[a:b])
        return cls(groups)

    def share(self, table) -> np.ndarray:
        """``(n,)`` for each row: the share (0, 0.5 or 1) of the measured sizes around its size
        at which its configuration measured fastest. Around means the size itself when it was
        measured (to a relative 1e-9), else the nearest measured size below and above it. NaN
        outside the measured range (nothing measured on one side: an extrapolation, which the
        guard's size check judges) and where its workload and partition were never measured.
        Row by row through :meth:`share_of`, so that both answer alike (the tables asked are a
        few held-out picks)."""
        cols = [np.asarray(table[c]) for c in ("workload", "size", "partition", "nodes",
                                                "ranks_per_node", "threads", "device",
                                                "precision")]
        return np.array([self.share_of(*row) for row in zip(*cols)], dtype=float)

    def share_of(self, workload: str, size: float, partition: str, nodes: int,
                 ranks_per_node: int, threads: int, device: str, precision: str) -> float:
        """:meth:`share` of one row given by its values (System 1's pick: ~2 us, no arrays)."""
        group = self._lists.get((str(workload), str(partition)))
        around = None if group is None else _around(group[0], float(size))
        if around is None:
            return float("nan")
        code = config_code(nodes, ranks_per_node, threads, device, precision)
        return 0.5 * (float(group[1][around[0]] == code) + float(group[1][around[1]] == code))


def _around(levels: list[float], size: float) -> tuple[int, int] | None:
    """Indices into the sorted measured ``levels`` of the sizes around ``size``: ``(k, k)``
    where it was measured, ``(k - 1, k)`` between two, None outside the range."""
    k = bisect.bisect_left(levels, size)
    for j in (k - 1, k):
        if 0 <= j < len(levels) and abs(levels[j] - size) <= 1e-9 * max(abs(size), 1.0):
            return j, j
    return (k - 1, k) if 0 < k < len(levels) else None
