"""The Standard Workload Format reader on the real logs (CEA Curie, UniLu Gaia, ALCF Theta),
on slices cut from them, and on bad lines written here."""

from __future__ import annotations

import gzip

import pandas as pd
import pytest

from hpcds1mpi.errors import IngestError
from hpcds1mpi.records.ingest import JOB_COLUMNS, detect_kind, read_job_log
from tests.records.ingest.joblogs import CURIE, GAIA, THETA, needs_joblogs, swf_lines, swf_slice

pytestmark = needs_joblogs


def test_curie_every_line_a_job_with_the_logs_statuses():
    df, report = read_job_log(CURIE)
    assert report.kind == "swf" and report.records == report.jobs == len(df) == 312_826
    assert sum(report.dropped.values()) == 0, report.lines()
    assert list(df.columns) == [c for c, _ in JOB_COLUMNS]
    # Of the 14,003 status 0 (failed), 5,382 ran to their requested time: killed (s38 C5).
    assert df["status"].value_counts().to_dict() == {"ok": 281_337, "cancelled": 17_486,
                                                     "failed": 8_621, "timeout": 5_382}
    first = df.iloc[0]
    # 272393 31656837 33492 86395 256 -1 -1 256 86400 -1 1 87 95 -1 -1 4 -1 -1
    assert first["job_id"] == "272393" and first["user"] == "87" and first["account"] == "95"
    assert first["partition"] == "4" and pd.isna(first["queue"]) and pd.isna(first["workload"])
    assert first["cores"] == first["req_procs"] == 256 and pd.isna(first["nodes"])
    assert first["runtime_s"] == 86395 and first["wait_s"] == 33492
    assert first["time_limit_s"] == 86400 and pd.isna(first["mem_req_gb"])
    # UnixStartTime 1296571124 + 31656837 s, in UTC.
    assert first["submit_time"] == pd.Timestamp(1296571124 + 31656837, unit="s")
    assert first["start_time"] - first["submit_time"] == pd.Timedelta(seconds=33492)
    assert first["end_time"] - first["start_time"] == pd.Timedelta(seconds=86395)
    assert "times in UTC (the log's TimeZoneString: Europe/Paris)" in report.facts


def test_gaia_partial_executions_kept_with_status_unknown():
    df, report = read_job_log(GAIA)
    assert len(df) == 51_987 and sum(report.dropped.values()) == 0
    assert df["status"].value_counts(dropna=False).to_dict() == {
        "ok": 41_268, "failed": 9_109, "timeout": 1_483, pd.NA: 127}  # status 0: 10,592
    partial = df[df["status"].isna()]
    assert set(partial["state_raw"]) == {"2 partial execution, to be continued"}
    assert partial["error"].isna().all()
    # 2 83558 1 432024 36 1320 7566 36 432000 -1 0 2 2 2 1 -1 -1 -1: queue, no partition.
    row = df[df["job_id"] == "2"].iloc[0]
    assert row["workload"] == "2" and row["queue"] == row["partition"] == "1"
    assert row["cpu_s"] == 1320 * 36 and row["peak_rss_mb"] == pytest.approx(7566 * 1024 / 2**20)
    # Status 0 at 432,024 s of its 432,000: killed at the limit (s38 tester C5).
    assert row["status"] == "timeout" and row["error"] == "0 failed"


def test_theta_processor_fields_hold_nodes_and_no_status():
    df, report = read_job_log(THETA)
    assert len(df) == 23_911
    assert df["cores"].isna().all() and df["req_procs"].isna().all()
    assert df["nodes"].min() == 128 and df["req_nodes"].notna().all()
    assert df["status"].isna().all() and df["user"].isna().all()
    assert any("read as nodes" in n for n in report.facts)
    assert report.notes["status 0 on every job (no status in this log): unknown: kept, status "
                        "NA (not known how it ended)"] == 23_911
    as_procs, _ = read_job_log(THETA, procs_are="processors")
    assert as_procs["nodes"].isna().all() and as_procs["cores"].min() == 128


def test_slice_plain_equals_gzip(tmp_path):
    header, body = swf_lines(CURIE)
    plain = swf_slice(CURIE, tmp_path / "curie.swf", jobs=300)
    packed = tmp_path / "curie.swf.gz"
    with gzip.open(packed, "wt") as fh:
        fh.write(plain.read_text())
    assert detect_kind(plain) == detect_kind(packed) == "swf"
    a, _ = read_job_log(plain)
    b, _ = read_job_log(packed)
    assert len(a) == 300
    pd.testing.assert_frame_equal(a.drop(columns="source_file"), b.drop(columns="source_file"))


def test_minus_one_is_missing_not_a_value(tmp_path):
    path = swf_slice(CURIE, tmp_path / "c.swf", jobs=0, extra=(
        "7 10 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1\n",))
    df, report = read_job_log(path)
    row = df.iloc[0]
    for col in ("wait_s", "runtime_s", "cores", "req_procs", "time_limit_s", "user",
                "account", "partition", "start_time", "status"):
        assert pd.isna(row[col]), col
    assert row["state_raw"] == "-1 unknown"
    assert report.notes["status -1 unknown: kept, status NA (not known how it ended)"] == 1


GOOD = "1 0 5 100 16 -1 -1 16 600 -1 1 3 4 -1 -1 2 -1 -1\n"


@pytest.mark.parametrize("line, reason", [
    ("2 10 5 100 16 -1 -1 16 600 -1 1 3 4\n", "truncated line (fewer than 18 fields)"),
    ("2 10 5 100 16 -1 -1 16 600 -1 1 3 4 -1 -1 2 -1 -1 9 9\n", "more than 18 fields"),
    ("2 10 5 abc 16 -1 -1 16 600 -1 1 3 4 -1 -1 2 -1 -1\n", "a word where a number belongs"),
    ("2 10 5 nan 16 -1 -1 16 600 -1 1 3 4 -1 -1 2 -1 -1\n", "a word where a number belongs"),
    ("2 10 5 100 16 -1 -1 16 600 -1 1 3 4 -1 -1 2 inf -1\n", "number too large (> 2^53)"),
    ("2 10 5 -50 16 -1 -1 16 600 -1 1 3 4 -1 -1 2 -1 -1\n", "negative run time (not -1)"),
    ("2 10 -7 100 16 -1 -1 16 600 -1 1 3 4 -1 -1 2 -1 -1\n", "negative wait time (not -1)"),
    ("2 10 5 100 16 -1 -1 16 -600 -1 1 3 4 -1 -1 2 -1 -1\n", "negative requested time (not -1)"),
    ("2 10 5 100 99 -1 -1 99 600 -1 1 3 4 -1 -1 2 -1 -1\n",
     "processors above the header's MaxProcs (64): the header or the line is wrong"),
    ("2 10 5 100 16 -1 -1 16 600 -1 7 3 4 -1 -1 2 -1 -1\n", "unknown status code"),
    ("1 10 5 100 16 -1 -1 16 600 -1 1 3 4 -1 -1 2 -1 -1\n", "duplicate job number"),
    ("2 10 5 100 16 -1 -1 16 600 -1 1 3.5 4 -1 -1 2 -1 -1\n",
     "a fraction where a count or id belongs"),
    ("2 -1 5 100 16 -1 -1 16 600 -1 1 3 4 -1 -1 2 -1 -1\n", "no submit time (-1)"),
    ("2 1e12 5 100 16 -1 -1 16 600 -1 1 3 4 -1 -1 2 -1 -1\n", "absurd time (> 5e+09 s)"),
    ("2 10 5 100 16 -1 -1 16 600 -1 1 1e30 4 -1 -1 2 -1 -1\n", "number too large (> 2^53)"),
    ("2 10 5 100 16 -1 -1 16 600 -1 1 -5 4 -1 -1 2 -1 -1\n", "negative id (not -1)"),
    ("2 10 5 100 16 -1 -1 16 600 -1 1 3 4 -1 -3 2 -1 -1\n", "negative id (not -1)"),
])
def test_bad_line_counted_under_its_reason_never_used(tmp_path, line, reason):
    path = tmp_path / "bad.swf"
    path.write_text("; UnixStartTime: 1000\n; MaxNodes: 4\n; MaxProcs: 64\n" + GOOD + line
                    + GOOD.replace("1 0 5", "3 20 5", 1))
    df, report = read_job_log(path)
    assert dict(report.dropped) == {reason: 1}, report.lines()
    assert list(df["job_id"]) == ["1", "3"] and report.records == 3
    assert (df["runtime_s"] == 100).all()


@pytest.mark.parametrize("wide, said", [(10, True), (1, False)])
def test_a_header_maxprocs_many_jobs_exceed_says_how_to_mend_it(tmp_path, wide, said):
    """s46 tester I8: MaxProcs 12 dropped Gaia's 433 widest of 3000 jobs, saying only "the
    header or the line is wrong"; a few such lines are bad lines, said as before."""
    lines = [GOOD.replace("1 0 5", f"{i} {i} 5", 1) for i in range(1, 101)]
    lines[:wide] = [line.replace(" 16 -1 -1 16 ", " 99 -1 -1 99 ") for line in lines[:wide]]
    path = tmp_path / "lie.swf"
    path.write_text("; UnixStartTime: 1000\n; MaxProcs: 64\n" + "".join(lines))
    df, report = read_job_log(path)
    assert len(df) == 100 - wide
    mend = [f for f in report.facts if "correct it (sed 's/^; MaxProcs: .*/; MaxProcs: 99/' "
            "-i lie.swf)" in f]
    assert bool(mend) is said
    if said:
        assert mend[0].startswith(f"{wide} of 100 jobs count more than the header's MaxProcs "
                                  "(64), up to 99: dropped")


@pytest.mark.parametrize("sep", [",", "|"])
def test_a_log_saved_with_another_separator_is_refused_naming_it(tmp_path, sep):
    """s45 tester C5: every line 18 numbers joined by commas was "3000 x a word where a number
    belongs", saying neither the separator nor the mend; tabs are whitespace, read."""
    head = "; UnixStartTime: 1000\n; MaxNodes: 4\n; MaxProcs: 64\n"
    lines = [GOOD, GOOD.replace("1 0 5", "3 20 5", 1)]
    path = tmp_path / "joined.swf"
    path.write_text(head + "".join(line.replace(" ", sep) for line in lines))
    with pytest.raises(IngestError, match=rf"no job could be read as swf \(2 x fields separated "
                                          rf"by '\{sep}', not spaces \(SWF separates its fields "
                                          rf"by whitespace: sed '/\^;/!s/\{sep}/ /g' FILE"):
        read_job_log(path)
    path.write_text(head + "".join(line.replace(" ", "\t") for line in lines))
    assert len(read_job_log(path)[0]) == 2


@pytest.mark.parametrize("extra", [" 5", " 5 6", " 5 6 7 8 9"])
def test_a_long_first_line_is_counted_and_every_line_after_it_read_whole(tmp_path, extra):
    """A first job line of 19 fields made pandas take field 1 as the index: that line was kept
    one field off (job 0, its processors as its run time) and the good ones dropped as
    truncated. Later long lines, of any length, are counted too."""
    def job(n, fields=""):
        return GOOD.replace("1 0 5", f"{n} {n * 10} 5", 1).replace("\n", fields + "\n")

    path = tmp_path / "long.swf"
    path.write_text("; UnixStartTime: 1000\n; MaxProcs: 64\n" + job(1, extra) + job(2)
                    + job(3, extra) + job(4) + job(5, " 1 2"))
    df, report = read_job_log(path)
    assert dict(report.dropped) == {"more than 18 fields": 3}, report.lines()
    assert report.records == 5 and list(df["job_id"]) == ["2", "4"]
    assert (df["runtime_s"] == 100).all() and (df["req_procs"] == 16).all()
    assert (df["time_limit_s"] == 600).all() and (df["wait_s"] == 5).all()


def test_no_unix_start_time_said_and_epoch_used(tmp_path):
    path = tmp_path / "nostart.swf"
    path.write_text("; MaxProcs: 64\n" + GOOD)
    df, report = read_job_log(path)
    assert df.loc[0, "submit_time"] == pd.Timestamp(0)
    assert any("no usable UnixStartTime" in n for n in report.facts)


def test_truncated_gzip_and_not_swf_are_one_line_errors(tmp_path):
    packed = tmp_path / "cut.swf.gz"
    data = gzip.compress(("; UnixStartTime: 0\n" + GOOD * 5000).encode())
    packed.write_bytes(data[: len(data) // 2])
    with pytest.raises(IngestError, match="unreadable SWF file: the gzip file is corrupt or "
                                          "truncated") as info:
        read_job_log(packed)
    assert "\n" not in str(info.value)
    other = tmp_path / "words.swf"
    other.write_text("hello world\n")
    with pytest.raises(IngestError, match="not a Standard Workload Format"):
        read_job_log(other, kind="swf")


def test_more_lines_than_max_records_is_said(tmp_path):
    path = tmp_path / "more.swf"
    path.write_text("; UnixStartTime: 0\n; MaxRecords: 1\n" + GOOD
                    + GOOD.replace("1 0 5", "2 9 5", 1))
    df, report = read_job_log(path)
    assert len(df) == 2
    assert "2 job lines but the header's MaxRecords is 1: the header is wrong or lines were " \
        "appended" in report.facts


def test_never_started_job_in_nodes_mode_keeps_nodes_missing(tmp_path):
    path = tmp_path / "nodes.swf"
    path.write_text("; UnixStartTime: 0\n; MaxNodes: 8\n; MaxProcs: 8\n"
                    "1 0 50 0 0 -1 -1 4 600 -1 5 3 4 -1 -1 2 -1 -1\n")
    df, report = read_job_log(path)
    assert len(df) == 1 and pd.isna(df.loc[0, "nodes"]) and df.loc[0, "req_nodes"] == 4
    assert df.loc[0, "status"] == "cancelled" and sum(report.dropped.values()) == 0


@pytest.mark.parametrize("key, value, why", [
    ("MaxProcs", "inf", "not finite"), ("MaxProcs", "1e400", "not finite"),
    ("MaxProcs", "2.5", "not a whole number"), ("MaxProcs", "1e16", "outside 1..9e+15"),
    ("MaxProcs", "0", "outside 1..9e+15"), ("MaxNodes", "-5", "outside 1..9e+15"),
    ("MaxProcs", "abc", "not a number"), ("UnixStartTime", "-99999999999", "outside"),
    ("UnixStartTime", "99999999999999", "outside"),
])
def test_a_header_value_out_of_range_is_ignored_and_said(tmp_path, key, value, why):
    path = tmp_path / "liar.swf"
    path.write_text(f"; UnixStartTime: 1000\n; MaxProcs: 64\n; {key}: {value}\n" + GOOD)
    df, report = read_job_log(path)
    assert len(df) == 1 and df.loc[0, "runtime_s"] == 100
    assert any(f.startswith(f"header {key}: '{value}' ignored ({why}") for f in report.facts), \
        report.facts


@pytest.mark.parametrize("where", [0.05, 0.5])
def test_a_corrupt_byte_in_a_gzip_log_is_one_line(tmp_path, where):
    """A flipped byte early (while the header is read) or late (inside the table reader)."""
    data = bytearray(gzip.compress(("; UnixStartTime: 0\n" + "".join(
        GOOD.replace("1 0 5", f"{i} {i} 5", 1) for i in range(1, 40000))).encode()))
    at = int(len(data) * where)
    data[at:at + 4] = b"\xff\xff\xff\xff"
    packed = tmp_path / "corrupt.swf.gz"
    packed.write_bytes(bytes(data))
    with pytest.raises(IngestError, match="unreadable SWF file: the gzip file is corrupt or "
                                          "truncated") as info:
        read_job_log(packed)
    assert "\n" not in str(info.value) and "engine" not in str(info.value)


def test_a_byte_order_mark_is_not_part_of_the_first_line(tmp_path):
    """An editor's UTF-8 BOM before the header (or the first job line) hid it: 1970 dates."""
    plain = tmp_path / "bom.swf"
    plain.write_bytes(b"\xef\xbb\xbf; UnixStartTime: 1000\n; MaxProcs: 64\n" + GOOD.encode())
    packed = tmp_path / "bom.swf.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    for path in (plain, packed):
        df, report = read_job_log(path)
        assert df.loc[0, "submit_time"] == pd.Timestamp(1000, unit="s"), report.facts
        assert not any("UnixStartTime" in f for f in report.facts)
    bare = tmp_path / "bom_nohdr.swf"
    bare.write_bytes(b"\xef\xbb\xbf" + GOOD.encode())
    assert detect_kind(bare) == "swf"
    df, _ = read_job_log(bare, kind="swf")
    assert df.loc[0, "runtime_s"] == 100


def test_zero_processors_and_zero_requested_time_are_missing_and_noted(tmp_path):
    """Counts run 1..10^6 and a limit of 0 s is no limit: 0 is a converter's "none"."""
    path = tmp_path / "zeros.swf"
    path.write_text("; UnixStartTime: 0\n; MaxProcs: 64\n" + GOOD
                    + "2 10 5 0 0 -1 -1 0 0 -1 5 3 4 -1 -1 2 -1 -1\n")
    df, report = read_job_log(path)
    zero = df.iloc[1]
    assert len(df) == 2 and sum(report.dropped.values()) == 0
    assert pd.isna(zero["cores"]) and pd.isna(zero["req_procs"]) and pd.isna(zero["time_limit_s"])
    assert zero["status"] == "cancelled" and df.loc[0, "cores"] == 16
    assert dict(report.notes) == {"field 5 (procs) 0: cores NA": 1,
                                  "field 8 (req_procs) 0: req_procs NA": 1,
                                  "field 9 (req_time) 0: time_limit_s NA": 1}


def test_a_job_submitted_after_the_headers_end_time_is_dropped(tmp_path):
    """Gaia's header ends 2014-08-19; a submit 155 years later is a garbled line."""
    path = swf_slice(GAIA, tmp_path / "far.swf", jobs=100, extra=(
        "99002 4900000000 1 50 24 1783 14805 24 432000 -1 1 17 5 5 1 -1 -1 -1\n",))
    df, report = read_job_log(path)
    assert len(df) == 100 and df["submit_time"].max().year == 2014
    assert dict(report.dropped) == {"submitted after the header's EndTime (by more than a day): "
                                    "the header or the line is wrong": 1}


@pytest.mark.parametrize("end, facts", [
    ("2014-05-23 10:00:00", []),  # the lines agree with it: only the far one is dropped
    ("2014-05-21 10:00:00", ["header EndTime: '2014-05-21 10:00:00' ignored (before the log's "
                             "start)"]),
    ("soon", ["header EndTime: 'soon' ignored (not a date)"]),
])
def test_end_time_read_as_local_time_and_a_wrong_one_ignored(tmp_path, end, facts):
    path = tmp_path / "end.swf"
    path.write_text("; UnixStartTime: 1400749079\n; StartTime: 2014-05-22 10:57:59\n"
                    f"; EndTime: {end}\n" + GOOD + GOOD.replace("1 0 5", "2 90000 5", 1)
                    + GOOD.replace("1 0 5", "3 900000 5", 1))
    df, report = read_job_log(path)
    assert [f for f in report.facts if "EndTime" in f] == facts
    assert list(df["job_id"]) == (["1", "2"] if not facts else ["1", "2", "3"])


def test_end_time_before_most_lines_is_the_headers_fault(tmp_path):
    path = tmp_path / "end.swf"
    path.write_text("; StartTime: 2014-05-22 10:00:00\n; EndTime: 2014-05-22 11:00:00\n"
                    + "".join(GOOD.replace("1 0 5", f"{i} {i * 90000} 5", 1) for i in range(1, 5)))
    df, report = read_job_log(path)
    assert len(df) == 4 and "header EndTime '2014-05-22 11:00:00' is before most submit " \
        "times: ignored" in report.facts


def test_every_status_0_with_users_stays_failed(tmp_path):
    """Failed jobs picked out of Gaia are failures; Theta's all-0 status comes with no users."""
    header, body = swf_lines(GAIA)
    failed = [ln for ln in body if ln.split()[10] == "0"][:300]
    path = tmp_path / "failed.swf"
    path.write_text("".join(header + failed))
    df, report = read_job_log(path)
    # Those that ran to their requested time were killed at it (s38 tester C5).
    assert len(df) == 300 and df["status"].isin(["failed", "timeout"]).all()
    assert set(report.notes) <= {"status 0 (failed) with a run time at or past the requested "
                                 "time: timeout (killed at the limit)"}
    assert any(f.startswith("every job has status 0 (failed)") for f in report.facts)


@pytest.mark.parametrize("zone, utc, how", [
    ("Europe/Luxembourg", "2014-05-22 08:57:59", "a local time in its TimeZoneString "
                                                  "(Europe/Luxembourg)"),
    ("Nowhere/Land", "2014-05-22 10:57:59", "read as UTC: its TimeZoneString 'Nowhere/Land' "
                                             "is no zone known here"),
    (None, "2014-05-22 10:57:59", "read as UTC: the header has no TimeZoneString")])
def test_without_unix_start_time_the_header_start_time_dates_the_log(tmp_path, zone, utc, how):
    """s35 tester T9: StartTime (SWF's local start, in TimeZoneString's zone) was given and
    unused, the epoch taken while the report said the zone was applied."""
    path = tmp_path / "start.swf"
    path.write_text((f"; TimeZoneString: {zone}\n" if zone else "")
                    + "; StartTime: 2014-05-22 10:57:59\n; MaxProcs: 64\n" + GOOD)
    df, report = read_job_log(path)
    assert df.loc[0, "submit_time"] == pd.Timestamp(utc) + pd.Timedelta(
        seconds=int(GOOD.split()[1]))
    assert f"counted from its StartTime '2014-05-22 10:57:59', {how} ({utc} UTC)" in \
        " ".join(report.facts)
    assert not any("epoch" in f or f.startswith("times in UTC (") for f in report.facts)


def test_without_any_start_time_the_zone_is_said_not_applied(tmp_path):
    path = tmp_path / "bare.swf"
    path.write_text("; TimeZoneString: Europe/Luxembourg\n; MaxProcs: 64\n" + GOOD)
    df, report = read_job_log(path)
    assert df.loc[0, "submit_time"] == pd.Timestamp(int(GOOD.split()[1]), unit="s")
    assert any("counted from the epoch" in f for f in report.facts)
    assert "the log's TimeZoneString (Europe/Luxembourg) not applied: no start time to date " \
           "its times by" in report.facts
    assert not any(f.startswith("times in UTC") for f in report.facts)


@pytest.mark.parametrize("joined", ["cat", "gzip members"])
def test_two_logs_joined_in_one_file_are_refused(tmp_path, joined):
    """s36 tester L2: `cat month1.swf month2.swf` (or two .gz members joined) was read as one
    log: the second header (its UnixStartTime, MaxProcs) was skipped, its jobs misdated."""
    first = swf_slice(GAIA, tmp_path / "m1.swf", jobs=50).read_bytes()
    header, body = swf_lines(GAIA)
    second = "".join(header + body[50:100]).encode()
    if joined == "cat":
        path = tmp_path / "months.swf"
        path.write_bytes(first + second)
    else:
        path = tmp_path / "months.swf.gz"
        path.write_bytes(gzip.compress(first) + gzip.compress(second))
    line = len(header) + 50 + 1 + next(i for i, ln in enumerate(header)
                                       if "Version" in ln or "Computer" in ln)
    with pytest.raises(IngestError, match=f"two SWF logs joined: a second header at line "
                                          f"{line} .* give each log as its own file") as info:
        read_job_log(path)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("jobs", [3, 100])
def test_a_small_theta_slice_has_no_status_either(tmp_path, jobs):
    """s36 tester L4: a Theta slice of 100 jobs or fewer was stored all failed, without a
    note (the no-status rule held only above 100 jobs)."""
    df, report = read_job_log(swf_slice(THETA, tmp_path / "theta.swf", jobs=jobs))
    assert len(df) == jobs and df["status"].isna().all()
    assert report.notes["status 0 on every job (no status in this log): unknown: kept, status "
                        "NA (not known how it ended)"] == jobs


def test_a_small_slice_of_failed_jobs_with_users_says_so(tmp_path):
    """s36 tester L4: the "every job has status 0 (failed)" fact was also held back to logs of
    more than 100 jobs."""
    header, body = swf_lines(GAIA)
    path = tmp_path / "failed.swf"
    path.write_text("".join(header + [ln for ln in body if ln.split()[10] == "0"][:20]))
    df, report = read_job_log(path)
    assert df["status"].isin(["failed", "timeout"]).all()
    assert any(f.startswith("every job has status 0 (failed)") for f in report.facts)


def _header_log(tmp_path, header: str, procs=(24, 96, 12)) -> tuple:
    lines = [f"{i + 1} {10 * i} 5 100 {p} -1 -1 {p} 3600 -1 1 {1 + i % 2} 1 -1 1 1 -1 -1\n"
             for i, p in enumerate(procs)]
    path = tmp_path / "h.swf"
    path.write_text("; UnixStartTime: 1400000000\n" + header + "".join(lines))
    return read_job_log(path)


def test_a_processors_note_is_not_read_as_nodes_and_no_job_is_lost(tmp_path):
    # s38 tester C2: "no job could be read as swf (3 x nodes above the header's MaxNodes)".
    df, report = _header_log(tmp_path, "; MaxNodes: 8\n; MaxProcs: 96\n; Note: processors are "
                             "allocated in whole nodes of 12, so the processor counts are "
                             "multiples of 12\n")
    assert list(df["cores"]) == [24, 96, 12] and df["nodes"].isna().all()
    assert not report.dropped


def test_a_nodes_note_that_most_jobs_contradict_reads_processors_and_says_so(tmp_path):
    df, report = _header_log(tmp_path, "; MaxNodes: 8\n; MaxProcs: 96\n; Note: the processor "
                             "fields count nodes\n")
    assert list(df["cores"]) == [24, 96, 12] and not report.dropped
    assert ("a header note reads as if the processor fields held nodes, but 3 of 3 jobs count "
            "more than MaxNodes (8) and at most MaxProcs (96): read as processors "
            "(--procs-are nodes to override)") in report.facts
    # Where the lines agree with it, the note is followed.
    df, _ = _header_log(tmp_path, "; MaxNodes: 8\n; MaxProcs: 96\n; Note: the processor "
                        "fields count nodes\n", procs=(2, 8, 1))
    assert list(df["nodes"]) == [2, 8, 1] and df["cores"].isna().all()


def test_a_max_procs_below_most_jobs_is_the_header_wrong(tmp_path):
    # s38 tester C4: MaxProcs 4 on Gaia's lines dropped 30,395 of 51,860 good jobs.
    df, report = _header_log(tmp_path, "; MaxProcs: 16\n")
    assert list(df["cores"]) == [24, 96, 12] and not report.dropped
    assert "header MaxProcs 16 is below what most jobs use (2 of 3 count more): ignored" \
        in report.facts
    df, report = _header_log(tmp_path, "; MaxProcs: 64\n")  # a few lines above: theirs
    assert list(df["cores"]) == [24, 12]
    assert report.dropped == {"processors above the header's MaxProcs (64): the header or the "
                              "line is wrong": 1}


def test_a_failed_job_that_reached_its_requested_time_is_a_timeout(tmp_path):
    # s38 tester C5: SWF has no timeout code; 58 of a Gaia user's jobs at status 0 ran to
    # their request (18004 s of 18000 ...) and recommend --history never heard of the kills.
    path = tmp_path / "t.swf"
    path.write_text("; UnixStartTime: 1400000000\n; MaxProcs: 64\n"
                    "1 0 5 3600 4 -1 -1 4 3600 -1 0 1 1 -1 1 1 -1 -1\n"   # failed at the limit
                    "2 10 5 3604 4 -1 -1 4 3600 -1 0 1 1 -1 1 1 -1 -1\n"  # past it (grace)
                    "3 20 5 1000 4 -1 -1 4 3600 -1 0 1 1 -1 1 1 -1 -1\n"  # failed before it
                    "4 30 5 3600 4 -1 -1 4 3600 -1 1 1 1 -1 1 1 -1 -1\n"  # completed at it
                    "5 40 5 3600 4 -1 -1 4 -1 -1 0 1 1 -1 1 1 -1 -1\n")   # no request
    df, report = read_job_log(path)
    assert list(df["status"]) == ["timeout", "timeout", "failed", "ok", "failed"]
    assert list(df["state_raw"][:2]) == ["0 failed"] * 2  # what the log wrote
    assert report.notes["status 0 (failed) with a run time at or past the requested time: "
                        "timeout (killed at the limit)"] == 2


def test_a_headerless_slice_of_unix_times_is_not_said_to_lack_real_dates(tmp_path):
    # s43 tester H4: field 2 held Unix times (2022); the note said "not real dates".
    path = tmp_path / "slice.swf"
    path.write_text("1 1646101662 5 100 4 -1 -1 4 3600 -1 1 1 1 -1 1 -1 -1 -1\n"
                    "2 1646101762 5 100 4 -1 -1 4 3600 -1 1 1 1 -1 1 -1 -1 -1\n")
    table, report = read_job_log(path)
    assert str(table.submit_time.min()).startswith("2022-03-01")
    assert not any("not real dates" in f for f in report.facts)
    assert any("Unix times" in f for f in report.facts)


def test_a_missing_submit_time_is_not_the_earliest_of_a_headerless_slice(tmp_path):
    # s43 tester J3: one "-1" (SWF's unknown) submit made the earliest submit -1, so the slice
    # was said to have "not real dates" while its jobs were stored in 2022.
    path = tmp_path / "theta.swf"
    path.write_text("1 1640995200 10 3600 128 -1 -1 128 7200 -1 1 5 1 -1 1 -1 -1 -1\n"
                    "2 -1 -1 -1 128 -1 -1 128 7200 -1 5 5 1 -1 1 -1 -1 -1\n"
                    "3 1640998800 20 1800 256 -1 -1 256 3600 -1 1 6 1 -1 1 -1 -1 -1\n")
    df, report = read_job_log(path)
    assert dict(report.dropped) == {"no submit time (-1)": 1}
    assert any("Unix times" in f and "2022-01-01" in f for f in report.facts), report.facts
    assert not any("not real dates" in f for f in report.facts)
    assert df["submit_time"].min() == pd.Timestamp("2022-01-01")
