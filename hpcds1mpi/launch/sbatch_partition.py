"""The partition sbatch gives a job over its ``#SBATCH -p``, which advise judges it on.

sbatch reads its input environment variables over the script's ``#SBATCH`` lines, and its
command line's ``-p`` over both: with ``SBATCH_PARTITION=p`` set, a script naming no
partition, or another one, runs on ``p``, not on Slurm's default partition (s48 review RX4:
advise checked the job against ``Default=YES``). advise reads the variable where the job is
submitted (the CLI, the Python API), and ``advise --partition p`` stands for ``sbatch -p p``,
which advise cannot see; the job is judged on ``p``: Slurm's partition ``p`` where advise's
place is this machine (its limits, nodes and memory:
:mod:`~hpcds1mpi.launch.partition_limits`), else the cluster file's partition ``p``. A name
Slurm does not have is refused in one line naming those it has.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Mapping

from hpcds1mpi.errors import ConfigError

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.launch.job_script import JobScript

#: sbatch's input environment variable for ``-p`` / ``--partition``.
VARIABLE = "SBATCH_PARTITION"
#: advise's option that stands for ``sbatch -p``.
OPTION = "--partition"
#: Why each source's partition is the job's, as sbatch(1) orders them.
_WHY = {VARIABLE: "its input variables override #SBATCH lines, a `sbatch -p` on its command "
                  "line overrides both",
        OPTION: "as `sbatch -p` would: its command line overrides SBATCH_PARTITION and "
                "#SBATCH lines"}
#: How each source's value is changed.
_FIX = {VARIABLE: f"set {VARIABLE} to one of those, or unset it",
        OPTION: f"give {OPTION} one of those"}


def from_environment(env: Mapping[str, str] | None = None) -> str | None:
    """``SBATCH_PARTITION`` of ``env`` (None: this process's), stripped; None where unset
    (sbatch then reads the script's own line), "" where set but empty, which sbatch refuses
    ("invalid partition specified: (null)", Slurm 22.05; s49 review F5)."""
    value = (os.environ if env is None else env).get(VARIABLE)
    return None if value is None else value.strip()


def first_partition(queue: str) -> str:
    """The partition a list (``a,b``: the job runs on whichever starts it first) is judged
    on: its first."""
    return queue.split(",")[0].strip()


def take_variable(script: "JobScript", queue: str | None, default_queue: bool,
                  source: str = VARIABLE) -> str:
    """Give ``script`` the partition sbatch takes from ``SBATCH_PARTITION=queue`` (``source``
    :data:`OPTION`: from ``sbatch -p queue``) and return the note that says so ("" where
    ``queue`` is None or the script is not Slurm's).

    With a cluster file (``default_queue`` False) the script reads as naming ``queue``, whose
    partition the cluster file must have; on this machine it reads as naming none, so that
    Slurm's partition ``queue`` is the one checked (``partition_limits.default_queue_limits``,
    given ``queue``), as Slurm's default partition is for a script naming none."""
    if queue is None:
        return ""
    if script.scheduler != "slurm":  # qsub reads no SBATCH_PARTITION; -p is sbatch's
        if source == OPTION:
            raise ConfigError(f"{OPTION} {queue} stands for `sbatch -p`, and this is not a "
                              "Slurm script: give a PBS job its queue with #PBS -q")
        return ""
    if not queue:
        raise ConfigError(f"{VARIABLE} is set but empty: sbatch refuses the job (invalid "
                          f"partition); unset it, or set it to a partition")
    own = script.directives.get("partition")
    over = (f"; it overrides line {own.line}'s --partition={script.partition}"
            if script.partition and script.partition != queue and own is not None else "")
    many = ("; the job runs on whichever of them starts it first, and is judged on the first"
            if "," in queue else "")
    script.partition = None if default_queue else first_partition(queue)
    return (f"{source}={queue}: sbatch sends the job to partition "
            f"{first_partition(queue)!r} ({_WHY[source]}){over}{many}")


def judged_note(said: str, default_queue: bool, checked: bool) -> str:
    """:func:`take_variable`'s note with what the job is judged on: Slurm's partition on
    this machine (``checked``: Slurm said its limits), else the cluster file's."""
    if not default_queue:
        return f"{said}; it is judged on the cluster description's partition of that name"
    return f"{said}; " + ("its limits, nodes and memory are the ones checked" if checked else
                          "Slurm does not answer here, so its limits are not checked") + \
        ", and the layouts are predicted from runs on this machine"


def refuse_unknown(queue: str | None, known: list[str] | None, source: str = VARIABLE
                   ) -> None:
    """Refuse a ``SBATCH_PARTITION`` (``source``: or ``--partition``) naming a partition
    Slurm does not have (``known``, its partitions; None where Slurm does not answer: nothing
    is checked).

    Raises:
        ConfigError: one line naming the variable's partition and those Slurm has.
    """
    if not queue or known is None:
        return
    missing = [p for p in (q.strip() for q in queue.split(",")) if p not in known]
    if missing:
        raise ConfigError(f"{source}={queue} names partition {missing[0]!r}, which Slurm does "
                          f"not have ({', '.join(known) or 'none'}); sbatch would refuse the "
                          f"job: {_FIX[source]}")


def missing_from_cluster(queue: str, known: str, source: str = VARIABLE) -> ConfigError:
    """The error for a ``SBATCH_PARTITION`` (``source``: or ``--partition``) the cluster
    description (``known``: its partitions, written out) does not have."""
    return ConfigError(f"{source}={queue} sends the job to partition "
                       f"{first_partition(queue)!r}, which the cluster description does not "
                       f"have ({known}); pass --cluster FILE that describes it, or "
                       f"{_FIX[source]}")
