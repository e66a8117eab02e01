"""The name a job gets when the user gives none: one definition, for the script that names it
and for the job history that is searched for it (``recommend --history``: the history had been
searched for the bare workload while the script named the job ``hpcds1mpi-<workload>``, so
the user's own jobs from recommend's scripts were never found by name)."""

from __future__ import annotations

#: What a default job name starts with: the jobs hpcds1mpi wrote the script for.
PREFIX = "hpcds1mpi-"


def default_job_name(workload: str) -> str:
    """The default job name of ``workload``, shortened to the job-name limit (ours to shorten:
    a long label plus our prefix had made every script of it refused for a name the user
    never gave)."""
    from hpcds1mpi.launch.directives import MAX_JOB_NAME

    return f"{PREFIX}{workload}"[:MAX_JOB_NAME]
