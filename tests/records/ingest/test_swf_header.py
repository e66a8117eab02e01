"""The SWF header reader on a real log (CEA Curie) and on a header written here."""

from __future__ import annotations

from hpcds1mpi.records.ingest import read_job_log
from hpcds1mpi.records.ingest.swf_header import read_header
from tests.records.ingest.joblogs import CURIE, needs_joblogs
from tests.records.ingest.test_swf import GOOD

pytestmark = needs_joblogs


def test_header_read():
    head = read_header(CURIE)
    assert (head.max_nodes, head.max_procs, head.unix_start) == (5544, 93312, 1296571124)
    assert head.time_zone == "Europe/Paris" and head.version == "2.2"
    assert any("THIS IS A CLEANED VERSION" in n for n in head.notes)


def test_minus_one_in_the_header_is_not_known_and_not_said(tmp_path):
    path = tmp_path / "unknown.swf"
    path.write_text("; UnixStartTime: 1000\n; MaxNodes: -1\n; MaxProcs: 64\n" + GOOD)
    head = read_header(path)
    _, report = read_job_log(path)
    assert head.max_nodes is None and head.max_procs == 64
    assert not any("ignored" in f for f in report.facts)
