"""The names of the files beside a telemetry file: fit for any legal name, found again."""

from __future__ import annotations

import os

from hpcds1mpi.records.telemetry import side_files

#: kind -> (its name beside telemetry file p, what its writer adds while writing it)
SIDE_FILES = {
    "journal": (side_files.journal_path, ""),
    "lock": (side_files.lock_path, ""),
    "crash note": (side_files.crash_note_path, ".tmp"),
    "fault note": (lambda p: side_files.fault_note_path(p, "f" * 16, 4_000_000), ".tmp"),
    "snapshot temporary": (lambda p: side_files.snapshot_tmp_path(p, 4_194_304), ""),
}


def test_a_short_name_keeps_the_names_it_always_had(tmp_path):
    t = tmp_path / "t.h5"
    assert side_files.journal_path(t) == tmp_path / "t.h5.journal"
    assert side_files.lock_path(t) == tmp_path / "t.h5.lock"
    assert side_files.crash_note_path(t) == tmp_path / ".t.h5.crash"
    assert side_files.fault_note_path(t, "abc", 1) == tmp_path / ".t.h5.fault-abc-r1"
    assert side_files.snapshot_tmp_path(t, 12) == tmp_path / ".t.h5.tmp-12"


def test_every_side_file_of_a_255_byte_name_is_a_legal_name_and_found_by_its_glob(tmp_path):
    """s32 tester T1: NAME.journal of a 249-byte NAME was 257 bytes (ENAMETOOLONG)."""
    long = tmp_path / ("k" * 252 + ".h5")
    for kind, (name_of, while_written) in SIDE_FILES.items():
        assert len(os.fsencode(name_of(long).name + while_written)) <= 255, kind
    note = side_files.fault_note_path(long, "0123456789abcdef", 3)
    tmp = side_files.snapshot_tmp_path(long, 99)
    for made in (note, tmp):
        made.write_text("x")
    assert side_files.fault_notes(long) == [note]
    assert side_files.snapshot_temporaries(long) == [tmp]


def test_two_long_names_that_start_alike_have_side_files_of_their_own(tmp_path):
    a, b = tmp_path / ("k" * 252 + ".h5"), tmp_path / ("k" * 251 + "j.h5")
    assert side_files.journal_path(a) != side_files.journal_path(b)
    assert side_files.journal_path(a) == side_files.journal_path(a)  # the same every time
    side_files.snapshot_tmp_path(a, 7).write_text("x")
    assert side_files.snapshot_temporaries(b) == []


def test_a_name_with_glob_characters_globs_its_own_notes_only(tmp_path):
    t, other = tmp_path / "t[1].h5", tmp_path / "t1.h5"
    mine = side_files.fault_note_path(t, "r1", 0)
    mine.write_text("x")
    side_files.fault_note_path(other, "r1", 0).write_text("x")
    assert side_files.fault_notes(t) == [mine]


def test_a_link_has_its_side_files_beside_its_target(tmp_path):
    """s33's left item: the journal and lock of a link sat beside the link's name, so a sweep
    through the link and one through the target took two locks and wrote at once."""
    (tmp_path / "data").mkdir()
    target = tmp_path / "data" / "t.h5"
    link = tmp_path / "l.h5"
    link.symlink_to(target)  # dangling: the first sweep creates the target
    for kind, (name_of, _) in SIDE_FILES.items():
        assert name_of(link) == name_of(target), kind
    note = side_files.fault_note_path(target, "0123456789abcdef", 3)
    note.write_text("x")
    assert side_files.fault_notes(link) == [note]
    loop = tmp_path / "loop.h5"
    loop.symlink_to(loop)  # a loop: named beside itself, its readers refuse it
    assert side_files.lock_path(loop) == tmp_path / "loop.h5.lock"


def test_a_name_past_name_max_still_gets_its_side_names(tmp_path):
    """s34: the link check's lstat raised ENAMETOOLONG on a 300-byte name, so wording a sweep's
    storage error (which names the journal) failed again (the CI's test_sweep_abort)."""
    too_long = tmp_path / ("k" * 300 + ".h5")
    for kind, (name_of, _) in SIDE_FILES.items():
        assert len(os.fsencode(name_of(too_long).name)) <= 255, kind
