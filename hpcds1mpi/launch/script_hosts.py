"""A job script's ``mpiexec`` / ``mpirun`` given its own host list, not the job's nodes.

Inside a Slurm or PBS job, hydra and Open MPI read the nodes the scheduler gave the job
themselves. A host list of the script's own (``-f hosts.txt``, ``-machinefile``, Open MPI's
``--hostfile``, ``-hosts n1,n2``, ``--host``) places the ranks on the nodes it names instead:
nodes the job does not hold (other users' jobs, or refused), or fewer than it holds (s31
tester P2: ``mpiexec.hydra -f hosts.txt`` in an sbatch script, which ``advise`` had passed).
A list built from the job's own (``$PBS_NODEFILE``, ``$SLURM_JOB_NODELIST``, ``scontrol show
hostnames``, ``$SLURM_NODELIST``), on the launch line or before it, is the job's nodes.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.launch.job_script import JobScript, Launch

#: Words that name the job's own nodes, by scheduler.
_JOBS_NODES = {"slurm": re.compile(r"SLURM_(JOB_)?NODELIST|scontrol\s+show\s+hostnames?|"
                                   r"SLURM_HOSTFILE"),
               "pbs": re.compile(r"PBS_NODEFILE")}
#: The spelling each host option is said with, by the name the option reader gives it.
_WHAT = {"hostfile": "host file", "host": "host list"}


def host_list_warning(script: "JobScript", launch: "Launch") -> str | None:
    """One line when ``launch`` (an ``mpirun`` / ``mpiexec`` line) is given a host file or
    list that is not built from the job's nodes; None otherwise."""
    jobs_nodes = _JOBS_NODES.get(script.scheduler)
    if launch.kind != "mpi" or jobs_nodes is None:
        return None
    before = script.text[:launch.span[0]]
    for name, what in _WHAT.items():
        opt = launch.options.get(name)
        if opt is None or jobs_nodes.search(opt.value or "") or jobs_nodes.search(before):
            continue
        written = script.written(opt)
        scheduler = "Slurm" if script.scheduler == "slurm" else "PBS"
        return (f"line {launch.line}: {launch.launcher} {written} runs the ranks on the nodes "
                f"that {what} names, not those {scheduler} gives the job (inside a job the "
                f"launcher reads them itself): drop {written.split()[0]}, or build it from "
                f"the job's nodes ({_built(script.scheduler)})")
    return None


def _built(scheduler: str) -> str:
    return ('scontrol show hostnames "$SLURM_JOB_NODELIST" > hosts.txt' if scheduler == "slurm"
            else "-f $PBS_NODEFILE")
