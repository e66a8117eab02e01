"""SWF ids are each log's own numbers: kept apart in a table of several logs (s38 tester C8)."""

from __future__ import annotations

from collections import Counter

import pandas as pd

from hpcds1mpi.records.ingest.job_logs import ingest, write_job_table
from hpcds1mpi.records.ingest.log_ids import QUALIFIED, log_name, qualify_log_ids

from .captures import UTC_P


def _swf(path, user: int, jobs: int = 3, first_job: int = 1, start: int = 1400000000):
    lines = [f"; UnixStartTime: {start}\n; MaxProcs: 64\n"]
    lines += [f"{first_job + i} {100 * i} 5 {50 + i} 4 -1 -1 4 3600 -1 1 {user} 7 3 1 1 -1 -1\n"
              for i in range(jobs)]
    path.write_text("".join(lines))
    return path


def test_user_2_of_two_logs_is_two_users(tmp_path):
    # Gaia's user 2 and Curie's user 2 had been one user's history (457 Curie jobs in it).
    a = _swf(tmp_path / "gaia.swf", 2)
    b = _swf(tmp_path / "curie.swf", 2, start=1500000000)
    table, _, notes = ingest([a, b])
    assert sorted(set(table["user"])) == ["curie:2", "gaia:2"]
    assert set(table["account"]) == {"gaia:7", "curie:7"}
    assert set(table["workload"]) == {"gaia:3", "curie:3"}
    assert notes[QUALIFIED] == 6


def test_one_log_alone_keeps_its_numbers(tmp_path):
    table, _, notes = ingest([_swf(tmp_path / "gaia.swf", 2)])
    assert set(table["user"]) == {"2"} and not notes


def test_a_table_of_one_log_and_another_log_each_take_their_logs_name(tmp_path):
    # The table keeps each job's source log: its ids take that log's name, and a table of
    # several logs read again is not qualified twice.
    table, _, _ = ingest([_swf(tmp_path / "gaia.swf", 2)])
    write_job_table(table, tmp_path / "g.parquet")
    two, _, _ = ingest([tmp_path / "g.parquet", _swf(tmp_path / "curie.swf", 2, start=15 * 10**8)])
    assert sorted(set(two["user"])) == ["curie:2", "gaia:2"]
    write_job_table(two, tmp_path / "two.parquet")
    three, _, _ = ingest([tmp_path / "two.parquet",
                          _swf(tmp_path / "theta.swf", 2, start=16 * 10**8)])
    assert sorted(set(three["user"])) == ["curie:2", "gaia:2", "theta:2"]


def test_slurm_users_are_left_as_read(tmp_path):
    # A site's user names are the same people in every export: only SWF numbers are a log's.
    table, _, _ = ingest([UTC_P, _swf(tmp_path / "gaia.swf", 2, start=1700000000)])
    slurm = table[table["source_kind"] != "swf"]
    assert not slurm["user"].dropna().str.contains(":").any()
    assert set(table.loc[table["source_kind"] == "swf", "user"]) == {"gaia:2"}


def test_two_logs_of_one_name_are_told_apart():
    table = pd.DataFrame({"user": ["2", "2", pd.NA], "source_kind": ["swf"] * 3,
                          "source_file": ["a/log.swf.gz", "b/log.swf.gz", "b/log.swf.gz"]})
    out = qualify_log_ids(table, Counter())
    assert list(out["user"].fillna("-")) == ["log:2", "log.2:2", "-"]
    assert log_name("x/UniLu-Gaia-2014-1.swf.gz") == "UniLu-Gaia-2014-1"
