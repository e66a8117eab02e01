"""Column names as people change them: sacct's in another case, renamed, a job table's."""

from __future__ import annotations

import pytest

from hpcds1mpi.errors import IngestError
from hpcds1mpi.records.ingest import ingest, read_job_log, write_job_table
from hpcds1mpi.records.ingest.column_names import near_misses, sacct_case
from tests.records.ingest.captures import DATA

ROW = ["7", "u", "COMPLETED", "2026-12-07T01:46:36", "2026-12-07T01:46:36",
       "2026-12-07T01:46:38", "2", "00:10:00"]
HEADER = ["JobID", "User", "State", "Submit", "Start", "End", "ElapsedRaw", "Timelimit"]


def test_sacct_names_in_another_case_are_sacct_s_where_certain():
    assert sacct_case(["jobidraw", "STATE", "TimeLimit", "x"]) == ["JobIDRaw", "State",
                                                                  "Timelimit", "x"]
    assert sacct_case(["state", "State"]) == ["state", "State"]  # two: which is it?
    assert near_misses(["State"], ["Start", "Status"], known=("Start",)) == \
        " (has 'Status' for State)"
    assert near_misses(["State"], ["JobID"]) == ""


@pytest.mark.parametrize("sep, names", [(",", [h.lower() for h in HEADER]),
                                        (",", [*HEADER[:-1], "TimeLimit"]),
                                        ("|", [h.lower() for h in HEADER])])
def test_a_sacct_export_with_its_names_recased_is_read(tmp_path, sep, names):
    """s46 tester I2: a lower-case sacct CSV header was "not a job log of a known kind", and a
    TimeLimit column ignored ("no job has a value for time_limit_s")."""
    path = tmp_path / "lower.txt"
    path.write_text(sep.join(names) + "\n" + sep.join(ROW) + "\n")
    df, report = read_job_log(path)
    assert list(df["job_id"]) == ["7"] and df["time_limit_s"].iloc[0] == 600
    assert df["runtime_s"].iloc[0] == 2
    assert any("in another case than sacct's" in f for f in report.facts)


@pytest.mark.parametrize("sep", [",", "|"])
def test_a_renamed_state_column_is_named_with_its_near_miss(tmp_path, sep):
    """s46 tester I2: State renamed Status gave "no job could be read as sacct-p (11 x no
    State column/value)" (sacct -P) or "needs the column(s) State (has ...)"."""
    path = tmp_path / "status.txt"
    path.write_text(sep.join(HEADER).replace("State", "Status") + "\n" + sep.join(ROW) + "\n")
    with pytest.raises(IngestError,
                       match=r"needs the column(\(s\))? State \(has 'Status' for State\)"):
        read_job_log(path)


def test_a_job_table_with_a_column_renamed_names_it(tmp_path):
    """s46 tester I2: a job table whose runtime_s a spreadsheet user renamed runtime was "not
    a job log of a known kind"."""
    table, _, _ = ingest([DATA / "sacct-energy-gpu.txt"])
    path = write_job_table(table, tmp_path / "jobs.csv")
    lines = path.read_text().splitlines(keepends=True)
    path.write_text(lines[0].replace("runtime_s", "runtime") + "".join(lines[1:]))
    with pytest.raises(IngestError, match="looks like a job table hpcds1mpi ingest wrote, but "
                       r"lacks the column\(s\) runtime_s \(has 'runtime' for runtime_s\)"):
        read_job_log(path)
