"""The files beside a telemetry file ``t.h5`` while a sweep writes it, and reading through them.

- ``t.h5.journal``: an append-only, fsync'ed JSON-lines journal. Every event (a configuration
  started, a run finished, a machine seen) is one line, flushed to disk before the sweep goes on.
- ``t.h5.lock``: an ``fcntl`` lock held by the one writing process.
- ``.t.h5.fault-RUN-rRANK``: a note a failing rank leaves before it aborts the job.
- ``.t.h5.crash``: a note the watcher of a launch (the ``--launch`` supervisor) leaves when the
  launch died by itself (an exit code, a signal it was not sent), before it relaunches.

(Their names, shortened where a long ``t.h5`` would pass NAME_MAX: :mod:`.side_files`.) Each
is opened in place by :func:`hpcds1mpi.lock_files.open_side_file`, by readers too: one that is
a symbolic link, a FIFO or a folder is refused in one line, never followed nor waited on (s35
tester R1, R2); a note's temporary is always a new file.

:func:`load` folds the journal into what the snapshot holds, so a ``kill -9`` at any instant
loses no finished run: a journal line is either whole (counted) or the torn last line
(ignored). A whole line that is not a journal event (a tampered line) is a
:class:`~hpcds1mpi.errors.TelemetryError` naming the file and the line.

**The rule for an unfinished run** (a "start" line with no "run" line, and no writer alive),
applied by :func:`settle_unfinished` when the file is next read or opened:

1. a rank left a fault note for it (it failed alone, then aborted the job): ``failed``, with
   the note's text;
2. else the launch's watcher left a crash note (the launch died by itself while this run was
   on: a segfault, a rank's ``os._exit``, an abort): ``crashed``, with the note's evidence
   (exit code / signal);
3. else ``interrupted``: the sweep itself was stopped (``kill -9``, Ctrl-C, SIGTERM, the
   walltime) and nothing says the run was at fault.

``interrupted`` is uninformative (``config.UNINFORMATIVE_STATUSES``): ``--resume`` always runs
it again and the failure model never learns it; ``crashed`` is a measurement (the
configuration failed) and is retried only with ``--retry-crashed``. A sweep that records a
run's end itself (the external sweep sees its program's exit code; the watchdog its timeout)
does not go through this rule.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from pathlib import Path

from hpcds1mpi.errors import TelemetryError
from hpcds1mpi.lock_files import open_side_file, read_side_file

from .layout import Store, read_snapshot
from .side_files import (crash_note_path, fault_note_path, fault_notes, journal_path,
                         lock_path)
from .snapshot_write import fsync_dir


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
    """The whole lines of the journal beside ``path``; a torn last line is ignored.

    Raises:
        TelemetryError: a whole line is JSON but not a journal event (the file was changed
            by hand); the message names the file and the line.
    """
    jpath = journal_path(path)
    if not os.path.lexists(jpath):
        return []
    events = []
    try:
        data = read_side_file(jpath)
    except OSError as exc:
        from hpcds1mpi.runtime.denied_access import denied_line, is_denied

        if is_denied(exc):  # s34 tester U5: the cause said, and whom to ask
            raise TelemetryError(denied_line(jpath, "the telemetry file's journal")) from None
        raise TelemetryError(f"{jpath}: cannot read the journal ({exc.strerror})") from None
    for number, line in enumerate(data.split(b"\n")[:-1], start=1):  # after the last newline: torn
        if not line.strip():
            continue
        try:
            event = json.loads(line)
        except (ValueError, RecursionError):
            continue  # a line torn by a kill (a multi-page write cut short), then appended after
        problem = event_problem(event)
        if problem:
            raise TelemetryError(
                f"{jpath} line {number}: not a journal event ({problem}); the journal was "
                "changed outside hpcds1mpi: restore it, or move it aside to read the snapshot "
                "alone (the runs it holds since the last snapshot are then lost)")
        events.append(event)
    return events


def event_problem(event) -> str:
    """What is wrong with journal ``event`` ("" when it is a well-formed event).

    The schema (pydantic): ``event`` is one of start / run / machine / attrs; a start or run
    row names ``machine_id`` and ``run_id`` (strings) and, when present, an integer
    ``attempt`` >= 1 and a ``status`` from ``config.STATUSES``; a run's ``detail`` maps table
    names to lists of rows; a machine row names ``machine_id``; attrs is a mapping.
    """
    from pydantic import ValidationError

    try:
        _event_adapter().validate_python(event)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "line"
        return f"{where}: {first['msg']}"
    return ""


_ADAPTER = None


def _event_adapter():
    """The pydantic schema of one journal event (built once, on first use)."""
    global _ADAPTER
    if _ADAPTER is not None:
        return _ADAPTER
    from typing import Annotated, Literal, Optional, Union

    from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, TypeAdapter

    from hpcds1mpi.config import STATUSES

    class _Row(BaseModel):
        model_config = ConfigDict(extra="allow")
        machine_id: StrictStr
        run_id: StrictStr
        attempt: Optional[Annotated[StrictInt, Field(ge=1)]] = None
        status: Optional[Literal[STATUSES]] = None  # type: ignore[valid-type]

    class _Machine(BaseModel):
        model_config = ConfigDict(extra="allow")
        machine_id: StrictStr

    class _Start(BaseModel):
        event: Literal["start"]
        row: _Row

    class _Run(BaseModel):
        event: Literal["run"]
        row: _Row
        detail: dict[str, list[dict]] = {}

    class _MachineEvent(BaseModel):
        event: Literal["machine"]
        row: _Machine

    class _Attrs(BaseModel):
        event: Literal["attrs"]
        attrs: dict

    _ADAPTER = TypeAdapter(Annotated[Union[_Start, _Run, _MachineEvent, _Attrs],
                                     Field(discriminator="event")])
    return _ADAPTER


def writer_alive(path: str | os.PathLike) -> bool:
    """True while a process holds the write lock of ``path``."""
    lpath = lock_path(path)
    if not os.path.lexists(lpath):
        return False
    try:
        fd = open_side_file(lpath, os.O_RDONLY)
    except OSError:  # another user's 0600 lock (an older version's): the kernel's list says
        from hpcds1mpi.lock_files import holding_pid  # (s34 fixer FU2: read as "interrupted")

        return holding_pid(lpath) is not None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)
    return False


def write_fault_note(path: str | os.PathLike, run_id: str, rank: int, error: str) -> None:
    """Leave a note that ``rank`` failed alone in run ``run_id`` (before it aborts the job).

    Any rank may call this (it is a separate small file beside ``path``, not the telemetry
    itself); the next writer turns the run into ``failed`` with this text instead of ``crashed``.
    Needs the directory of ``path`` to be shared by all nodes (as the output of a job is).
    """
    note = fault_note_path(path, run_id, rank)
    tmp = note.with_name(note.name + ".tmp")
    with _new_file(tmp) as fh:
        json.dump({"run_id": run_id, "rank": rank, "error": error}, fh)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, note)
    fsync_dir(note)


def _new_file(tmp: Path):
    """``tmp`` made anew for writing (text): what was there, a link planted by another user
    included, is removed, never written through (s35 tester R1); an OSError as before."""
    tmp.unlink(missing_ok=True)
    return os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                             | os.O_CLOEXEC, 0o666), "w")


def read_fault_notes(path: str | os.PathLike) -> dict:
    """``run_id -> "rank R: error"`` from the fault notes beside ``path``."""
    path = Path(path)
    notes: dict = {}
    for note in fault_notes(path):
        if note.name.endswith(".tmp"):
            continue
        try:
            data = json.loads(read_side_file(note))
        except (OSError, ValueError):
            continue
        if not isinstance(data, dict) or not isinstance(data.get("run_id"), str):
            continue  # not a note of ours
        text = f"rank {data.get('rank')}: {data.get('error')}"
        notes[data["run_id"]] = notes[data["run_id"]] + "; " + text if data["run_id"] in notes else text
    return notes


def remove_fault_notes(path: str | os.PathLike) -> None:
    """Remove the fault notes beside ``path`` (their text is in the snapshot now)."""
    path = Path(path)
    for note in fault_notes(path):
        note.unlink(missing_ok=True)


def write_crash_note(path: str | os.PathLike, evidence: str) -> None:
    """Say that the launch writing ``path`` died by itself (``evidence``: what was seen, e.g.
    "the launch exited 139"); its unfinished run becomes ``crashed`` instead of
    ``interrupted``. Written by the process that watched the launch, after it ended."""
    note = crash_note_path(path)
    tmp = note.with_name(note.name + ".tmp")
    with _new_file(tmp) as fh:
        json.dump({"evidence": evidence}, fh)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, note)
    fsync_dir(note)


def read_crash_note(path: str | os.PathLike) -> str:
    """The evidence of the crash note beside ``path``; "" when there is none."""
    try:
        data = json.loads(read_side_file(crash_note_path(path)))
    except (OSError, ValueError):
        return ""
    return str(data.get("evidence", "")) if isinstance(data, dict) else ""


def remove_crash_note(path: str | os.PathLike) -> None:
    """Remove the crash note beside ``path`` (its evidence is in the snapshot now)."""
    crash_note_path(path).unlink(missing_ok=True)


def settle_unfinished(store: Store, fault_notes: dict | None = None, crash: str = ""
                      ) -> list[tuple[str, str]]:
    """Give every started-but-unfinished run of ``store`` its status by the module's rule.

    Args:
        store: the folded snapshot and journal.
        fault_notes: ``run_id -> text`` (:func:`read_fault_notes`): those runs are ``failed``.
        crash: the crash note's evidence (:func:`read_crash_note`): "" makes the other runs
            ``interrupted``, else ``crashed``.

    Returns:
        The keys that were unfinished.
    """
    keys = list(store.started)
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())
    for key in keys:
        start = dict(store.started[key])
        old = store.runs.get(key)
        if old is not None and old["status"] not in ("crashed", "interrupted"):
            store.started.pop(key)  # finished after all (a start re-journaled by a snapshot)
            continue
        when = time.strftime("%Y-%m-%d %H:%M:%S",
                             time.gmtime(_number(start.get("started_at"))))
        note = (fault_notes or {}).get(key[1])
        if note:
            start["status"], start["error"] = "failed", note
        elif crash:
            start["status"] = "crashed"
            start["error"] = (f"the launch died by itself while this configuration ran "
                              f"(started {when} UTC): {crash}")
        else:
            start["status"] = "interrupted"
            start["error"] = (f"the sweep was stopped while this configuration ran (started "
                              f"{when} UTC, noticed {stamp} UTC); sweep --resume (or tune with "
                              "the same --out) runs it again")
        start["finished_at"] = time.time()
        store.add_run(start, {})
    return keys


def _number(value) -> float:
    try:
        return float(value or 0)
    except (TypeError, ValueError):
        return 0.0


def load(path: str | os.PathLike, *, crashed: bool | None = None) -> Store:
    """Snapshot plus journal. Unfinished starts get their status by the module's rule
    (:func:`settle_unfinished`) when no writer is alive (``crashed=None``), always (True) or
    never (False)."""
    store = read_snapshot(path)
    for event in read_journal(path):
        store.apply(event)
    if crashed is None:
        crashed = not writer_alive(path)
    if crashed:
        settle_unfinished(store, read_fault_notes(path), read_crash_note(path))
    return store
