"""How many rows a telemetry table declares, checked against what the file really stores,
before any column is read.

An HDF5 column's length is a number in its header: a few bytes can declare 2^40 rows, and
reading it would allocate them all (terabytes) from a file of a few megabytes. So a table is
read only when every column has the same declared length, that length is backed by stored
data (allocated bytes for a contiguous column, allocated chunks for a chunked one: chunks of a
compressed column are small, so chunks are counted, not bytes), and its rows fit in the memory
this process can have.
"""

from __future__ import annotations

import math

from hpcds1mpi.records import available_memory

#: Peak bytes of memory per table cell while a table is read into rows (measured ~120 on the
#: shipped telemetry: numpy column, Python values, row dicts, the Store's copies).
BYTES_PER_CELL = 128


class UnbackedTable(Exception):
    """A table whose declared rows are not all stored, or are of unequal lengths (damage)."""


class TableTooLarge(Exception):
    """A table whose declared rows are stored but would not fit in the available memory."""


def declared_rows(group, names: list[str], table: str) -> int:
    """The row count of ``table`` (HDF5 group ``group``) over columns ``names``, after
    checking each is a one-dimensional column whose declared length its stored data backs,
    that all have the same length, and that reading them fits in memory. Reads no values.

    Raises:
        UnbackedTable: a column that is not 1-D, is not stored as long as it says, or
            lengths that differ.
        TableTooLarge: the rows would need more memory than is available.
    """
    import h5py

    lengths = {}
    for name in names:
        column = group[name]
        if not isinstance(column, h5py.Dataset) or column.ndim != 1:
            raise UnbackedTable(f"{table}/{name} is not a column of values")
        lengths[name] = column.shape[0]
        short_of = _unstored_reason(column)
        if short_of:
            raise UnbackedTable(f"{table}/{name} declares {lengths[name]} rows but {short_of}")
    if len(set(lengths.values())) > 1:
        shortest, longest = min(lengths, key=lengths.get), max(lengths, key=lengths.get)
        raise UnbackedTable(f"{table}: columns of unequal length ({shortest} has "
                            f"{lengths[shortest]} rows, {longest} {lengths[longest]})")
    rows = next(iter(lengths.values()), 0)
    need = rows * len(names) * BYTES_PER_CELL
    have = available_memory.available_bytes()
    if have is not None and need > have:
        raise TableTooLarge(f"{table}: {rows} rows would need about {need / 1e9:.1f} GB of "
                            f"memory to read, {have / 1e9:.1f} GB is available")
    return rows


def _unstored_reason(column) -> str | None:
    """Why ``column``'s declared length is not backed by stored data, or None when it is."""
    import h5py

    rows = column.shape[0]
    if rows == 0:
        return None
    dsid = column.id
    plist = dsid.get_create_plist()
    layout = plist.get_layout()
    if layout == h5py.h5d.VIRTUAL:  # its data is in other files; the writer never makes one
        return "is a virtual dataset (its values live in other files)"
    if plist.get_external_count():
        return "keeps its values in external files"
    if layout == h5py.h5d.CHUNKED:
        per_chunk = column.chunks[0]
        needed = math.ceil(rows / per_chunk)
        stored = dsid.get_num_chunks()
        if stored < needed:
            return f"only {stored} of the {needed} chunks that hold them are stored"
        return None
    # Contiguous or compact: stored unfiltered, so the bytes must cover every row (a
    # variable-length string is stored as a fixed-size reference to its text).
    needed = rows * dsid.get_type().get_size()
    stored = dsid.get_storage_size()
    if stored < needed:
        return f"only {stored} of the {needed} bytes that hold them are stored"
    return None
