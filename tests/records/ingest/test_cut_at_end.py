"""A text job log cut inside its last line: every reader of a delimited text table counts that
line under one reason, never reads its cut value (s44 tester N3: a job table CSV's
time_limit_s 60 stored as 6)."""

from __future__ import annotations

import bz2
import gzip
import lzma
import shutil
import subprocess

import pytest

from hpcds1mpi.records.ingest import ingest, read_job_log, write_job_table
from hpcds1mpi.records.ingest.cut_at_end import (CUT_AT_END, cut_at_end_reason,
                                                 ends_inside_line)
from hpcds1mpi.records.ingest.schema import KINDS
from tests.records.ingest.captures import DATA
from tests.records.ingest.joblogs import EAGLE, EURORA, needs_joblogs, regular_swf


def _head(source, out, lines: int = 6):
    with open(source) as fh:
        out.write_text("".join(fh.readline() for _ in range(lines)))
    return out


#: Each text kind's reader, given a whole file of that kind (ending in a newline).
WHOLE_FILES = {
    "sacct-p": lambda tmp: _head(DATA / "sacct-energy-gpu.txt", tmp / "p.txt"),
    "sacct-csv": lambda tmp: (tmp / "s.csv").write_text(
        "JobIDRaw,JobName,User,State,Submit,Start,End,ElapsedRaw,TimelimitRaw\n"
        "11,a,u,COMPLETED,2024-01-01T00:00:00,2024-01-01T00:00:10,2024-01-01T00:01:14,64,60\n"
        "12,a,u,COMPLETED,2024-01-01T00:00:00,2024-01-01T00:00:10,2024-01-01T00:01:14,64,60\n")
    and tmp / "s.csv",
    "eagle": lambda tmp: _head(EAGLE, tmp / "eagle.csv"),
    "eurora": lambda tmp: _head(EURORA, tmp / "eurora.csv"),
    "job-table": lambda tmp: write_job_table(ingest([DATA / "sacct-energy-gpu.txt"])[0],
                                             tmp / "jobs.csv"),
    "swf": lambda tmp: regular_swf(tmp / "log.swf", jobs=5),
}
#: Kinds that are no delimited text: a cut JSON or parquet file does not parse at all.
NOT_TEXT_TABLES = {"sacct-json", "pm100", "adastra"}


def test_every_kind_read_from_a_text_table_is_checked_here():
    assert set(KINDS) - NOT_TEXT_TABLES == set(WHOLE_FILES)


@needs_joblogs
@pytest.mark.parametrize("kind", sorted(WHOLE_FILES))
@pytest.mark.parametrize("how", ["last value cut", "saved without its final newline"])
def test_a_file_ending_inside_its_last_line_counts_that_line_never_reads_it(kind, how,
                                                                            tmp_path):
    whole = WHOLE_FILES[kind](tmp_path)
    _, full = read_job_log(whole, kind)
    text = whole.read_text().rstrip("\n")
    cut = tmp_path / f"cut{whole.suffix}"
    cut.write_text(text[:-1] if how == "last value cut" else text)
    df, report = read_job_log(cut, kind)
    assert report.dropped.get(CUT_AT_END) == 1, report.lines()
    assert report.jobs == full.jobs - 1
    assert "echo >> FILE" in CUT_AT_END


@pytest.mark.parametrize("packed, module", [("gzip", gzip), ("bzip2", bz2), ("xz", lzma)])
def test_a_compressed_swf_saved_without_its_final_newline_is_told_a_way_that_mends_it(
        packed, module, tmp_path):
    """s45 FY4: a .swf.gz was told "echo >> FILE", which makes a gzip (and xz) file unreadable
    and which bzip2's reader ignores. The advice given is run here and the log read whole."""
    if shutil.which(packed) is None:
        pytest.skip(f"no {packed} command")
    text = regular_swf(tmp_path / "log.swf", jobs=5).read_text().rstrip("\n")
    log = tmp_path / f"log.swf.{packed}"
    log.write_bytes(module.compress(text.encode()))
    _, report = read_job_log(log)
    reason = cut_at_end_reason(packed)
    assert (report.jobs, dict(report.dropped)) == (4, {reason: 1})
    assert "echo >> FILE" not in reason.replace("not echo >> FILE", "")
    command = reason.split("add one compressed: ", 1)[1].split(" (", 1)[0]
    assert command == f"echo | {packed} >> FILE"
    subprocess.run(command.replace("FILE", str(log)), shell=True, check=True)
    _, report = read_job_log(log)
    assert (report.jobs, dict(report.dropped)) == (5, {})


@pytest.mark.parametrize("text, quoted, cut", [
    ("a,b\n1,2\n", False, False), ("a,b\n1,2\r\n", False, False), ("a,b\n1,2", False, True),
    ("a,b\n1,2\n  ", False, False), ("a,b\n1,\"x\"", True, False), ("a,b\n1,\"x\"", False, True),
    ("a,b\n1,2,", True, True), ("", False, False)])
def test_ends_inside_line(text, quoted, cut):
    assert ends_inside_line(text, quoted) is cut
