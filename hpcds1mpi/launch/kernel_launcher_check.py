"""The kernels' own MPI (this Python's mpi4py) checked against the launcher ``sweep --launch``
starts them with, before anything runs.

A ``--command`` sweep checks its program's MPI against the launcher (:mod:`.preflight`); a
supervised kernel sweep had not: the MPICH wheel's mpi4py under ``srun --mpi=pmix`` aborted in
``MPI_Init`` and the supervisor said only "exited 16 without recording a run" (s33 tester A9),
and a cluster file's ``mpi = "pmix"`` failed every campaign shard the same way. The wheel's
``libmpi`` is found by mpi4py's own loader, not by ``ldd`` of the extension, so the library is
read from the interpreter that loaded it (:func:`mpi4py_library`).
"""

from __future__ import annotations

import os
import subprocess
import sys

from hpcds1mpi.errors import ConfigError
from hpcds1mpi.launch.mpi_names import FAMILY_NAMES, MPICH, OPENMPI

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


def _pmix_words(library: str, env: dict) -> bool | None:
    """Whether the MPICH-family ``library`` speaks PMIx (:mod:`.pmix_support`'s rule)."""
    from hpcds1mpi.launch.elf_libraries import ldd_text
    from hpcds1mpi.launch.pmix_support import mpich_speaks_pmix

    text = ldd_text(library, env)
    if text is None:
        return None
    names = [line.strip().split(" ", 1)[0] for line in text.splitlines()]
    return mpich_speaks_pmix(library, names, unresolved="not found" in text)


def check_kernel_launcher(launch, plugin_from: str, env: dict | None = None,
                          mpiexec_from: str = "") -> None:
    """Refuse a launcher that cannot start the kernels (this Python's mpi4py) as one job.

    Args:
        launch: the :class:`~hpcds1mpi.launch.launchers.Launcher` ``--launch`` would use.
        plugin_from: where srun's plugin came from, for the message (``"--mpi pmix"``,
            ``'mpi = "pmix" in the --cluster file'``, ``"the default"``).
        mpiexec_from: the key that gave the mpiexec, which the fix names instead of
            ``--mpiexec`` (which only a ``--command`` sweep takes): ``"mpiexec in the
            --cluster file"``; "" for none.

    Raises:
        ConfigError: srun's ``--mpi`` cannot wire up this MPI (``none``; ``pmix`` for an MPICH
            without PMIx; another than ``pmix`` for an Open MPI without Slurm's PMI), or an
            mpiexec of another MPI family; one line naming the option that fixes it.
    """
    from hpcds1mpi.launch import mpi_family
    from hpcds1mpi.launch.own_launcher import mpi4py_mpi
    from hpcds1mpi.launch.pmix_support import openmpi_slurm_pmi

    env = dict(os.environ if env is None else env)
    program = mpi4py_mpi()
    if program.family not in (OPENMPI, MPICH):
        return  # unread: the launched sweep's own check (check_started_by) decides
    name = FAMILY_NAMES[program.family]
    head = f"sweep --launch: the kernels run this Python's mpi4py, linked against {name}"
    fix = ('pass --mpi {0} (or set mpi = "{0}" in the --cluster file); nothing was launched')
    if launch.name != "srun":
        from hpcds1mpi.launch.mpi_names import LAUNCHER_NAMES

        family = mpi_family.launcher_family(launch.command)
        if family == program.family:
            return
        own = python_mpiexec(program.family, env)
        where = mpiexec_from or "mpiexec in the --cluster file"  # s42: --launch takes no --mpiexec
        fix = (f"set {where} to {own}" if own else
               f"install {name}'s launcher and set {where} to it")
        raise ConfigError(f"{head} ({program.evidence}), but {launch.command} is "
                          f"{LAUNCHER_NAMES.get(family or '', 'not its launcher')}, which would start "
                          f"it as independent 1-rank copies; {fix}; nothing was launched")
    plugin = getattr(launch, "mpi", "") or ""
    library = mpi4py_library(env=env)
    if plugin == "none":
        raise ConfigError(f"{head}; srun --mpi=none ({plugin_from}) gives its ranks no "
                          f"wire-up: {fix.format('pmix' if program.family == OPENMPI else 'pmi2')}")
    if program.family == MPICH and plugin.startswith("pmix") and library and \
            _pmix_words(library, env) is False:
        raise ConfigError(f"{head} ({library}), which links no PMIx library, so srun "
                          f"--mpi={plugin} ({plugin_from}) cannot start its ranks as one job "
                          f"(they abort in MPI_Init): {fix.format('pmi2')}")
    if program.family == OPENMPI and plugin and not plugin.startswith("pmix") and library:
        speaks, why = openmpi_slurm_pmi(library)
        if speaks is False:
            raise ConfigError(f"{head} ({library}); {why}, so srun --mpi={plugin} "
                              f"({plugin_from}) cannot start its ranks as one job: "
                              f"{fix.format('pmix')}")


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
