"""A program's bare name runs in its job script as the file its sweep ran (s41 tester D7: the
script's bare ``python3`` was /usr/bin/python3 in a job submitted without the venv, and the
job failed with "No module named 'mpi4py'")."""

from __future__ import annotations

import os
import shutil

from hpcds1mpi.launch.program_path import PROGRAM_PATH, by_swept_path, resolved
from tests.helpers import run_cli


def _tool(folder, name: str = "mypython") -> str:
    path = folder / name
    path.write_text("#!/bin/sh\nexec sh \"$@\"\n")
    path.chmod(0o755)
    return str(path)


def test_a_bare_name_is_resolved_on_the_sweeps_path_a_path_is_not(tmp_path):
    tool = _tool(tmp_path)
    env = {"PATH": f"{tmp_path}:/usr/bin:/bin"}
    assert resolved(["mypython", "app.py", "8"], env) == tool
    assert resolved(["env", "OMP_NUM_THREADS=1", "mypython", "app.py"], env) == tool
    assert resolved(["./app", "8"], env) == "" and resolved(["nowhere-xyz", "8"], env) == ""


def test_the_script_runs_the_swept_file_or_says_why_not(tmp_path):
    tool = _tool(tmp_path)
    program, note = by_swept_path("mypython app.py {size} --n '{ranks}'", tool)
    assert program == f"{tool} app.py {{size}} --n '{{ranks}}'"
    assert note == (f"the script runs mypython as {tool}, the one the sweep ran (a job's PATH "
                    "may find another)")
    assert by_swept_path("env OMP_NUM_THREADS=1 mypython app.py", tool)[0] == \
        f"env OMP_NUM_THREADS=1 {tool} app.py"
    assert by_swept_path("otherpython app.py", tool) == ("otherpython app.py", "")
    assert by_swept_path("mypython app.py", "") == ("mypython app.py", "")
    gone = str(tmp_path / "gone" / "mypython")
    program, note = by_swept_path("mypython app.py", gone)
    assert program == "mypython app.py" and "which is no program here now" in note


def test_a_swept_programs_script_runs_its_interpreter_by_path(tmp_path):
    """A real sweep of ``sh app.sh {size}`` records the sh it ran; the script runs it by path."""
    from hpcds1mpi.records.telemetry_rows import telemetry_rows
    from hpcds1mpi.surrogates.levels import levels_from_frame
    from tests.decide.test_measured_run import _program_rec, _script

    (tmp_path / "app.sh").write_text('echo "time: 0.01 s"\n')
    out = tmp_path / "p.h5"
    res = run_cli(["sweep", "--command", "sh app.sh {size}", "--label", "app", "--sizes", "1,2",
                   "--ranks-per-node", "1", "--threads", "1", "--min-repeats", "1",
                   "--max-repeats", "1", "--min-time", "0", "--out", str(out), "--no-progress"],
                  timeout=180, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    levels = levels_from_frame(telemetry_rows(str(out)))["app"]
    sh = os.path.abspath(shutil.which("sh"))
    assert levels.launched_with[PROGRAM_PATH] == sh
    script = _script(_program_rec(levels), "slurm")
    assert f" {sh} app.sh 2" in script and f"runs sh as {sh}" in script
