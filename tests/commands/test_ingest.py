"""``hpcds1mpi ingest``: the per-file report and one-line errors."""

from __future__ import annotations

import pandas as pd

from tests.helpers import run_cli
from tests.records.ingest.captures import DATA


def test_cli_ingest(tmp_path):
    out = tmp_path / "jobs.parquet"
    res = run_cli(["ingest", str(DATA / "sacct-malformed.txt"), str(DATA / "sacct-energy-gpu.txt"),
                   "--out", str(out)], timeout=120)
    assert res.returncode == 0, res.stderr
    assert "dropped 1 x step rows without their job line" in res.stdout
    assert "wrote 3 jobs" in res.stdout
    assert len(pd.read_parquet(out)) == 3
    bad = tmp_path / "jobcomp.txt"
    bad.write_text("JobId=1 UserId=root(0) Name=x JobState=FAILED\n")
    res = run_cli(["ingest", str(bad), "--out", str(out)], timeout=120)
    assert res.returncode != 0
    assert "Traceback" not in res.stderr and len(res.stderr.strip().splitlines()) == 1
