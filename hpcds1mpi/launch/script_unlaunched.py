"""A job script whose program is run by no recognised launch line.

A script without ``srun`` / ``mpirun`` / ``mpiexec`` / ``aprun`` / ``ibrun`` may still run an
MPI program that starts its own ranks: GPAW's ``gpaw -P 2 python h2.py`` runs ``mpiexec``
itself (s29 tester B1). Its rank count is then in its own arguments, which new directives do
not change, so ``advise`` keeps the layout (:func:`layout_refusal`) and names the line that
runs the program (:func:`program_line`) instead of saying nothing was found.
"""

from __future__ import annotations

import re
import shlex
from typing import TYPE_CHECKING

from hpcds1mpi.launch.exec_wrappers import program_index
from hpcds1mpi.launch.wrapper_program import SETUP_COMMANDS

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.launch.job_script import JobScript

#: The launchers a launch line starts with, as the messages name them.
LAUNCHERS_SAID = "srun / mpirun / mpiexec / aprun / ibrun"
#: Words that open or close a control structure (the command is the next one).
_CONTROL = frozenset(("if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done",
                      "case", "esac", "{", "}", "(", ")", "function", "select", "!"))
#: Shell words before a command that run it (the program is the next word); exec wrappers
#: (``env``, ``time``, ``nice``, ...) are read by :mod:`~hpcds1mpi.launch.exec_wrappers`.
_PREFIXES = frozenset(("exec", "command", "builtin"))
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
#: A redirection word (``> out``, ``2>&1``, ``<in``): the command's words end there.
_REDIRECT = re.compile(r"^[0-9&]*[<>]")
#: The most characters of a command shown in a message.
SHOWN = 60


def program_line(script: "JobScript") -> tuple[int, str] | None:
    """(line, the command as written on one line, cut to :data:`SHOWN` characters) of the
    last command after the directives that runs a program (set-up commands, assignments and
    control words skipped); None when there is none."""
    found = None
    for number, text in _logical_lines(script):
        try:
            tokens = shlex.split(text, comments=True)
        except ValueError:
            continue
        command = _command(tokens)
        if command:
            shown = " ".join(command)
            found = (number, shown if len(shown) <= SHOWN else shown[:SHOWN - 3] + "...")
    return found


def no_launch(script: "JobScript") -> str:
    """"no launch line (srun / ...) was recognised (line 8 runs `gpaw -P 2 ...`)": the phrase
    every message about such a script starts with."""
    found = program_line(script)
    ran = f" (line {found[0]} runs `{found[1]}`)" if found else " and no line runs a program"
    return f"no launch line ({LAUNCHERS_SAID}) was recognised{ran}"


def unlaunched_note(script: "JobScript") -> str:
    """The note for a script read from its directives alone."""
    return (f"{no_launch(script)}; the program may start its own ranks, so the layout is read "
            "from the directives alone")


def layout_refusal(script: "JobScript") -> str:
    """Why ``--rewrite`` does not change the layout of a script without a launch line (one
    line): the program's own rank count would stay as written (``gpaw -P 2`` in a 1-task job
    fails with "not enough slots")."""
    return (f"--rewrite refused: {no_launch(script)}: a program that starts its own ranks "
            "keeps its own rank count, so a new layout could leave it without slots; launch "
            "it with srun or mpirun (or change its rank count and the directives together by "
            "hand) and run advise again")


def _logical_lines(script: "JobScript"):
    """(first line number, text) of each command line from the first command on,
    ``\\``-continued lines joined, blank and comment lines left out."""
    lines = script.text.split("\n")
    k = (script.first_command or len(lines) + 1) - 1
    while k < len(lines):
        number, text = k + 1, lines[k].rstrip("\r")
        while text.endswith("\\") and k + 1 < len(lines):
            k += 1
            text = text[:-1] + " " + lines[k].rstrip("\r")
        k += 1
        if text.strip() and not text.lstrip().startswith("#"):
            yield number, text


def _command(tokens: list[str]) -> list[str] | None:
    """The program command of a line's words (the first simple command that runs a
    program), or None."""
    start = 0
    for k, word in enumerate(tokens + [";"]):
        if word not in (";", "&&", "||", "|", "&"):
            continue
        words = tokens[start:k]
        start = k + 1
        while words and (words[0] in _CONTROL or words[0] in _PREFIXES
                         or _ASSIGNMENT.match(words[0])):
            words = words[1:]
        words = words[:next((i for i, w in enumerate(words) if _REDIRECT.match(w)), None)]
        words = words[program_index(words):]  # past `env X=1`, `nice -n 5`, `time -p`
        if words and words[0] not in SETUP_COMMANDS:
            return words
    return None
