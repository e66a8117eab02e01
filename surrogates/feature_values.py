"""How the feature builder reads a column of a DataFrame or of plain arrays
(:class:`~.columns.Columns`): numbers as float64, text as codes into its distinct values.
Moved out of :mod:`.features`; a Columns table is read without pandas."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .columns import factorize, is_columns

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd


def _num(frame: "pd.DataFrame", col: str, n: int) -> np.ndarray:
    if col not in frame.columns:
        return np.full(n, np.nan)
    series = frame[col]
    if is_columns(frame):  # plain arrays (the recommend path): no pandas
        if series.dtype.kind in "biuf":
            return series.astype(np.float64)
        return parse_numbers(series)
    import pandas as pd

    if pd.api.types.is_numeric_dtype(series.dtype):  # the common case: no parsing needed
        return series.to_numpy(dtype=np.float64, na_value=np.nan)
    return pd.to_numeric(series, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)


def parse_numbers(values: np.ndarray) -> np.ndarray:
    """Text or objects as float64, NaN where a value is no number (``pd.to_numeric``'s
    ``errors="coerce"``)."""
    try:
        return values.astype(np.float64)
    except (TypeError, ValueError):
        def one(v) -> float:
            try:
                return float(v)
            except (TypeError, ValueError):
                return np.nan
        return np.array([one(v) for v in values.tolist()], dtype=np.float64)


def _column(frame, name: str):
    """``frame[name]``, or its ``(codes, values)`` where a Columns table has them."""
    coded = frame.coded(name) if is_columns(frame) else None
    return coded if coded is not None else frame[name]


def _factor(values: "pd.Series") -> tuple[np.ndarray, list[str]]:
    """(codes, unique strings): hash-based, so 10,000 rows of a few values stay cheap; a
    categorical column (System 1's grids) already has them, and no missing value."""
    if isinstance(values, tuple):  # (codes, values) of a Columns grid
        return np.asarray(values[0], dtype=np.intp), [str(v) for v in values[1]]
    if isinstance(values, np.ndarray):  # a Columns column: text arrays, sorted once
        codes, uniques = factorize(values)
        return codes, [str(u) for u in uniques.tolist()]
    import pandas as pd

    if isinstance(values.dtype, pd.CategoricalDtype):
        codes = values.cat.codes.to_numpy()
        if len(codes) == 0 or codes.min() >= 0:
            return codes.astype(np.intp), [str(c) for c in values.cat.categories]
    codes, uniques = pd.factorize(values, use_na_sentinel=False)
    return codes, [str(u) for u in uniques]


def _codes(values: "pd.Series", vocab: list[str]) -> np.ndarray:
    lookup = {v: float(i) for i, v in enumerate(vocab)}
    codes, uniques = _factor(values)
    return np.array([lookup.get(u, -1.0) for u in uniques], dtype=np.float64)[codes]


def _mapped(values: "pd.Series", table: dict[str, float]) -> np.ndarray:
    codes, uniques = _factor(values)
    return np.array([table.get(u, -1.0) for u in uniques], dtype=np.float64)[codes]
