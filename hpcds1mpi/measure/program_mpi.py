"""The MPI library a user's program loads, for the fingerprint of a program sweep.

``sweep --command`` records the first line of ``MPI_Get_library_version`` of the library the
program itself loads (the one ``ldd`` resolves for a binary, its mpi4py's for a ``python ...``
program or a script whose ``#!`` names Python, its MPI package's for an R program
(:mod:`~hpcds1mpi.launch.r_mpi`), the program a shell wrapper names outright:
:mod:`~hpcds1mpi.launch.wrapper_program`; past an exec-wrapper prefix, on the PATH the ranks
get: :mod:`~hpcds1mpi.launch.rank_program`), so kernels and programs measured with one MPI on one
machine share a ``machine_id``. Where it cannot be read, the library of the launcher's own
installation stands in when its version is the launcher's, marked :data:`ASSUMED` (the
``machine_id`` hashes it without the mark); else the launcher's version line, marked
:data:`UNREAD`. The fingerprint itself: :mod:`hpcds1mpi.measure.meters`.
"""

from __future__ import annotations

import os
from typing import Sequence

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

#: What follows the library of the launcher's installation where it stands in for a program's
#: that cannot be read (a wrapper that starts its program from a variable). A program started
#: by hydra or mpirun runs with the library that launcher was built with (another family's
#: would start as unconnected singletons), so runs of the kernels and of the program share the
#: machine id, which hashes the library without this mark (s29 tester E1, OpenFOAM tester A6).
ASSUMED = "[assumed: the library of the launcher's installation; the program's could not be read]"

def program_mpi_library(tokens: list[str], env: dict, launcher: str, args: Sequence[str] = (),
                        ranks: tuple[list[str], dict] | None = None) -> str:
    """``mpi_library`` for the fingerprint of a program sweep (``sweep --command``).

    The first line of ``MPI_Get_library_version`` of the MPI library the program loads: what a
    kernel sweep records for the same library, so kernels and programs measured with one MPI on
    one machine share a ``machine_id``. A binary's library is the one ``ldd`` resolves, a
    ``python ...`` program's is its mpi4py's, a shell wrapper's is that of the program it
    names. Where that cannot be read (a wrapper that names its program by a variable, a
    static binary, no ``ldd``) the library installed with ``launcher`` stands in, marked
    :data:`ASSUMED`, when its version is the launcher's; else the launcher's version line,
    marked :data:`UNREAD` ("unknown" when the launcher cannot say either).

    Args:
        args: the launcher's options (Open MPI's ``--prefix DIR`` puts ``DIR/bin`` first on
            the ranks' PATH).
        ranks: :func:`~hpcds1mpi.launch.rank_program.rank_program`'s reading of ``tokens``
            under ``launcher`` and ``args``, where the caller has it (None: read here).
    """
    from hpcds1mpi.launch.launchers import library_version
    from hpcds1mpi.launch.rank_program import rank_program

    # The program its ranks run, on the PATH they get, past `env X=1`-like words (s30 tester
    # K1: `env` was read, K4: pyenv's python3 where mpirun's prefix gave /usr/bin/python3),
    # with the launcher's options (s31 review M3: `mpirun --prefix /usr` was read without)
    ranks = ranks or rank_program(tokens, env, launcher, args)
    found = _program_library_version(*ranks) if ranks else None
    if found:
        return found
    stand_in = library_version(launcher)
    if stand_in == "unknown":
        return stand_in
    installed = _launcher_library(launcher, env, stand_in)
    return f"{installed} {ASSUMED}" if installed else f"{stand_in} {UNREAD}"


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


def _launcher_library(launcher: str, env: dict, launcher_line: str) -> str | None:
    """The version line of the MPI library installed with ``launcher`` (in its prefix's
    ``lib``, ``lib64`` or multiarch folder, of the launcher's family) when it names the
    launcher's version (``launcher_line``); None otherwise (srun, no library there, another
    version: the runs may have used another library, so no id is shared)."""
    import glob
    import re
    import shutil

    from hpcds1mpi.launch.mpi_family import launcher_family
    from hpcds1mpi.launch.mpi_names import MPICH, OPENMPI, family_of_soname

    path = launcher if "/" in launcher else shutil.which(launcher, path=env.get("PATH"))
    version = re.search(r"\d+\.\d+(\.\d+)*", launcher_line)
    if not path or not version:
        return None
    real = os.path.realpath(path)
    family = launcher_family(real)
    if family not in (OPENMPI, MPICH):
        return None
    prefix = os.path.dirname(os.path.dirname(real))
    for folder in ("lib", "lib64", "lib/*-linux-gnu*", "lib64/*-linux-gnu*"):
        for library in sorted(glob.glob(os.path.join(prefix, folder, "lib*.so*"))):
            if family_of_soname(os.path.basename(library)) != family:
                continue
            line = _library_line(library, env)
            if line and re.search(rf"(?<![\d.]){re.escape(version.group())}(?![\d])", line):
                return line
    return None


def _library_line(library: str, env: dict) -> str | None:
    """The first line of ``MPI_Get_library_version`` of the library file ``library``."""
    import sys

    return _first_line([sys.executable, "-c", _LIBRARY_PROBE, library], env)


def _first_line(command: list[str], env: dict) -> str | None:
    """The first version line ``command`` prints, as C reads it; None when it fails."""
    import subprocess

    try:
        proc = subprocess.run(command, capture_output=True, text=True, timeout=60, env=env)
    except (OSError, subprocess.SubprocessError):
        return None
    # As C reads it: Debian's mpi4py keeps the string's NUL, which no HDF5 file can store.
    from hpcds1mpi.launch.mpi_names import version_line

    return (version_line(proc.stdout) if proc.returncode == 0 else "") or None


def _program_library_version(tokens: list[str], env: dict) -> str | None:
    from hpcds1mpi.launch.mpi_family import linked_library
    from hpcds1mpi.launch.r_mpi import package_object, r_program
    from hpcds1mpi.launch.wrapper_program import unwrapped

    # An R program (Rscript mc.R; R, a shell script, is no wrapper to read): its MPI package's
    # shared object's library, where Rscript's own ELF links none (s32 tester W1: the Open MPI
    # of Rmpi was recorded as "MPICH 5.0.2 [assumed ...]", the launcher's installation's)
    r = r_program(tokens, env)
    if r is not None:
        shared = package_object(r, env)
        library = linked_library(shared, env) if shared else None
        return _library_line(library, env) if library else None
    # A Ruby program: its ruby-mpi extension's library, likewise (s35 tester A1)
    from hpcds1mpi.launch.ruby_mpi import extension_file, ruby_program

    ruby = ruby_program(tokens, env)
    if ruby is not None:
        shared = extension_file(ruby, env)
        library = linked_library(shared, env) if shared else None
        return _library_line(library, env) if library else None
    # A wrapper (run.sh): the program it names outright, read as the launcher check reads it
    # (s29 tester E1); None where it names none.
    found = unwrapped(tokens, env)
    path = _program_path(found[0], env) if found else None
    if path is None:
        return None
    if PYTHON_NAME.match(os.path.basename(path)):  # pyenv's shims are shell scripts too
        from hpcds1mpi.launch.mpi_family import MPI4PY_PROBE

        command = [path, "-c", MPI4PY_PROBE]
    elif read_shebang(path) is not None:
        # A script: the kernel runs its #! interpreter; a Python one's MPI is its mpi4py's
        # (shell wrappers are read above; other interpreters: unknown).
        found = shebang_python(path, env)
        if found is None:
            return None
        from hpcds1mpi.launch.mpi_family import MPI4PY_PROBE

        command, env = found[0] + ["-c", MPI4PY_PROBE], found[1]
    else:
        from hpcds1mpi.launch.mpi_family import linked_library

        library = linked_library(path, env)
        return None if library is None else _library_line(library, env)
    return _first_line(command, env)
