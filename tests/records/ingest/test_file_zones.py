"""Files read in different time zones (real exports of the test Slurm, s31 tester R2: one in
UTC, one with TZ=America/New_York read without TZ, and --json): a --json file's UTC decides."""

from __future__ import annotations

import json

import pandas as pd

from hpcds1mpi.records.ingest.job_logs import ingest

from .captures import NEW_YORK_P, UTC_JSON, UTC_P
from .captures import zone_note as _zone_note


def test_json_names_the_file_read_in_the_wrong_zone_and_its_times_are_shifted_onto_utc(
        tmp_path):
    """s31 verifier V2: the note named the file in the wrong zone, yet the kept -P copies had
    its times, 5 h early. Its job the JSON lacks is shifted too: the whole file is off."""
    doc = json.loads(UTC_JSON.read_text())
    doc["jobs"] = [j for j in doc["jobs"] if j["job_id"] != 56472531]
    fewer = tmp_path / "two-jobs.json"
    fewer.write_text(json.dumps(doc))
    for files in ([UTC_JSON, NEW_YORK_P], [NEW_YORK_P, UTC_JSON], [fewer, NEW_YORK_P]):
        table, _, notes = ingest(files)
        reason, n = _zone_note(notes)
        assert (f"{files[files.index(NEW_YORK_P) - 1]} (sacct --json) is UTC, so {NEW_YORK_P} "
                "was read in the wrong zone: its times shifted +5 h onto UTC") in reason
        assert len(table) == 3 and n == (2 if fewer in files else 3)
        kept = table.set_index("job_id")
        assert set(kept["source_file"]) == {str(NEW_YORK_P)}  # -P's fields, the JSON's times
        assert kept.loc["56472531", "submit_time"] == pd.Timestamp("2026-12-05 11:53:08")
        assert kept.loc["56472531", "start_time"] == pd.Timestamp("2026-12-05 11:55:11")
        assert kept.loc["56472500", "end_time"] == pd.Timestamp("2026-12-05 11:52:54")
        assert kept.loc["56472531", "wait_s"] == 123 and kept.loc["56472531", "ranks"] == 2


def test_a_utc_export_joins_the_json_group_and_keeps_its_times():
    """-P in UTC, -P in New York, --json: the New York file is shifted onto the JSON's UTC
    (reached through the UTC -P file, 0 h from the JSON), the UTC -P file is not."""
    table, _, notes = ingest([UTC_P, NEW_YORK_P, UTC_JSON])
    assert len(table) == 3
    assert set(table["submit_time"].dt.hour) == {11}
    assert any(f"so {NEW_YORK_P} was read in the wrong zone: its times shifted +5 h" in r
               for r in notes)
