"""The CINECA Eurora CSV: its predicted power never reads as measured; bad rows counted."""

from __future__ import annotations

import pytest

from hpcds1mpi.errors import IngestError
from hpcds1mpi.records.ingest import detect_kind, read_job_log
from hpcds1mpi.records.ingest.eurora import ENERGY_PREDICTED
from hpcds1mpi.records.ingest.schema import ENERGY_POWER_LOG, ENERGY_SLURM
from tests.records.ingest.joblogs import EURORA, needs_joblogs

pytestmark = needs_joblogs


def test_whole_file_predicted_power_labelled_so():
    assert detect_kind(EURORA) == "eurora"
    df, report = read_job_log(EURORA)
    assert len(df) == report.records == 5930 and sum(report.dropped.values()) == 0
    powered = df["avg_power_w"].notna()
    assert int(powered.sum()) == 4795
    assert set(df.loc[powered, "energy_source"]) == {ENERGY_PREDICTED}
    assert "not measured" in ENERGY_PREDICTED
    assert not df["energy_source"].isin([ENERGY_SLURM, ENERGY_POWER_LOG]).any()
    assert df.loc[~powered, "energy_j"].isna().all()
    assert (df.loc[powered, "energy_j"] == df.loc[powered, "avg_power_w"]
            * df.loc[powered, "runtime_s"]).all()
    # 498503,parallel,2014-03-31 08:51:10,1,1,1,0,2014-03-31 10:55:42,...,14400,9.0
    row = df[df["job_id"] == "498503"].iloc[0]
    assert row["queue"] == row["partition"] == "parallel" and row["gpus"] == 1
    assert row["wait_s"] == 7472 and row["runtime_s"] == 11186 and row["time_limit_s"] == 14400
    assert row["avg_power_w"] == 9.0 and row["status"] == "ok"


def _slice(tmp_path, edit=None, rows=20):
    lines = EURORA.read_text().splitlines(keepends=True)[: rows + 1]
    if edit:
        lines = edit(lines)
    path = tmp_path / "eurora.csv"
    path.write_text("".join(lines))
    return path


def _set(line: str, column: int, value: str) -> str:
    cells = line.rstrip("\n").split(",")
    cells[column] = value
    return ",".join(cells) + "\n"


RUN_TIME = 15  # run_time_s's position in the header
START = 7


@pytest.mark.parametrize("value, column, reason", [
    ("", RUN_TIME, "empty run_time_s"),
    ("-30.0", RUN_TIME, "runtime_s negative"),
    ("soon", RUN_TIME, "run_time_s not a number"),
    ("yesterday", START, "start not a time"),
    ("2014-03-31 08:00:00", START, "wait_s negative"),  # started before it was submitted
    ("2014-03-30 08:00:00", START + 1, "end_time before start_time"),
])
def test_bad_row_counted_never_used(tmp_path, value, column, reason):
    path = _slice(tmp_path, lambda ls: ls[:3] + [_set(ls[3], column, value)] + ls[4:])
    df, report = read_job_log(path)
    assert dict(report.dropped) == {reason: 1}, report.lines()
    assert len(df) == 19


def test_missing_column_is_a_one_line_error(tmp_path):
    def drop_power(lines):
        return [",".join(ln.rstrip("\n").split(",")[:-1]) + "\n" for ln in lines]

    path = _slice(tmp_path, drop_power)
    with pytest.raises(IngestError, match="needs the column.s. pred_power_W") as info:
        read_job_log(path, kind="eurora")
    assert "\n" not in str(info.value)


def test_row_with_more_fields_than_the_header(tmp_path):
    path = _slice(tmp_path, lambda ls: ls[:2] + [ls[2].rstrip("\n") + ",9,9\n"] + ls[3:])
    df, report = read_job_log(path)
    assert dict(report.dropped) == {"more fields than the header": 1} and len(df) == 19
    assert report.records == 20


def test_truncated_last_row_counted(tmp_path):
    """A file cut mid-row (a copy that stopped): the short row is counted, not read as NaN."""
    path = _slice(tmp_path, lambda ls: ls[:-1] + [ls[-1][: len(ls[-1]) // 2]])
    df, report = read_job_log(path)
    assert dict(report.dropped) == {"fewer fields than the header (truncated row)": 1}
    assert len(df) == 19 and df["runtime_s"].notna().all()


def test_the_same_job_twice_in_the_file_is_kept_once_counted(tmp_path):
    """s48 tester P3: the file and its first 5 rows again ("6030 records -> 6030 jobs")."""
    df, report = read_job_log(_slice(tmp_path, lambda lines: lines + lines[1:6]))
    assert report.records == 25 and len(df) == 20 and df["job_id"].is_unique
    assert report.notes["same job twice in the file (job id, submit, start and end agree: "
                        "overlapping exports joined), kept once"] == 5
