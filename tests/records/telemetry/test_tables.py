"""The tables of a telemetry file as DataFrames."""

from __future__ import annotations

import pytest

from hpcds1mpi.errors import TelemetryError
from hpcds1mpi.records import telemetry
from tests.records.telemetry.rows import run_row


def test_tables_have_their_columns_and_kinds_even_when_empty(tmp_path):
    path = tmp_path / "t.h5"
    telemetry.append(path, [run_row(0, work_flops=2e9)])
    runs = telemetry.read_runs(path)
    assert list(runs.columns) == [n for n, _ in telemetry.RUN_COLUMNS]
    assert runs.loc[0, "work_flops"] == 2e9 and runs.loc[0, "threads"] == 1
    assert runs.loc[0, "cpu_s"] != runs.loc[0, "cpu_s"]  # missing float -> NaN
    machines = telemetry.read_machines(path)
    assert len(machines) == 0 and list(machines.columns) == [
        n for n, _ in telemetry.MACHINE_COLUMNS]
    assert str(machines["physical_cores"].dtype) == "int64"


def test_unknown_detail_table_is_refused(tmp_path):
    path = tmp_path / "t.h5"
    repeat = {"machine_id": "m1", "run_id": "r000", "repeat": 0, "wall_s": 0.1}
    telemetry.append(path, [run_row(0)], [{"repeats": [repeat]}])
    assert telemetry.read_detail(path, "repeats")["wall_s"].tolist() == [0.1]
    with pytest.raises(TelemetryError, match="unknown detail table 'runs'"):
        telemetry.read_detail(path, "runs")


@pytest.mark.parametrize("path", [3, None, 2.5])
def test_a_path_that_is_no_path_is_one_telemetry_error(path):
    """s37 tester P11: read_runs(3) was a bare TypeError from deep inside."""
    for call in (telemetry.read_runs, telemetry.read_machines, telemetry.load,
                 lambda p: telemetry.append(p, [])):
        with pytest.raises(TelemetryError, match="a telemetry file is a path .*give the .h5"):
            call(path)
