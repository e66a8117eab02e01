"""Why the layout a script asks for gets no prediction in ``advise``, one line ("" when it
gets one): the scheduler refuses it (an ``srun`` step asking GPUs, CPUs or nodes its job does
not hold: :mod:`~hpcds1mpi.launch.script_gpus`, :mod:`~hpcds1mpi.launch.step_fit`; Open MPI's
``mpirun`` starting more ranks than the job has tasks: :mod:`~hpcds1mpi.launch.mpirun_slots`;
more than a node has: :mod:`~hpcds1mpi.launch.script_fits`; uneven PBS chunks), or it runs
otherwise than the model measured: a rank's threads bound to one CPU they share
(:mod:`~hpcds1mpi.launch.srun_cpus`), ranks of a program that links no MPI (copies,
:func:`~hpcds1mpi.launch.rank_proof.script_copies`), a GPU program without GPUs or with ranks
sharing them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hpcds1mpi.config import check_fits
from hpcds1mpi.errors import ConfigError
from hpcds1mpi.launch.pbs_request import uneven_hosts
from hpcds1mpi.launch.script_fits import refused_request
from hpcds1mpi.launch.script_gpus import shared_gpus, step_refused
from hpcds1mpi.launch.srun_cpus import shared_core_problem
from hpcds1mpi.launch import step_fit

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.cluster import Partition
    from hpcds1mpi.config import Configuration
    from hpcds1mpi.launch.job_script import JobScript, Launch


def _copies_problem(script, launch, job_folder: str) -> str:
    """Why the asked layout has no prediction where its ranks would run as copies of a program
    that links no MPI (:func:`~hpcds1mpi.launch.rank_proof.script_copies`), else ""."""
    from hpcds1mpi.launch.rank_proof import script_copies

    line = script_copies(script, launch, job_folder)
    return line.split(", and no prediction")[0] if line else ""


def _slots_problem(script, launch, job_folder: str | None) -> str:
    """Why Open MPI's mpirun stops at once for more ranks than the job has tasks
    (:func:`~hpcds1mpi.launch.mpirun_slots.slots_refused`), else ""."""
    from hpcds1mpi.launch.launch_line_checks import launch_family
    from hpcds1mpi.launch.mpirun_slots import slots_refused

    return slots_refused(script, launch, launch_family(script, launch, job_folder))


def asked_problem(script: "JobScript", launch: "Launch | None", asked: "Configuration",
                  partition: "Partition", device_said: str, job_folder: str | None,
                  this_machine: bool = False) -> str:
    """The one line saying why ``asked`` (read from ``script`` on ``partition``) gets no
    prediction, "" when it gets one. ``device_said``: where the program says it runs on the
    GPU; ``job_folder``: where the program's files are read (None: not read);
    ``this_machine``: ``partition`` is this machine, not the partition the scheduler gives a
    script naming none, whose size is then not known (said where it is the cause)."""
    try:
        problem = step_refused(script) or uneven_hosts(script) or refused_request(
            script, asked.ranks_per_node, asked.threads, partition) or (  # uneven: s33 P7
            step_fit.step_refused(script)) or (  # more than the job holds: s38 tester D2
            _slots_problem(script, launch, job_folder)) or (  # mpirun's, s45 tester A4
            # ranks of a program without MPI are copies: no prediction holds (s35 A2)
            job_folder is not None and _copies_problem(script, launch, job_folder)) or \
            shared_core_problem(script, launch, asked.threads)  # s38 tester D1
        if not problem and asked.device == "gpu":
            problem = (f"{device_said}: the program runs on the GPU, but the job asks for "
                       "no GPU" if not script.gpus_per_node else
                       shared_gpus(script, asked.ranks_per_node))
        if not problem:
            check_fits(asked, partition)
    except ConfigError as exc:
        problem = str(exc).split(";")[0]
    if problem and this_machine and f"partition {partition.name!r}" in problem:
        # 'local' is no queue: its size is not what the scheduler's partition has (s48 Q5)
        problem += (f" ({partition.name!r} is this machine, not the partition the job is sent "
                    "to: pass --cluster FILE naming that partition to judge it there)")
    return problem or ""


def beyond_this_machine(asked: "Configuration", partition: "Partition",
                        fit: "Partition") -> str:
    """The note for an ``asked`` layout that the scheduler's partition ``fit`` holds but this
    machine's ``partition`` (where the model's runs were measured) does not: its prediction
    is then the model's beyond this machine (s48 tester Q5); "" where it fits here, or ``fit``
    is ``partition``."""
    if fit is partition:
        return ""
    try:
        check_fits(asked, partition)
    except ConfigError as exc:
        return (f"the asked layout is more than this machine has ({str(exc).split(';')[0]}); "
                f"Slurm's partition {fit.name!r} ({fit.max_nodes} nodes, "
                f"{fit.cores_per_node} CPUs a node) takes and holds it, and its prediction "
                "is the model's, from runs on this machine")
    return ""
