"""The SWF header reader on a real log (CEA Curie) and on a header written here."""

from __future__ import annotations

import pytest

from hpcds1mpi.records.ingest import read_job_log
from hpcds1mpi.records.ingest.swf_header import procs_count_nodes, read_header
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


@pytest.mark.parametrize("note, nodes", [
    # s38 tester C2: the first two only mention processors and nodes; they were read as
    # "the processor fields hold nodes". The others state it (the last two were not read).
    ("processors are allocated in whole nodes of 12, so the processor counts are multiples "
     "of 12", False),
    ("processors are allocated in whole nodes of 12 (so counts are multiples of 12)", False),
    ("the processor fields are not nodes", False),
    ("Curie is composed of 3 types of nodes: thin, fat, and hybrid,", False),
    ("the processor fields count nodes, not cores (12 cores per node)", True),
    ("processors are nodes in this log", True),
    ("Allocation is by node; fields 5 and 8 give the number of nodes", True),
    ("a processor is a node", True),
])
def test_a_note_counts_as_nodes_only_where_it_says_so(tmp_path, note, nodes):
    path = tmp_path / "note.swf"
    path.write_text(f"; MaxNodes: 8\n; MaxProcs: 96\n; Note: {note}\n" + GOOD)
    head = read_header(path)
    assert procs_count_nodes(head, "auto")[0] is nodes
