"""Ctrl-C says what SIGTERM says while an output is written (s33 tester C9)."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap

import pytest

from hpcds1mpi.runtime.interrupt_line import Interrupted, line_of, stop_line

WRITING = textwrap.dedent("""
    import time
    from hpcds1mpi import cli
    from hpcds1mpi.writers import catch_sigterm, uncatch_sigterm

    def command(*args, **kwargs):  # a writer that keeps what it finished
        catch_sigterm("qs", "quickstart folder", "the runs measured so far are kept there")
        try:
            print("writing", flush=True)
            time.sleep(60)
        finally:
            uncatch_sigterm()

    cli.cli.main = command
    cli.main(["kernels"])
""")


@pytest.mark.parametrize("signum, code, words", [
    (signal.SIGINT, 130, "Ctrl-C (SIGINT)"), (signal.SIGTERM, 1, "SIGTERM")])
def test_ctrl_c_while_writing_says_what_sigterm_says(signum, code, words):
    """Ctrl-C had printed only "hpcds1mpi: aborted" where SIGTERM said what was kept."""
    proc = subprocess.Popen([sys.executable, "-c", WRITING], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "writing"
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == code
    assert err.strip() == (f"hpcds1mpi: error: qs: stopped by {words} while writing the "
                           "quickstart folder; the runs measured so far are kept there")


def test_nothing_written_has_no_line(monkeypatch):
    from hpcds1mpi import writers

    # an earlier test in this process may still hold a lock (and its line) until exit
    monkeypatch.setattr(writers, "_WRITING", [])
    assert stop_line() is None and line_of(KeyboardInterrupt()) is None


def test_the_line_travels_as_the_cause_of_clicks_abort():
    import click

    try:
        try:
            raise Interrupted("the line")
        except KeyboardInterrupt as exc:
            raise click.exceptions.Abort() from exc
    except click.exceptions.Abort as abort:
        assert line_of(abort) == "the line"
