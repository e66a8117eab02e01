"""The launcher abstraction: the command tokens that start an MPI job for a Configuration.

One function, :func:`launch_tokens`, is shared by the sweep's external-program mode, the sweep
supervisor and the batch-script writer (which puts the same tokens into sbatch/PBS scripts).
Inside Slurm it is ``srun -N .. --ntasks-per-node .. -c .. --mpi=pmi2``; elsewhere ``mpiexec``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

from hpcds1mpi.config import Configuration
from hpcds1mpi.errors import LaunchError

LAUNCHERS = ("srun", "mpiexec")


def in_slurm(env: dict | None = None) -> bool:
    env = os.environ if env is None else env
    return "SLURM_JOB_ID" in env


def detect(env: dict | None = None) -> str:
    """``"srun"`` inside a Slurm allocation with srun on PATH, else ``"mpiexec"``."""
    if in_slurm(env) and shutil.which("srun"):
        return "srun"
    return "mpiexec"


def mpiexec_path() -> str:
    """The mpiexec next to this Python (the mpich wheel's), else the one on PATH."""
    here = Path(sys.executable).parent / "mpiexec"
    if here.exists():
        return str(here)
    found = shutil.which("mpiexec") or shutil.which("mpirun")
    if not found:
        raise LaunchError("no mpiexec found: install an MPI (pip install 'hpcds1mpi[mpich]') "
                          "or put mpiexec on PATH")
    return found


@lru_cache(maxsize=None)
def mpiexec_flavor(path: str) -> str:
    """``"openmpi"`` or ``"hydra"`` (MPICH / Intel MPI), from ``mpiexec --version``."""
    try:
        text = subprocess.run([path, "--version"], capture_output=True, text=True,
                              timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return "hydra"
    return "openmpi" if "Open MPI" in text or "OpenRTE" in text else "hydra"


def launch_tokens(config: Configuration, *, launcher: str | None = None, mpi: str = "pmi2",
                  mpiexec: str | None = None, extra: list[str] | None = None) -> list[str]:
    """The launcher's tokens (without the program) that run ``config``.

    Args:
        config: nodes x ranks per node x threads (device and precision travel through the
            environment and the program's own arguments, not the launcher).
        launcher: ``"srun"`` or ``"mpiexec"``; detected when None.
        mpi: srun's ``--mpi`` plugin.
        mpiexec: path of mpiexec (found when None).
        extra: more launcher options appended as given.

    Returns:
        e.g. ``["srun", "-N", "2", "--ntasks-per-node", "4", "-c", "2",
        "--kill-on-bad-exit=1", "--mpi=pmi2"]`` or
        ``["/path/mpiexec", "-n", "8", "-ppn", "4"]``.
    """
    launcher = launcher or detect()
    if launcher == "srun":
        # --kill-on-bad-exit: a rank that dies (e.g. a failed PMI wire-up) ends the step
        # instead of leaving the others blocked in MPI_Init until the sweep's timeout.
        tokens = ["srun", "-N", str(config.nodes), "--ntasks-per-node",
                  str(config.ranks_per_node), "-c", str(config.threads), "--kill-on-bad-exit=1"]
        if mpi:
            tokens.append(f"--mpi={mpi}")
    elif launcher == "mpiexec":
        path = mpiexec or mpiexec_path()
        tokens = [path, "-n", str(config.ranks)]
        if config.nodes > 1:
            if mpiexec_flavor(path) == "openmpi":
                tokens += ["--map-by", f"ppr:{config.ranks_per_node}:node"]
            else:
                tokens += ["-ppn", str(config.ranks_per_node)]
    else:
        raise LaunchError(f"unknown launcher {launcher!r}; use one of {', '.join(LAUNCHERS)}")
    return tokens + list(extra or [])


def total_tokens(ranks: int, *, launcher: str | None = None, mpi: str = "pmi2",
                 mpiexec: str | None = None) -> list[str]:
    """Tokens that start ``ranks`` ranks laid out however the launcher chooses (the sweep
    supervisor's in-process launches, which then split nodes themselves)."""
    launcher = launcher or detect()
    if launcher == "srun":
        return ["srun", "-n", str(ranks)] + ([f"--mpi={mpi}"] if mpi else [])
    return [mpiexec or mpiexec_path(), "-n", str(ranks)]


def thread_env(config: Configuration) -> dict:
    """Environment that sets a program's threads and tells it the precision and device."""
    threads = str(config.threads)
    return {
        "OMP_NUM_THREADS": threads, "OPENBLAS_NUM_THREADS": threads, "MKL_NUM_THREADS": threads,
        "HPCDS1MPI_THREADS": threads, "HPCDS1MPI_PRECISION": config.precision,
        "HPCDS1MPI_DEVICE": config.device,
    }
