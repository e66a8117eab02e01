"""The names of the files beside a telemetry file ``t.h5`` (see :mod:`.journal`).

``t.h5.journal``, ``t.h5.lock``, ``.t.h5.crash``, ``.t.h5.fault-RUN-rRANK`` and a snapshot's
temporary ``.t.h5.tmp-PID``. Each is ``t.h5``'s name with something added, which a legal
name near 255 bytes had pushed past NAME_MAX: the sweep died on the journal ("file name too
long", s32 tester T1). Here the ``t.h5`` part is shortened when the longest name of its kind
would not fit (:func:`hpcds1mpi.writers.side_name`), the same way every time, so the writer,
the readers and the clean-up of a killed writer's files find one another's. A ``t.h5`` that
is a symbolic link has them beside its target, where the snapshot is written
(:func:`hpcds1mpi.output_paths.written_path`): beside the link's name, a sweep through the
link and one through the target had taken two locks and written at once (s33's left item).
"""

from __future__ import annotations

import glob
import os
from pathlib import Path

#: The longest ``RUN-rRANK`` of a fault note: a 16-hex run id and a rank of up to 10 digits.
_FAULT_LONGEST = f".fault-{'f' * 16}-r{'9' * 10}.tmp"
#: The longest snapshot temporary's end: a PID of up to 7 digits (Linux's pid_max).
_SNAPSHOT_LONGEST = f".tmp-{'9' * 7}"


def _beside(path: str | os.PathLike, before: str, after: str, longest: str | None = None
            ) -> Path:
    from hpcds1mpi.errors import OutputError
    from hpcds1mpi.output_paths import written_path
    from hpcds1mpi.writers import side_name

    path = Path(path)
    try:
        link = path.is_symlink()
    except OSError:  # a name past NAME_MAX, a folder closed to us: not a link we can follow
        link = False  # (the side name is still made, shortened: s32 tester T1)
    if link:
        try:
            path = written_path(path, "telemetry")
        except OutputError:  # a loop: nothing is written there; its readers say so
            pass
    return path.with_name(side_name(path.name, before, after, longest))


def journal_path(path: str | os.PathLike) -> Path:
    """The journal beside telemetry file ``path``."""
    return _beside(path, "", ".journal")


def lock_path(path: str | os.PathLike) -> Path:
    """The write lock beside telemetry file ``path``."""
    return _beside(path, "", ".lock")


def crash_note_path(path: str | os.PathLike) -> Path:
    """The crash note beside telemetry file ``path`` (its temporary adds ``.tmp``)."""
    return _beside(path, ".", ".crash", ".crash.tmp")


def fault_note_path(path: str | os.PathLike, run_id: str, rank: int) -> Path:
    """The note rank ``rank`` leaves when it failed alone in run ``run_id`` (a run id longer
    than a sweep's 16 hex digits is named by its hash: the note holds it whole)."""
    if len(os.fsencode(run_id)) > 16 or "/" in run_id:
        import hashlib

        run_id = hashlib.sha256(os.fsencode(run_id)).hexdigest()[:16]
    return _beside(path, ".", f".fault-{run_id}-r{rank}", _FAULT_LONGEST)


def fault_notes(path: str | os.PathLike) -> list[Path]:
    """Every fault note (and its temporary) beside ``path``, sorted."""
    return _matching(_beside(path, ".", ".fault-", _FAULT_LONGEST))


def snapshot_tmp_path(path: str | os.PathLike, pid: int | None = None) -> Path:
    """A snapshot's temporary, written by process ``pid`` (this one's by default)."""
    return _beside(path, ".", f".tmp-{os.getpid() if pid is None else pid}", _SNAPSHOT_LONGEST)


def snapshot_temporaries(path: str | os.PathLike) -> list[Path]:
    """Every snapshot temporary beside ``path``, sorted."""
    return _matching(_beside(path, ".", ".tmp-", _SNAPSHOT_LONGEST))


def _matching(prefix: Path) -> list[Path]:
    """The files in ``prefix``'s folder whose names start with its name."""
    return sorted(prefix.parent.glob(glob.escape(prefix.name) + "*"))
