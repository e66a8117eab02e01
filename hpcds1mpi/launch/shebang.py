"""A script's ``#!`` line as the kernel and env(1) read it, and the Python it starts.

One reader for the places that ask: a program sweep's fingerprint
(:mod:`hpcds1mpi.measure.program_mpi`: the MPI library the program loads) and the launcher
check (:mod:`hpcds1mpi.launch.mpi_family`: which MPI family will start it); the command a
``#!`` starts, for an R script's (:mod:`~hpcds1mpi.launch.r_mpi`). A shell wrapper's program is
unknown to both: no guess.
"""

from __future__ import annotations

import os
import re


#: A Python interpreter's file name (``python``, ``python3``, ``python3.12``).
PYTHON_NAME = re.compile(r"^python[0-9.]*$")
#: Python's options that change which mpi4py it imports and take no argument (``-E``, ``-s``,
#: ``-I``, ``-S``, clusters of them); the probe runs with them as the script would.
_PYTHON_FLAGS = re.compile(r"^-[bBdEIOPqsSuv]+$")
#: env's options that take the next word as their argument.
_ENV_ARGUMENT = ("-u", "--unset", "-C", "--chdir")


def read_shebang(path: str) -> tuple[str, str | None] | None:
    """A script's ``#!`` line as the kernel reads it: (interpreter, its one optional argument,
    the rest of the line, or None); None when ``path`` does not start with ``#!``."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(256)
    except OSError:
        return None
    if not head.startswith(b"#!"):
        return None
    line = head[2:].split(b"\n", 1)[0].decode("utf-8", "replace").strip(" \t\r")
    if not line:
        return None
    interpreter, _, argument = line.replace("\t", " ").partition(" ")
    argument = argument.strip(" ")
    return interpreter, argument or None


def shebang_python(path: str, env: dict) -> tuple[list[str], dict] | None:
    """How the script ``path`` starts Python: (the interpreter and the options of its ``#!``
    line, the environment it runs in); None when its ``#!`` does not name Python (a shell
    wrapper: no guess).

    Read as the kernel and env(1) do (:func:`shebang_command`): ``#!/path/to/python3 -u``,
    ``#!/usr/bin/env python3`` (found on ``PATH``), ``#!/usr/bin/env -S VAR=x python3 -E``
    (env splits its one argument, sets ``VAR``, skips its own options).
    """
    found = shebang_command(path, env)
    if found is None or not PYTHON_NAME.match(os.path.basename(found[0][0])):
        return None
    words, env = found
    options = []
    for word in words[1:]:
        for option in word.split():
            if not _PYTHON_FLAGS.match(option):
                break
            options.append(option)
    return [words[0], *options], env


def shebang_command(path: str, env: dict) -> tuple[list[str], dict] | None:
    """The command the script ``path``'s ``#!`` line starts, as the kernel and env(1) read it:
    (the interpreter's file, then the line's words for it; the environment it runs in), the
    interpreter found on ``PATH`` through ``#!/usr/bin/env NAME``; None without a ``#!``, or
    when env names no program that is found (also for an R script's ``#!/usr/bin/env
    Rscript``: :mod:`~hpcds1mpi.launch.r_mpi`)."""
    import shlex
    import shutil

    found = read_shebang(path)
    if found is None:
        return None
    interpreter, argument = found
    env = dict(env)
    if os.path.basename(interpreter) != "env":
        return [interpreter] + ([argument] if argument else []), env
    if not argument:
        return None
    if argument.startswith(("-S", "--split-string")):
        rest = argument[2:] if argument.startswith("-S") else \
            argument[len("--split-string"):].lstrip("=")
        try:
            given = shlex.split(rest)
        except ValueError:
            return None
    else:
        given = [argument]  # env gets the rest of the line as one word: a program's name
    words: list[str] = []
    skip = False
    for word in given:
        if words:
            words.append(word)
        elif skip:
            skip = False
        elif word in _ENV_ARGUMENT:
            skip = True
        elif word in ("-i", "--ignore-environment") or word == "-":
            env = {}
        elif word.startswith("-"):
            continue
        elif "=" in word:
            name, value = word.split("=", 1)
            env[name] = value
        else:
            words.append(word)
    if not words:
        return None
    program = words[0] if "/" in words[0] else shutil.which(
        words[0], path=env.get("PATH", os.defpath))
    if not program:
        return None
    return [program, *words[1:]], env
