"""Finished runs added to a telemetry file from Python: :func:`append`, checked first.

``append`` had stored what ``merge`` and ``train`` refuse (a negative run time, status
``bogus``, no layout: nodes -1), truncated a size of 64.7 to 64, dropped unknown keys, raised a
bare KeyError / TypeError from deep inside, and left a new empty file behind when it failed
(s37 tester P4). Now every row is checked before anything is written, by the rules ``merge``
and ``train`` apply (:func:`~hpcds1mpi.records.training.impossible_rows`, from
:mod:`hpcds1mpi.schemas.runs`), and the rows are added in one snapshot: all or nothing.
"""

from __future__ import annotations

import math
import numbers
import os

from hpcds1mpi.errors import ConfigError, DataError

from .layout import MACHINE_COLUMNS, RUN_COLUMNS, normalise

#: What every run must give: its key, what ran, its layout and how it ended (a sweep's row
#: always has them; ``merge`` and ``train`` refuse a row without).
REQUIRED = ("run_id", "machine_id", "workload", "size", "nodes", "ranks_per_node", "ranks",
            "threads", "device", "precision", "status")


def append(path: str | os.PathLike, rows, detail: list[dict | None] | None = None,
           machines=None) -> None:
    """Add finished runs to the telemetry file ``path`` (created when missing).

    Args:
        path: the ``.h5`` file (the lock and rules of :class:`~.writer.TelemetryWriter`).
        rows: the runs: dicts of the run columns (docs/telemetry.md) or a DataFrame of them
            (``read_runs(...)``). A run already in the file (same machine_id and run_id) is
            replaced.
        detail: per row, None or ``{"repeats": [...], "ranks": [...], "rank_repeats": [...]}``.
        machines: the machines' rows (dicts of the machine columns, or
            ``read_machines(...)``): added where the file has none of that id. Without them a
            run's machine has no row (``telemetry show`` counts it; nothing else needs it).

    Raises:
        ConfigError: ``rows``, ``detail`` or ``machines`` of the wrong type.
        DataError: a row ``merge`` / ``train`` would refuse, a missing key, an unknown key,
            or a whole-number column given a fraction (one line naming the row and the key);
            nothing is written then.
        TelemetryError / LockError / WriteError: as a sweep's writer (the file is another
            program's, locked, or the disk is full); nothing is changed then.
    """
    from .writer import TelemetryWriter

    runs = _checked_rows(_records(rows, "rows"), RUN_COLUMNS, "rows", path)
    _refuse_impossible(runs, path)
    extra = _checked_rows(_records(machines, "machines") if machines is not None else [],
                          MACHINE_COLUMNS, "machines", path, required=("machine_id",))
    if detail is not None and (not isinstance(detail, (list, tuple)) or len(detail) != len(runs)
                               or not all(d is None or isinstance(d, dict) for d in detail)):
        raise ConfigError(f"telemetry.append(): detail must be a list with one dict (or None) "
                          f"per row ({len(runs)}), got {type(detail).__name__}")
    # Into the store, then one snapshot at close; a failure removes a file this call created.
    with TelemetryWriter(path, resume=True, all_or_nothing=True) as writer:
        store = writer.store
        for machine in extra:
            store.apply({"event": "machine", "row": machine})
        for i, row in enumerate(runs):
            if row["attempt"] == -1:  # not given: as TelemetryWriter.record numbers it
                row["attempt"] = store.attempts.get((row["machine_id"], row["run_id"]), 1)
            store.apply({"event": "run", "row": row, "detail": detail[i] if detail else None})


def _records(rows, what: str) -> list:
    """``rows`` as a list of dicts: a DataFrame's records, or the list itself."""
    if hasattr(rows, "to_dict") and hasattr(rows, "columns"):  # a DataFrame
        return rows.to_dict("records")
    if isinstance(rows, (list, tuple)) and all(isinstance(r, dict) for r in rows):
        return list(rows)
    listed = isinstance(rows, (list, tuple))
    got = (f"a list holding {next(type(r).__name__ for r in rows if not isinstance(r, dict))}"
           if listed else type(rows).__name__)
    raise ConfigError(f"telemetry.append(): {what} must be a list of dicts (one per row) or a "
                      f"DataFrame, got {got}")


def _missing(value) -> bool:
    """None, or a NaN (a DataFrame's empty cell)."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def _checked_rows(rows: list[dict], columns: list[tuple[str, str]], what: str, path,
                  required: tuple[str, ...] = REQUIRED) -> list[dict]:
    """Each row with its keys known, the ``required`` ones given, each value of its column's
    kind (a whole number where the file stores an int: 64.7 had been stored as 64), as the
    store keeps it (:func:`~.layout.normalise`); else one DataError naming row and key."""
    kinds = dict(columns)
    out = []
    for i, row in enumerate(rows):
        where = f"telemetry.append(): {what}[{i}]"
        fix = f"nothing was written to {path}"
        unknown = [str(k) for k in row if k not in kinds]
        if unknown:  # was dropped without a word
            raise DataError(f"{where} has unknown key {unknown[0]!r}: the file keeps only "
                            f"the columns of docs/telemetry.md; drop it; {fix}")
        lacking = next((k for k in required if _missing(row.get(k)) or row.get(k) == ""), None)
        if lacking:
            raise DataError(f"{where} lacks {lacking!r}: every {what[:-1]} gives "
                            f"{', '.join(required)}; {fix}")
        for key, value in row.items():
            if _missing(value):
                continue
            kind = kinds[key]
            if kind == "str" and not isinstance(value, str):
                raise DataError(f"{where} {key} must be text, got {value!r}; {fix}")
            number = isinstance(value, numbers.Real) and not isinstance(value, bool)
            if kind == "float" and not number:
                raise DataError(f"{where} {key} must be a number, got {value!r}; {fix}")
            if kind == "int" and not (number and math.isfinite(value)
                                      and float(value).is_integer()):
                raise DataError(f"{where} {key} must be a whole number, got {value!r}; {fix}")
        out.append(normalise({k: v for k, v in row.items() if not _missing(v)}, columns))
    return out


def _refuse_impossible(runs: list[dict], path) -> None:
    """One DataError when a run breaks a rule ``merge`` and ``train`` apply, naming the first
    such row."""
    import pandas as pd

    from hpcds1mpi.records.training import impossible_rows

    fix = f"fix those rows: nothing was written to {path}"
    if not runs:
        return
    frame = pd.DataFrame(runs)
    if impossible_rows(frame, "telemetry.append(): rows", fix) is None:
        return
    for i in range(len(frame)):  # the first row that breaks a rule, named
        problem = impossible_rows(frame.iloc[[i]], f"telemetry.append(): rows[{i}] (run_id "
                                  f"{runs[i]['run_id']!r})", fix)
        if problem:
            raise DataError(problem.replace(" has 1 row(s) with ", " has ", 1)
                            .replace(" has 1 sweep row(s) with ", " has ", 1))
    raise DataError(impossible_rows(frame, "telemetry.append(): rows", fix))  # across rows


__all__ = ["REQUIRED", "append"]
