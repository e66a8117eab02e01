"""The progress line: one line per 10 % off a terminal, redrawn in place on one."""

from __future__ import annotations

import io

from hpcds1mpi.measure.progress import Progress


def test_a_line_every_ten_percent_when_not_a_terminal():
    stream = io.StringIO()
    bar = Progress(20, stream=stream)
    for done in range(1, 21):
        bar.update(done)
    lines = stream.getvalue().splitlines()
    assert 10 <= len(lines) <= 11  # one line per 10 % when not a terminal
    assert lines[-1].startswith("[" + "#" * 30 + "] 20/20 configs")


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_redrawn_in_place_on_a_terminal_and_silent_when_disabled():
    stream = _Terminal()
    bar = Progress(3, stream=stream)
    for done in range(1, 4):
        bar.update(done, "(k 8)")
    text = stream.getvalue()
    assert text.startswith("\r[") and text.endswith("\n") and text.count("\n") == 1
    assert text.count("\r") == 2  # the second update came within 0.2 s: not redrawn
    assert "3/3 configs, 00:00:00 left (k 8)" in text
    quiet = io.StringIO()
    for bar in (Progress(3, stream=quiet, enabled=False), Progress(0, stream=quiet)):
        bar.update(1)
    assert quiet.getvalue() == ""


def test_time_left_past_a_day_counts_the_days():
    """s35 tester T6: the time left was strftime("%H:%M:%S") of gmtime, which wraps every 24 h:
    82.5 h left showed "10:30:00 left". It is written as Slurm writes a time, days first."""
    import time

    stream = io.StringIO()
    bar = Progress(12, stream=stream)
    bar.start = time.monotonic() - 7.5 * 3600  # one of 12 done in 7.5 h: 82.5 h left
    bar.update(1)
    assert "1/12 configs, 3-10:30:0" in stream.getvalue(), stream.getvalue()
    short = Progress(2, stream=io.StringIO())
    short.start = time.monotonic() - 3599.5
    short.update(1)
    assert "1/2 configs, 00:59:59 left" in short.stream.getvalue()
