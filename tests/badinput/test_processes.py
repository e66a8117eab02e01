"""The few cases that need a fresh process: the installed console script's exit codes and
stderr, a second writer refused by the telemetry lock (a runtime failure, exit 1), and a sweep
of a program that does not exist (an error of the sweep, not a measurement)."""

from __future__ import annotations

import subprocess

import pytest

from tests.badinput.harness import PREFIX, assert_unchanged, snapshot
from tests.helpers import hpcds1mpi_exe


def _run(argv, cwd, timeout=120):
    return subprocess.run([hpcds1mpi_exe(), *argv], capture_output=True, text=True, cwd=cwd,
                          timeout=timeout)


def _one_line(proc, code, *fragments):
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == code, (proc.returncode, proc.stderr)
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(PREFIX), proc.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


@pytest.mark.parametrize("argv, fragment", [
    (["recommend", "--workload", "stencil", "--size", "-5"], "--size"),
    (["recommend", "--workload", "stencil"], "--size"),
    (["nosuchcommand"], "nosuchcommand"),
    (["run", "stencil", "--size", "abc"], "--size"),
], ids=["bad-value", "missing-option", "unknown-command", "not-a-number"])
def test_usage_errors_exit_2_in_one_line(tmp_path, argv, fragment):
    before = snapshot(tmp_path)
    _one_line(_run(argv, tmp_path), 2, fragment)
    assert_unchanged(before, snapshot(tmp_path))


def test_a_second_writer_is_a_runtime_failure(tmp_path, box):
    """Two writers get a clear lock error: exit 1 (a runtime failure), the file unchanged."""
    from hpcds1mpi.records import telemetry

    source = box.root / "source.h5"
    source.write_bytes(box.tel.read_bytes())
    with telemetry.TelemetryWriter(box.tel, resume=True):
        before = snapshot(box.root)
        proc = _run(["telemetry", "merge", str(source), "--out", str(box.tel)], box.root)
        after = snapshot(box.root)
    _one_line(proc, 1)
    assert "lock" in proc.stderr.lower() or "another" in proc.stderr.lower(), proc.stderr
    assert_unchanged(before, after)


def test_nonexistent_program_is_an_error_not_a_measurement(tmp_path):
    """`sweep --command '/nonexistent/app'` exits 0 with the run stored as a `failed`
    measurement with modelled energy."""
    proc = _run(["sweep", "--command", "/nonexistent/app", "--sizes", "10", "--ranks-per-node",
                 "1", "--threads", "1", "--out", "app.h5", "--no-progress"], tmp_path)
    _one_line(proc, 2, "/nonexistent/app")
    assert not list(tmp_path.iterdir())
