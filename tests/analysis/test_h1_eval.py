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
