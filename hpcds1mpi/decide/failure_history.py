"""Jobs that failed on a partition, remembered so the next recommendation moves elsewhere.

A small JSON file (``~/.cache/hpcds1mpi/failures.json``, or ``HPCDS1MPI_HISTORY``), written
atomically by ``recommend --record-failure`` and read by every ``recommend``. Each record is a
read-modify-write under the file's lock (:mod:`hpcds1mpi.writers`): jobs that record their
failures at the same time all keep theirs.
"""

from __future__ import annotations

import errno
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from hpcds1mpi.errors import ConfigError, OutputError
from hpcds1mpi.runtime.zoned_times import stored_as_utc_text, stored_now
from hpcds1mpi.user_cache import cache_dir

#: Largest history file read (a few hundred bytes per failure).
MAX_BYTES = 16 << 20
#: How long a record waits for another process's (a write takes milliseconds).
LOCK_WAIT_S = 30.0


def default_history_path() -> Path | None:
    """``HPCDS1MPI_HISTORY`` when set, else ``failures.json`` in the user's cache; None when
    there is neither (no home): nothing to read, and recording a failure says what to set."""
    env = os.environ.get("HPCDS1MPI_HISTORY")
    if env:
        return Path(env)
    cache = cache_dir()
    return None if cache is None else cache / "failures.json"


def _denied(path: Path) -> str:
    """The line for a history this user may not read, with the variable that named it."""
    from hpcds1mpi.runtime.denied_access import denied_line

    line = denied_line(path, "failure history")
    if os.environ.get("HPCDS1MPI_HISTORY"):
        line += "; or set HPCDS1MPI_HISTORY to a file of your own"
    return line


@dataclass
class FailureHistory:
    """Jobs that failed on a partition, so the next recommendation moves elsewhere.

    A failure of ``workload`` at ``size`` on a partition rules that partition out for the same
    workload at that size and larger (a job that ran out of memory will not fit when bigger).
    """

    path: Path | None
    failures: list = field(default_factory=list)

    @classmethod
    def load(cls, path: str | os.PathLike | None = None) -> "FailureHistory":
        """Read the history at ``path`` (default: :func:`default_history_path`).

        Raises:
            ConfigError: the file exists but is not a readable history.
        """
        path = Path(path) if path else default_history_path()
        if path is None:
            return cls(None, [])
        unreadable = f"failure history {path} is unreadable"
        try:
            if path.exists() and not path.is_file():  # a FIFO or /dev/zero would block or fill RAM
                raise ConfigError(f"{unreadable} (not a regular file); give a JSON file")
            with open(path, "rb") as fh:
                text = fh.read(MAX_BYTES + 1)
            if len(text) > MAX_BYTES:
                raise ConfigError(f"{unreadable} (over {MAX_BYTES >> 20} MiB); fix or delete it")
            data = json.loads(text)
            failures = data.get("failures", [])
        except (FileNotFoundError, NotADirectoryError):  # none yet
            return cls(path, [])
        except PermissionError:  # not the file's fault: "fix or delete it" misled (s34 U5)
            raise ConfigError(_denied(path)) from None
        except (OSError, ValueError, AttributeError, RecursionError):
            raise ConfigError(f"{unreadable}; fix or delete it") from None
        if not isinstance(failures, list):
            raise ConfigError(f"{unreadable} ('failures' is not a list); fix or delete it")
        if data and "failures" not in data:  # a user's settings, a manifest: record replaced it
            raise ConfigError(f"{path} is not a failure history (a JSON object with no "
                              "'failures'); give a new file, or the one --record-failure wrote")
        failures = [f for f in failures if isinstance(f, dict)]
        for i, f in enumerate(failures):
            size = f.get("size", 0)
            if isinstance(size, bool) or not isinstance(size, int) or not 0 <= size <= 2**62:
                raise ConfigError(f"{unreadable} (entry {i}: size {size!r} is not a whole "
                                  "number); fix or delete it")
        return cls(path, failures)

    def record(self, workload: str, size: int, partition: str, cluster: str = "",
               status: str = "failed") -> None:
        """Add one failure to the file, keeping every failure recorded there since :meth:`load`
        (another job's ``--record-failure``).

        Raises:
            OutputError: (exit 2) the file's folder cannot be written.
            LockError: (exit 1) another process held the file for :data:`LOCK_WAIT_S`.
            ConfigError: the file became unreadable.
        """
        from hpcds1mpi.atomic import write_text
        from hpcds1mpi.writers import output_lock

        entry = {"workload": workload, "size": int(size), "partition": partition,
                 "cluster": cluster, "status": status,
                 "time": stored_now()}  # with its zone (s35 tester T7)
        self._prepare_folder()
        with output_lock(self.path, "failure history", "HPCDS1MPI_HISTORY", LOCK_WAIT_S):
            self.failures = [*FailureHistory.load(self.path).failures, entry]
            # Whole or not at all, under a name no other file has: a reader never sees half.
            write_text(self.path, json.dumps({"version": 1, "failures": self.failures},
                                             indent=1), "failure history")

    def forget(self, workload: str, partition: str, cluster: str = "") -> int:
        """Remove every recorded failure of ``workload`` on ``partition`` (of ``cluster``, or
        of any when it is ""), keeping other processes' records; how many were removed.

        Raises:
            OutputError, LockError, ConfigError: as :meth:`record`.
        """
        from hpcds1mpi.atomic import write_text
        from hpcds1mpi.writers import output_lock

        def matches(f: dict) -> bool:
            return (f.get("workload") == workload and f.get("partition") == partition
                    and (not cluster or not f.get("cluster") or f.get("cluster") == cluster))

        if self.path is None or not self.path.exists():
            self.failures = [f for f in self.failures if not matches(f)]
            return 0
        self._prepare_folder()
        with output_lock(self.path, "failure history", "HPCDS1MPI_HISTORY", LOCK_WAIT_S):
            now = FailureHistory.load(self.path).failures
            self.failures = [f for f in now if not matches(f)]
            if len(self.failures) != len(now):
                write_text(self.path, json.dumps({"version": 1, "failures": self.failures},
                                                 indent=1), "failure history")
        return len(now) - len(self.failures)

    def _prepare_folder(self) -> None:
        """Create the file's folder; a folder that cannot be written is one line."""
        hint = ("set HPCDS1MPI_HISTORY to a file in a writable folder" if
                os.environ.get("HPCDS1MPI_HISTORY") else "set HPCDS1MPI_HISTORY (a file) or "
                "HPCDS1MPI_CACHE (a folder) to a writable place")
        if self.path is None:
            home = os.environ.get("HOME")
            raise OutputError("no folder for the failure history: " + (
                f"HOME={home} is not an existing folder" if home else "there is no home folder")
                + f"; {hint}")
        folder = self.path.parent
        self._refuse_bundle_folder()
        try:
            folder.mkdir(parents=True, exist_ok=True)
            if not os.access(folder, os.W_OK | os.X_OK):  # root too, on a read-only mount
                read_only = os.statvfs(folder).f_flag & os.ST_RDONLY
                raise OSError(errno.EROFS if read_only else errno.EACCES,
                              "Read-only file system" if read_only else "Permission denied")
        except OSError as exc:
            raise OutputError(f"{folder}: cannot write the failure history "
                              f"({exc.strerror or exc}); {hint}") from None

    def _refuse_bundle_folder(self) -> None:
        """A history written into a model bundle's folder makes it no bundle: ``learn`` and
        ``train --force`` then refuse it (s47 tester M10)."""
        from hpcds1mpi.surrogates.bundle_files import is_bundle

        for folder in Path(os.path.realpath(self.path)).parents:
            if is_bundle(folder):
                raise OutputError(f"{self.path} is inside the model bundle {folder}: a failure "
                                  "history there would break it; give --failure-history (or "
                                  "HPCDS1MPI_HISTORY) a file outside it")

    def failed_on(self, workload: str, size: int, partition: str, cluster: str = ""
                  ) -> dict | None:
        """The latest failure that rules ``partition`` out for this job, else None; its
        ``time`` as shown, in UTC and named so (one stored with no zone is local time)."""
        for f in reversed(self.failures):
            if (f.get("workload") == workload and f.get("partition") == partition
                    and (not cluster or not f.get("cluster") or f.get("cluster") == cluster)
                    and int(f.get("size", 0)) <= int(size)):
                when = f.get("time")
                return dict(f, time=stored_as_utc_text(when)) if isinstance(when, str) else f
        return None
