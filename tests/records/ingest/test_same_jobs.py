"""The same job in several files, kept once (real exports of the test Slurm, s31 tester R2:
one export in UTC, one with TZ=America/New_York read without TZ, and --json)."""

from __future__ import annotations

import pandas as pd

from hpcds1mpi.records.ingest.job_logs import ingest, write_job_table

from .captures import EXPORTS

UTC_P, NEW_YORK_P, UTC_JSON = (EXPORTS / "s31-utc-P.txt", EXPORTS / "s31-new-york-P.txt",
                               EXPORTS / "s31-utc.json")


def _zone_note(notes) -> tuple[str, int]:
    found = [(reason, n) for reason, n in notes.items() if " h apart" in reason]
    assert len(found) == 1, notes
    return found[0]


def test_the_same_jobs_read_in_two_zones_are_kept_once_and_the_zone_is_said():
    table, _, notes = ingest([UTC_P, NEW_YORK_P])
    assert sorted(table["job_id"]) == ["56472500", "56472501", "56472531"]  # was 6: each twice
    reason, n = _zone_note(notes)
    assert n == 3 and reason.startswith(f"same job in {UTC_P} and {NEW_YORK_P} with times 5 h "
                                        "apart: one of them was read in the wrong zone; ")
    assert "TZ=Area/City hpcds1mpi ingest" in reason
    # Kept: the first file's copy (of equal copies), its times.
    kept = table.set_index("job_id").loc["56472531"]
    assert kept["submit_time"] == pd.Timestamp("2026-12-05 11:53:08")
    assert kept["source_file"] == str(UTC_P) and kept["ranks"] == 2


def test_json_names_the_file_read_in_the_wrong_zone():
    table, _, notes = ingest([UTC_JSON, NEW_YORK_P])
    assert len(table) == 3
    reason, n = _zone_note(notes)
    assert n == 3 and (f"{UTC_JSON} (sacct --json) is UTC, so {NEW_YORK_P} was read in the "
                       "wrong zone") in reason


def test_a_job_table_and_a_log_of_the_same_jobs_in_another_zone(tmp_path):
    """`ingest jobs.parquet new.txt --out jobs.parquet`: the history's jobs are not added
    again (tester R2: recommend --history then learned each job twice)."""
    history, _, _ = ingest([UTC_P])
    path = write_job_table(history, tmp_path / "jobs.parquet")
    table, _, notes = ingest([path, NEW_YORK_P])
    assert len(table) == 3 and _zone_note(notes)[1] == 3


def test_the_same_zone_says_no_zone():
    table, _, notes = ingest([UTC_P, UTC_JSON])
    assert len(table) == 3 and not [r for r in notes if " h apart" in r]
