"""A heterogeneous job's components read as one job (s33 tester A11)."""

from __future__ import annotations

import datetime

from hpcds1mpi.records.ingest.het_jobs import HET_JOINED, join_components
from hpcds1mpi.records.ingest.schema import FileReport, job_row

T0 = datetime.datetime(2026, 12, 5, 18, 21, 20)


def component(job_id: str, status: str = "ok", nodes: int | None = 1, threads: int = 1,
              end_s: int = 11, exit_code: int = 0) -> dict:
    return job_row(job_id=job_id, workload="het", user="u", partition="work", nodes=nodes,
                   ranks=2, threads=threads, cores=4, gpus=0, status=status,
                   state="COMPLETED" if status == "ok" else "FAILED", exit_code=exit_code,
                   exit_signal=0, runtime_s=end_s - 10.0, cpu_s=1.0, peak_rss_mb=10.0,
                   energy_j=None, submit_time=T0,
                   start_time=T0 + datetime.timedelta(seconds=10),
                   end_time=T0 + datetime.timedelta(seconds=end_s), time_limit_s=120.0,
                   mem_req_gb=0.5)


def test_components_become_one_job_in_the_first_ones_place():
    report = FileReport("x", "sacct-p")
    rows = [component("9"), component("15+1", end_s=14), component("15+0"), component("20")]
    out = join_components(rows, report)
    assert [r["job_id"] for r in out] == ["9", "15", "20"] and report.jobs == 3
    job = out[1]
    assert (job["nodes"], job["ranks"], job["cores"], job["ranks_per_node"]) == (2, 4, 8, 2)
    assert (job["runtime_s"], job["wait_s"], job["mem_req_gb"]) == (4.0, 10.0, 1.0)
    assert job["end_time"] == T0 + datetime.timedelta(seconds=14)
    assert report.notes[HET_JOINED] == 1


def test_a_failed_component_fails_the_job_and_unknown_counts_stay_unknown():
    report = FileReport("x", "sacct-p")
    job, = join_components([component("15+0", threads=2),
                            component("15+1", "failed", nodes=None, exit_code=3)], report)
    assert (job["status"], job["exit_code"], job["error"]) == ("failed", 3, "FAILED exit 3")
    assert job["nodes"] is None and job["threads"] is None  # a total of unknown, two counts


def test_rows_without_components_are_returned_as_they_are():
    report = FileReport("x", "sacct-p")
    rows = [component("9"), component("10_1")]
    assert join_components(rows, report) is rows and not report.notes


def test_a_job_qualified_by_its_cluster_is_still_joined():
    """s37 tester J1, J2: an id two clusters share is written CLUSTER:ID (cluster_ids.py)."""
    report = FileReport("x", "sacct-p")
    out = join_components([component("alpha:15+0"), component("alpha:15+1"),
                           component("beta:15")], report)
    assert [(r["job_id"], r["nodes"]) for r in out] == [("alpha:15", 2), ("beta:15", 1)]


def test_a_jobidraw_export_joins_components_its_hetjob_columns_name(tmp_path):
    from hpcds1mpi.records.ingest.sacct_text import read_sacct_parsable

    head = "JobIDRaw|HetJobId|HetJobOffset|JobName|User|State|Submit|Start|End|ElapsedRaw|NNodes|NCPUS\n"
    times = "2026-12-07T01:46:36|2026-12-07T01:47:06|2026-12-07T01:47:08|2|1|1\n"
    path = tmp_path / "raw.txt"
    path.write_text(head + f"15|15|0|h_het|root|COMPLETED|{times}16|15|1|h_het|root|COMPLETED|"
                    f"{times}17|0||solo|root|COMPLETED|{times}")
    rows, _ = read_sacct_parsable(path)
    assert [(r["job_id"], r["nodes"], r["raw_id"]) for r in rows] == [
        ("15", 2, "15,16"), ("17", 1, "17")]


def test_a_jobidraw_export_without_hetjob_columns_says_it_cannot_join(tmp_path):
    from hpcds1mpi.records.ingest.sacct_text import read_sacct_parsable

    head = "JobIDRaw|JobName|User|State|Submit|Start|End|ElapsedRaw|NNodes|NCPUS\n"
    times = "2026-12-07T01:46:36|2026-12-07T01:47:06|2026-12-07T01:47:08|2|1|1\n"
    path = tmp_path / "raw.txt"
    path.write_text(head + f"15|h_het|root|COMPLETED|{times}16|h_het|root|COMPLETED|{times}")
    rows, report = read_sacct_parsable(path)
    assert len(rows) == 2
    assert any("cannot be told from array tasks" in fact for fact in report.facts)
