"""What other programs added to a telemetry file, and how a rewrite keeps it (s37 tester P1).

``sweep --resume``, ``telemetry merge --out`` and ``telemetry.append`` rewrite the whole file
from what hpcds1mpi reads (:mod:`.snapshot_write`), and everything else in it had been dropped
without a word: a group or dataset another tool added, attributes on the tables and their
columns. Nothing already written may be lost, so a rewrite

- keeps, exactly: the top-level groups, datasets and links that are no table (HDF5's own
  object copy: nesting, types, filters and attributes as they were), and the attributes of
  the tables and of their columns (each copied with its own HDF5 type and shape). Those are
  not tied to rows, so nothing hpcds1mpi changes can make them wrong;
- refuses, before the file is touched: anything inside a table that is not one of its
  columns. A table's datasets are per-row columns, and a rewrite adds, re-measures and
  reorders rows: hpcds1mpi cannot tell what another tool's value is for a row it adds, so a
  kept dataset would silently stop lining up with the rows. The line names it and the fix
  (move it to a group of its own, which is kept).

The root group's attributes travel in :attr:`.layout.Store.attrs`; another program's,
unchanged there, are copied back with their HDF5 types (:func:`copy_root_attrs`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from hpcds1mpi.errors import TelemetryError


@dataclass(frozen=True)
class ForeignContent:
    """What a telemetry file holds that its layout (:mod:`.layout`) does not.

    Attributes:
        top: top-level names that are no table (groups, datasets, links), kept whole.
        attributed: tables and columns (``"runs"``, ``"runs/runtime_s"``) carrying attributes
            hpcds1mpi does not write, kept.
        in_tables: members of a table that are none of its columns (``"runs/my_note"``):
            cannot be kept in line with rewritten rows, refused by :func:`refuse_unaligned`.
    """

    top: tuple[str, ...] = ()
    attributed: tuple[str, ...] = ()
    in_tables: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.top or self.attributed or self.in_tables)


#: Attributes hpcds1mpi itself writes on a table and on each of its columns
#: (:func:`.snapshot_write._write_table`; a column's unit: :mod:`.units`).
OWN_TABLE_ATTRS = frozenset({"columns"})
OWN_COLUMN_ATTRS = frozenset({"units"})


def find_foreign(f, tables: dict) -> ForeignContent:
    """What open telemetry file ``f`` holds beyond its layout ``tables`` (table name -> its
    ``(column, dtype)`` pairs, :data:`.layout.TABLES`; its tables read whole)."""
    import h5py

    top, attributed, in_tables = [], [], []
    for name in f:
        if name not in tables:
            top.append(name)
            continue
        group = f[name]
        if set(group.attrs) - OWN_TABLE_ATTRS:
            attributed.append(name)
        columns = {column for column, _ in tables[name]}
        for member in group:
            if member not in columns:
                in_tables.append(f"{name}/{member}")
            elif isinstance(group.get(member, getlink=True), h5py.HardLink) \
                    and set(group[member].attrs) - OWN_COLUMN_ATTRS:
                attributed.append(f"{name}/{member}")
    return ForeignContent(tuple(top), tuple(attributed), tuple(in_tables))


def refuse_unaligned(path, content: ForeignContent) -> None:
    """Refuse to rewrite ``path`` when a table holds members that are none of its columns.

    Raises:
        TelemetryError: one line naming them and the fix; nothing was touched.
    """
    if not content.in_tables:
        return
    names = ", ".join(f"/{name}" for name in content.in_tables[:3])
    more = f" and {len(content.in_tables) - 3} more" if len(content.in_tables) > 3 else ""
    raise TelemetryError(
        f"{path} holds {names}{more} inside its tables, which hpcds1mpi does not know: adding "
        f"runs rewrites the tables and could not keep them in line with the rows; move them "
        f"out of the tables (to a group of your own: those are kept), or write into a new "
        f"--out; nothing was changed")


def copy_foreign(source: Path, f, content: ForeignContent) -> None:
    """Copy ``content`` from the telemetry file ``source`` (the file being replaced) into the
    open new file ``f``, whose tables are written already."""
    import h5py

    if not content or not source.exists():
        return
    with h5py.File(source, "r") as src:
        for name in content.top:
            link = src.get(name, getlink=True)
            if isinstance(link, (h5py.SoftLink, h5py.ExternalLink)):
                f[name] = link  # a link stays a link (its target may be anywhere)
            elif link is not None:
                src.copy(src[name], f, name=name)
        for name in content.attributed:
            if name in src and name in f:
                _copy_attrs(src[name], f[name],
                            OWN_TABLE_ATTRS if "/" not in name else OWN_COLUMN_ATTRS)


#: Attributes hpcds1mpi itself writes on the file (the store's, rewritten from it): any
#: other root attribute is another program's, copied as it was (s37 reviewer R4: an int32
#: came back int64, a fixed-length string variable, an empty or compound one as text).
OWN_ROOT_ATTRS = frozenset({"format", "schema_version", "attempts", "plan", "launch",
                            "earlier_plans", "sweep_complete"})


def copy_root_attrs(source: Path, f, values: dict) -> None:
    """The root attributes of telemetry file ``source`` named in ``values`` (the store's:
    name -> value) onto the open new file ``f`` with their HDF5 types and shapes, replacing
    what the store wrote of them, where the store holds them unchanged (one it changed is
    its own)."""
    import h5py
    import numpy as np

    with h5py.File(source, "r") as src:
        for key, value in values.items():
            if key not in src.attrs:
                continue
            old = src.attrs[key]
            old = old.decode() if isinstance(old, bytes) else old
            try:
                same = old is value or bool(np.array_equal(old, value))
            except (TypeError, ValueError):
                same = False
            if same or isinstance(old, h5py.Empty):
                del f.attrs[key]
                _copy_attrs_of(src, f, [key])


def _copy_attrs_of(src, dst, keys) -> None:
    for key in keys:
        attr = src.attrs.get_id(key)
        dst.attrs.create(key, src.attrs[key], shape=attr.shape, dtype=attr.dtype)


def _copy_attrs(src, dst, own) -> None:
    """Every attribute of ``src`` but those hpcds1mpi writes (``own``) onto ``dst``, with its
    HDF5 type and shape (a fixed-length string stays one)."""
    _copy_attrs_of(src, dst, [key for key in src.attrs if key not in own])
