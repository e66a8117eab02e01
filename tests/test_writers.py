"""One writer per output: the lock beside it refuses (or waits for) a second process, names the
holder, and dies with its process; temporaries carry their writer's PID@HOST."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from hpcds1mpi import atomic, writers
from hpcds1mpi.errors import LockError


def holder(path: Path, seconds: float = 60) -> subprocess.Popen:
    """Another process that takes the lock of ``path``, says so, and keeps it ``seconds``."""
    code = textwrap.dedent(f"""
        import sys, time
        from hpcds1mpi.writers import hold_lock
        assert hold_lock({str(path)!r})
        print("held", flush=True)
        time.sleep({seconds})
    """)
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "held"
    return proc


def test_a_second_process_is_refused_in_one_line_naming_the_lock_and_the_holder(tmp_path):
    target = tmp_path / "model"
    proc = holder(target)
    try:
        with pytest.raises(LockError) as err:
            writers.hold_lock(target, "bundle")
        text = str(err.value)
        assert f"pid {proc.pid} on {writers.HOST}" in text and "\n" not in text
        assert str(writers.lock_path(target)) in text and err.value.exit_code == 1
        assert not writers.holds_lock(target)
    finally:
        proc.kill()
        proc.wait()
    # A killed holder leaves its lock file, never its lock.
    assert writers.lock_path(target).exists()
    assert writers.hold_lock(target) and writers.holds_lock(target)
    writers.release_lock(target)
    assert not writers.lock_path(target).exists()


def test_a_waiting_writer_gets_the_lock_when_the_holder_is_done(tmp_path):
    target = tmp_path / "failures.json"
    proc = holder(target, seconds=0.5)
    start = time.monotonic()
    with writers.output_lock(target, wait_s=30) as held:
        assert held and time.monotonic() - start > 0.2
    proc.wait()
    assert not writers.lock_path(target).exists()


def test_one_process_takes_its_own_lock_twice_as_one(tmp_path):
    target = tmp_path / "camp"
    assert writers.hold_lock(target)
    with writers.output_lock(target):  # nested: does not let the outer lock go
        pass
    assert writers.holds_lock(target)
    (tmp_path / "link").symlink_to(target)
    assert writers.holds_lock(tmp_path / "link")  # one lock, however the path is spelt
    writers.release_lock(target)
    assert not writers.holds_lock(target) and not writers.lock_path(target).exists()


def test_no_folder_yet_means_no_lock_yet(tmp_path):
    assert writers.hold_lock(tmp_path / "missing" / "model") is False


def test_sigterm_while_a_lock_is_held_ends_with_one_line_and_lets_it_go(tmp_path):
    code = textwrap.dedent(f"""
        import time
        from hpcds1mpi.writers import hold_lock
        hold_lock({str(tmp_path / "model")!r}, "bundle")
        print("held", flush=True)
        time.sleep(60)
    """)
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "held"
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 1
    assert err.strip().splitlines() == [
        f"hpcds1mpi: error: {tmp_path / 'model'}: stopped by SIGTERM while writing the bundle; "
        "no partial output is left, rerun to write it"]
    assert os.listdir(tmp_path) == []  # the lock file went with it


def test_the_temporaries_and_the_lock_share_one_prefix_readers_skip():
    assert atomic.TMP_PREFIX == writers.TMP_PREFIX
    assert writers.lock_path("/a/model").name.startswith(writers.TMP_PREFIX)
    prefix = writers.tmp_prefix("x" * 400, ".parquet")
    assert prefix.endswith(f".{os.getpid()}@{writers.HOST}.")
    assert len(os.fsencode(prefix + "abcdefgh.parquet")) <= 255


def test_a_lock_taken_by_a_command_is_let_go_when_the_command_ends(tmp_path):
    """A command that fails between check_output_dir and the write (or never writes through
    atomic_dir: quickstart) does not keep its lock in a process that runs on (a test's
    CliRunner)."""
    import click
    from click.testing import CliRunner

    @click.command()
    def command():
        assert writers.hold_lock(tmp_path / "model")
        raise click.ClickException("failed after the check")

    assert CliRunner().invoke(command, []).exit_code == 1
    assert not writers.holds_lock(tmp_path / "model") and os.listdir(tmp_path) == []
