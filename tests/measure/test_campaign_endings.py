"""Reading how a campaign part's job ended from sacct's lines (the real sacct's, on the test
Slurm, in tests/slurm/test_campaign.py; the wording in tests/measure/test_campaign_status.py)."""

from __future__ import annotations

import pytest

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


def test_a_whole_array_cancelled_while_pending_is_read_for_every_task_from_its_plain_line(
        tmp_path):
    """s35 tester R5: sacct's first line for a pending array cancelled whole is the plain
    ``56517964`` (seconds later ``56517964_[0-2]``): its parts read "missing"."""
    from hpcds1mpi.measure.campaign_endings import ended_tasks

    (tmp_path / "sacct").write_text("#!/bin/sh\nprintf '56517964|CANCELLED by 0|0:0|0\\n'\n")
    (tmp_path / "sacct").chmod(0o755)
    env = {"PATH": f"{tmp_path}:/usr/bin:/bin"}
    tasks = ["56517964_0", "56517964_1", "56517964_2"]
    assert ended_tasks(tasks, env) == {
        "56517964": ("CANCELLED", "0:0", 0), **dict.fromkeys(tasks, ("CANCELLED", "0:0", 0))}
    assert ended_tasks(["56517964"], env) == {"56517964": ("CANCELLED", "0:0", 0)}


@pytest.mark.slurm
def test_the_real_sacct_of_an_array_cancelled_before_it_started_names_every_task(slurm):
    """R5 on the test Slurm: an array held back by --begin, cancelled whole; read at once (the
    plain line's seconds) and again once slurmdbd has written it as ``ID_[0-2]``."""
    import time

    from hpcds1mpi.measure.campaign_endings import ended_tasks

    if not slurm.accounting:
        pytest.skip("the test Slurm keeps no accounting: sacct cannot say how a job ended")
    job = slurm.cmd(["sbatch", "--parsable", "-p", "debug", "--array=0-2", "--begin=now+600",
                     "--wrap", "sleep 1"]).stdout.strip().split(";")[0]
    tasks = [f"{job}_{i}" for i in range(3)]
    slurm.cmd(["scancel", job])
    seen, deadline = set(), time.monotonic() + 60
    while time.monotonic() < deadline and f"{job}_[0-2]" not in seen:
        listed = slurm.cmd(["sacct", "-X", "-n", "-P", "-j", job, "-o", "JobID"]).stdout.split()
        if listed:
            seen |= set(listed)
            ended = ended_tasks(tasks, slurm.env)
            assert all(ended.get(task, ("",))[0] == "CANCELLED" for task in tasks), (listed,
                                                                                   ended)
        time.sleep(0.1)
    assert f"{job}_[0-2]" in seen, seen
