"""Job-table ranges: vectorised per column, each bad row counted once under its first reason."""

from __future__ import annotations

import time
from collections import Counter

import numpy as np
import pandas as pd

from hpcds1mpi.schemas.jobs import JOB_RANGES, drop_malformed, malformed_rows


def test_each_rule_and_missing_values():
    df = pd.DataFrame({
        "runtime_s": [1.0, -5.0, np.nan, np.inf, 1e12, 2.0],
        "nodes": pd.array([1, 1, 2, 1, 1, 0], dtype="Int64"),
        "energy_j": [np.nan, -1.0, 5.0, 5.0, 5.0, 5.0],
        "other": [-1, -1, -1, -1, -1, -1],  # not a ranged column: not looked at
    })
    bad, reasons = malformed_rows(df)
    assert bad.tolist() == [False, True, False, True, True, True]
    assert reasons == Counter({"runtime_s negative": 1, "runtime_s not finite (inf)": 1,
                               "runtime_s absurd (> 3.15e+07)": 1, "nodes below 1": 1})
    dropped = Counter()
    kept = drop_malformed(df, dropped)
    assert dropped == reasons and kept["runtime_s"].tolist()[0] == 1.0 and len(kept) == 2
    assert drop_malformed(df.iloc[[0, 2]], Counter()) is not None


def test_every_ranged_column_refuses_a_negative_value():
    for column, low, high in JOB_RANGES:
        df = pd.DataFrame({column: [low, high, -1.0, high * 2]})
        bad, reasons = malformed_rows(df)
        assert bad.tolist() == [False, False, True, True], column
        assert sum(reasons.values()) == 2


def test_a_300k_row_table_is_checked_in_well_under_a_second():
    n = 300_000
    rng = np.random.default_rng(0)
    df = pd.DataFrame({c: rng.uniform(low, min(high, 1e6), n) for c, low, high in JOB_RANGES})
    df["nodes"] = pd.array(rng.integers(1, 64, n), dtype="Int64")
    df.loc[::1000, "runtime_s"] = -1.0
    start = time.perf_counter()
    bad, reasons = malformed_rows(df)
    assert time.perf_counter() - start < 1.0
    assert reasons == Counter({"runtime_s negative": 300})


def test_submit_time_columns_have_ranges():
    """The columns known at submission (issue 16) are range-checked like the others."""
    ranged = {c for c, _, _ in JOB_RANGES}
    assert {"req_nodes", "req_procs", "req_gpus", "wait_s"} <= ranged
    bad, reasons = malformed_rows(pd.DataFrame({"wait_s": [10.0, -5.0], "req_nodes": [0, 2]}))
    assert bad.tolist() == [True, True]
    assert reasons == Counter({"wait_s negative": 1, "req_nodes below 1": 1})
