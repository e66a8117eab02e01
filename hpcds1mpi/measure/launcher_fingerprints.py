"""A known machine id that an older hpcds1mpi took from the launcher: the same machine and MPI.

Program sweeps of older versions fingerprinted the launcher's version line (``"mpiexec
Version: 5.0.2"``, :data:`hpcds1mpi.records.machines.LAUNCHER_LIBRARY`) where this one reads
the program's MPI library (``"MPICH Version: 5.0.2"``), so a bundle trained on those runs has
another id than new runs of the same machine, and ``learn`` said "different machines" (s34
tester O4). Here a new machine is the known one when its fingerprint, with the line such a
launcher of its library's version printed in place of the library (and a trained partition's
name), is the known id: hardware, partition and MPI version all equal.
"""

from __future__ import annotations

import re

#: Launcher names an older fingerprint began with (the launcher's file name).
_LAUNCHERS = ("mpiexec", "mpirun", "orterun", "mpiexec.hydra", "mpiexec.mpich", "mpirun.mpich",
              "mpiexec.openmpi", "mpirun.openmpi")
#: An MPI library's version number (``MPICH Version: 5.0.2``, ``Open MPI v4.1.4, ...``).
_VERSION = re.compile(r"(\d+(?:\.\d+)+\w*)")


def launcher_lines(library: str) -> list[str]:
    """The fingerprints an older hpcds1mpi gave a program run under a launcher of ``library``'s
    version: ``NAME Version: V`` (MPICH's hydra), ``NAME NAME2 (Open MPI) V`` (Open MPI's
    line names the launcher itself), and ``unknown`` (a launcher that could not run)."""
    found = _VERSION.search(str(library or ""))
    lines = ["unknown"]
    if found is None:
        return lines
    version = found.group(1)
    for name in _LAUNCHERS:
        lines.append(f"{name} Version: {version}")
        lines += [f"{name} {own} ({family}) {version}" for own in _LAUNCHERS
                  for family in ("Open MPI", "OpenRTE")]
    return lines


def launcher_fingerprinted(machines: dict[str, dict], known, partitions
                           ) -> dict[str, tuple[str, str, str]]:
    """New machine id -> (known id, the launcher line it was hashed from, the new runs' MPI
    library), for each machine of ``machines`` (telemetry machines-table rows) outside
    ``known`` whose fingerprint with an older launcher line of its library's version, under
    its own partition name or a trained one's, is a known id."""
    from hpcds1mpi.measure.meters import machine_id

    known = set(known)
    found = {}
    for mid, row in machines.items():
        if mid in known:
            continue
        names = [row.get("partition"), *sorted({str(p) for p in partitions})]
        ids = ((machine_id({**row, "mpi_library": line, "partition": name}), line)
               for line in launcher_lines(row.get("mpi_library")) for name in names)
        hit = next(((i, line) for i, line in ids if i in known), None)
        if hit:
            found[mid] = (*hit, str(row.get("mpi_library") or ""))
    return found
