"""What ``campaign resubmit`` hands the scheduler: here a PBS campaign's, with a qsub stand-in
that logs its arguments (no PBS runs here; Slurm's submissions are in test_campaign_status.py
and tests/slurm/test_campaign.py)."""

from __future__ import annotations

from pathlib import Path

from hpcds1mpi.measure.campaign_submit import _submit_part
from tests.helpers import logging_command
from tests.measure.test_campaign_scripts import _directives, _pbs_campaign


def test_a_lone_pbs_part_sent_again_writes_the_log_its_array_task_would(tmp_path):
    """F2's follow-up of s33 tester P2: ``qsub -v HPCDS1MPI_CAMPAIGN_INDEX=1`` is no array job,
    so the script's ``#PBS -o .../n1-^array_index^.out`` was a file of that very name; the
    lone part is given the path its array task writes (``logs/n1-1.out``)."""
    camp = _pbs_campaign(tmp_path, shards=2)
    log = tmp_path / "qsub.log"
    logging_command(tmp_path / "bin", "qsub", "echo 7.pbs", log)
    env = {"PATH": f"{tmp_path / 'bin'}:/usr/bin:/bin"}
    assert _directives(camp / "n1.pbs")[-1].endswith("/logs/n1-^array_index^.out")
    assert _submit_part("pbs", "n1.pbs", [0, 1], camp, env) == ["7.pbs"]  # an array: as is
    assert _submit_part("pbs", "n1.pbs", [1], camp, env) == ["7.pbs"]
    calls = log.read_text().splitlines()
    assert calls == ["-J 0-1 n1.pbs", f"-v HPCDS1MPI_CAMPAIGN_INDEX=1 -o "
                     f"{Path(camp).absolute() / 'logs' / 'n1-1.out'} n1.pbs"]
