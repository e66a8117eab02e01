"""What a campaign's merged file holds of it: each configuration's finished run, those there
twice, and runs of no configuration of the campaign (a part plan edited to sweep more: s39
tester H1, where status had said 20/20 of a merged file of 21 runs), and what to do where
every part is done but the merged file is not (s39 tester H5: "merged: not yet", no hint).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class MergedRuns:
    """What the merged file holds of the campaign's plan (all empty before the first merge)."""

    #: Run id -> status of the plan's finished runs (of one there twice, the last read).
    statuses: dict[str, str] = field(default_factory=dict)
    #: Configurations of the plan there twice or more.
    twice: int = 0
    #: Runs of no configuration of the campaign (a part plan edited to sweep more, s39 tester
    #: H1): said, never counted.
    foreign: int = 0


def merged_runs(folder: str | Path, manifest: dict) -> MergedRuns:
    """The plan's finished runs in the campaign's merged file (``interrupted`` ones are not)."""
    path = Path(folder) / manifest["merged"]
    try:
        stat = path.stat()
    except OSError:
        return MergedRuns()
    planned = {r for part in manifest["parts"] for r in part["runs"]}
    statuses: dict[str, str] = {}
    seen: dict[str, int] = {}
    foreign = 0
    for run_id, status in _finished(str(path), (stat.st_ino, stat.st_mtime_ns, stat.st_size)):
        if run_id in planned:
            statuses[run_id] = status
            seen[run_id] = seen.get(run_id, 0) + 1
        else:
            foreign += 1
    return MergedRuns(statuses, sum(1 for n in seen.values() if n > 1), foreign)


@functools.lru_cache(maxsize=1)
def _finished(path: str, version: tuple) -> tuple[tuple[str, str], ...]:
    """(run id, status) of each run of the telemetry file ``path`` but ``interrupted`` ones,
    read once per ``version`` of the file (inode, mtime, size): ``status`` reads it for the
    parts and again for its summary line."""
    from hpcds1mpi.records import telemetry

    return tuple((run_id, row["status"]) for (_, run_id), row in telemetry.load(path).runs.items()
                 if row["status"] != "interrupted")


def merge_jobs(manifest: dict) -> list[str]:
    """The merge jobs the campaign's manifest records."""
    return [s["job_id"] for s in manifest["submissions"] if s.get("merge") and s.get("job_id")]


def unmerged_line(folder: str | Path, manifest: dict, held: list[str]) -> str:
    """What to do where every part is done and the merged file lacks some (or is gone): wait
    for the merge jobs the scheduler still ``held``, else submit the merge alone (s39 H5)."""
    if held:
        return f"every part is done; the merge (job {', '.join(held)}) is yet to write " \
            f"{manifest['merged']}"
    return f"every part is done but not merged into {manifest['merged']}: hpcds1mpi " \
        f"campaign resubmit {folder} submits the merge alone"
