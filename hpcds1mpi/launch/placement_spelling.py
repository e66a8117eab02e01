"""A launch's rank-placement option that only the other MPI family's launcher takes.

Measured (s44, a 2-node salloc of 2 tasks per node, each launcher given the option with
``-n 2``, ``-n 4`` and no ``-n``): Open MPI 4.1.4's ``mpirun`` stops at ``-rr`` (unknown
option "-rr", exit 1); so do MPICH 5.0.2's hydra and Intel MPI's ``mpirun`` (unrecognized
argument rr, exit 255); only Intel MPI's ``mpiexec`` / ``mpiexec.hydra`` take it, as one rank
per node (``-n 2``: 1 + 1, no ``-n``: 1 + 1, ``-n 4``: dealt round again, 2 + 2). Hydra (MPICH's
and Intel MPI's, either name) stops at Open MPI's ``--bynode`` / ``-bynode``, ``--byslot`` /
``-byslot`` and ``--npersocket K`` (unrecognized argument, exit 255). Open MPI 4.1.4 takes
``--bynode`` and ``--byslot`` as deprecated spellings of ``--map-by node`` / ``--map-by slot``
(it prints a notice and maps as those: ``-n 2 --bynode`` 1 + 1, ``-n 2 --byslot`` 2 on the
first node; the script reader counts them so), and ``--npersocket K`` as K ranks on each
socket (not counted: :func:`~hpcds1mpi.launch.script_slot_fill.per_socket_note`). Open MPI
4.1.4 stops at hydra's host file option ``-f`` (unknown option "-f", exit 1); both take
``--hostfile`` / ``-hostfile`` / ``--machinefile`` / ``-machinefile``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hpcds1mpi.launch.mpi_names import MPICH, OPENMPI

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.launch.job_script import JobScript, Launch

#: Open MPI's placement options hydra stops at -> (the option said, what to give hydra).
_OPEN_MPI_ONLY = {
    "bynode": ("--bynode", "-ppn K (K ranks per node; hydra fills each node's slots "
                           "otherwise)"),
    "byslot": ("--byslot", "nothing: hydra fills each node's slots by default"),
    "npersocket": ("--npersocket", "-ppn K (K ranks per node)"),
}

def placement_spelling_warning(script: "JobScript", launch: "Launch", family: str | None,
                               intel: bool | None) -> str | None:
    """One line when ``launch`` gives a placement option its launcher, of MPI ``family``
    (:data:`~hpcds1mpi.launch.mpi_names.MPICH` / ``OPENMPI``; None: not known, nothing said;
    ``intel``: whether it is Intel MPI's hydra, None where not known, as
    :func:`~hpcds1mpi.launch.host_spelling.hydra_kind` tells both), stops at, naming the
    spelling it takes; None otherwise."""
    if launch.kind != "mpi":
        return None
    head = f"line {launch.line}: {launch.launcher}"
    if "rr" in launch.options and _refuses_rr(launch, family, intel):
        who = {OPENMPI: "Open MPI's mpirun stops at it (unknown option, exit 1)",
               MPICH: "MPICH's hydra and Intel MPI's mpirun stop at it (unrecognized argument, "
                      "exit 255)"}
        return (f"{head} -rr: only Intel MPI's mpiexec takes -rr (one rank per node); "
                f"{who[family]}; give "
                + ("--map-by ppr:1:node" if family == OPENMPI else "-ppn 1"))
    if family == OPENMPI and _spelled(script, launch, "hostfile") == "-f":
        return (f"{head} {script.written(launch.options['hostfile'])}: Open MPI's mpirun has "
                "no -f (hydra's): it stops (unknown option, exit 1); give --hostfile "
                f"{launch.options['hostfile'].value or 'F'}")
    if family != MPICH:
        return None
    for name, (said, right) in _OPEN_MPI_ONLY.items():
        if name in launch.options:
            return (f"{head} {script.written(launch.options[name])}: hydra (MPICH, Intel MPI) "
                    f"has no {said}, Open MPI's option: it stops (unrecognized argument, exit "
                    f"255); give {right}")
    return None


def _spelled(script: "JobScript", launch: "Launch", name: str) -> str | None:
    """The option word ``launch``'s option ``name`` is written with (``-f``), None without."""
    opt = launch.options.get(name)
    written = script.written(opt).split() if opt is not None else []
    return written[0].split("=", 1)[0].strip("\"'") if written else None


def _refuses_rr(launch: "Launch", family: str | None, intel: bool | None) -> bool:
    """Whether ``launch``'s launcher stops at ``-rr``: Open MPI's, MPICH's hydra, Intel MPI's
    ``mpirun``; not Intel MPI's ``mpiexec``, nor a launcher whose MPI is not known."""
    if family == OPENMPI:
        return True
    if family != MPICH:
        return False
    return not intel or launch.launcher.rsplit("/", 1)[-1] == "mpirun"


__all__ = ["placement_spelling_warning"]
