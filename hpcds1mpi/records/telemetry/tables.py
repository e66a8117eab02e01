"""The tables of a telemetry file as pandas DataFrames: what the other rooms read."""

from __future__ import annotations

import os

from hpcds1mpi.errors import TelemetryError

from .journal import load
from .layout import DETAIL_TABLES, MACHINE_COLUMNS, RUN_COLUMNS, TABLES, normalise


def _frame(rows: list[dict], columns: list[tuple[str, str]]):
    import pandas as pd

    names = [n for n, _ in columns]
    if not rows:
        frame = pd.DataFrame({n: pd.Series([], dtype={"str": object, "int": "int64",
                                                      "float": "float64"}[k]) for n, k in columns})
        return frame
    frame = pd.DataFrame([normalise(r, columns) for r in rows], columns=names)
    return frame


def read_runs(path: str | os.PathLike):
    """The runs table as a pandas DataFrame, one row per run (columns: docs/telemetry.md).

    Includes finished runs still only in the journal; unfinished ones of a dead writer appear
    as ``crashed``.
    """
    store = load(path)
    return _frame(list(store.runs.values()), RUN_COLUMNS)


def read_machines(path: str | os.PathLike):
    """The machines table (fingerprints) as a DataFrame, one row per ``machine_id``."""
    store = load(path)
    return _frame(list(store.machines.values()), MACHINE_COLUMNS)


def read_detail(path: str | os.PathLike, table: str):
    """Per-repeat / per-rank detail: ``table`` in ``repeats``, ``ranks``, ``rank_repeats``."""
    if table not in DETAIL_TABLES:
        raise TelemetryError(f"unknown detail table {table!r}; use one of {', '.join(DETAIL_TABLES)}")
    store = load(path)
    rows = [r for key in store.runs for r in store.detail[table].get(key, [])]
    return _frame(rows, TABLES[table])

