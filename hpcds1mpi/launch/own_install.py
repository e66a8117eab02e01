"""This installation of hpcds1mpi, as a batch job that runs it must find it.

A job does not get the PATH it was submitted with (PBS passes only ``PBS_O_*`` variables
unless ``qsub -V``; Slurm likewise under ``SBATCH_EXPORT=NONE``), so a script that runs
``hpcds1mpi`` puts this Python's bin folder first on PATH: the job then finds this
installation, and the ``mpiexec`` of its MPI (the mpich wheel's) before the site's, which may
be another MPI family. The campaign scripts, ``tune --submit``, the calibration sweep and the scripts of
``recommend`` / ``serve`` / the Python API write it with the same helpers. A folder PATH
cannot hold (a ``:``, which splits it) or a script file cannot (bytes that are not UTF-8) is
refused (:func:`check_bin_dir`): the job would run the site's hpcds1mpi and mpiexec.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from pathlib import Path
from typing import Sequence

from hpcds1mpi.errors import ConfigError

#: The command name of this toolkit, as a script's program line starts it.
COMMAND = "hpcds1mpi"


def own_executable() -> tuple[str, str]:
    """(the ``hpcds1mpi`` a job runs, the folder put first on its PATH): this Python's, so
    the job finds the same installation and its MPI; ``("hpcds1mpi", "")`` when no
    ``hpcds1mpi`` sits next to this Python (then the job's own PATH decides)."""
    bin_dir = Path(sys.executable).parent
    exe = bin_dir / COMMAND
    return (str(exe), str(bin_dir)) if exe.exists() else (COMMAND, "")


def runs_own_command(program: Sequence[str]) -> bool:
    """Whether the program tokens start the bare ``hpcds1mpi`` (a kernel workload), whose
    installation the job must be shown; a path the user gave is theirs and left alone."""
    return bool(program) and program[0] == COMMAND


def check_bin_dir(bin_dir: str) -> None:
    """Refuse a folder a script cannot put on PATH.

    Raises:
        ConfigError: it has bytes that are not UTF-8 (the script is UTF-8 text), or a ``:``
            (PATH splits there, and the job silently runs another hpcds1mpi and mpiexec).
    """
    try:
        bin_dir.encode("utf-8")
    except UnicodeEncodeError:
        shown = os.fsencode(bin_dir).decode("utf-8", "backslashreplace")
        raise ConfigError(f"this installation's folder {shown} is not UTF-8, so a batch "
                          "script cannot put it on PATH; install hpcds1mpi under a UTF-8 "
                          "path") from None
    if ":" in bin_dir:
        raise ConfigError(f"this installation's folder {bin_dir} has a ':', which PATH "
                          "cannot hold (it splits there, and the job would run the site's "
                          "hpcds1mpi and mpiexec); install hpcds1mpi under a path without ':'")


def path_export(bin_dir: str, job) -> str:
    """The folder a script puts first on PATH (quoted; "" for none): ``bin_dir``, unless the
    site's preamble already puts it first and no module is loaded after it (the cluster
    file's ``export PATH=...`` line would otherwise be written twice).

    Raises:
        ConfigError: a folder PATH or the script cannot hold (:func:`check_bin_dir`).
    """
    if not bin_dir:
        return ""
    check_bin_dir(bin_dir)
    setting = [line for line in job.preamble() if re.search(r"\bPATH=", line)]
    first = re.compile(r"^\s*export\s+PATH=([\"']?)" + re.escape(bin_dir)
                       + r"/?:\$(PATH|\{PATH\})\1\s*;?\s*$")
    if setting and first.match(setting[-1]) and not job.modules():
        return ""
    return shlex.quote(bin_dir)
