"""The single writer: round trip, resume, the lock."""

from __future__ import annotations

import math
import multiprocessing

import h5py
import pytest

from hpcds1mpi.errors import LockError, TelemetryError
from hpcds1mpi.records import telemetry
from tests.records.telemetry.rows import CONTRACT, run_row


def test_round_trip_with_detail(tmp_path):
    path = tmp_path / "t.h5"
    with telemetry.TelemetryWriter(path) as w:
        w.machine({"machine_id": "m1", "cpu_model": "X", "physical_cores": 2})
        for i in range(3):
            w.start(run_row(i))
            w.record(run_row(i), {"repeats": [{"machine_id": "m1", "run_id": f"r{i:03d}",
                                            "repeat": k, "wall_s": 0.1 * k} for k in range(3)]})
    assert not telemetry.journal_path(path).exists()
    assert not telemetry.lock_path(path).exists()
    df = telemetry.read_runs(path)
    assert list(df.columns[: len(CONTRACT)]) == CONTRACT
    assert list(df["run_id"]) == ["r000", "r001", "r002"]
    assert df["runtime_s"].tolist() == [0.5, 1.5, 2.5]
    assert math.isnan(df["gpu_busy_s"][0])  # missing floats are NaN, not 0
    assert (df["attempt"] == 1).all()
    reps = telemetry.read_detail(path, "repeats")
    assert len(reps) == 9 and reps["wall_s"].max() == pytest.approx(0.2)
    machines = telemetry.read_machines(path)
    assert machines["cpu_model"].tolist() == ["X"]
    with h5py.File(path) as f:
        assert f.attrs["schema_version"] == telemetry.SCHEMA_VERSION


def test_existing_file_refused_without_resume_and_untouched(tmp_path):
    path = tmp_path / "t.h5"
    telemetry.append(path, [run_row(0)])
    before = path.read_bytes()
    with pytest.raises(TelemetryError, match="--resume"):
        telemetry.TelemetryWriter(path).open()
    assert path.read_bytes() == before


def _hold_lock(path, ready, stop):
    with telemetry.TelemetryWriter(path, resume=True):
        ready.set()
        stop.wait(30)


def test_second_writer_gets_lock_error(tmp_path):
    path = tmp_path / "t.h5"
    ctx = multiprocessing.get_context("fork")
    ready, stop = ctx.Event(), ctx.Event()
    proc = ctx.Process(target=_hold_lock, args=(str(path), ready, stop))
    proc.start()
    try:
        assert ready.wait(30)
        before = path.read_bytes()
        with pytest.raises(LockError, match="another process"):
            telemetry.TelemetryWriter(path, resume=True).open()
        assert path.read_bytes() == before
    finally:
        stop.set()
        proc.join(30)
    telemetry.TelemetryWriter(path, resume=True).open().close()  # free again


def test_a_resume_with_another_plan_keeps_the_files_plan(tmp_path):
    """sweep --resume with another plan (how the reference telemetry was extended) replaced
    the file's plan: the record of how its first runs were planned was lost."""
    import json

    import h5py

    path = tmp_path / "t.h5"
    first, second = json.dumps({"kernel": [{"name": "gemm"}]}), json.dumps({"kernel": []})
    with telemetry.TelemetryWriter(path, attrs={"plan": first}) as w:
        w.record(run_row(0))
    for plan in (first, second, second):  # the same plan again keeps nothing twice
        with telemetry.TelemetryWriter(path, resume=True, attrs={"plan": plan}) as w:
            pass
    with h5py.File(path) as f:
        assert f.attrs["plan"] == second
        assert json.loads(f.attrs["earlier_plans"]) == [first]
    assert len(telemetry.read_runs(path)) == 1
