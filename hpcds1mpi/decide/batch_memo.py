"""What many recommend questions of one bundle share, kept across batches: a question's
System 1 scores and its guard distance, which do not depend on its objective.

A service is asked the same job for several objectives (a portal's form, a submit filter
trying ``time`` then ``energy``): System 1's scores of a question (its candidate grid, one
``Bundle.predict``, the feasibility marks) and the guard's learned distance of its job depend on
the workload, size, partitions, constraints and the bundle, never on the objective, which only
the choosing step reads. :class:`RecommendMemo` keeps the last few of each (bounded LRUs), so
the second objective of a job costs only the choosing and the answer's building.
:func:`~hpcds1mpi.decide.recommend_batch.recommend_many` uses one when given one (``serve``'s
service holds one per process); without it nothing is kept, as before.

Kept values are shared by every answer that asks for them, so they are read-only: the scores'
arrays are made unwritable (a change would raise, never alter another answer). The memo holds
one bundle and one guard reference: asked for another (a bundle reloaded, a reference rebuilt),
it forgets what it kept.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Hashable

#: Questions whose scores are kept (each ~20 arrays of its candidates: tens of KB).
DEFAULT_SCORES = 128
#: Jobs whose guard distance is kept (a float each).
DEFAULT_DISTANCES = 4096


class Kept:
    """A bounded LRU mapping (``get`` / ``put``), safe to share between threads."""

    def __init__(self, size: int):
        self.size = size
        self._items: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._items)

    def get(self, key: Hashable, default=None):
        with self._lock:
            if key not in self._items:
                return default
            self._items.move_to_end(key)
            return self._items[key]

    def put(self, key: Hashable, value) -> None:
        if self.size <= 0:
            return
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


class RecommendMemo:
    """Scores and guard distances kept for one bundle and guard reference.

    Args:
        scores: most questions' scores kept.
        distances: most jobs' distances kept.
    """

    def __init__(self, scores: int = DEFAULT_SCORES, distances: int = DEFAULT_DISTANCES):
        self.scores = Kept(scores)
        self.distances = Kept(distances)
        self._owners: tuple = ()
        self._lock = threading.Lock()

    def bind(self, bundle, ref) -> "RecommendMemo":
        """This memo for ``bundle`` and ``ref``: what it kept for other ones is forgotten."""
        with self._lock:
            if len(self._owners) != 2 or self._owners[0] is not bundle \
                    or self._owners[1] is not ref:
                self.scores.clear()
                self.distances.clear()
                self._owners = (bundle, ref)  # held: their ids cannot be reused meanwhile
        return self


def freeze(scores):
    """``scores`` with every column unwritable and marked shared (it is about to be
    shared: its subsets are then kept too); returned."""
    for v in scores.cols.values():
        if hasattr(v, "flags"):
            v.flags.writeable = False
    scores.shared = True
    return scores


__all__ = ["DEFAULT_DISTANCES", "DEFAULT_SCORES", "Kept", "RecommendMemo", "freeze"]
