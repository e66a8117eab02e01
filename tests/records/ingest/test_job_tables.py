"""A job table ingest wrote, read back from CSV: every value under its own column."""

from __future__ import annotations

import pandas as pd
import pytest

from hpcds1mpi.errors import IngestError
from hpcds1mpi.records.ingest import ingest, read_job_log, write_job_table
from tests.records.ingest.captures import DATA


@pytest.fixture
def table_csv(tmp_path):
    first, _, _ = ingest([DATA / "sacct-energy-gpu.txt"])
    return first, write_job_table(first, tmp_path / "jobs.csv")


def test_a_first_row_longer_than_the_header_is_refused(table_csv):
    """pandas took the first column (job_id) as the index and put every value under the next
    column's name: workload held the user, runtime_s the CPU time, without a word."""
    _, path = table_csv
    lines = path.read_text().splitlines(keepends=True)
    lines[1] = lines[1].rstrip("\n") + ",7\n"
    path.write_text("".join(lines))
    with pytest.raises(IngestError, match="rows have more fields than the header") as info:
        read_job_log(path)
    assert "\n" not in str(info.value)


def test_a_comma_ending_every_row_reads_the_same(table_csv):
    first, path = table_csv
    lines = path.read_text().splitlines()
    path.write_text("\n".join([lines[0], *(line + "," for line in lines[1:])]) + "\n")
    back, report = read_job_log(path)
    assert report.jobs == len(first) and not report.dropped
    cols = ["job_id", "user", "status", "runtime_s", "nodes", "time_limit_s"]
    pd.testing.assert_frame_equal(back[cols], first[cols], check_dtype=False)
