"""Where a job may go: the partitions a command chooses among, and the one it uses.

The (cluster, partition) pairs a job may be placed on come from a cluster file (every cluster
in it), this Slurm allocation, or this machine (:func:`cluster_places`); ``--partition`` names
narrow them (``NAME`` or ``CLUSTER/NAME``; a bare name several clusters share is refused:
:func:`select_places`, :func:`named_places`). :func:`allowed_places` is the one partition choice
of ``recommend``, ``advise``, the Python API and the service; :func:`resolve_partition` the one
partition of a command that runs or sweeps. This machine's partition name is made up, so a
script for it names none and says so (:func:`is_this_machine`, :func:`default_queue_note`).

Only a Slurm allocation's nodes are read: inside another scheduler's job (PBS, LSF, Grid
Engine, Flux, Cobalt: :func:`~hpcds1mpi.foreign_jobs.foreign_job`, by its variables) this machine is modelled, which was
silent (s35 tester X4: "local/local: 1 nodes x 2 cores" inside a 2-host PBS job); it is said
once per process, with the way out, ``--cluster FILE`` (:func:`say_foreign_job_once`).
"""

from __future__ import annotations

import os
import sys

from hpcds1mpi.cluster import Cluster, Partition, detect_local, detect_slurm, load_clusters
from hpcds1mpi.errors import ClusterFileError
from hpcds1mpi.foreign_jobs import ForeignJob, foreign_job
from hpcds1mpi.slurm_allocation import RANK_VARIABLES, in_allocation

#: Set once the foreign-job note was said, so that the processes this one starts stay quiet.
FOREIGN_SAID_VARIABLE = "HPCDS1MPI_FOREIGN_JOB_SAID"
_SAID_FOREIGN: set[str] = set()


def resolve_partition(cluster_file: str | None, partition: str | None) -> Partition:
    """The partition a command should use: from a file (``NAME`` or ``CLUSTER/NAME``; a bare
    name several clusters share is refused), else Slurm, else the local machine."""
    if cluster_file:
        clusters = load_clusters(cluster_file)
        if partition:
            pairs = [(c, p) for c in clusters.values() for p in c.partitions.values()]
            hits = named_places(pairs, partition)
            if hits:
                return hits[0][1]
            known = ", ".join(p for c in clusters.values() for p in c.partitions)
            raise ClusterFileError(f"{cluster_file}: no partition {partition!r} (it has: {known}); "
                                   "give one of those to --partition")
        return next(iter(clusters.values())).partition()
    if not is_this_machine():
        return detect_slurm().partition()
    if partition and partition != "local":  # this machine is one partition, named local
        raise ClusterFileError(f"no partition {partition!r} on this machine (it has 'local'); "
                               "give --cluster FILE to use a named partition")
    say_foreign_job_once()
    return detect_local().partition()


def cluster_places(source=None) -> list[tuple["Cluster | None", Partition]]:
    """Every (cluster, partition) pair a job may be placed on.

    Args:
        source: a cluster TOML path (every cluster in it); a :class:`Cluster`; a
            :class:`Partition` (its cluster None); None or "": this Slurm allocation inside
            one (``SLURM_JOB_ID`` of a running job), else this machine.

    Raises:
        ClusterFileError: an unreadable or invalid cluster file, or a source of another type.
    """
    if is_this_machine(source):
        say_foreign_job_once()
        clusters = [detect_local()]
    elif source is None or (isinstance(source, str) and not source):
        clusters = [detect_slurm()]
    elif isinstance(source, (str, os.PathLike)):
        clusters = list(load_clusters(source).values())
    elif isinstance(source, Partition):
        return [(None, source)]
    elif isinstance(source, Cluster):
        clusters = [source]
    else:
        raise ClusterFileError(f"cluster must be a TOML path, a Cluster or a Partition, got "
                               f"{type(source).__name__}")
    return [(c, p) for c in clusters for p in c.partitions.values()]


def is_this_machine(source=None) -> bool:
    """Whether :func:`cluster_places` of ``source`` is this machine (no file, no allocation),
    whose made-up partition name a batch script leaves out (:func:`default_queue_note`).
    Leftover ``SLURM_*`` of a job that Slurm says is not running are no allocation (said
    once: :func:`~hpcds1mpi.slurm_allocation.in_allocation`, s32 tester T4)."""
    return (source is None or (isinstance(source, str) and not source)) \
        and not in_allocation()


def foreign_job_line(job: ForeignJob) -> str:
    """The one line for this machine modelled inside ``job``."""
    return (f"this runs inside {job.named()}, whose nodes are not read (only a Slurm "
            "allocation's are): this machine alone is modelled; to choose for the job's "
            "nodes, describe them in a cluster file and pass --cluster FILE")


def say_foreign_job_once(env: dict | None = None) -> None:
    """Say :func:`foreign_job_line` on stderr where this process, whose partition is this
    machine, runs inside another scheduler's job: once per process and job, not again in a
    process it starts nor by an MPI launch's later ranks (as the leftover-job note)."""
    job = foreign_job(env)
    if job is None:
        return
    key = f"{job.variable}={job.job}"
    inherited = os.environ.get(FOREIGN_SAID_VARIABLE) == key
    os.environ[FOREIGN_SAID_VARIABLE] = key
    later_rank = any(os.environ.get(name, "0").strip() not in ("", "0")
                     for name in RANK_VARIABLES)
    if key in _SAID_FOREIGN or inherited or later_rank:
        return
    _SAID_FOREIGN.add(key)
    print(f"note: {foreign_job_line(job)}", file=sys.stderr)


def default_queue_note(partition: Partition | None, scheduler: str,
                       scripts: str = "the script names", queue: str | None = None,
                       users: bool = False) -> str:
    """The one line said with the scripts for this machine (:func:`is_this_machine`);
    ``queue``: the default partition's name where Slurm said it (advise checks that one);
    ``users``: the script is the user's, advised on (not written for this machine: s48 RX3)."""
    hardware = f" ({partition.cores_per_node} cores, {partition.memory_gb:.1f} GB)" \
        if partition else ""
    default = (f"Slurm's default partition {queue!r} takes the job, and its limits are the "
               "ones checked" if queue else "the default partition takes the job")
    how = ("its layouts are predicted from runs on this machine" if users
           else "it was chosen for this machine")
    return (f"{scripts} no {'-q' if scheduler == 'pbs' else '--partition'}: {how}"
            f"{hardware}, whose name {partition.name if partition else 'local'!r} "
            f"is no {scheduler} partition, so {default}; pass "
            "--cluster FILE naming a real partition to "
            + ("judge it there" if users else "choose for it"))


def select_places(pairs: list, wanted=()) -> list:
    """The pairs that ``--partition`` names allow: all of them when none is named, else those
    named ``NAME`` or ``CLUSTER/NAME``, in the order named, each once.

    Raises:
        ClusterFileError: a name matches no partition (the message lists the known ones), or
            is a bare name several clusters share (:func:`named_places`).
    """
    if not wanted:
        return list(pairs)
    chosen = []
    for name in wanted:
        hits = named_places(pairs, name)
        if not hits:
            known = ", ".join(_names(c, p)[-1] for c, p in pairs)
            raise ClusterFileError(f"no partition {name!r}; known: {known}")
        chosen += [h for h in hits if h not in chosen]
    return chosen


def _names(cluster, partition) -> tuple[str, ...]:
    return (partition.name, f"{cluster.name}/{partition.name}") if cluster is not None \
        else (partition.name,)


def named_places(pairs: list, name: str) -> list:
    """The pairs that one partition name (``NAME`` or ``CLUSTER/NAME``) picks; [] for none.

    Raises:
        ClusterFileError: a bare ``NAME`` that partitions of several clusters share (which one
            was meant cannot be guessed: one would be picked silently).
    """
    hits = [(c, p) for c, p in pairs if name in _names(c, p)]
    clusters = {c.name for c, _ in hits if c is not None}
    if len(clusters) > 1:
        both = ", ".join(_names(c, p)[-1] for c, p in hits)
        raise ClusterFileError(f"partition {name!r} is ambiguous: {both}; name one as "
                               "CLUSTER/PARTITION")
    return hits


def allowed_places(source=None, wanted=()) -> list:
    """The (cluster, partition) pairs a job may use: :func:`cluster_places` of ``source``,
    narrowed to the partitions ``wanted`` names (:func:`select_places`). ``recommend``,
    ``advise``, the Python API and the service all choose partitions through this."""
    pairs = cluster_places(source)
    try:
        return select_places(pairs, wanted)
    except ClusterFileError as error:
        if not is_this_machine(source):
            raise
        # s46 tester J8: outside an allocation only this machine's 'local' is known
        raise ClusterFileError(f"{error} (no --cluster and no Slurm allocation: only this "
                               "machine is known); give --cluster FILE describing that "
                               "partition, or run inside an allocation of it") from None
