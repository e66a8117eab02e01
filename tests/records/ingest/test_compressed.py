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
