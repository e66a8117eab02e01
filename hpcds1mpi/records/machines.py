"""Runs of one machine: the fingerprints (``machine_id``) a table's runs carry, and the refusal
to mix machines.

A model is trained on one machine's runs: :func:`refuse_foreign_machines` refuses new runs of
another, and :func:`launcher_note` says when two ids may be one machine after all (a
fingerprint that names the launcher, :data:`LAUNCHER_LIBRARY`, not the program's MPI library).
:func:`resolve_machine` reads the id a user names (``train --machine``): the whole id, or a
prefix of one. Messages print ids whole: a printed id is one the user may paste back.
"""

from __future__ import annotations

import re

import pandas as pd

from hpcds1mpi.errors import DataError

#: ``mpi_library`` values that name a launcher, not an MPI library (``"mpiexec Version:
#: 5.0.2"``): what program sweeps fingerprinted before they read the program's own library, and
#: still do where it cannot be read. Such a machine_id differs from kernel runs' on the same
#: machine and MPI, so a refusal says so.
LAUNCHER_LIBRARY = re.compile(r"^(mpiexec|mpirun|orterun|srun)\S*\s|^unknown$")


def machine_ids(frame: pd.DataFrame) -> set[str]:
    """The machine fingerprints of ``frame``'s rows (empty for job tables)."""
    if "machine_id" not in frame.columns:
        return set()
    return set(frame["machine_id"].dropna().astype(str)) - {""}


def resolve_machine(given: str, ids) -> str:
    """The machine id of ``ids`` that ``given`` names: itself, or the one id it is a prefix of.

    ``ids`` empty (a job table: no machine ids) gives ``given`` back, unchecked.

    Raises:
        DataError: no id starts with ``given``, or several do (they are named).
    """
    ids = sorted(set(ids))
    if not ids or given in ids:
        return given
    matches = [i for i in ids if given and i.startswith(given)]
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise DataError(f"machine {given!r} is the start of {len(matches)} ids "
                        f"({', '.join(matches)}); give more of the one you mean")
    raise DataError(f"no runs from machine {given!r}; the data has {', '.join(ids)}")


def names_launcher(mpi_library) -> bool:
    """Whether a machines-table ``mpi_library`` names a launcher (:data:`LAUNCHER_LIBRARY`)."""
    return bool(LAUNCHER_LIBRARY.match(str(mpi_library or "")))


def launcher_note(frame: pd.DataFrame, ids) -> str:
    """Why machine ids of ``frame`` may differ on one machine: a fingerprint that names the
    launcher (``frame.attrs`` from :func:`hpcds1mpi.records.training.read_frames`), with the
    fix, else the same hosts measured with other MPI libraries or in other partitions
    (:func:`same_hardware_note`); "" when neither."""
    libraries = frame.attrs.get("mpi_libraries", {})
    named = [(i, libraries[i]) for i in sorted(ids) if names_launcher(libraries.get(i))]
    if not named:
        return untold_signature_note(frame, ids) or same_hardware_note(frame, ids)
    machine, library = named[0]
    return (f"; {machine}'s fingerprint names the launcher ({library!r}), not the "
            "program's MPI library (a program sweep of an older hpcds1mpi, or of a wrapper "
            "script that names its program by a variable, under a launcher without its library "
            "beside it): if these are runs of the same machine and MPI, measure them again with "
            "`hpcds1mpi sweep --command` naming the program itself (or a wrapper that names it, "
            "e.g. `exec ./app \"$@\"`), which gives them that machine's id")


def untold_signature_note(frame: pd.DataFrame, ids) -> str:
    """Why a machine id of ``frame`` whose CPU name says no generation and whose runs carry no
    CPU signature (an hpcds1mpi before session 38) differs from one of that name with a
    signature, and the fix that keeps the runs (s38 tester F1); "" when none does."""
    from hpcds1mpi.cpu_signature import generic_cpu_name

    if not {"cpu_model", "cpu_signature"} <= set(frame.columns):
        return ""
    firsts = frame.drop_duplicates("machine_id")
    firsts = firsts.set_index(firsts["machine_id"].astype(str))
    for untold in sorted(ids):
        name = firsts["cpu_model"].get(untold)
        if not generic_cpu_name(name) or firsts["cpu_signature"].get(untold):
            continue
        signed = [i for i in sorted(ids) if i != untold and firsts["cpu_model"].get(i) == name
                  and firsts["cpu_signature"].get(i)]
        if signed:
            return (f"; {untold[:12]}'s runs were recorded by an older hpcds1mpi without the "
                    f"CPU's signature, which tells generations of CPU {name!r} apart, so they "
                    f"are taken for other hardware than {signed[0][:12]}: if they ran on this "
                    f"machine, resume their sweep here (`hpcds1mpi sweep ... --out FILE "
                    f"--resume` with that file: nothing is measured again, its runs take this "
                    f"machine's id), then train again")
    return ""


def same_hardware_note(frame: pd.DataFrame, ids) -> str:
    """What tells machine ids apart when their runs ran on the same hosts: their MPI
    libraries (``frame.attrs["mpi_libraries"]``) or partitions, each part of a machine id
    (:func:`hpcds1mpi.measure.meters.machine_id`), with a ``--machine`` per id; "" when they
    share no host or neither differs. Was (s28 tester Y7b): one host's Open MPI and MPICH runs
    were "2 machines (6db5100277c3, a1f575dd1818)", which read as two computers."""
    ids = sorted(ids)
    if len(ids) < 2 or "hostnames" not in frame.columns:
        return ""
    of = {i: frame[frame["machine_id"].astype(str) == i] for i in ids}
    hosts = set.intersection(*({h for text in runs["hostnames"].dropna().astype(str)
                                for h in text.split(",") if h} for runs in of.values()))
    if not hosts:
        return ""
    libraries = {i: _library_name(frame.attrs.get("mpi_libraries", {}).get(i)) for i in ids}
    partitions = {i: ", ".join(sorted(set(runs["partition"].dropna().astype(str)) - {""}))
                  if "partition" in runs.columns else "" for i, runs in of.items()}
    differ, per, labels = [], [], {i: [] for i in ids}
    for kind, what, values in (("library", "MPI libraries", libraries),
                               ("partition", "partitions", partitions)):
        if len(set(values.values())) > 1:
            differ.append(f"{len(set(values.values()))} {what} "
                          f"({', '.join(sorted(set(values.values())))})")
            per.append(kind)
            for i in ids:
                labels[i].append(values[i] if kind == "library" else f"partition {values[i]}")
    if not differ:
        return ""
    which = ", ".join(f"--machine {i} for {' in '.join(labels[i])}" for i in ids)
    return (f"; they are the same hardware (host {', '.join(sorted(hosts)[:3])}) with "
            f"{' and '.join(differ)}, and runtimes differ with them: train one model per "
            f"{' and '.join(per)} ({which})")


def _library_name(version) -> str:
    """An MPI library's version line up to its first comma (``Open MPI v4.1.4, package:
    Debian OpenMPI, ...``: ``Open MPI v4.1.4``); "unknown MPI" when none was read."""
    return str(version or "").split(",")[0].strip() or "unknown MPI"


def refuse_foreign_machines(known: set[str], new: pd.DataFrame, files=(),
                            launchers: dict | None = None, untold: dict | None = None
                            ) -> None:
    """Refuse runs from machines other than ``known`` (runs of machines are never mixed).

    ``files``: the telemetry ``new`` was read from, named in the ``train`` command the refusal
    gives (``FILE`` where none is given). ``launchers``: new id -> (known id, launcher line,
    library) for new machines whose known id is their own as an older hpcds1mpi took it from
    the launcher (:func:`hpcds1mpi.measure.launcher_fingerprints.launcher_fingerprinted`):
    refused as that, not as "different machines" (s34 tester O4). ``untold``: new id -> (known
    id, "bundle" or "runs") where one side's record does not say which CPU generation its
    generic CPU name is (:func:`hpcds1mpi.measure.same_machine.untold_machines`): refused as
    that (s38 tester K2).

    Raises:
        DataError: ``new`` has runs of a machine outside ``known``, or (``known`` empty) of
            several machines.
    """
    new_ids = machine_ids(new)
    foreign = sorted(new_ids - set(known))
    if foreign and known and all(i in (launchers or {}) for i in foreign):
        raise DataError(_launcher_known(launchers[foreign[0]], new, foreign, files))
    if foreign and known and all(i in (untold or {}) for i in foreign):
        raise DataError(_untold_known(untold[foreign[0]], new, foreign, files))
    if foreign and known:
        raise DataError(
            f"new runs come from machine(s) {_with_partitions(new, foreign)} but the bundle "
            f"was trained on {', '.join(sorted(known))}; runs of different machines are never "
            f"mixed: train a separate bundle of them with {_train_command(new, foreign, files)}"
            + launcher_note(new, foreign)
        )
    if len(new_ids) > 1 and not known:
        raise DataError(f"new runs come from {len(new_ids)} machines; train one bundle per "
                        "machine with `hpcds1mpi train --machine ID`")


def _launcher_known(match, new: pd.DataFrame, foreign, files) -> str:
    """The refusal of new runs of the bundle's own machine and MPI whose id differs only
    because an older hpcds1mpi fingerprinted the bundle's runs by their launcher: a bundle's
    runs cannot be given another id, so the way out is a new bundle (``match``: (known id,
    launcher line, the new runs' library))."""
    import shlex

    known, line, library = match
    into = shlex.quote(str(files[0])) if len(files) == 1 else "FILE"
    return (f"new runs of machine(s) {_with_partitions(new, foreign)} are of the bundle's "
            f"machine {known} and MPI, but the bundle's id is an older hpcds1mpi's fingerprint "
            f"of the launcher ({line!r}), not of the program's MPI library ({library!r}), and "
            "a bundle's runs cannot be given another id: sweep the bundle's program again with "
            f"this hpcds1mpi (`hpcds1mpi sweep --command ... --out {into} --resume`) and train "
            f"a new bundle with {_train_command(new, foreign, files)}")


def _untold_known(match, new: pd.DataFrame, foreign, files) -> str:
    """The refusal of new runs that are the bundle's machine but for a CPU generation one side
    does not record (``match``: (known id, "bundle" or "runs": whose record lacks it))."""
    import shlex

    from hpcds1mpi.cpu_signature import untold_note

    known, whose = match
    cpus = new.loc[new["machine_id"].astype(str) == foreign[0], "cpu_model"] \
        if "cpu_model" in new.columns else pd.Series(dtype=object)
    cpu = next(iter(cpus.dropna().astype(str)), "?")
    train = _train_command(new, foreign, files)
    if whose == "bundle":
        return untold_note(f"new runs of machine(s) {_with_partitions(new, foreign)} differ "
                           f"from the bundle's machine {known} only in the CPU's signature; "
                           "the bundle's machine", cpu,
                           f"train a new bundle of these runs with {train}")
    into = shlex.quote(str(files[0])) if len(files) == 1 else "FILE"
    return untold_note(f"new runs of machine(s) {_with_partitions(new, foreign)} are of the "
                       f"bundle's machine {known} but for the CPU's signature; their "
                       "machine", cpu,
                       "if they ran on this machine, resume their sweep here (`hpcds1mpi sweep "
                       f"... --out {into} --resume` keeps them as this machine's), else train "
                       f"a separate bundle of them with {train}")


def _with_partitions(frame: pd.DataFrame, ids) -> str:
    """``ids`` whole, each with the partition(s) its runs name: what tells the user which
    machine is which (a partition is part of the fingerprint)."""
    if "partition" not in frame.columns:
        return ", ".join(ids)
    named = []
    for i in ids:
        parts = sorted(set(frame.loc[frame["machine_id"].astype(str) == i, "partition"]
                           .dropna().astype(str)) - {""})
        named.append(f"{i} (partition {', '.join(parts)})" if parts else i)
    return ", ".join(named)


def _train_command(frame: pd.DataFrame, foreign, files) -> str:
    """The ``train`` command for the foreign runs (``--machine`` only where the files hold
    several machines), and, where they are fewer ok runs than a model needs, how to add some."""
    import shlex

    from hpcds1mpi.config import MIN_OK_RUNS, OK

    sources = " ".join(f"--telemetry {shlex.quote(str(f))}" for f in files) or "--telemetry FILE"
    machine = f" --machine {foreign[0]}" if len(machine_ids(frame)) > 1 and len(foreign) == 1 \
        else (" --machine ID" if len(foreign) > 1 else "")
    command = f"`hpcds1mpi train {sources}{machine} --out DIR`"
    if len(foreign) != 1 or "status" not in frame.columns:
        return command
    runs = frame[frame["machine_id"].astype(str) == foreign[0]]
    ok = int((runs["status"].astype(str) == OK).sum())
    if ok >= MIN_OK_RUNS:
        return command
    where = _with_partitions(runs, foreign).removeprefix(foreign[0]).strip(" ()") or "machine"
    into = shlex.quote(str(files[0])) if len(files) == 1 else "FILE"
    return (f"{command} once that machine has at least {MIN_OK_RUNS} ok runs (these are {ok}): "
            f"measure more configurations, or the same at another size, on {where} into the "
            f"same file (hpcds1mpi sweep ... --sizes ... --out {into} --resume)")
