"""The name a job gets when the user gives none: one definition, for the script that names it
and for the job history that is searched for it (``recommend --history``: the history had been
searched for the bare workload while the script named the job ``hpcds1mpi-<workload>``, so
the user's own jobs from recommend's scripts were never found by name).

A workload label may hold letters a directive line cannot carry (``sweep --label é日本``): the
default name spells them as it can (``é`` as ``e``) or as ``_``, and says so (s39 tester D1:
every script of such a label was refused for a name the user never gave)."""

from __future__ import annotations

#: What a default job name starts with: the jobs hpcds1mpi wrote the script for.
PREFIX = "hpcds1mpi-"


def default_job_name(workload: str) -> str:
    """The default job name of ``workload``, made of the characters a job name may hold and
    shortened to the job-name limit (ours to make valid: a long label plus our prefix had made
    every script of it refused for a name the user never gave)."""
    from hpcds1mpi.launch.directives import MAX_JOB_NAME

    return f"{PREFIX}{_name_safe(workload)}"[:MAX_JOB_NAME]


def default_job_name_note(workload: str) -> str:
    """The note for a default job name that spells ``workload`` otherwise; "" where it
    does not."""
    if _name_safe(workload) == workload:
        return ""
    return (f"the job is named {default_job_name(workload)!r}: the label {workload!r} has "
            "characters a batch script's job name cannot hold (give --job-name to choose "
            "another)")


def _name_safe(text: str) -> str:
    """``text`` with each character a job name may not hold spelled as its unaccented letter
    where it has one, else as ``_``."""
    import unicodedata

    from hpcds1mpi.launch.directives import NAME

    out = []
    for char in text:
        if (char.isascii() and char.isalnum()) or char in NAME.marks:
            out.append(char)
            continue
        base = unicodedata.normalize("NFKD", char).encode("ascii", "ignore").decode()
        out.append(base if base and all(c.isalnum() or c in NAME.marks for c in base)
                   else "_")
    return "".join(out)
