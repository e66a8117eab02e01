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


def test_a_file_spanning_winter_and_summer_is_read_again_in_the_zone_the_json_shows(
        tmp_path, monkeypatch):
    """s35 tester T3: a Berlin export of January (CET) and July (CEST) jobs read in UTC beside
    their --json was shifted by one offset, -2 h: the five winter jobs were then an hour off,
    kept as five requeues. Its jobs the JSON lacks are read in the zone found too."""
    import time

    from .captures import EXPORTS

    season_p = EXPORTS / "season-berlin.txt"
    doc = json.loads((EXPORTS / "season-berlin.json").read_text())
    doc["jobs"] = [j for j in doc["jobs"] if j["job_id"] not in (80004, 80009)]
    fewer = tmp_path / "eight-jobs.json"
    fewer.write_text(json.dumps(doc))
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    try:
        table, _, notes = ingest([season_p, fewer])
    finally:
        monkeypatch.undo()
        time.tzset()
    assert not any("requeue" in n for n in notes)
    reason, _ = _zone_note(notes)
    assert f"so {season_p} was read in the wrong zone: its times read again as local times " \
           "of " in reason and "(alike for these jobs), whose times match" in reason
    kept = table.set_index("job_id")
    assert len(kept) == 10 and set(kept["source_file"]) == {str(season_p)}
    # Every job as --json has it: 09:00 CET and 10:00 CEST are both 08:00 UTC.
    assert set(kept["submit_time"].dt.hour) == {8}
    assert set(kept["end_time"].dt.strftime("%H:%M")) == {"08:35"}
    assert (kept["wait_s"] == 300).all()
