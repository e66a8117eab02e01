"""``hpcds1mpi telemetry show|export|merge``."""

from __future__ import annotations

from hpcds1mpi.records import telemetry
from tests.records.telemetry.rows import run_row


def test_cli_show_export_merge(tmp_path):
    from tests.helpers import run_cli

    a, b, out = tmp_path / "a.h5", tmp_path / "b.h5", tmp_path / "all.h5"
    telemetry.append(a, [run_row(0), run_row(1)])
    telemetry.append(b, [run_row(2, "m2")])
    proc = run_cli(["telemetry", "merge", str(a), str(b), "--out", str(out)], timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "3 runs (3 added" in proc.stdout
    proc = run_cli(["telemetry", "merge", str(a), str(b), "--out", str(out)], timeout=60)
    assert "3 runs (0 added, 0 replaced, 3 already there)" in proc.stdout
    proc = run_cli(["telemetry", "show", str(out)], timeout=60)
    assert proc.returncode == 0 and "3 runs" in proc.stdout and "stencil" in proc.stdout
    csv = tmp_path / "runs.csv"
    proc = run_cli(["telemetry", "export", str(out), "--out", str(csv)], timeout=60)
    assert proc.returncode == 0, proc.stderr
    import pandas as pd

    assert len(pd.read_csv(csv)) == 3
    bad = tmp_path / "bad.txt"
    bad.write_text("x")
    proc = run_cli(["telemetry", "show", str(bad)], timeout=60)
    assert proc.returncode != 0 and "not an HDF5" in proc.stderr and "Traceback" not in proc.stderr
