"""The training rows' frame file (``training_frame.npz``): the frame's columns as plain arrays,
and the launch columns beside them for the training columns alone."""

from __future__ import annotations

import numpy as np
import pandas as pd

from hpcds1mpi.surrogates.training_frame_file import (FRAME_COLUMNS, LAUNCH_COLUMNS,
                                                      read_training_columns,
                                                      read_training_frame,
                                                      write_training_frame)


def test_training_frame_view_keeps_missing_text(tmp_path):
    rows = pd.DataFrame({"workload": ["a", "b", "a"], "size": [1, 2, 3],
                         "error": ["", None, "oom: x" * 40], "energy_source": [None, None, "rapl"],
                         "runtime_s": [0.1, float("nan"), 0.3], "kept": [True, False, True]})
    rows = rows.astype({"workload": "str", "error": "str", "energy_source": "str"})
    write_training_frame(tmp_path, rows)
    # Columns come back in FRAME_COLUMNS order.
    pd.testing.assert_frame_equal(read_training_frame(tmp_path), rows[[
        c for c in FRAME_COLUMNS if c in rows.columns]])


def test_the_launch_columns_are_kept_for_the_training_columns_alone(tmp_path):
    """A kernel script's limit reads its runs' launches from the training columns, one reader
    (s47 read-back: ``kernel_job_time`` read the parquet rows itself); the DataFrame keeps its
    columns, whose ``kind`` would change the levels read from it."""
    rows = pd.DataFrame({"workload": ["gemm", "app"], "status": ["ok", "ok"],
                         "runtime_s": [2.0, 3.0], "kind": ["kernel", "external"],
                         "elapsed_s": [20.0, 4.0], "measured_s": [6.0, 3.0],
                         "command": ["", "./app 5"]})
    write_training_frame(tmp_path, rows)
    columns = read_training_columns(tmp_path)
    assert columns.columns == [c for c in FRAME_COLUMNS + LAUNCH_COLUMNS if c in rows.columns]
    assert list(columns["kind"]) == ["kernel", "external"]
    np.testing.assert_array_equal(columns["elapsed_s"], [20.0, 4.0])
    np.testing.assert_array_equal(columns["measured_s"], [6.0, 3.0])
    assert list(read_training_frame(tmp_path).columns) == ["workload", "status", "runtime_s"]
