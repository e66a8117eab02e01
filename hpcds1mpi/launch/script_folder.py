"""The folder a job script's launch line runs in, followed through the script's ``cd`` lines.

advise reads a relative program (``./app``), and a launcher named by a relative path, in the
folder the job is in at that line: the submit folder (or ``--chdir``) where the script starts,
moved by each ``cd`` before it. A ``cd`` is a command word, not the letters in a message
(``echo "... edit the cd line"``), and a folder this machine has (an absolute one, or one
relative to a known folder) is followed, not given up on (s39 tester D8: every script
``recommend --emit`` writes for a program swept without ``--workdir`` enters its sweep's
folder and carries such a message, and advise's launcher warning was silently skipped on
them). A ``cd`` in a subshell (``( cd build && make )``, ``$(cd ..; pwd)``) moves only
that subshell. A folder named by a variable, ``cd -`` or ``popd`` is not known here: None.
"""

from __future__ import annotations

import bisect
import functools
import math
import os
import re
from typing import TYPE_CHECKING, NamedTuple

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
_KEYWORDS = frozenset(("{", "!", "then", "do", "else", "elif", "if", "while", "until",
                       "time"))
#: Where a word ends: a blank, a line end, an operator, a parenthesis.
_WORD_END = " \t\r\n;&|<>()"
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


def _past_quote(text: str, i: int) -> int:
    """The offset after the quote that closes the one at ``text[i]`` (the text's end where
    none does)."""
    j = i + 1
    while j < len(text) and text[j] != text[i]:
        j += 2 if text[i] == '"' and text[j] == "\\" else 1
    return min(j + 1, len(text))


def _past_braces(text: str, i: int) -> int:
    """The offset after the ``}`` that closes the ``${`` at ``text[i]``."""
    depth, j = 0, i + 1
    while j < len(text):
        if text[j] in "'\"":
            j = _past_quote(text, j)
            continue
        depth += {"{": 1, "}": -1}.get(text[j], 0)
        j += 2 if text[j] == "\\" else 1
        if depth == 0:
            return j
    return j


def _word(text: str, at: int) -> tuple[str, bool, int]:
    """(the shell word starting at ``text[at]``, quotes removed and bash's ``$'...'`` read;
    whether it is that text as written, with no ``$``, backquote or glob the shell expands;
    the offset after it). A ``$(`` ends the word: :func:`folder_moves` reads it as the
    subshell it is."""
    out, literal, i = [], True, at
    while i < len(text) and text[i] not in _WORD_END and not text.startswith("$(", i):
        if text.startswith("$'", i):
            j = i + 2
            while j < len(text) and text[j] != "'":
                j += 2 if text[j] == "\\" else 1
            out.append(_ansi_c(text[i + 2:j]))
            i = j + 1
        elif text[i] in "'\"":
            end = _past_quote(text, i)
            inside = text[i + 1:end - 1] if text[end - 1:end] == text[i] else text[i + 1:end]
            literal = literal and not (text[i] == '"' and any(c in inside for c in "$`"))
            out.append(inside)
            i = end
        elif text.startswith("${", i) or text[i] == "`":
            end = _past_braces(text, i) if text[i] == "$" else _past_quote(text, i)
            out.append(text[i:end])
            literal, i = False, end
        elif text.startswith("\\\n", i):
            i += 2
        elif text[i] == "\\" and i + 1 < len(text):
            out.append(text[i + 1])
            i += 2
        else:
            literal = literal and text[i] not in "$`*?["
            out.append(text[i])
            i += 1
    return "".join(out), literal and not text.startswith("$(", i), i


def _past_heredocs(text: str, i: int, heredocs: list[tuple[str, bool]]) -> int:
    """The offset after the bodies of ``heredocs`` (delimiter, whether ``<<-``) starting at
    ``text[i]``: their lines are text, not commands."""
    for delimiter, tabs in heredocs:
        while i < len(text):
            end = text.find("\n", i)
            end = len(text) if end < 0 else end
            line = text[i:end].rstrip("\r")
            i = end + 1
            if (line.lstrip("\t") if tabs else line) == delimiter:
                break
    return min(i, len(text))


class Move(NamedTuple):
    """A ``cd`` / ``pushd`` / ``popd`` a script runs as a command.

    Attributes:
        line: its line; command: which; word: (the folder word, whether literal) or None.
        at: its offset in the script's text.
        undone_at: the offset of the ``)`` of the innermost subshell (``( ... )``, ``$( ... )``)
            it runs in, where the job's folder is back as before it; ``math.inf`` outside
            any; None inside one never closed (its extent not known here).
    """

    line: int
    command: str
    word: tuple[str, bool] | None
    at: int
    undone_at: float | None


@functools.lru_cache(maxsize=4)
def folder_moves(text: str) -> tuple[Move, ...]:
    """Each move of a script's ``text``: a ``cd`` / ``pushd`` / ``popd`` word where a command
    starts (not inside quotes, an ``echo``'s text, a ``#`` comment, a here-document or a
    ``case`` pattern), with the subshell it runs in (s39 review: ``( cd build && make )`` had
    been read as moving the job, and ``(cd build`` not seen at all). Read once (a script of
    thousands of launch lines had been rescanned for each)."""
    starts = [0] + [m.end() for m in re.finditer("\n", text)]
    found: list[list] = []
    #: open subshells ["(", their moves' indices, whether a word goes on after its ")"] and
    #: cases ["case", "head" / "pattern" / "body"]
    frames: list[list] = []
    heredocs: list[tuple[str, bool]] = []
    i, command_next, pending = 0, True, False
    while i < len(text):
        case = frames[-1] if frames and frames[-1][0] == "case" else None
        if text.startswith("\\\n", i) or text[i] in " \t\r":
            i += 2 if text[i] == "\\" else 1
        elif text[i] == "\n":
            i, heredocs = _past_heredocs(text, i + 1, heredocs), []
            command_next, pending = True, False
        elif text[i] == "#":
            i = text.find("\n", i)
            i = len(text) if i < 0 else i
        elif text.startswith(("$(", "<(", ">("), i) or (text[i] == "(" and not (
                case and case[1] == "pattern")):
            if pending:  # cd $(dirname "$0"): a folder not known here
                found[-1][2], pending = (text[i:i + 2], False), False
            word_goes_on = text[i] != "("
            frames.append(["(", [], word_goes_on])
            i += 1 + word_goes_on
            command_next = True
        elif text[i] == "(" or text[i] == ")":
            if text[i] == ")" and frames and frames[-1][0] == "(":
                _, inside, word_goes_on = frames.pop()
                for k in inside:
                    found[k][4] = i
                command_next = not word_goes_on
            elif text[i] == ")" and case is not None:  # a case pattern's end
                case[1], command_next = "body", True
            pending = False
            i += 1
        elif text.startswith("<<", i) and not text.startswith("<<<", i):
            tabs = text.startswith("<<-", i)
            j = i + 2 + tabs
            while j < len(text) and text[j] in " \t":
                j += 1
            delimiter, _, i = _word(text, j)
            heredocs.append((delimiter, tabs))
            command_next = pending = False
        elif text[i] in ";&|<>":  # a redirection's word is a file, not the folder
            if case is not None and text.startswith((";;", ";&"), i):
                case[1] = "pattern"
                i += 3 if text.startswith(";;&", i) else 2
            else:
                command_next = text[i] in ";&|"
                i += 1
            pending = False
        else:
            start = i
            word, literal, i = _word(text, i)
            if case is not None and case[1] != "body":
                if word == "esac" and case[1] == "pattern":
                    frames.pop()
                elif word == "in" and case[1] == "head":
                    case[1] = "pattern"
                command_next = False
                continue
            if pending and not (word.startswith("-") and word != "-"):  # cd -P DIR
                found[-1][2], pending = (word, literal), False
            elif command_next and word in _MOVES:
                inner = next((f for f in reversed(frames) if f[0] == "("), None)
                if inner is not None:
                    inner[1].append(len(found))
                found.append([bisect.bisect_right(starts, start), word, None, start, math.inf])
                pending = True
            elif command_next and word == "case":
                frames.append(["case", "head"])
            elif command_next and word == "esac":
                while frames and frames.pop()[0] != "case":
                    pass
            command_next = word in _KEYWORDS or (command_next and "=" in word
                                                 and not word.startswith("="))
    for frame in frames:  # never closed: how far it reaches is not known here
        for k in frame[1] if frame[0] == "(" else ():
            found[k][4] = None
    return tuple(Move(*move) for move in found)


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


def _moves_before(script: "JobScript", launch: "Launch"):
    """The moves that lead to the folder ``launch`` runs in: each before its launcher word,
    but those of a subshell closed before it (``( cd build && make )``)."""
    for move in folder_moves(script.text):
        if move.at >= launch.span[0]:
            break
        if move.undone_at is None or move.undone_at > launch.span[0]:
            yield move


def launch_folder(script: "JobScript", launch: "Launch", cwd: str) -> str | None:
    """The folder a relative program of ``launch`` is found in: the submit folder (``cwd``)
    or ``--chdir`` (PBS: none known, the job starts in the home folder), moved by each ``cd``
    before it that is still in force there; None where that is not known here (a ``cd`` in
    a subshell whose end is not read here among them)."""
    chdir = script.directives.get("chdir")
    if chdir is not None and chdir.value:
        folder = os.path.join(cwd, os.path.expanduser(chdir.value))
    else:
        folder = cwd if script.scheduler == "slurm" else None
    for move in _moves_before(script, launch):
        folder = None if move.undone_at is None else _moved_to(move.command, move.word,
                                                                 folder, cwd)
    return folder


def unknown_move(script: "JobScript", launch: "Launch") -> int | None:
    """The line of the last ``cd`` before ``launch`` still in force there, where the folder
    it leads to is not known here (:func:`launch_folder` is None after a move); None where no
    move came first."""
    before = [move.line for move in _moves_before(script, launch)]
    return before[-1] if before else None


def written_folder(script: "JobScript", launch: "Launch") -> tuple[str, int] | None:
    """(the folder ``launch`` runs in as the script's ``cd`` lines write it, the line of the
    last of them): relative to the submit folder (``.`` for it) or absolute, whether or not
    this machine has it, for a sweep's ``--workdir`` to read its size from (s44 tester M4);
    None where no ``cd`` comes first or the folder is not known from the text (a variable's,
    ``cd -``, ``popd``, a subshell whose end is not read, a PBS job's home folder start)."""
    chdir = script.directives.get("chdir")
    folder = (os.path.normpath(os.path.expanduser(chdir.value)) if chdir is not None and
              chdir.value else "." if script.scheduler == "slurm" else None)
    line = None
    for move in _moves_before(script, launch):
        line = move.line
        folder = None if move.undone_at is None else _written_move(move, folder)
    return (folder, line) if folder is not None and line is not None else None


def _written_move(move: Move, folder: str | None) -> str | None:
    """The folder after ``move`` from ``folder`` as the text writes it (None: not known)."""
    if move.command == "popd":
        return None
    if move.word is None:
        return os.path.expanduser("~")
    target, literal = move.word
    if not literal:
        return "." if _DEFAULTED.sub(r"${\1}", target) in _SUBMIT_DIRS else None
    if target == "-" or "\0" in target:
        return None
    target = os.path.expanduser(target)
    if os.path.isabs(target):
        return os.path.normpath(target)
    return None if folder is None else os.path.normpath(os.path.join(folder, target))
