"""Test inputs of the ingest tests: real Slurm captures and made-up files."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

# Real captures from a two-node Slurm 22.05 (copied from the project's shared data; see README).
DATA = Path(__file__).parents[2] / "data"
CAPTURES = DATA / "slurm-captures"
CAPTURE_FILES = ["sacct-parsable2.txt", "sacct-parsable2-all.txt", "sacct.json",
                 "extras/oom-cgroup.sacct-parsable2.txt",
                 "extras/oom-cgroup.sacct-parsable2-all.txt", "extras/oom-cgroup.sacct.json"]

# Excerpts of real sacct exports of the test Slurm (tester W, session 28): -D, -X, --units,
# the default columns, a job name with '|', and --json of a requeued job.
EXPORTS = Path(__file__).parent / "sacct_exports"

needs_captures = pytest.mark.skipif(not CAPTURES.is_dir(),
                                    reason=f"real Slurm captures not present at {CAPTURES}")


def by_id(df: pd.DataFrame) -> dict[str, dict]:
    """Rows of a job table by job id."""
    return {row["job_id"]: row for row in df.to_dict("records")}

#: Real exports of the test Slurm's same 65 jobs (s31 tester R2): -P in UTC, -P run with
#: TZ=America/New_York (read without TZ: 5 h off), and --json (UTC epochs).
UTC_P, NEW_YORK_P, UTC_JSON = (EXPORTS / "s31-utc-P.txt", EXPORTS / "s31-new-york-P.txt",
                               EXPORTS / "s31-utc.json")


def zone_note(notes) -> tuple[str, int]:
    """The one note of an ingest saying two files' shared jobs lie whole hours apart."""
    found = [(reason, n) for reason, n in notes.items() if " h apart" in reason]
    assert len(found) == 1, notes
    return found[0]
