"""H1 evaluation: its data comes from records.training, never from the CLI."""

from __future__ import annotations

import ast
from pathlib import Path

from hpcds1mpi.analysis import h1_eval
from hpcds1mpi.records import telemetry
from tests.surrogates.test_bundle import make_runs

ANALYSIS = Path(h1_eval.__file__).resolve().parent


def test_load_frame_checks_and_fills_configuration_columns(tmp_path):
    tele = tmp_path / "t.h5"
    telemetry.append(tele, make_runs().to_dict("records"))
    jobs = tmp_path / "jobs.parquet"
    make_runs().drop(columns=["run_id", "machine_id", "precision", "threads"]).to_parquet(jobs)
    frame, kind = h1_eval.load_frame([str(tele)], [])
    assert kind == "telemetry" and len(frame) == len(make_runs())
    frame, kind = h1_eval.load_frame([], [str(jobs)])
    assert kind == "jobs"
    assert set(frame["precision"]) == {"fp64"} and set(frame["threads"]) == {1}


def test_analysis_modules_import_no_command_module():
    for name in ("h1_eval.py", "h1_report.py", "sampling_control.py"):
        path = ANALYSIS / name
        if not path.exists():
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                assert "commands" not in (node.module or ""), (name, node.module)
            elif isinstance(node, ast.Import):
                assert not any("commands" in a.name for a in node.names), name


def test_main_writes_results_and_report_with_the_reference_row(tmp_path):
    tele = tmp_path / "t.h5"
    telemetry.append(tele, make_runs(sizes=(32, 48, 64, 96, 128)).to_dict("records"))
    results = h1_eval.main(["--telemetry", str(tele), "--name", "tiny", "--rates", "0.75,1.0",
                            "--families", "", "--no-tabnet-direct", "--seeds", "2",
                            "--splits", "size-interp", "--threads", "1",
                            "--out-dir", str(tmp_path)])
    assert [s["name"] for s in results["splits"]] == ["size-interp"]
    models = {r["model"] for r in results["rows"]}
    assert h1_eval.REFERENCE_MODEL in models and any(m.startswith("deployed") for m in models)
    assert all(r["n_seeds"] == 2 for r in results["rows"])
    report = (tmp_path / "h1_tiny.md").read_text()
    assert "## size-interp" in report and "## Sampling at 75 % vs 100 %" in report
    assert any("model-free reference" in line for line in results["summary"])
    assert (tmp_path / "h1_tiny.json").is_file()
