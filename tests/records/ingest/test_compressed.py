"""Compressed job logs: the compression told from the first bytes, SWF read from gzip, bzip2 and
xz alike, and a cut, corrupt or unread compression refused in one line that says what to do."""

from __future__ import annotations

import bz2
import gzip
import lzma
import re

import pandas as pd
import pytest

from hpcds1mpi.errors import IngestError
from hpcds1mpi.records.ingest import detect_kind, read_job_log
from hpcds1mpi.records.ingest.compressed import compression

SWF = "; UnixStartTime: 1000\n; MaxProcs: 64\n" + "".join(
    f"{i} {i * 10} 5 100 16 -1 -1 16 600 -1 1 3 4 -1 -1 2 -1 -1\n" for i in range(1, 2001))
PACKERS = {"gzip": gzip.compress, "bzip2": bz2.compress, "xz": lzma.compress}


@pytest.mark.parametrize("data, name", [
    (gzip.compress(b"x"), "gzip"), (bz2.compress(b"x"), "bzip2"), (bz2.compress(b""), "bzip2"),
    (lzma.compress(b"x"), "xz"), (b"\x28\xb5\x2f\xfd\x00\x58", "zstd"), (b"PK\x03\x04rest", "zip"),
    (b"BZhello, a text file\n", None), (SWF.encode(), None), (b"", None),
], ids=["gzip", "bzip2", "empty-bzip2", "xz", "zstd", "zip", "text-BZh", "swf", "empty"])
def test_the_compression_is_told_by_the_first_bytes(tmp_path, data, name):
    path = tmp_path / "log"
    path.write_bytes(data)
    assert compression(path) == name


@pytest.mark.parametrize("packed", ["bzip2", "xz"])
def test_bzip2_and_xz_swf_read_like_plain(tmp_path, packed):
    """They were refused as "not a job log of a known kind", --kind swf as "not SWF"."""
    plain = tmp_path / "log.swf"
    plain.write_text(SWF)
    path = tmp_path / f"log.swf.{packed}"
    path.write_bytes(PACKERS[packed](SWF.encode()))
    assert detect_kind(path) == "swf"
    want, _ = read_job_log(plain)
    for kind in ("auto", "swf"):
        got, report = read_job_log(path, kind=kind)
        assert report.jobs == 2000 and not report.dropped
        pd.testing.assert_frame_equal(got.drop(columns="source_file"),
                                      want.drop(columns="source_file"))


@pytest.mark.parametrize("packed", ["gzip", "bzip2", "xz"])
@pytest.mark.parametrize("damage", ["cut", "corrupt"])
@pytest.mark.parametrize("kind", ["auto", "swf"])
def test_a_cut_or_corrupt_stream_is_one_line_naming_its_test(tmp_path, packed, damage, kind):
    data = bytearray(PACKERS[packed](SWF.encode()))
    if damage == "cut":
        data = data[: len(data) // 2]
    else:
        data[len(data) // 3: len(data) // 3 + 8] = b"\xff" * 8
    path = tmp_path / "log.swf.z"
    path.write_bytes(bytes(data))
    tool = {"gzip": "gzip -t", "bzip2": "bzip2 -t", "xz": "xz -t"}[packed]
    with pytest.raises(IngestError, match=f"the {packed} file is corrupt or truncated") as info:
        read_job_log(path, kind=kind)
    assert tool in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize("data, said", [
    (b"\x28\xb5\x2f\xfd" + b"\x00" * 40, "a zstd-compressed file, which is not read"),
    (b"PK\x03\x04" + b"\x00" * 40, "a zip file (an archive, or a spreadsheet)"),
], ids=["zstd", "zip"])
@pytest.mark.parametrize("kind", ["auto", "swf", "eagle"])
def test_an_unread_compression_says_to_decompress(tmp_path, data, said, kind):
    path = tmp_path / "log.swf.z"
    path.write_bytes(data)
    with pytest.raises(IngestError, match=re.escape(said)) as info:
        read_job_log(path, kind=kind)
    assert "\n" not in str(info.value)


# ------------------------- decompression bombs (s27 tester P, defect 8): read as streamed

_JOB = "1 0 0 100 4 -1 -1 4 200 -1 1 1 1 1 1 1 -1 -1\n"


def _gzip_log(tmp_path, body: str, name: str = "bomb.swf.gz"):
    path = tmp_path / name
    with gzip.open(path, "wt", compresslevel=9) as fh:
        fh.write("; MaxNodes: 10\n; MaxProcs: 40\n" + _JOB)
        fh.write(body)
    return path


def test_a_small_gzip_of_huge_comment_lines_is_read_in_bounded_memory(tmp_path):
    """40 MB of comments in a 40 KB file: the old reader held the whole text (and a copy),
    the tester's 300 KB file took 1.66 GB. Comments are dropped as they are read."""
    import tracemalloc

    path = _gzip_log(tmp_path, "".join(";" + " " * (1 << 20) + "\n" for _ in range(40)))
    assert path.stat().st_size < 100_000
    read_job_log(path)  # imports and caches out of the measure
    tracemalloc.start()
    try:
        df, report = read_job_log(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert report.jobs == report.records == len(df) == 1 and not report.dropped
    assert peak < 16e6, f"peak {peak / 1e6:.0f} MB for 40 MB of comments"


def test_more_comment_text_than_any_log_has_is_refused_in_one_line(tmp_path, monkeypatch):
    from hpcds1mpi.records.ingest import swf

    monkeypatch.setattr(swf, "MOST_COMMENT_CHARS", 1e6)
    for body in (";" + " " * 3_000_000 + "\n", "\n" * 3_000_000, "  ;\n" * 1_000_000):
        path = _gzip_log(tmp_path, body)
        with pytest.raises(IngestError, match="more than 1 MB of comment and blank lines") as info:
            read_job_log(path)
        assert "\n" not in str(info.value) and "remove them" in str(info.value)


def test_job_lines_that_would_not_fit_in_memory_are_refused_in_one_line(tmp_path, monkeypatch):
    from hpcds1mpi.records import available_memory

    path = _gzip_log(tmp_path, _JOB.replace("1 0 0", "2 0 0") * 10_000)
    monkeypatch.setattr(available_memory, "available_bytes", lambda: 1_000_000)
    with pytest.raises(IngestError, match="job lines would need more than the 0.0 GB") as info:
        read_job_log(path)
    assert "more memory, or split the log" in str(info.value)


def test_a_job_line_longer_than_any_job_is_counted_not_read(tmp_path):
    from hpcds1mpi.records.ingest.swf_header import LONGEST_LINE

    padded = _JOB.replace(" ", " " * 5000).replace("1 ", "2 ", 1)
    assert len(padded) > LONGEST_LINE
    df, report = read_job_log(_gzip_log(tmp_path, padded + _JOB.replace("1", "3", 1)))
    assert report.records == 3 and report.jobs == 2
    assert report.dropped == {f"line longer than {LONGEST_LINE} characters": 1}


def test_an_indented_comment_is_a_comment_not_a_truncated_job(tmp_path):
    """pandas took "  ; note" for a row of no fields (counted as a truncated job line);
    the header reader and looks_like_swf always took it for a comment."""
    df, report = read_job_log(_gzip_log(tmp_path, "  ; a note\n\t;\n" + _JOB.replace("1", "2", 1)))
    assert report.records == report.jobs == 2 and not report.dropped


def test_the_header_is_read_to_a_bound(tmp_path, monkeypatch):
    from hpcds1mpi.records.ingest import swf_header

    monkeypatch.setattr(swf_header, "MAX_HEADER_LINES", 5)
    path = tmp_path / "h.swf.gz"
    path.write_bytes(gzip.compress(("; MaxProcs: 40\n" + "; Note: n\n" * 10
                                    + "; UnixStartTime: 1000\n" + _JOB).encode()))
    head = swf_header.read_header(path)
    assert head.max_procs == 40 and head.unix_start is None and len(head.notes) == 4
    assert head.ignored == ["header lines past the first 5 not read"]


def _kept_reference(text: str, skip, longest: int):
    """What KeptLines gives, worked out line by line."""
    lines = text.split("\n")
    last = lines.pop()
    if last:
        lines.append(last)
    kept, too_long = [], 0
    for line in lines:
        if len(line) > longest:
            start = line[:longest]
            too_long += not (start.strip() and skip.fullmatch(start + "\n"))
        elif not skip.fullmatch(line + "\n"):
            kept.append(line + "\n")
    return "".join(kept), too_long


def test_kept_lines_agrees_with_a_line_by_line_reading_across_chunk_edges(tmp_path,
                                                                         monkeypatch):
    import random

    from hpcds1mpi.records.ingest import compressed, swf

    monkeypatch.setattr(compressed, "STREAM_CHUNK", 7)
    rng = random.Random(27)
    pieces = ["1 2 3", "", " ", "\t", ";c", "  ;c", ";" + "x" * 30, "9 " * 20, " " * 25,
              "4 ;c", "\x0b", "5"]
    for trial in range(300):
        text = "\n".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
        text += rng.choice(["", "\n"])
        path = tmp_path / f"t{trial}.gz"
        path.write_bytes(gzip.compress(text.encode()))
        stream = compressed.KeptLines(path, swf._NOT_JOB_LINES, 16)
        parts = []
        while part := stream.read(rng.choice([1, 3, 50, -1])):
            parts.append(part)
        stream.close()
        want = _kept_reference(text, swf._NOT_JOB_LINES, 16)
        assert ("".join(parts), stream.too_long) == want, repr(text)
        assert stream.error is None and stream.over is None


def test_text_lines_cuts_long_lines_and_stops_at_its_bound(tmp_path, monkeypatch):
    from hpcds1mpi.records.ingest import compressed

    monkeypatch.setattr(compressed, "STREAM_CHUNK", 4)
    path = tmp_path / "t.gz"
    path.write_bytes(gzip.compress(b"ab\n" + b"x" * 50 + b"\ncd\nlast"))
    assert list(compressed.text_lines(path, 10)) == [
        ("ab", False), ("x" * 10, True), ("cd", False), ("last", False)]
    assert list(compressed.text_lines(path, 10, most_chars=8)) == [("ab", False)]


@pytest.mark.parametrize("mode", ["w", "w:gz", "w:bz2", "w:xz"])
@pytest.mark.parametrize("members", [("gaia.swf",), ("gaia.swf", "csd3.csv")])
def test_a_tar_archive_is_refused_in_one_line(tmp_path, mode, members):
    """s36 tester L3: a .tar / .tar.gz of logs was read as one SWF log (the tar header glued to
    the first header line: dates from 1970, the other members counted as malformed)."""
    import tarfile

    files = {"gaia.swf": tmp_path / "gaia.swf", "csd3.csv": tmp_path / "csd3.csv"}
    files["gaia.swf"].write_text(SWF)
    files["csd3.csv"].write_text("JobID,State,ElapsedRaw\n1,COMPLETED,5\n")
    path = tmp_path / "logs.tar"
    with tarfile.open(path, mode) as tar:
        for name in members:
            tar.add(files[name], arcname=name)
    with pytest.raises(IngestError, match=r"a tar archive, which is not read; extract it "
                                          r"\(tar xf\)") as info:
        read_job_log(path)
    assert "\n" not in str(info.value)


def test_an_empty_gzip_file_says_it_is_empty(tmp_path):
    """s36 tester L8: an empty gzip was told to be decompressed first, which gives nothing."""
    path = tmp_path / "empty.swf.gz"
    path.write_bytes(gzip.compress(b""))
    with pytest.raises(IngestError, match="an empty gzip file .*: no job log in it"):
        read_job_log(path)
