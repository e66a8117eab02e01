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


def test_a_file_beginning_with_saccts_own_error_says_so_and_how_to_export_again():
    """s48 tester P8: `sacct ... &> jobs.txt` after a failed slurmdbd call had been called
    "not a job log of a known kind"."""
    from hpcds1mpi.records.ingest.wrong_exports import sacct_message, wrong_export

    text = ("sacct: error: slurmdbd: Getting response to message type: DBD_GET_JOBS_COND\n"
            "JobID|JobName|State\n1|a|COMPLETED\n")
    said = wrong_export("jobs.txt", text)
    assert said.startswith("jobs.txt: begins with sacct's own message ('sacct: error: slurmdbd")
    assert "2> sacct-errors.txt" in said and "\n" not in said
    assert sacct_message("sacct: fatal: Invalid time") and not sacct_message("JobID|sacct: x")
