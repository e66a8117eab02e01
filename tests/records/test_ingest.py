"""Job-log ingestion on the real Slurm captures, small PM100/Adastra tables, and bad input."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from hpcds1mpi.errors import IngestError
from hpcds1mpi.records.ingest import JOB_COLUMNS, detect_kind, ingest, read_job_log, write_job_table
from tests.helpers import run_cli

# Real captures from a two-node Slurm 22.05 (copied from the project's shared data; see README).
CAPTURES = Path(__file__).parents[1] / "data" / "slurm-captures"
DATA = Path(__file__).parents[1] / "data"
CAPTURE_FILES = ["sacct-parsable2.txt", "sacct-parsable2-all.txt", "sacct.json",
                 "extras/oom-cgroup.sacct-parsable2.txt",
                 "extras/oom-cgroup.sacct-parsable2-all.txt", "extras/oom-cgroup.sacct.json"]

needs_captures = pytest.mark.skipif(not CAPTURES.is_dir(),
                                    reason=f"real Slurm captures not present at {CAPTURES}")


def _by_id(df: pd.DataFrame) -> dict[str, dict]:
    return {row["job_id"]: row for row in df.to_dict("records")}


# ---------------------------------------------------------------------- real sacct captures


@needs_captures
@pytest.mark.parametrize("name", CAPTURE_FILES)
def test_every_capture_reads_without_loss(name):
    df, report = read_job_log(CAPTURES / name)
    assert list(df.columns) == [c for c, _ in JOB_COLUMNS]
    assert sum(report.dropped.values()) == 0, report.lines()
    assert report.jobs == len(df) == (2 if "oom-cgroup" in name else 13)
    assert set(df["source_kind"]) == {"sacct-json" if name.endswith(".json") else "sacct-p"}


@needs_captures
def test_sacct_parsable_values_match_the_capture_readme():
    df, _ = read_job_log(CAPTURES / "sacct-parsable2.txt")
    jobs = _by_id(df)
    assert jobs["2"]["status"] == "ok" and jobs["2"]["runtime_s"] == 15.0
    assert jobs["2"]["peak_rss_mb"] == pytest.approx(76628 * 1024 / 1e6)  # MaxRSS in K
    assert jobs["2"]["cpu_s"] == pytest.approx(15.099)
    assert (jobs["5"]["status"], jobs["5"]["exit_code"]) == ("failed", 3)
    assert jobs["5"]["time_limit_s"] == 365 * 86400  # backfill's "infinite" limit
    assert (jobs["6"]["status"], jobs["6"]["runtime_s"], jobs["6"]["time_limit_s"]) == (
        "timeout", 69.0, 60.0)
    assert jobs["8"]["status"] == "cancelled" and jobs["8"]["state_raw"] == "CANCELLED by 0"
    assert jobs["9_2"]["status"] == "failed" and jobs["9_2"]["exit_code"] == 1
    assert jobs["10"]["workload"] == "my `quoted` job, it's got spaces"
    assert jobs["10"]["peak_rss_mb"] == pytest.approx(4.50 * 1024**2 / 1e6)  # MaxRSS in M
    mpi = jobs["13"]
    assert (mpi["nodes"], mpi["ranks"], mpi["ranks_per_node"], mpi["threads"]) == (2, 2, 1, 1)
    assert mpi["mem_req_gb"] == pytest.approx(8.0) and mpi["gpus"] == 0
    assert pd.isna(jobs["1"]["ranks"]) and jobs["1"]["runtime_s"] == 0.0  # rejected at submit
    # OverMemoryKill: Slurm says FAILED / CANCELLED by 0 with signal 9 at the 50M request.
    assert (jobs["7"]["state_raw"], jobs["7"]["status"], jobs["7"]["exit_signal"]) == (
        "FAILED", "oom", 9)
    # no energy plugin: 0 J means "not measured", not a zero-energy job
    assert df["energy_j"].isna().all() and (df["energy_source"] == "").all()


@needs_captures
def test_format_all_multiline_records_equal_the_short_capture():
    short, _ = read_job_log(CAPTURES / "sacct-parsable2.txt")
    full, report = read_job_log(CAPTURES / "sacct-parsable2-all.txt")
    assert report.records == 30  # 54 physical lines: SubmitLine values hold newlines
    cols = ["job_id", "workload", "nodes", "ranks", "threads", "status", "exit_code",
            "runtime_s", "cpu_s", "peak_rss_mb", "mem_req_gb", "time_limit_s", "submit_time"]
    pd.testing.assert_frame_equal(short[cols], full[cols])
    assert set(full["user"]) == {"root"}


@needs_captures
def test_sacct_json_2205_exit_codes_are_marked_unknown_not_zero():
    js, report = read_job_log(CAPTURES / "sacct.json")
    ps, _ = read_job_log(CAPTURES / "sacct-parsable2.txt")
    j, p = _by_id(js), _by_id(ps)
    assert set(j) == set(p)
    for jid in ("1", "3", "5", "9_2"):  # exit 1 / 3 in -P, SUCCESS/0 in 22.05 JSON
        assert pd.isna(j[jid]["exit_code"]) and p[jid]["exit_code"] > 0
    assert report.notes["22.05 --json exit code unreliable (set to missing; use sacct -P)"] == 4
    for jid in p:
        if jid != "7":  # -P alone has MaxRSS, which the OverMemoryKill rule needs
            assert j[jid]["status"] == p[jid]["status"], jid
        for col in ("nodes", "ranks", "threads", "runtime_s", "mem_req_gb", "time_limit_s"):
            a, b = j[jid][col], p[jid][col]
            assert (pd.isna(a) and pd.isna(b)) or a == b, (jid, col, a, b)
    assert j["7"]["exit_signal"] == 9


@needs_captures
def test_json_and_parsable_of_the_same_jobs_are_kept_once_preferring_parsable():
    table, reports, notes = ingest([CAPTURES / "sacct.json", CAPTURES / "sacct-parsable2.txt"])
    assert len(table) == 13 and set(table["source_kind"]) == {"sacct-p"}
    assert sum(notes.values()) == 13


@needs_captures
def test_real_out_of_memory_under_cgroups():
    for name in ("oom-cgroup.sacct-parsable2.txt", "oom-cgroup.sacct.json"):
        jobs = _by_id(read_job_log(CAPTURES / "extras" / name)[0])
        assert jobs["15"]["status"] == "oom" and jobs["15"]["exit_signal"] == 125
        # job 16 is FAILED 1:0 because srun returned 1; its step 16.0 is OUT_OF_MEMORY
        assert jobs["16"]["state_raw"] == "FAILED" and jobs["16"]["status"] == "oom"


def test_capture_from_our_own_test_slurm():
    df, report = read_job_log(DATA / "hpcds1mpi-slurm.sacct-all.txt")
    jobs = {r["workload"]: r for r in df.to_dict("records")}
    assert sum(report.dropped.values()) == 0
    assert (jobs["mpi_two_nodes"]["nodes"], jobs["mpi_two_nodes"]["ranks"]) == (2, 2)
    assert jobs["threads_two"]["threads"] == 2
    assert (jobs["exit_three"]["status"], jobs["exit_three"]["exit_code"]) == ("failed", 3)
    assert jobs["to_cancel"]["status"] == "cancelled"


# ---------------------------------------------------------------------- made-up sacct inputs


def test_malformed_rows_are_counted_per_reason_never_dropped_silently():
    df, report = read_job_log(DATA / "sacct-malformed.txt")
    assert list(df["job_id"]) == ["2"]
    dropped = dict(report.dropped)
    assert dropped == {
        "more fields than the header ('|' inside a value; sacct does not escape it)": 1,
        "fewer fields than the header (truncated record)": 1,
        "not finished (pending/running)": 1,
        "step rows without their job line": 1,
        "unparseable value (bad exit code)": 1,
        "unparseable value (bad number)": 1,
        "unparseable value (unknown job state)": 1,
    }
    assert report.records == 9  # the 9 physical records after the header
    text = "\n".join(report.lines())
    assert "7 malformed/skipped" in text


def test_energy_gpus_and_older_reqmem_suffixes():
    jobs = _by_id(read_job_log(DATA / "sacct-energy-gpu.txt")[0])
    gpu = jobs["100"]
    assert gpu["gpus"] == 8 and gpu["device"] == "gpu"  # untyped gres/gpu, not typed + untyped
    assert (gpu["ranks"], gpu["threads"], gpu["ranks_per_node"]) == (8, 2, 4)
    assert gpu["energy_j"] == 42000.0  # the srun steps summed (batch runs alongside them)
    assert gpu["avg_power_w"] == pytest.approx(420.0) and gpu["energy_source"] == "slurm"
    assert gpu["mem_req_gb"] == pytest.approx(64.0)  # 32000Mn x 2 nodes
    assert gpu["user"] == "alice" and gpu["time_limit_s"] == 3600
    cpu = jobs["101"]
    assert cpu["energy_j"] == 720000.0  # the extern step spans the whole allocation
    assert cpu["mem_req_gb"] == pytest.approx(16.0)  # 250Mc x 64 CPUs
    assert cpu["status"] == "timeout" and cpu["cpu_s"] == 2 * 86400


def test_sacct_json_newer_layout(tmp_path):
    number = lambda n: {"set": True, "infinite": False, "number": n}  # noqa: E731
    doc = {
        "meta": {"plugin": {"type": "openapi/slurmdbd", "data_parser": "data_parser/v0.0.40"},
                 "slurm": {"version": {"major": "23", "minor": "11", "micro": "4"}}},
        "jobs": [{
            "job_id": 77, "name": "exit_three", "user": "carol", "partition": "cpu",
            "state": {"current": ["FAILED"], "reason": "NonZeroExitCode"},
            "exit_code": {"status": ["ERROR"], "return_code": number(3),
                          "signal": {"id": {"set": False, "number": 0}, "name": ""}},
            "allocation_nodes": 2, "array": {"job_id": 0, "task_id": {"set": False}},
            "time": {"elapsed": 40, "submission": 1700000000, "start": 1700000010,
                     "end": 1700000050, "limit": number(30)},
            "tres": {"allocated": [{"type": "cpu", "name": "", "count": 8},
                                   {"type": "node", "name": "", "count": 2},
                                   {"type": "gres", "name": "gpu", "count": 2}],
                     "requested": [{"type": "mem", "name": "", "count": 2000}]},
            "steps": [{"step": {"id": "77.0", "name": "a.out"}, "tasks": {"count": 4},
                       "state": ["FAILED"],
                       "tres": {"allocated": [{"type": "cpu", "count": 8}]},
                       "statistics": {"energy": {"consumed": number(4000)}}}],
        }, {"job_id": 78, "name": "queued", "state": {"current": ["PENDING"]}}],
    }
    path = tmp_path / "new.json"
    path.write_text(json.dumps(doc))
    df, report = read_job_log(path)
    (job,) = df.to_dict("records")
    assert (job["status"], job["exit_code"], job["exit_signal"]) == ("failed", 3, 0)
    assert (job["nodes"], job["ranks"], job["threads"], job["gpus"]) == (2, 4, 2, 2)
    assert job["energy_j"] == 4000 and job["avg_power_w"] == 100.0
    assert job["time_limit_s"] == 1800 and job["mem_req_gb"] == 2.0
    assert job["start_time"] == pd.Timestamp(1700000010, unit="s")
    assert not report.notes and report.dropped == {"not finished (pending/running)": 1}


# ---------------------------------------------------------------------- PM100 / Adastra


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
    jobs = _by_id(df)
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
    jobs = _by_id(df)
    assert jobs["2"]["status"] == "cancelled" and jobs["2"]["nodes"] == 4
    assert jobs["2"]["energy_j"] == pytest.approx(3600.0 * 1200)
    assert jobs["1"]["avg_power_w"] == 900.0 and pd.isna(jobs["1"]["ranks"])
    assert pd.isna(jobs["3"]["energy_j"])
    with pytest.raises(IngestError, match="looks like a adastra table, not pm100"):
        read_job_log(path, kind="pm100")


# ---------------------------------------------------------------------- wrong kinds, CLI


@pytest.mark.parametrize("content,match", [
    ("JobId=1 UserId=root(0) Name=x JobState=FAILED\n", "jobcomp"),
    ("ClusterName=x\nSlurmctldHost=localhost\n", "not a sacct"),
    ("1|a|debug|COMPLETED\n", "no JobID header"),
    ("", "not a sacct"),
    ('{"meta": {}, "errors": []}', "no 'jobs' list|JSON without"),
    ("{not json", "not valid JSON"),
])
def test_wrong_kind_is_a_one_line_error(tmp_path, content, match):
    path = tmp_path / "input.txt"
    path.write_text(content)
    with pytest.raises(IngestError, match=match) as info:
        read_job_log(path)
    assert "\n" not in str(info.value)


def test_wrong_kind_parquet_and_forced_kinds(tmp_path):
    path = tmp_path / "other.parquet"
    pd.DataFrame({"a": [1], "b": [2]}).to_parquet(path)
    with pytest.raises(IngestError, match="without PM100/Adastra job columns"):
        read_job_log(path)
    with pytest.raises(IngestError, match="not a parquet file"):
        read_job_log(DATA / "sacct-energy-gpu.txt", kind="pm100")
    js = tmp_path / "jobs.json"
    js.write_text('{"jobs": []}')
    with pytest.raises(IngestError, match="not sacct -P output"):
        read_job_log(js, kind="sacct-p")
    with pytest.raises(IngestError, match="not valid JSON"):
        read_job_log(DATA / "sacct-energy-gpu.txt", kind="sacct-json")


def test_file_with_only_malformed_rows_is_an_error(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_text("JobID|State|ElapsedRaw\n1|WHAT|3\n2|RUNNING|4\n")
    with pytest.raises(IngestError, match="no job could be read"):
        read_job_log(path)


def test_write_job_table_round_trip(tmp_path):
    df, _ = read_job_log(DATA / "sacct-energy-gpu.txt")
    back = pd.read_parquet(write_job_table(df, tmp_path / "jobs.parquet"))
    pd.testing.assert_frame_equal(df, back, check_dtype=False)
    with pytest.raises(IngestError, match=".parquet or .csv"):
        write_job_table(df, tmp_path / "jobs.xlsx")


def test_cli_ingest(tmp_path):
    out = tmp_path / "jobs.parquet"
    res = run_cli(["ingest", str(DATA / "sacct-malformed.txt"), str(DATA / "sacct-energy-gpu.txt"),
                   "--out", str(out)], timeout=120)
    assert res.returncode == 0, res.stderr
    assert "dropped 1 x step rows without their job line" in res.stdout
    assert "wrote 3 jobs" in res.stdout
    assert len(pd.read_parquet(out)) == 3
    bad = tmp_path / "jobcomp.txt"
    bad.write_text("JobId=1 UserId=root(0) Name=x JobState=FAILED\n")
    res = run_cli(["ingest", str(bad), "--out", str(out)], timeout=120)
    assert res.returncode != 0
    assert "Traceback" not in res.stderr and len(res.stderr.strip().splitlines()) == 1


# ---------------------------------------------------------------------- live Slurm


@pytest.mark.slurm
def test_ingest_sacct_of_jobs_just_run(slurm, tmp_path):
    if not slurm.accounting:
        pytest.skip("the test Slurm runs without accounting (HPCDS1MPI_SLURM_ACCOUNTING=0)")
    ok = tmp_path / "ok.sh"
    ok.write_text(f"#!/bin/bash\nsrun --mpi=pmi2 --kill-on-bad-exit=1 {sys.executable} -c "
                  "'from mpi4py import MPI; MPI.COMM_WORLD.Barrier()'\n")
    bad = tmp_path / "bad.sh"
    bad.write_text("#!/bin/bash\nsleep 1\nexit 3\n")
    ok_log = tmp_path / "ok.out"
    bad_id = slurm.sbatch(bad, "-N1", "-n1", "-J", "ingest_bad", "-o", "/dev/null")
    ok_id, _, _ = slurm.run_job(lambda: slurm.sbatch(ok, "-N2", "--ntasks-per-node=1", "-J",
                                                     "ingest_ok", "-o", str(ok_log)),
                                ok_log, timeout=120)
    slurm.wait(bad_id, timeout=120)
    ids = [ok_id, bad_id]
    # slurmdbd gets the end records asynchronously: poll sacct (bounded) until both are final
    capture = tmp_path / "sacct.txt"
    for _ in range(40):
        res = slurm.cmd(["sacct", "-P", "--format=ALL", "-j", ",".join(map(str, ids))])
        capture.write_text(res.stdout)
        try:
            df, report = read_job_log(capture)
        except IngestError:
            df = pd.DataFrame()
        if len(df) == 2:
            break
        subprocess.run(["sleep", "0.5"], check=True)
    jobs = {r["workload"]: r for r in df.to_dict("records")}
    assert set(jobs) == {"ingest_ok", "ingest_bad"}, capture.read_text()
    assert (jobs["ingest_ok"]["status"], jobs["ingest_ok"]["nodes"], jobs["ingest_ok"]["ranks"]) \
        == ("ok", 2, 2)
    assert (jobs["ingest_bad"]["status"], jobs["ingest_bad"]["exit_code"]) == ("failed", 3)
    assert jobs["ingest_bad"]["partition"] == "debug" and jobs["ingest_ok"]["user"] == "root"


# ---------------------------------------------------------------------- synthetic generator


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


@needs_captures
def test_lowercase_p_trailing_delimiter_reads_the_same(tmp_path):
    text = (CAPTURES / "sacct-parsable2.txt").read_text()
    path = tmp_path / "sacct-p-lower.txt"
    path.write_text("".join(line + "|\n" for line in text.splitlines()))
    a = read_job_log(path)[0].drop(columns="source_file")
    b = read_job_log(CAPTURES / "sacct-parsable2.txt")[0].drop(columns="source_file")
    pd.testing.assert_frame_equal(a, b)
