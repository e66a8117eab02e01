"""Jobs that failed on a partition, remembered so the next recommendation moves elsewhere.

A small JSON file (``~/.cache/hpcds1mpi/failures.json``, or ``HPCDS1MPI_HISTORY``), written
atomically by ``recommend --record-failure`` and read by every ``recommend``.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from hpcds1mpi.decide.guard import cache_dir
from hpcds1mpi.errors import ConfigError


def default_history_path() -> Path:
    """``HPCDS1MPI_HISTORY`` when set, else ``failures.json`` in the user's cache."""
    env = os.environ.get("HPCDS1MPI_HISTORY")
    if env:
        return Path(env)
    return cache_dir() / "failures.json"


@dataclass
class FailureHistory:
    """Jobs that failed on a partition, so the next recommendation moves elsewhere.

    A failure of ``workload`` at ``size`` on a partition rules that partition out for the same
    workload at that size and larger (a job that ran out of memory will not fit when bigger).
    """

    path: Path
    failures: list = field(default_factory=list)

    @classmethod
    def load(cls, path: str | os.PathLike | None = None) -> "FailureHistory":
        """Read the history at ``path`` (default: :func:`default_history_path`).

        Raises:
            ConfigError: the file exists but is not a readable history.
        """
        path = Path(path) if path else default_history_path()
        try:
            data = json.loads(path.read_text())
            failures = [f for f in data.get("failures", []) if isinstance(f, dict)]
        except FileNotFoundError:
            failures = []
        except (OSError, ValueError, AttributeError):
            raise ConfigError(f"failure history {path} is unreadable; fix or delete it") from None
        return cls(path, failures)

    def record(self, workload: str, size: int, partition: str, cluster: str = "",
               status: str = "failed") -> None:
        """Add one failure and write the file."""
        self.failures.append({"workload": workload, "size": int(size), "partition": partition,
                              "cluster": cluster, "status": status,
                              "time": time.strftime("%Y-%m-%dT%H:%M:%S")})
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"version": 1, "failures": self.failures}, indent=1))
        os.replace(tmp, self.path)  # atomic: a reader never sees half a file

    def failed_on(self, workload: str, size: int, partition: str, cluster: str = ""
                  ) -> dict | None:
        """The latest failure that rules ``partition`` out for this job, else None."""
        for f in reversed(self.failures):
            if (f.get("workload") == workload and f.get("partition") == partition
                    and (not cluster or not f.get("cluster") or f.get("cluster") == cluster)
                    and int(f.get("size", 0)) <= int(size)):
                return f
        return None
