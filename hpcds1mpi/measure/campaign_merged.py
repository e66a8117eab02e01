"""What a campaign's merged file holds of it: each configuration's finished run, those there
twice, and runs of no configuration of the campaign (a part plan edited to sweep more: s39
tester H1, where status had said 20/20 of a merged file of 21 runs), and what to do where
every part is done but the merged file is not (s39 tester H5: "merged: not yet", no hint).
"""

from __future__ import annotations

from pathlib import Path


def merged_runs(folder: str | Path, manifest: dict) -> dict[str, str]:
    """Run id -> status of the plan's finished runs in the merged file; {} before the first
    merge."""
    from hpcds1mpi.records import telemetry

    path = Path(folder) / manifest["merged"]
    if not path.exists():
        return {}
    planned = {r for part in manifest["parts"] for r in part["runs"]}
    return {run_id: row["status"] for (_, run_id), row in telemetry.load(path).runs.items()
            if run_id in planned and row["status"] != "interrupted"}


def merged_count(folder: str | Path, manifest: dict) -> tuple[int, int, int]:
    """(configurations of the plan in the merged file, times a configuration is there twice or
    more, runs there of no configuration of the campaign); (0, 0, 0) before the first merge."""
    from hpcds1mpi.records import telemetry

    path = Path(folder) / manifest["merged"]
    if not path.exists():
        return 0, 0, 0
    planned = {r for part in manifest["parts"] for r in part["runs"]}
    seen: dict[str, int] = {}
    foreign = 0
    for (_, run_id), row in telemetry.load(path).runs.items():
        if row["status"] == "interrupted":
            continue
        if run_id in planned:
            seen[run_id] = seen.get(run_id, 0) + 1
        else:  # a part plan edited to sweep more (s39 tester H1): said, never counted
            foreign += 1
    return len(seen), sum(1 for n in seen.values() if n > 1), foreign


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
