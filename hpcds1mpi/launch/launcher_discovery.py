"""Which launcher this machine offers, and what a launcher file says it is.

Whether this process runs inside a Slurm allocation (:func:`in_slurm`), so ``srun`` or
``mpiexec`` by default (:func:`detect`); where ``mpiexec`` is (:func:`mpiexec_path`); and a
launcher's own ``--version`` (:func:`version_text`, asked once per path and PATH), which tells
its flavour (:func:`mpiexec_flavor`). :mod:`hpcds1mpi.launch.launchers` builds the launcher
from these.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

from hpcds1mpi.errors import LaunchError


def in_slurm(env: dict | None = None) -> bool:
    """Whether this process runs inside a Slurm allocation (a leftover ``SLURM_JOB_ID`` of no
    running job is none: :func:`~hpcds1mpi.slurm_allocation.leftover_job`, s32 tester T4;
    its note is the partition reader's or the sweep's to say, in their own channel)."""
    from hpcds1mpi.slurm_allocation import leftover_job

    env = os.environ if env is None else env
    return "SLURM_JOB_ID" in env and not leftover_job(env)


def detect(env: dict | None = None) -> str:
    """``"srun"`` inside a Slurm allocation with srun on PATH, else ``"mpiexec"``."""
    return "srun" if in_slurm(env) and shutil.which("srun") else "mpiexec"


def mpiexec_path() -> str:
    """The mpiexec next to this Python (the mpich wheel's), else the one on PATH."""
    here = Path(sys.executable).parent / "mpiexec"
    found = str(here) if here.exists() else shutil.which("mpiexec") or shutil.which("mpirun")
    if not found:
        raise LaunchError("no mpiexec found: install an MPI (pip install 'hpcds1mpi[mpich]') "
                          "or put mpiexec on PATH")
    return found


def version_text(path: str) -> str | None:
    """``PATH --version``'s output, asked once per path and ``$PATH`` (None when it cannot
    run): a launcher script answers through the PATH it is run under (Intel MPI's
    ``bin/mpirun`` runs ``mpiexec.hydra`` as PATH finds it; s35 fixer L4)."""
    return _version_text(path, os.environ.get("PATH"))


@lru_cache(maxsize=None)
def _version_text(path: str, search_path: str | None) -> str | None:
    """:func:`version_text` of ``path`` run under the current environment, whose PATH is
    ``search_path`` (the cache key only: the run inherits it)."""
    try:
        return subprocess.run([path, "--version"], capture_output=True, text=True,
                              timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return None


def mpiexec_flavor(path: str) -> str:
    """``"openmpi"`` or ``"hydra"`` (MPICH / Intel MPI), from ``mpiexec --version``."""
    from hpcds1mpi.launch.mpi_installation import version_family

    return "openmpi" if version_family(path, version_text(path)) == "openmpi" else "hydra"
