"""The single writer: round trip, resume, the lock."""

from __future__ import annotations

import math
import multiprocessing

import h5py
import pytest

from hpcds1mpi.errors import LockError, TelemetryError
from hpcds1mpi.records import telemetry
from tests.records.telemetry.rows import CONTRACT, run_row


def test_round_trip_with_detail(tmp_path):
    path = tmp_path / "t.h5"
    with telemetry.TelemetryWriter(path) as w:
        w.machine({"machine_id": "m1", "cpu_model": "X", "physical_cores": 2})
        for i in range(3):
            w.start(run_row(i))
            w.record(run_row(i), {"repeats": [{"machine_id": "m1", "run_id": f"r{i:03d}",
                                            "repeat": k, "wall_s": 0.1 * k} for k in range(3)]})
    assert not telemetry.journal_path(path).exists()
    assert not telemetry.lock_path(path).exists()
    df = telemetry.read_runs(path)
    assert list(df.columns[: len(CONTRACT)]) == CONTRACT
    assert list(df["run_id"]) == ["r000", "r001", "r002"]
    assert df["runtime_s"].tolist() == [0.5, 1.5, 2.5]
    assert math.isnan(df["gpu_busy_s"][0])  # missing floats are NaN, not 0
    assert (df["attempt"] == 1).all()
    reps = telemetry.read_detail(path, "repeats")
    assert len(reps) == 9 and reps["wall_s"].max() == pytest.approx(0.2)
    machines = telemetry.read_machines(path)
    assert machines["cpu_model"].tolist() == ["X"]
    with h5py.File(path) as f:
        assert f.attrs["schema_version"] == telemetry.SCHEMA_VERSION


def test_existing_file_refused_without_resume_and_untouched(tmp_path):
    path = tmp_path / "t.h5"
    telemetry.append(path, [run_row(0)])
    before = path.read_bytes()
    with pytest.raises(TelemetryError, match="--resume"):
        telemetry.TelemetryWriter(path).open()
    assert path.read_bytes() == before


def _hold_lock(path, ready, stop):
    with telemetry.TelemetryWriter(path, resume=True):
        ready.set()
        stop.wait(30)


def test_second_writer_gets_lock_error(tmp_path):
    path = tmp_path / "t.h5"
    ctx = multiprocessing.get_context("fork")
    ready, stop = ctx.Event(), ctx.Event()
    proc = ctx.Process(target=_hold_lock, args=(str(path), ready, stop))
    proc.start()
    try:
        assert ready.wait(30)
        before = path.read_bytes()
        with pytest.raises(LockError, match="another process"):
            telemetry.TelemetryWriter(path, resume=True).open()
        assert path.read_bytes() == before
    finally:
        stop.set()
        proc.join(30)
    telemetry.TelemetryWriter(path, resume=True).open().close()  # free again


def test_a_resume_with_another_plan_keeps_the_files_plan(tmp_path):
    """sweep --resume with another plan (how the reference telemetry was extended) replaced
    the file's plan: the record of how its first runs were planned was lost."""
    import json

    import h5py

    path = tmp_path / "t.h5"
    first, second = json.dumps({"kernel": [{"name": "gemm"}]}), json.dumps({"kernel": []})
    with telemetry.TelemetryWriter(path, attrs={"plan": first}) as w:
        w.record(run_row(0))
    for plan in (first, second, second):  # the same plan again keeps nothing twice
        with telemetry.TelemetryWriter(path, resume=True, attrs={"plan": plan}) as w:
            pass
    with h5py.File(path) as f:
        assert f.attrs["plan"] == second
        assert json.loads(f.attrs["earlier_plans"]) == [first]
    assert len(telemetry.read_runs(path)) == 1


@pytest.mark.parametrize("exc", [OSError(1, "Operation not permitted"),
                                 OSError(13, "Permission denied"),
                                 OSError(30, "Read-only file system"),
                                 RuntimeError("Unable to create file (unable to open file: "
                                              "name = 'x', errno = 1, error message = "
                                              "'Operation not permitted', flags = 13)")])
def test_an_unwritable_output_is_a_usage_error_without_free_space_advice(exc):
    from hpcds1mpi.errors import OutputError
    from hpcds1mpi.records.telemetry.writer import storage_error

    error = storage_error("t.h5", exc)
    assert isinstance(error, OutputError) and error.exit_code == 2
    assert "free space" not in str(error) and "writable" in str(error)
    assert "t.h5" in str(error) and "\n" not in str(error)


def test_a_full_disk_is_a_runtime_failure_that_says_free_space():
    from hpcds1mpi.errors import WriteError
    from hpcds1mpi.records.telemetry.writer import storage_error

    error = storage_error("t.h5", OSError(28, "No space left on device"))
    assert isinstance(error, WriteError) and error.exit_code == 1
    assert "free space" in str(error)


def test_an_immutable_output_on_resume_is_exit_2_and_kept(tmp_path):
    """chattr +i (root only): the final snapshot fails with EPERM; not 'free space'."""
    import subprocess

    from tests.helpers import run_cli

    out = tmp_path / "imm.h5"
    args = ["sweep", "--kernel", "stencil", "--sizes", "32", "--ranks-per-node", "1",
            "--threads", "1", "--precisions", "fp64", "--out", str(out), "--no-progress"]
    assert run_cli(args, timeout=120).returncode == 0
    before = out.read_bytes()
    if subprocess.run(["chattr", "+i", str(out)], capture_output=True).returncode != 0:
        pytest.skip("chattr +i not available here")
    try:
        proc = run_cli([*args, "--resume"], timeout=120)
    finally:
        subprocess.run(["chattr", "-i", str(out)], check=True)
    assert proc.returncode == 2, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "free space" not in proc.stderr
    assert out.read_bytes() == before


def test_a_sweep_that_left_only_a_journal_is_named_with_what_to_do(tmp_path):
    """Interrupted before its first snapshot: readers said "no such telemetry file", and a
    fresh sweep refused without saying how to start afresh."""
    out = tmp_path / "t.h5"
    with telemetry.TelemetryWriter(out) as writer:
        writer.record(run_row(1))
    out.unlink()
    telemetry.journal_path(out).write_bytes(b"")
    with pytest.raises(TelemetryError, match=r"only a journal .*--resume \(or tune with the same "
                                             r"--out\) to finish it"):
        telemetry.read_runs(out)
    with pytest.raises(TelemetryError, match=r"pass --resume to continue it, or delete .*"
                                             r"t\.h5\.journal to start afresh"):
        telemetry.TelemetryWriter(out).open()


def test_a_string_with_a_nul_is_written_without_it_and_nothing_is_lost(tmp_path):
    """h5py refuses a NUL in a string ("VLEN strings do not support embedded NULLs"): Debian
    mpi4py's library version lost every snapshot of its sweep, and so would a program's
    error line with a NUL byte."""
    path = tmp_path / "t.h5"
    with telemetry.TelemetryWriter(path, attrs={"plan": "{\"command\": \"app\\u0000\"}",
                                                "note": "a\0b"}) as w:
        w.machine({"machine_id": "m1", "mpi_library": "Open MPI v4.1.4, 2022\0"})
        w.record(run_row(0, status="failed", error="exit code 1: bad \0byte"))
    assert telemetry.read_machines(path)["mpi_library"].tolist() == ["Open MPI v4.1.4, 2022"]
    assert telemetry.read_runs(path)["error"].tolist() == ["exit code 1: bad byte"]
    with h5py.File(path) as f:
        assert f.attrs["note"] == "ab"


def test_a_machine_relabelled_takes_its_runs_detail_and_attempts_along(tmp_path):
    path = tmp_path / "t.h5"
    with telemetry.TelemetryWriter(path) as w:
        w.machine({"machine_id": "old", "cpu_model": "X", "mpi_library": "MPI\0"})
        w.machine({"machine_id": "m2", "cpu_model": "Y"})
        for i, machine in ((0, "old"), (1, "old"), (2, "m2")):
            w.start(run_row(i, machine))
            w.record(run_row(i, machine), {"repeats": [
                {"machine_id": machine, "run_id": f"r{i:03d}", "repeat": 0, "wall_s": 1.0}]})
    with telemetry.TelemetryWriter(path, resume=True) as w:
        w.start(run_row(3, "old"))  # started, unfinished
        w.relabel_machine("old", {**w.store.machines["old"], "machine_id": "new",
                                  "mpi_library": "MPI"})
        assert ("new", "r003") in w.store.started and ("new", "r000") in w.store.attempts
        assert not any(key[0] == "old" for key in [*w.store.runs, *w.store.attempts])
        # The snapshot holds it: the restarted journal names only the new id.
        assert '"old"' not in telemetry.journal_path(path).read_text()
    runs = telemetry.read_runs(path)
    assert dict(zip(runs["run_id"], runs["machine_id"])) == {
        "r000": "new", "r001": "new", "r002": "m2"}
    machines = telemetry.read_machines(path).set_index("machine_id")
    assert sorted(machines.index) == ["m2", "new"] and machines.loc["new", "cpu_model"] == "X"
    reps = telemetry.read_detail(path, "repeats")
    assert sorted(reps["machine_id"]) == ["m2", "new", "new"]


def test_a_loop_of_links_as_out_is_refused_and_left_a_link(tmp_path):
    """exists() says False for a loop, so the first snapshot replaced the link with a file."""
    loop = tmp_path / "loop.h5"
    loop.symlink_to(loop)
    with pytest.raises(TelemetryError, match="loop of symbolic links"):
        telemetry.append(loop, [run_row(0)])
    assert loop.is_symlink() and sorted(p.name for p in tmp_path.iterdir()) == ["loop.h5"]


def test_a_full_disk_says_what_is_kept_and_nothing_when_nothing_was_written(tmp_path,
                                                                           monkeypatch):
    """A disk full at the start of a sweep had promised "every finished run is kept (rerun
    with --resume)" where no file was written and no run had finished."""
    import os

    from hpcds1mpi.errors import WriteError
    from hpcds1mpi.records.telemetry import snapshot_write

    def full():
        raise OSError(28, "No space left on device")

    out = tmp_path / "t.h5"
    monkeypatch.setattr(snapshot_write, "_test_pause_mid_write", full)
    with pytest.raises(WriteError) as got:
        telemetry.TelemetryWriter(out).open()
    assert str(got.value).endswith("free space or choose another --out; nothing was written")
    assert os.listdir(tmp_path) == []
    monkeypatch.undo()
    telemetry.append(out, [run_row(0)])
    monkeypatch.setattr(snapshot_write, "_test_pause_mid_write", full)
    with pytest.raises(WriteError, match=r"every finished run is kept \(rerun with --resume\)"):
        telemetry.TelemetryWriter(out, resume=True).open()


def test_an_h5py_error_is_said_in_the_systems_words():
    """h5py raises OSError(28, "Can't close file (file write failed: time = ...\\n, ...,
    error message = 'No space left on device', ...)"): its whole text had been the reason."""
    from hpcds1mpi.records.telemetry.writer import storage_error

    exc = OSError(28, "Can't close file (file write failed: time = Fri Dec 4 2026\n, filename "
                      "= 'x', errno = 28, error message = 'No space left on device', buf = 0x1)")
    assert "(No space left on device); free space" in str(storage_error("t.h5", exc))


def test_a_255_byte_name_is_written_and_a_killed_writers_snapshot_temporary_removed(tmp_path):
    """s32 tester T1: its journal (NAME.journal) and temporaries were too long a name."""
    import os

    from hpcds1mpi.records.telemetry.side_files import snapshot_tmp_path

    path = tmp_path / ("k" * 252 + ".h5")
    telemetry.append(path, [run_row(0)])
    torn = snapshot_tmp_path(path, 4_000_001)  # a kill -9 in the middle of a snapshot
    torn.write_bytes(b"half")
    with telemetry.TelemetryWriter(path, resume=True) as w:
        assert len(os.fsencode(telemetry.journal_path(path).name)) <= 255
        assert not torn.exists()
        w.record(run_row(1))
    assert len(telemetry.read_runs(path)) == 2
    assert os.listdir(tmp_path) == [path.name]


def test_the_journal_is_as_private_as_the_file_it_holds_the_runs_of(tmp_path):
    """s32 tester T8: the journal holds the runs since the last snapshot: a 0600 file's
    journal had been readable by all (0644)."""
    import os

    path = tmp_path / "t.h5"
    telemetry.append(path, [run_row(0)])
    os.chmod(path, 0o600)
    with telemetry.TelemetryWriter(path, resume=True) as w:
        w.record(run_row(1))
        assert telemetry.journal_path(path).stat().st_mode & 0o7777 == 0o600
    assert path.stat().st_mode & 0o7777 == 0o600


def test_a_writer_through_a_link_and_one_through_its_target_take_one_lock(tmp_path):
    """s33's left item: the lock of a link sat beside the link's name, so a sweep writing
    through the link and one writing the target itself both took a lock and wrote at once."""
    (tmp_path / "data").mkdir()
    target = tmp_path / "data" / "t.h5"
    link = tmp_path / "l.h5"
    link.symlink_to(target)
    with telemetry.TelemetryWriter(link) as writer:
        writer.record(run_row(1))
        with pytest.raises(LockError, match="another process"):
            telemetry.TelemetryWriter(target, resume=True).open()
    assert link.is_symlink() and len(telemetry.read_runs(target)) == 1
    assert sorted(p.name for p in (tmp_path / "data").iterdir()) == ["t.h5"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data", "l.h5"]


# --------------------------------------------------------------------------------------------
# A telemetry file a group shares (s34 tester U2)

from tests.other_user import OTHER, as_other_user, shared_folder  # noqa: E402,F401 (fixture)


def _killed_private_sweep(path, runs: int) -> None:
    """A sweep under umask 077 (tester U's alice) that records ``runs`` runs, then is killed."""
    import os
    import signal

    def sweep():
        os.umask(0o077)
        writer = telemetry.TelemetryWriter(path, resume=True, snapshot_every_s=1e9).open()
        for i in range(runs):
            writer.start(run_row(i))
            writer.record(run_row(i))
        os.kill(os.getpid(), signal.SIGKILL)

    proc = multiprocessing.get_context("fork").Process(target=sweep)
    proc.start()
    proc.join(60)
    assert telemetry.journal_path(path).exists()


def _warm_up(folder) -> None:
    """What the other user's step imports lazily, imported first (it cannot read our venv)."""
    path = folder / "warm.h5"
    writer = telemetry.TelemetryWriter(path).open()
    writer.record(run_row(0))
    writer.release()
    telemetry.TelemetryWriter(path, resume=True).open().close()


def _resume(path) -> int:
    telemetry.TelemetryWriter(path, resume=True).open().close()
    return len(telemetry.read_runs(path))


def test_a_shared_telemetry_file_killed_mid_sweep_is_resumed_by_another_user(
        shared_folder, tmp_path):
    """The second user's sweep --resume of a group-writable file said "cannot write s3.h5
    (Permission denied)": the first user's lock and journal (side files) could not be used."""
    import os

    path = shared_folder / "s3.h5"
    telemetry.append(path, [run_row(9, "m9")])
    os.chmod(path, 0o666)  # shared before the sweep: its side files take its permissions
    _killed_private_sweep(path, 3)
    assert telemetry.journal_path(path).stat().st_mode & 0o777 == 0o644
    _warm_up(tmp_path)
    kind, runs = as_other_user(_resume, path)
    assert (kind, runs) == ("ok", 4)
    assert path.stat().st_uid == OTHER
    assert not telemetry.journal_path(path).exists() and not telemetry.lock_path(path).exists()


def test_a_journal_another_user_cannot_read_is_named_with_its_owner_and_kept(
        shared_folder, tmp_path):
    """A killed sweep's 0600 journal, its file made g+rw afterwards: the next user was told
    "cannot write s3.h5 (Permission denied); make it and its folder writable" — they were;
    the journal names itself, its owner and the fix, and loses nothing (s34 U2)."""
    import os

    path = shared_folder / "s3.h5"
    _killed_private_sweep(path, 2)
    os.chmod(path, 0o666)
    journal = telemetry.journal_path(path)
    before = (path.read_bytes(), journal.read_bytes())
    _warm_up(tmp_path)
    kind, text = as_other_user(_resume, path)
    assert kind == "TelemetryError", text
    assert str(journal) in text and "belongs to root" in text and f"chmod g+r {journal}" in text
    assert "\n" not in text
    assert (path.read_bytes(), journal.read_bytes()) == before
    assert _resume(path) == 2  # its owner's resume still has every run


# --------------------------------------------------------------------------------------------
# The journal and lock in place: never through a link, a FIFO or a folder (s35 tester R1-R3)

from hpcds1mpi.errors import OutputError  # noqa: E402
from tests.planted_files import left_as_it_was, plant_link, private_file  # noqa: E402


def test_a_journal_link_planted_after_it_was_read_is_not_truncated_through(
        tmp_path, monkeypatch):
    """R1: the new journal was opened ``O_TRUNC`` through whatever its name was by then."""
    from hpcds1mpi.records.telemetry import writer as writer_module

    path, key = tmp_path / "t.h5", private_file(tmp_path / "id_key")
    with telemetry.TelemetryWriter(path) as first:
        first.record(run_row(0))
    folded = writer_module.remove_crash_note

    def then_planted(where):  # another user's ln -s, between the fold and the new journal
        folded(where)
        plant_link(telemetry.journal_path(path), key)

    monkeypatch.setattr(writer_module, "remove_crash_note", then_planted)
    with pytest.raises(OutputError, match="t.h5.journal is a symbolic link"):
        telemetry.TelemetryWriter(path, resume=True).open()
    assert left_as_it_was(key)
    telemetry.journal_path(path).unlink()  # the fix the refusal gives: the file is whole
    assert list(telemetry.read_runs(path)["run_id"]) == ["r000"]


def test_a_folder_as_lock_is_exit_2_naming_the_lock(tmp_path):
    """R3: said "cannot write d1/t.h5 (Is a directory); free space or choose another --out",
    exit 1."""
    import subprocess
    import sys

    (tmp_path / "d1" / "t.h5.lock").mkdir(parents=True)
    done = subprocess.run(
        [sys.executable, "-m", "hpcds1mpi", "sweep", "--kernel", "stencil", "--sizes", "32",
         "--ranks-per-node", "1", "--threads", "1", "--precisions", "fp64", "--max-repeats",
         "2", "--out", "d1/t.h5"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        "hpcds1mpi: error: d1/t.h5.lock is a folder, not a file hpcds1mpi writes; remove it "
        "(rm -r d1/t.h5.lock) if no hpcds1mpi command is running, then rerun")
    assert not (tmp_path / "d1" / "t.h5").exists()
