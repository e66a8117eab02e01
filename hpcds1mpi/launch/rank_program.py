"""The program a launcher's ranks run, and the environment they find it in.

What the ranks run is not always what this process would find for the same words: Open MPI's
``mpirun`` / ``mpiexec`` started by its absolute path acts as ``--prefix`` of its
installation, so its ranks get ``PREFIX/bin`` first on ``PATH`` and ``PREFIX/lib`` first on
``LD_LIBRARY_PATH`` (``/usr/bin/mpiexec.openmpi`` -> ``/usr/bin``: a ``python3`` on a pyenv
PATH is ``/usr/bin/python3`` on the ranks, s30 tester K4); ``--prefix DIR`` names the prefix,
``--noprefix`` turns it off. An exec-wrapper prefix (``env X=1``, ``nice``, ``numactl``:
:mod:`hpcds1mpi.launch.exec_wrappers`) comes before the program and may change the
environment it is found in. The pre-flight's MPI check and the fingerprint's library both
read the program through :func:`rank_program`.
"""

from __future__ import annotations

import os
from typing import Sequence

from hpcds1mpi.launch.exec_wrappers import past_wrappers


def openmpi_prefix(launcher: str, args: Sequence[str] = ()) -> str | None:
    """The prefix Open MPI's ``launcher`` (run with ``args``) gives its ranks: ``--prefix
    DIR``, else its own folder's parent when started by an absolute path (as written, not
    resolved: Open MPI reads its ``argv[0]``); None for ``--noprefix``, another launcher, PRRTE's
    ``prterun`` (measured: its ranks get no prefix), or
    a launcher found on PATH by name."""
    from hpcds1mpi.launch.mpi_family import launcher_family
    from hpcds1mpi.launch.mpi_installation import PRRTE_LAUNCHERS
    from hpcds1mpi.launch.mpi_names import OPENMPI

    if not launcher or os.path.basename(launcher) == "srun":
        return None
    given = None
    for k, arg in enumerate(args):
        if arg in ("--noprefix", "-noprefix"):
            return None
        if arg in ("--prefix", "-prefix") and k + 1 < len(args):  # no --prefix=DIR in 4.1
            given = args[k + 1]
    if given is None and not os.path.isabs(launcher):
        return None
    if launcher_family(launcher) != OPENMPI or os.path.basename(
            os.path.realpath(launcher)) in PRRTE_LAUNCHERS:  # prterun: no prefix (s40 A9)
        return None
    return given if given is not None else os.path.dirname(os.path.dirname(launcher))


def prefix_bin_first(launcher: str, args: Sequence[str] = ()) -> str | None:
    """The ``bin`` folder ``launcher``'s ranks find a program named without a folder in
    first: its :func:`openmpi_prefix`'s, except under Open MPI's relocating wrapper (the PyPI
    wheel's ``mpirun``), which leaves their PATH as it is (measured, s40 tester A12: the
    venv's ``python3`` first on PATH ran, not the wheel's)."""
    from hpcds1mpi.launch.mpi_installation import relocating_wrapper

    prefix = openmpi_prefix(launcher, args)
    if prefix is None or relocating_wrapper(launcher):
        return None
    return os.path.join(prefix, "bin")


def rank_environment(launcher: str, args: Sequence[str], env: dict) -> dict:
    """``env`` as ``launcher``'s ranks get it, where that changes where their program and
    its libraries are found (:func:`openmpi_prefix`: its ``lib`` first on LD_LIBRARY_PATH,
    and its ``bin`` first on PATH where :func:`prefix_bin_first` says so); ``env`` itself
    otherwise."""
    prefix = openmpi_prefix(launcher, args)
    if prefix is None:
        return env
    out = dict(env)
    folders = (("PATH", "bin"), ("LD_LIBRARY_PATH", "lib")) if \
        prefix_bin_first(launcher, args) else (("LD_LIBRARY_PATH", "lib"),)
    for name, folder in folders:
        first = os.path.join(prefix, folder)
        out[name] = f"{first}:{env[name]}" if env.get(name) else first
    return out


def rank_program(tokens: list[str], env: dict, launcher: str = "",
                 args: Sequence[str] = ()) -> tuple[list[str], dict] | None:
    """The program words ``launcher`` (with ``args``) runs for ``tokens``, past their
    exec-wrapper prefix, and the environment that program is found in; None where the prefix
    cannot be read (``env -S ...``)."""
    return past_wrappers(tokens, rank_environment(launcher, args, env) if launcher else env)

