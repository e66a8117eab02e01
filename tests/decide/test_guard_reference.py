"""The guard's reference from plain arrays: the same rows and query configurations that the
pandas recipe (drop_duplicates, then sample(48, random_state=0)) picked from the shipped
bundle, so verdicts are unchanged."""

from __future__ import annotations

import numpy as np

from hpcds1mpi.decide import bundle_cache
from hpcds1mpi.decide.guard_reference import CONFIG_COLUMNS, QUERY_CONFIGS, build_reference
from hpcds1mpi.decide.model_bundle import load_model


def test_reference_picks_the_rows_pandas_picked():
    bundle = load_model(None)
    ref = build_reference(bundle)
    frame = bundle.training_frame()
    configs = frame[list(CONFIG_COLUMNS)].drop_duplicates().reset_index(drop=True)
    if len(configs) > QUERY_CONFIGS:
        configs = configs.sample(QUERY_CONFIGS, random_state=0).reset_index(drop=True)
    got = ref.configs.to_frame()
    for col in CONFIG_COLUMNS:
        assert got[col].astype(str).tolist() == configs[col].astype(str).tolist(), col
    assert ref.workloads.tolist() == frame["workload"].astype(str).tolist()
    assert np.array_equal(ref.sizes, frame["size"].to_numpy(float))


def test_training_columns_are_the_training_frame():
    bundle = load_model(None)
    cols = bundle_cache.training_columns(bundle)
    frame = bundle.training_frame()
    assert cols.columns == list(frame.columns)
    for col in frame.columns:
        want = frame[col]
        if want.dtype.kind in "biuf":
            assert np.array_equal(cols[col], want.to_numpy(), equal_nan=want.dtype.kind == "f")
        else:
            assert cols[col].tolist() == want.fillna("").astype(str).tolist(), col
