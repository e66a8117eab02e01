"""The program a shell wrapper script runs, read from its text without running it.

A ``run.sh`` that sets up and ``exec``s the real program is the common way to start an
application; the MPI library that program loads is the one that counts (s29 tester E1: the
fingerprint of a ``#!/bin/sh`` wrapper's sweep had been the launcher's version line, so its runs
and the kernels' were refused as two machines). Only a program the text names outright is read:
the one its ``exec`` lines name (all the same program), else its last command. A command word
built from variables, a control structure, a second launcher, or text shlex cannot split gives
None: no guess.
"""

from __future__ import annotations

import os
import re

#: Shells whose scripts are read (``#!/bin/sh``, ``#!/usr/bin/env bash``).
SHELLS = re.compile(r"^(sh|bash|dash|ksh|mksh|zsh|ash)$")
#: Lines that set up and run no program: skipped when looking for the last command.
_SETUP = frozenset(("export", "cd", "source", ".", "module", "ml", "set", "ulimit", "echo",
                    "printf", "umask", "unset", "shift", "trap", "wait", "true", ":", "local",
                    "declare", "readonly", "alias", "mkdir", "rm", "cp", "ln", "touch", "date",
                    "hostname", "exit", "spack", "conda"))
#: Words that close or open a control structure: the last command is then not plain text.
_CONTROL = frozenset(("if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done",
                      "case", "esac", "{", "}", "(", ")", ";;", "function", "select"))
#: Words that start a command of their own: the program is the next word.
_PREFIXES = frozenset(("exec", "command", "builtin", "time", "nohup"))
#: Launchers: a wrapper that starts one is a job of its own, not a rank's program.
_LAUNCHERS = re.compile(r"^(mpiexec|mpirun|orterun|srun|aprun|jsrun)(\.\S*)?$")
#: Tokens that end a simple command (as shlex splits them, with spaces around).
_OPERATORS = frozenset(("|", "||", "&&", ";", "&"))
#: How a script names its own folder (after shlex has dropped the quotes).
_OWN_FOLDER = re.compile(r"^(\$\(dirname (-- )?\$\{?0\}?\)|`dirname \$0`|\$\{0%/\*\})")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def is_shell_script(path: str) -> bool:
    """Whether ``path``'s ``#!`` line names a shell (directly or through env)."""
    from hpcds1mpi.launch.shebang import read_shebang

    found = read_shebang(path)
    if found is None:
        return False
    interpreter, argument = found
    if os.path.basename(interpreter) != "env":
        return bool(SHELLS.match(os.path.basename(interpreter)))
    words = [w for w in (argument or "").split() if not w.startswith("-") and "=" not in w]
    return bool(words) and bool(SHELLS.match(os.path.basename(words[0])))


#: Shell wrappers read inside one another at most this deep (a script that runs itself).
DEPTH = 4


def wrapped_program(path: str) -> list[str] | None:
    """The command (program and arguments, as written) that the shell script ``path`` runs:
    its ``exec`` lines' program, else its last command; None when the script is not a shell
    script or its text does not name one program outright (see the module docstring)."""
    found = _wrapped(path)
    return found[1] if found else None


def unwrapped(tokens: list[str], env: dict) -> tuple[list[str], str] | None:
    """The command that ``tokens`` finally runs through shell wrappers (:func:`wrapped_program`,
    wrappers in wrappers :data:`DEPTH` deep), and how: "through the wrapper run.sh: its exec of
    app" ("" and ``tokens`` as given when ``tokens[0]``, found on ``env``'s PATH, is no shell
    script, or is named like Python: pyenv's shims are shell scripts); None where a wrapper's
    program is not named outright. The pre-flight's launcher check and the program sweep's
    fingerprint read a wrapper's program alike (s29 tester E1)."""
    import shutil

    from hpcds1mpi.launch.shebang import PYTHON_NAME

    said: list[str] = []
    for _ in range(DEPTH + 1):
        name = tokens[0] if tokens else ""
        path = name if "/" in name else (shutil.which(name, path=env.get("PATH")) if name
                                         else None)
        if not path or not os.path.isfile(path) or PYTHON_NAME.match(os.path.basename(path)) \
                or not is_shell_script(path):
            return tokens, ", ".join(said)
        found = _wrapped(path)
        if found is None:
            return None
        how, tokens = found
        said.append(f"through the wrapper {os.path.basename(path)}: its {how} {tokens[0]}")
    return None  # nested deeper than DEPTH


#: The most of a wrapper read; a longer one is not read at all, since its `exec` or last
#: command may lie past what was read (a 72 KB wrapper was read as its first command).
MAX_WRAPPER_CHARS = 65536


def _wrapped(path: str) -> tuple[str, list[str]] | None:
    """:func:`wrapped_program`'s command, after how the script runs it ("exec of", "last
    command")."""
    if not is_shell_script(path):
        return None
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read(MAX_WRAPPER_CHARS + 1)
    except OSError:
        return None
    if len(text) > MAX_WRAPPER_CHARS:  # its last command unread: no guess (s29 tester H7)
        return None
    commands = [_command(line) for line in _logical_lines(text.partition("\n")[2])]
    execs = [c for c in commands if c and c[0] == "exec" and not _redirections(c[1:])]
    if execs:
        programs = [_program(c) for c in execs]
        named = {tuple(p[:1]) for p in programs if p}
        return ("exec of", _in_folder(programs[0], path)) if len(named) == 1 and all(
            programs) else None
    for words in reversed(commands):
        if words is None or words[0] in _CONTROL:
            return None
        if words[0] in _SETUP or all(_ASSIGNMENT.match(w) for w in words):
            continue
        program = _program(words)
        return ("last command", _in_folder(program, path)) if program else None
    return None


def _logical_lines(text: str) -> list[str]:
    """The script's lines, continuations joined, blank and comment lines dropped."""
    joined = re.sub(r"\\\n", " ", text)
    return [line.strip() for line in joined.splitlines()
            if line.strip() and not line.strip().startswith("#")]


def _command(line: str) -> list[str] | None:
    """A line's first simple command as words; None when shlex cannot split it."""
    import shlex

    try:
        words = shlex.split(line, comments=True)
    except ValueError:
        return None
    if line.rstrip().endswith(("&", "then", "do", "{", "|")) and not line.rstrip().endswith("&&"):
        return None  # in the background, or opening a structure: not the script's program
    cut = next((i for i, w in enumerate(words) if w in _OPERATORS), len(words))
    return words[:cut] or None


def _program(words: list[str]) -> list[str] | None:
    """The command ``words`` run, without leading assignments, ``exec``, ``env VAR=x`` and
    the like; None when its program is named by a variable, is a launcher, or is missing."""
    rest = list(words)
    while rest and (rest[0] in _PREFIXES or rest[0] == "env" or _ASSIGNMENT.match(rest[0])
                    or rest[0].startswith("-")):
        rest = rest[1:]
    if not rest or _redirections(rest):
        return None
    own = _OWN_FOLDER.sub("", rest[0])
    if "$" in own or "`" in own or _LAUNCHERS.match(os.path.basename(rest[0])):
        return None
    return rest


def _redirections(words: list[str]) -> bool:
    """Whether ``words`` are redirections only (``exec >log 2>&1``: no program)."""
    return all(re.match(r"^[0-9]*[<>]", w) for w in words)


def _in_folder(words: list[str], script: str) -> list[str]:
    """``words`` with a program named from the script's own folder made a path."""
    folder = os.path.dirname(os.path.abspath(script))
    return [_OWN_FOLDER.sub(lambda _: folder, words[0], count=1), *words[1:]]
