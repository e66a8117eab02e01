"""The kernels' own MPI (this Python's mpi4py) checked against the launcher ``sweep --launch``
starts them with, before anything runs.

A ``--command`` sweep checks its program's MPI against the launcher (:mod:`.preflight`); a
supervised kernel sweep had not: the MPICH wheel's mpi4py under ``srun --mpi=pmix`` aborted in
``MPI_Init`` and the supervisor said only "exited 16 without recording a run" (s33 tester A9),
and a cluster file's ``mpi = "pmix"`` failed every campaign shard the same way. The wheel's
``libmpi`` is found by mpi4py's own loader, not by ``ldd`` of the extension, so the library is
read from the interpreter that loaded it (:func:`mpi4py_library`). The check is a program's
(:func:`~hpcds1mpi.launch.mpi_family.check_launcher`), in the kernels' words (s43 review R5).
"""

from __future__ import annotations

import os
import subprocess
import sys

from hpcds1mpi.launch.mpi_names import MPICH, OPENMPI

#: Prints the MPI library file this interpreter's mpi4py loads, without starting MPI.
LOADED_LIBMPI = (
    "import mpi4py; mpi4py.rc.initialize = False; mpi4py.rc.finalize = False\n"
    "from mpi4py import MPI\n"
    "import re\n"
    "for line in open('/proc/self/maps'):\n"
    "    path = line.split()[-1]\n"
    "    if re.search(r'/lib(mpi|mpich)[^/]*\\.so', path):\n"
    "        print(path); break\n")


def mpi4py_library(interpreter: str = sys.executable, env: dict | None = None) -> str | None:
    """The MPI library file ``interpreter``'s mpi4py loads (None: not told: no mpi4py, no
    ``/proc``)."""
    try:
        proc = subprocess.run([interpreter, "-c", LOADED_LIBMPI], capture_output=True,
                              text=True, timeout=60, env=env, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    found = proc.stdout.strip()
    return found if proc.returncode == 0 and os.path.isfile(found) else None


def check_kernel_launcher(launch, plugin_from: str, env: dict | None = None,
                          mpiexec_from: str = "mpiexec in the --cluster file",
                          command: str = "sweep --launch") -> None:
    """Refuse a launcher that cannot start the kernels (this Python's mpi4py) as one job: the
    check of a program's launcher (:func:`~hpcds1mpi.launch.mpi_family.check_launcher`), given
    the library mpi4py loads and the mpiexec beside this Python, in the kernels' words.

    Args:
        launch: the :class:`~hpcds1mpi.launch.launchers.Launcher` ``--launch`` would use.
        plugin_from: where srun's plugin came from, for the message (``"--mpi pmix"``,
            ``'mpi = "pmix" in the --cluster file'``, ``"the default"``).
        mpiexec_from: the key that gives the mpiexec, which the fix names instead of
            ``--mpiexec`` (which only a program's sweep takes).
        command: the command refusing (``"sweep --launch"``, ``"tune"``).

    Raises:
        ConfigError: srun's ``--mpi`` cannot wire up this MPI (``none``; ``pmix`` for an MPICH
            without PMIx; another than ``pmix`` for an Open MPI without Slurm's PMI), or an
            mpiexec of another MPI family; one line naming the option that fixes it.
    """
    from hpcds1mpi.launch import mpi_family
    from hpcds1mpi.launch.own_launcher import mpi4py_mpi
    from hpcds1mpi.launch.refusal_words import kernel_words

    env = dict(os.environ if env is None else env)
    program = mpi4py_mpi()
    if program.family not in (OPENMPI, MPICH):
        return  # unread: the launched sweep's own check (check_started_by) decides
    srun = launch.name == "srun"
    mpi_family.check_launcher(
        program, "srun" if srun else launch.command, getattr(launch, "mpi", "") if srun else "",
        env, words=kernel_words(command, plugin_from, mpiexec_from),
        library=mpi4py_library(env=env), suggest=lambda: python_mpiexec(program.family, env))


def python_mpiexec(family: str, env: dict | None = None) -> str | None:
    """The launcher of this Python's mpi4py: the ``mpiexec`` beside the interpreter (the venv's,
    which the MPICH wheel installs) where it is of ``family``, else one of the installation
    whose library mpi4py loads; None where none is found. A refusal had named Debian's
    ``mpiexec.mpich`` first on PATH, another MPICH than the wheel's (s42)."""
    from pathlib import Path

    from hpcds1mpi.launch import mpi_family

    beside = Path(sys.executable).parent / "mpiexec"  # not resolved: the venv's bin
    if beside.exists() and mpi_family.launcher_family(str(beside)) == family:
        return str(beside)
    found = mpi_family.candidates(family, env, library=mpi4py_library(env=env))
    return found[0] if found else None
