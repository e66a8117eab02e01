"""A table as plain numpy arrays: what the recommend path uses instead of a DataFrame.

A cold ``recommend`` paid about 0.35 s to import pandas (with pyarrow) before any work; its
tables are a candidate grid, the model's answer and a few training columns, all of which are
equal-length arrays. :class:`Columns` holds them (name -> ``(n,)`` array; text as fixed-width
unicode ``<U`` arrays, a missing text as ``""``) and answers the few questions the scoring code
asks of a frame: ``len``, ``columns``, ``frame[name]``, ``frame[mask]`` (rows),
``frame[[names]]`` (columns). The feature builder, ``Bundle.predict``, System 1 and the guard
take either; a DataFrame in still gives a DataFrame out.

:func:`factorize` is ``pd.factorize`` (codes numbered in order of first appearance) on numpy.
"""

from __future__ import annotations

from typing import Iterable, Mapping

import numpy as np


class Columns:
    """Equal-length named numpy arrays (a minimal, read-mostly frame).

    Args:
        data: name -> array-like; every array gets the same length (``ValueError`` else).
        codes: text column name -> ``(codes, values)`` with ``values[codes]`` equal to the
            column, when the maker has them (System 1's grid): the feature builder then
            groups the column without sorting 10,000 strings.
    """

    __slots__ = ("_data", "_n", "_codes")

    def __init__(self, data: Mapping[str, object] | None = None,
                 codes: Mapping[str, tuple[np.ndarray, list]] | None = None):
        self._data: dict[str, np.ndarray] = {}
        self._codes = dict(codes or {})
        self._n = 0
        for i, (name, values) in enumerate((data or {}).items()):
            arr = np.asarray(values)
            if i == 0:
                self._n = len(arr)
            elif len(arr) != self._n:
                raise ValueError(f"column {name!r} has {len(arr)} rows, not {self._n}")
            self._data[name] = arr

    def __len__(self) -> int:
        return self._n

    @property
    def columns(self) -> list[str]:
        return list(self._data)

    def __contains__(self, name: object) -> bool:
        return name in self._data

    def __iter__(self):
        return iter(self._data)

    def items(self):
        return self._data.items()

    def get(self, name: str, default=None):
        return self._data.get(name, default)

    def coded(self, name: str) -> tuple[np.ndarray, list] | None:
        """``(codes, values)`` of a text column when known (see the class), else None."""
        return self._codes.get(name)

    def __getitem__(self, key):
        """A column (``str``), the rows of a boolean mask or index array, or some columns
        (a list of names)."""
        if isinstance(key, str):
            return self._data[key]
        if isinstance(key, list) and all(isinstance(k, str) for k in key):
            return Columns({k: self._data[k] for k in key},
                           {k: v for k, v in self._codes.items() if k in key})
        return self.take(key)

    def __setitem__(self, name: str, values) -> None:
        arr = np.asarray(values)
        if arr.ndim == 0:
            arr = np.full(self._n, arr.item())
        if self._data and len(arr) != self._n:
            raise ValueError(f"column {name!r} has {len(arr)} rows, not {self._n}")
        if not self._data:
            self._n = len(arr)
        self._data[name] = arr
        self._codes.pop(name, None)

    def take(self, rows) -> "Columns":
        """The rows ``rows`` (boolean mask or indices), in that order."""
        rows = np.asarray(rows)
        return Columns({k: v[rows] for k, v in self._data.items()},
                       {k: (c[rows], u) for k, (c, u) in self._codes.items()}) \
            if self._data else Columns()

    def copy(self) -> "Columns":
        return Columns({k: v.copy() for k, v in self._data.items()}, self._codes)

    def to_frame(self):
        """The same table as a pandas DataFrame (imports pandas)."""
        import pandas as pd

        return pd.DataFrame({k: v for k, v in self._data.items()})


def is_columns(table) -> bool:
    return isinstance(table, Columns)


def text(values) -> np.ndarray:
    """A column as fixed-width unicode: pandas categoricals and object columns included."""
    dtype = getattr(values, "dtype", None)
    if dtype is not None and getattr(dtype, "name", "") == "category":
        cats = np.asarray([str(c) for c in values.cat.categories], dtype=str)
        return cats[values.cat.codes.to_numpy()]
    arr = values.to_numpy() if hasattr(values, "to_numpy") else np.asarray(values)
    if arr.dtype.kind == "U":
        return arr
    if arr.dtype == object:  # missing (None, NaN) -> "", as Columns keep it
        return np.asarray(["" if v is None or (isinstance(v, float) and v != v) else str(v)
                           for v in arr.tolist()], dtype=str)
    return arr.astype(str)


def as_columns(table, names: Iterable[str] | None = None) -> Columns:
    """``table`` (Columns or DataFrame) as Columns of ``names`` (default: every column)."""
    names = list(table.columns) if names is None else [n for n in names if n in table.columns]
    if isinstance(table, Columns):
        return table[names]
    out = {}
    for name in names:
        series = table[name]
        kind = getattr(series.dtype, "kind", "O")
        out[name] = series.to_numpy() if kind in "biufcmM" else text(series)
    return Columns(out)


def factorize(values: np.ndarray, ordered: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """``(codes, uniques)`` with codes numbered in order of first appearance, as
    ``pd.factorize(values)`` gives for values without missing ones; ``ordered=False``: in
    sorted order of the values (cheaper, for a caller that only groups).

    Integers within a range of a few times their count (a grid's sizes, rank counts, keys
    made of codes) go through a lookup table, O(n + range); anything else through a sort.
    """
    values = np.asarray(values)
    n = len(values)
    if n == 0:
        return np.zeros(0, dtype=np.intp), values[:0]
    if values.dtype.kind in "iu" and values.ndim == 1:
        lo, hi = int(values.min()), int(values.max())
        if hi - lo < max(4 * n, 1 << 16):
            return _factorize_range(values, lo, hi - lo + 1, ordered)
    if not ordered:
        uniq, inverse = np.unique(values, return_inverse=True)
        return inverse.reshape(-1), uniq
    uniq, first, inverse = np.unique(values, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty(len(order), dtype=np.intp)
    rank[order] = np.arange(len(order))
    return rank[inverse.reshape(-1)], uniq[order]


def one_value(values: np.ndarray) -> bool:
    """Whether every element of a 1-d array has the same bytes (-0.0 and 0.0 differ; never
    for Python objects or an empty array)."""
    values = np.asarray(values)
    if values.dtype == object or values.ndim != 1 or not len(values) or \
            not values.dtype.itemsize:
        return False
    width = values.dtype.itemsize
    raw = np.ascontiguousarray(values).view(np.uint8)  # (n * width,) bytes
    first, middle = raw[:width].tobytes(), (len(values) // 2) * width
    # a grid's varying columns differ at its ends or middle: answered without the whole
    # compare (17 calls per question on 11,595 candidates: issue 20)
    if raw[-width:].tobytes() != first or raw[middle:middle + width].tobytes() != first:
        return False
    # each byte equal to the one a value before it: one flat compare (a broadcast against the
    # first value had cost five times as much)
    return bool((raw[width:] == raw[:-width]).all())


def distinct(values: np.ndarray) -> np.ndarray:
    """``np.unique(values)``, without hashing or sorting 10,000 texts where all are one value
    (a grid's partition column, mostly: issue 20)."""
    values = np.asarray(values)
    return values[:1].copy() if one_value(values) else np.unique(values)


def _factorize_range(values: np.ndarray, lo: int, span: int, ordered: bool = True
                     ) -> tuple[np.ndarray, np.ndarray]:
    """:func:`factorize` of integers in ``[lo, lo + span)`` by a table of the values present."""
    offset = (values - lo).astype(np.intp)
    present = np.zeros(span, dtype=bool)
    present[offset] = True
    sorted_offsets = np.flatnonzero(present)
    inverse = (np.cumsum(present, dtype=np.intp) - 1)[offset]  # code in sorted order
    if not ordered:
        return inverse, (sorted_offsets + lo).astype(values.dtype)
    first = np.full(len(sorted_offsets), len(values), dtype=np.intp)
    np.minimum.at(first, inverse, np.arange(len(values), dtype=np.intp))
    order = np.argsort(first, kind="stable")
    rank = np.empty(len(order), dtype=np.intp)
    rank[order] = np.arange(len(order))
    return rank[inverse], (sorted_offsets[order] + lo).astype(values.dtype)




def takes_columns(model) -> bool:
    """Whether ``model`` (a bundle, or a stand-in for one) predicts from :class:`Columns`;
    others are handed DataFrames, as before."""
    return bool(getattr(model, "takes_columns", False))


def for_model(model, table: Columns):
    """``table`` as the kind ``model`` takes: Columns as is, else a DataFrame."""
    return table if takes_columns(model) else table.to_frame()


def first_rows(table: Columns, names: Iterable[str]) -> np.ndarray:
    """Indices of the first row of each distinct combination of ``names`` (in row order):
    ``DataFrame.drop_duplicates(names)``'s rows."""
    n = len(table)
    key = np.zeros(n, dtype=np.int64)
    for name in names:
        codes, uniq = factorize(table[name])
        key, _ = factorize(key * len(uniq) + codes)
    _, first = np.unique(key, return_index=True)
    return np.sort(first)


__all__ = ["Columns", "as_columns", "factorize", "first_rows", "for_model", "is_columns",
           "takes_columns", "text"]
