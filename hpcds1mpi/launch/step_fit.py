"""Whether an ``srun`` step fits in the allocation its job's directives ask for.

Inside a job srun refuses a step that asks more CPUs than the job holds ("Unable to create step
for job N: More processors requested than permitted"), or more nodes: the job then fails at
once, whatever its layout would have run like (s38 tester D2: ``#SBATCH -N 2`` alone holds one
task of one CPU per node, and ``srun --ntasks-per-node=2`` failed). The job holds its tasks x
CPUs per task (``-N`` alone: one task per node); the step asks its own tasks (``-n``, else the
job's where it counts them, as srun reads ``SLURM_NTASKS``, else ``--ntasks-per-node`` x its
nodes, else one per node) x the CPUs srun gives each
(:func:`~hpcds1mpi.launch.srun_cpus.step_cpus`). Counted one CPU per core, as the partition is
described; a job whose share of a node the directives do not fix (``--exclusive``,
``--mincpus``, ``--cpus-per-gpu``, a node range) or a value not resolved is not judged, nor a
step given ``--overcommit``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hpcds1mpi.launch.script_fits import _plural
from hpcds1mpi.launch.script_options import count_range, to_int
from hpcds1mpi.launch.srun_cpus import step_cpus

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.launch.job_script import JobScript, Launch

#: Directives that give the job more CPUs of a node than its tasks ask for.
OPEN_SHARE = ("exclusive", "mincpus", "cpus-per-gpu", "overcommit", "extra-node-info",
              "core-spec")


def job_tasks(script: "JobScript") -> int | None:
    """The tasks a Slurm job's directives hold (``-N`` alone: one per node, none said: one);
    None where its share of a node is not fixed by them. The one count of them, for the
    step's fit here and Open MPI's slots (:mod:`~hpcds1mpi.launch.mpirun_slots`; s46 review
    RV11: each had its own)."""
    d = script.directives
    if script.base is None or any(name in d for name in OPEN_SHARE) or (
            "nodes" in d and count_range(d["nodes"].value)):
        return None
    job = script.base[0]
    return job["ntasks"] or (job["nodes"] or 1) * (job["ntasks_per_node"] or 1)


def _held(script: "JobScript") -> tuple[int, int, int | None] | None:
    """(nodes, CPUs, CPUs per node where the directives fix it) the job holds; None where its
    share is not fixed by the directives or not known."""
    tasks = job_tasks(script)
    if tasks is None:
        return None
    job = script.base[0]
    cpus = job["cpus_per_task"] or 1
    per_node = job["ntasks_per_node"] or (None if job["ntasks"] else 1)  # -N alone: 1 a node
    nodes = job["nodes"] or (1 if per_node or not job["ntasks"] else 0)
    return nodes, tasks * cpus, per_node * cpus if per_node and not job["ntasks"] else None


def _count(launch: "Launch", name: str) -> int | None | bool:
    """The step's own value of ``name``: an int, None where not given, False where unknown."""
    if name not in launch.options:
        return None
    return to_int(launch.value(name, launch.scope)) or False


def step_refused(script: "JobScript") -> str:
    """Why Slurm refuses ``script``'s srun step for asking more CPUs or nodes than its job
    holds ("" when it fits or cannot be judged)."""
    launch = script.launch
    held = _held(script) if launch is not None and launch.kind == "slurm" \
        and script.scheduler == "slurm" and "overcommit" not in launch.options else None
    if held is None:
        return ""
    job_nodes, job_cpus, job_per_node = held
    step_nodes, tasks, per_node = (_count(launch, k) for k in ("nodes", "ntasks",
                                                               "ntasks-per-node"))
    if False in (step_nodes, tasks, per_node):
        return ""
    job = script.base[0]
    nodes = step_nodes or job_nodes or 1
    if tasks is None:  # SLURM_NTASKS, which sbatch sets where the job counts its tasks
        tasks = job["ntasks"] or (max(job_nodes, 1) * job["ntasks_per_node"]
                                  if job["ntasks_per_node"] else
                                  per_node * nodes if per_node else nodes)
    nodes = min(nodes, tasks)  # srun: "can't run 1 processes on 2 nodes, setting nnodes to 1"
    cpus = step_cpus(script, launch).cpus or 1  # an unknown release: the fewer it may give
    fix = (f"--ntasks={tasks}" if job["ntasks"] else
           f"--ntasks-per-node={-(-tasks // nodes)}") + (
        f" --cpus-per-task={cpus}" if cpus > (job["cpus_per_task"] or 1) else "")
    at = f"line {launch.line}: srun asks"
    if job_nodes and nodes > job_nodes:
        return (f"{at} {_plural(nodes, 'node')}, but the job holds {job_nodes}: Slurm refuses "
                f"the step (Only allocated {job_nodes} nodes asked for {nodes}) and the job "
                f"fails at once; ask for them in the directives (#SBATCH --nodes={nodes})")
    need_per_node = -(-tasks // nodes) * cpus
    if tasks * cpus <= job_cpus and (job_per_node is None or need_per_node <= job_per_node):
        return ""
    alone = " (--nodes alone asks one task per node)" if not (
        job["ntasks"] or job["ntasks_per_node"]) else ""
    holds = f"{_plural(job_cpus, 'CPU')}" + (
        f", {job_per_node} per node" if job_per_node is not None else "")
    return (f"{at} {_plural(tasks, 'task')} x {_plural(cpus, 'CPU')} ({need_per_node} per "
            f"node), but the job holds {holds}{alone}: Slurm refuses the step (More "
            f"processors requested than permitted) and the job fails at once; ask for them "
            f"in the directives (#SBATCH {fix})")
