"""Hydra's (MPICH's, Intel MPI's ``mpiexec``) ``-bind-to core`` for ranks of several threads.

Hydra binds nothing by default, but a user's ``-bind-to core`` (``--launcher-args``, a
cluster file's ``launcher_args``) binds each rank to one core, which all its threads then
share: a thread dimension that measures nothing, recorded ok (s31 tester P3: 2 threads,
``Cpus_allowed_list: 0``). ``-bind-to core:T`` gives each rank T cores, as Open MPI's
``--map-by slot:PE=T`` does (:func:`~.open_mpi_binding.open_mpi_thread_binding`).
"""

from __future__ import annotations

from typing import Sequence

#: Hydra's binding option, with one or two dashes.
_BIND_TO = ("-bind-to", "--bind-to")
#: Binding units that take a count (``core:2``), given without one.
_COUNTED = ("core", "hwthread")
#: Hydra options that place or bind ranks (said as the user's binding in the telemetry).
_PLACING = (*_BIND_TO, "-map-by", "--map-by", "-binding")


def hydra_thread_args(args: Sequence[str], threads: int) -> tuple[tuple, str]:
    """(``args`` with each ``-bind-to core`` / ``hwthread`` given ``:threads``, the one-line
    note saying so, "" when nothing changed): one thread, or a unit with a count, is kept."""
    words, note = list(args), ""
    if threads <= 1:
        return tuple(words), note
    for i, word in enumerate(words):
        name, eq, value = word.partition("=")
        if name not in _BIND_TO:
            continue
        k = i if eq else i + 1
        value = value if eq else (words[k] if k < len(words) else "")
        if value not in _COUNTED:
            continue
        words[k] = f"{name}={value}:{threads}" if eq else f"{value}:{threads}"
        note = (f"{threads} threads per rank: hydra's -bind-to {value} is given as -bind-to "
                f"{value}:{threads} (each rank bound to {threads} {value}s of its own; "
                f"-bind-to {value} binds a rank to one, which its threads would share)")
    return tuple(words), note


def hydra_binding(name: str, args: Sequence[str], threads: int) -> str | None:
    """The telemetry's ``binding`` where the user's options place or bind hydra's ranks: the
    options as the ranks got them (after :func:`hydra_thread_args`); None when none do."""
    given, _ = hydra_thread_args(args, threads)
    if not any(w.partition("=")[0] in _PLACING for w in given):
        return None
    return f"{name} {' '.join(given)} (the user's launcher options)"
