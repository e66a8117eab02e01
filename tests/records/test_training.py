"""TrainingData: read, check (bad data refused in one line), merge, columns kept."""

from __future__ import annotations

import os
import re

import numpy as np
import pandas as pd
import pytest

from hpcds1mpi.errors import DataError, TelemetryError
from hpcds1mpi.kernels.base import WORK_COLUMNS
from hpcds1mpi.records import telemetry
from hpcds1mpi.records.training import TrainingData, merge_runs, read_frames
from tests.surrogates.test_bundle import make_runs


def with_work(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with the kernels' work-model columns a sweep records."""
    size = frame["size"].to_numpy(float)
    return frame.assign(work_flops=2 * size ** 3, work_bytes=24 * size ** 2,
                        comm_messages=frame["ranks"] - 1.0, comm_bytes=8 * size,
                        mem_bytes_per_rank=24 * size ** 2 / frame["ranks"])


@pytest.mark.parametrize("mutate, message", [
    (lambda f: f.iloc[0:0], "empty"),
    (lambda f: f.assign(status="failed"), "no successful runs"),
    (lambda f: f.assign(runtime_s=np.where(np.arange(len(f)) % 7 == 0, np.nan, f["runtime_s"])),
     "NaN"),
    (lambda f: f.assign(bogus_column=1), "unknown column"),
    (lambda f: f.assign(machine_id=np.where(np.arange(len(f)) % 2 == 0, "a", "b")), "machines"),
    (lambda f: f.drop(columns=["status"]), "no 'status' column"),
    (lambda f: f.assign(status=np.where(np.arange(len(f)) < 3, "ok", "failed")), "at least 4"),
])
def test_bad_training_data_is_refused(mutate, message):
    with pytest.raises(DataError, match=message):
        TrainingData.from_frame(mutate(make_runs()))


def test_a_job_table_whose_log_records_no_status_is_refused_saying_so():
    # Was: "no successful runs (statuses: {})" for ALCF Theta's 23,911 jobs, every one unknown.
    jobs = make_runs().drop(columns=["run_id", "machine_id"])
    n = len(jobs)
    unknown = jobs.assign(status=pd.array([pd.NA] * n, dtype="string"))
    with pytest.raises(DataError, match=rf"all {n} jobs have an unknown status \(the log records "
                                        r"none.*set the job table's status to 'ok'"):
        TrainingData.from_frame(unknown)
    some = jobs.assign(status=pd.array(["failed"] * 3 + [pd.NA] * (n - 3), dtype="string"))
    with pytest.raises(DataError, match=re.escape(f"(statuses: {{'failed': 3}}, and {n - 3} "
                                                  "unknown)")):
        TrainingData.from_frame(some)


def test_machine_choice_selects_runs():
    frame = pd.concat([make_runs(machine="a"), make_runs(machine="b", seed=3)])
    data = TrainingData.from_frame(frame, machine="b")
    assert len(data) == len(make_runs()) and set(data.frame["machine_id"]) == {"b"}
    assert data.machine_ids == {"b"}
    assert list(data.frame.index) == list(range(len(data)))
    with pytest.raises(DataError, match="no runs from machine 'c'"):
        TrainingData.from_frame(frame, machine="c")


def test_job_table_zero_runtime_jobs_left_out_and_counted():
    jobs = make_runs().drop(columns=["run_id", "machine_id"])
    jobs.loc[3, "runtime_s"] = 0.0
    data = TrainingData.from_frame(jobs)
    assert len(data) == len(jobs) - 1
    assert data.dropped_zero_runtime_jobs == 1
    assert data.kind == "jobs"
    with pytest.raises(DataError, match="NaN or non-positive"):
        TrainingData.from_frame(make_runs().assign(runtime_s=0.0))  # telemetry: refused
    runs = make_runs()
    runs.loc[3, "runtime_s"] = 0.0
    with pytest.raises(DataError, match="1 ok run"):  # even one: a broken sweep file
        TrainingData.from_frame(runs)


def test_energy_from_average_power_when_no_energy_was_measured():
    runs = make_runs().assign(energy_j=np.nan)
    data = TrainingData.from_frame(runs)
    expected = runs["avg_power_w"] * runs["runtime_s"]
    np.testing.assert_allclose(data.frame["energy_j"], expected)
    assert runs["energy_j"].isna().all()  # the caller's frame is left alone


def test_power_a_job_log_predicted_is_never_trained_on_as_measured():
    from hpcds1mpi.records.ingest import ENERGY_PREDICTED

    jobs = make_runs().drop(columns=["run_id", "machine_id"])
    jobs["energy_source"] = ""
    jobs.loc[:4, "energy_source"] = ENERGY_PREDICTED
    data = TrainingData.from_frame(jobs)
    predicted = data.frame["energy_source"] == ENERGY_PREDICTED
    assert predicted.sum() == 5
    assert data.frame.loc[predicted, ["energy_j", "avg_power_w"]].isna().all().all()
    # Measured rows keep theirs, and the energy is not rebuilt from the predicted power.
    measured = jobs.loc[5:, "energy_j"].reset_index(drop=True)
    np.testing.assert_array_equal(data.frame.loc[~predicted, "energy_j"].reset_index(drop=True),
                                  measured)
    assert jobs.loc[:4, "energy_j"].notna().all()  # the caller's frame is left alone


def test_kept_mark_of_a_bundle_is_dropped():
    data = TrainingData.from_frame(make_runs().assign(kept=True))
    assert "kept" not in data.frame.columns


def test_read_telemetry_and_jobs_keeps_work_columns_and_records_sources(tmp_path):
    runs = with_work(make_runs())
    tele = tmp_path / "t.h5"
    telemetry.append(tele, runs.to_dict("records"))
    jobs = tmp_path / "jobs.parquet"
    make_runs().drop(columns=["run_id", "machine_id"]).head(10).to_parquet(jobs)
    data = TrainingData.read([str(tele)], [str(jobs)])
    assert data.kind == "telemetry" and data.sources == (str(tele), str(jobs))
    assert len(data) == len(runs) + 10
    for col in WORK_COLUMNS:
        np.testing.assert_allclose(data.frame[col].to_numpy()[: len(runs)], runs[col])
    only_jobs = TrainingData.read([], [str(jobs)])
    assert only_jobs.kind == "jobs" and "run_id" not in only_jobs.frame.columns


def test_a_run_in_two_telemetry_files_is_read_once_and_said(tmp_path):
    """s47 tester M8: a file given twice, a copy, or a shard beside its merge trained every
    run twice ("measured (2 runs at this size)" from one run), no word. The same record is
    one row (learn's and merge's rule); another measurement of a configuration stays two."""
    import shutil

    runs = make_runs().assign(started_at=1.7e9)
    first = tmp_path / "a.h5"
    telemetry.append(first, runs.to_dict("records"))
    shutil.copy(first, tmp_path / "copy.h5")
    for files in ([first, first], [first, tmp_path / "copy.h5"]):
        frame = read_frames([str(f) for f in files])
        assert len(frame) == len(runs)
        assert frame.attrs["left_out"] == [
            f"{len(runs)} run(s) read twice, the same record in two --telemetry files (a file "
            "given twice, a copy, a shard beside its merge): each counted once"]
        assert len(TrainingData.read([str(f) for f in files])) == len(runs)
    later = tmp_path / "later.h5"  # the same plan measured again: both measurements kept
    telemetry.append(later, runs.assign(started_at=1.8e9).head(5).to_dict("records"))
    again = read_frames([str(first), str(later)])
    assert len(again) == len(runs) + 5 and again.attrs["left_out"] == []


def test_a_job_table_under_a_folder_named_tilde_is_read_there(tmp_path, monkeypatch):
    """``--jobs=~/j.parquet`` (bash leaves the ``~``) is the file in folder ``./~``, not in
    $HOME, which pandas would read instead (s39 tester D4)."""
    home = tmp_path / "home"
    (home).mkdir()
    (tmp_path / "~").mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(tmp_path)
    jobs = make_runs().drop(columns=["run_id", "machine_id"])
    jobs.head(10).to_parquet(tmp_path / "~" / "j.parquet")
    jobs.head(3).to_parquet(home / "j.parquet")  # what pandas would read
    assert len(read_frames((), ("~/j.parquet",))) == 10


def test_read_refuses_missing_or_wrong_files(tmp_path):
    with pytest.raises(DataError, match="no training data"):
        read_frames((), ())
    with pytest.raises(DataError, match="not found"):
        read_frames((), (str(tmp_path / "none.parquet"),))
    (tmp_path / "bad.parquet").write_text("no parquet")
    with pytest.raises(TelemetryError, match="not a parquet job table"):
        read_frames((), (str(tmp_path / "bad.parquet"),))


@pytest.mark.timeout(20)
def test_a_job_table_that_is_a_fifo_is_refused_not_waited_on(tmp_path):
    """Was: train / learn --jobs FIFO hung in read_parquet (s47 tester M3)."""
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(DataError, match="fifo: a FIFO, not a regular file; give the job table"):
        read_frames((), (str(tmp_path / "fifo"),))


def test_merge_replaces_remeasured_runs_keeps_work_columns_and_counts():
    runs = with_work(make_runs())
    old = TrainingData.from_frame(runs[runs["size"] < 96], sources=["a.h5"])
    again = runs[runs["size"] == 64].head(3).assign(runtime_s=123.0)
    new = pd.concat([runs[runs["size"] == 96], again])
    merged = old.merge(new, sources=["b.h5"])
    assert merged.replaced == 3
    assert len(merged) == len(runs)
    assert merged.sources == ("a.h5", "b.h5")
    ids = set(again["run_id"])
    assert (merged.frame.loc[merged.frame["run_id"].isin(ids), "runtime_s"] == 123.0).all()
    for col in WORK_COLUMNS:
        assert merged.frame[col].notna().all()


def test_merge_adds_fewer_runs_than_a_model_needs():
    runs = make_runs()
    old = TrainingData.from_frame(runs[runs["size"] < 96])
    merged = old.merge(runs[runs["size"] == 96].head(2))
    assert len(merged) == len(old) + 2 and merged.replaced == 0


def test_merge_refuses_runs_of_another_machine():
    old = TrainingData.from_frame(make_runs(machine="a"))
    with pytest.raises(DataError, match="new runs come from machine"):
        old.merge(make_runs(machine="b").head(4))
    with pytest.raises(DataError, match="new runs come from machine"):
        old.merge(make_runs(machine="b").head(4), machines={"a"})
    jobs = TrainingData.from_frame(make_runs().drop(columns=["run_id", "machine_id"]))
    with pytest.raises(DataError, match="new runs come from 2 machines"):
        jobs.merge(pd.concat([make_runs(machine="a").head(2), make_runs(machine="b").head(2)]))


def test_merge_runs_without_run_ids_appends():
    jobs = make_runs().drop(columns=["run_id", "machine_id"])
    assert len(merge_runs(jobs, jobs)) == 2 * len(jobs)


@pytest.mark.parametrize("column, value, match", [
    ("size", -5, "size -5"), ("size", np.nan, "size nan"), ("nodes", 0, "nodes 0"),
    ("threads", 1.5, "threads 1.5"), ("device", "tpu", "device 'tpu'"),
    ("precision", "fp16", "precision 'fp16'"), ("status", "exploded", "status 'exploded'"),
])
def test_rows_no_run_can_have_are_refused_naming_the_column(column, value, match):
    frame = make_runs().copy()
    if isinstance(value, float):
        frame[column] = frame[column].astype(float)
    frame.loc[frame.index[2], column] = value
    with pytest.raises(DataError, match=match):
        TrainingData.from_frame(frame)


def test_a_job_table_may_leave_out_the_size_but_not_give_a_bad_one():
    jobs = make_runs().drop(columns=["run_id"])
    jobs["size"] = np.nan  # job logs carry no problem size
    TrainingData.from_frame(jobs)
    jobs.loc[jobs.index[0], "size"] = -1.0
    with pytest.raises(DataError, match="size -1.0"):
        TrainingData.from_frame(jobs)


def test_a_programs_runs_carry_which_runtime_its_telemetry_measured(tmp_path):
    """The telemetry's ``launch`` attribute says what runtime_s is; read_frames puts it on
    the program's rows (runtime_source), which train accepts; kernel telemetry and job tables
    get no such column; telemetry without the attribute is "unknown"."""
    import json as json_mod

    from tests.helpers import run_cli

    app = tmp_path / "app.sh"
    app.write_text("#!/bin/sh\necho \"own time: 0.0$1 s\"\n")
    app.chmod(0o755)
    common = ["--sizes", "1,2", "--threads", "1,2", "--min-repeats", "1", "--max-repeats", "1",
              "--min-time", "0", "--no-progress"]
    res = run_cli(["sweep", "--command", f"{app} {{size}}", "--label", "app", *common,
                   "--time-regex", r"own time: ([0-9.]+) s", "--out", "own.h5"], cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    frame = read_frames([str(tmp_path / "own.h5")])
    assert set(frame["runtime_source"]) == {"program's own time (--time-regex own time: "
                                            "([0-9.]+) s)"}
    assert len(TrainingData.from_frame(frame).frame) == 4
    # the attribute itself, as the sweep wrote it
    launch = json_mod.loads(telemetry.load(tmp_path / "own.h5").attrs["launch"])
    assert frame["runtime_source"].iloc[0] == launch["runtime"]
    # telemetry without the attribute (older files): unknown, not a guess
    rows = telemetry.read_runs(tmp_path / "own.h5").to_dict("records")
    telemetry.append(tmp_path / "old.h5", rows)
    assert set(read_frames([str(tmp_path / "old.h5")])["runtime_source"]) == {"unknown"}
    # kernel runs: no column (nothing to say), the frame as read_runs gives it
    telemetry.append(tmp_path / "kernel.h5", make_runs().to_dict("records"))
    kernel = read_frames([str(tmp_path / "kernel.h5")])
    assert "runtime_source" not in kernel.columns
    # every run carries its machine's CPU (s31 tester Q4); none where no machines row names one
    assert kernel["cpu_model"].isna().all() and kernel["cpu_signature"].isna().all()
    pd.testing.assert_frame_equal(kernel.drop(columns=["cpu_model", "cpu_signature"]),
                                  telemetry.read_runs(tmp_path / "kernel.h5"))


def test_runs_fingerprinted_from_the_launcher_are_refused_with_the_fix(tmp_path):
    # Program sweeps fingerprinted their launcher ("mpiexec Version: 5.0.2"), so their runs of
    # the bundle's own machine came from "another machine": the refusal says why and what to do.
    def stored(name: str, machine: str, library: str) -> str:
        path = tmp_path / name
        with telemetry.TelemetryWriter(path) as writer:
            writer.machine({"machine_id": machine, "mpi_library": library})
        telemetry.append(path, make_runs(machine=machine).head(4).to_dict("records"))
        return str(path)

    old = TrainingData.from_frame(make_runs(machine="kernels"))
    launcher = read_frames([stored("old.h5", "program", "mpiexec Version: 5.0.2")])
    assert launcher.attrs["mpi_libraries"] == {"program": "mpiexec Version: 5.0.2"}
    with pytest.raises(DataError, match=r"^new runs come from machine\(s\) program "
                                        r"\(partition cpu\) but .*"
                                        r"program's fingerprint names the launcher \('mpiexec "
                                        r"Version: 5.0.2'\).* sweep --command"):
        old.merge(launcher)
    mixed = pd.concat([make_runs(machine="kernels"), launcher])
    mixed.attrs = launcher.attrs  # as read_frames gives them for both files
    with pytest.raises(DataError, match="mixes 2 machines .*names the launcher"):
        TrainingData.from_frame(mixed)
    # Another MPI library is another machine: refused as before, without the note.
    library = read_frames([stored("ompi.h5", "ompi", "Open MPI v4.1.4, package: Debian")])
    with pytest.raises(DataError) as refused:
        old.merge(library)
    assert "never mixed" in str(refused.value) and "launcher" not in str(refused.value)


def jobs_table() -> pd.DataFrame:
    """A job table (no run_id, no machine_id) of 84 ok jobs and 12 OOMs."""
    return make_runs().drop(columns=["run_id", "machine_id"])


def test_many_sub_second_jobs_are_left_out_and_counted_not_refused():
    """Slurm records 0 s for a job under a second; over 5 % of them (3 of 20 in a real sacct
    table) refused the table with 'fix or drop those rows', which no option could do."""
    jobs = jobs_table()
    ok = jobs.index[jobs["status"] == "ok"]
    jobs.loc[ok[:20], "runtime_s"] = 0.0  # half the ok jobs
    jobs.loc[ok[20:22], "runtime_s"] = np.nan
    data = TrainingData.from_frame(jobs)
    assert len(data) == len(jobs) - 22 and data.dropped_zero_runtime_jobs == 22
    assert (data.runtime_gaps.zero, data.runtime_gaps.missing) == (20, 2)
    assert data.runtime_gaps.describe() == "20 that ran under 1 s (0 s recorded) and 2 with none"
    assert (pd.to_numeric(data.frame.loc[data.frame["status"] == "ok", "runtime_s"]) > 0).all()


def test_a_job_table_without_run_times_names_the_missing_column():
    """sacct -P's default format has no Elapsed: the refusal said '16 ok run(s) have a NaN or
    non-positive runtime_s target; fix or drop those rows'."""
    with pytest.raises(DataError) as err:
        TrainingData.from_frame(jobs_table().assign(runtime_s=np.nan))
    assert str(err.value).startswith("the job table has no run times: none of its 84 ok job(s) "
                                     "has a runtime_s (the log had no run-time column")
    assert "ElapsedRaw" in str(err.value) and "fix or drop" not in str(err.value)


def test_too_few_jobs_with_a_run_time_says_why_and_what_to_do():
    jobs = jobs_table()
    ok = jobs.index[jobs["status"] == "ok"]
    jobs.loc[ok[3:], "runtime_s"] = 0.0
    with pytest.raises(DataError) as err:
        TrainingData.from_frame(jobs)
    assert str(err.value).startswith(
        "only 3 of the job table's 84 ok job(s) have a run time to learn from, after leaving out "
        "81 that ran under 1 s (0 s recorded); a model needs at least 4: give a longer job "
        "history")


def test_sweep_runs_without_a_runtime_are_refused_even_beside_job_rows():
    """A table of sweep runs and job rows: the job rows' 0 s are dropped, a sweep run's is a
    damaged file and is refused, whichever rows come first."""
    runs = make_runs().assign(machine_id=None)  # one machine: job rows carry none
    jobs = jobs_table()
    jobs.loc[jobs.index[jobs["status"] == "ok"][:5], "runtime_s"] = 0.0
    data = TrainingData.from_frame(pd.concat([runs, jobs], ignore_index=True))
    assert data.runtime_gaps.zero == 5
    runs.loc[3, "runtime_s"] = 0.0
    with pytest.raises(DataError, match=r"1 ok run\(s\) of a sweep .* run_id stencil-32-1-2-2"):
        TrainingData.from_frame(pd.concat([jobs, runs], ignore_index=True))


@pytest.mark.parametrize("column, value, match", [
    ("runtime_s", 1e300, "runtime_s 1e+300: run times are finite, >= 0 s and at most a year"),
    ("energy_j", -5.0, "energy_j -5.0: energies are finite, >= 0 J"),
    ("ranks_per_node", 10**15, "ranks_per_node 1000000000000000: ranks_per_node must be "
                               "whole numbers 1..10^6"),
    ("size", 32.5, "size 32.5: sizes must be whole numbers 1..2^40"),
    ("size", 2.0**41, "size 2199023255552"),
    ("peak_rss_mb", -1.0, "peak_rss_mb -1.0"),
])
def test_values_past_the_input_rules_are_refused(column, value, match):
    """train took runtime 1e300 (overflow warnings), energy -5 J, 10^15 ranks per node."""
    frame = make_runs().copy()
    if isinstance(value, float):
        frame[column] = frame[column].astype(float)
    frame.loc[frame.index[2], column] = value
    with pytest.raises(DataError, match=match.replace("+", r"\+").replace("^", r"\^")):
        TrainingData.from_frame(frame)


def test_a_job_table_s_sizes_need_not_be_whole_but_in_range():
    jobs = make_runs().drop(columns=["run_id"])
    jobs["size"] = 32.5
    TrainingData.from_frame(jobs)
    jobs.loc[jobs.index[0], "energy_j"] = np.inf
    with pytest.raises(DataError, match="energy_j inf"):
        TrainingData.from_frame(jobs)


def test_runs_without_a_runtime_say_that_resume_measures_them_again():
    """`sweep --resume` re-measures an ok row without a runtime (measure/driver.settled)."""
    frame = make_runs().assign(runtime_s=np.nan)
    with pytest.raises(DataError, match=r"restore it from a copy.*--resume: it re-measures them"):
        TrainingData.from_frame(frame)


def test_a_sweep_row_with_a_label_sweep_would_refuse_is_refused():
    """sweep --label refuses '<img src=x onerror=alert(1)>' and control characters, but a
    label edited into a telemetry file was trained on and served (s26 tester n; a carried
    item: control characters in workload names)."""
    import pandas as pd

    from hpcds1mpi.records.training import impossible_rows

    frame = pd.DataFrame({"run_id": ["a", "b", ""], "workload": [
        "my_app-2.1+x", "<img src=x onerror=alert(1)>", "job name with spaces"]})
    line = impossible_rows(frame)
    assert line is not None and "1 sweep row(s) with workload '<img src=x" in line
    frame.loc[1, "workload"] = "gemm\x1b[31m"
    assert "\\x1b" in impossible_rows(frame)  # said escaped, never printed raw
    frame.loc[1, "workload"] = "gemm"
    assert impossible_rows(frame) is None  # a job log's name (no run_id) may be anything


def test_a_kernels_runs_and_a_programs_under_one_name_are_refused():
    """Tester S, s27 #1: a `sweep --command ... --label stencil` resumed into a stencil file was
    trained on as one workload, and recommend answered a runtime of neither program."""
    kernel = make_runs().assign(kind="kernel", command="")
    program = kernel[kernel["workload"] == "stencil"].assign(
        kind="external", command="mpiexec -n 1 ./app 64", run_id=lambda f: "p-" + f["run_id"])
    with pytest.raises(DataError, match="training data holds runs of workload 'stencil' from the "
                                        "kernel stencil and from a --command program"):
        TrainingData.from_frame(pd.concat([kernel, program], ignore_index=True))
    assert len(TrainingData.from_frame(kernel)) == len(kernel)
