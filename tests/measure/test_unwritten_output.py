"""A reading missed because the launch never wrote its --output-file says so (s43 tester G6)."""

from __future__ import annotations

from pathlib import Path

from hpcds1mpi.measure.file_mark import FileMark
from hpcds1mpi.measure.readings import Readings
from hpcds1mpi.measure.unwritten_output import unwritten_problem
from hpcds1mpi.records import telemetry
from tests.helpers import run_cli


def test_a_launch_that_never_wrote_its_output_file_is_said_so_with_the_file_and_folder(
        tmp_path):
    """Was: "--time-regex ... matched no number in its output", while log.txt held a match
    from before the launch (LIGGGHTS under `-log none`): the user was sent to a right regex."""
    program = tmp_path / "p.sh"
    program.write_text("#!/bin/sh\necho running $1\n")
    program.chmod(0o755)
    (tmp_path / "log.txt").write_text("Loop time of 0.53 on 1 procs\n")
    proc = run_cli(["sweep", "--command", f"{program} {{size}}", "--label", "own", "--sizes",
                    "8", "--ranks-per-node", "1", "--threads", "1", "--max-repeats", "1",
                    "--no-progress", "--workdir", str(tmp_path), "--output-file", "log.txt",
                    "--time-regex", r"Loop time of ([0-9.]+)", "--out",
                    str(tmp_path / "own.h5")], timeout=120)
    error = telemetry.read_runs(tmp_path / "own.h5")["error"].iloc[0]
    assert error == (f"exit 0, but its --output-file 'log.txt' was not written by this launch "
                     f"(unchanged since before it; the launch ran in {tmp_path}), so "
                     "--time-regex had nothing of it to read: make the command write that file "
                     "in its working folder (its own options may turn the file off), or drop "
                     "--output-file if it prints the line itself"), proc.stderr
    assert (tmp_path / "log.txt").read_text() == "Loop time of 0.53 on 1 procs\n"  # kept


def test_only_a_missing_reading_from_a_file_not_written_is_said(tmp_path):
    readings = Readings.of(time_regex=r"t=(\S+)", ranks_regex=r"n=(\d+)", output_file="o.txt")
    path = str(tmp_path / "o.txt")
    missed = {"time_text": None, "ranks": float("nan")}
    said = unwritten_problem(readings, missed, path, FileMark.of(path), str(tmp_path))
    assert "(no such file;" in said and "--time-regex and --ranks-regex had nothing" in said
    Path(path).write_text("t=1\n")
    mark = FileMark.of(path)
    assert "(unchanged since before it;" in unwritten_problem(readings, missed, path, mark,
                                                               str(tmp_path))
    Path(path).write_text("other text, now\n")  # written, the regex missed: the regex's own
    assert unwritten_problem(readings, missed, path, mark, str(tmp_path)) == ""
    read = {"time_text": "1", "ranks": 2.0}  # nothing missing: nothing said
    assert unwritten_problem(readings, read, str(tmp_path / "none"), FileMark(), ".") == ""
    assert unwritten_problem(Readings.of(time_regex="t=(\\S+)"), missed, None, FileMark(),
                             ".") == ""
