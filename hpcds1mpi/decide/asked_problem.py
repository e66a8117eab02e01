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
                  partition: "Partition", device_said: str, job_folder: str | None) -> str:
    """The one line saying why ``asked`` (read from ``script`` on ``partition``) gets no
    prediction, "" when it gets one. ``device_said``: where the program says it runs on the
    GPU; ``job_folder``: where the program's files are read (None: not read)."""
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
    return problem or ""
