"""A job script's shell lines read as a shell runs them, for the programs they run
(:mod:`~hpcds1mpi.decide.work_after_launch`): ``\\``-continued lines joined, here-document
bodies and comments left out, each line split into its simple commands (command
substitutions' first) without their redirections."""

from __future__ import annotations

import re

#: The heredoc operator and its delimiter, as the script reader finds it.
_HEREDOC_RE = re.compile(r"(?<!<)<<(?!<)(-?)\s*['\"]?([A-Za-z_]\w*)['\"]?")
#: A redirection operator whose file is the next word (``>``, ``2>>``, ``<<``).
_BARE_REDIRECT_RE = re.compile(r"(\d*|&)(>>?|<|<<-?|<<<)")


def lines_after(text: str, first: int, last: int):
    """(line number, text) of each shell line after line ``last``, ``\\``-continued lines
    joined, here-document bodies (one opened on lines ``first``..``last`` included) skipped,
    comments cut."""
    from hpcds1mpi.launch.shell_words import comment_start

    lines = text.split("\n")
    heredoc, k = None, first - 1
    while k < len(lines):
        number, line = k + 1, lines[k].rstrip("\r")
        k += 1
        if heredoc is not None:
            if (line.lstrip("\t") if heredoc[1] else line) == heredoc[0]:
                heredoc = None
            continue
        while line.endswith("\\") and k < len(lines):
            line, k = line[:-1] + " " + lines[k].rstrip("\r"), k + 1
        line = line[:comment_start(line, anywhere=False)] if "#" in line else line
        if m := "<<" in line and _HEREDOC_RE.search(line):
            heredoc = (m.group(2), bool(m.group(1)))
        if number > last and line.strip():
            yield number, line


def line_commands(text: str) -> list[list[str]]:
    """The simple commands of a line (its words, split where sh splits them); one
    unsplittable (an unbalanced quote) is one command of its words as they stand. The
    commands of its ``$(...)`` / backtick substitutions come first: they run before it
    (``RESULT=$(python3 summarize.py)`` runs a program; s42 tester F1)."""
    from hpcds1mpi.errors import ConfigError
    from hpcds1mpi.launch.shell_words import words

    inner = [c for sub in _substitutions(text) for c in line_commands(sub)]
    try:
        return inner + [[w.text if w.text else w.raw for w in words(text, shell=True)]]
    except ConfigError:
        return inner + [text.split()]


def _substitutions(text: str) -> list[str]:
    """The texts of the outermost command substitutions in ``text`` (``$(...)``, backticks),
    outside single quotes, where they run; ``$((...))`` is arithmetic, no command."""
    found, k, quote = [], 0, ""
    while k < len(text):
        c = text[k]
        if c == "\\" and quote != "'":
            k += 2
            continue
        if quote != '"' and c == "'":
            quote = "" if quote else "'"
        elif quote == "'":
            pass
        elif c == '"':
            quote = "" if quote else '"'
        elif c == "`" and (end := text.find("`", k + 1)) > 0:
            found.append(text[k + 1:end])
            k = end
        elif text.startswith("$(", k) and not text.startswith("$((", k):
            depth, end = 0, k + 1
            while end < len(text):
                depth += {"(": 1, ")": -1}.get(text[end], 0)
                if depth == 0:
                    break
                end += 1
            found.append(text[k + 2:end])
            k = end
        k += 1
    return found


def simple_commands(commands: list[list[str]]):
    """(words without redirections, the separator after them) of each simple command among
    ``commands`` (each a line's words, separators among them)."""
    from hpcds1mpi.launch.script_options import REDIRECT_RE, SHELL_STOP

    for tokens in commands:
        command: list[str] = []
        for word in [*tokens, ";"]:
            if word not in SHELL_STOP and word != ";;":
                command.append(word)
                continue
            yield _without_redirections(command, REDIRECT_RE), word
            command = []


def _without_redirections(command: list[str], redirect: re.Pattern) -> list[str]:
    """A simple command's words without its redirections (``> log``, ``2>&1``, ``<in``)."""
    out, target = [], False
    for word in command:
        if target:
            target = False
        elif redirect.match(word):
            target = bool(_BARE_REDIRECT_RE.fullmatch(word))  # its file is the next word
        else:
            out.append(word)
    return out


__all__ = ["line_commands", "lines_after", "simple_commands"]
