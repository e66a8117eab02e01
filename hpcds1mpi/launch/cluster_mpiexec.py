"""The cluster file's ``mpiexec`` as a job script's launcher: left unused, or not there.

A file's ``mpiexec`` is written in place of the ``mpiexec`` / ``mpirun`` name only where its
``launcher`` is one of them: under srun (the file's ``launcher = "srun"``, or Slurm's default
where it names none) it goes unused, said in a note (s36 tester M2, s41 tester B11). A path
that is no executable file on this machine is refused before the script is written, naming
the file and the key, as a program path that is not there is (``program_there.py``): the job
would stop at its launch line with exit 127 (s41 tester B12: it was written with only a note
that the program "may run otherwise" under it).
"""

from __future__ import annotations

import os


def ignored_mpiexec(launcher, cluster) -> str:
    """The note where the cluster file's ``mpiexec`` goes unused: it names no ``launcher``,
    so a Slurm script launches with srun (s36 tester M2: a refusal's fix "set mpiexec = ..."
    was followed and silently ignored), or its ``launcher = "srun"`` does (s41 tester B11: that
    was said as "it names no launcher", with the fix to add the key it has)."""
    mpiexec = getattr(cluster, "mpiexec", None) if cluster is not None else None
    if not mpiexec or getattr(launcher, "name", "") != "srun":
        return ""
    if getattr(cluster, "launcher", "") == "srun":
        return (f"the cluster file's mpiexec = {mpiexec!r} is not used: its launcher = "
                "\"srun\" launches the script; to launch with that mpiexec set launcher = "
                "\"mpiexec\" instead, or drop mpiexec")
    return (f"the cluster file's mpiexec = {mpiexec!r} is not used: it names no launcher, so "
            "the script launches with srun; to launch with that mpiexec set launcher = "
            "\"mpiexec\" too")


def missing_mpiexec(launcher, cluster) -> str:
    """The one-line refusal of the cluster file's ``mpiexec`` that ``launcher`` writes where
    that path is no executable file here; "" where it is one, a bare name (the job's PATH
    finds it), or not written (srun)."""
    mpiexec = getattr(cluster, "mpiexec", "") if cluster is not None else ""
    if not mpiexec or "/" not in mpiexec or getattr(launcher, "name", "") == "srun" \
            or getattr(launcher, "command", "") != mpiexec:
        return ""
    if os.path.isfile(mpiexec) and os.access(mpiexec, os.X_OK):
        return ""
    there = os.path.exists(mpiexec)  # a folder or a file without x: bash's exit 126
    why = ("does not exist" if not os.path.lexists(mpiexec) else
           "is a link to nothing" if not there else
           "is a folder" if os.path.isdir(mpiexec) else "is not executable")
    where = getattr(cluster, "file", "") or "the cluster file"
    return (f"{where}: mpiexec = {mpiexec!r} of cluster {cluster.name!r} {why} on this "
            f"machine, so the job would stop at its launch line (exit {126 if there else 127})"
            "; set mpiexec "
            "to the path of the site's launcher (`which mpiexec` on a node), or drop it to "
            "launch with the mpiexec the job's PATH finds")


__all__ = ["ignored_mpiexec", "missing_mpiexec"]
