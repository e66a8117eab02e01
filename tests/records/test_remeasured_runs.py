"""Merging new runs into training rows: a configuration measured again keeps both rows, a record
read again (or retried by its sweep) keeps the newest, disagreeing repeats are named."""

from __future__ import annotations

import numpy as np
import pandas as pd

from hpcds1mpi.records import telemetry
from hpcds1mpi.records.remeasured_runs import merge_runs
from hpcds1mpi.records.training import TrainingData, read_frames
from tests.surrogates.test_bundle import make_runs

SWEEP_START = 1.7964e9


def swept(runs: pd.DataFrame, sweep_id: str = "sweep", start: float = SWEEP_START,
          noise: float = 0.05) -> pd.DataFrame:
    """``runs`` as a sweep records them: its id, each run's start, the repeats' noise."""
    return runs.assign(sweep_id=sweep_id, started_at=start + np.arange(len(runs)), noise=noise)


def write(path, frame: pd.DataFrame) -> str:
    telemetry.append(path, frame.to_dict("records"))
    return str(path)


def test_a_configuration_measured_again_keeps_both_measurements(tmp_path):
    # Was: tune's three runs replaced the sweep's three ("Added 0 new run(s) (3 read, 3
    # replaced an old run)"), so one noisy run at 2.2x the sweep's time decided the pick.
    runs = swept(make_runs())
    old = TrainingData.read([write(tmp_path / "a.h5", runs)])
    again = swept(runs.head(3), "tune", SWEEP_START + 1e4, noise=0.17)
    again = again.assign(runtime_s=again["runtime_s"] * 2.2)
    merged = old.merge(read_frames([write(tmp_path / "t.h5", again)]))
    assert len(merged) == len(runs) + 3
    assert (merged.replaced, merged.repeated) == (0, 3)
    first = merged.frame[merged.frame["run_id"] == runs["run_id"].iloc[0]]
    np.testing.assert_allclose(sorted(first["runtime_s"]),
                               [runs["runtime_s"].iloc[0], 2.2 * runs["runtime_s"].iloc[0]])


def test_learning_the_same_file_again_adds_nothing(tmp_path):
    runs = swept(make_runs())
    tune = swept(runs.head(3), "tune", SWEEP_START + 1e4)
    files = [write(tmp_path / "a.h5", runs), write(tmp_path / "t.h5", tune)]
    once = TrainingData.read(files[:1]).merge(read_frames(files[1:]))
    twice = once.merge(read_frames(files))
    assert len(twice) == len(once) == len(runs) + 3
    assert (twice.replaced, twice.repeated, twice.disagreements) == (len(runs) + 3, 0, ())


def test_a_crashed_run_retried_by_its_sweep_replaces_it():
    runs = swept(make_runs())
    crashed = runs.head(1).assign(status="crashed", runtime_s=np.nan)
    old = TrainingData.from_frame(pd.concat([crashed, runs.iloc[1:]], ignore_index=True))
    retry = runs.head(1).assign(started_at=SWEEP_START + 1e4)
    merged = old.merge(retry)
    assert len(merged) == len(runs) and (merged.replaced, merged.repeated) == (1, 0)
    assert merged.frame.loc[merged.frame["run_id"] == retry["run_id"].iloc[0],
                            "status"].tolist() == ["ok"]
    # the same failure seen by another sweep is another measurement: a crash risk, kept
    other = old.merge(retry.assign(sweep_id="another"))
    assert len(other) == len(runs) + 1 and other.repeated == 1


def test_rows_without_a_start_cannot_tell_a_repeat_and_keep_the_newest():
    runs = make_runs()  # a table from before started_at was recorded
    out = merge_runs(runs, runs.head(3).assign(runtime_s=1.0))
    assert len(out.frame) == len(runs) and (out.replaced, out.repeated) == (3, 0)


def test_repeats_that_disagree_beyond_their_noise_are_named_one_line_each():
    runs = swept(make_runs().head(8).assign(workload="cp2k", size=250, runtime_s=4.26),
                 noise=0.05)
    later = swept(runs.head(3), "tune", SWEEP_START + 1e4, noise=0.17)
    # 2.2x apart; 8 % with no noise measured (one repeat: MIN_SPREAD); 13 % within 17 % noise
    later = later.assign(runtime_s=[9.45, 4.6, 4.8], noise=[0.17, np.nan, 0.17])
    out = merge_runs(runs, later)
    assert out.repeated == 3 and len(out.disagreements) == 1
    line = out.disagreements[0]
    assert line.startswith("cp2k size 250, 1 node x 1 rank x 1 thread: now 9.45 s, before "
                           "4.26 s (2.2x apart, beyond the noise either measured: 17 % now, "
                           "5 % before); both kept")
    assert "\n" not in line and "measure it again" in line


def test_job_rows_are_all_kept():
    jobs = make_runs().drop(columns=["run_id", "machine_id"])
    out = merge_runs(jobs, jobs)
    assert len(out.frame) == 2 * len(jobs) and (out.replaced, out.repeated) == (0, 0)
