"""``hpcds1mpi train`` / ``learn`` end to end, and their one-line errors on bad input."""

from __future__ import annotations

import json

import numpy as np
import pytest

from hpcds1mpi.records import telemetry
from tests.helpers import run_cli
from tests.surrogates.test_bundle import make_runs

FAST = ["--epochs", "2", "--members", "2", "--threads", "1"]


def write(path, frame):
    telemetry.append(path, frame.to_dict("records"))
    return str(path)


def assert_one_line_error(proc, text):
    assert proc.returncode != 0
    lines = [ln for ln in proc.stderr.strip().splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert text in lines[0], lines[0]


@pytest.mark.slow
def test_train_then_learn(tmp_path):
    runs = make_runs()
    first = runs[runs["size"] < 96]
    tele = write(tmp_path / "a.h5", first)
    out = tmp_path / "model"
    proc = run_cli(["train", "--telemetry", tele, "--out", str(out), "--sample-rate", "0.75",
                    *FAST], timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "MODELLED" in proc.stdout
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["sampling"]["target_rate"] == 0.75
    assert manifest["n_rows"] == len(first)

    more = write(tmp_path / "b.h5", runs[runs["size"] == 96])
    proc = run_cli(["learn", "--model", str(out), "--telemetry", more, "--threads", "1"],
                   timeout=300)
    assert proc.returncode == 0, proc.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["n_rows"] == len(runs)
    assert manifest["size_range"]["gemm"] == [32.0, 96.0]

    foreign = write(tmp_path / "c.h5", make_runs(machine="other").head(8))
    proc = run_cli(["learn", "--model", str(out), "--telemetry", foreign], timeout=120)
    assert_one_line_error(proc, "never mixed")


@pytest.mark.parametrize("case, message", [
    ("empty", "empty"),
    ("failed", "no successful runs"),
    ("nan", "NaN"),
])
def test_bad_telemetry_is_a_one_line_error(tmp_path, case, message):
    runs = make_runs().head(24)
    if case == "empty":
        runs = runs.iloc[0:0]
    elif case == "failed":
        runs = runs.assign(status="failed", runtime_s=np.nan)
    elif case == "nan":
        runs = runs.assign(runtime_s=np.where(np.arange(len(runs)) == 3, np.nan, runs["runtime_s"]))
    tele = write(tmp_path / "t.h5", runs)
    proc = run_cli(["train", "--telemetry", tele, "--out", str(tmp_path / "m"), *FAST],
                   timeout=120)
    assert_one_line_error(proc, message)


def test_unknown_columns_in_job_table_is_a_one_line_error(tmp_path):
    jobs = make_runs().head(24).drop(columns=["run_id", "machine_id"]).assign(mystery=1.0)
    path = tmp_path / "jobs.parquet"
    jobs.to_parquet(path)
    proc = run_cli(["train", "--jobs", str(path), "--out", str(tmp_path / "m"), *FAST],
                   timeout=120)
    assert_one_line_error(proc, "unknown column(s) mystery")


def test_train_knob_member_features_is_recorded_and_kept_by_learn(tmp_path):
    from hpcds1mpi.surrogates.models import KNOB_FEATURES

    runs = make_runs()
    tele = write(tmp_path / "a.h5", runs[runs["size"] < 96])
    more = write(tmp_path / "b.h5", runs[runs["size"] == 96])
    out = tmp_path / "model"
    proc = run_cli(["train", "--telemetry", tele, "--out", str(out), "--no-embedding",
                    "--member-features", "knobs", "--members", "2", "--threads", "1"],
                   timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert json.loads((out / "manifest.json").read_text())["member_features"] == \
        list(KNOB_FEATURES)
    proc = run_cli(["learn", "--model", str(out), "--telemetry", more, "--threads", "1"],
                   timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert json.loads((out / "manifest.json").read_text())["member_features"] == \
        list(KNOB_FEATURES)
