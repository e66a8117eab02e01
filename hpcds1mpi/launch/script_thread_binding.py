"""A job script's ``-bind-to core`` that gives each rank one core for several threads.

``mpiexec -bind-to core`` (hydra: MPICH, Intel MPI; Open MPI's ``mpirun`` alike) binds each
rank to one core, so all the threads a script gives a rank share it: the job runs as if with
one thread per rank (s31 tester P3: ``-bind-to core`` with ``OMP_NUM_THREADS=2``, which
``advise`` had passed). Hydra's ``-bind-to core:T`` gives a rank T cores, Open MPI's
``--map-by slot:PE=T`` the same; ``--rewrite`` writes hydra's
(:func:`hydra_bind_value`, used by :mod:`~hpcds1mpi.launch.script_rewrite`). A ``--map-by``
that carries ``PE=T`` (or ``--cpus-per-proc T``) already gives a rank T cores under
``--bind-to core`` (:func:`rank_cores`; s40 tester A4: it was warned of, its fix the option
already written). Open MPI's ``mpirun`` binds each rank to one core by itself when it starts
2 ranks or fewer (mpirun(1): core for np <= 2, socket / NUMA domain above), so a script that
writes no binding of its own gets the same one core (:func:`default_one_core`; s46 tester H3:
``mpirun.openmpi -np 1`` with ``--cpus-per-task=2`` was priced as 1 rank x 2 threads).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from hpcds1mpi.launch.mpi_names import MPICH, OPENMPI

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.launch.job_script import JobScript, Launch

#: Binding units that take a count (``core:2``).
_COUNTED = ("core", "hwthread")
#: A ``--map-by`` modifier that gives each rank a set of cores (Open MPI 4 ``PE=2``, 5 ``pe=2``).
PE_MODIFIER = re.compile(r"^(pe)=(\d+)$", re.I)


def rank_cores(launch: "Launch") -> int:
    """The cores Open MPI's ``--bind-to core`` gives each rank of ``launch``: the ``PE=``
    modifier of its ``--map-by`` (``slot:PE=2``, ``ppr:1:node:PE=2``, 4.1's
    ``slot:PE=2,oversubscribe``), else its ``--cpus-per-proc`` / ``--cpus-per-rank``; else 1."""
    opt = launch.options.get("map-by")
    for piece in re.split(r"[:,]", (opt.value or "") if opt is not None else ""):
        if pe := PE_MODIFIER.match(piece):
            return int(pe.group(2))
    per_rank = launch.options.get("cpus-per-task")
    value = (per_rank.value or "") if per_rank is not None else ""
    return int(value) if value.isdigit() and int(value) > 0 else 1


def one_core_unit(launch: "Launch") -> str | None:
    """The unit (``core`` / ``hwthread``) of ``launch``'s ``-bind-to`` when it binds a rank
    to one of them (no count, or ``:1``); None otherwise."""
    opt = launch.options.get("bind-to") if launch.kind == "mpi" else None
    unit, _, count = (opt.value or "").lower().partition(":") if opt is not None else ("", "", "")
    return unit if unit in _COUNTED and count in ("", "1") else None


def one_core_warning(script: "JobScript", launch: "Launch", family: str | None) -> str | None:
    """One line when ``launch``'s ``-bind-to core`` leaves a rank's threads (the script's
    threads per rank) one core to share, with the fix for its MPI ``family`` (unknown: both);
    Open MPI's own binding of 2 ranks or fewer alike (:func:`default_one_core`)."""
    threads = script.threads or 1
    if threads > 1 and (ranks := default_one_core(script, launch, family)):
        return (f"line {launch.line}: Open MPI's mpirun binds each rank to one core by "
                f"default when it starts 2 ranks or fewer (here {ranks}), so a rank's "
                f"{threads} threads share one core (they run as one): give --map-by "
                f"slot:PE={threads} (or --bind-to none)")
    unit = one_core_unit(launch)
    cores = rank_cores(launch) if launch.kind == "mpi" else 1
    if unit is None or threads <= cores:
        return None
    opt = launch.options["bind-to"]
    written = script.text[opt.span[0]:opt.span[1]]
    if cores > 1:  # a PE= of its own, narrower than its threads: only Open MPI's mpirun takes it
        return (f"line {launch.line}: {written} with {cores} cores per rank binds each rank to "
                f"{cores} {unit}s, which its {threads} threads share: give PE={threads} in "
                "its --map-by")
    hydra = f"-bind-to {unit}:{threads}"
    open_mpi = f"--map-by slot:PE={threads}"
    fix = (hydra if family == MPICH else open_mpi if family == OPENMPI else
           f"{hydra} for MPICH / Intel MPI's hydra, {open_mpi} for Open MPI")
    return (f"line {launch.line}: {written} binds each rank to one {unit}, which its "
            f"{threads} threads share (they run as one): give {fix}")


def default_one_core(script: "JobScript", launch: "Launch", family: str | None) -> int | None:
    """The ranks of ``launch`` when it is Open MPI's ``mpirun`` (``family``) starting 2 ranks
    or fewer with no placement or binding of its own — options
    (:func:`~hpcds1mpi.launch.open_mpi_binding.binds_its_own`) or ``OMPI_MCA_`` variables of
    the mapping and binding frameworks, no ``--oversubscribe`` —, so that it binds each rank to
    one core; else None (another or an unknown MPI, or a rank count not read: nothing said)."""
    from hpcds1mpi.launch.open_mpi_binding import OPEN_MPI_BINDING_MCA, binds_its_own

    if family != OPENMPI or launch.kind != "mpi" or not launch.spans:
        return None
    words = script.text[launch.span[1]:launch.spans[0][0]].split()
    # an oversubscribed node's ranks are bound to none, and the slots are not read here
    if binds_its_own(words) or any(w.lstrip("-") == "oversubscribe" for w in words):
        return None
    mca = tuple(f"OMPI_MCA_{prefix}" for prefix in OPEN_MPI_BINDING_MCA)
    if any(name.startswith(mca) for name in (*launch.scope, *launch.env)):
        return None
    written = launch.options.get("ntasks")
    if written is not None:
        value = launch.value("ntasks", launch.scope) or ""
        ranks = int(value) if value.isdigit() else None
    else:  # mpirun without -n fills the job's slots: its tasks
        ranks = script.ntasks or ((script.nodes or 1) * script.ntasks_per_node
                                  if script.ntasks_per_node else None)
    return ranks if ranks is not None and 0 < ranks <= 2 else None


def hydra_bind_value(launch: "Launch", threads: int) -> str | None:
    """The ``-bind-to`` value a rewrite to ``threads`` per rank gives hydra (``core:T``; one
    thread: ``core``), None when the script's is kept (no count-taking unit, or unchanged)."""
    opt = launch.options.get("bind-to") if launch.kind == "mpi" else None
    unit, _, count = (opt.value or "").lower().partition(":") if opt is not None else ("", "", "")
    if unit not in _COUNTED or not (count == "" or count.isdigit()):
        return None
    value = unit if threads <= 1 else f"{unit}:{threads}"
    return None if value == (opt.value or "").lower() else value
