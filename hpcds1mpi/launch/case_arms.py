"""A ``case`` command's arm patterns, which are no commands: ``big) export OMP_NUM_THREADS=4
;;`` runs ``export``, as does the one-line ``case x in x) export OMP_NUM_THREADS=4 ;; esac``.
The script reader read the pattern as the command's first word, so an assignment or a launch
on an arm's line was not read (s46 review RV3); :class:`CaseArms` cuts each pattern off a
line's words, leaving a separator in its place, and keeps track of the ``case`` commands open
across lines."""

from __future__ import annotations

from hpcds1mpi.launch.script_options import ARM_ENDS, SHELL_STOP
from hpcds1mpi.launch.shell_words import Word

#: The words after which a command starts (``case`` and ``esac`` are reserved words there
#: only): a separator, or a reserved word a command follows.
_BEFORE_COMMAND = frozenset({*SHELL_STOP, "then", "do", "else", "elif", "if", "while",
                             "until", "{", "!"})


class CaseArms:
    """The ``case`` commands open where the script reader is, each in one of the states
    ``subject`` (``case`` read), ``in`` (its word read), ``pattern`` (an arm's pattern comes
    next: after ``in`` and after ``;;`` / ``;&`` / ``;;&``) or ``body`` (the arm's
    commands)."""

    def __init__(self) -> None:
        self._open: list[str] = []

    def cut(self, tokens: list[Word]) -> list[Word]:
        """A shell line's words (:func:`~hpcds1mpi.launch.shell_words.words`) with each arm
        pattern on it — ``big)``, ``(x)``, ``a | b)`` — replaced by one ``;`` spanning it."""
        out: list[Word] = []
        pattern: list[Word] = []  # the words of the pattern being read
        for word in tokens:
            state = self._open[-1] if self._open else ""
            starts = not out or out[-1].raw in _BEFORE_COMMAND
            if state == "subject":
                self._open[-1] = "in"
            elif state == "in":
                if word.raw == "in":
                    self._open[-1] = "pattern"
                else:  # no case as read here: leave it to the command reader
                    self._open.pop()
            elif state == "pattern":
                if word.raw == "esac" and not pattern:
                    self._open.pop()
                elif word.raw not in ARM_ENDS:
                    pattern.append(word)
                    if word.raw.endswith(")"):
                        out.append(Word(";", pattern[0].start, word.end, ";"))
                        pattern, self._open[-1] = [], "body"
                    continue
                else:  # no pattern read before it (`x)echo` glued): its words, in order
                    out, pattern = out + pattern, []
            elif state == "body" and word.raw in ARM_ENDS:
                self._open[-1] = "pattern"
            elif state == "body" and starts and word.raw == "esac":
                self._open.pop()
            if starts and word.raw == "case":
                self._open.append("subject")
            out.append(word)
        return out + pattern  # a pattern not closed on its line: read as words, as before


__all__ = ["CaseArms"]
