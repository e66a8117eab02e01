"""telemetry.append: runs added from Python are checked as merge and train check them, before
anything is written (s37 tester P4)."""

from __future__ import annotations

import re

import pytest

from hpcds1mpi.errors import ConfigError, DataError
from hpcds1mpi.records import telemetry
from tests.records.telemetry.rows import run_row


@pytest.mark.parametrize("row, words", [
    (run_row(0, runtime_s=-5.0), "rows[1] (run_id 'r000') has runtime_s -5.0: run times are "
                                 "finite, >= 0 s"),
    (run_row(0, status="bogus"), "rows[1] (run_id 'r000') has status 'bogus': use one of ok"),
    (run_row(0, nodes=0), "rows[1] (run_id 'r000') has nodes 0: nodes must be whole numbers"),
    (run_row(0, size=64.7), "rows[1] size must be a whole number, got 64.7"),
    ({k: v for k, v in run_row(0).items() if k != "nodes"}, "rows[1] lacks 'nodes'"),
    ({"workload": "x"}, "rows[1] lacks 'run_id'"),
    (run_row(0, my_note=1), "rows[1] has unknown key 'my_note'"),
])
def test_a_row_merge_or_train_would_refuse_is_refused_and_nothing_is_written(tmp_path, row,
                                                                             words):
    """Was: stored (-5 s, 'bogus', nodes -1, 64.7 as 64, the key dropped), or a KeyError that
    left a new empty file behind."""
    new, old = tmp_path / "new.h5", tmp_path / "old.h5"
    telemetry.append(old, [run_row(1)])
    before = old.read_bytes()
    for path in (new, old):
        with pytest.raises(DataError, match=re.escape(words)) as err:
            telemetry.append(path, [run_row(2), row])
        assert "\n" not in str(err.value) and "nothing was written" in str(err.value)
    assert not new.exists() and old.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.h5"]  # no journal, no lock


def test_a_table_read_from_a_file_goes_back_whole_with_its_machines(tmp_path):
    """Was: a DataFrame was a TypeError, and the machines rows were lost."""
    src = tmp_path / "src.h5"
    telemetry.append(src, [run_row(0), run_row(1)],
                     machines=[{"machine_id": "m1", "cpu_model": "x", "physical_cores": 8}])
    copy = tmp_path / "copy.h5"
    telemetry.append(copy, telemetry.read_runs(src), machines=telemetry.read_machines(src))
    assert telemetry.read_runs(copy).equals(telemetry.read_runs(src))
    assert telemetry.read_machines(copy).drop(columns="first_seen").equals(
        telemetry.read_machines(src).drop(columns="first_seen"))


def test_rows_of_another_type_are_one_config_error(tmp_path):
    with pytest.raises(ConfigError, match="rows must be a list of dicts"):
        telemetry.append(tmp_path / "t.h5", "r000")
    assert not (tmp_path / "t.h5").exists()
