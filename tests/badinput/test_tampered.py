"""Tampered bundles (a copy of the shipped one with one file corrupted or removed) and tampered
telemetry (truncated, garbage, a garbage journal line) against every command that reads them:
refused with exit 2 and one line naming the file; the tampered files themselves unchanged."""

from __future__ import annotations

import json
import random

import pytest

#: Garbage bytes, the same on every run (the suite is reproducible).
NOISE = random.Random(14).randbytes(2048)


def _json_edit(change):
    def tamper(path):
        doc = json.loads(path.read_text())
        change(doc)
        path.write_text(json.dumps(doc))
    return tamper


def _truncate(path):
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _garbage(path):
    path.write_bytes(NOISE[:256] if path.suffix != ".json" else b"{not json at all")


BUNDLE_TAMPERS = {
    "manifest-truncated": ("manifest.json", _truncate),
    "manifest-garbage": ("manifest.json", _garbage),
    "manifest-empty": ("manifest.json", lambda p: p.write_bytes(b"")),
    "manifest-a-list": ("manifest.json", lambda p: p.write_text("[1, 2, 3]")),
    "manifest-missing": ("manifest.json", lambda p: p.unlink()),
    "format-version-string": ("manifest.json", _json_edit(
        lambda d: d.__setitem__("format_version", "1"))),
    "format-version-future": ("manifest.json", _json_edit(
        lambda d: d.__setitem__("format_version", 999))),
    "targets-missing": ("manifest.json", _json_edit(lambda d: d.pop("targets"))),
    "members-truncated": ("members.pkl", _truncate),
    "members-garbage": ("members.pkl", _garbage),
    "members-missing": ("members.pkl", lambda p: p.unlink()),
    # Damaged pickles that fail with other exceptions than UnpicklingError.
    "members-overflow": ("members.pkl", lambda p: p.write_bytes(b"\x80\x05\x8d" + b"\xff" * 8)),
    "members-unknown-module": ("members.pkl", lambda p: p.write_bytes(
        b"\x80\x04\x8c\x06nosuch\x94\x8c\x01x\x94\x93\x94.")),
    "members-unknown-class": ("members.pkl", lambda p: p.write_bytes(
        b"\x80\x04\x8c\x02os\x94\x8c\x09nosuchatt\x94\x93\x94.")),
    "members-bad-reduce": ("members.pkl", lambda p: p.write_bytes(b"\x80\x04K\x01K\x02R.")),
    "matrix-garbage": ("training_matrix.npy", _garbage),
    "data-garbage": ("training_data.parquet", _garbage),
}
BUNDLE_READERS = {
    "recommend": ["recommend", "--workload", "stencil", "--size", "1024", "--model", "{bundle}"],
    "mobo": ["mobo", "--workload", "stencil", "--size", "1000", "--model", "{bundle}", "--out",
             "mobo_out", "--budget", "6"],
    "learn": ["learn", "--model", "{bundle}", "--telemetry", "{tel}", "--out", "new_model"],
}
#: (reader, tamper) -> owner: fixes not landed yet. Readers that never open a file are
#: not expected to notice it (recommend and mobo do not read the training data).
NOT_READ = {("recommend", "matrix-garbage"), ("recommend", "data-garbage"),
            ("mobo", "matrix-garbage"), ("mobo", "data-garbage"), ("learn", "matrix-garbage")}
NOT_YET: dict[tuple[str, str], str] = {}


def _bundle_cases():
    for reader in BUNDLE_READERS:
        for tamper in BUNDLE_TAMPERS:
            if (reader, tamper) in NOT_READ:
                continue
            key = (reader, tamper)
            marks = [pytest.mark.xfail(strict=True, reason=NOT_YET[key])] if key in NOT_YET else []
            yield pytest.param(reader, tamper, id=f"{reader}-{tamper}", marks=marks)


@pytest.mark.parametrize(("reader", "tamper"), list(_bundle_cases()))
def test_tampered_bundle_is_refused(box, capsys, reader, tamper):
    name, change = BUNDLE_TAMPERS[tamper]
    change(box.bundle / name)
    box.refused(capsys, BUNDLE_READERS[reader], 2, "bundle" if "missing" in tamper else "")


def _journal(path, lines: list[bytes]):
    with open(str(path) + ".journal", "ab") as fh:
        for line in lines:
            fh.write(line + b"\n")


TELEMETRY_TAMPERS = {
    "truncated": _truncate,
    "garbage-after-signature": lambda p: p.write_bytes(b"\x89HDF\r\n\x1a\n" + NOISE),
    "zero-bytes": lambda p: p.write_bytes(b""),
    "journal-wrong-types": lambda p: _journal(p, [json.dumps(
        {"event": "finished", "run_id": 5, "row": "not a row"}).encode()]),
    "journal-a-list": lambda p: _journal(p, [b"[1, 2, 3]"]),
    "journal-number": lambda p: _journal(p, [b"42"]),
    "journal-unknown-event": lambda p: _journal(p, [b'{"event": "rm -rf", "run_id": "x"}']),
}
TELEMETRY_READERS = {
    "show": ["telemetry", "show", "{tel}"],
    "export": ["telemetry", "export", "{tel}", "--out", "runs.csv"],
    "merge-source": ["telemetry", "merge", "{tel}", "--out", "merged.h5"],
    "train": ["train", "--telemetry", "{tel}", "--out", "model", "--no-embedding", "--members",
              "1", "--member-trees", "1"],
    "learn": ["learn", "--model", "{bundle}", "--telemetry", "{tel}", "--out", "new_model"],
}
TELEMETRY_NOT_YET: dict[tuple[str, str], str] = {}


def _telemetry_cases():
    for reader in TELEMETRY_READERS:
        for tamper in TELEMETRY_TAMPERS:
            key = (reader, tamper)
            marks = ([pytest.mark.xfail(strict=True, reason=TELEMETRY_NOT_YET[key])]
                     if key in TELEMETRY_NOT_YET else [])
            yield pytest.param(reader, tamper, id=f"{reader}-{tamper}", marks=marks)


@pytest.mark.parametrize(("reader", "tamper"), list(_telemetry_cases()))
def test_tampered_telemetry_is_refused(box, capsys, reader, tamper):
    TELEMETRY_TAMPERS[tamper](box.tel)
    box.refused(capsys, TELEMETRY_READERS[reader], 2, box.tel.name)


def test_merge_into_tampered_telemetry_is_refused(box, capsys, good_inputs):
    other = box.root / "other.h5"
    other.write_bytes((good_inputs / "t.h5").read_bytes())
    _truncate(box.tel)
    box.refused(capsys, ["telemetry", "merge", str(other), "--out", "{tel}"], 2, box.tel.name)


@pytest.mark.parametrize("line", [b"{this is not json", bytes(range(1, 200))],
                         ids=["text", "binary"])
def test_a_torn_journal_line_is_ignored_and_nothing_is_lost(box, capsys, line):
    """A line that is not JSON is what a kill mid-write leaves (journal.py): ignored, every
    finished run still read, nothing changed."""
    from tests.badinput.harness import assert_unchanged, invoke, snapshot

    _journal(box.tel, [line])
    before = snapshot(box.root)
    res = invoke(capsys, ["telemetry", "show", str(box.tel), "--rows", "0"])
    assert res.code == 0 and "Traceback" not in res.err, res.err
    assert "20 runs" in res.out
    assert_unchanged(before, snapshot(box.root))
