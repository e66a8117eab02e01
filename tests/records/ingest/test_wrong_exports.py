"""The common wrong exports of a job log: here, a header line that a joined file repeats."""

from __future__ import annotations

import pytest

from hpcds1mpi.errors import IngestError
from hpcds1mpi.records.ingest.wrong_exports import header_again


def test_the_same_header_again_is_skipped_and_another_refused():
    header = ["JobID", "User", "Account", "State"]
    assert header_again([" JobID", "User ", "Account", "State"], header)
    assert not header_again(["1", "u", "p", "COMPLETED"], header)
    assert not header_again(["State", "User", "p", "COMPLETED"], header)  # half named
    with pytest.raises(IngestError, match="^f.csv: a second header line with other columns "
                       r"\(two exports"):
        header_again(["JobID", "Account", "User", "State"], header, "f.csv: ")
    with pytest.raises(IngestError, match="other columns, or -p after -P"):
        header_again(["JobID", "State"], header, certain=True, also=", or -p after -P")


def test_the_same_header_again_in_another_case_is_skipped():
    # s46 review RW4: the first header was read with sacct's names case-fixed, its repeat not
    header = ["JobID", "User", "Account", "State"]
    assert header_again(["jobid", "user", "account", "state"], header)
