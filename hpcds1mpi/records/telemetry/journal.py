"""The files beside a telemetry file ``t.h5`` while a sweep writes it, and reading through them.

- ``t.h5.journal``: an append-only, fsync'ed JSON-lines journal. Every event (a configuration
  started, a run finished, a machine seen) is one line, flushed to disk before the sweep goes on.
- ``t.h5.lock``: an ``fcntl`` lock held by the one writing process.
- ``.t.h5.fault-RUN-rRANK``: a note a failing rank leaves before it aborts the job.

:func:`load` folds the journal into what the snapshot holds, so a ``kill -9`` at any instant
loses no finished run: a journal line is either whole (counted) or the torn last line
(ignored). A configuration whose "start" line has no "run" line and whose writer is gone is
reported as ``crashed``.
"""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path

from .layout import Store, fsync_dir, read_snapshot


def journal_path(path: str | os.PathLike) -> Path:
    """The journal beside telemetry file ``path``."""
    return Path(str(path) + ".journal")


def lock_path(path: str | os.PathLike) -> Path:
    """The write lock beside telemetry file ``path``."""
    return Path(str(path) + ".lock")


def journal_line(event: dict) -> bytes:
    """One journal line of ``event`` (numpy scalars and sets written as plain JSON)."""
    return (json.dumps(event, default=_json_default, allow_nan=True) + "\n").encode("utf-8")


def _json_default(value):
    if hasattr(value, "item"):
        return value.item()
    if isinstance(value, (set, tuple)):
        return list(value)
    return str(value)



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
    fsync_dir(note)


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
    """Remove the fault notes beside ``path`` (their text is in the snapshot now)."""
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

