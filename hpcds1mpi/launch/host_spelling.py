"""A launch line's host-list option spelled as the other MPI family's launcher spells it.

Measured (s43, each launcher given ``<spelling> localhost -n 1 hostname``): hydra (MPICH
5.0.2's ``mpiexec``, Intel MPI's) takes ``-host``, ``-hosts``, ``--host`` and ``--hosts``, but
no ``-H``: MPICH's prints its usage and exits 0 having run nothing, Intel MPI's stops at
"unrecognized argument H" (exit 255). Open MPI 4.1.4's ``mpirun`` takes ``-H``, ``-host`` and
``--host``, and refuses ``--hosts`` (unknown option) and ``-hosts`` (read as ``-h -o ...``:
unknown option "-o"), exit 1. Each is read as a host list by the script reader either way, so
the job was read as running where it never starts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hpcds1mpi.launch.mpi_names import MPICH, OPENMPI

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.launch.job_script import JobScript, Launch

#: Spellings each family's launcher refuses -> (what it does with them, the one to give).
_REFUSED = {
    MPICH: {"-H": ("hydra's mpiexec (MPICH, Intel MPI) has no -H: MPICH's prints its usage and "
                   "runs nothing, Intel MPI's stops (unrecognized argument H)", "-hosts")},
    OPENMPI: {spelled: (f"Open MPI's mpirun has no {spelled}: it stops (unknown option)",
                        "--host") for spelled in ("--hosts", "-hosts")},
}


def host_spelling_warning(script: "JobScript", launch: "Launch",
                          family: str | None) -> str | None:
    """One line when ``launch``'s host list is spelled so that its launcher, of MPI
    ``family`` (:data:`~hpcds1mpi.launch.mpi_names.MPICH` / ``OPENMPI``; None: not known,
    nothing said), refuses it, naming the spelling it takes; None otherwise."""
    opt = launch.options.get("host") if launch.kind == "mpi" else None
    if opt is None or family not in _REFUSED:
        return None
    written = script.text[opt.span[0]:opt.span[1]]
    spelled = written.split()[0].split("=", 1)[0].strip("\"'") if written.split() else ""
    if spelled not in _REFUSED[family]:
        return None
    does, right = _REFUSED[family][spelled]
    return (f"line {launch.line}: {launch.launcher} {written}: {does}; give {right} "
            f"{opt.value or ''}".rstrip())
