"""Temp-and-rename writes: whole or nothing, no temporary left, one-line errors with the right
exit code (2: the path cannot be used; 1: the write failed part-way, e.g. a full disk)."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

import pytest

from hpcds1mpi import atomic
from hpcds1mpi.errors import OutputError, WriteError


def digests(folder: Path) -> dict[str, str]:
    """sha256 of every file under ``folder`` (relative path -> digest)."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def temporaries(folder: Path) -> list[str]:
    return [p.name for p in folder.rglob("*") if p.name.startswith(atomic.TMP_PREFIX)]


def _mount(mnt: Path, options: str) -> None:
    mnt.mkdir(exist_ok=True)
    try:
        proc = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(mnt)],
                              capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        pytest.skip(f"cannot mount a tmpfs here ({exc}); needs root and mount(8)")
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({proc.stderr.strip() or proc.returncode}); "
                    "the disk-full and read-only cases need root")


@pytest.fixture
def small_disk(tmp_path):
    """A mounted tmpfs of a few MB (``fill(free_bytes)`` leaves about that much free); skipped
    with the reason where mount is refused."""
    mnt = tmp_path / "disk"
    _mount(mnt, "size=4m")
    yield mnt
    subprocess.run(["umount", "-l", str(mnt)], capture_output=True, timeout=30)


def fill(disk: Path, free_bytes: int) -> None:
    """Fill ``disk`` until about ``free_bytes`` are left."""
    st = os.statvfs(disk)
    left = st.f_bavail * st.f_frsize - free_bytes
    if left > 0:
        with open(disk / "filler", "wb") as fh:
            fh.write(b"\0" * left)


@pytest.fixture
def read_only_dir(tmp_path):
    """A read-only tmpfs (root ignores mode bits, so chmod would not do)."""
    mnt = tmp_path / "ro"
    _mount(mnt, "size=1m,ro")
    yield mnt
    subprocess.run(["umount", "-l", str(mnt)], capture_output=True, timeout=30)


def test_write_text_replaces_whole_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "job.sh"
    target.write_text("old")
    os.chmod(target, 0o750)
    atomic.write_text(target, "new script\n")
    assert target.read_text() == "new script\n"
    assert target.stat().st_mode & 0o777 == 0o750  # an existing file keeps its mode
    assert temporaries(tmp_path) == []
    fresh = atomic.write_text(tmp_path / "fresh.txt", "x")
    assert fresh.stat().st_mode & 0o777 == 0o666 & ~_umask()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_failure_inside_the_block_keeps_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "table.csv"
    target.write_text("old,rows\n")
    with pytest.raises(RuntimeError):
        with atomic.atomic_path(target) as tmp:
            assert tmp.parent == tmp_path and tmp.suffix == ".csv"
            tmp.write_text("half")
            raise RuntimeError("writer died")
    assert target.read_text() == "old,rows\n" and temporaries(tmp_path) == []


@pytest.mark.parametrize("case, message", [
    ("directory", "is a directory; give a file name"),
    ("missing parent", "no such directory"),
    ("file as parent", "is not a directory"),
])
def test_unusable_output_file_is_one_usage_line(tmp_path, case, message):
    (tmp_path / "a_dir").mkdir()
    (tmp_path / "a_file").write_text("keep")
    before = digests(tmp_path)
    path = {"directory": tmp_path / "a_dir", "missing parent": tmp_path / "nope" / "f.sh",
            "file as parent": tmp_path / "a_file" / "f.sh"}[case]
    with pytest.raises(OutputError, match=message) as err:
        atomic.write_text(path, "x", "batch script")
    assert err.value.exit_code == 2 and "\n" not in str(err.value)
    assert digests(tmp_path) == before and temporaries(tmp_path) == []


def test_a_name_ending_in_a_slash_is_refused_not_written_as_a_file(tmp_path):
    """``--out results/`` means a folder; Path would drop the slash and write a file called
    ``results``. An existing folder is still reported as a folder."""
    with pytest.raises(OutputError, match="ends in '/'") as err:
        atomic.check_output_file(f"{tmp_path}/results/", "merged telemetry")
    assert err.value.exit_code == 2 and not (tmp_path / "results").exists()
    (tmp_path / "there").mkdir()
    with pytest.raises(OutputError, match="is a directory"):
        atomic.check_output_file(f"{tmp_path}/there/", "merged telemetry")
    assert atomic.check_output_file(f"{tmp_path}/results.h5") == tmp_path / "results.h5"


def test_read_only_directory_is_one_usage_line(read_only_dir):
    with pytest.raises(OutputError, match="not writable") as err:
        atomic.write_text(read_only_dir / "f.sh", "x")
    assert err.value.exit_code == 2
    with pytest.raises(OutputError, match="not writable"):
        atomic.check_output_dir(read_only_dir / "model", ours=lambda p: True, force=False)


def test_disk_full_file_write_is_exit_1_and_keeps_the_old_file(small_disk):
    target = small_disk / "table.parquet"
    target.write_bytes(b"old table")
    fill(small_disk, 8 * 1024)
    before = digests(small_disk)
    with pytest.raises(WriteError, match="disk is full") as err:
        atomic.write_bytes(target, b"\1" * (256 * 1024), "job table")
    assert err.value.exit_code == 1 and "\n" not in str(err.value)
    assert digests(small_disk) == before and temporaries(small_disk) == []


def test_atomic_dir_swaps_a_whole_folder_in(tmp_path):
    target = tmp_path / "deep" / "model"
    with atomic.atomic_dir(target) as tmp:
        (tmp / "a").write_text("1")
    assert digests(target) == digests(target)  # readable
    assert sorted(os.listdir(target)) == ["a"]
    with atomic.atomic_dir(target) as tmp:
        assert tmp.parent == target.parent
        (tmp / "b").write_text("2")
    assert sorted(os.listdir(target)) == ["b"]  # replaced whole, nothing of the old one left
    assert temporaries(tmp_path) == []


def _setgid_folder(tmp_path) -> Path:
    """A group folder (2775): what is made in it takes its group and its setgid bit."""
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o2775)
    return shared


def test_atomic_dir_in_a_setgid_folder_keeps_the_setgid_bit(tmp_path):
    """s32 review: the swapped-in folder lost its setgid bit (2775 -> 0755), so what is made
    in it later no longer takes the group's."""
    target = _setgid_folder(tmp_path) / "bundle"
    with atomic.atomic_dir(target) as tmp:
        (tmp / "f").write_text("x")
    assert os.stat(target).st_mode & 0o2000


@pytest.mark.parametrize("exchange", [True, False], ids=["renameat2", "two-renames"])
def test_atomic_dir_over_a_private_folder_keeps_it_and_its_files_private(tmp_path, monkeypatch,
                                                                          exchange):
    """s32 verifier V1: a 0700 bundle of 0600 files came back 0755 and 0644 (the review's
    setgid bit of a setgid parent is still kept)."""
    if not exchange:
        monkeypatch.setattr(atomic, "_exchange", lambda a, b: False)
    target = _setgid_folder(tmp_path) / "model"
    with atomic.atomic_dir(target) as tmp:
        (tmp / "members.pkl").write_text("1")
    os.chmod(target / "members.pkl", 0o600)
    os.chmod(target, 0o2700)
    with atomic.atomic_dir(target) as tmp:
        (tmp / "members.pkl").write_text("2")
        (tmp / "training_data.parquet").write_text("new name")
    modes = {p.name: p.stat().st_mode & 0o7777 for p in [target, *target.iterdir()]}
    assert modes == {"model": 0o2700, "members.pkl": 0o600, "training_data.parquet": 0o600}
    assert temporaries(tmp_path) == []


@pytest.mark.parametrize("exchange", [True, False], ids=["renameat2", "two-renames"])
def test_atomic_dir_failure_keeps_the_old_folder_whole(tmp_path, monkeypatch, exchange):
    if not exchange:
        monkeypatch.setattr(atomic, "_exchange", lambda a, b: False)
    target = tmp_path / "model"
    with atomic.atomic_dir(target) as tmp:
        (tmp / "manifest.json").write_text("{}")
        (tmp / "members.pkl").write_bytes(b"old members")
    before = digests(tmp_path)
    with pytest.raises(WriteError, match="Input/output error"):
        with atomic.atomic_dir(target) as tmp:
            (tmp / "members.pkl").write_bytes(b"new members, half")
            raise OSError(5, "Input/output error")
    assert digests(tmp_path) == before and temporaries(tmp_path) == []
    with atomic.atomic_dir(target) as tmp:
        (tmp / "members.pkl").write_bytes(b"new")
    assert digests(target) == {"members.pkl": hashlib.sha256(b"new").hexdigest()}
    assert temporaries(tmp_path) == []


def test_oserror_in_atomic_dir_is_a_one_line_error():
    err = atomic.write_error(OSError(28, "No space left on device"), "m", "bundle")
    assert isinstance(err, WriteError) and err.exit_code == 1
    err = atomic.write_error(OSError(13, "Permission denied"), "m", "bundle")
    assert isinstance(err, OutputError) and err.exit_code == 2


def test_check_output_dir_refuses_foreign_and_unforced_folders(tmp_path):
    user = tmp_path / "user"
    user.mkdir()
    (user / "README.txt").write_text("my notes")
    ours = tmp_path / "ours"
    ours.mkdir()
    (ours / "manifest.json").write_text("{}")
    (tmp_path / "empty").mkdir()
    (tmp_path / "file").write_text("x")
    is_ours = lambda p: p.name == "ours"  # noqa: E731
    for force in (False, True):  # --force never replaces what is not ours
        with pytest.raises(OutputError, match="is not empty and not a hpcds1mpi bundle; choose "
                                              "another --out"):
            atomic.check_output_dir(user, ours=is_ours, force=force)
    with pytest.raises(OutputError, match="pass --force"):
        atomic.check_output_dir(ours, ours=is_ours, force=False)
    assert atomic.check_output_dir(ours, ours=is_ours, force=True) == ours
    assert atomic.check_output_dir(tmp_path / "empty", ours=is_ours, force=False)
    assert atomic.check_output_dir(tmp_path / "new" / "deeper", ours=is_ours, force=False)
    with pytest.raises(OutputError, match="is a file, not a folder"):
        atomic.check_output_dir(tmp_path / "file", ours=is_ours, force=True)
    with pytest.raises(OutputError, match="is a file, not a folder"):
        atomic.check_output_folder(tmp_path / "file")
    assert atomic.check_output_folder(tmp_path / "new" / "out") == tmp_path / "new" / "out"


def test_a_swap_that_fails_puts_the_old_folder_back(tmp_path, monkeypatch):
    """Without renameat2 the swap is two renames; when the second fails, the first is undone."""
    target = tmp_path / "model"
    with atomic.atomic_dir(target) as tmp:
        (tmp / "members.pkl").write_bytes(b"old members")
    before = digests(tmp_path)
    monkeypatch.setattr(atomic, "_exchange", lambda a, b: False)
    real_rename = os.rename

    def rename(src, dst):
        if Path(dst) == target and Path(src).name.startswith(atomic.TMP_PREFIX + "model.") \
                and ".old." not in Path(src).name:
            raise OSError(28, "No space left on device")
        real_rename(src, dst)

    monkeypatch.setattr(atomic.os, "rename", rename)
    with pytest.raises(WriteError, match="disk is full"):
        with atomic.atomic_dir(target) as tmp:
            (tmp / "members.pkl").write_bytes(b"new members")
    monkeypatch.undo()
    assert digests(tmp_path) == before and temporaries(tmp_path) == []


def test_a_symlinked_target_is_written_through(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    (real / "job.sh").write_text("old")
    (tmp_path / "job.sh").symlink_to(real / "job.sh")
    atomic.write_text(tmp_path / "job.sh", "new")
    assert (tmp_path / "job.sh").is_symlink() and (real / "job.sh").read_text() == "new"
    (real / "model").mkdir()
    (tmp_path / "model").symlink_to(real / "model")
    with atomic.atomic_dir(tmp_path / "model") as tmp:
        (tmp / "a").write_text("1")
    assert (tmp_path / "model").is_symlink() and (real / "model" / "a").read_text() == "1"
    assert temporaries(tmp_path) == []


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux /proc")
def test_a_folder_that_holds_no_files_is_a_usage_error_not_a_runtime_failure():
    """/proc passes every check (it exists, is a directory, root may write it) but refuses a
    new file (ENOENT): that was exit 1, which says 'try again'; a rerun fails the same way."""
    with pytest.raises(OutputError, match="no file can be written there|not writable") as err:
        atomic.write_text("/proc/hpcds1mpi-test.sh", "x", "batch script")
    assert err.value.exit_code == 2 and "\n" not in str(err.value)
    assert atomic.write_error(OSError(36, "File name too long"), "f").exit_code == 2
    assert atomic.write_error(OSError(5, "Input/output error"), "f").exit_code == 1


def test_a_loop_of_links_is_one_usage_line_for_every_output_helper(tmp_path):
    """Path.resolve() raises RuntimeError on a loop, and exists() says False (s25 tester d, 5)."""
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    into = tmp_path / "into"  # a chain of links that ends in the loop
    into.symlink_to(loop)
    for path in (loop, into):
        for write in (lambda p: atomic.write_text(p, "x", "export"),
                      lambda p: atomic.check_output_file(p, "export"),
                      lambda p: atomic.check_output_dir(p, ours=lambda _: True, force=True),
                      lambda p: atomic.check_output_folder(p),
                      lambda p: atomic.atomic_dir(p).__enter__()):
            with pytest.raises(OutputError, match="loop of symbolic links") as err:
                write(path)
            assert err.value.exit_code == 2 and "\n" not in str(err.value)
    assert loop.is_symlink() and into.is_symlink() and temporaries(tmp_path) == []
    assert atomic.is_link_loop(loop) and not atomic.is_link_loop(tmp_path / "missing")


def _in_another_process(code: str) -> subprocess.Popen:
    """``code`` run by another Python, which prints ``ready`` and then sleeps."""
    import sys
    import textwrap

    body = textwrap.dedent(code) + "\nprint('ready', flush=True)\nimport time\ntime.sleep(60)\n"
    proc = subprocess.Popen([sys.executable, "-c", body], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "ready", proc.stderr.read()
    return proc


def test_a_second_writer_of_one_folder_is_refused_and_the_first_keeps_its_work(tmp_path):
    """Two ``learn`` into one bundle both said 'bundle written' and the first one's runs were
    gone: atomic_dir swapped over whatever was there (s26 tester m, 1 and 10)."""
    from hpcds1mpi.errors import LockError

    target = tmp_path / "model"
    with atomic.atomic_dir(target) as tmp:
        (tmp / "manifest.json").write_text("first")
    before = digests(target)
    proc = _in_another_process(f"""
        from hpcds1mpi import atomic
        atomic.check_output_dir({str(target)!r}, ours=lambda p: True, force=True)
    """)
    try:
        with pytest.raises(LockError, match=f"is being written by another process \\(pid "
                                            f"{proc.pid} on ") as err:
            atomic.check_output_dir(target, ours=lambda p: True, force=True)
        assert err.value.exit_code == 1 and "\n" not in str(err.value)
        with pytest.raises(LockError, match="lock .*hpcds1mpi-tmp-model.lock"):
            with atomic.atomic_dir(target) as tmp:
                (tmp / "manifest.json").write_text("second")
    finally:
        proc.kill()
        proc.wait()
    assert digests(target) == before


def test_a_folder_written_since_the_check_is_not_swapped_over(tmp_path):
    """A writer that took no lock (its folder did not exist yet when checked) still never
    replaces a bundle that another process put there in between."""
    from hpcds1mpi.errors import LockError

    target = tmp_path / "new" / "model"
    atomic.check_output_dir(target, ours=lambda p: True, force=False)
    target.mkdir(parents=True)
    (target / "manifest.json").write_text("theirs")
    with pytest.raises(LockError, match="was written by another process while this one ran"):
        with atomic.atomic_dir(target) as tmp:
            (tmp / "manifest.json").write_text("ours")
    assert (target / "manifest.json").read_text() == "theirs"
    assert temporaries(tmp_path) == []


@pytest.mark.parametrize("kind", ["file", "folder"])
def test_sigterm_while_writing_removes_the_temporary_and_says_so(tmp_path, kind):
    """SIGTERM (scancel, the walltime) killed ingest/train/learn before any finally ran: a
    10 MB temporary or a half bundle stayed beside the output (s26 tester m, 6)."""
    target = tmp_path / ("big.parquet" if kind == "file" else "model")
    if kind == "file":
        target.write_text("old table")
        what, opening, inner = "job table", f"atomic.atomic_path({str(target)!r}, 'job table')", \
            "tmp"
    else:
        target.mkdir()
        (target / "manifest.json").write_text("old bundle")
        what, opening, inner = "bundle", f"atomic.atomic_dir({str(target)!r})", \
            "tmp / 'members.pkl'"
    proc = _in_another_process(f"""
        from hpcds1mpi import atomic
        import time
        with {opening} as tmp:
            ({inner}).write_text('half')
            print('ready', flush=True)
            time.sleep(60)
    """)
    proc.send_signal(15)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 1
    assert err.strip().splitlines() == [f"hpcds1mpi: error: {target}: stopped by SIGTERM while "
                                        f"writing the {what}; no partial output is left, rerun "
                                        "to write it"]
    assert temporaries(tmp_path) == []
    assert (target.read_text() if kind == "file" else (target / "manifest.json").read_text()) \
        .startswith("old")


def test_the_next_writer_removes_temporaries_of_dead_processes_only(tmp_path):
    """A kill -9 leaves its temporaries; the next writer of the same output removes them when
    their process is gone, never a live process's or another host's."""
    import sys

    from hpcds1mpi.writers import HOST

    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    dead = int(done.stdout)
    p = atomic.TMP_PREFIX
    stale = [f"{p}big.{dead}@{HOST}.ab12cd_3.parquet", f"{p}model.{dead}@{HOST}.zz99yy00",
             f"{p}model.old.{dead}@{HOST}.q1w2e3r4"]
    kept = [f"{p}big.{os.getpid()}@{HOST}.ab12cd_4.parquet",  # a live writer's
            f"{p}big.{dead}@elsewhere.ab12cd_5.parquet",  # another host's
            f"{p}big.ab12cd_6.parquet",  # no owner in the name
            f"{p}bigger.{dead}@{HOST}.ab12cd_7.parquet"]  # another output's
    (tmp_path / "model").mkdir()  # the old folder of a swap that got this far is a copy
    for name in stale + kept:
        if ".parquet" in name:
            (tmp_path / name).write_text("x")
        else:
            (tmp_path / name).mkdir()
            (tmp_path / name / "d").mkdir()
    atomic.write_text(tmp_path / "big.parquet", "new")
    with atomic.atomic_dir(tmp_path / "model") as tmp:
        (tmp / "a").write_text("1")
    assert sorted(temporaries(tmp_path)) == sorted(kept)


def _give_to_another_user(path: Path, monkeypatch) -> None:
    """Make ``path`` another user's: chown it where we are root, else pretend to be someone else."""
    if os.geteuid() == 0:
        os.chown(path, 65534, 65534)
    else:
        real = os.geteuid()
        monkeypatch.setattr(os, "geteuid", lambda: real + 1)


@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


def test_another_users_file_is_never_ours_without_force(tmp_path, monkeypatch):
    """Was: ``ours`` alone decided, and a checksum line or header anyone can copy passed it."""
    target = tmp_path / "shared.sh"
    target.write_text("looks like ours")
    _give_to_another_user(target, monkeypatch)
    with pytest.raises(OutputError, match="belongs to another user.*--force.*another -o"):
        atomic.check_replace(target, ours=lambda p: True, force=False, what="batch script",
                             option="-o")
    atomic.check_replace(target, ours=lambda p: True, force=True, what="batch script",
                         option="-o")


def test_a_replacement_gets_no_write_access_for_others_and_no_set_id_bits(
        tmp_path, monkeypatch, umask_022):
    """Was: the old file's mode was copied whole, so a 0777 file of another user became a
    world-writable (and set-id) file of the caller's."""
    own = tmp_path / "own.sh"
    own.write_text("old")
    os.chmod(own, 0o777)
    atomic.write_text(own, "new")
    assert own.stat().st_mode & 0o7777 == 0o755  # the umask's grant, not the old file's
    theirs = tmp_path / "theirs.sh"
    theirs.write_text("old")
    _give_to_another_user(theirs, monkeypatch)
    os.chmod(theirs, 0o6777)  # after chown, which clears set-id bits
    atomic.write_text(theirs, "new")
    assert theirs.read_text() == "new"
    assert theirs.stat().st_mode & 0o7777 == 0o755


def test_a_name_longer_than_the_file_system_holds_is_refused_in_one_line(tmp_path):
    """s32 tester T1: Path.exists() raised ENAMETOOLONG; each command then died in its own way
    (a sweep: on rank 0 only, the others left waiting)."""
    with pytest.raises(OutputError, match=r"file name too long \(a name of 256 bytes, at most "
                                          r"255\); give a shorter path for the telemetry"):
        atomic.check_output_file(tmp_path / ("k" * 253 + ".h5"), "telemetry")
    with pytest.raises(OutputError, match="file name too long"):
        atomic.check_output_file(tmp_path / ("d" * 256) / "t.h5", "telemetry")


@pytest.mark.parametrize("name", ["k" * 252 + ".h5", "a." + "k" * 253, "é" * 127 + "x"])
def test_a_255_byte_name_is_written_through_a_temporary_that_fits(tmp_path, name):
    target = tmp_path / name
    assert len(os.fsencode(target.name)) == 255
    atomic.write_text(target, "first")
    atomic.write_text(target, "second")
    assert os.listdir(tmp_path) == [name] and target.read_text() == "second"
