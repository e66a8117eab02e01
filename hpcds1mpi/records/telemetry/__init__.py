"""The telemetry store (see docs/telemetry.md): sweeps write it, everything else reads it.

A telemetry file ``t.h5`` is an HDF5 snapshot plus a journal and a lock beside it while a sweep
writes. Modules: :mod:`.layout` (the HDF5 layout, ``SCHEMA_VERSION``, the in-memory
:class:`Store`), :mod:`.snapshot_write` (a snapshot written atomically), :mod:`.journal`
(journal, lock, fault notes; :func:`load` folds them in), :mod:`.writer`
(:class:`TelemetryWriter`), :mod:`.added_runs` (:func:`append`: runs added from Python,
checked first), :mod:`.merge` (shards into one file),
:mod:`.tables` (:func:`read_runs` and the other DataFrames), :mod:`.foreign_content` (what
other programs added, kept by a rewrite), :mod:`.kept_rows` (the row rules a rewrite applies).
The names below are the store's public face; import them from here.
"""

from __future__ import annotations

from .journal import (journal_path, load, lock_path, read_fault_notes, read_journal,
                      remove_fault_notes, write_fault_note, writer_alive)
from .layout import (DETAIL_TABLES, FORMAT_NAME, MACHINE_COLUMNS, PROVENANCE_COLUMNS,
                     RANK_COLUMNS, RANK_REPEAT_COLUMNS, REPEAT_COLUMNS, RUN_COLUMNS,
                     SCHEMA_VERSION, TABLES, Store, normalise, read_snapshot)
from .merge import merge
from .snapshot_write import write_snapshot
from .tables import read_detail, read_machines, read_runs
from .writer import TelemetryWriter
from .added_runs import append

__all__ = ["DETAIL_TABLES", "FORMAT_NAME", "MACHINE_COLUMNS", "PROVENANCE_COLUMNS",
           "RANK_COLUMNS", "RANK_REPEAT_COLUMNS", "REPEAT_COLUMNS", "RUN_COLUMNS",
           "SCHEMA_VERSION", "Store", "TABLES", "TelemetryWriter", "append", "journal_path",
           "load", "lock_path", "merge", "normalise", "read_detail", "read_fault_notes",
           "read_journal", "read_machines", "read_runs", "read_snapshot",
           "remove_fault_notes", "write_fault_note", "write_snapshot", "writer_alive"]
