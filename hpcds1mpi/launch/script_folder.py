"""The folder a job script's launch line runs in, followed through the script's ``cd`` lines.

advise reads a relative program (``./app``), and a launcher named by a relative path, in the
folder the job is in at that line: the submit folder (or ``--chdir``) where the script starts,
moved by each ``cd`` before it. A ``cd`` is a command word, not the letters in a message
(``echo "... edit the cd line"``), and a folder this machine has (an absolute one, or one
relative to a known folder) is followed, not given up on (s39 tester D8: every script
``recommend --emit`` writes for a program swept without ``--workdir`` enters its sweep's
folder and carries such a message, and advise's launcher warning was silently skipped on
them). A folder named by a variable, ``cd -`` or ``popd`` is not known here: None.
"""

from __future__ import annotations

import functools
import os
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.launch.job_script import JobScript, Launch

#: The commands that move the job's folder.
_MOVES = ("cd", "pushd", "popd")
#: The job's submit folder, by the variables Slurm and PBS set.
_SUBMIT_DIRS = ("$SLURM_SUBMIT_DIR", "${SLURM_SUBMIT_DIR}", "$PBS_O_WORKDIR", "${PBS_O_WORKDIR}")
#: ``${VAR:-default}`` (and ``-``, ``:=``, ``=``) read as ``${VAR}``: the job sets the variable,
#: so the default never applies (s31 tester P2: recommend's own ``cd "${PBS_O_WORKDIR:-.}"``
#: was read as a move elsewhere, and its launcher went unchecked).
_DEFAULTED = re.compile(r"\$\{(\w+):?[-=][^}]*\}")
#: Words after which a command starts: a group, or a keyword of a compound command.
_KEYWORDS = frozenset(("{", "(", "!", "then", "do", "else", "elif", "if", "while", "until",
                       "time"))
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"', "a": "\a",
            "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "v": "\v", "?": "?"}
#: One escape of ``$'...'``: its hex and octal forms take the digits bash takes.
_ANSI_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}"
                          r"|[0-7]{1,3}|c.|.)", re.S)


def _as_bash_writes(code: int) -> str:
    """Code point ``code`` as bash writes it (UTF-8, stretched to 6 bytes past U+10FFFF as
    bash does), read back as :func:`os.fsdecode` reads a file name."""
    if code < 0x80 or (code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF):
        return chr(code)
    size = next(n for n, top in ((2, 0x7FF), (3, 0xFFFF), (4, 0x1FFFFF), (5, 0x3FFFFFF),
                                 (6, 0x7FFFFFFF)) if code <= top)
    lead = (0xFF00 >> size) & 0xFF
    tail = [0x80 | (code >> 6 * k) & 0x3F for k in range(size - 1)][::-1]
    return "".join(chr(0xDC00 + b) for b in [lead | code >> 6 * (size - 1), *tail])


def _ansi_c(body: str) -> str:
    """The text of bash's ``$'...'`` whose inside is ``body``, read as bash reads it: an
    escape with no digits (``\\x``, ``\\u``) is kept as written, a raw byte (``\\xff``) or a
    code point no UTF-8 holds (``\\U7fffffff``) kept as the bytes bash writes, as
    :func:`os.fsdecode` keeps them (s39 review: such a word had stopped advise)."""
    def one(m: re.Match) -> str:
        code = m.group(1)
        if code[0] in "01234567":
            byte = int(code, 8) & 0xFF
            return chr(0xDC00 + byte) if byte >= 0x80 else chr(byte)
        if code[0] == "x" and len(code) > 1:
            byte = int(code[1:], 16)
            return chr(0xDC00 + byte) if byte >= 0x80 else chr(byte)
        if code[0] in "uU" and len(code) > 1:
            return _as_bash_writes(int(code[1:], 16))
        if code[0] == "c" and len(code) > 1:
            return chr(ord(code[1].upper()) & 0x1F)
        return _ESCAPES.get(code, "\\" + code)
    return _ANSI_ESCAPE.sub(one, body)


def _word(line: str, at: int) -> tuple[str, bool, int]:
    """(the shell word starting at ``line[at]``, quotes removed and bash's ``$'...'`` read;
    whether it is that text as written, with no ``$``, backquote or glob the shell expands;
    the offset after it)."""
    out, literal, i = [], True, at
    while i < len(line) and line[i] not in " \t;&|<>":
        if line.startswith("$'", i):
            j = i + 2
            while j < len(line) and line[j] != "'":
                j += 2 if line[j] == "\\" else 1
            out.append(_ansi_c(line[i + 2:j]))
            i = j + 1
        elif line[i] in "'\"":
            end = line.find(line[i], i + 1)
            end = len(line) if end < 0 else end
            literal = literal and not (line[i] == '"' and any(c in line[i + 1:end]
                                                               for c in "$`"))
            out.append(line[i + 1:end])
            i = end + 1
        elif line[i] == "\\" and i + 1 < len(line):
            out.append(line[i + 1])
            i += 2
        else:
            literal = literal and line[i] not in "$`*?["
            out.append(line[i])
            i += 1
    return "".join(out), literal, i


def _moves(line: str) -> list[tuple[str, tuple[str, bool] | None]]:
    """The (command, (folder word, whether literal) or None) of each ``cd`` / ``pushd`` / ``popd`` that ``line``
    runs as a command: a word where a command starts (not inside quotes, an ``echo``'s
    text or a ``#`` comment)."""
    found: list = []
    i, command_next, pending = 0, True, False
    while i < len(line):
        if line[i] in " \t":
            i += 1
        elif line[i] in ";&|<>":  # a redirection's word is a file, not the folder
            command_next, pending = line[i] in ";&|", False
            i += 1
        elif line[i] == "#":
            break
        else:
            word, literal, i = _word(line, i)
            if pending and not (word.startswith("-") and word != "-"):  # cd -P DIR
                found[-1], pending = (found[-1][0], (word, literal)), False
            elif command_next and word in _MOVES:
                found.append((word, None))
                pending = True
            command_next = word in _KEYWORDS or (command_next and "=" in word
                                                 and not word.startswith("="))
    return found


@functools.lru_cache(maxsize=4)
def folder_moves(text: str) -> tuple[tuple[int, str, tuple[str, bool] | None], ...]:
    """(line number, command, (folder word, whether literal) or None) of each move of a script's ``text``, read once
    (a script of thousands of launch lines had been rescanned for each)."""
    moves = []
    for number, ln in enumerate(text.split("\n"), start=1):
        if ln.strip() and not ln.lstrip().startswith("#"):
            moves += [(number, *move) for move in _moves(ln)]
    return tuple(moves)


def _moved_to(command: str, word: tuple[str, bool] | None, folder: str | None,
              cwd: str) -> str | None:
    """The folder after ``command word`` in ``folder`` (None: not known here); ``cwd``: the
    submit folder."""
    if command == "popd" or (word is not None and word[0] == "-"):
        return None
    if word is None:
        return os.path.expanduser("~")
    target, literal = word
    if not literal:
        return cwd if _DEFAULTED.sub(r"${\1}", target) in _SUBMIT_DIRS else None
    if "\0" in target:
        return None
    target = os.path.expanduser(target) if target.startswith("~") else target
    if not os.path.isabs(target):
        if folder is None:
            return None
        target = os.path.join(folder, target)
    target = os.path.normpath(target)
    return target if os.path.isdir(target) else None


def launch_folder(script: "JobScript", launch: "Launch", cwd: str) -> str | None:
    """The folder a relative program of ``launch`` is found in: the submit folder (``cwd``)
    or ``--chdir`` (PBS: none known, the job starts in the home folder), moved by each ``cd``
    before the line; None where that is not known here."""
    chdir = script.directives.get("chdir")
    if chdir is not None and chdir.value:
        folder = os.path.join(cwd, os.path.expanduser(chdir.value))
    else:
        folder = cwd if script.scheduler == "slurm" else None
    for number, command, word in folder_moves(script.text):
        if number >= launch.line:
            break
        folder = _moved_to(command, word, folder, cwd)
    return folder


def unknown_move(script: "JobScript", launch: "Launch") -> int | None:
    """The line of the last ``cd`` before ``launch``, where the folder it leads to is not
    known here (:func:`launch_folder` is None after a move); None where no move came first."""
    before = [number for number, _, _ in folder_moves(script.text) if number < launch.line]
    return before[-1] if before else None
