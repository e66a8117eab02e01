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


def test_a_sigterm_that_lands_where_python_drops_exceptions_still_stops_the_write(tmp_path):
    """A stop raised inside a weakref callback or ``__del__`` (h5py's object registry, in a
    merge) was printed as "Exception ignored", the write went on with SIGTERM ignored and
    exited 0 (s33 tester C7): it is delivered again and ends the write with its one line."""
    target = tmp_path / "t.h5"
    code = textwrap.dedent(f"""
        import os, signal, time
        from hpcds1mpi.writers import catch_sigterm, uncatch_sigterm

        class Dropped:
            def __del__(self):  # the signal's handler runs here, where exceptions are dropped
                os.kill(os.getpid(), signal.SIGTERM)

        catch_sigterm({str(target)!r}, "merged telemetry", "nothing was changed")
        try:
            Dropped()
            time.sleep(10)
            print("went on", flush=True)
        finally:
            uncatch_sigterm()
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert (proc.returncode, proc.stdout) == (1, ""), proc.stderr
    assert proc.stderr.strip().splitlines() == [
        f"hpcds1mpi: error: {target}: stopped by SIGTERM while writing the merged telemetry; "
        "nothing was changed"]
    # The hook is put in place for the write only: asked of a fresh process, as an earlier
    # test's lock in this one may still hold a catch of its own until exit.
    hook = textwrap.dedent(f"""
        import sys
        from hpcds1mpi import writers
        before = sys.unraisablehook
        writers.catch_sigterm({str(target)!r}, "merged telemetry")
        during = sys.unraisablehook is writers._stop_again
        writers.uncatch_sigterm()
        print(during, sys.unraisablehook is before)
    """)
    proc = subprocess.run([sys.executable, "-c", hook], capture_output=True, text=True,
                          timeout=60)
    assert proc.stdout.split() == ["True", "True"], proc.stderr


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


# ------------------------------------------------------------------- names that fit NAME_MAX


def test_a_long_name_is_shortened_the_same_way_each_time_and_apart_from_its_neighbours():
    """s32 tester T1: a side file of a 249-byte output was 257 bytes long (ENAMETOOLONG)."""
    assert writers.side_name("t.h5", "", ".journal") == "t.h5.journal"  # short: as always
    a, b = "k" * 252 + ".h5", "k" * 251 + "j.h5"
    for name in (a, b, "é" * 127):  # multi-byte letters count in bytes
        made = writers.side_name(name, ".", ".fault-0123456789abcdef-r7", ".x" * 40)
        assert len(os.fsencode(made)) <= 255 - 80 + len(".fault-0123456789abcdef-r7")
        assert made == writers.side_name(name, ".", ".fault-0123456789abcdef-r7", ".x" * 40)
    assert writers.side_name(a, after=".lock") != writers.side_name(b, after=".lock")
    assert len(os.fsencode(writers.lock_path("/tmp/" + a).name)) <= 255


def test_a_killed_writers_temporary_of_a_255_byte_name_is_removed_by_the_next(tmp_path):
    """Its shortened temporary must still be the one the next writer's clean-up looks for."""
    target = tmp_path / ("k" * 252 + ".h5")
    code = textwrap.dedent(f"""
        import sys, time
        from hpcds1mpi.atomic import atomic_path
        with atomic_path({str(target)!r}) as tmp:
            tmp.write_text("half")
            print(tmp.name, flush=True)
            time.sleep(60)
        """)
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    left = proc.stdout.readline().strip()
    proc.kill()
    proc.wait(timeout=30)
    assert left.startswith(writers.TMP_PREFIX) and os.listdir(tmp_path) == [left]
    atomic.write_text(target, "whole")
    assert os.listdir(tmp_path) == [target.name] and target.read_text() == "whole"


# ------------------------------------------------------------------- what a replacement keeps


def test_a_replacement_keeps_the_old_files_group(tmp_path):
    """s32 tester T8: a file of a group folder (setgid) had come back 0644 and readable by all."""
    old, new = tmp_path / "old", tmp_path / "new"
    old.write_text("old")
    new.write_text("new")
    group = next(g for g in (65534, 100, 1) if g != new.stat().st_gid)
    if os.geteuid() != 0 and group not in os.getgroups():
        pytest.skip("needs a second group this user may give a file")
    os.chown(old, -1, group)
    os.chmod(old, 0o440)
    writers.keep_mode(new, old)
    assert (new.stat().st_gid, new.stat().st_mode & 0o7777) == (group, 0o440)


def test_where_the_group_cannot_be_kept_it_gets_no_more_than_everyone(tmp_path, monkeypatch):
    """A writer outside the old file's group cannot give the new file that group (root can):
    its own group must not read what the old group read."""
    old, new = tmp_path / "old", tmp_path / "new"
    old.write_text("old")
    new.write_text("new")
    os.chmod(old, 0o640)

    def not_a_member(path, uid, gid):
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "stat", _other_group(os.stat, new))
    monkeypatch.setattr(os, "chown", not_a_member)
    writers.keep_mode(new, old)
    monkeypatch.undo()
    assert new.stat().st_mode & 0o7777 == 0o600


def _other_group(stat, new):
    """``os.stat`` that says ``new`` has another group than the old file (a non-member's)."""
    def patched(path, *args, **kwargs):
        found = stat(path, *args, **kwargs)
        if os.fspath(path) != os.fspath(new):
            return found
        fields = list(found)
        fields[5] += 1  # st_gid
        return os.stat_result(fields)
    return patched


# ------------------------------------------------------- what a folder swapped in for another keeps


def _modes(folder: Path) -> dict[str, int]:
    """Permission bits of ``folder`` ("." ) and of everything in it, by relative path."""
    return {str(p.relative_to(folder)): p.stat().st_mode & 0o7777
            for p in [folder, *sorted(folder.rglob("*"))]}


def _filled(new: Path, mask: int = 0o022) -> Path:
    """A temporary folder as a writer fills it under umask ``mask``: files 0666 and a script
    0777, both less the mask, a sub-folder, one name the old folder has not."""
    old_mask = os.umask(mask)
    try:
        new.mkdir()
        (new / "members.pkl").write_bytes(b"new")
        (new / "added.json").write_text("{}")
        (new / "run.sh").write_text("#!/bin/sh\n")
        (new / "run.sh").chmod(0o777 & ~mask)
        (new / "plans").mkdir()
        (new / "plans" / "p.toml").write_text("")
        (new / "logs").mkdir()
    finally:
        os.umask(old_mask)
    return new


def test_a_private_folder_swapped_in_stays_private_and_so_do_its_files(tmp_path):
    """s32 verifier V1: learn and train --force had turned a 0700 bundle and its 0600 files
    into 0755 and 0644. A file of the same name keeps its mode; a new one gets no more than
    the folder grants (its execute bit only where the writer set one)."""
    old = tmp_path / "model"
    (old / "plans").mkdir(parents=True)
    (old / "members.pkl").write_bytes(b"old")
    (old / "plans" / "p.toml").write_text("")
    for path, mode in ((old / "members.pkl", 0o400), (old / "plans" / "p.toml", 0o600),
                       (old / "plans", 0o700), (old, 0o700)):
        path.chmod(mode)
    new = _filled(tmp_path / "new")
    writers.keep_folder_modes(new, old)
    assert _modes(new) == {".": 0o700, "members.pkl": 0o400, "added.json": 0o600,
                           "run.sh": 0o700, "plans": 0o700, "plans/p.toml": 0o600,
                           "logs": 0o700}


def test_a_swapped_in_folder_gives_no_one_write_the_old_one_did_not(tmp_path):
    """A writer under umask 000 makes 0666 files: in place of a 0755 folder they are 0644, so
    the bundle loader (surrogates/bundle_trust.py) still takes the bundle."""
    old = tmp_path / "model"
    old.mkdir()
    old.chmod(0o755)
    new = _filled(tmp_path / "new", mask=0)
    writers.keep_folder_modes(new, old)
    assert all(not mode & 0o022 for mode in _modes(new).values()), _modes(new)


def test_a_new_folder_follows_the_umask(tmp_path):
    new = _filled(tmp_path / "new")
    new.chmod(0o700)  # as mkdtemp makes it
    writers.keep_folder_modes(new, tmp_path / "model")
    assert new.stat().st_mode & 0o7777 == writers.umask_mode(0o777)


def test_a_swapped_in_folder_and_its_new_files_keep_the_old_folders_group(tmp_path):
    old = tmp_path / "model"
    old.mkdir()
    new = _filled(tmp_path / "new")
    group = next(g for g in (65534, 100, 1) if g != new.stat().st_gid)
    if os.geteuid() != 0 and group not in os.getgroups():
        pytest.skip("needs a second group this user may give a folder")
    os.chown(old, -1, group)
    old.chmod(0o750)
    writers.keep_folder_modes(new, old)
    assert {p.stat().st_gid for p in [new, *new.rglob("*")]} == {group}
    assert _modes(new)["added.json"] == 0o640 and _modes(new)["."] == 0o750


def test_another_users_folder_keeps_its_bits_but_not_its_set_id_ones(tmp_path):
    """The set-id bits are the old owner's; a setgid bit from a setgid parent stays (s32 review)."""
    if os.geteuid() != 0:
        pytest.skip("needs root to give the old folder another owner")
    parent = tmp_path / "shared"
    parent.mkdir()
    old = parent / "model"
    old.mkdir()
    os.chown(old, 65534, -1)
    old.chmod(0o6750)
    new = _filled(parent / "new")
    writers.keep_folder_modes(new, old)
    assert _modes(new)["."] == 0o750
    parent.chmod(0o2775)
    new2 = _filled(parent / "new2")  # in a setgid folder: made with the bit
    writers.keep_folder_modes(new2, old)
    assert _modes(new2)["."] == 0o2750


def test_a_file_linked_over_from_the_old_folder_is_left_as_it_is(tmp_path):
    """learn hard-links the old training files into the new folder: they are the old ones."""
    old = tmp_path / "model"
    old.mkdir()
    (old / "members.pkl").write_bytes(b"old")
    (old / "members.pkl").chmod(0o664)
    new = tmp_path / "new"
    new.mkdir()
    os.link(old / "members.pkl", new / "members.pkl")
    mask = os.umask(0o077)
    try:
        writers.keep_folder_modes(new, old)
    finally:
        os.umask(mask)
    assert (old / "members.pkl").stat().st_mode & 0o7777 == 0o664


# --------------------------------------------------------------------------------------------
# Another user's lock in a group-shared folder (s34 tester U2)

from tests.other_user import OTHER, as_other_user, shared_folder  # noqa: E402,F401 (fixture)


def _private_holder(target: Path, chmod: int | None = None) -> subprocess.Popen:
    """A writer of ``target`` under umask 077 (tester U's alice); ``chmod``: its lock file
    then given that mode (as a version before s34 left it)."""
    code = textwrap.dedent(f"""
        import os, time
        from hpcds1mpi.writers import hold_lock, lock_path
        os.umask(0o077)
        assert hold_lock({str(target)!r})
        if {chmod!r} is not None:
            os.chmod(lock_path({str(target)!r}), {chmod!r})
        print("held", flush=True)
        time.sleep(60)
    """)
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "held"
    return proc


def _take(target: Path) -> tuple[int, str, int]:
    writers.hold_lock(target, "bundle")
    lock = writers.lock_path(target)
    return lock.stat().st_uid, lock.read_text(), os.getpid()


@pytest.mark.parametrize("chmod", [None, 0o600])
def test_another_users_live_writer_is_named_not_taken_for_a_permission_problem(
        shared_folder, chmod):
    """A second user's train --out into the same folder had read "cannot create the lock of
    the bundle (Permission denied)", exit 2: the first writer is named, exit 1 (s34 U2)."""
    target = shared_folder / "m7"
    proc = _private_holder(target, chmod)
    try:
        kind, text = as_other_user(_take, target)
    finally:
        proc.kill()
        proc.wait()
    assert kind == "LockError", text
    assert f"pid {proc.pid} on {writers.HOST}" in text and "user root" in text
    assert "\n" not in text and str(writers.lock_path(target)) in text


def test_a_killed_writers_lock_of_another_user_blocks_no_one(shared_folder):
    """After a kill -9 of the first user's writer, its lock (which the second may not write)
    had refused the second user every time (s34 U2): it is free, so it is taken, ours."""
    target = shared_folder / "m8"
    proc = _private_holder(target)
    proc.kill()
    proc.wait()
    assert writers.lock_path(target).stat().st_mode & 0o777 == 0o644  # umask 077 or not
    kind, answer = as_other_user(_take, target)
    assert kind == "ok", answer
    uid, said, pid = answer
    assert uid == OTHER and said == f"pid {pid} on {writers.HOST}\n"


def test_a_killed_writers_lock_that_the_next_user_cannot_open_is_named_with_the_fix(
        shared_folder):
    """A 0600 lock of another user (made before s34) cannot even be tested: the refusal names
    it, its owner and the fix, instead of "cannot create the lock" (s34 U2)."""
    target = shared_folder / "m8"
    proc = _private_holder(target, 0o600)
    proc.kill()
    proc.wait()
    kind, text = as_other_user(_take, target)
    lock = writers.lock_path(target)
    assert kind == "LockError", text
    assert "user root" in text and f"rm {lock}" in text and "\n" not in text
    assert lock.stat().st_uid == 0  # nothing removed that might be another host's


# --------------------------------------------------------------------------------------------
# A campaign's or bundle's lock that is no regular file (s35 tester R1-R3)

from hpcds1mpi.errors import OutputError  # noqa: E402
from tests.planted_files import (left_as_it_was, plant, plant_link, private_file,  # noqa: E402
                                 within)


def test_a_campaign_lock_linked_to_the_users_notes_is_refused_and_they_are_kept(
        shared_folder, tmp_path):
    """R1: bob's link at ``.hpcds1mpi-tmp-camp.lock`` had alice's campaign empty her
    notes.txt, write "pid N on HOST" into it and make it 0644."""
    notes = private_file(tmp_path / "notes.txt")
    target = shared_folder / "camp"
    plant_link(writers.lock_path(target), notes)
    with pytest.raises(OutputError, match=f"^{writers.lock_path(target)} is a symbolic link"):
        atomic.check_output_dir(target, ours=lambda _: True, force=False, what="campaign")
    assert left_as_it_was(notes) and not writers.holds_lock(target)


@pytest.mark.parametrize("kind", ["fifo", "folder"])
def test_a_bundle_lock_that_is_a_fifo_or_folder_is_refused_at_once(tmp_path, kind):
    target = tmp_path / "m1"
    what = plant(kind, writers.lock_path(target))
    with within(1.0), pytest.raises(OutputError, match=f"{writers.lock_path(target)} {what}"):
        writers.hold_lock(target, "bundle")
    assert OutputError.exit_code == 2
