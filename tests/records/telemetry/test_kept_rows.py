"""A rewrite of a telemetry file applies merge's and train's row rules to the runs it keeps
(s37 tester P7: sweep --resume kept a run whose status another tool set to 'bogus')."""

from __future__ import annotations

import h5py
import pytest

from hpcds1mpi.errors import TelemetryError
from hpcds1mpi.records import telemetry
from hpcds1mpi.records.telemetry.kept_rows import RESUME_FIX, refuse_broken_rows
from tests.helpers import run_cli
from tests.records.telemetry.rows import run_row


def _bogus(path):
    with h5py.File(path, "r+") as f:
        f["runs/status"][0] = "bogus"


def test_a_row_train_refuses_is_refused_unless_measured_again(tmp_path):
    path = tmp_path / "t.h5"
    telemetry.append(path, [run_row(0), run_row(1)])
    with h5py.File(path, "r+") as f:  # as another program writes it (append refuses it)
        f["runs/runtime_s"][1] = -1.0
    store = telemetry.load(path)
    with pytest.raises(TelemetryError, match=r"1 row\(s\) with runtime_s -1.0: .*new --out"):
        refuse_broken_rows(store, path, RESUME_FIX)
    refuse_broken_rows(store, path, RESUME_FIX, {("m1", "r001")})  # the resume redoes it


def test_a_merge_refuses_its_outs_own_broken_rows_and_changes_nothing(tmp_path):
    out, shard = tmp_path / "all.h5", tmp_path / "b.h5"
    telemetry.append(out, [run_row(0)])
    _bogus(out)
    telemetry.append(shard, [run_row(1)])
    with pytest.raises(TelemetryError, match="all.h5 has 1 row.*status 'bogus'.*new --out"):
        telemetry.merge([shard], out)
    assert telemetry.read_runs(out)["run_id"].tolist() == ["r000"]


def test_sweep_resume_refuses_a_run_with_an_unknown_status(tmp_path):
    out = tmp_path / "t.h5"
    args = ["sweep", "--kernel", "stencil", "--ranks-per-node", "1", "--threads", "1",
            "--precisions", "fp64", "--min-time", "0", "--min-repeats", "1",
            "--max-repeats", "1", "--warmup", "0", "--no-progress", "--out", str(out)]
    assert run_cli([*args, "--sizes", "16"], timeout=120).returncode == 0
    _bogus(out)
    before = telemetry.read_runs(out)
    proc = run_cli([*args, "--sizes", "16,24", "--resume"], timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert "t.h5 has 1 row(s) with status 'bogus': use one of ok" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert telemetry.read_runs(out).equals(before)  # nothing added, the row as it was
