"""Job ids of several clusters in one export (s37 tester J1, J2)."""

from __future__ import annotations

import pytest

from hpcds1mpi.records.ingest.cluster_ids import QUALIFIED, shown_ids
from hpcds1mpi.records.ingest.job_logs import ingest, write_job_table
from hpcds1mpi.records.ingest.schema import FileReport

from .captures import EXPORTS


def test_only_an_id_two_clusters_share_is_qualified():
    report = FileReport("x", "sacct-p")
    keys = [("alpha", "8100"), ("beta", "8100_2"), ("alpha", "8101"), ("", "9")]
    assert shown_ids(keys, report) == {("alpha", "8100"): "alpha:8100",
                                       ("beta", "8100_2"): "beta:8100_2",
                                       ("alpha", "8101"): "8101", ("", "9"): "9"}
    assert report.notes[QUALIFIED] == 2



# Real exports of two jobs of the test Slurm (cluster hpcds1mpi, s38): -P without and with
# Cluster, --json; the two-cluster files add another cluster's job under id 56549537 (beta,
# another user and name, 70 s later), as sacct -M hpcds1mpi,beta lists it.
TWO_P, TWO_JSON = EXPORTS / "s38-two-clusters-P.txt", EXPORTS / "s38-two-clusters.json"
ONE_CLUSTER = [EXPORTS / "s38-one-cluster-P.txt", EXPORTS / "s38-one-cluster-Cluster-P.txt",
               EXPORTS / "s38-one-cluster.json"]
THREE_JOBS = {("hpcds1mpi:56549537", "hpcds1mpi", "root"), ("56549538", "hpcds1mpi", "root"),
              ("beta:56549537", "beta", "alice")}


def _jobs(table) -> set[tuple]:
    return set(table[["job_id", "cluster", "user"]].itertuples(index=False, name=None))


@pytest.mark.parametrize("two", [TWO_P, TWO_JSON], ids=["P", "json"])
@pytest.mark.parametrize("one", ONE_CLUSTER, ids=["P", "Cluster-P", "json"])
def test_a_job_qualified_in_a_two_cluster_export_is_one_job_with_its_one_cluster_copy(two, one):
    """s37 left: alpha:8100 of a two-cluster export and 8100 of alpha's own export (with or
    without Cluster, -P or --json) had been kept as two jobs. A job is (cluster, id)."""
    for files in ([two, one], [one, two]):
        table, _, notes = ingest(files)
        assert len(table) == 3 and _jobs(table) == THREE_JOBS, (files, notes)
        assert notes["same job in several files, kept once (sacct -P preferred, then the copy "
                     "with the most fields known)"] == 2


def test_a_job_table_written_before_the_cluster_column_is_read_with_its_qualified_ids(tmp_path):
    """A table an older ingest wrote (no cluster column, alpha:8100) with alpha's export."""
    table, _, _ = ingest([TWO_P])
    old = tmp_path / "old.parquet"
    write_job_table(table.drop(columns="cluster"), old)
    again, _, _ = ingest([old, ONE_CLUSTER[0]])
    assert len(again) == 3
    assert set(again["job_id"]) == {job_id for job_id, _, _ in THREE_JOBS}


def test_a_copy_without_cluster_joins_the_cluster_whose_job_it_is():
    """beta's own export without Cluster: its job is beta's 56549537 (user and name agree),
    not hpcds1mpi's; three jobs, none merged across clusters."""
    table, _, notes = ingest([TWO_P, EXPORTS / "s38-beta-only-P.txt", ONE_CLUSTER[0]])
    assert len(table) == 3 and _jobs(table) == THREE_JOBS, notes


def test_two_one_cluster_exports_sharing_an_id_are_two_jobs_written_cluster_id(tmp_path):
    """Each cluster's own export (with Cluster) under one id: two jobs, qualified, said."""
    lines = TWO_P.read_text().splitlines()
    alpha, beta = tmp_path / "alpha.txt", tmp_path / "beta.txt"
    alpha.write_text("\n".join(l for l in lines if not l.startswith("beta|")) + "\n")
    beta.write_text("\n".join([lines[0], *(l for l in lines if l.startswith("beta|"))]) + "\n")
    table, _, notes = ingest([alpha, beta])
    assert len(table) == 3 and _jobs(table) == THREE_JOBS, notes
    assert notes[QUALIFIED + " (across files)"] == 2
