"""Reading how a campaign part's job ended from sacct's lines (the real sacct's, on the test
Slurm, in tests/slurm/test_campaign.py; the wording in tests/measure/test_campaign_status.py)."""

from __future__ import annotations

from hpcds1mpi.measure.campaign_endings import array_tasks


def test_an_array_that_never_started_is_one_sacct_line_for_all_its_tasks():
    """sacct printed ``56507051_[0]`` for the pending array cancelled whole: its part was not
    found and stayed missing."""
    assert array_tasks("56507051_[0]") == ["56507051_0"]
    assert array_tasks("100_[0-2,5%4]") == ["100_0", "100_1", "100_2", "100_5"]
    assert array_tasks("100_3") == ["100_3"]
    assert array_tasks("100") == ["100"]


def test_a_tasks_own_line_wins_over_the_arrays_pending_remainder(tmp_path):
    """The real test Slurm's sacct, tasks 0 and 1 cancelled after 4 s running, 2 while pending:
    the remainder's line still names 0-2 as never started; it was read last and said all
    three were "cancelled before it started"."""
    from hpcds1mpi.measure.campaign_endings import ended_tasks

    (tmp_path / "sacct").write_text(
        "#!/bin/sh\nprintf '7_0|CANCELLED by 0|0:0|4\\n7_1|CANCELLED by 0|0:0|4\\n"
        "7_[0-2]|CANCELLED by 0|0:0|0\\n'\n")
    (tmp_path / "sacct").chmod(0o755)
    assert ended_tasks(["7"], {"PATH": f"{tmp_path}:/usr/bin:/bin"}) == {
        "7_0": ("CANCELLED", "0:0", 4), "7_1": ("CANCELLED", "0:0", 4),
        "7_2": ("CANCELLED", "0:0", 0)}
