"""The ``unset NAME`` commands of a batch script, read by the rules its assignments follow.

An ``unset`` took a variable from every later launch wherever it stood (s46 review RV8: in
``( unset HPCDS1MPI_PRECISION; ./prep )``, in a function that only an EXIT trap calls, in an
``if`` branch, the script's precision was read as not said). :class:`Unsets` records each one
as an :class:`~hpcds1mpi.launch.job_script.Unset` that
:class:`~hpcds1mpi.launch.script_scope.Subshells` ends with its subshell, as it ends an
assignment; one in a function body where the function is called (a trap's handler never is,
before the job ends), and one under a condition marked so, which may leave the variable set.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hpcds1mpi.launch.job_script import Unset
from hpcds1mpi.launch.script_scope import CLOSERS, OPENERS, compound_word
from hpcds1mpi.launch.shell_functions import definition_head

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.launch.shell_words import Word

#: The compound commands whose body may not run (or runs as one of several branches).
_CONDITIONS = frozenset({"if", "case", "while", "until", "for", "select"})


class Unsets:
    """The compound commands and function bodies open where the script reader is, and the
    unsets each function's body runs, for :meth:`command` to record each ``unset`` in
    ``found`` (the script's :attr:`~hpcds1mpi.launch.job_script.JobScript.unsets`, which
    :class:`~hpcds1mpi.launch.script_scope.Subshells` ends)."""

    def __init__(self, found: list[Unset]) -> None:
        self.found = found
        self._frames: list[str] = []  # an opener word, or "()name" for a function body
        self._bodies: dict[str, list[tuple[str, int, bool]]] = {}  # (name, line, conditional)
        self._named = ""  # `run()` alone: its body opens on a later line

    def command(self, whole: list["Word"], command: list["Word"], before: str,
                number: int) -> None:
        """Read a simple command: ``whole`` as written, ``command`` the words it runs (past a
        function's head, keywords and assignments), ``before`` the separator before it."""
        head = compound_word(whole)
        definition = definition_head([w.raw for w in whole])
        if definition and definition[2] == "{" or head == "{" and self._named:
            self._frames.append("()" + (definition[0] if definition else self._named))
        elif head in OPENERS:
            self._frames.append(head)
        self._named = definition[0] if definition and not definition[2] else ""
        conditional = before in ("&&", "||") or bool(_CONDITIONS & set(self._inner()))
        if command and command[0].raw == "unset" and "-f" not in [w.raw for w in command]:
            self._run([(w.text, number, conditional) for w in command[1:]
                       if w.raw[:1] != "-"], command[0].start)
        elif command and command[0].raw in self._bodies:  # a call runs its body's unsets
            self._run([(name, line, conditional or was)
                       for name, line, was in self._bodies[command[0].raw]], command[0].start)
        if head in CLOSERS and self._frames:
            self._frames.pop()

    def _inner(self) -> list[str]:
        """The frames open inside the innermost function body (all where none is open)."""
        at = max((k for k, frame in enumerate(self._frames) if frame.startswith("()")),
                 default=-1)
        return self._frames[at + 1:]

    def _run(self, unsets: list[tuple[str, int, bool]], at: int) -> None:
        """Unsets run at text offset ``at``: kept for the function being defined, if any,
        else recorded there."""
        body = next((f[2:] for f in reversed(self._frames) if f.startswith("()")), None)
        if body is not None:
            self._bodies.setdefault(body, []).extend(unsets)
            return
        self.found.extend(Unset(name, "", None, line, (at, at), conditional=conditional)
                          for name, line, conditional in unsets)


__all__ = ["Unsets"]
