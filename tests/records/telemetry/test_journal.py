"""The journal beside a telemetry file: runs kept between snapshots, torn lines, the rule for an
unfinished run (interrupted / crashed on a crash note / failed on a fault note), tampered lines."""

from __future__ import annotations

import os

import h5py
import pytest

from hpcds1mpi.records import telemetry
from tests.other_user import as_other_user, shared_folder  # noqa: F401 (a fixture)
from tests.records.telemetry.rows import run_row


def test_journal_holds_runs_between_snapshots_and_torn_line_ignored(tmp_path):
    path = tmp_path / "t.h5"
    w = telemetry.TelemetryWriter(path, snapshot_every_s=3600).open()
    w.record(run_row(0))
    w.record(run_row(1))
    w.start(run_row(2))
    # Simulate a kill mid-write: a torn line at the end of the journal, no close().
    with open(telemetry.journal_path(path), "ab") as fh:
        fh.write(b'{"event": "run", "row": {"run_id": "r9')
    os.close(w._journal_fd)
    os.close(w._lock_fd)  # the process "died": its lock goes with it
    with h5py.File(path) as f:
        assert len(f["runs/run_id"]) == 0  # only the journal has them
    df = telemetry.read_runs(path)
    assert sorted(df["run_id"]) == ["r000", "r001", "r002"]
    # Nothing says the run was at fault: the sweep was stopped, the run is interrupted.
    assert df.set_index("run_id").loc["r002", "status"] == "interrupted"
    # tune's files are continued by tune, not sweep (s33's left item: show said --resume only)
    assert "sweep --resume (or tune with the same --out) runs it again" in df.set_index("run_id").loc["r002", "error"]
    # Resume folds everything in; a new start of the interrupted run counts attempt 2.
    with telemetry.TelemetryWriter(path, resume=True) as w2:
        assert w2.crashed_on_open == [("m1", "r002")]
        assert w2.start(run_row(2)) == 2
        w2.record(run_row(2))
    df = telemetry.read_runs(path)
    assert sorted(df["run_id"]) == ["r000", "r001", "r002"]
    assert (df["status"] == "ok").all()
    assert df.set_index("run_id").loc["r002", "attempt"] == 2


def test_unfinished_start_is_not_crashed_while_writer_alive(tmp_path):
    path = tmp_path / "t.h5"
    with telemetry.TelemetryWriter(path, snapshot_every_s=3600) as w:
        w.start(run_row(0))
        assert telemetry.writer_alive(path)
        assert len(telemetry.read_runs(path)) == 0  # running, not crashed
        w.record(run_row(0))
    assert not telemetry.writer_alive(path)


def test_fault_note_turns_crash_into_failed(tmp_path):
    path = tmp_path / "t.h5"
    w = telemetry.TelemetryWriter(path).open()
    w.start(run_row(0))
    telemetry.write_fault_note(path, "r000", 3, "ValueError: boom")
    os.close(w._journal_fd)
    os.close(w._lock_fd)
    df = telemetry.read_runs(path)
    assert df["status"].tolist() == ["failed"]
    assert "rank 3: ValueError: boom" in df["error"][0]


def _die(w) -> None:
    """The writing process "dies": its journal and lock go with it, no close()."""
    os.close(w._journal_fd)
    os.close(w._lock_fd)


def test_crash_note_makes_the_unfinished_run_crashed_then_it_is_removed(tmp_path):
    from hpcds1mpi.records.telemetry import journal

    path = tmp_path / "t.h5"
    w = telemetry.TelemetryWriter(path).open()
    w.record(run_row(0))
    w.start(run_row(1))
    _die(w)
    journal.write_crash_note(path, "the launch exited 139 (SIGSEGV)")
    df = telemetry.read_runs(path).set_index("run_id")
    assert df.loc["r000", "status"] == "ok"  # a finished run is never touched by the note
    assert df.loc["r001", "status"] == "crashed" and "exited 139" in df.loc["r001", "error"]
    with telemetry.TelemetryWriter(path, resume=True) as w2:
        assert w2.store.runs[("m1", "r001")]["status"] == "crashed"
    assert not journal.crash_note_path(path).exists()  # its evidence is in the snapshot now
    assert telemetry.read_runs(path).set_index("run_id").loc["r001", "status"] == "crashed"


def test_interrupted_again_stays_interrupted_and_finished_is_kept(tmp_path):
    path = tmp_path / "t.h5"
    w = telemetry.TelemetryWriter(path).open()
    w.start(run_row(0))
    _die(w)
    w = telemetry.TelemetryWriter(path, resume=True).open()
    assert w.store.runs[("m1", "r000")]["status"] == "interrupted"
    assert w.start(run_row(0)) == 2
    _die(w)  # killed again during the re-run
    w = telemetry.TelemetryWriter(path, resume=True).open()
    assert w.store.runs[("m1", "r000")]["status"] == "interrupted"
    assert w.store.attempts[("m1", "r000")] == 2
    w.close()


@pytest.mark.parametrize("line, words", [
    (b'[1, 2]', "line 2"),
    (b'{"event": "run", "row": {"run_id": "r5"}}', "row.machine_id"),
    (b'{"event": "nope", "row": {}}', "line 2"),
    (b'{"event": "run", "row": {"machine_id": "m1", "run_id": "r5", "status": "great"}}',
     "status"),
    (b'{"event": "start", "row": {"machine_id": "m1", "run_id": "r5", "attempt": "x"}}',
     "attempt"),
    (b'{"event": "run", "row": {"machine_id": "m1", "run_id": 5}}', "run_id"),
    (b'{"event": "run", "row": {"machine_id": "m1", "run_id": "r5"}, "detail": 3}', "detail"),
])
def test_a_tampered_journal_line_is_one_error_naming_file_and_line(tmp_path, line, words):
    from hpcds1mpi.errors import TelemetryError

    path = tmp_path / "t.h5"
    w = telemetry.TelemetryWriter(path).open()
    w.record(run_row(0))
    _die(w)
    with open(telemetry.journal_path(path), "ab") as fh:
        fh.write(line + b"\n")
    for read in (telemetry.read_runs, lambda p: telemetry.TelemetryWriter(p, resume=True).open()):
        with pytest.raises(TelemetryError) as info:
            read(path)
        message = str(info.value)
        assert str(telemetry.journal_path(path)) in message and "line 2" in message
        assert words in message and "\n" not in message


def test_the_hpcds1mpi_cli_reads_a_tampered_journal_as_one_line(tmp_path):
    from tests.helpers import run_cli

    path = tmp_path / "t.h5"
    w = telemetry.TelemetryWriter(path).open()
    w.record(run_row(0))
    _die(w)
    with open(telemetry.journal_path(path), "ab") as fh:
        fh.write(b'{"event": "run", "row": {}}\n')
    proc = run_cli(["telemetry", "show", str(path)], timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert "line 2" in proc.stderr


def test_a_line_nested_too_deep_to_parse_is_torn_not_a_traceback(tmp_path):
    """json.loads raises RecursionError (not ValueError) on 100,000 nested brackets."""
    path = tmp_path / "t.h5"
    with telemetry.TelemetryWriter(path, snapshot_every_s=3600) as w:
        w.record(run_row(0))
    with open(telemetry.journal_path(path), "ab") as fh:
        fh.write(b"[" * 100000 + b"]" * 100000 + b"\n")
    assert list(telemetry.read_runs(path)["run_id"]) == ["r000"]


def test_a_journal_another_user_may_not_read_says_whose_and_what_to_do():
    """s34 tester U5: "cannot read the journal (Permission denied)" gave no step to take."""
    import tempfile

    from hpcds1mpi.errors import TelemetryError  # noqa: F401 - the child cannot import it
    from hpcds1mpi.records.telemetry.journal import read_journal
    from tests.runtime.test_denied_access import as_nobody

    if os.geteuid() != 0:
        pytest.skip("becomes another user: needs root")
    shared = tempfile.mkdtemp(prefix="hpcds1mpi-journal-", dir="/tmp")
    os.chmod(shared, 0o755)
    journal = os.path.join(shared, "s.h5.journal")
    with open(journal, "w") as fh:
        fh.write("\n")
    os.chmod(journal, 0o600)
    kind, said = as_nobody(read_journal, os.path.join(shared, "s.h5"))
    os.remove(journal)
    os.rmdir(shared)
    assert kind == "raised" and said.startswith(
        f"TelemetryError: the telemetry file's journal {journal}: permission denied (you may "
        "not read it: owner root")
    assert f"chmod o+r {journal}" in said


def test_a_live_writer_whose_lock_another_user_cannot_open_is_still_alive(shared_folder):
    """s34 fixer FU2: a lock of 0600 (an older version's, or a umask's) that the reader cannot
    open had read as "no writer", so a live sweep's running runs were called interrupted."""
    path = shared_folder / "t.h5"
    with telemetry.TelemetryWriter(path, snapshot_every_s=3600):
        os.chmod(telemetry.lock_path(path), 0o600)  # as an older version left it
        assert as_other_user(telemetry.writer_alive, str(path)) == ("ok", True)
    assert as_other_user(telemetry.writer_alive, str(path)) == ("ok", False)


# --------------------------------------------------------------------------------------------
# Side files that are no regular files: refused, never followed nor waited on (s35 tester R1, R2)

from hpcds1mpi.errors import OutputError  # noqa: E402
from tests.planted_files import (left_as_it_was, plant, plant_link, private_file,  # noqa: E402
                                 within)


def _a_file(path) -> None:
    with telemetry.TelemetryWriter(path) as writer:
        writer.record(run_row(0))


def test_a_fifo_as_lock_stops_no_reader(tmp_path):
    """R2: ``mkfifo t.h5.lock`` hung ``telemetry show`` and ``train --telemetry`` for ever."""
    path = tmp_path / "t.h5"
    _a_file(path)
    plant("fifo", telemetry.lock_path(path))
    with within(1.0), pytest.raises(OutputError, match=f"^{telemetry.lock_path(path)} is a FIFO"):
        telemetry.read_runs(path)


@pytest.mark.parametrize("side", ["journal", "crash note", "fault note"])
def test_a_fifo_beside_the_file_stops_no_reader(tmp_path, side):
    path = tmp_path / "t.h5"
    _a_file(path)
    where = {"journal": telemetry.journal_path(path),
             "crash note": telemetry.journal.crash_note_path(path),
             "fault note": telemetry.journal.fault_note_path(path, "r000", 1)}[side]
    plant("fifo", where)
    with within(1.0), pytest.raises(OutputError, match=f"^{where} is a FIFO"):
        telemetry.read_runs(path)


def test_a_journal_linked_to_the_users_file_is_refused_and_never_read(tmp_path):
    path, key = tmp_path / "t.h5", private_file(tmp_path / "id_key")
    _a_file(path)
    plant_link(telemetry.journal_path(path), key)
    with pytest.raises(OutputError, match="t.h5.journal is a symbolic link"):
        telemetry.read_runs(path)
    with pytest.raises(OutputError, match="t.h5.journal is a symbolic link"):
        telemetry.TelemetryWriter(path, resume=True).open()
    assert left_as_it_was(key)


@pytest.mark.parametrize("note", ["crash", "fault"])
def test_a_notes_temporary_planted_as_a_link_is_replaced_not_written_through(tmp_path, note):
    """R1's class: a note's ``.tmp`` was opened for writing through a link planted there."""
    path, key = tmp_path / "t.h5", private_file(tmp_path / "id_key")
    final = (telemetry.journal.crash_note_path(path) if note == "crash"
             else telemetry.journal.fault_note_path(path, "r000", 1))
    plant_link(final.with_name(final.name + ".tmp"), key)
    if note == "crash":
        telemetry.journal.write_crash_note(path, "the launch exited 139")
        assert telemetry.journal.read_crash_note(path) == "the launch exited 139"
    else:
        telemetry.write_fault_note(path, "r000", 1, "boom")
        assert telemetry.read_fault_notes(path) == {"r000": "rank 1: boom"}
    assert left_as_it_was(key) and not final.is_symlink()
