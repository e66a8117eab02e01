"""Whether Open MPI's ``mpirun -n N`` finds slots for its ranks in the job's tasks.

Inside a Slurm job Open MPI's ``mpirun`` takes its slots from the allocation: one per task the
job has, whatever cores its nodes or CPUs its tasks hold. More ranks than that stop the job at
once: "There are not enough slots available in the system to satisfy the 2 slots that were
requested by the application" (s45 tester A4: ``mpirun.openmpi -np 2`` in a job of
``--ntasks=1``, of ``-n 1 -c 2`` and of ``-N 1`` alone; measured on the 2-core test Slurm
22.05.8, Open MPI 4.1.4; as do ``-c 2``, ``-npernode 2`` and ``--map-by ppr:2:node`` there, s46
review RV2), unless given ``--oversubscribe`` or the MCA parameter ``rmaps_base_oversubscribe``
(``--mca``, ``OMPI_MCA_rmaps_base_oversubscribe=1``: both ran); ``-N 1 --exclusive`` ran (Slurm
then counts the node's CPUs as its tasks, ``SLURM_TASKS_PER_NODE=2``). MPICH's hydra (``mpiexec.mpich -n 2``) and Intel
MPI's ``mpiexec -n 2`` run both ranks in the same job, sharing its CPUs; an srun step asking
more is refused too, which :mod:`~hpcds1mpi.launch.step_fit` says. A host list or host file
gives its own slots (:mod:`~hpcds1mpi.launch.script_slot_fill`,
:mod:`~hpcds1mpi.launch.host_spelling`), and a job given more of a node than its tasks ask
(``--exclusive``, ``--mincpus``) or a node range is not judged. The launch line advise reads
gives the asked layout's problem; any other is a warning (:func:`other_launch_slots`).

Hydra (MPICH's ``mpiexec``, Debian's ``mpiexec.mpich``, Intel MPI's ``mpiexec``) starts more
ranks than the job's tasks all the same: ``-n 2``, ``-np 2``, ``--np 2``, ``-ppn 2`` and
``--ppn 2`` each ran 2 ranks in a ``-N 1 --ntasks=1`` job (s49, the test Slurm, MPICH 4.0.2's
``mpiexec.mpich`` and Intel MPI 2021.19's ``mpiexec``), crowding the job's CPUs unsaid;
every such line, the one read too, is a warning with the fix (:func:`shared_cpus`).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from hpcds1mpi.launch.mpi_names import MPICH, OPENMPI
from hpcds1mpi.launch.script_options import to_int
from hpcds1mpi.launch.step_fit import job_tasks

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.launch.job_script import JobScript, Launch

#: Options that give ``mpirun`` slots of their own, or let it run more ranks than slots.
_OWN_SLOTS = ("host", "hostfile", "oversubscribe")
#: Open MPI's MCA parameter that lets it run more ranks than slots, as ``--mca NAME VALUE``
#: or, for mpirun, the variable ``OMPI_MCA_NAME`` (s46 review RV2: run on the test Slurm, a
#: ``--ntasks=1`` job ran ``-np 2`` with either).
_OVERSUBSCRIBE_MCA = "rmaps_base_oversubscribe"
#: The values an MCA boolean is false by (Open MPI's ``mca_base_var_enum`` bool).
_FALSE = ("0", "false", "no", "f", "n", "disabled", "")
#: ``--map-by ppr:K:node``: K ranks on each node.
_PPR_NODE = re.compile(r"ppr:([0-9]{1,6}):node\b", re.I)


def _oversubscribes(script: "JobScript", launch: "Launch") -> bool:
    """Whether ``launch`` lets Open MPI run more ranks than slots (``--oversubscribe`` aside,
    one of :data:`_OWN_SLOTS`): ``--map-by ...:OVERSUBSCRIBE``, or the MCA parameter set on
    its line or before it (a value not known here taken as set, so that a job that may run
    is not said to stop)."""
    mapping = launch.options.get("map-by")
    if mapping is not None and "OVERSUBSCRIBE" in (mapping.value or "").upper():
        return True
    name = "OMPI_MCA_" + _OVERSUBSCRIBE_MCA
    if _OVERSUBSCRIBE_MCA in launch.mca:
        value = launch.mca[_OVERSUBSCRIBE_MCA]
    elif name in launch.env:
        value = launch.env[name][0]
    else:
        set_before = [s for s in script.settings_before(launch) if s.name == name]
        if not set_before:
            return False
        value = set_before[-1].resolved
    return value is None or value.strip().lower() not in _FALSE


#: The spellings of a count of ranks per node each family's launcher runs by: Open MPI's
#: ``-N K`` / ``-npernode K``, hydra's ``-ppn K`` / ``-perhost K`` (MPICH, Intel MPI). One
#: family's spelling under the other's launcher is host_spelling's / placement_spelling's
#: warning, not a count.
_PER_NODE = {OPENMPI: ("N", "npernode"), MPICH: ("ppn", "perhost")}


def _ranks(script: "JobScript", launch: "Launch", family: str) -> tuple[int | None, str]:
    """(the ranks ``launch`` starts, how many per node where a per-node count gives them:
    ``family``'s count per node (:data:`_PER_NODE`), or Open MPI's ``--map-by ppr:K:node``, on
    each of the job's nodes, at least one); (None, "") where not said or not known. ``-n``
    wins over a count per node in both families."""
    if "ntasks" in launch.options:
        return to_int(launch.value("ntasks", launch.scope) or ""), ""
    per_node, opt = None, launch.options.get("ntasks-per-node")
    spelled = script.written(opt).lstrip("-").split("=")[0].split()[0] if opt else ""
    if spelled in _PER_NODE.get(family, ()):
        per_node = to_int(launch.value("ntasks-per-node", launch.scope) or "")
    elif family == OPENMPI and (mapping := launch.options.get("map-by")) is not None and (
            ppr := _PPR_NODE.match(mapping.value or "")):
        per_node = int(ppr.group(1))
    if not per_node:
        return None, ""
    return per_node * (script.base[0]["nodes"] or 1), str(per_node)


def slots_refused(script: "JobScript", launch: "Launch | None", family: str | None) -> str:
    """Why Open MPI's ``launch`` (``family`` its MPI: :func:`~hpcds1mpi.launch.
    launch_line_checks.launch_family`) stops at once for starting more ranks (``-n``, or a
    count per node: :func:`_ranks`) than the Slurm job has tasks, with the fix; "" when it
    fits, may oversubscribe (:func:`_oversubscribes`), is another MPI's or cannot be
    judged."""
    over = _over_tasks(script, launch, family) if family == OPENMPI else None
    if over is None or _oversubscribes(script, launch):
        return ""
    ranks, per_node, tasks = over
    each = f" ({per_node} per node)" if per_node else ""
    return (f"line {launch.line}: Open MPI's {launch.launcher} starts {ranks} ranks{each}, but "
            f"the job has {tasks} task{'s' if tasks != 1 else ''}, its slots: it stops at once "
            f"(not enough slots); ask #SBATCH {_asked(script, ranks, per_node)}, or give "
            f"{launch.launcher} --oversubscribe")


def _over_tasks(script: "JobScript", launch: "Launch | None", family: str
                ) -> tuple[int, str, int] | None:
    """(ranks, per node as :func:`_ranks` gives it, the job's tasks) where ``launch``, an
    ``mpirun`` / ``mpiexec`` of ``family`` in a Slurm job, starts more ranks than the job has
    tasks; None where it does not, takes its slots from a host list or file, or the count is
    not known."""
    if launch is None or launch.kind != "mpi" or script.scheduler != "slurm" or \
            any(o in launch.options for o in _OWN_SLOTS):
        return None
    tasks = job_tasks(script)
    ranks, per_node = _ranks(script, launch, family) if tasks is not None else (None, "")
    return (ranks, per_node, tasks) if ranks and ranks > tasks else None


def _asked(script: "JobScript", ranks: int, per_node: str) -> str:
    """The directives that give the job ``ranks`` tasks (``per_node`` of them a node where
    the launch counts them so): --ntasks beats --ntasks-per-node, which is then a node's most
    (sbatch(1))."""
    return " ".join([f"--ntasks={ranks}"] * (not per_node or bool(script.base[0]["ntasks"]))
                    + [f"--ntasks-per-node={per_node}"] * bool(per_node))


def shared_cpus(script: "JobScript", launch: "Launch | None", family: str | None) -> str:
    """The warning for hydra's ``launch`` (``family`` MPICH: MPICH's or Intel MPI's
    ``mpiexec``, :func:`~hpcds1mpi.launch.launch_line_checks.launch_family`) starting more
    ranks (``-n`` / ``-np`` / ``--np``, or ``-ppn`` / ``--ppn`` / ``-perhost`` x the job's
    nodes) than the Slurm job has tasks: it runs them, sharing the job's CPUs, so each rank
    runs slower than its layout's prediction; with the fix. "" when they fit, or for another
    MPI's launch (Open MPI's stops: :func:`slots_refused`), or one not judged."""
    over = _over_tasks(script, launch, family) if family == MPICH else None
    if over is None:
        return ""
    ranks, per_node, tasks = over
    cpus = tasks * (script.base[0]["cpus_per_task"] or 1)
    if ranks <= cpus:  # --ntasks=1 --cpus-per-task=4 under -n 4: a CPU each, nothing shared
        return ""
    nodes = script.base[0]["nodes"] or 1
    fewer = f"-ppn {tasks // nodes}" if per_node and tasks % nodes == 0 else f"-n {tasks}"
    each = f" ({per_node} per node)" if per_node else ""
    return (f"line {launch.line}: {launch.launcher} starts {ranks} ranks{each}, but the job "
            f"has {tasks} task{'s' if tasks != 1 else ''}: hydra (MPICH, Intel MPI) runs them "
            f"all, sharing the job's CPUs ({ranks} ranks on {cpus} CPU{'s' if cpus != 1 else ''}"
            f"), each slower for it; ask #SBATCH {_asked(script, ranks, per_node)}, or "
            f"give {launch.launcher} {fewer}")


def other_launch_slots(script: "JobScript", launch: "Launch", family: str | None) -> str:
    """:func:`slots_refused` for a launch line other than the one advise reads
    (``script.launch``, whose refusal is the asked layout's problem), as a warning: the job
    stops there all the same (s48 tester O8: a second ``mpirun.openmpi -np 2`` in a
    ``--ntasks=1`` job went unsaid, and the job failed)."""
    return "" if launch is script.launch else slots_refused(script, launch, family)
