"""Which MPI family's launcher started this process, checked against its own mpi4py.

Read from the wire-up variables a launcher sets in its ranks (:func:`started_by`) and from the
ELF of the mpi4py extension this Python would load (:func:`mpi4py_mpi`), both without starting
MPI, so :func:`check_started_by` can refuse a mismatch before ``MPI_Init`` aborts in it. The
command layer calls it before asking for the world communicator.
"""

from __future__ import annotations

import os

from hpcds1mpi.errors import LaunchError
from hpcds1mpi.launch.mpi_family import binary_mpi, candidates
from hpcds1mpi.launch.mpi_names import FAMILY_NAMES, MPICH, OPENMPI, ProgramMPI

#: What each launcher's wire-up sets in the ranks it starts (as the launch probe reads them):
#: Open MPI's mpirun, PMI (hydra, srun --mpi=pmi2) and PMIx (Open MPI, srun --mpi=pmix).
OPEN_MPI_VARS = ("OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK")
PMI_VARS = ("PMI_RANK", "PMI_FD", "PMI_PORT")
PMIX_VARS = ("PMIX_RANK", "PMIX_NAMESPACE")


def started_by(env: dict | None = None) -> str | None:
    """The MPI family of the launcher that started this process, from its wire-up variables:
    ``"openmpi"`` (Open MPI's mpirun: ``OMPI_COMM_WORLD_*`` without PMI), ``"mpich"`` (PMI
    only: hydra, ``srun --mpi=pmi2``), or None: not launched, PMIx alone (``srun --mpi=pmix``
    serves either family) or both kinds (cannot tell)."""
    env = os.environ if env is None else env
    ompi, pmi = (any(v in env for v in names) for names in (OPEN_MPI_VARS, PMI_VARS))
    if ompi and not pmi:
        return OPENMPI
    if pmi and not ompi and not any(v in env for v in PMIX_VARS):
        return MPICH
    return None


def mpi4py_mpi() -> ProgramMPI:
    """The MPI of this Python's mpi4py, read without starting MPI: the ELF of the extension
    ``from mpi4py import MPI`` would load (mpi4py 4 picks its mpich or openmpi build by the
    libmpi it finds)."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("mpi4py.MPI")
    except (ImportError, OSError, RuntimeError) as exc:
        return ProgramMPI(None, f"mpi4py cannot be loaded ({str(exc).splitlines()[0]})")
    if spec is None or not spec.origin or not os.path.isfile(spec.origin):
        return ProgramMPI(None, "no mpi4py extension found")
    return binary_mpi(spec.origin)


def check_started_by(env: dict | None = None) -> None:
    """Refuse, before ``MPI_Init``, a process started by another MPI family's launcher than its
    mpi4py's: the wheel's MPICH under Open MPI's mpirun aborts in ``MPI_Init`` with an error
    stack ("unsupported PMI version PMIx"). Every rank finds the same; rank 0 says it, the
    others exit with the same code without a word (one line, not one per rank).

    Raises:
        LaunchError: on rank 0, naming the launcher that fits (the wheel's ``mpiexec`` first).
    """
    from sys import executable

    from hpcds1mpi.runtime.mpi import launch_rank

    env = os.environ if env is None else env
    launcher = started_by(env)
    library = mpi4py_mpi() if launcher else ProgramMPI(None, "")
    if library.family not in (OPENMPI, MPICH) or library.family == launcher:
        return
    if launch_rank(env) != 0:
        raise SystemExit(LaunchError.exit_code)
    wheel = os.path.join(os.path.dirname(os.path.abspath(executable)), "mpiexec")
    fits = sorted(candidates(library.family, env), key=lambda p: p != wheel)  # the wheel's first
    fit, srun = (fits or ["its own mpiexec"])[0], "pmix" if library.family == OPENMPI else "pmi2"
    by = ("Open MPI's mpirun (OMPI_COMM_WORLD_SIZE is set)" if launcher == OPENMPI else
          "a PMI launcher (hydra's mpiexec or srun --mpi=pmi2: PMI_RANK is set)")
    raise LaunchError(f"hpcds1mpi was started by {by}, but its mpi4py uses "
                      f"{FAMILY_NAMES[library.family]} ({library.evidence}), which that "
                      f"launcher cannot start as one job; start it with {fit} -n N instead "
                      f"(or srun --mpi={srun} inside an allocation)")
