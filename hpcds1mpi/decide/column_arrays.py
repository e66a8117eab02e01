"""A candidate table's column as a numpy array, whatever the table (System 1's scoring)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd


def column_array(frame: "pd.DataFrame", col: str) -> np.ndarray:
    """A column as a numpy array; text as fixed-width unicode (``<U``), not Python objects:
    taking and comparing 10,000 of them is a C loop, not 10,000 calls (~1 ms per column)."""
    series = frame[col]
    if isinstance(series, np.ndarray):  # Columns: text is <U already
        return series.astype(str) if series.dtype == object else series
    if isinstance(series.dtype, categorical_dtype()):
        # A missing value's code is -1: read as "nan", as text columns read it, never as the
        # last category (a missing partition had been scored as another one).
        cats = np.asarray([str(c) for c in series.cat.categories] + ["nan"], dtype=str)
        codes = series.cat.codes.to_numpy()
        return cats[np.where(codes < 0, len(cats) - 1, codes)]
    values = series.to_numpy()
    return values.astype(str) if values.dtype == object else values


def categorical_dtype():
    import pandas as pd

    return pd.CategoricalDtype
