"""Job ids of several clusters in one export (s37 tester J1, J2)."""

from __future__ import annotations

from hpcds1mpi.records.ingest.cluster_ids import QUALIFIED, shown_ids
from hpcds1mpi.records.ingest.schema import FileReport


def test_only_an_id_two_clusters_share_is_qualified():
    report = FileReport("x", "sacct-p")
    keys = [("alpha", "8100"), ("beta", "8100_2"), ("alpha", "8101"), ("", "9")]
    assert shown_ids(keys, report) == {("alpha", "8100"): "alpha:8100",
                                       ("beta", "8100_2"): "beta:8100_2",
                                       ("alpha", "8101"): "8101", ("", "9"): "9"}
    assert report.notes[QUALIFIED] == 2

