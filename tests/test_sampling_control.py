"""analysis/sampling_control.py: every variant evaluated, the verdict follows the numbers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

DENSE = Path(__file__).resolve().parents[1] / "data" / "sampling_dense" / "telemetry.h5"


@pytest.mark.skipif(not DENSE.exists(), reason="data/sampling_dense/telemetry.h5 missing")
def test_sampling_control_runs_every_variant_and_its_verdict_uses_the_numbers(tmp_path):
    from hpcds1mpi.analysis import sampling_control

    out = sampling_control.main(["--telemetry", str(DENSE), "--seeds", "1", "--name", "t",
                                 "--out-dir", str(tmp_path)])
    rows = out["rows"]
    assert [r["rate"] for r in rows] == [1.0, 0.75, 0.75, 0.75, 0.75]
    assert [r["floor"] for r in rows] == [None, None, 0.25, 0.5, 0.75]
    full_kept = rows[0]["kept"][0]
    for r in rows[1:]:  # about 75 % kept, and the floors change which rows
        assert abs(r["kept"][0] / full_kept - 0.75) < 0.1
    assert len({r["runtime_mape_mean"] for r in rows}) == len(rows)
    paper_loss = rows[1]["runtime_mape_mean"] - rows[0]["runtime_mape_mean"]
    assert f"{paper_loss:+.1f} points" in out["verdict"]
    saved = json.loads((tmp_path / "sampling_control_t.json").read_text())
    assert saved["verdict"] == out["verdict"]
    assert out["verdict"] in (tmp_path / "sampling_control_t.md").read_text()
