"""The job table: the one row constructor both Slurm readers use, and the normalised columns."""

from __future__ import annotations

import pandas as pd
import pytest

from hpcds1mpi.records.ingest import JOB_COLUMNS, read_job_log
from hpcds1mpi.records.ingest import sacct_json, sacct_text
from hpcds1mpi.records.ingest.schema import (ENERGY_SLURM, bytes_to_mib, job_row, normalise,
                                             rows_frame)
from tests.records.ingest.captures import CAPTURES, DATA, needs_captures

FIELDS = dict(job_id="7", workload="app", user="u", partition="cpu", nodes=2, ranks=5,
              threads=2, cores=10, gpus=0, status="failed", state="FAILED", exit_code=3,
              exit_signal=0, runtime_s=100.0, cpu_s=50.0, peak_rss_mb=10.0, energy_j=2000.0,
              submit_time=None, start_time=None, end_time=None, time_limit_s=600.0,
              mem_req_gb=4.0, account="proj", queue="normal", req_nodes=2, req_procs=10,
              req_gpus=0, cluster="alpha", raw_id="7")


def test_job_row_derives_the_same_fields_for_every_reader():
    row = job_row(**FIELDS)
    assert list(row) == [c for c, _ in JOB_COLUMNS if c not in ("source_file", "source_kind")]
    assert row["ranks_per_node"] == 3 and row["device"] == "cpu"
    assert row["error"] == "FAILED exit 3" and row["avg_power_w"] == 20.0
    assert row["energy_source"] == ENERGY_SLURM
    ok = job_row(**{**FIELDS, "status": "ok", "state": "COMPLETED", "exit_code": 0,
                    "gpus": 4, "energy_j": None})
    assert ok["error"] == "" and ok["device"] == "gpu"
    waited = job_row(**{**FIELDS, "submit_time": pd.Timestamp("2024-01-01 10:00"),
                        "start_time": pd.Timestamp("2024-01-01 10:02:30")})
    assert waited["wait_s"] == 150.0 and row["wait_s"] is None
    assert ok["avg_power_w"] is None and ok["energy_source"] == ""


def test_normalise_drops_a_fraction_in_a_count_and_counts_it():
    """A count of 1.5 was rounded to 2 without a word: a made-up count, never a read one."""
    from collections import Counter

    rows = [job_row(**FIELDS), job_row(**{**FIELDS, "job_id": "8", "nodes": 1.5}),
            job_row(**{**FIELDS, "job_id": "9", "cores": 2.5, "nodes": 2.5}),
            job_row(**{**FIELDS, "job_id": "10", "nodes": float("inf")})]
    dropped: Counter = Counter()
    df = normalise(rows_frame(rows), "x.txt", "sacct-p", dropped)
    assert list(df["job_id"]) == ["7", "10"]  # inf: the range check's to drop, as not finite
    assert dict(dropped) == {"a fraction in nodes (a count is whole)": 2}


def test_normalise_gives_every_column_its_dtype():
    df = normalise(rows_frame([job_row(**FIELDS)]), "x.txt", "sacct-p")
    assert list(df.columns) == [c for c, _ in JOB_COLUMNS]
    assert {c: str(df[c].dtype) for c, _ in JOB_COLUMNS} == {
        c: ("datetime64[ns]" if d.startswith("datetime") else d) for c, d in JOB_COLUMNS}
    assert df.loc[0, "source_kind"] == "sacct-p"


@pytest.mark.parametrize("module, path", [
    (sacct_text, DATA / "sacct-energy-gpu.txt"),
    pytest.param(sacct_json, CAPTURES / "sacct.json", marks=needs_captures),
])
def test_both_slurm_readers_build_rows_with_the_one_constructor(module, path, monkeypatch):
    calls = []

    def counting(**fields):
        calls.append(set(fields))
        return job_row(**fields)

    monkeypatch.setattr(module, "job_row", counting)
    df, _ = read_job_log(path)
    assert len(calls) == len(df) > 0
    assert all(fields == set(FIELDS) for fields in calls)
    assert isinstance(df, pd.DataFrame)


def test_a_count_beyond_64_bits_is_dropped_as_absurd_not_a_crash(tmp_path):
    """1e300 or inf where a node count belongs: the integer cast kept it large (2^62), so the
    range check drops the job and counts it."""
    head = "JobIDRaw,JobName,Partition,ElapsedRaw,Account,State,AllocNodes,AllocCPUS,Start,End\n"
    rows = [f"{i},j,p,60,a,COMPLETED,{n},4,2023-07-01T00:00:00,2023-07-01T00:01:00\n"
            for i, n in enumerate(["1", "1e300", "inf", "-1e300", "2"], start=1)]
    path = tmp_path / "huge.csv"
    path.write_text(head + "".join(rows))
    df, report = read_job_log(path, kind="sacct-csv")
    assert sorted(df["job_id"]) == ["1", "5"]
    assert sum(report.dropped.values()) == 3, report.lines()


def test_normalise_drops_and_counts_a_time_no_job_can_have():
    """A time before 1970 or after 2261 (year 1, a 2999 placeholder) crashed the cast to
    nanoseconds; each such row is dropped and counted once, under its first column."""
    from collections import Counter

    rows = [job_row(**{**FIELDS, "job_id": str(i), "submit_time": pd.Timestamp(t),
                       "start_time": pd.Timestamp(t)})
            for i, t in enumerate(["2024-01-01", "0001-01-01", "2999-01-01", "1969-12-31"])]
    dropped: Counter = Counter()
    df = normalise(rows_frame(rows), "x.txt", "sacct-p", dropped)
    assert df["job_id"].tolist() == ["0"] and str(df["submit_time"].dtype) == "datetime64[ns]"
    assert dict(dropped) == {"submit_time outside 1970-2261 (a placeholder or corrupt date)": 3}


def test_peak_rss_mb_counts_mib_as_the_telemetry_does(tmp_path):
    """A job log's MaxRSS is read in the telemetry's unit of ``peak_rss_mb``, MiB, which
    recommend compares with its MiB need (s40 review: the readers divided by 1e6)."""
    import numpy as np

    from hpcds1mpi.records.telemetry.units import UNITS

    assert UNITS["runs"]["peak_rss_mb"] == "MiB"
    assert bytes_to_mib(3 * 2**20) == 3.0
    assert np.array_equal(bytes_to_mib(np.array([2**20, 2**21])), [1.0, 2.0])
    path = tmp_path / "jobs.txt"  # sacct -P, one job with a 1G step peak
    path.write_text("JobID|JobName|User|Partition|State|ExitCode|Submit|Start|End|ElapsedRaw|"
                    "NNodes|NCPUS|NTasks|MaxRSS\n"
                    "9|app|u|cpu|COMPLETED|0:0|2024-01-01T10:00:00|2024-01-01T10:00:00|"
                    "2024-01-01T10:01:00|60|1|2||\n"
                    "9.0|app||cpu|COMPLETED|0:0|2024-01-01T10:00:00|2024-01-01T10:00:00|"
                    "2024-01-01T10:01:00|60|1|2|2|1G\n")
    jobs, _ = read_job_log(path)
    assert jobs.iloc[0]["peak_rss_mb"] == 1024.0  # was 1073.741824 (MB of 1e6 B)
