"""The telemetry store: the one module that knows the HDF5 layout (see docs/telemetry.md).

A telemetry file ``t.h5`` is an HDF5 snapshot plus two files beside it while a sweep writes:

- ``t.h5.journal``: an append-only, fsync'ed JSON-lines journal. Every event (a configuration
  started, a run finished, a machine seen) is one line, flushed to disk before the sweep goes on.
- ``t.h5.lock``: an ``fcntl`` lock held by the one writing process.

The snapshot is rewritten now and then (and at the end) into a temporary file that is fsync'ed
and atomically ``os.replace``-d over ``t.h5``, so ``t.h5`` always opens. Readers fold the journal
into what the snapshot holds, so a ``kill -9`` at any instant loses no finished run: a journal
line is either whole (counted) or the torn last line (ignored). A configuration whose "start"
line has no "run" line and whose writer is gone is reported as ``crashed``.

Keys: a run is identified by ``(machine_id, run_id)``; a later record for the same key replaces
an earlier one (a retried crashed run, a journal line already folded into the snapshot).
"""

from __future__ import annotations

import fcntl
import json
import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from hpcds1mpi.errors import LockError, TelemetryError

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
]
MACHINE_COLUMNS: list[tuple[str, str]] = [
    ("machine_id", "str"), ("hostnames", "str"), ("partition", "str"), ("cpu_model", "str"),
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


def journal_path(path: str | os.PathLike) -> Path:
    return Path(str(path) + ".journal")


def lock_path(path: str | os.PathLike) -> Path:
    return Path(str(path) + ".lock")


def _default(kind: str):
    return {"str": "", "int": -1, "float": math.nan}[kind]


def normalise(row: dict, columns: list[tuple[str, str]]) -> dict:
    """``row`` with every column present and cast to its kind (missing -> "", -1 or NaN)."""
    out = {}
    for name, kind in columns:
        value = row.get(name)
        if value is None:
            out[name] = _default(kind)
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


def _json_default(value):
    if hasattr(value, "item"):
        return value.item()
    if isinstance(value, (set, tuple)):
        return list(value)
    return str(value)


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
    """

    runs: dict = field(default_factory=dict)
    machines: dict = field(default_factory=dict)
    detail: dict = field(default_factory=lambda: {t: {} for t in DETAIL_TABLES})
    provenance: list = field(default_factory=list)
    started: dict = field(default_factory=dict)
    attempts: dict = field(default_factory=dict)
    attrs: dict = field(default_factory=dict)

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
        when a rank left a fault note for it, see :func:`write_fault_note`); return the keys."""
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


# --------------------------------------------------------------------------------------------
# Reading


def _check_hdf5(path: Path) -> None:
    if not path.exists():
        raise TelemetryError(f"{path}: no such telemetry file")
    with open(path, "rb") as fh:
        magic = fh.read(8)
    if magic != b"\x89HDF\r\n\x1a\n":
        raise TelemetryError(f"{path}: not an HDF5 file; give a telemetry file written by hpcds1mpi sweep")


def _read_table(group, columns: list[tuple[str, str]]) -> list[dict]:
    names = [n for n in group.attrs.get("columns", [])] or list(group.keys())
    if not names:
        return []
    data = {}
    for name in names:
        if name not in group:
            continue
        values = group[name][()]
        if values.dtype.kind in ("O", "S"):
            values = [v.decode("utf-8") if isinstance(v, bytes) else str(v) for v in values]
        else:
            values = values.tolist()
        data[name] = values
    n = len(next(iter(data.values()))) if data else 0
    return [{k: v[i] for k, v in data.items()} for i in range(n)]


def read_snapshot(path: str | os.PathLike) -> Store:
    """The HDF5 snapshot only (no journal). Checks the format and ``schema_version``."""
    import h5py

    path = Path(path)
    _check_hdf5(path)
    store = Store()
    try:
        with h5py.File(path, "r") as f:
            fmt = f.attrs.get("format")
            version = f.attrs.get("schema_version")
            if fmt != FORMAT_NAME or version is None:
                raise TelemetryError(
                    f"{path}: HDF5 but not an hpcds1mpi telemetry file (no format/schema_version)"
                )
            if int(version) != SCHEMA_VERSION:
                raise TelemetryError(
                    f"{path}: telemetry schema_version {int(version)}, this hpcds1mpi reads "
                    f"{SCHEMA_VERSION}; use a matching hpcds1mpi version"
                )
            store.attrs = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in f.attrs.items()}
            if "runs" in f:
                for row in _read_table(f["runs"], RUN_COLUMNS):
                    store.add_run(row)
            if "machines" in f:
                for row in _read_table(f["machines"], MACHINE_COLUMNS):
                    store.add_machine(row)
            for table in DETAIL_TABLES:
                if table in f:
                    for row in _read_table(f[table], TABLES[table]):
                        key = (row["machine_id"], row["run_id"])
                        store.detail[table].setdefault(key, []).append(normalise(row, TABLES[table]))
            if "provenance" in f:
                store.provenance = _read_table(f["provenance"], PROVENANCE_COLUMNS)
            if "attempts" in f.attrs:
                for item in json.loads(f.attrs["attempts"]):
                    store.attempts[(item[0], item[1])] = int(item[2])
    except OSError as exc:
        raise TelemetryError(f"{path}: unreadable HDF5 ({exc})") from None
    return store


def read_journal(path: str | os.PathLike) -> list[dict]:
    """The whole lines of the journal beside ``path``; a torn last line is ignored."""
    jpath = journal_path(path)
    if not jpath.exists():
        return []
    events = []
    with open(jpath, "rb") as fh:
        data = fh.read()
    for line in data.split(b"\n")[:-1]:  # the piece after the last newline is torn or empty
        if not line.strip():
            continue
        try:
            events.append(json.loads(line))
        except ValueError:
            continue  # a line torn by a kill, then appended after: skip it
    return events


def writer_alive(path: str | os.PathLike) -> bool:
    """True while a process holds the write lock of ``path``."""
    lpath = lock_path(path)
    if not lpath.exists():
        return False
    try:
        fd = os.open(lpath, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)
    return False


def _fault_glob(path: Path) -> str:
    return f".{path.name}.fault-*"


def write_fault_note(path: str | os.PathLike, run_id: str, rank: int, error: str) -> None:
    """Leave a note that ``rank`` failed alone in run ``run_id`` (before it aborts the job).

    Any rank may call this (it is a separate small file beside ``path``, not the telemetry
    itself); the next writer turns the run into ``failed`` with this text instead of ``crashed``.
    Needs the directory of ``path`` to be shared by all nodes (as the output of a job is).
    """
    path = Path(path)
    note = path.with_name(f".{path.name}.fault-{run_id}-r{rank}")
    tmp = note.with_name(note.name + ".tmp")
    with open(tmp, "w") as fh:
        json.dump({"run_id": run_id, "rank": rank, "error": error}, fh)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, note)
    _fsync_dir(note)


def read_fault_notes(path: str | os.PathLike) -> dict:
    """``run_id -> "rank R: error"`` from the fault notes beside ``path``."""
    path = Path(path)
    notes: dict = {}
    for note in sorted(path.parent.glob(_fault_glob(path))):
        if note.name.endswith(".tmp"):
            continue
        try:
            data = json.loads(note.read_text())
        except (OSError, ValueError):
            continue
        text = f"rank {data.get('rank')}: {data.get('error')}"
        notes[data["run_id"]] = notes[data["run_id"]] + "; " + text if data["run_id"] in notes else text
    return notes


def remove_fault_notes(path: str | os.PathLike) -> None:
    path = Path(path)
    for note in path.parent.glob(_fault_glob(path)):
        note.unlink(missing_ok=True)


def load(path: str | os.PathLike, *, crashed: bool | None = None) -> Store:
    """Snapshot plus journal. Unfinished starts become ``crashed`` rows when no writer is alive
    (``crashed=None``), always (True) or never (False)."""
    store = read_snapshot(path)
    for event in read_journal(path):
        store.apply(event)
    if crashed is None:
        crashed = not writer_alive(path)
    if crashed:
        store.mark_crashed(read_fault_notes(path))
    return store


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


# --------------------------------------------------------------------------------------------
# Writing


def _write_table(f, name: str, rows: list[dict], columns: list[tuple[str, str]], compress: bool):
    import h5py
    import numpy as np

    group = f.create_group(name)
    group.attrs["columns"] = [n for n, _ in columns]
    kw = {"compression": "gzip", "compression_opts": 4, "shuffle": True} if compress and len(rows) > 64 else {}
    for col, kind in columns:
        values = [r.get(col, _default(kind)) for r in rows]
        if kind == "str":
            arr = np.array([str(v) for v in values], dtype=object)
            group.create_dataset(col, data=arr, dtype=h5py.string_dtype("utf-8"), **kw)
        elif kind == "int":
            group.create_dataset(col, data=np.array(values, dtype=np.int64), **kw)
        else:
            group.create_dataset(col, data=np.array(values, dtype=np.float64), **kw)


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path.parent if str(path.parent) else ".", os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _test_pause_mid_write() -> None:
    """Fault-injection hook for the kill tests: ``HPCDS1MPI_TEST_SNAPSHOT_PAUSE=S`` holds a
    snapshot half-written for S seconds, so a test's SIGKILL reliably lands inside the write."""
    pause = os.environ.get("HPCDS1MPI_TEST_SNAPSHOT_PAUSE")
    if pause:
        time.sleep(float(pause))


def write_snapshot(path: str | os.PathLike, store: Store, *, compress: bool = True) -> float:
    """Write ``store`` to ``path`` atomically (temp file, fsync, ``os.replace``); return seconds."""
    import h5py

    start = time.perf_counter()
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    keys = list(store.runs)
    with h5py.File(tmp, "w") as f:
        f.attrs["format"] = FORMAT_NAME
        f.attrs["schema_version"] = SCHEMA_VERSION
        for k, v in store.attrs.items():
            if k in ("format", "schema_version", "attempts"):
                continue
            v = v.item() if hasattr(v, "item") else v
            f.attrs[k] = v if isinstance(v, (int, float)) else str(v)
        f.attrs["attempts"] = json.dumps([[k[0], k[1], n] for k, n in store.attempts.items()])
        _write_table(f, "runs", [store.runs[k] for k in keys], RUN_COLUMNS, compress)
        _test_pause_mid_write()
        _write_table(f, "machines", list(store.machines.values()), MACHINE_COLUMNS, compress)
        for table in DETAIL_TABLES:
            rows = [r for k in keys for r in store.detail[table].get(k, [])]
            _write_table(f, table, rows, TABLES[table], compress)
        _write_table(f, "provenance", store.provenance, PROVENANCE_COLUMNS, compress)
    fd = os.open(tmp, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    _fsync_dir(path)
    return time.perf_counter() - start


class TelemetryWriter:
    """The single writer of one telemetry file (rank 0 of a sweep, or a merge).

    Usage::

        with TelemetryWriter(path, resume=True) as w:
            w.start(row)             # journal: configuration started
            w.record(row, detail)    # journal: run finished (fsync'ed)
        # close() writes the final snapshot and removes the journal

    Args:
        path: the ``.h5`` file.
        resume: continue an existing file (a missing one starts fresh); without it an existing
            file is refused.
        snapshot_every_s: rewrite the HDF5 snapshot at most this often (the journal keeps every
            event safe in between).
        attrs: file attributes to store (e.g. the sweep plan).
    """

    def __init__(self, path: str | os.PathLike, *, resume: bool = False,
                 snapshot_every_s: float = 30.0, attrs: dict | None = None,
                 compress: bool = True):
        self.path = Path(path)
        self.resume = resume
        self.snapshot_every_s = snapshot_every_s
        self.compress = compress
        self.new_attrs = dict(attrs or {})
        self.store: Store | None = None
        self._lock_fd: int | None = None
        self._journal_fd: int | None = None
        self._last_snapshot = 0.0
        self.journal_seconds = 0.0
        self.snapshot_seconds = 0.0
        self.journal_writes = 0
        self.snapshots = 0
        self.crashed_on_open: list = []

    # -- lifecycle

    def validate(self) -> None:
        """Check the target without touching it (raises TelemetryError/LockError)."""
        if self.path.exists():
            if not self.resume:
                raise TelemetryError(
                    f"{self.path} exists; pass --resume to continue it or choose another --out"
                )
            read_snapshot(self.path)
        elif journal_path(self.path).exists() and not self.resume:
            raise TelemetryError(f"{journal_path(self.path)} exists; pass --resume to continue it")
        if not self.path.parent.exists():
            raise TelemetryError(f"{self.path.parent}: no such directory for --out")
        if writer_alive(self.path):
            raise LockError(self._lock_message())

    def _lock_message(self) -> str:
        try:
            owner = lock_path(self.path).read_text().strip()
        except OSError:
            owner = "?"
        return (f"{self.path} is being written by another process ({owner}); wait for it to "
                "finish or write to another --out")

    def open(self) -> "TelemetryWriter":
        self.validate()
        fd = os.open(lock_path(self.path), os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise LockError(self._lock_message()) from None
        self._lock_fd = fd
        os.ftruncate(fd, 0)
        os.write(fd, f"pid {os.getpid()} on {os.uname().nodename}\n".encode())
        for stale in self.path.parent.glob(f".{self.path.name}.tmp-*"):
            stale.unlink(missing_ok=True)  # a snapshot torn by a kill
        if self.path.exists():
            self.store = load(self.path, crashed=False)
        else:
            self.store = Store()
            for event in read_journal(self.path):  # killed before the first snapshot
                self.store.apply(event)
        self.crashed_on_open = self.store.mark_crashed(read_fault_notes(self.path))
        self.store.attrs.setdefault("created_at", time.time())
        self.store.attrs.update(self.new_attrs)
        self.snapshot()  # fold the journal in, then start a fresh one
        remove_fault_notes(self.path)  # their text is in the snapshot now
        self._journal_fd = os.open(journal_path(self.path),
                                   os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o644)
        os.fsync(self._journal_fd)
        return self

    def __enter__(self) -> "TelemetryWriter":
        return self.open()

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        if self.store is None:
            return
        self.snapshot()
        if self._journal_fd is not None:
            os.close(self._journal_fd)
            self._journal_fd = None
        journal_path(self.path).unlink(missing_ok=True)
        if self._lock_fd is not None:
            fcntl.flock(self._lock_fd, fcntl.LOCK_UN)
            os.close(self._lock_fd)
            self._lock_fd = None
            lock_path(self.path).unlink(missing_ok=True)
        self.store = None

    # -- events

    def _append(self, event: dict, durable: bool = True) -> None:
        start = time.perf_counter()
        line = (json.dumps(event, default=_json_default, allow_nan=True) + "\n").encode("utf-8")
        os.write(self._journal_fd, line)  # one write(2) of an O_APPEND fd
        if durable:
            # A killed process loses nothing already written (it is in the page cache);
            # fsync also keeps finished runs through a node crash or power loss.
            os.fsync(self._journal_fd)
        self.store.apply(event)
        self.journal_seconds += time.perf_counter() - start
        self.journal_writes += 1

    def start(self, row: dict) -> int:
        """Journal that a configuration starts; returns its attempt number."""
        key = (row["machine_id"], row["run_id"])
        attempt = self.store.attempts.get(key, 0) + 1
        row = dict(row, attempt=attempt, started_at=row.get("started_at") or time.time())
        # Not fsync'ed: a start lost to a node crash only means the run is redone, not lost.
        self._append({"event": "start", "row": row}, durable=False)
        return attempt

    def record(self, row: dict, detail: dict | None = None) -> None:
        """Journal a finished run (any status) with its per-repeat / per-rank detail."""
        key = (row["machine_id"], row["run_id"])
        row = dict(row)
        row.setdefault("attempt", self.store.attempts.get(key, 1))
        self._append({"event": "run", "row": row, "detail": detail or {}})
        self.maybe_snapshot()

    def machine(self, row: dict) -> None:
        if row["machine_id"] not in self.store.machines:
            self._append({"event": "machine", "row": row})

    def maybe_snapshot(self) -> None:
        if time.monotonic() - self._last_snapshot >= self.snapshot_every_s:
            self.snapshot()

    def snapshot(self) -> None:
        """Rewrite the HDF5 snapshot; the journal is truncated after (its events are in it)."""
        seconds = write_snapshot(self.path, self.store, compress=self.compress)
        self.snapshot_seconds += seconds
        self.snapshots += 1
        self._last_snapshot = time.monotonic()
        if self._journal_fd is not None:
            # A kill between the replace and this truncate leaves events in both; keys dedupe.
            # Unfinished starts must survive the truncate, so re-journal them.
            os.ftruncate(self._journal_fd, 0)
            for row in self.store.started.values():
                line = (json.dumps({"event": "start", "row": row}, default=_json_default) + "\n")
                os.write(self._journal_fd, line.encode())
            os.fsync(self._journal_fd)


# --------------------------------------------------------------------------------------------
# Merge


def merge(sources: list[str | os.PathLike], out: str | os.PathLike) -> dict:
    """Merge telemetry shards into ``out`` (created, or extended), idempotently.

    Rows are keyed by ``(machine_id, run_id)``; a key present twice keeps the finished record
    over a crashed one, then the later ``finished_at``. Each row keeps ``source_file`` (the shard
    it came from, unless it already had one); machines and detail tables travel along.

    Returns:
        ``{"added": n, "replaced": n, "kept": n, "rows": total}``.
    """
    stores = [(Path(s), load(s)) for s in sources]  # read (and check) everything first
    writer = TelemetryWriter(out, resume=True)
    counts = {"added": 0, "replaced": 0, "kept": 0}
    with writer:
        store = writer.store
        for src, shard in stores:
            label = src.name
            for key, row in shard.runs.items():
                row = dict(row)
                if not row.get("source_file"):
                    row["source_file"] = label
                old = store.runs.get(key)
                if old is None:
                    counts["added"] += 1
                elif _better(row, old):
                    counts["replaced"] += 1
                else:
                    counts["kept"] += 1
                    continue
                store.add_run(row, {t: shard.detail[t].get(key, []) for t in DETAIL_TABLES})
            for mid, mrow in shard.machines.items():
                if mid not in store.machines:
                    store.add_machine(dict(mrow, source_file=mrow.get("source_file") or label))
            if not any(p["source_file"] == label and p["rows"] == len(shard.runs)
                       for p in store.provenance):
                store.provenance.append({"source_file": label, "rows": len(shard.runs),
                                         "merged_at": time.time()})
            for key, n in shard.attempts.items():
                store.attempts[key] = max(store.attempts.get(key, 0), n)
    counts["rows"] = len(load(out).runs)
    return counts


def _better(new: dict, old: dict) -> bool:
    new_crash, old_crash = new["status"] == "crashed", old["status"] == "crashed"
    if new_crash != old_crash:
        return old_crash
    return float(new.get("finished_at") or 0) > float(old.get("finished_at") or 0)


def append(path: str | os.PathLike, rows: list[dict], detail: list[dict] | None = None) -> None:
    """Append finished runs (dicts with the run columns) to ``path``, creating it if needed."""
    with TelemetryWriter(path, resume=True) as writer:
        for i, row in enumerate(rows):
            writer.record(row, (detail or [None] * len(rows))[i])
