"""A program sweep's telemetry rows carry how they were read and the command as swept."""

from __future__ import annotations

import json
import sys

from hpcds1mpi.records.telemetry_rows import READING_KEYS, telemetry_rows
from hpcds1mpi.surrogates.levels import MEASURE_KEYS, levels_from_frame, recorded_measurement
from tests.helpers import run_cli


def test_the_reading_keys_are_the_ones_the_bundle_reads_back():
    assert READING_KEYS == MEASURE_KEYS


def test_a_one_size_program_sweep_keeps_its_template_and_reading_options(tmp_path):
    """Was: a sweep at one size stored 'prog s2.nw' (so recommend --size 5 ran s2.nw; s27
    tester Q, 2), and no row carried its reading options, so every calibration script said
    the bundle 'does not record them' (Q, 9)."""
    prog = tmp_path / "prog.py"
    prog.write_text("import sys\nprint('time: 0.01 s', sys.argv[1:])\n")
    out = tmp_path / "p.h5"
    res = run_cli(["sweep", "--command", f"{sys.executable} {prog} s{{size}}.nw",
                   "--label", "prog", "--sizes", "2", "--ranks-per-node", "1", "--threads", "1",
                   "--time-regex", r"time: ([0-9.]+) s", "--min-repeats", "1",
                   "--max-repeats", "1", "--min-time", "0", "--out", str(out),
                   "--no-progress"], timeout=120, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    rows = telemetry_rows(str(out))
    assert set(rows["command_template"]) == {f"{sys.executable} {prog} s{{size}}.nw"}
    options = json.loads(rows["measure_options"].iloc[0])
    assert options["time_regex"] == r"time: ([0-9.]+) s" and options["workdir"] == ""
    level = levels_from_frame(rows)["prog"]
    assert level.command.endswith("s{size}.nw")
    known, unknown = recorded_measurement(level)
    assert unknown == [] and known["fom_regex"] == ""
