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


def test_cli_ingest_refuses_a_bad_out_before_reading(tmp_path, capsys):
    """A wrong --out suffix or a folder at --out: one line, exit 2, before any log is read."""
    import pytest

    from hpcds1mpi.cli import main

    folder = tmp_path / "jobs.parquet"
    folder.mkdir()
    for out, fragment in ((tmp_path / "jobs.txt", ".parquet or .csv"), (folder, "directory")):
        with pytest.raises(SystemExit) as exit_info:
            main(["ingest", str(tmp_path / "never_read.txt"), "--out", str(out)])
        err = capsys.readouterr().err
        assert exit_info.value.code == 2 and err.count("\n") == 1 and fragment in err, err
        assert "never_read" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["jobs.parquet"]
