"""The program's own files an interpreted program reads in, walked for what they load.

A program may load its MPI binding in a file of its own that it reads in: Ruby's
``require_relative "lib/x"`` (:mod:`~hpcds1mpi.launch.ruby_mpi`), R's ``source("setup.R")``
(:mod:`~hpcds1mpi.launch.r_mpi`). Each language's reader says what one file's text loads and
which files it reads in; :func:`first_loaded` walks them breadth first, reading them as text,
never running them: at most :data:`MAX_FILES` files of :data:`MAX_BYTES` each, each file once,
and no deeper than ``max_depth`` files below the program's where a language asks it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

#: The most of one file read, and the most files read, for what a program loads.
MAX_BYTES, MAX_FILES = 4 << 20, 32


def read_text(path: str) -> str | None:
    """The text of the file ``path`` (read up to :data:`MAX_BYTES`); None where it cannot be
    read."""
    try:
        with open(path, "rb") as fh:
            return fh.read(MAX_BYTES).decode("utf-8", "replace")
    except OSError:
        return None


def first_loaded(files: list[str], read: Callable[[str, str], tuple[T | None, list[str]]],
                 max_depth: int | None = None) -> T | None:
    """What the first of ``files``, or of the files they read in, loads (None: none loads
    anything). ``read(text, folder)``: what a file's text loads (None: nothing) and the files
    it reads in, given the file's ``folder``; those files are read after every file above
    them, up to ``max_depth`` files below ``files`` (None: only :data:`MAX_FILES` bounds it)."""
    todo = [(os.path.abspath(path), 0) for path in files]
    seen: set[str] = set()
    while todo and len(seen) < MAX_FILES:
        path, depth = todo.pop(0)
        if path in seen:
            continue
        seen.add(path)
        text = read_text(path)
        if text is None:
            continue
        found, named = read(text, os.path.dirname(path))
        if found is not None:
            return found
        if max_depth is None or depth < max_depth:
            todo += [(os.path.abspath(name), depth + 1) for name in named]
    return None
