"""A launch line's host-list option spelled as the other MPI family's launcher spells it.

Measured (s43, each launcher given ``<spelling> localhost -n 1 hostname``): hydra (MPICH
5.0.2's ``mpiexec``, Intel MPI's) takes ``-host``, ``-hosts``, ``--host`` and ``--hosts``, but
no ``-H``: MPICH's prints its usage and exits 0 having run nothing, Intel MPI's stops at
"unrecognized argument H" (exit 255). Open MPI 4.1.4's ``mpirun`` takes ``-H``, ``-host`` and
``--host``, and refuses ``--hosts`` (unknown option) and ``-hosts`` (read as ``-h -o ...``:
unknown option "-o"), exit 1. Each is read as a host list by the script reader either way, so
the job was read as running where it never starts.

Per launcher (s43 tester J5, each given ``-H localhost -n 1 hostname``): MPICH's ``mpiexec`` /
``mpirun`` and Intel MPI's ``mpirun`` (a shell script that runs ``mpiexec.hydra``, known by
``mpiexec.hydra`` beside it) print hydra's usage and exit 0 having run nothing; Intel MPI's
``mpiexec`` / ``mpiexec.hydra`` stop at "unrecognized argument H" (exit 255).

Ranks per node (s43 tester J10, Open MPI 4.1.4): hydra's ``-ppn`` / ``-perhost`` stop Open
MPI's ``mpirun`` (unknown option "-ppn", exit 1), and ``-npernode K`` over a host given fewer
than K slots stops it ("not enough slots", exit 1); hydra takes both.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from hpcds1mpi.launch.mpi_names import MPICH, OPENMPI

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.launch.job_script import JobScript, Launch

#: What each hydra launcher does with ``-H`` (measured), by (Intel MPI's, its file's name).
_HYDRA_H = {
    (True, "mpirun"): "Intel MPI's mpirun has no -H: it prints hydra's usage and exits 0 "
                      "having run nothing",
    (True, "mpiexec"): "Intel MPI's mpiexec has no -H: it stops (unrecognized argument H)",
    **{(False, name): f"MPICH's {name} has no -H: it prints its usage and exits 0 having run "
                      "nothing" for name in ("mpiexec", "mpirun")},
}
#: Spellings each family's launcher refuses -> (what it does with them, the one to give).
_REFUSED = {
    MPICH: {"-H": ("hydra's mpiexec (MPICH, Intel MPI) has no -H: MPICH's mpiexec and mpirun "
                   "and Intel MPI's mpirun print the usage and exit 0 having run nothing, "
                   "Intel MPI's mpiexec stops (unrecognized argument H)", "-hosts")},
    OPENMPI: {spelled: (f"Open MPI's mpirun has no {spelled}: it stops (unknown option)",
                        "--host") for spelled in ("--hosts", "-hosts")},
}


def host_spelling_warning(script: "JobScript", launch: "Launch",
                          family: str | None) -> str | None:
    """One line when ``launch``'s host list is spelled so that its launcher, of MPI
    ``family`` (:data:`~hpcds1mpi.launch.mpi_names.MPICH` / ``OPENMPI``; None: not known,
    nothing said), refuses it, naming the spelling it takes; None otherwise."""
    if launch.kind != "mpi":
        return None
    family, intel = hydra_kind(script, launch, family)
    if family == OPENMPI and (said := per_node_warning(script, launch)):
        return said
    refused = _refused_host(script, launch, family, intel)
    if refused is None:
        return None
    written, does, right = refused
    return f"line {launch.line}: {launch.launcher} {written}: {does}; give {right}"


def host_warnings(script: "JobScript", launch: "Launch", family: str | None) -> list[str]:
    """:func:`~hpcds1mpi.launch.script_hosts.host_list_warning` and
    :func:`host_spelling_warning` for ``launch``, a host list said once: where the job's nodes
    are not used and the list is spelled as the launcher refuses, the spelling is a clause of
    the one line ("drop -H" and "give -hosts" had been two warnings; s43 review R12); and a
    placement option the launcher stops at
    (:func:`~hpcds1mpi.launch.placement_spelling.placement_spelling_warning`)."""
    from hpcds1mpi.launch.placement_spelling import placement_spelling_warning
    from hpcds1mpi.launch.script_hosts import host_list_warning

    placing = [w for w in (placement_spelling_warning(
        script, launch, *hydra_kind(script, launch, family)),) if w]
    listed = host_list_warning(script, launch)
    spelling = host_spelling_warning(script, launch, family)
    if listed is None or spelling is None:
        return [w for w in (listed, spelling) if w] + placing
    refused = _refused_host(script, launch, *hydra_kind(script, launch, family))
    if refused is None or refused[0] not in listed:  # the per-node warning, or a host file
        return [listed, spelling] + placing
    written, does, right = refused
    return [f"{listed}; kept, it would be {right}: {does}"] + placing


def hydra_kind(script: "JobScript", launch: "Launch", family: str | None
           ) -> tuple[str | None, bool | None]:
    """(``launch``'s MPI family, whether it is Intel MPI's hydra: None where not known):
    hydra's folder tells a launcher whose name and file do not (Intel's mpirun script)."""
    path = script.text[launch.span[0]:launch.span[1]].strip("\"'")  # the launcher as written
    intel = _intel_hydra(path) if family != OPENMPI else None
    return (MPICH if intel is not None else family), intel


def _refused_host(script: "JobScript", launch: "Launch", family: str | None,
                  intel: bool | None) -> tuple[str, str, str] | None:
    """(the host option as written, what the launcher does with it, the spelling it takes with
    the list) where ``launch``'s launcher refuses its host option's spelling; None otherwise."""
    opt = launch.options.get("host")
    if opt is None or family not in _REFUSED:
        return None
    written = script.written(opt)
    spelled = _spelled(written)
    if spelled not in _REFUSED[family]:
        return None
    does, right = _REFUSED[family][spelled]
    if spelled == "-H" and intel is not None:
        name = "mpirun" if os.path.basename(launch.launcher) == "mpirun" else "mpiexec"
        does = _HYDRA_H.get((bool(intel), name), does)
    return written, does, f"{right} {opt.value or ''}".rstrip()


def _spelled(written: str) -> str:
    """The option word of an option as written (``-H n1`` / ``--hosts=n1``: ``-H``,
    ``--hosts``)."""
    return written.split()[0].split("=", 1)[0].strip("\"'") if written.split() else ""


def _intel_hydra(launcher: str) -> bool | None:
    """Whether ``launcher`` (a path) is Intel MPI's: its folder holds ``mpiexec.hydra`` and
    Intel's ``impi_info`` (its ``mpirun`` is a shell script that links nothing, so its file
    alone does not tell); False for hydra of another install; None where no folder says."""
    folder = os.path.dirname(launcher)
    if os.path.basename(launcher) not in ("mpirun", "mpiexec", "mpiexec.hydra") or not folder or not os.path.isfile(os.path.join(folder, "mpiexec.hydra")):
        return None
    return os.path.isfile(os.path.join(folder, "impi_info"))


def per_node_warning(script: "JobScript", launch: "Launch") -> str | None:
    """One line when Open MPI's ``mpirun`` ``launch`` is given ranks per node it stops at:
    hydra's ``-ppn`` / ``-perhost`` (unknown option), or ``-npernode K`` over a host list of a
    host with fewer than K slots (not enough slots); None otherwise."""
    from hpcds1mpi.launch.script_slot_fill import host_slots

    opt = launch.options.get("ntasks-per-node")
    if opt is None:
        return None
    written = script.written(opt)
    spelled = _spelled(written)
    head = f"line {launch.line}: {launch.launcher} {written}"
    if spelled.lstrip("-") in ("ppn", "perhost"):
        return (f"{head}: Open MPI's mpirun has no {spelled} (hydra's): it stops (unknown "
                f"option); give -npernode {opt.value or 'K'} (or --map-by ppr:"
                f"{opt.value or 'K'}:node)")
    hosts = launch.options.get("host")
    slots = host_slots(hosts.value or "", joined=True) if hosts is not None else None
    per_node = int(opt.value) if (opt.value or "").isdigit() else None
    short = [f"{n}:{c}" for n, c in slots or [] if per_node and c < per_node]
    if not short or "oversubscribe" in launch.options:
        return None
    return (f"{head} over host list {hosts.value[:80]}: Open MPI refuses it (not enough slots: "
            f"{', '.join(short)}); give each host {per_node} slots ("
            + ",".join(f"{n}:{max(c, per_node)}" for n, c in slots) + ") or --oversubscribe")
