"""What ``campaign resubmit`` hands the scheduler: here a PBS campaign's, with a qsub stand-in
that logs its arguments (no PBS runs here; Slurm's submissions are in test_campaign_status.py
and tests/slurm/test_campaign.py)."""

from __future__ import annotations

import os
import shutil
import tempfile
import textwrap
from pathlib import Path

import pytest

from hpcds1mpi.measure.campaign_scripts import emit
from hpcds1mpi.measure.campaign_submit import _submit_part, resubmit
from tests.helpers import logging_command
from tests.other_user import as_other_user as as_nobody  # noqa: F401 (test_campaign's too)
from tests.measure.test_campaign_scripts import PLAN, _directives, _pbs_campaign


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


@pytest.fixture
def open_folder():
    """A folder every user may enter and read, root's (pytest's tmp_path is under root's 0700
    folder, closed to nobody)."""
    folder = Path(tempfile.mkdtemp(prefix="hpcds1mpi-fu3-", dir="/tmp"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _slurm_campaign_of_root(folder: Path) -> tuple[Path, dict, Path]:
    """A Slurm campaign root wrote (nobody may read it, not write it), the PATH of an sbatch
    stand-in that logs each submission (and squeue / sacct that list nothing), and the log."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "plan.toml").write_text(PLAN.replace("nodes = [1]", "nodes = [1, 2]"))
    (folder / "cluster.toml").write_text(textwrap.dedent("""
        [clusters.lab.partitions.debug]
        cores_per_node = 2
        memory_gb = 4
        max_nodes = 2
    """))
    emit(str(folder / "plan.toml"), "slurm", str(folder / "camp"),
         cluster_file=str(folder / "cluster.toml"), partition_name="debug")
    log = folder / "sbatch.log"
    log.touch(mode=0o666)
    log.chmod(0o666)  # the stand-in, run as nobody, logs here
    logging_command(folder / "bin", "sbatch", "echo 41", log)
    for name in ("squeue", "sacct"):
        logging_command(folder / "bin", name, "true", folder / "other.log")
    (folder / "other.log").touch(mode=0o666)
    (folder / "other.log").chmod(0o666)
    for path in (folder / "camp").rglob("*"):  # as emitted under any umask: readable by all
        path.chmod(0o755 if path.is_dir() else 0o644)
    (folder / "camp").chmod(0o755)
    return folder / "camp", {"PATH": f"{folder / 'bin'}:/usr/bin:/bin"}, log


@pytest.mark.skipif(os.geteuid() != 0, reason="gives up root in a child to be another user")
def test_a_campaign_another_user_may_only_read_is_refused_before_any_job(open_folder):
    """s34 tester U3: bob's `campaign resubmit` of alice's campaign (readable, not writable)
    submitted its jobs, then failed to record them; they ended FAILED 0:53 with no log. Now
    nothing is submitted: one line says what they could not write and what to do."""
    camp, env, log = _slurm_campaign_of_root(open_folder)
    assert resubmit(camp, env=env, dry_run=True)["parts"]  # imports what the child needs
    kind, line = as_nobody(lambda: resubmit(camp, env=env))
    assert kind == "OutputError", line
    assert line.startswith(f"{camp} (and 3 more): you may not write it (owner root, mode "
                           "drwxr-xr-x), and the campaign's jobs run as you")
    assert f"chmod -R g+w {camp}" in line and line.endswith("nothing was submitted")
    assert as_nobody(lambda: resubmit(camp, env=env, dry_run=True))[0] == "OutputError"  # --dry-run says it too
    assert log.read_text() == ""  # no sbatch ran
    (camp / "logs").chmod(0o777)
    for path in (camp, camp / "telemetry", camp / "parts"):
        path.chmod(0o777)
    assert log.read_text() == ""
    kind, result = as_nobody(lambda: resubmit(camp, env=env))  # writable: submitted as before
    assert kind == "ok", result
    assert result["jobs"] == {1: ["41"], 2: ["41"]} and result["merge"] == "41"
    assert len(log.read_text().splitlines()) == 3


@pytest.mark.skipif(os.geteuid() != 0, reason="gives up root in a child to be another user")
def test_a_logs_folder_the_jobs_cannot_write_is_refused_by_name(open_folder):
    """s34 tester U3: Slurm opens a job's log as the user who submitted it; a logs/ folder that
    user may not write fails every job at start (FAILED 0:53)."""
    camp, env, log = _slurm_campaign_of_root(open_folder)
    for path in (camp, camp / "telemetry", camp / "parts"):
        path.chmod(0o777)
    kind, line = as_nobody(lambda: resubmit(camp, env=env))
    assert kind == "OutputError" and line.startswith(f"{camp / 'logs'}: you may not write it")
    assert log.read_text() == ""


def test_a_moved_campaign_is_refused_before_any_job_by_resubmit_and_submit_sh(tmp_path):
    """s34 tester O2: `mv campnew campmoved; campaign resubmit campmoved` submitted jobs whose
    scripts cd to campnew and log there: FAILED 0:53, or run in whatever campaign stood there.
    resubmit (its --dry-run too) and submit.sh (FU3's item) refuse; no sbatch runs."""
    import subprocess

    from hpcds1mpi.errors import ConfigError

    camp, env, log = _slurm_campaign_of_root(tmp_path / "root")
    moved = camp.rename(tmp_path / "root" / "moved")
    for dry_run in (True, False):
        with pytest.raises(ConfigError, match=f"its scripts were written for {camp} "):
            resubmit(moved, env=env, dry_run=dry_run)
    proc = subprocess.run(["bash", str(moved / "submit.sh")], capture_output=True, text=True,
                          env=env, timeout=120)
    assert proc.returncode != 0 and proc.stdout == "", proc.stdout
    assert f"{moved} was moved or copied: its scripts were written for {camp}" in proc.stderr
    assert proc.stderr.strip().endswith("nothing was submitted"), proc.stderr
    assert log.read_text() == ""  # no sbatch ran
    moved.rename(camp)  # moved back: submitted as before
    proc = subprocess.run(["bash", str(camp / "submit.sh")], capture_output=True, text=True,
                          env=env, timeout=120)
    assert proc.returncode == 0 and len(log.read_text().splitlines()) == 3, proc.stderr


def _slurm_stand_ins(root: Path) -> tuple[dict, Path]:
    """PATH with an sbatch that logs its argv, takes a second and answers job 500, 501, ...,
    and a squeue that lists every job sbatch answered as pending (as Slurm's does at once)."""
    import sys

    bin_dir, log = root / "bin", root / "sbatch.log"
    bin_dir.mkdir()
    (bin_dir / "sbatch").write_text(textwrap.dedent(f"""\
        #!/bin/bash
        sleep 1
        n=$(( $(cat {log} 2>/dev/null | wc -l) + 500 ))
        echo "$n $*" >> {log}
        echo $n
    """))
    # squeue -r -j IDS: each recorded array task of those ids is pending
    (bin_dir / "squeue").write_text(textwrap.dedent(f"""\
        #!/bin/bash
        [[ "$*" == *--name=* ]] && exit 0
        for id in $(cut -d' ' -f1 {log} 2>/dev/null); do
          for i in 0 1 2 3; do echo "${{id}}_$i|PENDING|Priority"; done; echo "$id|PENDING|Priority"
        done
    """))
    for name in ("sbatch", "squeue"):
        (bin_dir / name).chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
    env["PATH"] = f"{bin_dir}:{Path(sys.executable).parent}:/usr/bin:/bin"
    return env, log


def _two_node_campaign(root: Path) -> Path:
    (root / "plan.toml").write_text(PLAN.replace("nodes = [1]", "nodes = [1, 2]"))
    (root / "cluster.toml").write_text(textwrap.dedent("""
        [clusters.lab.partitions.debug]
        cores_per_node = 2
        memory_gb = 4
        max_nodes = 2
    """))
    emit(str(root / "plan.toml"), "slurm", str(root / "camp"),
         cluster_file=str(root / "cluster.toml"), partition_name="debug")
    return root / "camp"


def test_submit_sh_after_a_submission_submits_nothing_again(tmp_path):
    """s39 tester H2: `bash camp/submit.sh` after `--submit` ran its own sbatch lines and
    submitted every part again (two jobs per part writing one shard). It is `resubmit` now:
    the parts still queued are not submitted again."""
    import subprocess

    from hpcds1mpi.measure import campaign as cm
    from tests.helpers import hpcds1mpi_exe

    camp = _two_node_campaign(tmp_path)
    env, log = _slurm_stand_ins(tmp_path)
    resubmit(camp, env=env)  # what --submit runs
    assert len(log.read_text().splitlines()) == 3
    env["PATH"] = f"{Path(hpcds1mpi_exe()).parent}:{env['PATH']}"
    proc = subprocess.run(["bash", str(camp / "submit.sh")], capture_output=True, text=True,
                          env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "nothing to submit" in proc.stdout
    assert len(log.read_text().splitlines()) == 3  # no second job of any part
    assert len(cm.read_manifest(camp)["submissions"]) == 3


def test_two_resubmits_at_once_submit_each_part_once_and_record_every_job(tmp_path):
    """s39 tester H2: two `campaign resubmit` at once both submitted, and the second's
    manifest dropped the first's records (a duplicate part and a merge recorded nowhere).
    Under the manifest's lock the second waits, then finds the first one's jobs queued."""
    import subprocess

    from hpcds1mpi.measure import campaign as cm
    from tests.helpers import hpcds1mpi_exe

    camp = _two_node_campaign(tmp_path)
    env, log = _slurm_stand_ins(tmp_path)
    argv = [hpcds1mpi_exe(), "campaign", "resubmit", str(camp)]
    procs = [subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=env) for _ in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    submitted = [line.split()[0] for line in log.read_text().splitlines()]
    assert len(submitted) == 3, log.read_text()  # n1, n2, the merge: once each
    recorded = [s["job_id"] for s in cm.read_manifest(camp)["submissions"]]
    assert sorted(recorded) == sorted(submitted)  # no job recorded nowhere
    assert sum("nothing to submit" in out for out, _ in outs) == 1
