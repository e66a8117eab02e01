"""A job script's ``-bind-to core`` that gives each rank one core for several threads.

``mpiexec -bind-to core`` (hydra: MPICH, Intel MPI; Open MPI's ``mpirun`` alike) binds each
rank to one core, so all the threads a script gives a rank share it: the job runs as if with
one thread per rank (s31 tester P3: ``-bind-to core`` with ``OMP_NUM_THREADS=2``, which
``advise`` had passed). Hydra's ``-bind-to core:T`` gives a rank T cores, Open MPI's
``--map-by slot:PE=T`` the same; ``--rewrite`` writes hydra's
(:func:`hydra_bind_value`, used by :mod:`~hpcds1mpi.launch.script_rewrite`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hpcds1mpi.launch.mpi_names import MPICH, OPENMPI

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.launch.job_script import JobScript, Launch

#: Binding units that take a count (``core:2``).
_COUNTED = ("core", "hwthread")


def one_core_unit(launch: "Launch") -> str | None:
    """The unit (``core`` / ``hwthread``) of ``launch``'s ``-bind-to`` when it binds a rank
    to one of them (no count, or ``:1``); None otherwise."""
    opt = launch.options.get("bind-to") if launch.kind == "mpi" else None
    unit, _, count = (opt.value or "").lower().partition(":") if opt is not None else ("", "", "")
    return unit if unit in _COUNTED and count in ("", "1") else None


def one_core_warning(script: "JobScript", launch: "Launch", family: str | None) -> str | None:
    """One line when ``launch``'s ``-bind-to core`` leaves a rank's threads (the script's
    threads per rank) one core to share, with the fix for its MPI ``family`` (unknown: both)."""
    threads = script.threads or 1
    unit = one_core_unit(launch)
    if unit is None or threads <= 1:
        return None
    opt = launch.options["bind-to"]
    written = script.text[opt.span[0]:opt.span[1]]
    hydra = f"-bind-to {unit}:{threads}"
    open_mpi = f"--map-by slot:PE={threads}"
    fix = (hydra if family == MPICH else open_mpi if family == OPENMPI else
           f"{hydra} for MPICH / Intel MPI's hydra, {open_mpi} for Open MPI")
    return (f"line {launch.line}: {written} binds each rank to one {unit}, which its "
            f"{threads} threads share (they run as one): give {fix}")


def hydra_bind_value(launch: "Launch", threads: int) -> str | None:
    """The ``-bind-to`` value a rewrite to ``threads`` per rank gives hydra (``core:T``; one
    thread: ``core``), None when the script's is kept (no count-taking unit, or unchanged)."""
    opt = launch.options.get("bind-to") if launch.kind == "mpi" else None
    unit, _, count = (opt.value or "").lower().partition(":") if opt is not None else ("", "", "")
    if unit not in _COUNTED or not (count == "" or count.isdigit()):
        return None
    value = unit if threads <= 1 else f"{unit}:{threads}"
    return None if value == (opt.value or "").lower() else value
