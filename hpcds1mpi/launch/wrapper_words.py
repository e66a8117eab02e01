"""A shell wrapper's line split into words as sh splits it, before anything is expanded.

The reader of :mod:`~hpcds1mpi.launch.wrapper_program` takes each line's words from here:
quotes removed, ``$(...)`` / ``${...}`` / backquote substitutions kept as one word, and the
operators (``;``, ``&&``, ``|``, ``(``...) as :class:`Op`, told apart from a quoted word of the
same text; an array subscript's parentheses (``a[((j++))]=x``, FreeFem++'s ``ff-mpirun``: s46
tester H8) are part of its word.
"""

from __future__ import annotations

import re

#: A word that opens an array subscript left open (``a[((j``).
_SUBSCRIPT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\[[^]]*$")


class Op(str):
    """An operator token (``;``, ``&&``, ``|``, ``(``...), told apart from a quoted word with
    the same text (``find -exec rm {} \\;``)."""


def tokens(line: str) -> list[str] | None:
    """One line's words, quotes removed, and its operators as :class:`Op`, as sh splits them
    before expanding anything (``$(dirname "$0")`` reads ``$(dirname $0)``); None where a quote,
    ``$(`` or ``${`` is left open."""
    out: list[str] = []
    word: list[str] = []
    started, i, n = False, 0, len(line)
    while i <= n:
        c = line[i] if i < n else " "
        redirected = c in "&|" and "".join(word).endswith(("<", ">")) or (
            c == "&" and line[i + 1:i + 2] == ">")  # `2>&1`, `>|f`, `&>log`: one word
        # an array subscript's parentheses are arithmetic, no operators (`a[((j++))]=x`)
        subscript = c in "()" and _SUBSCRIPT.match("".join(word))
        if c in " \t" or c in ";&|()" and not redirected and not subscript \
                or (c == "#" and not started):
            if started:
                out.append("".join(word))
            word, started = [], False
            if c == "#" or i == n:
                break
            if c in ";&|()":
                op = line[i:i + 2] if line[i:i + 2] in ("&&", "||", ";;", "|&") else c
                out.append(Op("|" if op == "|&" else op))
                i += len(op)
            else:
                i += 1
            continue
        part = _part(line, i)
        if part is None:
            return None
        word.append(part[0])
        started, i = True, part[1]
    return out


def _part(line: str, i: int) -> tuple[str, int] | None:
    """The piece of a word at ``line[i]`` (a character, an escape, a quoted string, a ``$(``,
    ``${`` or backquote substitution) with its quotes removed, and where the next one starts."""
    c = line[i]
    if c == "\\":
        return line[i + 1:i + 2], i + 2
    if c == "'":
        end = line.find("'", i + 1)
        return None if end < 0 else (line[i + 1:end], end + 1)
    if c == "`" or line.startswith(("$(", "${"), i):
        return _substitution(line, i)
    if c != '"':
        return c, i + 1
    text, j = [], i + 1
    while j < len(line) and line[j] != '"':
        if line[j] == "\\" and j + 1 < len(line):
            text.append(line[j + 1] if line[j + 1] in '$`"\\' else line[j:j + 2])
            j += 2
            continue
        part = _substitution(line, j) if line[j] == "`" or line.startswith(("$(", "${"), j) \
            else (line[j], j + 1)
        if part is None:
            return None
        text.append(part[0])
        j = part[1]
    return None if j >= len(line) else ("".join(text), j + 1)


def _substitution(line: str, i: int) -> tuple[str, int] | None:
    """A ``$(...)``, ``${...}`` or backquote substitution at ``line[i]``, kept as written less
    its quotes, and where the text after it starts."""
    if line[i] == "`":
        end = i + 1
        while end < len(line) and line[end] != "`":
            end += 2 if line[end] == "\\" else 1
        return None if end >= len(line) else (
            line[i:end + 1].replace('"', "").replace("'", ""), end + 1)
    opener, closer = line[i + 1], ")" if line[i + 1] == "(" else "}"
    text, depth, j = ["$"], 0, i + 1
    while j < len(line):
        c = line[j]
        if c in "'\"\\" or (c == "$" and line[j + 1:j + 2] in ("(", "{")):
            part = _part(line, j) if c != "$" else _substitution(line, j)
            if part is None:
                return None
            text.append(part[0])
            j = part[1]
            continue
        depth += (c == opener) - (c == closer)
        text.append(c)
        j += 1
        if depth == 0:
            return "".join(text), j
    return None
