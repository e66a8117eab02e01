"""Other schedulers' jobs (PBS, LSF, Grid Engine, Flux, Cobalt), told by their variables.

One table, :data:`SCHEDULERS`, for every reader (s35 review: three lists of these variables
had drifted apart): :mod:`hpcds1mpi.places` says once that such a job's nodes are not read and
models this machine (:func:`foreign_job`); the sweep's node reach
(:mod:`hpcds1mpi.measure.reachable_nodes`) cannot tell how many nodes an mpiexec reaches where
a job's host variables are set (:func:`host_variables`), since the launcher reads them.

Being in a job and having hosts are told apart on purpose: Grid Engine's ``JOB_ID`` is too
common a name to mean a job alone (one of its job's own variables must be set beside it),
while a ``PE_HOSTFILE`` alone is still a file an mpiexec may read hosts from.
"""

from __future__ import annotations

import os
import re
from typing import NamedTuple


class Scheduler(NamedTuple):
    """What shows another scheduler's job in the environment."""

    name: str
    #: the variable naming its job
    job: str
    #: variables of which one must be set beside ``job`` (none: ``job`` alone suffices)
    beside: tuple[str, ...] = ()
    #: variables through which launchers find the job's hosts
    hosts: tuple[str, ...] = ()


SCHEDULERS = (
    Scheduler("PBS", "PBS_JOBID", hosts=("PBS_NODEFILE",)),
    Scheduler("LSF", "LSB_JOBID", hosts=("LSB_DJOB_HOSTFILE", "LSB_HOSTS", "LSB_MCPU_HOSTS")),
    Scheduler("Grid Engine", "JOB_ID",
              beside=("PE_HOSTFILE", "SGE_JOB_SPOOL_DIR", "SGE_TASK_ID", "NHOSTS"),
              hosts=("PE_HOSTFILE",)),
    Scheduler("Flux", "FLUX_JOB_ID", hosts=("FLUX_URI",)),
    Scheduler("Cobalt", "COBALT_JOBID", hosts=("COBALT_NODEFILE",)),
)
#: A job id fit to quote in a one-line note (PBS's 9.server, LSF's 12[3], Flux's f58 ids).
_SHOWN_ID = re.compile(r"[\w.+@\[\]-]{1,60}")


class ForeignJob(NamedTuple):
    """A job of another scheduler than Slurm: its scheduler, variable and id as shown."""

    scheduler: str
    variable: str
    job: str

    def named(self) -> str:
        """The job in words: a PBS job (PBS_JOBID=9.pbs)."""
        article = "an" if self.scheduler == "LSF" else "a"  # "an el-es-ef"
        return f"{article} {self.scheduler} job ({self.variable}={self.job})"


def _is_set(env, name: str) -> bool:
    return bool(env.get(name, "").strip())


def foreign_job(env: dict | None = None) -> ForeignJob | None:
    """The other scheduler's job whose variables ``env`` holds (the first of
    :data:`SCHEDULERS`), else None."""
    env = os.environ if env is None else env
    for scheduler in SCHEDULERS:
        value = env.get(scheduler.job, "").strip()
        if value and (not scheduler.beside or any(_is_set(env, n) for n in scheduler.beside)):
            return ForeignJob(scheduler.name, scheduler.job,
                              value if _SHOWN_ID.fullmatch(value) else "(set)")
    return None


def host_variables(env, counted: tuple[str, ...] = ()) -> list[str]:
    """The variables in ``env`` that place a launcher in another scheduler's job or give it
    that job's hosts, in :data:`SCHEDULERS`' order, leaving out ``counted`` (those the caller
    reads itself) and the job variable of a job whose hosts are among them."""
    job = foreign_job(env)
    named = []
    for scheduler in SCHEDULERS:
        if any(name in counted for name in scheduler.hosts):
            continue
        if job is not None and job.variable == scheduler.job:
            named.append(scheduler.job)
        named += [name for name in scheduler.hosts if _is_set(env, name)]
    return named


def all_variables() -> set[str]:
    """Every variable :data:`SCHEDULERS` names (for tests that run outside any job)."""
    return {name for s in SCHEDULERS for name in (s.job, *s.beside, *s.hosts)}


__all__ = ["SCHEDULERS", "ForeignJob", "Scheduler", "all_variables", "foreign_job",
           "host_variables"]
