"""The cluster file's ``mpiexec`` as a job script's launcher: left unused, or not there.

A file's ``mpiexec`` is written in place of the ``mpiexec`` / ``mpirun`` name only where its
``launcher`` is one of them: under srun (the file's ``launcher = "srun"``, or Slurm's default
where it names none) it goes unused, said in a note (s36 tester M2, s41 tester B11). The file
describes the target cluster, whose paths may exist only there (a compute-node mount such as
``/apps``), so a script's path is judged as a program path is (``program_there.py``): where its
folder is on this machine and the file is missing or no executable, it is refused before the
script is written, naming the file and the key (the job would stop at its launch line with
exit 127: s41 tester B12); a folder that is not here cannot be looked in, so the job checks it
and a note says so (s41 review F9: such a file was refused, though its script would run), as
for a bare name the job's PATH here does not find (s42: it was written unchecked). A
sweep's launches (``sweep --command --cluster FILE``) run here, so they refuse any path that
is no executable file here, before anything runs (:func:`unlaunchable_mpiexec`).
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
    that path's folder is on this machine and the path is no executable file there; "" where
    it is one, its folder is not here (:func:`unseen_mpiexec`), it is a bare name (the job's
    PATH finds it), or it is not written (srun)."""
    mpiexec = _written(launcher, cluster)
    if not mpiexec or not os.path.isdir(os.path.dirname(mpiexec)):
        return ""
    why = _not_executable(mpiexec)
    if not why:
        return ""
    code = 127 if why in ("does not exist", "is a link to nothing") else 126  # as bash exits
    return (f"{_named(mpiexec, cluster)} {why} on this machine, so the job would stop at its "
            f"launch line (exit {code}); set mpiexec "
            "to the path of the site's launcher (`which mpiexec` on a node), or drop it to "
            "launch with the mpiexec the job's PATH finds")


def unseen_mpiexec(launcher, cluster) -> str:
    """The note on the cluster file's ``mpiexec`` (an absolute path: the file is refused
    otherwise) that ``launcher`` writes where that path cannot be looked for here: its folder
    is not on this machine (the target cluster's own); "" where it can
    (:func:`missing_mpiexec`), or is not written."""
    mpiexec = _written(launcher, cluster)
    if not mpiexec or os.path.isdir(os.path.dirname(mpiexec)):
        return ""
    return (f"{_named(mpiexec, cluster)} is not checked here (its folder "
            f"{os.path.dirname(mpiexec)!r} is not on this machine): the job runs it as "
            "written; if the job stops at its launch line (exit 127), set mpiexec to the "
            "site's launcher (`which mpiexec` on a node)")


def unfound_mpiexec(launcher, cluster, path: str | None) -> str:
    """The note on the cluster file's ``mpiexec`` given as a bare name that ``launcher``
    writes where the job's PATH here (``path``; None: not known) finds no such command (s42:
    it was written unchecked): the job may run on another machine, whose PATH may hold it, so
    it is said as a path in a folder not here is (:func:`unseen_mpiexec`), not refused; ""
    where it is found, is a path, or is not written."""
    import shutil

    mpiexec = getattr(cluster, "mpiexec", "") if cluster is not None else ""
    if not mpiexec or "/" in mpiexec or path is None or shutil.which(mpiexec, path=path) \
            or getattr(launcher, "name", "") == "srun" \
            or getattr(launcher, "command", "") != mpiexec:
        return ""
    return (f"{_named(mpiexec, cluster)} is not found on the job's PATH on this machine: the "
            f"job runs it as written; if the job stops at its launch line (exit 127), set "
            f"mpiexec to the path of the site's launcher (`which {mpiexec}` on a node)")


def _written(launcher, cluster) -> str:
    """The cluster file's ``mpiexec`` path that ``launcher`` writes into a script; "" for
    none, a bare name (the job's PATH finds it) or srun (which leaves it unused)."""
    mpiexec = getattr(cluster, "mpiexec", "") if cluster is not None else ""
    if not mpiexec or "/" not in mpiexec or getattr(launcher, "name", "") == "srun" \
            or getattr(launcher, "command", "") != mpiexec:
        return ""
    return mpiexec


def unlaunchable_mpiexec(cluster, program: list[str] | None = None) -> str:
    """The one-line refusal of a sweep whose cluster file's ``mpiexec`` path is no executable
    file here, before anything runs, in the words of :func:`missing_mpiexec` and naming the
    launcher of ``program``'s MPI to set (s41: it was refused without the file or cluster);
    "" where it is one, a bare name (checked on PATH by the sweep's pre-flight), or none."""
    from hpcds1mpi.launch.given_launcher import instead
    from hpcds1mpi.launch.mpi_family import program_mpi

    mpiexec = getattr(cluster, "mpiexec", "") if cluster is not None else ""
    if not mpiexec or "/" not in mpiexec or not (why := _not_executable(mpiexec)):
        return ""
    found = instead(program_mpi(program) if program else None)
    here = " or ".join(f'"{path}"' for path, _ in found)
    return (f"{_named(mpiexec, cluster)} {why} on this machine, so the sweep can launch "
            f"nothing with it; set mpiexec to the path of an MPI launcher here"
            f"{f' ({here})' if here else ''}, or drop it to launch with the mpiexec on PATH")


def _not_executable(path: str) -> str:
    """Why ``path`` is no executable file ("does not exist", "is a folder", ...); "": it is."""
    if os.path.isfile(path) and os.access(path, os.X_OK):
        return ""
    if not os.path.lexists(path):
        return "does not exist"
    if not os.path.exists(path):
        return "is a link to nothing"
    return "is a folder" if os.path.isdir(path) else "is not executable"


def _named(mpiexec: str, cluster) -> str:
    """``FILE: mpiexec = 'PATH' of cluster 'NAME'``: where a refusal's value is written."""
    where = getattr(cluster, "file", "") or "the cluster file"
    return f"{where}: mpiexec = {mpiexec!r} of cluster {cluster.name!r}"


__all__ = ["ignored_mpiexec", "missing_mpiexec", "unfound_mpiexec", "unlaunchable_mpiexec",
           "unseen_mpiexec"]
