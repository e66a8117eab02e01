"""Whether a job script's program, given as a bare name (``heat``), is one its launcher finds.

A name without a ``/`` is looked up on the job's PATH, which sbatch passes from here. srun and
Open MPI's mpirun also look in the job's folder; MPICH's hydra ``mpiexec`` (and an mpiexec of
unknown kind) look on PATH only, so ``mpiexec -n 2 heat`` with ``heat`` beside the script
failed in the job, exit 127 (s34 tester U6), where ``sweep`` refuses the same name in one
line. :func:`check_bare_program` refuses it as the sweep does, before the script is written.
"""

from __future__ import annotations

import os
import shutil
from typing import Sequence

from hpcds1mpi.errors import ConfigError


def _looks_in_folder(launcher) -> bool:
    """Whether ``launcher`` finds a bare program name in the job's folder too (srun, Open
    MPI's mpirun: both do, after PATH)."""
    from hpcds1mpi.launch.launcher_discovery import mpiexec_flavor
    from hpcds1mpi.launch.launchers import OpenMpiMpirun, Srun

    if isinstance(launcher, (Srun, OpenMpiMpirun)):
        return True
    command = shutil.which(getattr(launcher, "command", "") or "")
    return command is not None and mpiexec_flavor(command) == "openmpi"


def check_bare_program(program: Sequence[str], launcher, cluster, scheduler: str,
                       folder: str | None = None, setup: str | None = None) -> str:
    """Refuse a Slurm script whose bare program name its launcher will not find; return a
    note ("" for none) where the job's PATH is not this one (the cluster file's modules or
    preamble change it). ``folder``: where the job runs, relative to the submit folder;
    ``setup``: the command the job runs there first (it may put the program there).

    Raises:
        ConfigError: the name is not on this PATH, which the job gets, and the launcher does
            not look in the job's folder or the program is not there either.
    """
    from hpcds1mpi.launch.exec_wrappers import program_past_wrappers
    from hpcds1mpi.launch.own_install import runs_own_command

    if scheduler != "slurm" or not program or runs_own_command(program):
        return ""  # PBS's bare name is said where its PATH is (scripts._own_path)
    try:
        name = program_past_wrappers(list(program), None, "--program")[1]
    except ConfigError:
        return ""  # refused where the launch line is checked, in its own words
    if "/" in name or shutil.which(name) is not None:
        return ""
    here = os.path.join(folder or ".", name)
    in_folder = os.path.isfile(here)
    if _looks_in_folder(launcher) and (in_folder or setup):
        return ""
    example = "./" + name
    if getattr(cluster, "modules", None) or getattr(cluster, "preamble", None):
        return (f"program {name!r} is not on this PATH: the job finds it only if the cluster "
                f"file's modules or preamble put it on its PATH; otherwise give its path with "
                f"--program (e.g. {example})")
    launch = os.path.basename(getattr(launcher, "command", "") or launcher.name)
    there = (f" (there is one in {folder or 'this folder'}, but {launch} looks a bare name up "
             "on PATH only)" if in_folder else "")
    raise ConfigError(f"program {name!r} is not on PATH{there}, so the job would fail "
                      f"(command not found); give its path with --program (e.g. {example}) "
                      "or install it")
