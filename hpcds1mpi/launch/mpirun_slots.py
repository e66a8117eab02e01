"""Whether Open MPI's ``mpirun -n N`` finds slots for its ranks in the job's tasks.

Inside a Slurm job Open MPI's ``mpirun`` takes its slots from the allocation: one per task the
job has, whatever cores its nodes or CPUs its tasks hold. More ranks than that stop the job at
once: "There are not enough slots available in the system to satisfy the 2 slots that were
requested by the application" (s45 tester A4: ``mpirun.openmpi -np 2`` in a job of
``--ntasks=1``, of ``-n 1 -c 2`` and of ``-N 1`` alone; measured on the 2-core test Slurm
22.05.8, Open MPI 4.1.4), unless given ``--oversubscribe``; ``-N 1 --exclusive`` ran (Slurm
then counts the node's CPUs as its tasks, ``SLURM_TASKS_PER_NODE=2``). MPICH's hydra (``mpiexec.mpich -n 2``) and Intel
MPI's ``mpiexec -n 2`` run both ranks in the same job, sharing its CPUs; an srun step asking
more is refused too, which :mod:`~hpcds1mpi.launch.step_fit` says. A host list or host file
gives its own slots (:mod:`~hpcds1mpi.launch.script_slot_fill`,
:mod:`~hpcds1mpi.launch.host_spelling`), and a job given more of a node than its tasks ask
(``--exclusive``, ``--mincpus``) or a node range is not judged.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hpcds1mpi.launch.script_options import to_int
from hpcds1mpi.launch.step_fit import job_tasks

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.launch.job_script import JobScript, Launch

#: Options that give ``mpirun`` slots of their own, or let it run more ranks than slots.
_OWN_SLOTS = ("host", "hostfile", "oversubscribe")


def slots_refused(script: "JobScript", launch: "Launch | None", family: str | None) -> str:
    """Why Open MPI's ``launch`` (``family`` its MPI: :func:`~hpcds1mpi.launch.
    launch_line_checks.launch_family`) stops at once for starting more ranks (``-n``) than the
    Slurm job has tasks, with the fix; "" when it fits, is another MPI's or cannot be judged."""
    from hpcds1mpi.launch.mpi_names import OPENMPI

    if launch is None or launch.kind != "mpi" or family != OPENMPI or \
            script.scheduler != "slurm" or any(o in launch.options for o in _OWN_SLOTS):
        return ""
    mapping = launch.options.get("map-by")
    if mapping is not None and "OVERSUBSCRIBE" in (mapping.value or "").upper():
        return ""
    ranks = to_int(launch.value("ntasks", launch.scope) or "")
    tasks = job_tasks(script)
    if not ranks or tasks is None or ranks <= tasks:
        return ""
    return (f"line {launch.line}: Open MPI's {launch.launcher} starts {ranks} ranks, but the "
            f"job has {tasks} task{'s' if tasks != 1 else ''}, its slots: it stops at once "
            f"(not enough slots); ask #SBATCH --ntasks={ranks}, or give {launch.launcher} "
            "--oversubscribe")
