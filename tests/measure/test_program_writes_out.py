"""A program that writes the sweep's own telemetry file (s33 tester B1): refused before
anything runs where its command names the file, stopped with every run kept where it does not."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from hpcds1mpi.measure.program_writes_out import kept_name
from hpcds1mpi.records import telemetry
from tests.helpers import error_lines, run_cli

pytestmark = pytest.mark.mpi

#: Truncates ``clobber.h5`` (named by no word of its command) from size 20 on, as h5write.py
#: wrote out.h5, its default data file.
CLOBBER = """
import sys
if int(sys.argv[1]) >= 20:
    with open("clobber.h5", "w") as fh:
        fh.write("the program's own data")
print("TIME=0.5")
"""


def _sweep(app: Path, sizes: str, out: str, *extra: str) -> list[str]:
    return ["sweep", "--command", f"{sys.executable} {app} {{size}}", "--label", "clob",
            "--sizes", sizes, "--ranks-per-node", "1", "--min-repeats", "1", "--max-repeats",
            "1", "--min-time", "0", "--no-progress", "--out", out, *extra]


def test_a_program_writing_the_telemetry_file_stops_the_sweep_and_its_runs_are_kept(tmp_path):
    app = tmp_path / "clobber.py"
    app.write_text(CLOBBER)
    first = run_cli(_sweep(app, "10", "clobber.h5"), cwd=tmp_path, timeout=120)
    assert first.returncode == 0, first.stderr
    # the tester's run: more sizes and --resume; size 20 truncates the telemetry
    proc = run_cli(_sweep(app, "10,20,30", "clobber.h5", "--resume"), cwd=tmp_path,
                   timeout=120)
    lines = error_lines(proc.stderr)
    assert proc.returncode == 1 and len(lines) == 1, proc.stderr
    kept = tmp_path / "clobber-hpcds1mpi.h5"
    assert "rewrote the telemetry file clobber.h5" in lines[0]
    assert "1 finished runs are kept in clobber-hpcds1mpi.h5" in lines[0]
    assert "give another --out" in lines[0]
    assert (tmp_path / "clobber.h5").read_text() == "the program's own data"  # left to it
    runs = {int(r.size): r.status for r in telemetry.read_runs(kept).itertuples()}
    assert runs == {10: "ok", 20: "interrupted"}  # the earlier run survived
    assert sorted(p.name for p in tmp_path.iterdir()) == ["clobber-hpcds1mpi.h5", "clobber.h5",
                                                           "clobber.py"]  # no journal, lock
    # the kept file is a telemetry file: the sweep goes on into it
    again = run_cli(_sweep(app, "10,20", str(kept), "--resume"), cwd=tmp_path, timeout=120)
    assert again.returncode == 0 and "(ok 1; 1 already done)" in again.stderr, again.stderr


def test_a_command_that_names_the_telemetry_file_is_refused_before_anything_runs(tmp_path):
    app = tmp_path / "app.py"
    app.write_text("print('TIME=1')\n")
    (tmp_path / "runs").mkdir()
    cases = [["t.h5"], [str(tmp_path / "t.h5")], ["--data=t.h5"], ["out=./t.h5"]]
    for words in cases:
        argv = ["sweep", "--command", f"{sys.executable} {app} {{size}} {' '.join(words)}",
                "--sizes", "1", "--ranks-per-node", "1", "--no-progress", "--out", "t.h5"]
        proc = run_cli(argv, cwd=tmp_path, timeout=60)
        lines = error_lines(proc.stderr)
        assert proc.returncode == 2 and len(lines) == 1, (words, proc.stderr)
        assert "is a file the program writes: --command names it" in lines[0]
        assert "give another --out, e.g. --out t-hpcds1mpi.h5" in lines[0]
    # relative to --workdir: '../t.h5' from runs/ is the --out
    argv = ["sweep", "--command", f"{sys.executable} {app} {{size}} ../t.h5", "--sizes", "1",
            "--ranks-per-node", "1", "--workdir", "runs", "--no-progress", "--out", "t.h5"]
    proc = run_cli(argv, cwd=tmp_path, timeout=60)
    assert proc.returncode == 2 and "(run in runs)" in proc.stderr, proc.stderr
    # --output-file the same file
    argv = ["sweep", "--command", f"{sys.executable} {app} {{size}}", "--sizes", "1",
            "--ranks-per-node", "1", "--output-file", "t.h5", "--no-progress", "--out", "t.h5"]
    proc = run_cli(argv, cwd=tmp_path, timeout=60)
    assert proc.returncode == 2 and "it is the --output-file" in proc.stderr, proc.stderr
    assert not (tmp_path / "t.h5").exists()  # nothing ran, nothing written
    # another file of the same name elsewhere is no clash
    argv = ["sweep", "--command", f"{sys.executable} {app} {{size}} runs/t.h5", "--sizes",
            "1", "--ranks-per-node", "1", "--min-time", "0", "--max-repeats", "1",
            "--min-repeats", "1", "--no-progress", "--out", "t.h5"]
    assert run_cli(argv, cwd=tmp_path, timeout=60).returncode == 0


def test_the_kept_file_is_a_new_name_beside_the_telemetry(tmp_path):
    out = tmp_path / "out.h5"
    assert kept_name(str(out)) == str(tmp_path / "out-hpcds1mpi.h5")
    (tmp_path / "out-hpcds1mpi.h5").write_text("")
    assert kept_name(str(out)) == str(tmp_path / "out-hpcds1mpi-2.h5")
