"""The code-against-code System 1 timing runs both trees in fresh processes and reports."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("system1_code_speed",
                                               ROOT / "benchmarks" / "system1_code_speed.py")
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


def test_one_round_against_itself_reports_both_and_a_ratio(tmp_path):
    out = tmp_path / "speed"
    assert bench.main(["--baseline-tree", str(ROOT), "--bundle",
                       str(ROOT / "hpcds1mpi" / "data" / "default_model"), "--rounds", "2",
                       "--out", str(out)]) == 0
    doc = json.loads(out.with_suffix(".json").read_text())
    assert len(doc["base"]) == len(doc["new"]) == 2
    assert all(x["wall"] > 0 and x["cpu"] > 0 for x in doc["base"] + doc["new"])
    assert 0 < doc["summary"]["ratio_cpu"] < 10
    assert "| this tree |" in out.with_suffix(".md").read_text()
