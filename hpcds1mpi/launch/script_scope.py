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

from hpcds1mpi.launch.script_options import ARM_ENDS  # after them ``esac`` ends the ``case``

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


#: The words that open a compound command and those that close one: bash runs the whole in a
#: subshell where it is a pipeline stage or runs in the background (``{ ...; } &``, ``echo 2
#: | while read n; do ...; done``: s45 tester F3). Inside ``case`` the frame on top is none of
#: a subshell's, so a pattern's ``)`` closes nothing (s45 review RV1: ``big)`` alone on its line
#: ended the subshell around the ``case``).
OPENERS = ("{", "while", "until", "for", "select", "if", "case")
CLOSERS = ("}", "done", "fi", "esac")
#: The separators that make the commands beside them subshells: a pipe's stages (every one,
#: as bash runs them without lastpipe) and what ``&`` sends to the background.
PIPES = ("|", "|&")
APART = PIPES + ("&",)
#: The separators that join commands into one list, which ``&`` at its end sends to the
#: background whole: ``export X=1 && ./a &`` runs the export in the background too.
JOINED = PIPES + ("&&", "||")


def compound_word(command: list) -> str:
    """The word that tells whether a simple command ``command`` (shell words) opens or closes
    a compound one: ``{`` for a function's head with its body opened (``run_sim() {``),
    ``esac`` where it ends a ``case`` after an arm (``big) srun ./app ;; esac``), else its
    first word past a subshell's ``(``."""
    from hpcds1mpi.launch.shell_functions import definition_head, subshell_words

    head = definition_head([w.raw for w in command])
    if head and head[2] == "{":
        return "{"
    raws = [w.raw for w in subshell_words(command)]
    ends = any(raw == "esac" and (k == 0 or raws[k - 1] in ARM_ENDS)
               for k, raw in enumerate(raws))
    if raws[:1] == ["case"]:  # a one-line ``case ... esac`` opens nothing
        return "" if ends else "case"
    return "esac" if ends else (raws[0] if raws else "")


def lists_apart(commands: list[tuple]) -> dict[int, int]:
    """The lists of ``commands`` (a line's, as ``(words, stdin, before, after)``) that ``&``
    sends to the background, two commands or more joined by :data:`JOINED`: first index ->
    last. Only simple commands whose subshells' parentheses balance within the list: a
    compound command's frame is :class:`Subshells`' own rule (s46: ``export X=1 && ./a &``
    had set X for the launch after it)."""
    from hpcds1mpi.launch.shell_functions import subshell_edges

    found, first = {}, 0
    while first < len(commands):
        last = first
        while commands[last][3] in JOINED and last + 1 < len(commands):
            last += 1
        depth, flat = 0, commands[last][3] == "&" and last > first
        for command, *_ in commands[first:last + 1] if flat else ():
            opened, closed = subshell_edges(command)
            depth += opened - closed
            flat = flat and depth >= 0 and compound_word(command) not in OPENERS + CLOSERS
        if flat and depth == 0:
            found[first] = last
        first = last + 1
    return found


class Subshells:
    """The subshells open where the script reader is, so that each one's assignments end with
    it, as bash's do (s45 S1: ``( export OMP_NUM_THREADS=8; ./prep )`` had set the threads of
    the ``srun`` after it; s45 tester F3: a pipeline stage, ``X=2 &``, ``{ ...; } &``). Per
    open subshell: how many of the script's assignments came before it, for each name it
    assigns the value and the assignment (its place in the script's list, -1 for none) it had
    before, kept at its first assignment there — leaving costs what the subshell assigned, not
    the whole scope —, and its kind: ``(``; ``{`` for a compound command, a subshell only if
    it closes before ``|`` or ``&``; ``|`` for one that a pipe opened; ``&`` for one simple
    command apart; ``&&`` for a list apart (:func:`lists_apart`). The script's ``unset``
    commands (``unsets``, :mod:`~hpcds1mpi.launch.script_unsets`) end with their subshell by
    the same rule (s46 review RV8: ``( unset X; ./prep )`` had removed X for the launch)."""

    def __init__(self, unsets: list | None = None) -> None:
        #: per frame: (how many assignments and unsets came before it), its record, its kind
        self._open: list[tuple[tuple[int, int], dict[str, tuple[str | None, int]], str]] = []
        self._last: dict[str, int] = {}  # name -> the place of its assignment that holds
        self._unsets = [] if unsets is None else unsets

    def _before(self, settings: list) -> tuple[int, int]:
        return len(settings), len(self._unsets)

    def enter(self, times: int, settings: list) -> None:
        """``times`` subshells open (before the command that opens them runs)."""
        self._open.extend((self._before(settings), {}, "(") for _ in range(times))

    def start(self, command: list, before: str, after: str, settings: list) -> None:
        """Before simple command ``command`` (shell words; ``before`` / ``after`` the separators
        around it, "" for none) runs: a compound command it opens starts a frame; a simple one
        that is a pipeline stage or runs in the background is a subshell of its own."""
        head = compound_word(command)
        if head in OPENERS:
            self._open.append((self._before(settings), {}, "|" if before in PIPES else "{"))
        elif head not in CLOSERS and (before in PIPES or after in APART):
            self._open.append((self._before(settings), {}, "&"))

    def finish(self, command: list, after: str, scope: dict, settings: list, at: int) -> None:
        """After simple command ``command`` (ending at text offset ``at``) ran: a subshell of
        its own ends; a compound command it closes ends as a subshell where a pipe opened it
        or ``|`` / ``&`` follows it, else its frame's record joins the one around it."""
        head, kind = compound_word(command), self._open[-1][2] if self._open else ""
        if kind == "&" and head not in OPENERS + CLOSERS:
            self._leave(scope, settings, at)
        elif head in CLOSERS and kind in ("{", "|"):
            if kind == "|" or after in APART:
                self._leave(scope, settings, at)
            else:
                _, before, _ = self._open.pop()
                if self._open:  # what the one around it gets back, should it be a subshell
                    for name, was in before.items():
                        self._open[-1][1].setdefault(name, was)

    def apart(self, settings: list) -> None:
        """A list that runs in the background starts (:func:`lists_apart`)."""
        self._open.append((self._before(settings), {}, "&&"))

    def apart_ends(self, scope: dict, settings: list, at: int) -> None:
        """That list ends at text offset ``at``: its assignments end with it."""
        if self._open and self._open[-1][2] == "&&":
            self._leave(scope, settings, at)

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
        for _ in range(times):
            if not self._open or self._open[-1][2] != "(":
                return  # a closer inside a compound command is none of its frame's
            self._leave(scope, settings, at)

    def _leave(self, scope: dict, settings: list, at: int) -> None:
        """The innermost subshell ends at text offset ``at`` (:meth:`leave`)."""
        (count, unset), before, _ = self._open.pop()
        for name, (value, place) in before.items():
            if value is None:
                scope.pop(name, None)
            else:
                scope[name] = value
            self._last[name] = place
        for setting in settings[count:]:
            setting.subshell = setting.subshell or (before[setting.name][1], at)
        for gone in self._unsets[unset:]:
            gone.subshell = gone.subshell or (-1, at)
