"""The MPI library a user's program loads, for the fingerprint of a program sweep.

``sweep --command`` records the first line of ``MPI_Get_library_version`` of the library the
program itself loads (the one ``ldd`` resolves for a binary, its mpi4py's for a ``python ...``
program or a script whose ``#!`` names Python), so kernels and programs measured with one MPI
on one machine share a ``machine_id``. Where it cannot be read the launcher's version line
stands in, marked :data:`UNREAD`. The fingerprint itself: :mod:`hpcds1mpi.measure.meters`.
"""

from __future__ import annotations

import os

from hpcds1mpi.launch.shebang import PYTHON_NAME, read_shebang, shebang_python


#: The first line of ``MPI_Get_library_version`` of the library at ``sys.argv[1]``, asked
#: before ``MPI_Init`` (allowed since MPI-3), in a subprocess: loading an MPI library into the
#: sweep's own process could clash with its mpi4py's.
_LIBRARY_PROBE = ("import ctypes, sys\n"
                  "lib = ctypes.CDLL(sys.argv[1])\n"
                  "text = ctypes.create_string_buffer(8192)\n"
                  "lib.MPI_Get_library_version(text, ctypes.byref(ctypes.c_int()))\n"
                  "print(text.value.decode('utf-8', 'replace'))")


#: What follows the launcher's version line where it stands in for a program's MPI library
#: that cannot be read: the row says so, instead of reading as the launcher's MPI (a wrapper
#: of an Open MPI program run by the wheel's hydra had read as "mpiexec Version: 5.0.2").
UNREAD = "[the launcher's version: the program's MPI library could not be read]"


def program_mpi_library(tokens: list[str], env: dict, launcher: str) -> str:
    """``mpi_library`` for the fingerprint of a program sweep (``sweep --command``).

    The first line of ``MPI_Get_library_version`` of the MPI library the program loads: what a
    kernel sweep records for the same library, so kernels and programs measured with one MPI on
    one machine share a ``machine_id``. A binary's library is the one ``ldd`` resolves, a
    ``python ...`` program's is its mpi4py's. Where that cannot be read (a shell wrapper, a
    static binary, no ``ldd``) the launcher's version line stands in, marked :data:`UNREAD`
    ("unknown" when the launcher cannot say either).
    """
    from hpcds1mpi.launch.launchers import library_version

    found = _program_library_version(tokens, env)
    if found:
        return found
    stand_in = library_version(launcher)
    return stand_in if stand_in == "unknown" else f"{stand_in} {UNREAD}"


def threading_note(command, env: dict, threads) -> str:
    """A note for the sweep to say once when it sweeps ``threads`` above 1 for a program whose
    extra threads cannot change what it does; ``""`` otherwise. ``command`` is the command as
    given, placeholders unfilled (a ``{threads}`` in it: the program takes its thread count, so
    no note); the rule is :func:`~hpcds1mpi.launch.program_threads.unthreaded_program`'s, the
    one tune and recommend follow. Such a program's extra cores per rank sit idle (s27 tester
    R: pw.x, swept and recommended at 2 threads on noise)."""
    from hpcds1mpi.launch.program_threads import unthreaded_program

    if max((int(t) for t in threads), default=1) <= 1:
        return ""
    name = unthreaded_program(command, env)
    if name is None:
        return ""
    return (f"note: {name} links no OpenMP runtime nor threaded BLAS: --threads above 1 only "
            "gives each rank idle cores (unless the program starts threads of its own)")


def _program_path(tokens: list[str], env: dict) -> str | None:
    """The file of the program ``tokens`` start (found on ``env``'s PATH), or None."""
    import shutil

    if not tokens:
        return None
    path = tokens[0] if "/" in tokens[0] else shutil.which(tokens[0], path=env.get("PATH"))
    return path if path and os.path.isfile(path) else None


def _program_library_version(tokens: list[str], env: dict) -> str | None:
    import subprocess
    import sys

    path = _program_path(tokens, env)
    if path is None:
        return None
    if PYTHON_NAME.match(os.path.basename(path)):
        from hpcds1mpi.launch.mpi_family import MPI4PY_PROBE

        command = [path, "-c", MPI4PY_PROBE]
    elif read_shebang(path) is not None:
        # A script: the kernel runs its #! interpreter; only a Python one's MPI can be read
        # (its mpi4py's), never a shell wrapper's (the program it starts is unknown).
        found = shebang_python(path, env)
        if found is None:
            return None
        from hpcds1mpi.launch.mpi_family import MPI4PY_PROBE

        command, env = found[0] + ["-c", MPI4PY_PROBE], found[1]
    else:
        from hpcds1mpi.launch.mpi_family import linked_library

        library = linked_library(path, env)
        if library is None:
            return None
        command = [sys.executable, "-c", _LIBRARY_PROBE, library]
    try:
        proc = subprocess.run(command, capture_output=True, text=True, timeout=60, env=env)
    except (OSError, subprocess.SubprocessError):
        return None
    # As C reads it: Debian's mpi4py keeps the string's NUL, which no HDF5 file can store.
    from hpcds1mpi.launch.mpi_family import version_line

    return (version_line(proc.stdout) if proc.returncode == 0 else "") or None
