"""The hardware a model bundle was trained on: its partition table, read two ways.

A bundle records, per partition it measured, ``cores_per_node``, ``memory_gb``,
``gpus_per_node`` (and more). System 1's memory limits and the guard's query rows need those
columns on rows that lack them (:func:`hardware_columns`); ``recommend`` and the guard need to
know which trained partition a partition of a cluster file corresponds to
(:func:`matching_partition`); System 1 asks the bundle about such a partition under its trained
name (:func:`trained_names`, :func:`as_trained`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from hpcds1mpi.cluster import Partition

#: Columns a prediction row takes from its partition.
HARDWARE_COLUMNS = ("cores_per_node", "memory_gb", "gpus_per_node")
#: A partition matches a trained one when its memory is within this share of it.
MEMORY_TOLERANCE = 0.25


def trained_partitions(bundle) -> dict:
    """The bundle's partition table: name -> hardware dict (empty when it has none)."""
    return dict(getattr(bundle, "partitions", {}) or {})


def hardware_columns(frame: "pd.DataFrame", partitions: dict) -> "pd.DataFrame":
    """A copy of ``frame`` with the hardware columns filled from a partition table.

    Values a row already has are kept; missing ones (or missing columns) come from
    ``partitions[row.partition]``, NaN where the table does not know the partition.

    Args:
        frame: rows with a ``partition`` column: a DataFrame, or
            :class:`~hpcds1mpi.surrogates.columns.Columns` (then Columns back, no pandas).
        partitions: partition name -> hardware dict (a bundle's ``partitions``).
    """
    from hpcds1mpi.surrogates.columns import is_columns

    if is_columns(frame):
        return _hardware_arrays(frame, partitions)
    frame = frame.copy()
    for col in HARDWARE_COLUMNS:
        mapped = frame["partition"].map(lambda p, c=col: (partitions.get(p) or {}).get(c, np.nan))
        frame[col] = frame[col].fillna(mapped) if col in frame.columns else mapped
    return frame


def _hardware_arrays(table, partitions: dict):
    """:func:`hardware_columns` of Columns: one look-up per distinct partition."""
    table = table.copy()
    names, inverse = np.unique(np.asarray(table["partition"]).astype(str), return_inverse=True)
    for col in HARDWARE_COLUMNS:
        values = [(partitions.get(p) or {}).get(col, np.nan) for p in names.tolist()]
        whole = values and all(isinstance(v, (int, np.integer)) for v in values)
        # pandas' map gives int64 where every value is whole, float64 (NaN: unknown) else
        mapped = np.asarray(values, dtype=np.int64 if whole else float)[inverse]
        if col not in table:
            table[col] = mapped
            continue
        have = np.asarray(table[col])
        if have.dtype.kind == "f":
            table[col] = np.where(np.isnan(have), mapped, have)
    return table


def matching_partition(bundle, partition: "Partition") -> str | None:
    """The trained partition ``partition`` corresponds to (same name and hardware, or same
    hardware), or None when the model never saw hardware like it."""
    trained = trained_partitions(bundle)

    def same(hw: dict) -> bool:
        try:
            mem = float(hw.get("memory_gb", 0))
            return (int(hw.get("cores_per_node", -1)) == partition.cores_per_node
                    and int(hw.get("gpus_per_node", 0) or 0) == partition.gpus_per_node
                    and mem > 0 and abs(mem - partition.memory_gb) <= MEMORY_TOLERANCE * mem)
        except (TypeError, ValueError):
            return False

    if partition.name in trained and same(trained[partition.name]):
        return partition.name
    for name, hw in trained.items():
        if same(hw):
            return name
    return None


def trained_names(bundle, partitions: Sequence["Partition"]) -> dict[str, str]:
    """Partition name -> the name of the trained partition it corresponds to
    (:func:`matching_partition`), for those of ``partitions`` whose trained partition has
    another name; the others are absent (an empty dict for the common case). One look-up per
    partition, none per row."""
    renamed = {}
    for part in partitions:
        trained = matching_partition(bundle, part)
        if trained is not None and trained != part.name:
            renamed[part.name] = trained
    return renamed


def as_trained(table, renamed: dict[str, str]):
    """``table`` (Columns or DataFrame) with its ``partition`` column renamed by ``renamed``
    (:func:`trained_names`): what the bundle is asked. The partition name is a categorical
    model feature, so a name it never saw is predicted as none of its partitions, however
    alike the hardware. ``table`` itself is unchanged (the answer keeps the user's names);
    without renames it is returned as is."""
    if not renamed:
        return table
    from hpcds1mpi.surrogates.columns import Columns, is_columns

    if is_columns(table):
        codes = {c: table.coded(c) for c in table.columns if table.coded(c) is not None}
        coded = codes.pop("partition", None)
        if coded is None:  # a given table without codes: one look-up per distinct name
            names, inverse = np.unique(np.asarray(table["partition"]).astype(str),
                                       return_inverse=True)
            coded = (inverse.reshape(-1), names.tolist())
        # Two partitions may map to one trained name: codes into a list may repeat names.
        names = [renamed.get(str(n), str(n)) for n in coded[1]]
        codes["partition"] = (coded[0], names)
        data = dict(table.items())
        data["partition"] = np.asarray(names, dtype=str)[coded[0]]
        return Columns(data, codes)
    return table.assign(partition=_renamed_series(table["partition"], renamed))


def _renamed_series(series, renamed: dict[str, str]):
    """A DataFrame's partition column renamed (a categorical stays one, its categories
    merged where two names map to one)."""
    import pandas as pd

    if isinstance(series.dtype, pd.CategoricalDtype):
        old = [renamed.get(str(c), str(c)) for c in series.cat.categories]
        new = list(dict.fromkeys(old))
        where = np.asarray([new.index(n) for n in old] + [-1])  # code -1 (missing) stays
        return pd.Categorical.from_codes(where[series.cat.codes.to_numpy()], new)
    return series.map(lambda name: renamed.get(name, name))
