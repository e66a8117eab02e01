"""The column names of a table file hpcds1mpi writes (CSV, Parquet, JSON lines), read without
reading the table: so that a rerun may replace its own output while another file is kept; and
a table file read by pandas as the file its path names here (:func:`read_file`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

#: Most bytes of a first line read (a header, or a JSON object of one row).
HEAD_BYTES = 1 << 20


def column_names(path: str | Path) -> list[str]:
    """The columns of the table at ``path`` by its suffix; [] when it is not readable as one."""
    path = Path(path)
    try:
        if path.suffix == ".parquet":
            import pyarrow.parquet as pq

            return list(pq.read_schema(path).names)
        with open(path, encoding="utf-8", errors="replace") as fh:
            first = fh.readline(HEAD_BYTES).strip()
        if path.suffix in (".json", ".jsonl"):
            row = json.loads(first) if first else {}
            return list(row) if isinstance(row, dict) else []
        return first.split(",")
    except Exception:  # noqa: BLE001 - anything unreadable has no columns of ours
        return []


def read_file(reader: Callable, path: str | Path, **options):
    """``reader(file, **options)`` (a pandas reader: ``read_parquet``, ``read_csv``) on the file
    ``path`` names here, given to it open: pandas reads a path's leading "~" as the home folder,
    where the shell has expanded every "~" meant so, and this "~" is a folder here (s39 tester
    D4: $HOME's table of the same name was read instead); a folder is no table.

    Raises:
        OSError: the file cannot be opened (missing, a folder, no permission).
    """
    with open(path, "rb") as fh:
        return reader(fh, **options)
