"""A print between two writes never stops a command part-way (runtime/unstoppable_output.py)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

#: A command that prints more than a pipe holds before, between and after two writes.
COMMAND = """
import sys
from pathlib import Path
import click
from hpcds1mpi import cli

def work(*args, **kwargs):
    click.echo("progress " * 20000)
    Path(sys.argv[1], "first").write_text("1")
    click.echo("a note " * 20000, err=True)
    click.echo("more progress " * 20000)
    Path(sys.argv[1], "second").write_text("2")
    click.echo("done")

cli.cli.main = work
cli.main(["kernels"])
"""


def _run(tmp_path, **streams) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", COMMAND, str(tmp_path)], timeout=120,
                          **streams)


def _both_written(tmp_path) -> bool:
    return {p.name for p in tmp_path.iterdir()} == {"first", "second"}


def test_a_reader_that_left_lets_the_command_finish_then_exits_141(tmp_path):
    """s32's left item: `quickstart | head -1` stopped part-way; `campaign emit --submit`
    printed its summary before it submitted."""
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first line
    proc = _run(tmp_path, stdout=write, stderr=subprocess.PIPE, text=True)
    os.close(write)
    assert _both_written(tmp_path), proc.stderr[-500:]
    assert proc.returncode == 141 and proc.stderr.startswith("a note"), proc.stderr[-300:]


def test_a_full_stdout_lets_the_command_finish_then_says_so_in_one_line(tmp_path):
    with open("/dev/full", "w") as full:
        proc = _run(tmp_path, stdout=full, stderr=subprocess.PIPE, text=True)
    assert _both_written(tmp_path), proc.stderr[-500:]
    last = proc.stderr.splitlines()[-1]
    assert proc.returncode == 1 and last.startswith(
        "hpcds1mpi: error: standard output not written, the disk is full"), last
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("where", ["/dev/full", "closed pipe"])
def test_a_lost_stderr_lets_the_command_finish(tmp_path, where):
    """s32's left item: a note on stderr before a write failed the command under 2>/dev/full."""
    if where == "/dev/full":
        with open("/dev/full", "w") as full:
            proc = _run(tmp_path, stdout=subprocess.DEVNULL, stderr=full)
    else:
        read, write = os.pipe()
        os.close(read)
        proc = _run(tmp_path, stdout=subprocess.DEVNULL, stderr=write)
        os.close(write)
    assert _both_written(tmp_path)
    assert proc.returncode == 0


def test_a_stream_that_is_not_descriptor_1_or_2_is_left_alone(capsys):
    from hpcds1mpi.runtime.unstoppable_output import keep_going

    before = sys.stdout
    assert keep_going("stdout") is None and sys.stdout is before


def test_other_write_errors_are_not_hidden(tmp_path):
    """Only a departed reader or a full disk is dropped: a bad descriptor is a bug."""
    from hpcds1mpi.runtime.unstoppable_output import DroppingWriter

    fd = os.open(tmp_path / "f", os.O_RDONLY | os.O_CREAT)
    try:
        with pytest.raises(OSError):
            DroppingWriter(fd).write(b"x")
    finally:
        os.close(fd)
