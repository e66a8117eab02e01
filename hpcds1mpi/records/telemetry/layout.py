"""The HDF5 layout of a telemetry file and its ``schema_version``: the one place that knows it.

Tables (``runs``, ``machines``, the per-repeat / per-rank detail, ``provenance``) are HDF5
groups with one dataset per column, in the order of the column lists here; file attributes
hold ``format``, ``schema_version``, the sweep plan and the attempt counts. :class:`Store` is
a file's content in memory; :func:`read_snapshot` checks format and version, and
:mod:`.snapshot_write` replaces a file atomically. The journal beside it: :mod:`.journal`.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from hpcds1mpi.errors import TelemetryError

from .adopted_ids import with_adopted
from .foreign_content import ForeignContent, find_foreign
from .side_files import journal_path
from .stored_rows import TableTooLarge, UnbackedTable, declared_rows

SCHEMA_VERSION = 1
FORMAT_NAME = "hpcds1mpi-telemetry"

# (name, kind) with kind in "str" / "int" / "float". The first block is the contract of
# docs/architecture.md ("Runs table"); never rename, only append.
RUN_COLUMNS: list[tuple[str, str]] = [
    ("run_id", "str"), ("machine_id", "str"), ("workload", "str"), ("size", "int"),
    ("nodes", "int"), ("ranks_per_node", "int"), ("ranks", "int"), ("threads", "int"),
    ("device", "str"), ("precision", "str"), ("status", "str"), ("error", "str"),
    ("runtime_s", "float"), ("runtime_min_s", "float"), ("runtime_max_s", "float"),
    ("repeats", "int"), ("noise", "float"), ("mpi_fraction", "float"), ("cpu_s", "float"),
    ("peak_rss_mb", "float"), ("gpu_busy_s", "float"), ("gpu_peak_mem_mb", "float"),
    ("energy_j", "float"), ("avg_power_w", "float"), ("energy_source", "str"),
    ("rel_error", "float"), ("work_flops", "float"), ("work_bytes", "float"),
    ("comm_messages", "float"), ("comm_bytes", "float"), ("mem_bytes_per_rank", "float"),
    ("partition", "str"), ("cores_per_node", "int"), ("memory_gb", "float"),
    ("gpus_per_node", "int"),
    # Extras (documented in docs/telemetry.md).
    ("kind", "str"), ("seed", "int"), ("sweep_id", "str"), ("attempt", "int"),
    ("started_at", "float"), ("finished_at", "float"), ("elapsed_s", "float"),
    ("measured_s", "float"), ("hostnames", "str"), ("binding", "str"),
    ("blas_threads", "int"), ("torch_threads", "int"), ("peak_rss_source", "str"),
    ("gpu_source", "str"), ("power_model", "str"), ("exit_code", "int"), ("fom", "float"),
    ("command", "str"), ("source_file", "str"),
    # After ``merge``: the program sweep's ``launch`` attribute (JSON) and ``--command`` (its
    # plan's, placeholders kept) the row was measured with, so that runs of sweeps measured
    # differently keep each their own in one file (s30 tester O2; :mod:`.merged_settings`).
    ("sweep_launch", "str"), ("command_template", "str"),
    # A program's ``--setup`` wall seconds, once per configuration; NaN without one, and in a
    # file from before (s30 tester O1: a job script's time limit adds it).
    ("setup_s", "float"),
    # A kernel run's plan options (``extra``) as JSON; "" for none and before (s40 B13).
    ("extra", "str"),
]
MACHINE_COLUMNS: list[tuple[str, str]] = [
    ("machine_id", "str"), ("hostnames", "str"), ("partition", "str"), ("cpu_model", "str"),
    # vendor, family, model, stepping and speed flags; "" before session 38 (s38 tester K2)
    ("cpu_signature", "str"),
    # the ids whose runs a resume moved to this one (:mod:`.adopted_ids`, s38 tester F7)
    ("adopted_ids", "str"),
    ("physical_cores", "int"), ("logical_cores", "int"), ("memory_gb", "float"),
    ("gpu_model", "str"), ("gpu_count", "int"), ("gpu_memory_gb", "float"),
    ("mpi_library", "str"), ("mpi_gpu_aware", "int"), ("python", "str"), ("platform", "str"),
    ("packages", "str"), ("first_seen", "float"), ("source_file", "str"),
]
REPEAT_COLUMNS: list[tuple[str, str]] = [
    ("machine_id", "str"), ("run_id", "str"), ("repeat", "int"), ("wall_s", "float"),
]
RANK_COLUMNS: list[tuple[str, str]] = [
    ("machine_id", "str"), ("run_id", "str"), ("rank", "int"), ("hostname", "str"),
    ("local_rank", "int"), ("binding", "str"), ("cpu_s", "float"), ("peak_rss_mb", "float"),
    ("wall_s_median", "float"), ("mpi_s_median", "float"), ("mpi_fraction", "float"),
]
RANK_REPEAT_COLUMNS: list[tuple[str, str]] = [
    ("machine_id", "str"), ("run_id", "str"), ("rank", "int"), ("repeat", "int"),
    ("wall_s", "float"), ("mpi_s", "float"),
]
PROVENANCE_COLUMNS: list[tuple[str, str]] = [
    ("source_file", "str"), ("rows", "int"), ("merged_at", "float"),
]
TABLES = {
    "runs": RUN_COLUMNS, "machines": MACHINE_COLUMNS, "repeats": REPEAT_COLUMNS,
    "ranks": RANK_COLUMNS, "rank_repeats": RANK_REPEAT_COLUMNS, "provenance": PROVENANCE_COLUMNS,
}
DETAIL_TABLES = ("repeats", "ranks", "rank_repeats")
#: The columns a table's rows are keyed by: every table has them since the first writer.
KEY_COLUMNS = {"runs": ("machine_id", "run_id"), "machines": ("machine_id",),
               "repeats": ("machine_id", "run_id"), "ranks": ("machine_id", "run_id"),
               "rank_repeats": ("machine_id", "run_id"), "provenance": ("source_file",)}
#: numpy dtype kinds a column of each kind is stored as (:func:`_write_table`; integers in a
#: float column read back exactly).
STORED_KINDS = {"str": "OS", "int": "iu", "float": "fiu"}
#: What to do with a damaged file. Nothing reads a part of one: a sweep --resume or a merge
#: would rewrite it with only that part.
DAMAGED_FIX = ("it was left as it is (hpcds1mpi reads or rewrites only whole files): restore it "
               "from a copy, or sweep or merge into a new --out")

def column_default(kind: str):
    return {"str": "", "int": -1, "float": math.nan}[kind]


def normalise(row: dict, columns: list[tuple[str, str]]) -> dict:
    """``row`` with every column present and cast to its kind (missing -> "", -1 or NaN)."""
    out = {}
    for name, kind in columns:
        value = row.get(name)
        if value is None:
            out[name] = column_default(kind)
        elif kind == "str":
            out[name] = str(value)
        elif kind == "int":
            try:
                out[name] = int(value)
            except (TypeError, ValueError):
                out[name] = -1
        else:
            try:
                out[name] = float(value)
            except (TypeError, ValueError):
                out[name] = math.nan
    # Keep unknown extras (a newer writer's columns survive a merge by an older reader's rows).
    return out


# --------------------------------------------------------------------------------------------
# In-memory content


@dataclass
class Store:
    """Everything a telemetry file holds, in memory.

    Attributes:
        runs: ``(machine_id, run_id) -> row`` (insertion-ordered).
        machines: ``machine_id -> row``.
        detail: table name -> ``(machine_id, run_id) -> list of rows``.
        provenance: rows of merged source files.
        started: ``(machine_id, run_id) -> start row`` for configurations started but unfinished.
        attempts: ``(machine_id, run_id) -> number of starts seen``.
        attrs: file attributes (sweep plan, created_at...).
        foreign: what other programs added to the file read (groups, datasets, attributes),
            which a rewrite keeps or refuses (:mod:`.foreign_content`, s37 tester P1).
    """

    runs: dict = field(default_factory=dict)
    machines: dict = field(default_factory=dict)
    detail: dict = field(default_factory=lambda: {t: {} for t in DETAIL_TABLES})
    provenance: list = field(default_factory=list)
    started: dict = field(default_factory=dict)
    attempts: dict = field(default_factory=dict)
    attrs: dict = field(default_factory=dict)
    foreign: ForeignContent = field(default_factory=ForeignContent)

    def add_run(self, row: dict, detail: dict | None = None) -> None:
        row = normalise(row, RUN_COLUMNS)
        key = (row["machine_id"], row["run_id"])
        self.runs.pop(key, None)  # re-insert so order follows the latest record
        self.runs[key] = row
        self.started.pop(key, None)
        for table in DETAIL_TABLES:
            rows = (detail or {}).get(table)
            if rows is not None:
                self.detail[table][key] = [normalise(r, TABLES[table]) for r in rows]
            elif detail is not None:
                self.detail[table].pop(key, None)

    def add_machine(self, row: dict) -> None:
        row = normalise(row, MACHINE_COLUMNS)
        if row["machine_id"] not in self.machines:
            self.machines[row["machine_id"]] = row

    def apply(self, event: dict) -> None:
        """Fold one journal event in."""
        kind = event.get("event")
        if kind == "start":
            row = event["row"]
            key = (row["machine_id"], row["run_id"])
            self.started[key] = row
            self.attempts[key] = max(self.attempts.get(key, 0), int(row.get("attempt", 1)))
        elif kind == "run":
            self.add_run(event["row"], event.get("detail") or {})
            key = (event["row"]["machine_id"], event["row"]["run_id"])
            self.attempts[key] = max(self.attempts.get(key, 0), int(event["row"].get("attempt", 1)))
        elif kind == "machine":
            self.add_machine(event["row"])
        elif kind == "attrs":
            self.attrs.update(event["attrs"])

    def mark_crashed(self, notes: dict | None = None) -> list[tuple[str, str]]:
        """Turn every started-but-unfinished configuration into a ``crashed`` run (``failed``
        when a rank left a fault note for it, see :func:`.journal.write_fault_note`); return
        the keys."""
        keys = list(self.started)
        for key in keys:
            start = dict(self.started[key])
            if key in self.runs and self.runs[key]["status"] != "crashed":
                self.started.pop(key)
                continue
            note = (notes or {}).get(key[1])
            if note:
                start["status"], start["error"] = "failed", note
                start["finished_at"] = time.time()
                self.add_run(start, {})
                continue
            start["status"] = "crashed"
            start["error"] = (
                "the sweep process died while this configuration ran "
                f"(started {time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime(start.get('started_at') or 0))} UTC)"
            )
            self.add_run(start, {})
        return keys

    def done_keys(self) -> set:
        return set(self.runs)

    def relabel_machine(self, old_id: str, row: dict) -> None:
        """Move everything held under machine ``old_id`` (its row, runs, detail, starts,
        attempts) to ``row``'s ``machine_id``, and make ``row`` that machine's row. For an id
        an earlier hpcds1mpi took from a text it no longer writes (a library version with a
        NUL): its runs are that machine's, under the id it is given now."""
        new_id = row["machine_id"]

        def moved(table: dict, retag) -> dict:
            return {((new_id, key[1]) if key[0] == old_id else key):
                    (retag(value) if key[0] == old_id else value)
                    for key, value in table.items()}

        def tagged(item: dict) -> dict:
            return {**item, "machine_id": new_id}

        self.runs = moved(self.runs, tagged)
        self.started = moved(self.started, tagged)
        self.attempts = moved(self.attempts, lambda n: n)
        for table in DETAIL_TABLES:
            self.detail[table] = moved(self.detail[table],
                                       lambda items: [tagged(r) for r in items])
        old_row = self.machines.pop(old_id, {"machine_id": old_id})
        self.machines[new_id] = normalise(with_adopted(row, old_row), MACHINE_COLUMNS)



# --------------------------------------------------------------------------------------------
# Reading


def _check_hdf5(path: Path) -> None:
    from hpcds1mpi.atomic import is_link_loop

    if is_link_loop(path):
        raise TelemetryError(f"{path}: a loop of symbolic links; give the telemetry file itself")
    if not path.exists():
        journal = journal_path(path)
        if journal.exists():  # a sweep that ended before its first snapshot
            raise TelemetryError(
                f"{path}: only a journal ({journal}): the sweep ended before its first "
                f"snapshot; rerun the sweep with --resume (or tune with the same --out) to "
                f"finish it (or delete {journal} to start afresh)")
        raise TelemetryError(f"{path}: no such telemetry file; check the path, or write one with "
                             f"hpcds1mpi sweep --out {path}")
    if path.is_dir():
        raise TelemetryError(f"{path}: is a directory; give the telemetry file (.h5) itself")
    if not path.is_file():  # a FIFO would block the read below
        raise TelemetryError(f"{path}: not a regular file; give the telemetry file (.h5) itself")
    try:
        with open(path, "rb") as fh:
            magic = fh.read(8)
    except OSError as exc:
        from hpcds1mpi.runtime.denied_access import denied_line, is_denied

        if is_denied(exc):  # s34 tester U5: whose it is and whom to ask
            raise TelemetryError(denied_line(path, "telemetry file")) from None
        raise TelemetryError(f"{path}: cannot read the telemetry file ({exc.strerror or exc}); "
                             "make it readable") from None
    if magic != b"\x89HDF\r\n\x1a\n":
        raise TelemetryError(f"{path}: not an HDF5 file; give a telemetry file written by hpcds1mpi sweep")


class DamagedTable(Exception):
    """A table that cannot be read back whole (a column missing, short, of another type)."""


def _read_table(f, table: str) -> list[dict]:
    """The rows of ``table`` in open file ``f``, whole or not at all.

    Every column the table lists (its ``columns`` attribute, written with it) and every key
    column must be there, one-dimensional, of its kind, as long as the others and stored as
    long as it says (:func:`.stored_rows.declared_rows`, checked before any is read).

    Raises:
        DamagedTable: anything less; a table read in part would lose its other rows for good
            at the next ``sweep --resume`` or ``merge`` (they rewrite the file).
        TableTooLarge: its rows would not fit in the available memory.
    """
    import h5py

    if table not in f:
        raise DamagedTable(f"no {table} table")
    group = f[table]
    if not isinstance(group, h5py.Group):
        raise DamagedTable(f"{table} is not a table")
    listed = [n.decode() if isinstance(n, bytes) else str(n)
              for n in group.attrs.get("columns", [])]
    names = list(dict.fromkeys([*(listed or group.keys()), *KEY_COLUMNS[table]]))
    missing = [name for name in names if name not in group]  # False too where unopenable
    if missing:
        more = f" and {len(missing) - 3} more" if len(missing) > 3 else ""
        raise DamagedTable(f"{table}: column {', '.join(missing[:3])}{more} missing or "
                           "unreadable")
    try:  # before reading: a header can declare more rows than the file stores
        rows = declared_rows(group, names, table)
    except UnbackedTable as exc:
        raise DamagedTable(str(exc)) from None
    kinds = dict(TABLES[table])
    data = {}
    for name in names:
        values = group[name][()]
        kind = kinds.get(name)
        if kind is not None and values.dtype.kind not in STORED_KINDS[kind]:
            raise DamagedTable(f"{table}/{name} holds {values.dtype} values, not {kind} values")
        if values.dtype.kind in ("O", "S"):
            values = [v.decode("utf-8") if isinstance(v, bytes) else str(v) for v in values]
        else:
            values = values.tolist()
        data[name] = values
    return [{k: v[i] for k, v in data.items()} for i in range(rows)]


def telemetry_path(value) -> Path:
    """``value`` as the path of a telemetry file.

    Raises:
        TelemetryError: not a str or os.PathLike (``read_runs(3)``, ``read_runs(None)``: a
            bare TypeError from deep inside, s37 tester P11).
    """
    if isinstance(value, (str, os.PathLike)):
        return Path(value)
    shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
    raise TelemetryError(f"a telemetry file is a path (str or os.PathLike), not "
                         f"{type(value).__name__} {shown}; give the .h5 file's path")


def attr_text(value):
    """A string attribute as ``str`` whichever HDF5 string form holds it: fixed-length ones
    (C tools, ``np.bytes_``) read as bytes, and had made a file's ``format`` read as missing
    (s37 tester P10); anything else as it is."""
    if isinstance(value, bytes):  # np.bytes_ too
        return value.decode("utf-8", errors="replace")
    return str(value) if isinstance(value, str) else value  # np.str_ -> str


def hdf5_lock_error(path, exc: OSError) -> TelemetryError | None:
    """The one-line error for HDF5's own file lock refusing ``path``, None for another error.

    The lock is busy (EAGAIN: another program, h5py or HDFView, holds the file open for
    writing): transient, :class:`~hpcds1mpi.errors.LockError`, exit 1 (s37 tester P6: it
    was exit 2, "fix the input", though the same command succeeds once the file is closed).
    Any other errno there (ENOSYS, ENOLCK: a file system without locks) fails the same way
    at every rerun: a :class:`TelemetryError` saying how to read it without locking."""
    import errno
    import re

    from hpcds1mpi.errors import LockError

    found = re.search(r"unable to lock file, errno = (\d+)", str(exc))
    if found is None:
        return None
    number = int(found.group(1))
    if number in (errno.EAGAIN, errno.EWOULDBLOCK, errno.EACCES):
        return LockError(f"{path}: another program has it open for writing (HDF5's file lock); "
                         "close it there (or wait for that program to finish), then retry")
    return TelemetryError(f"{path}: HDF5 cannot lock it ({os.strerror(number)}: the file system "
                          "has no file locks); rerun with HDF5_USE_FILE_LOCKING=FALSE set in the "
                          "environment")


def read_snapshot(path: str | os.PathLike) -> Store:
    """The HDF5 snapshot only (no journal). Checks the format, ``schema_version`` and the
    other file attributes (:mod:`hpcds1mpi.schemas.telemetry`) and that every table reads
    whole (:func:`_read_table`); a damaged file is one line, and nothing of it is returned."""
    import h5py

    from hpcds1mpi.schemas.telemetry import check_attrs

    path = telemetry_path(path)
    _check_hdf5(path)
    store = Store()
    try:
        with h5py.File(path, "r") as f:
            fmt = attr_text(f.attrs.get("format"))
            version = f.attrs.get("schema_version")
            if fmt != FORMAT_NAME or version is None:
                raise TelemetryError(
                    f"{path}: HDF5 but not an hpcds1mpi telemetry file (no format/schema_version)"
                )
            raw = dict(f.attrs.items())
            checked = check_attrs(raw, str(path))  # types: schemas/telemetry.py
            if checked.schema_version != SCHEMA_VERSION:
                raise TelemetryError(
                    f"{path}: telemetry schema_version {checked.schema_version}, this hpcds1mpi "
                    f"reads {SCHEMA_VERSION}; use a matching hpcds1mpi version"
                )
            store.attrs = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in raw.items()}
            for machine_id, run_id, starts in checked.attempts:
                store.attempts[(machine_id, run_id)] = starts
            _read_tables(f, store)
            store.foreign = find_foreign(f, TABLES)
    except DamagedTable as exc:
        raise TelemetryError(f"{path}: a table of the telemetry file is damaged ({exc}); "
                             f"{DAMAGED_FIX}") from None
    except TableTooLarge as exc:
        raise TelemetryError(f"{path}: too large to read here ({exc}); read it on a machine "
                             "(or in a job) with more memory") from None
    except OSError as exc:
        if (held := hdf5_lock_error(path, exc)) is not None:
            raise held from None
        raise TelemetryError(f"{path}: the telemetry file is damaged or cut short (unreadable "
                             f"HDF5: {exc}); {DAMAGED_FIX}") from None
    # h5py's errors for a corrupted file: RuntimeError ("bad symbol table node signature",
    # "addr overflow"), KeyError, ValueError, ... (a UnicodeDecodeError is a ValueError).
    except (RuntimeError, KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
        raise TelemetryError(f"{path}: a table of the telemetry file is damaged "
                             f"({type(exc).__name__}: {exc}); {DAMAGED_FIX}") from None
    return store


def _read_tables(f, store: Store) -> None:
    """Every table of open file ``f`` into ``store``; a key held twice is damage too (the
    writer keys its rows, so only a change outside it repeats one; reading would drop rows)."""
    runs = _read_table(f, "runs")
    for row in runs:
        store.add_run(row)
    machines = _read_table(f, "machines")
    for row in machines:
        store.add_machine(row)
    for table, rows, kept in (("runs", runs, store.runs), ("machines", machines, store.machines)):
        if len(kept) != len(rows):
            raise DamagedTable(f"{table}: {len(rows) - len(kept)} row(s) repeat the key of "
                               "another")
    for table in DETAIL_TABLES:
        for row in _read_table(f, table):
            key = (row["machine_id"], row["run_id"])
            store.detail[table].setdefault(key, []).append(normalise(row, TABLES[table]))
    store.provenance = _read_table(f, "provenance")
