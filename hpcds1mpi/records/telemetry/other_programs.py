"""Another program's hand on a telemetry file: an HDF5 file of its own named as ``--out``
(refused, saying what to do), and the identity that tells whether a file changed since its
writer last wrote it (a program writing ``--out`` itself had destroyed earlier runs: s33 tester
B1)."""

from __future__ import annotations

import os
from pathlib import Path

from hpcds1mpi.errors import TelemetryError


def identity(path: Path) -> tuple | None:
    """The file's device, inode, size and modification time (None: no file)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def refuse_foreign(path: Path) -> None:
    """Refuse an HDF5 file that is no telemetry file, saying what to do: it is another
    program's (its data file named as ``--out``, s33 tester B1), never written into.

    Raises:
        TelemetryError: ``path`` is HDF5 without the telemetry's ``format`` attribute.
    """
    import h5py

    from .layout import FORMAT_NAME, attr_text

    try:
        with open(path, "rb") as fh:
            if fh.read(8) != b"\x89HDF\r\n\x1a\n":
                return  # read_snapshot says what else it is
        with h5py.File(path, "r") as f:
            fmt = attr_text(f.attrs.get("format"))  # any string form (s37 tester P10)
    except (OSError, RuntimeError, ValueError, KeyError):
        return  # damaged or locked: read_snapshot's words
    if fmt != FORMAT_NAME:
        raise TelemetryError(f"{path} is an HDF5 file of another program (no hpcds1mpi "
                             "format attribute), not a telemetry file: hpcds1mpi never writes "
                             "into it; keep it, and give another --out (a new file name)")
