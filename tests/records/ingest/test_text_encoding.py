"""A job log's bytes as text: UTF-8, else cp1252/Latin-1 said (s43 tester H1)."""

from __future__ import annotations

from hpcds1mpi.records.ingest import read_job_log
from hpcds1mpi.records.ingest.text_encoding import decode_log

HEADER = "JobID|JobName|User|State|Submit|Start|End|Elapsed|Timelimit|NNodes|NCPUS"


def test_utf8_and_a_byte_order_mark_read_without_a_fact():
    assert decode_log("\ufeffjörg\n".encode()) == ("jörg\n", None)


def test_latin1_bytes_stay_distinct_and_are_said():
    text, fact = decode_log("jörg jürg \x81".encode("latin-1"))
    assert text == "jörg jürg \x81"
    assert "not valid UTF-8" in fact and "iconv" in fact


def test_latin1_users_of_a_sacct_export_are_two_users_not_one(tmp_path):
    rows = [HEADER] + [f"{100 + i}|run|{u}|COMPLETED|2026-06-01T08:00:00|2026-06-01T08:00:10|"
                       f"2026-06-01T08:01:50|00:01:40|01:00:00|1|2"
                       for i, u in enumerate(["jörg", "jürg", "jörg"])]
    for name, sep in (("p.txt", "|"), ("c.csv", ",")):
        path = tmp_path / name
        path.write_bytes(("\n".join(rows).replace("|", sep) + "\n").encode("latin-1"))
        table, report = read_job_log(path)
        assert table.user.value_counts().to_dict() == {"jörg": 2, "jürg": 1}
        assert any("not valid UTF-8" in fact for fact in report.facts)


def test_utf8_and_latin1_lines_joined_by_cat_each_keep_their_letters(tmp_path):
    """Two exports joined by cat, one UTF-8, one Latin-1: each line read its own way, and the
    fact counts them (s43 tester J2)."""
    row = ("{}|run|{}|COMPLETED|2026-06-01T08:00:00|2026-06-01T08:00:10|2026-06-01T08:01:50|"
           "00:01:40|01:00:00|1|2\n")
    path = tmp_path / "mixed.txt"
    path.write_bytes((HEADER + "\n" + row.format(1, "jürg")).encode()
                     + row.format(2, "jörg").encode("latin-1"))
    table, report = read_job_log(path)
    assert sorted(table.user) == ["jörg", "jürg"]
    fact = next(fact for fact in report.facts if "not valid UTF-8" in fact)
    assert "1 of 3 lines" in fact and "first at line 3" in fact and "other 2 as UTF-8" in fact
