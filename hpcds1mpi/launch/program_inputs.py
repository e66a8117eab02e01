"""Which paths of a program's command are its inputs, for the job script to check (s38 tester A1).

The folder a sweep ran in holds the program's inputs and what its runs wrote: PT-Scotch's
``dgord m2_{size}.grf out.ord`` left ``out.ord`` there, which a script took for an input
(existing at recommend time) and refused to run without, while the input of the recommended
size, ``m2_300.grf``, was checked only if it happened to exist. So an argument is an input
where, filled for a measured run, it names a file that was there before the sweep's first
launch (:attr:`~hpcds1mpi.surrogates.levels.MeasuredLevels.swept_from`); then it is checked
filled for the recommended size, there or not (``m2_300.grf``). One whose measured fillings
all date from the sweep on was written by it (an output), and is not checked. A relative path
holding a ``/`` none of whose fillings is there is checked as before (s37 tester G3).

A bundle that does not record the first launch's time, or its measured runs, is judged as
before: by what exists now (:func:`~hpcds1mpi.launch.program_folder.relative_paths`).
"""

from __future__ import annotations

import os
from typing import Sequence

from hpcds1mpi.launch.program_folder import argument_value, relative_paths


def input_paths(program: str, values: dict, folder: str | None, swept_from: float | None,
                measured: Sequence[dict], setup: bool = False) -> list[str]:
    """The relative paths the job checks in ``folder`` (where the program runs): the
    arguments of ``program`` filled with ``values`` (the recommended size and configuration)
    that are its inputs.

    Args:
        program: the command, placeholders unfilled.
        folder: where its sweep ran it (readable here), or None.
        swept_from: when the sweep's first launch started (epoch seconds); None: unknown.
        measured: the placeholder values of the measured runs.
        setup: the sweep had a ``--setup``, which the job runs too: an input of the new size
            that is not there yet may be what it makes, so only one that is there is checked.
    """
    from hpcds1mpi.launch.program import program_tokens

    tokens = program_tokens(program, values)
    runs = [program_tokens(program, run) for run in measured]
    runs = [run for run in runs if len(run) == len(tokens)]
    if swept_from is None or not runs or not folder:
        return relative_paths(tokens, folder)
    found = []
    for i, token in enumerate(tokens[1:], start=1):
        value = _path_value(token)
        if value is None:
            continue
        stamps = [_modified(folder, v) for v in {_path_value(run[i]) for run in runs} if v]
        stamps = [t for t in stamps if t is not None]
        if any(t < swept_from for t in stamps):  # there before the sweep: read by it
            if not setup or os.path.exists(os.path.join(folder, value)):
                found.append(value)
        elif not stamps and "/" in value:  # G3's rule where nothing tells
            found.append(value)
    if "/" in tokens[0] and _path_value(tokens[0]) is not None:  # the program itself
        found.insert(0, tokens[0])
    return list(dict.fromkeys(found))


def _path_value(token: str) -> str | None:
    """The relative path an argument may name (``--in=x`` and ``KEY=x`` give ``x``), or
    None."""
    value = argument_value(token)
    if not value or value.startswith("-") or os.path.isabs(value) or "://" in value \
            or "\0" in value:
        return None
    return value


def _modified(folder: str, name: str) -> float | None:
    """When ``name`` in ``folder`` was last written (epoch seconds), None if not there."""
    try:
        return os.stat(os.path.join(folder, name)).st_mtime
    except (OSError, ValueError):
        return None


__all__ = ["input_paths"]
