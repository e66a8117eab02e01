"""A ``--resume`` after an input the command names was edited: refused, or with
``--accept-edited-inputs`` said (s47 tester K7)."""

from __future__ import annotations

import json
import os

import pytest

from hpcds1mpi.measure.input_stamps import INPUTS, stamp_edited
from hpcds1mpi.records import telemetry
from tests.helpers import error_lines, run_cli

pytestmark = pytest.mark.mpi


def _sweep(tmp_path, sizes: str, *extra) -> list[str]:
    """A one-launch sweep of a script that reads ``in.txt`` (and, given ``keep``, rewrites
    ``state.txt``, an input it updates itself) and prints its time."""
    app = tmp_path / "app.sh"
    app.write_text('#!/bin/sh\ncat "$2" > /dev/null\n[ -n "$3" ] && echo "$1" >> "$3"\n'
                   'echo "time: 0.01 s"\n')
    app.chmod(0o755)
    return ["sweep", "--command", f"{app} {{size}} in.txt state.txt", "--label", "app",
            "--sizes", sizes, "--ranks-per-node", "1", "--threads", "1", "--min-time", "0",
            "--max-repeats", "1", "--time-regex", r"time: (\S+) s", "--no-progress",
            "--out", str(tmp_path / "r.h5"), *extra]


def _back(path, seconds: float = 5.0) -> None:
    """Set ``path``'s modification time ``seconds`` back: the runs after it are later."""
    stamp = os.stat(path).st_mtime - seconds
    os.utime(path, (stamp, stamp))


def test_an_input_edited_after_the_runs_refuses_the_resume_and_nothing_is_lost(tmp_path):
    (tmp_path / "in.txt").write_text("(set! num-bands 4)\n")
    (tmp_path / "state.txt").write_text("0\n")
    _back(tmp_path / "in.txt"), _back(tmp_path / "state.txt")
    proc = run_cli(_sweep(tmp_path, "1"), timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = tmp_path / "r.h5"
    stamps = json.loads(telemetry.read_snapshot(out).attrs[INPUTS])
    assert set(stamps) == {"in.txt", "state.txt"}  # the program (app.sh) is no argument
    # the program's own rewrite of state.txt during its run is no edit: the resume goes on
    proc = run_cli(_sweep(tmp_path, "1,2") + ["--resume"], timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "was edited" not in proc.stderr
    (tmp_path / "in.txt").touch()  # the same content: no edit
    proc = run_cli(_sweep(tmp_path, "1,2,3") + ["--resume"], timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    (tmp_path / "in.txt").write_text("(set! num-bands 12)\n")
    before = telemetry.read_snapshot(out).attrs
    proc = run_cli(_sweep(tmp_path, "1,2,3,4") + ["--resume"], timeout=120, cwd=tmp_path)
    lines = error_lines(proc.stderr)
    assert proc.returncode == 2 and len(lines) == 1 and "Traceback" not in proc.stderr, \
        proc.stderr
    assert "in.txt was edited at" in lines[0] and "give a new --out" in lines[0], lines
    assert "--accept-edited-inputs" in lines[0], lines
    assert len(telemetry.read_runs(out)) == 3  # nothing launched, nothing lost
    assert telemetry.read_snapshot(out).attrs[INPUTS] == before[INPUTS]
    proc = run_cli(_sweep(tmp_path, "1,2,3,4") + ["--resume", "--accept-edited-inputs"],
                   timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "in.txt was edited at" in proc.stderr and "(--accept-edited-inputs)" in proc.stderr
    assert len(telemetry.read_runs(out)) == 4
    proc = run_cli(_sweep(tmp_path, "1,2,3,4,5") + ["--resume"], timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr  # accepted once: stamped anew


def test_an_edit_is_another_size_hash_or_where_unhashed_time():
    assert stamp_edited([10, 1.0, "a"], [11, 1.0, "a"])
    assert stamp_edited([10, 1.0, "a"], [10, 1.0, "b"])
    assert not stamp_edited([10, 1.0, "a"], [10, 2.0, "a"])  # touched
    assert stamp_edited([10, 1.0, ""], [10, 2.0, ""])  # too large to hash: its time
    assert not stamp_edited(None, [10, 2.0, "a"])  # not stamped then (not there, older file)


def test_a_refusal_for_a_command_without_the_flag_does_not_name_it(tmp_path):
    """``tune``'s trials resume through the same check but have no --accept-edited-inputs: the
    refusal had named a flag tune does not take (s47, FF's note; tune takes it since s48)."""
    from hpcds1mpi.errors import ConfigError
    from hpcds1mpi.measure.input_stamps import check_inputs

    (tmp_path / "in.txt").write_text("4\n")
    _back(tmp_path / "in.txt")
    proc = run_cli(_sweep(tmp_path, "1"), timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    (tmp_path / "in.txt").write_text("12\n")
    st = os.stat(tmp_path / "in.txt")
    now = {"in.txt": [st.st_size, st.st_mtime, "other"]}
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        with pytest.raises(ConfigError) as named:
            check_inputs("r.h5", now, False)
        with pytest.raises(ConfigError) as unnamed:
            check_inputs("r.h5", now, None)
    finally:
        os.chdir(old)
    assert "--accept-edited-inputs" in str(named.value)
    assert "--accept-edited-inputs" not in str(unnamed.value)
    assert "give a new --out for the edited input (or restore it)" in str(unnamed.value)
