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
