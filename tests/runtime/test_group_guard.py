"""The group guard: a command's whole process group dies with the process that started it,
even a SIGKILLed one (s30 tester O4), and the guard exits as its command did. Real processes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import psutil
import pytest

from hpcds1mpi.runtime import group_guard


def _guarded(command: str) -> list[str]:
    return [sys.executable, "-I", "-S", group_guard.__file__, "/bin/sh", "-c", command]


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _wait_gone(pid: int, seconds: float = 20) -> bool:
    deadline = time.monotonic() + seconds
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    if _alive(pid):
        os.kill(pid, signal.SIGKILL)
        return False
    return True


def test_the_guard_exits_as_its_command_did():
    for command, code in (("exit 0", 0), ("exit 7", 7), ("kill -9 $$", -9),
                          ("kill -TERM $$", -15)):
        assert subprocess.run(_guarded(command), start_new_session=True).returncode == code
    missing = subprocess.run([sys.executable, "-I", "-S", group_guard.__file__,
                              "/no/such/program"], capture_output=True, text=True)
    assert missing.returncode == 127 and "cannot start /no/such/program" in missing.stderr


def test_what_the_command_leaves_running_ends_with_it(tmp_path):
    pid_file = tmp_path / "pid"
    done = subprocess.run(_guarded(f"sleep 300 & echo $! > {pid_file}; echo done"),
                          start_new_session=True, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout == "done\n"
    assert _wait_gone(int(pid_file.read_text())), "a leftover of the command outlived it"


@pytest.mark.parametrize("start", ["true && sleep 301 &", "setsid sleep 302 &"])
def test_a_sigkilled_parent_takes_the_commands_children_with_it(start, tmp_path):
    """The parent sets the guard's death signal (die_with_parent) and is SIGKILLed; the
    grandchild of the guard (a shell's child) goes too, even one that left the group with
    ``setsid`` (s30 verifier D2: the guard is a child subreaper)."""
    pid_file = tmp_path / "pid"
    parent = subprocess.Popen([sys.executable, "-c", (
        "import subprocess, sys, time\n"
        "from hpcds1mpi.runtime.processes import die_with_parent\n"
        f"subprocess.Popen({_guarded(f'{start} echo $! > {pid_file}; wait')!r}, "
        "start_new_session=True, preexec_fn=die_with_parent())\n"
        "time.sleep(600)\n")])
    deadline = time.monotonic() + 30
    while not (pid_file.exists() and pid_file.read_text().strip()):
        assert time.monotonic() < deadline and parent.poll() is None
        time.sleep(0.05)
    sleeper = int(pid_file.read_text())
    assert _alive(sleeper)
    parent.kill()
    parent.wait(timeout=30)
    assert _wait_gone(sleeper, 10), "the command's child outlived a SIGKILL of the guard's parent"


def test_a_leftover_that_left_the_group_ends_with_the_command(tmp_path):
    """``setsid`` takes a leftover out of the group; the guard, a child subreaper, still ends
    it (s30 verifier D2), and SIGKILLs one that ignores SIGTERM."""
    pid_file, stubborn_file = tmp_path / "pid", tmp_path / "stubborn"
    # a script of its own, so that its $$ is its own pid (not the outer shell's: s31 review)
    script = tmp_path / "stubborn.sh"
    script.write_text(f"trap '' TERM\necho $$ > {stubborn_file}\nwhile :; do sleep 0.1; done\n")
    done = subprocess.run(_guarded(
        f"setsid sleep 300 & echo $! > {pid_file}; setsid sh {script} & "
        f"while [ ! -s {stubborn_file} ]; do sleep 0.05; done; echo done"),
        start_new_session=True, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout == "done\n"
    assert _wait_gone(int(pid_file.read_text()), 5), "a setsid leftover outlived the command"
    assert _wait_gone(int(stubborn_file.read_text()), 5), "a SIGTERM-ignoring one outlived it"
