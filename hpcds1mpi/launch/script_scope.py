"""The variables a batch script has set at one of its lines, looked up without copying them.

A launch line's scope (:attr:`~hpcds1mpi.launch.job_script.Launch.scope`) was a dict rebuilt
from every assignment before the line each time it was asked for: a script that alternates
``v=...`` and ``srun`` lines cost launch lines x assignments (22 s for ``advise`` at 256 kB,
over 200 s at 1 MB; s32 fixer S, once scripts of up to Slurm's 4 MiB are read). Here one index
per script (each name's assignments in order) answers a name at a line by bisection, and a
line's scope is a read-only view of it.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator, Mapping

#: The indexes of the last few scripts' assignment lists: (the list, its length when indexed,
#: name -> (positions, values)). A few: a command reads one script at a time.
_INDEXES: list[tuple[list, int, dict]] = []
_KEPT = 4


def _index(settings: list) -> dict[str, tuple[list[int], list[str | None]]]:
    for kept, length, index in _INDEXES:
        if kept is settings and length == len(settings):
            return index
    index: dict[str, tuple[list[int], list[str | None]]] = {}
    for position, setting in enumerate(settings):
        positions, values = index.setdefault(setting.name, ([], []))
        positions.append(position)
        values.append(setting.resolved)
    _INDEXES.insert(0, (settings, len(settings), index))
    del _INDEXES[_KEPT:]
    return index


class ScopeView(Mapping):
    """The variables known before assignment ``count`` of ``settings`` (the scheduler's
    ``base`` ones, then each assignment in order; an assignment whose value is not known
    removes the name), as a read-only mapping."""

    def __init__(self, base: dict, settings: list, count: int):
        self._base, self._count = base, count
        self._index = _index(settings)

    def _lookup(self, name: str) -> tuple[bool, str | None]:
        found = self._index.get(name)
        if found is not None:
            at = bisect_left(found[0], self._count) - 1
            if at >= 0:
                value = found[1][at]
                return value is not None, value
        return name in self._base, self._base.get(name)

    def __getitem__(self, name: str) -> str:
        known, value = self._lookup(name)
        if not known:
            raise KeyError(name)
        return value

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self._lookup(name)[0]

    def __iter__(self) -> Iterator[str]:
        return (name for name in {**dict.fromkeys(self._base), **dict.fromkeys(self._index)}
                if name in self)

    def __len__(self) -> int:
        return sum(1 for _ in self)
