"""Writing a telemetry snapshot: a :class:`~.layout.Store` to its HDF5 file, atomically.

:func:`write_snapshot` writes a temp file in the :mod:`.layout` (one dataset per column, the
file attributes), fsyncs it and replaces the file; :func:`fsync_dir` makes a rename durable
(the journal's fault notes use it too); :func:`storable` is a string HDF5 can store.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from .layout import (DETAIL_TABLES, FORMAT_NAME, MACHINE_COLUMNS, PROVENANCE_COLUMNS,
                     RUN_COLUMNS, SCHEMA_VERSION, TABLES, Store, column_default)
from .side_files import snapshot_temporaries, snapshot_tmp_path
from .units import column_units


def storable(value) -> str:
    """``value`` as a string HDF5 can store: without NUL bytes, which h5py refuses ("VLEN
    strings do not support embedded NULLs") and which would lose the whole snapshot (a
    program's error line with a NUL, Debian mpi4py's library version); a file name's bytes
    that are not UTF-8 (Python's surrogate escapes, which h5py cannot encode: a merge of
    ``t\\xff.h5`` had died with a traceback) written as ``\\xff``."""
    text = str(value).replace("\0", "")
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        try:
            return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        except UnicodeEncodeError:  # a lone surrogate that is no escaped byte
            return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def _write_table(f, name: str, rows: list[dict], columns: list[tuple[str, str]], compress: bool):
    import h5py
    import numpy as np

    group = f.create_group(name)
    group.attrs["columns"] = [n for n, _ in columns]
    kw = {"compression": "gzip", "compression_opts": 4, "shuffle": True} if compress and len(rows) > 64 else {}
    if not rows:
        # Chunked and extendible: h5repack -f GZIP (1.10) fails on an empty contiguous
        # dataset, whose chunk would have to be 0 long (s37 left).
        kw = {"chunks": (1,), "maxshape": (None,)}
    for col, kind in columns:
        values = [r.get(col, column_default(kind)) for r in rows]
        if kind == "str":
            arr = np.array([storable(v) for v in values], dtype=object)
            dataset = group.create_dataset(col, data=arr, dtype=h5py.string_dtype("utf-8"), **kw)
        elif kind == "int":
            dataset = group.create_dataset(col, data=np.array(values, dtype=np.int64), **kw)
        else:
            dataset = group.create_dataset(col, data=np.array(values, dtype=np.float64), **kw)
        dataset.attrs["units"] = column_units(name, col, kind)


def fsync_dir(path: Path) -> None:
    """fsync the directory holding ``path`` (a rename is durable only then)."""
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


def write_snapshot(path: str | os.PathLike, store: Store, *, compress: bool = True,
                   keep_foreign: bool = False) -> float:
    """Write ``store`` to ``path`` atomically (temp file, fsync, ``os.replace``); return seconds.
    With ``keep_foreign`` (the writer replacing the file its store was read from), what other
    programs added to the file (``store.foreign``) is copied over from the file replaced
    (:mod:`.foreign_content`: a rewrite had dropped it, s37 tester P1).
    A file replaced keeps its mode and group (:func:`hpcds1mpi.writers.keep_mode`); a ``path``
    that is a symbolic link is written at its target, the link kept
    (:func:`hpcds1mpi.output_paths.written_path`: the rename had replaced the link with a
    plain file and left the target without the new runs, s33 tester C3)."""
    import h5py

    from hpcds1mpi.output_paths import written_path
    from hpcds1mpi.writers import keep_mode

    start = time.perf_counter()
    if Path(path).is_symlink():
        path = written_path(path, "telemetry")
        _remove_dead_temporaries(path)  # a writer that never opened it (export) cleans too
    path = Path(path)
    tmp = snapshot_tmp_path(path)
    try:
        _write_file(h5py, tmp, store, compress, path if keep_foreign else None)
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        keep_mode(tmp, path)  # a private file stays private (s32 tester T8)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)  # whatever stopped it: no torn snapshot left behind
        raise
    fsync_dir(path)
    return time.perf_counter() - start


def _remove_dead_temporaries(path: Path) -> None:
    """Remove the snapshot temporaries beside ``path`` that a process no longer alive left
    (a ``kill -9``); a live writer's are kept."""
    for stale in snapshot_temporaries(path):
        pid = stale.name.rsplit("-", 1)[-1]
        if not pid.isdigit():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            stale.unlink(missing_ok=True)
        except OSError:
            pass  # another user's process


def _write_file(h5py, tmp: Path, store: Store, compress: bool, keep_from: Path | None) -> None:
    """``store`` in the :mod:`.layout` into the HDF5 file ``tmp``, and what other programs
    added to ``keep_from`` (:func:`.foreign_content.copy_foreign`)."""
    from .foreign_content import OWN_ROOT_ATTRS, copy_foreign, copy_root_attrs

    keys = list(store.runs)
    with h5py.File(tmp, "w") as f:
        f.attrs["format"] = FORMAT_NAME
        f.attrs["schema_version"] = SCHEMA_VERSION
        for k, v in store.attrs.items():
            if k in ("format", "schema_version", "attempts"):
                continue
            if getattr(v, "ndim", 0):  # another program's array: as it was (s37 tester P1;
                f.attrs[k] = v         # it had died of .item() on it)
                continue
            v = v.item() if hasattr(v, "item") else v
            f.attrs[k] = v if isinstance(v, (int, float)) else storable(v)
        f.attrs["attempts"] = json.dumps([[k[0], k[1], n] for k, n in store.attempts.items()])
        _write_table(f, "runs", [store.runs[k] for k in keys], RUN_COLUMNS, compress)
        _test_pause_mid_write()
        _write_table(f, "machines", list(store.machines.values()), MACHINE_COLUMNS, compress)
        for table in DETAIL_TABLES:
            rows = [r for k in keys for r in store.detail[table].get(k, [])]
            _write_table(f, table, rows, TABLES[table], compress)
        _write_table(f, "provenance", store.provenance, PROVENANCE_COLUMNS, compress)
        if keep_from is not None:
            copy_foreign(keep_from, f, store.foreign)
            others = set(store.attrs) - OWN_ROOT_ATTRS
            if others and keep_from.exists():  # as they were: their HDF5 types (reviewer R4)
                copy_root_attrs(keep_from, f, {k: store.attrs[k] for k in others})
