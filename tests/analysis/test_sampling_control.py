"""analysis/sampling_control.py: every variant evaluated, losses paired by seed, the learning
curve's subsets, and a verdict that follows the numbers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

DENSE = Path(__file__).resolve().parents[2] / "data" / "sampling_dense" / "telemetry.h5"


@pytest.mark.skipif(not DENSE.exists(), reason="data/sampling_dense/telemetry.h5 missing")
def test_sampling_control_runs_every_variant_and_its_verdict_uses_the_numbers(tmp_path):
    from hpcds1mpi.analysis import sampling_control

    out = sampling_control.main(["--telemetry", str(DENSE), "--seeds", "2", "--name", "t",
                                 "--fractions", "0.5", "--out-dir", str(tmp_path)])
    rows = out["rows"]
    assert [r["rate"] for r in rows] == [1.0, 0.75, 0.75, 0.75, 0.75]
    assert [r["floor"] for r in rows] == [None, None, 0.25, 0.5, 0.75]
    for r in rows[1:]:  # about 75 % kept, and the floors change which rows
        for kept, full in zip(r["kept"], rows[0]["kept"]):
            assert abs(kept / full - 0.75) < 0.1
    assert len({r["runtime_mape_mean"] for r in rows}) == len(rows)
    for r in rows:  # losses are paired by seed: their mean is the difference of the means
        per_seed = [m - f for m, f in zip(r["runtime_mape_per_seed"],
                                          rows[0]["runtime_mape_per_seed"])]
        assert r["loss_mean"] == pytest.approx(sum(per_seed) / 2)
        assert r["loss_se"] == pytest.approx(abs(per_seed[0] - per_seed[1]) / 2)
    assert f"{rows[1]['loss_mean']:+.2f} points" in out["verdict"]
    assert f"{rows[-1]['loss_mean']:+.2f} points" in out["verdict"]
    # The curve: half the training rows at fraction 0.5, all of them at 1.0 (the rows above).
    half, full = out["curve"]
    assert (half["fraction"], full["fraction"]) == (0.5, 1.0)
    assert full["n_train"] == rows[0]["kept"][0] == 219  # every training row of the split
    assert half["n_train"] == round(full["n_train"] / 2)
    assert half["rows"][0]["kept"] == [half["n_train"]] * 2
    saved = json.loads((tmp_path / "sampling_control_t.json").read_text())
    assert saved["verdict"] == out["verdict"]
    md = (tmp_path / "sampling_control_t.md").read_text()
    assert out["verdict"] in md and f"{half['n_train']} training rows" in md


@pytest.mark.parametrize("fractions", ["0", "1.5", "-0.2,0.5", "half"])
def test_fractions_outside_zero_one_are_refused(fractions, tmp_path, capsys):
    from hpcds1mpi.analysis import sampling_control

    with pytest.raises(SystemExit) as exit_info:
        sampling_control.main(["--telemetry", str(DENSE), f"--fractions={fractions}",
                               "--out-dir", str(tmp_path)])
    assert exit_info.value.code == 2
    assert "--fractions must lie in (0, 1]" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


def test_mean_se_is_the_standard_error_of_the_mean():
    from hpcds1mpi.analysis.sampling_control import mean_se

    mean, se = mean_se([1.0, 2.0, 3.0, 6.0])
    assert mean == 3.0
    assert se == pytest.approx((14 / 3 / 4) ** 0.5)
