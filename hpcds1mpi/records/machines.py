"""Runs of one machine: the fingerprints (``machine_id``) a table's runs carry, and the refusal
to mix machines.

A model is trained on one machine's runs: :func:`refuse_foreign_machines` refuses new runs of
another, and :func:`launcher_note` says when two ids may be one machine after all (a
fingerprint that names the launcher, :data:`LAUNCHER_LIBRARY`, not the program's MPI library).
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


def names_launcher(mpi_library) -> bool:
    """Whether a machines-table ``mpi_library`` names a launcher (:data:`LAUNCHER_LIBRARY`)."""
    return bool(LAUNCHER_LIBRARY.match(str(mpi_library or "")))


def launcher_note(frame: pd.DataFrame, ids) -> str:
    """Why machine ids of ``frame`` may differ on one machine: a fingerprint that names the
    launcher (``frame.attrs`` from :func:`hpcds1mpi.records.training.read_frames`), with the fix; "" when none does."""
    libraries = frame.attrs.get("mpi_libraries", {})
    named = [(i, libraries[i]) for i in sorted(ids) if names_launcher(libraries.get(i))]
    if not named:
        return ""
    machine, library = named[0]
    return (f"; {machine[:12]}'s fingerprint names the launcher ({library!r}), not the "
            "program's MPI library (a program sweep of an older hpcds1mpi, or of a wrapper "
            "script): if these are runs of the same machine and MPI, measure them again with "
            "`hpcds1mpi sweep --command` running the program itself, which gives them that "
            "machine's id")


def refuse_foreign_machines(known: set[str], new: pd.DataFrame) -> None:
    """Refuse runs from machines other than ``known`` (runs of machines are never mixed).

    Raises:
        DataError: ``new`` has runs of a machine outside ``known``, or (``known`` empty) of
            several machines.
    """
    new_ids = machine_ids(new)
    foreign = sorted(new_ids - set(known))
    if foreign and known:
        raise DataError(
            f"new runs come from machine(s) {', '.join(f[:12] for f in foreign)} but the bundle "
            f"was trained on {', '.join(sorted(i[:12] for i in known))}; runs of different "
            "machines are never mixed: train a separate bundle with "
            "`hpcds1mpi train --telemetry FILE --machine ID --out DIR`"
            + launcher_note(new, foreign)
        )
    if len(new_ids) > 1 and not known:
        raise DataError(f"new runs come from {len(new_ids)} machines; train one bundle per "
                        "machine with `hpcds1mpi train --machine ID`")
