"""Slurm's field formats and job states."""

from __future__ import annotations

import pandas as pd
import pytest

from hpcds1mpi.config import STATUSES
from hpcds1mpi.records.ingest.schema import FileReport
from hpcds1mpi.records.ingest.slurm_fields import (BARE_BYTES, BARE_MIB, NOT_FINISHED,
                                                   SLURM_STATUS, deadline_unstarted,
                                                   gpus_from_tres, int_or_none,
                                                   limit_or_none, oom_from_memory_kill,
                                                   parse_duration, parse_exit,
                                                   parse_memory_bytes, parse_time_limit,
                                                   parse_tres, slurm_status)


def test_job_states_map_onto_the_one_status_vocabulary_only():
    assert set(SLURM_STATUS.values()) <= set(STATUSES)
    assert not set(SLURM_STATUS) & NOT_FINISHED
    assert slurm_status("CANCELLED by 0") == "cancelled"
    assert slurm_status("OUT_OF_MEMORY") == "oom" and slurm_status("completed") == "ok"
    assert slurm_status("RUNNING") is None
    with pytest.raises(ValueError, match="unknown job state"):
        slurm_status("EXPLODED")


@pytest.mark.parametrize("text, seconds", [
    ("1-02:03:04", 93784.0), ("02:03:04", 7384.0), ("03:04", 184.0), ("04.5", 4.5),
    ("UNLIMITED", None), ("", None), (None, None),
])
def test_durations(text, seconds):
    assert parse_duration(text) == seconds


def test_memory_tres_exit_and_numbers():
    assert parse_memory_bytes("76628K") == 76628 * 1024
    assert parse_memory_bytes("2G") == 2 * 1024**3
    assert parse_memory_bytes("4000Mn") == 4000 * 1024**2
    tres = parse_tres("billing=2,cpu=2,mem=8000M,node=2,gres/gpu:a100=3,gres/gpu:v100=1")
    assert tres["mem"] == 8000 and tres["node"] == 2 and gpus_from_tres(tres) == 4
    assert gpus_from_tres(parse_tres("gres/gpu=2,gres/gpu:a100=2")) == 2
    assert parse_exit("3:9") == (3, 9) and parse_exit("") == (None, None)
    assert int_or_none(" 7 ") == 7 and int_or_none("") is None
    for bad in (lambda: parse_memory_bytes("lots"), lambda: parse_exit("x"),
                lambda: int_or_none("seven"), lambda: parse_duration("1::2")):
        with pytest.raises(ValueError):
            bad()


@pytest.mark.parametrize("text", ["nan", "inf", "-5", "1e9", "00:nan", "-1-00:00:01", "x-01:00"])
def test_durations_that_are_not_slurm_durations_are_malformed(text):
    with pytest.raises(ValueError, match="bad duration"):
        parse_duration(text)


def test_counts_and_tres_refuse_nan_and_infinity():
    from hpcds1mpi.records.ingest.slurm_fields import int_or_none

    for text in ("nan", "inf", "-inf"):
        with pytest.raises(ValueError, match="bad number"):
            int_or_none(text)
    with pytest.raises(ValueError, match="bad TRES count"):
        parse_tres("cpu=inf,node=1")
    assert parse_duration("1-02:03:04.5") == 86400 + 7384.5 and parse_tres("cpu=x") == {}


def test_a_memory_number_without_a_unit_counts_what_the_field_counts():
    """sacct --noconvert prints MaxRSS in bytes without a unit (3379200 = 3300K, checked on
    Slurm 22.05); it was read as MiB, 3.5 TB. TRES mem= counts MiB; elsewhere (ReqMem) a bare
    number other than 0 is not read."""
    assert parse_memory_bytes("3379200", BARE_BYTES) == 3379200
    assert parse_memory_bytes("3300K", BARE_BYTES) == 3300 * 1024
    assert parse_memory_bytes("1000", BARE_MIB) == 1000 * 1024**2
    assert parse_tres("cpu=1,mem=1000")["mem"] == 1000
    assert parse_memory_bytes("0") == 0
    with pytest.raises(ValueError, match="memory without a unit"):
        parse_memory_bytes("1000")


def test_backfills_365_days_is_no_limit():
    report = FileReport("x", "sacct-p")
    assert limit_or_none(365 * 86400.0, report) is None
    assert limit_or_none(364 * 86400.0, report) == 364 * 86400.0
    assert limit_or_none(None, report) is None
    assert sum(report.notes.values()) == 1


def test_over_memory_kill_needs_signal_9_and_the_peak_at_the_request():
    report = FileReport("x", "sacct-json")
    # job 7 of the captures: --mem=50M, MaxRSS 52584K, killed by signal 9
    assert oom_from_memory_kill("failed", [9], 52584 / 1024, 0.05, 1, report) == "oom"
    assert oom_from_memory_kill("failed", [15], 52584 / 1024, 0.05, 1, report) == "failed"
    assert oom_from_memory_kill("failed", [None, 9], 10.0, 0.05, 1, report) == "failed"
    assert oom_from_memory_kill("ok", [9], 60.0, 0.05, 1, report) == "ok"
    assert sum(report.notes.values()) == 1


@pytest.mark.parametrize("text, seconds, bare", [
    ("60", 3600.0, True),  # s37 tester J8: read as 60 s; sbatch -t 60 is one hour
    ("10:30", 630.0, False), ("01:00:00", 3600.0, False), ("2-12", 216000.0, False),
    ("2-12:30", 217800.0, False), ("7-00:00:00", 604800.0, False), ("UNLIMITED", None, False),
])
def test_a_time_limit_is_read_in_slurms_time_syntax(text, seconds, bare):
    assert parse_time_limit(text) == (seconds, bare)


@pytest.mark.parametrize("tasks, count", [
    ("1-5%2", 5), ("1,3,8-9", 4), ("0-10:5", 3), ("7", 1), ("x", None), ("5-1", None),
])
def test_array_task_count(tasks, count):
    """s37 tester J7: how many tasks a pending array's one sacct line stands for."""
    from hpcds1mpi.records.ingest.slurm_fields import array_task_count

    assert array_task_count(tasks) == count


def test_over_memory_kill_compares_mib_with_mib():
    """The peak (``peak_rss_mb``, MiB) at the request (50M: 50 MiB, 0.05 of Slurm's GB) is oom;
    just below it is not, per node."""
    report = FileReport("x", "sacct-p")
    assert oom_from_memory_kill("failed", [9], 50.0, 0.05, 1, report) == "oom"
    assert oom_from_memory_kill("failed", [9], 49.9, 0.05, 1, report) == "failed"
    assert oom_from_memory_kill("failed", [9], 25.0, 0.05, 2, report) == "oom"


def test_a_deadline_job_never_started_only_without_a_start_or_elapsed_time():
    """s48 tester P6: Slurm ends a pending job whose --deadline passed as DEADLINE, Start None,
    no elapsed time; one killed at its deadline while running ran."""
    end = pd.Timestamp("2026-12-07T17:22:27")
    assert deadline_unstarted("DEADLINE", None, end, 0.0)
    assert deadline_unstarted("DEADLINE", end, end, None)
    assert not deadline_unstarted("DEADLINE", end - pd.Timedelta(seconds=60), end, 60.0)
    assert not deadline_unstarted("TIMEOUT", None, end, 0.0)
    assert not deadline_unstarted("CANCELLED by 0", None, end, 0.0)
