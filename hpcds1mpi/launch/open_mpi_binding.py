"""Open MPI's ``mpirun`` rank placement and binding for ranks of several threads.

Open MPI 4.1's ``mpirun`` binds each rank of a small job to one core, so the threads of a rank
would share it. :func:`open_mpi_thread_binding` gives the options that give each rank the cores
of its threads, one rule for the sweep's launches (:class:`~.launchers.OpenMpiMpirun`) and a
batch script's ``mpirun`` line (:mod:`~.script_binding`); :func:`binds_its_own` says whether the
user's own launcher options already place or bind the ranks (then nothing is added);
:data:`UNBIND_OPEN_MPI` is the variable a script of unknown MPI flavour unbinds them by.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from hpcds1mpi.config import Configuration

#: Open MPI ``mpirun`` options that place or bind ranks (any number of leading dashes, a
#: value after ``=`` or as the next word): given by the user, the sweep adds none of its own.
OPEN_MPI_BINDING_OPTIONS = frozenset((
    "bind-to", "map-by", "cpus-per-proc", "cpus-per-rank", "cpu-set", "cpu-list", "rankfile",
    "rf", "bind-to-core", "bind-to-socket", "bind-to-none", "bynode", "byslot", "bycore",
    "bysocket", "npernode", "npersocket", "pernode", "ppr", "use-hwthread-cpus"))
#: MCA parameter prefixes of the mapping and binding frameworks (``--mca NAME VALUE``).
OPEN_MPI_BINDING_MCA = ("hwloc_base_", "rmaps_")
#: The variable by which Open MPI's mpirun takes its rank binding policy from the
#: environment (``--bind-to`` on its command line beats it); other MPIs do not read it.
UNBIND_OPEN_MPI = "OMPI_MCA_hwloc_base_binding_policy"


def binds_its_own(args: Sequence[str]) -> bool:
    """Whether launcher options ``args`` place or bind Open MPI's ranks themselves
    (:data:`OPEN_MPI_BINDING_OPTIONS`, or an MCA parameter of :data:`OPEN_MPI_BINDING_MCA`)."""
    words = list(args)
    for i, word in enumerate(words):
        name = word.lstrip("-").split("=", 1)[0].lower()
        if not word.startswith("-"):
            continue
        if name in OPEN_MPI_BINDING_OPTIONS:
            return True
        if name in ("mca", "gmca") and i + 1 < len(words) and words[i + 1].startswith(
                OPEN_MPI_BINDING_MCA):
            return True
    return False


@dataclass(frozen=True)
class ThreadBinding:
    """Open MPI ``mpirun`` options that give each rank the cores of its threads: ``tokens``
    (``--map-by ...``, ``--bind-to none``; on several nodes with ``--map-by ppr:R:node``),
    ``binds_cores`` (each rank bound to cores of its own: its threads are bound too, as under
    srun), ``note`` (what was added and why, said and recorded in ``binding``; "": nothing)."""

    tokens: tuple = ()
    binds_cores: bool = False
    note: str = ""


def open_mpi_thread_binding(config: Configuration, cores: int | None,
                            args: Sequence[str] = (), per_node: bool = False) -> ThreadBinding:
    """The placement options Open MPI's ``mpirun`` needs for ``config``: for the sweep's
    launches and for a batch script's ``mpirun`` line alike.

    Open MPI 4.1's mpirun binds each rank to one core when it starts 2 ranks or fewer (to a
    socket or NUMA domain above), so the threads of a rank would share one core: a thread
    dimension that measures nothing, recorded ok. With more than one thread per rank, unless
    ``args`` (the user's own options) place or bind ranks (:func:`binds_its_own`):

    * the node's ``cores`` hold every rank's threads: ``--map-by slot:PE=T`` (``--map-by
      ppr:R:node:PE=T`` on several nodes): each rank bound to T cores of its own, as
      ``srun -c T --cpu-bind=cores`` binds it;
    * more threads than cores, or cores unknown: ``--bind-to none`` (PE=T would be refused:
      "binding more processes than cpus"): the threads share the node's cores.

    One thread per rank keeps Open MPI's own binding (several nodes: the placement only).
    ``per_node``: the ranks per node given at one node too (the sweep's launches: in an
    allocation of several nodes mpirun fills their slots, and ran a 1-node configuration's
    ranks one per node, s36 tester M0), unless the user's own options place them.
    """
    nodes, ranks, threads = config.nodes, config.ranks_per_node, config.threads
    placed = nodes > 1 or (per_node and not binds_its_own(args))
    spread = ("--map-by", f"ppr:{ranks}:node") if placed else ()
    if threads <= 1 or binds_its_own(args):
        return ThreadBinding(spread)
    if cores and ranks * threads <= cores:
        mapping = f"ppr:{ranks}:node:PE={threads}" if placed else f"slot:PE={threads}"
        return ThreadBinding(("--map-by", mapping), True,
                             f"{threads} threads per rank: Open MPI's mpirun is given --map-by "
                             f"{mapping} (each rank bound to {threads} cores of its own; by "
                             "default it binds a rank to one core, which its threads would "
                             "share)")
    room = (f"{ranks} ranks x {threads} threads on a node of {cores} cores" if cores else
            f"{threads} threads per rank on a node of unknown cores")
    return ThreadBinding((*spread, "--bind-to", "none"), False,
                         f"{room}: Open MPI's mpirun is given --bind-to none (by default it "
                         "binds a rank to one core, which its threads would share)")
