"""One workload's training rows, selected once per bundle (:mod:`hpcds1mpi.decide.workload_rows`)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from hpcds1mpi.decide.workload_rows import workload_rows
from hpcds1mpi.surrogates.columns import Columns


class _Counted:
    """A bundle whose training columns count how often a column is read."""

    def __init__(self, rows: dict):
        self.rows, self.reads = Columns(rows), 0

    def training_columns(self):
        return self

    def __contains__(self, name):
        return name in self.rows

    def __getitem__(self, name):
        self.reads += name == "workload"
        return self.rows[name]


ROWS = {"workload": ["a", "b", "a"], "status": ["ok", "failed", "failed"], "size": [1, 2, 3],
        "partition": ["cpu"] * 3, "nodes": [1, 1, 1], "ranks_per_node": [1, 2, 4],
        "threads": [1, 1, 1], "runtime_s": [0.5, 9.0, 7.0], "extra": [0, 0, 0]}


def test_a_workloads_rows_are_selected_once_and_shared_by_every_reader():
    from hpcds1mpi.decide.failed_layouts import every_run_failed_lines
    from hpcds1mpi.decide.measured_here import workload_runs
    from hpcds1mpi.decide.unfit_measured import failed_layouts, ok_layouts

    bundle = _Counted(ROWS)
    rows = workload_rows(bundle, "a")
    assert rows["ranks_per_node"].tolist() == [1, 4] and rows["status"].tolist() == ["ok", "failed"]
    assert "extra" not in rows and "error" not in rows  # only what a reader asks, if there
    with pytest.raises(ValueError):
        rows["size"][0] = 9  # shared: read-only
    assert ok_layouts(bundle, "a") == [(1, 1)]
    assert failed_layouts(bundle, "a") == {(1, 4, 1): [3]}
    assert every_run_failed_lines(bundle, "a", "cpu") == []  # no device / precision column
    assert workload_runs(bundle, "a") is None  # the same
    assert bundle.reads == 1


def test_no_rows_or_no_workload_column_is_none_and_an_unknown_workload_empty():
    assert workload_rows(SimpleNamespace(), "a") is None
    assert workload_rows(SimpleNamespace(training_columns=lambda: Columns({"size": [1]})),
                         "a") is None
    none = workload_rows(_Counted(ROWS), "zzz")
    assert none is not None and all(len(v) == 0 for v in none.values())
    assert np.asarray(none["size"]).dtype.kind in "iuf"
