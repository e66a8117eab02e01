"""PM100 (both generations) and Adastra parquet job tables, and the synthetic generator."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from hpcds1mpi.errors import IngestError
from hpcds1mpi.records.ingest import detect_kind, read_job_log
from tests.records.ingest.captures import by_id


def _pm100_frame(generation: str) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    n = 6
    df = pd.DataFrame({
        "job_id": np.arange(1000, 1000 + n),
        "user_id": [7, 7, 8, 9, 9, 10],
        "partition": ["m100_usr_prod"] * n,
        "num_nodes_req": [1, 2, 4, 1, 1, 2],
        "num_nodes_alloc": [1, 2, 4, 1, 1, 2],
        "num_gpus_req": [4, 8, 16, 0, 0, 8],
        "num_gpus_alloc": [4, 8, 16, 0, 0, 8],
        "mem_req": [240000, 480000, 960000, 8000, 8000, 480000],
        "num_tasks": [4, 8, 16, 32, 1, 8],
        "cores_per_task": [8, 4, 2, 1, 1, 4],
        "submit_time": pd.date_range("2020-05-01", periods=n, freq="h"),
        "start_time": pd.date_range("2020-05-01 00:10", periods=n, freq="h"),
        "end_time": pd.date_range("2020-05-01 00:40", periods=n, freq="h"),
        "run_time": [1800, 1800, 1800, 1800, -5, 1800],
        "time_limit": [60, 60, 120, 30, 30, 60],
        "job_state": ["COMPLETED", "FAILED", "TIMEOUT", "OUT_OF_MEMORY", "COMPLETED", "RUNNING"],
    })
    cores = np.array([32, 64, 128, 32, 1, 64])
    power = [list(rng.uniform(800, 1200, 90)) for _ in range(n)]
    power[3] = []  # a job with no power samples: energy missing, job kept
    if generation == "new":
        df["num_cores_req"] = cores
        df["num_cores_alloc"] = cores
        df["node_power_consumption"] = power
        df["cpu_power_consumption"] = power
        df["mem_power_consumption"] = power
    else:
        df["num_cpus_req"] = cores
        df["num_cpus_alloc"] = cores
        df["power_consumption"] = power
    return df


@pytest.mark.parametrize("generation", ["new", "old"])
def test_pm100_both_column_generations(tmp_path, generation):
    src = _pm100_frame(generation)
    path = tmp_path / f"pm100-{generation}.parquet"
    src.to_parquet(path)
    assert detect_kind(path) == "pm100"
    df, report = read_job_log(path)
    assert report.dropped == {"missing or negative run_time": 1,
                              "not finished (pending/running)": 1}
    assert report.notes == {"no power samples (energy missing)": 1}
    jobs = by_id(df)
    first = jobs["1000"]
    power = src.filter(like="power_consumption").columns[0]
    mean_power = float(np.mean(src.loc[0, power]))
    assert first["avg_power_w"] == pytest.approx(mean_power)
    assert first["energy_j"] == pytest.approx(mean_power * 1800)
    assert first["energy_source"] == "job-log power samples"
    assert (first["nodes"], first["ranks"], first["ranks_per_node"], first["threads"],
            first["cores"], first["gpus"]) == (1, 4, 4, 8, 32, 4)
    assert first["time_limit_s"] == 3600 and first["mem_req_gb"] == 240.0
    assert [jobs[j]["status"] for j in ("1000", "1001", "1002", "1003")] == [
        "ok", "failed", "timeout", "oom"]
    assert math.isnan(jobs["1003"]["energy_j"]) and jobs["1003"]["energy_source"] == ""
    assert jobs["1003"]["device"] == "cpu" and first["device"] == "gpu"


def test_adastra_average_power(tmp_path):
    n = 4
    src = pd.DataFrame({
        "job_id": [1, 2, 3, 4], "num_nodes_alloc": [1, 4, 8, 0], "user_id": [1, 1, 2, 3],
        "run_time": [600.0, 1200.0, 60.0, 10.0],
        "node_power_consumption": [900.0, 3600.0, np.nan, 100.0],
        "cpu_power_consumption": [300.0, 1200.0, np.nan, 50.0],
        "mem_power_consumption": [50.0, 200.0, np.nan, 5.0],
        "job_state": ["COMPLETED", "CANCELLED by 123", "FAILED", "COMPLETED"],
        "priority": [1, 2, 3, 4], "nodes": ["x1000", "x[1001-1004]", "x[1-8]", ""],
        "submit_time": pd.date_range("2023-01-01", periods=n, freq="D"),
        "time_limit": [60, 60, 60, 60],
        "start_time": pd.date_range("2023-01-01 01:00", periods=n, freq="D"),
        "end_time": pd.date_range("2023-01-01 02:00", periods=n, freq="D"),
    })
    path = tmp_path / "adastra.parquet"
    src.to_parquet(path)
    assert detect_kind(path) == "adastra"
    df, report = read_job_log(path)
    assert report.dropped == {"missing or non-positive node count": 1}
    jobs = by_id(df)
    assert jobs["2"]["status"] == "cancelled" and jobs["2"]["nodes"] == 4
    assert jobs["2"]["energy_j"] == pytest.approx(3600.0 * 1200)
    assert jobs["1"]["avg_power_w"] == 900.0 and pd.isna(jobs["1"]["ranks"])
    assert pd.isna(jobs["3"]["energy_j"])
    with pytest.raises(IngestError, match="looks like a adastra table, not pm100"):
        read_job_log(path, kind="pm100")


def test_synthetic_pm100_generator_is_deterministic_labelled_and_ingestible(tmp_path):
    import pyarrow.parquet as pq

    from hpcds1mpi.analysis.gen_jobtable import generate

    table = generate(rows=3000, seed=3)
    assert table.equals(generate(rows=3000, seed=3))
    assert not table.equals(generate(rows=3000, seed=4))
    assert table.column("synthetic").to_pylist() == [True] * 3000
    path = tmp_path / "synthetic.parquet"
    pq.write_table(table, path)
    df, report = read_job_log(path)
    assert report.kind == "pm100" and len(df) == 3000 and not report.dropped
    assert set(df["status"]) <= {"ok", "failed", "timeout", "oom", "cancelled"}
    assert (df["status"] == "ok").mean() > 0.7
    # learnable: (app, nodes, cores, gpus) explain log runtime up to the model's 0.15 noise
    ok = df[df["status"] == "ok"].assign(log_t=lambda d: np.log(d["runtime_s"]))
    within = ok.groupby(["workload", "nodes", "cores", "gpus"])["log_t"].std().dropna()
    assert ok["log_t"].std() > 1.0
    assert within.median() < 0.25, within.median()


def test_a_time_outside_1970_2261_is_dropped_and_counted_not_a_crash(tmp_path):
    """pandas' nanosecond times end in 2262: a year-1 or 2999 time crashed normalise."""
    import datetime

    import pyarrow as pa
    import pyarrow.parquet as pq

    src = _pm100_frame("new").drop(columns=["submit_time"])
    stamps = [datetime.datetime(2020, 5, 1, h) for h in range(len(src))]
    stamps[1], stamps[2] = datetime.datetime(1, 1, 1), datetime.datetime(2999, 1, 1)
    table = pa.Table.from_pandas(src, preserve_index=False).append_column(
        "submit_time", pa.array(stamps, type=pa.timestamp("us")))
    path = tmp_path / "pm100-far.parquet"
    pq.write_table(table, path)
    df, report = read_job_log(path)
    assert report.dropped["submit_time outside 1970-2261 (a placeholder or corrupt date)"] == 2
    assert set(df["job_id"]) == {"1000", "1003"}


def test_a_fraction_in_a_count_is_dropped_and_a_zero_limit_is_no_limit(tmp_path):
    """As the SWF reader does: 1.5 nodes was stored as 2 nodes, and a time_limit of 0 as a
    0-s limit, both without a word."""
    src = _pm100_frame("new")
    src = src.astype({"num_nodes_alloc": float, "num_gpus_alloc": float})
    src.loc[1, "num_nodes_alloc"] = 1.5
    src.loc[2, "num_gpus_alloc"] = 0.5
    src.loc[3, "time_limit"] = 0
    path = tmp_path / "pm100-bad.parquet"
    src.to_parquet(path)
    df, report = read_job_log(path)
    assert report.dropped == {"missing or negative run_time": 1,
                              "not finished (pending/running)": 1,
                              "a fraction in nodes (a count is whole)": 1,
                              "a fraction in gpus (a count is whole)": 1}, report.lines()
    assert report.notes["time_limit 0 (no limit): time_limit_s NA"] == 1
    jobs = by_id(df)
    assert set(jobs) == {"1000", "1003"}
    assert pd.isna(jobs["1003"]["time_limit_s"]) and jobs["1000"]["time_limit_s"] == 3600


def test_a_pm100_table_without_job_state_is_one_line_not_a_crash(tmp_path):
    """No job_state column, or one without a value: AttributeError ('Can only use .str
    accessor with string values'), exit 1."""
    src = _pm100_frame("new")
    path = tmp_path / "no-state.parquet"
    src.drop(columns="job_state").to_parquet(path)
    with pytest.raises(IngestError, match="needs the column job_state") as info:
        read_job_log(path)
    assert "\n" not in str(info.value)
    src.assign(job_state=None).to_parquet(path)
    with pytest.raises(IngestError, match="no job has a value in the pm100 table's job_state"):
        read_job_log(path)


def test_without_a_gpu_count_the_device_is_unknown_not_cpu(tmp_path):
    """Without num_gpus_alloc every job was called a CPU job (gpus NA, device 'cpu')."""
    src = _pm100_frame("new").drop(columns=["num_gpus_alloc", "num_gpus_req"])
    path = tmp_path / "no-gpus.parquet"
    src.to_parquet(path)
    df, report = read_job_log(path)
    assert df["gpus"].isna().all() and df["device"].isna().all()
    assert "no num_gpus_alloc column: gpus and device unknown" in report.facts
    some = _pm100_frame("new").astype({"num_gpus_alloc": float, "num_gpus_req": float})
    some.loc[0, ["num_gpus_alloc", "num_gpus_req"]] = np.nan
    some.to_parquet(path)
    jobs = by_id(read_job_log(path)[0])
    assert pd.isna(jobs["1000"]["device"]) and jobs["1001"]["device"] == "gpu"
    assert jobs["1003"]["device"] == "cpu"


def test_a_pm100_table_under_a_folder_named_tilde_is_read_there(tmp_path, monkeypatch):
    """``~/pm100.parquet`` with bash's ``~`` left is the file in folder ``./~``: its columns
    were read there but its rows from $HOME's file of that name (pandas expands the ``~``)."""
    home = tmp_path / "home"
    home.mkdir()
    (tmp_path / "~").mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(tmp_path)
    _pm100_frame("new").to_parquet(tmp_path / "~" / "pm100.parquet")
    _pm100_frame("new").head(2).to_parquet(home / "pm100.parquet")  # what pandas would read
    df, report = read_job_log("~/pm100.parquet")
    assert report.records == 6 and len(df) == 4


@pytest.mark.parametrize("scale, word", [(1, None), (1000, "milliseconds"),
                                         (10**6, "microseconds"), (10**9, "nanoseconds")])
def test_epoch_times_are_read_in_the_unit_their_size_says(tmp_path, scale, word):
    """s48 tester P1: epoch milliseconds (``.astype('int64')`` of PM100's own times) were read
    as seconds, year 54055, and start - submit crashed; microseconds emptied every time."""
    src = _pm100_frame("new")
    for name in ("submit_time", "start_time", "end_time"):
        src[name] = src[name].astype("datetime64[s]").astype("int64") * scale
    path = tmp_path / "pm100-epoch.parquet"
    src.to_parquet(path)
    df, report = read_job_log(path)
    jobs = by_id(df)
    assert jobs["1000"]["submit_time"] == pd.Timestamp("2020-05-01 00:00")
    assert jobs["1000"]["wait_s"] == 600
    said = [f for f in report.facts if "read as epoch" in f]
    assert said == ([] if word is None else [
        f"{name} read as epoch {word} (the size of its values)"
        for name in ("submit_time", "start_time", "end_time")])


def test_one_time_in_another_unit_is_counted_outside_the_years_not_a_crash(tmp_path):
    """As the Marconi100 subset: no start_time (all NaT), whose subtraction overflowed."""
    src = _pm100_frame("new").drop(columns=["start_time", "end_time"])
    src["submit_time"] = src["submit_time"].astype("datetime64[s]").astype("int64")
    src.loc[0, "submit_time"] *= 1000  # one value in milliseconds: the year 52271
    path = tmp_path / "pm100-one-ms.parquet"
    src.to_parquet(path)
    df, report = read_job_log(path)
    assert report.dropped["submit_time outside 1970-2261 (a placeholder or corrupt date)"] == 1
    assert "1000" not in set(df["job_id"]) and len(df) == 3


@pytest.mark.parametrize("old, new", [("run_time", "runtime"),
                                      ("num_nodes_alloc", "NumNodes")])
def test_a_needed_column_renamed_is_named_not_every_row_missing(tmp_path, old, new):
    """s48 tester P10: "no job could be read as pm100 (200 x missing or negative run_time)"
    for a table whose run_time column was renamed."""
    src = _pm100_frame("new").drop(columns=["num_nodes_req"]).rename(columns={old: new})
    path = tmp_path / "pm100-renamed.parquet"
    src.to_parquet(path)
    with pytest.raises(IngestError, match=f"needs the column.s. {old} .has '{new}' for "
                                          f"{old}.; rename it back") as info:
        read_job_log(path)
    assert "\n" not in str(info.value)


def test_an_optional_column_renamed_is_said_by_name(tmp_path):
    src = _pm100_frame("new").rename(columns={"user_id": "user_name",
                                              "time_limit": "timelimit"})
    path = tmp_path / "pm100-renamed.parquet"
    src.to_parquet(path)
    df, report = read_job_log(path)
    assert len(df) == 4
    assert "no user_id column (has 'user_name' for user_id): not read; rename it back to " \
           "read it" in report.facts
    assert any(f.startswith("no time_limit column (has 'timelimit'") for f in report.facts)


def test_a_pm100_table_without_gpu_core_or_task_columns_is_not_called_adastra(tmp_path):
    """s48 tester P5: the Marconi100 subset without num_gpus_alloc was read and stored as an
    Adastra table; its power samples (a list per job) tell PM100; with no column that tells,
    PM100 (the dataset's own subset) is read, said, and --kind adastra is the way."""
    src = _pm100_frame("new").drop(columns=["num_gpus_alloc", "num_gpus_req", "num_tasks",
                                            "cores_per_task", "num_cores_req",
                                            "num_cores_alloc"])
    path = tmp_path / "pm100-cpu.parquet"
    src.to_parquet(path)
    assert detect_kind(path) == "pm100"  # node_power_consumption: samples
    bare = src.drop(columns=["node_power_consumption", "cpu_power_consumption",
                             "mem_power_consumption"])
    bare.to_parquet(path)
    for asked, kind, other in (("auto", "pm100", "adastra"), ("pm100", "pm100", "adastra"),
                               ("adastra", "adastra", "pm100")):
        df, report = read_job_log(path, asked)
        assert report.kind == kind and set(df["source_kind"]) == {kind} and len(df) == 4
        assert (f"no GPU, core, task or power column tells PM100 from Adastra: read as {kind} "
                f"(else give --kind {other})") in report.facts


def test_the_same_job_twice_in_the_file_is_kept_once_counted(tmp_path):
    """s48 tester P3: two monthly tables joined with an overlap kept each copy ("250 records
    -> 250 jobs"), inflating every count and train's rows; sacct and SWF keep one."""
    src = _pm100_frame("new")
    again = src.iloc[[0, 2]].copy()
    again["partition"] = None  # the copy with fewer fields known is the one dropped
    path = tmp_path / "pm100-joined.parquet"
    pd.concat([again, src]).to_parquet(path)
    df, report = read_job_log(path)
    assert report.records == 8 and len(df) == 4 and df["job_id"].is_unique
    assert report.notes["same job twice in the file (job id, submit, start and end agree: "
                        "overlapping exports joined), kept once"] == 2
    assert set(df["partition"]) == {"m100_usr_prod"}
    # Another job under a used id (other times) is no copy.
    other = src.iloc[[0]].assign(submit_time=pd.Timestamp("2020-06-01"),
                                 start_time=pd.Timestamp("2020-06-01 00:10"),
                                 end_time=pd.Timestamp("2020-06-01 00:40"))
    pd.concat([src, other]).to_parquet(path)
    assert len(read_job_log(path)[0]) == 5


@pytest.mark.parametrize("kind", ["auto", "pm100", "job-table"])
def test_a_pm100_table_saved_as_csv_names_the_conversion(tmp_path, kind):
    """s48 tester P13: "not a job log of a known kind", "not a parquet file", and under
    --kind job-table its jobs were written without their states."""
    path = tmp_path / "pm.csv"
    _pm100_frame("new").drop(columns=["node_power_consumption", "cpu_power_consumption",
                                      "mem_power_consumption"]).to_csv(path, index=False)
    with pytest.raises(IngestError, match="a PM100/Adastra job table saved as CSV; ingest "
                                          "reads these as parquet: convert it") as info:
        read_job_log(path, kind)
    said = str(info.value)
    assert "\n" not in said and f"and ingest {tmp_path / 'pm.parquet'}" in said
    command = said.split('python -c "')[1].split('")')[0]
    exec(command)  # the conversion it names gives a table ingest reads
    df, report = read_job_log(tmp_path / "pm.parquet")
    assert report.kind == "pm100" and len(df) == 4
