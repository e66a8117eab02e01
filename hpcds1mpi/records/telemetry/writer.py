"""The single writer of a telemetry file: journal every event, snapshot now and then.

The snapshot is rewritten now and then (and at the end) into a temporary file that is fsync'ed
and atomically ``os.replace``-d over ``t.h5``, so ``t.h5`` always opens; between snapshots the
journal (:mod:`.journal`) keeps every finished run. Keys: a run is identified by
``(machine_id, run_id)``; a later record for the same key replaces an earlier one (a retried
crashed run, a journal line already folded into the snapshot).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import time
from pathlib import Path

from hpcds1mpi.errors import HpcdsError, LockError, OutputError, TelemetryError, WriteError
from hpcds1mpi.lock_files import holder, open_side_file, owner_name, take_lock
from hpcds1mpi.writers import keep_mode

from .journal import (journal_line, journal_path, load, lock_path, read_crash_note,
                      read_fault_notes, read_journal, remove_crash_note, remove_fault_notes,
                      settle_unfinished, writer_alive)
from .foreign_content import refuse_unaligned
from .layout import Store, read_snapshot, telemetry_path
from .other_programs import identity, refuse_foreign
from .side_files import snapshot_temporaries, snapshot_tmp_path
from .snapshot_write import write_snapshot


#: errno values of an output that cannot be written at all (unlike a full disk, freeing space
#: does not help): a usage error, exit 2.
NOT_WRITABLE = {errno.EPERM: "Operation not permitted", errno.EACCES: "Permission denied",
                errno.EROFS: "Read-only file system"}


def storage_error(path, exc: Exception, runs: int | None = None,
                  kept: str | None = None) -> HpcdsError:
    """The one-line error for ``exc`` (an OS or h5py error) writing the telemetry ``path``:
    :class:`~hpcds1mpi.errors.OutputError` (exit 2) when the file or its folder cannot be
    written (EPERM, EACCES, EROFS), else :class:`~hpcds1mpi.errors.WriteError` (exit 1, a
    full disk or an I/O error). It ends with what is kept (``kept``, else :func:`kept_words`
    of ``runs``, the finished runs the writer holds; None: not known)."""
    import re

    # h5py names the errno inside its message, also as an OSError's strerror ("Can't close
    # file (file write failed: time = ..."): the reason is the system's own words
    found = re.search(r"error message = '([^']+)'", str(exc))
    reason = found.group(1) if found else getattr(exc, "strerror", None)
    if not reason:
        reason = (str(exc).splitlines() or [""])[0][:200]
    kept = kept or kept_words(path, runs)
    if getattr(exc, "errno", None) == errno.ENAMETOOLONG:  # no space to free: exit 2
        return OutputError(f"cannot write {path} ({reason}); choose a shorter --out; {kept}")
    if getattr(exc, "errno", None) in NOT_WRITABLE or reason in NOT_WRITABLE.values():
        return OutputError(f"cannot write {path} ({reason}); make it and its folder writable "
                           f"(permissions, chattr -i, a read-only mount) or choose another "
                           f"--out; {kept}")
    return WriteError(f"cannot write {path} ({reason}); free space or choose another --out; "
                      f"{kept}")


def kept_words(path, runs: int | None = None) -> str:
    """What a failed write of the telemetry ``path`` left, in words: a full disk at the start of
    a sweep had promised "every finished run is kept (rerun with --resume)" where no file was
    written and no run had finished."""
    path = Path(path)
    if not (_present(path) or _present(journal_path(path))):
        return "nothing was written"
    if runs == 0:
        return "no run had finished yet (rerun with --resume)"
    return "every finished run is kept (rerun with --resume)"


def _present(path: Path) -> bool:
    """Whether ``path`` exists; False for a name the system refuses: the error being worded
    must not raise one of its own (a rank 0 that did left the others waiting, s32 tester T1)."""
    try:
        return os.path.lexists(path)
    except (OSError, ValueError):
        return False


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
        all_or_nothing: a failure inside the ``with`` block, or of the final snapshot, changes
            nothing (:meth:`abandon`; a merge), where a sweep keeps what it recorded.
    """

    def __init__(self, path: str | os.PathLike, *, resume: bool = False,
                 snapshot_every_s: float = 30.0, attrs: dict | None = None,
                 compress: bool = True, all_or_nothing: bool = False):
        self.path = telemetry_path(path)  # a TypeError for a number (s37 tester P11)
        self.resume = resume
        self.all_or_nothing = all_or_nothing
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
        self._written: tuple | None = None  # the file as this writer last left it

    # -- lifecycle

    def validate(self) -> None:
        """Check the target without touching it (raises TelemetryError/LockError)."""
        from hpcds1mpi.atomic import is_link_loop

        if is_link_loop(self.path):  # exists() says False: the snapshot would replace the link
            raise TelemetryError(f"{self.path} is a loop of symbolic links; remove it or choose "
                                 "another --out")
        if self.path.exists():
            refuse_foreign(self.path)  # s33 tester B1: a program's own HDF5 file
            if not self.resume:
                raise TelemetryError(
                    f"{self.path} exists; pass --resume to continue it or choose another --out"
                )
            # a table's member no column of it would be rewritten out of line (s37 tester P1)
            refuse_unaligned(self.path, read_snapshot(self.path).foreign)
        elif journal_path(self.path).exists() and not self.resume:
            raise TelemetryError(
                f"{journal_path(self.path)} exists (a sweep into {self.path} ended before its "
                f"first snapshot); pass --resume to continue it, or delete "
                f"{journal_path(self.path)} to start afresh")
        if not self.path.parent.exists():
            raise TelemetryError(f"{self.path.parent}: no such directory for --out")
        if not self.path.parent.is_dir():
            raise TelemetryError(f"{self.path.parent} is not a directory; choose another --out")
        if writer_alive(self.path):
            raise LockError(self._lock_message(holder(lock_path(self.path))))
        _refuse_unreadable_journal(self.path)

    def _lock_message(self, owner: str) -> str:
        return (f"{self.path} is being written by another process ({owner}); wait for it to "
                "finish or write to another --out")

    def open(self) -> "TelemetryWriter":
        """Take the lock, fold snapshot, journal and notes in (settling unfinished runs by
        :mod:`.journal`'s rule), snapshot, start a fresh journal.

        Raises:
            TelemetryError: the target is not usable (see :meth:`validate`); LockError.
            WriteError: writing failed (a full disk); nothing was lost or changed.
        """
        self.validate()
        # another user's lock in a shared folder, live or left by a kill (s34 tester U2)
        fd = take_lock(lock_path(self.path), busy=lambda owner: LockError(
            self._lock_message(owner)), cannot_create=self._storage_error)
        if fd is None:  # a file system without locks: refused, as before
            raise LockError(self._lock_message("?"))
        self._lock_fd = fd
        try:
            self._fold_in()
        except BaseException as exc:
            self.release()
            if isinstance(exc, OSError):
                raise self._storage_error(exc) from exc
            raise
        return self

    def _fold_in(self) -> None:
        for stale in snapshot_temporaries(self.path):
            stale.unlink(missing_ok=True)  # a snapshot torn by a kill
        if self.path.exists():
            self.store = load(self.path, crashed=False)
        else:
            self.store = Store()
            for event in read_journal(self.path):  # killed before the first snapshot
                self.store.apply(event)
        self.crashed_on_open = settle_unfinished(self.store, read_fault_notes(self.path),
                                                 read_crash_note(self.path))
        self.store.attrs.setdefault("created_at", time.time())
        #: The file's plan (JSON) that this opening replaces, None when the same or new.
        self.replaced_plan = self.store.attrs.get("plan")
        if self.replaced_plan == self.new_attrs.get("plan"):
            self.replaced_plan = None
        keep_replaced_plan(self.store.attrs, self.new_attrs)
        self.store.attrs.update(self.new_attrs)
        if self.all_or_nothing:
            # journals nothing: file, journal and notes stay as they were until close()'s
            # snapshot (a refused merge had rewritten its existing --out: s42 tester F11)
            return
        self.snapshot()  # fold the journal in, then start a fresh one
        self._drop_folded_notes()
        journal = journal_path(self.path)
        if journal.exists() and journal.stat().st_uid != os.geteuid():
            journal.unlink()  # folded in: ours now, with the file's mode (s34 tester U2)
        # never through a link planted in a shared folder, never a FIFO (s35 tester R1, R2)
        self._journal_fd = open_side_file(
            journal, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o600)
        with contextlib.suppress(OSError):  # the journal holds the same runs as the file
            keep_mode(_by_descriptor(self._journal_fd, journal), self.path)
        os.fsync(self._journal_fd)

    def __enter__(self) -> "TelemetryWriter":
        return self.open()

    def __exit__(self, exc_type, *exc) -> None:
        if exc_type is not None and self.all_or_nothing:
            self.abandon()
        else:
            self.close()

    def close(self) -> None:
        """Final snapshot, then remove the journal and the lock. When the snapshot fails (a
        full disk) the journal stays whole, the lock is released and the error passes on
        (``all_or_nothing``: :meth:`abandon`)."""
        if self.store is None:
            return
        try:
            self.snapshot()
        except BaseException:
            if self.all_or_nothing:
                self.abandon()
            else:
                self.release()
            raise
        # The snapshot holds everything: the journal goes, then the lock.
        if self._journal_fd is not None:
            os.close(self._journal_fd)
            self._journal_fd = None
        if self.all_or_nothing:
            self._drop_folded_notes()  # left alone by open()
        journal_path(self.path).unlink(missing_ok=True)
        self.release()

    def _drop_folded_notes(self) -> None:
        """Remove the fault and crash notes a snapshot now holds the text of."""
        remove_fault_notes(self.path)
        remove_crash_note(self.path)

    def release(self) -> None:
        """Let go of the file without a snapshot: close the journal (it stays on disk, the
        next reader or ``--resume`` folds it in) and release the lock."""
        if self._journal_fd is not None:
            os.close(self._journal_fd)
            self._journal_fd = None
        if self._lock_fd is not None:
            fcntl.flock(self._lock_fd, fcntl.LOCK_UN)
            os.close(self._lock_fd)
            self._lock_fd = None
            with contextlib.suppress(OSError):  # another user's, in a sticky folder
                lock_path(self.path).unlink(missing_ok=True)
        self.store = None

    def abandon(self) -> None:
        """Let go without a snapshot, changing nothing: an ``all_or_nothing`` writer wrote
        nothing before its final snapshot, so file, journal and notes are as it found them (a
        failed merge into a new --out had left a telemetry file of 0 runs and a journal, a
        refused one had rewritten an existing --out). Only for a writer that journals nothing
        it must keep (a merge)."""
        if self.store is None:
            return
        if self._journal_fd is not None:
            os.close(self._journal_fd)
            self._journal_fd = None
        self.release()

    def _storage_error(self, exc: Exception) -> HpcdsError:
        if self.all_or_nothing:
            return storage_error(self.path, exc, kept="nothing was changed, rerun to write it")
        return storage_error(self.path, exc, None if self.store is None else len(self.store.runs))

    # -- events

    def _append(self, event: dict, durable: bool = True) -> None:
        start = time.perf_counter()
        line = journal_line(event)
        try:
            written = os.write(self._journal_fd, line)  # one write(2) of an O_APPEND fd
            if written != len(line):  # a full disk takes part of it: the line reads as torn
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            if durable:
                # A killed process loses nothing already written (it is in the page cache);
                # fsync also keeps finished runs through a node crash or power loss.
                os.fsync(self._journal_fd)
        except OSError as exc:
            raise self._storage_error(exc) from exc
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

    def relabel_machine(self, old_id: str, row: dict) -> None:
        """Move the runs of machine ``old_id`` to ``row``'s id and row
        (:meth:`~.layout.Store.relabel_machine`), then snapshot at once: the snapshot is the
        record of it (the journal is restarted after it, so it never holds both ids)."""
        self.store.relabel_machine(old_id, row)
        self.snapshot()

    def maybe_snapshot(self) -> None:
        if time.monotonic() - self._last_snapshot >= self.snapshot_every_s:
            self.snapshot()

    def snapshot(self) -> None:
        """Rewrite the HDF5 snapshot; the journal is truncated after (its events are in it)."""
        try:
            seconds = write_snapshot(self.path, self.store, compress=self.compress,
                                     keep_foreign=True)
        except (OSError, RuntimeError) as exc:  # h5py: RuntimeError "... errno = 28 ..."
            snapshot_tmp_path(self.path).unlink(missing_ok=True)  # the torn snapshot's space
            raise self._storage_error(exc) from exc
        self._written = identity(self.path)
        self.snapshot_seconds += seconds
        self.snapshots += 1
        self._last_snapshot = time.monotonic()
        if self._journal_fd is not None:
            # A kill between the replace and this truncate leaves events in both; keys dedupe.
            # Unfinished starts must survive the truncate, so re-journal them.
            os.ftruncate(self._journal_fd, 0)
            for row in self.store.started.values():
                os.write(self._journal_fd, journal_line({"event": "start", "row": row}))


    def written_by_another(self) -> str:
        """How the file changed since this writer last wrote it, in a word ("": it did not):
        a program that writes the ``--out`` file itself had destroyed every earlier run
        (s33 tester B1); the sweep checks after each launch."""
        if self.store is None or self._written is None:
            return ""
        now = identity(self.path)
        if now == self._written:
            return ""
        return "removed" if now is None else "replaced" if now[:2] != self._written[:2] \
            else "rewrote"

    def rescue(self, path: str | os.PathLike, row: dict | None = None) -> None:
        """Write what this writer holds (and the finished ``row``, if any) to the new file
        ``path`` instead, then let go of its own file without touching it (another program's
        now): its journal and lock are removed.

        Raises:
            WriteError / OutputError: ``path`` cannot be written (the journal is kept then).
        """
        if row is not None:
            key = (row["machine_id"], row["run_id"])
            self.store.apply({"event": "run", "detail": {}, "row": {
                **row, "attempt": row.get("attempt") or self.store.attempts.get(key, 1)}})
        try:
            write_snapshot(Path(path), self.store, compress=self.compress)
        except (OSError, RuntimeError) as exc:
            self.release()
            raise storage_error(path, exc, kept=f"the runs are still in the journal "
                                f"{journal_path(self.path)}") from exc
        if self._journal_fd is not None:
            os.close(self._journal_fd)
            self._journal_fd = None
        journal_path(self.path).unlink(missing_ok=True)
        self.release()


def _by_descriptor(fd: int, path: Path) -> str:
    """A name of open file ``fd`` that reaches it whatever ``path`` has become since (its mode
    set through ``/proc``, never through a link swapped in after the open: s35 tester R1)."""
    proc = f"/proc/self/fd/{fd}"
    return proc if os.path.exists(proc) else str(path)


def _refuse_unreadable_journal(path: Path) -> None:
    """A journal this user cannot read holds runs the file lacks: never dropped, named with
    its owner and the fix (s34 tester U2: a killed sweep's 0600 journal had read as "cannot
    write t.h5 (Permission denied)" to the group)."""
    journal = journal_path(path)
    if journal.exists() and not os.access(journal, os.R_OK):
        owner = owner_name(journal)
        raise TelemetryError(
            f"{journal}: the journal of {path} belongs to {owner} and this user cannot read "
            f"it (mode {journal.stat().st_mode & 0o777:04o}); it holds runs not yet in the "
            f"file: ask {owner} to 'chmod g+r {journal}' (or to rerun with --resume), then rerun")


#: File attribute holding, as a JSON list, every earlier plan a resumed sweep replaced.
EARLIER_PLANS = "earlier_plans"


def keep_replaced_plan(old: dict, new: dict) -> None:
    """Before ``new`` attributes replace ``old`` ones: a resumed sweep with another plan (runs
    added to a file, as the reference telemetry was extended) keeps the file's plan in
    :data:`EARLIER_PLANS` instead of losing the record of how its first runs were planned."""
    import json

    before, after = old.get("plan"), new.get("plan")
    if before is None or after is None or before == after:
        return
    try:
        earlier = json.loads(old.get(EARLIER_PLANS) or "[]")
    except ValueError:
        earlier = []
    earlier = earlier if isinstance(earlier, list) else []
    if before not in earlier:
        earlier.append(before)
    new[EARLIER_PLANS] = json.dumps(earlier)

