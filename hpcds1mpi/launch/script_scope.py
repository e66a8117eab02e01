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
    removes the name), as a read-only mapping; at text offset ``at``, those of a subshell
    closed before it left out (s45 S1)."""

    def __init__(self, base: dict, settings: list, count: int, at: int | None = None):
        self._base, self._count, self._settings, self._at = base, count, settings, at
        self._index = _index(settings)

    def _lookup(self, name: str) -> tuple[bool, str | None]:
        found = self._index.get(name)
        k = -1 if found is None else bisect_left(found[0], self._count) - 1
        while k >= 0:
            setting = self._settings[found[0][k]]
            if self._at is None or setting.reaches(self._at):
                value = found[1][k]
                return value is not None, value
            # on to the assignment its subshell hid: one step per subshell left, never
            # one per sibling subshell before it
            k = bisect_left(found[0], setting.subshell[0]) if setting.subshell[0] >= 0 else -1
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


class Subshells:
    """The subshells open where the script reader is, so that each one's assignments end with
    it, as bash's do (s45 S1: ``( export OMP_NUM_THREADS=8; ./prep )`` had set the threads of
    the ``srun`` after it). Per open subshell: how many of the script's assignments came
    before it, and for each name it assigns, the value and the assignment (its place in the
    script's list, -1 for none) it had before, kept at its first assignment there: leaving
    costs what the subshell assigned, not the whole scope."""

    def __init__(self) -> None:
        self._open: list[tuple[int, dict[str, tuple[str | None, int]]]] = []
        self._last: dict[str, int] = {}  # name -> the place of its assignment that holds

    def enter(self, times: int, settings: list) -> None:
        """``times`` subshells open (before the command that opens them runs)."""
        self._open.extend((len(settings), {}) for _ in range(times))

    def assigned(self, scope: dict, name: str, place: int) -> None:
        """The script assigns ``name`` (its assignment ``place`` in the list), ``scope`` as
        it was before."""
        if self._open and name not in self._open[-1][1]:
            self._open[-1][1][name] = (scope.get(name), self._last.get(name, -1))
        self._last[name] = place

    def leave(self, times: int, scope: dict, settings: list, at: int) -> None:
        """``times`` subshells close at text offset ``at``: ``scope`` gets back what each
        changed, and the assignments made in them end there, each naming the one it hid
        (:class:`~hpcds1mpi.launch.job_script.Setting`'s ``subshell``). A closer with none
        open here (a ``case`` pattern's ``)``) changes nothing."""
        for _ in range(min(times, len(self._open))):
            count, before = self._open.pop()
            for name, (value, place) in before.items():
                if value is None:
                    scope.pop(name, None)
                else:
                    scope[name] = value
                self._last[name] = place
            for setting in settings[count:]:
                setting.subshell = setting.subshell or (before[setting.name][1], at)
