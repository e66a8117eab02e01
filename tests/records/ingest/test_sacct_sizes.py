"""Counts and memory sizes in sacct text (`--units`), and ReqMem as the whole job's request."""

from __future__ import annotations

from collections import Counter

import pytest

from hpcds1mpi.records.ingest.sacct_sizes import UNCOUNTED_REQMEM, UNITLESS_REQMEM, SizeReader


def test_a_count_written_as_a_size_is_unknown_and_said_once():
    sizes = SizeReader()
    assert sizes.count({"ReqNodes": "0.00G"}, "ReqNodes") is None
    assert sizes.count({"NCPUS": "8"}, "NCPUS") == 8
    notes: Counter = Counter()
    sizes.say(notes)
    assert list(notes.values()) == [1] and next(iter(notes)).startswith("ReqNodes written as")


def test_a_size_rounded_to_zero_is_unknown_and_a_coarse_one_read_and_said():
    sizes = SizeReader()
    assert sizes.memory("0.00G", 1, "MaxRSS") is None
    assert sizes.memory("0.01T", 1, "MaxRSS") == pytest.approx(0.01 * 1024**4)
    assert sizes.rounded == {"MaxRSS"} and sizes.coarse == {"MaxRSS"}


@pytest.mark.parametrize("text, nodes, cores, gb", [
    ("8000M", 2, 16, 8.0),  # 22.05 and later: the job's total
    ("32000Mn", 2, 16, 64.0),  # per node
    ("250Mc", 2, 64, 16.0),  # per CPU
    ("", 2, 16, None), ("0.00G", 2, 16, None),
])
def test_reqmem_is_the_whole_jobs_request(text, nodes, cores, gb):
    got, note = SizeReader().mem_req_gb(text, nodes, cores)
    assert note is None
    assert got is None if gb is None else got == pytest.approx(gb)


def test_reqmem_without_a_unit_is_unknown_with_a_note():
    assert SizeReader().mem_req_gb("1000", 1, 1) == (None, UNITLESS_REQMEM)
    with pytest.raises(ValueError):
        SizeReader().mem_req_gb("lots", 1, 1)


def test_a_per_unit_reqmem_with_no_count_is_unknown_never_one_units_share():
    """s48 tester P18: `2Gc` with no CPU count had been read as 2 GB, one CPU's share."""
    assert SizeReader().mem_req_gb("2Gc", 2, None) == (None, UNCOUNTED_REQMEM)
    assert SizeReader().mem_req_gb("4000Mn", None, 8) == (None, UNCOUNTED_REQMEM)
