"""The supervisor: relaunch until the plan is done, stop on a user error or on no progress.

Launches are faked (``subprocess.run`` replaced): each fake launch appends rows to the telemetry
file as a real launch would and returns an exit code. The real relaunch after a timeout and a
lone failing rank is tested in tests/measure/test_watchdog.py.
"""

from __future__ import annotations

import subprocess
import types

import pytest

from hpcds1mpi.errors import LaunchError
from hpcds1mpi.launch import launchers
from hpcds1mpi.measure.supervise import supervise
from hpcds1mpi.records import telemetry


def _fake_launches(monkeypatch, out, script):
    """Replace launches by ``script``: a list of (rows to record, exit code), one per launch.

    Returns the argv of every launch made, filled in as they are made.
    """
    calls = []
    real_run = subprocess.run

    def run(argv, *args, **kwargs):
        if argv[0] != "launch":  # not a sweep launch (h5py's import asks `uname -p`)
            return real_run(argv, *args, **kwargs)
        rows, rc = script[len(calls)]
        calls.append(list(argv))
        if rows:
            telemetry.append(out, [{"run_id": f"r{len(calls)}-{i}", "machine_id": "m",
                                    "workload": "w", "status": "ok"} for i in range(rows)])
        return types.SimpleNamespace(returncode=rc)

    monkeypatch.setattr(subprocess, "run", run)
    # The launcher's own tokens are tested in tests/launch; here only that they come first.
    monkeypatch.setattr(launchers, "total_tokens",
                        lambda ranks, launcher=None: ["launch", "-n", str(ranks)])
    return calls


def test_relaunches_with_resume_until_done(monkeypatch, tmp_path, capsys):
    """A timeout abort (124), then exit 2 after progress (a user error only on launch 1)."""
    out = tmp_path / "t.h5"
    calls = _fake_launches(monkeypatch, out, [(2, 124), (1, 2), (1, 0)])
    assert supervise(3, ["--plan", "p.toml", "--out", str(out)], str(out),
                     launcher="mpiexec") == 0
    assert len(calls) == 3
    assert calls[0][-5:] == ["sweep", "--plan", "p.toml", "--out", str(out)]
    assert calls[0][:3] == ["launch", "-n", "3"]
    assert all(c[-1] == "--resume" and c.count("--resume") == 1 for c in calls[1:])
    err = capsys.readouterr().err
    assert "launch 1 exited 124; 2 runs recorded, resuming" in err
    assert "launch 2 exited 2; 3 runs recorded, resuming" in err


def test_user_error_on_the_first_launch_is_returned(monkeypatch, tmp_path):
    out = tmp_path / "t.h5"
    calls = _fake_launches(monkeypatch, out, [(0, 2)])
    assert supervise(2, ["--out", str(out)], str(out), launcher="mpiexec") == 2
    assert len(calls) == 1


def test_a_launch_without_progress_stops(monkeypatch, tmp_path):
    out = tmp_path / "t.h5"
    _fake_launches(monkeypatch, out, [(1, 1), (0, 1)])
    with pytest.raises(LaunchError, match="launch 2 exited 1 without recording a run"):
        supervise(2, ["--out", str(out)], str(out), launcher="mpiexec")
    _fake_launches(monkeypatch, tmp_path / "none.h5", [(0, 137)])  # no file at all
    with pytest.raises(LaunchError, match="launch 1 exited 137 without recording"):
        supervise(2, [], str(tmp_path / "none.h5"), launcher="mpiexec")


def test_gives_up_after_max_launches(monkeypatch, tmp_path):
    out = tmp_path / "t.h5"
    _fake_launches(monkeypatch, out, [(1, 1)] * 3)
    with pytest.raises(LaunchError, match="not finished after 3 launches"):
        supervise(2, [], str(out), max_launches=3, launcher="mpiexec")
