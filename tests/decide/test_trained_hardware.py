"""The bundle's partition table: hardware columns filled from it, partitions matched to it."""

from __future__ import annotations

import math

import pandas as pd

from hpcds1mpi.cluster import Partition
from hpcds1mpi.decide.trained_hardware import hardware_columns, matching_partition
from tests.fake_bundle import PARTITIONS, FakeBundle


def test_hardware_columns_fill_what_is_missing_and_keep_what_is_there():
    frame = pd.DataFrame({"partition": ["cpu", "gpu-big", "elsewhere"],
                          "memory_gb": [1.0, float("nan"), float("nan")]})
    out = hardware_columns(frame, PARTITIONS)
    assert out["cores_per_node"].tolist()[:2] == [16, 8] and math.isnan(out["cores_per_node"][2])
    assert out["memory_gb"].tolist()[:2] == [1.0, 64.0]
    assert out["gpus_per_node"].tolist()[:2] == [0, 2]
    assert "cores_per_node" not in frame.columns  # the caller's frame is left alone


def test_hardware_columns_of_plain_arrays_are_the_frames():
    """Columns (the recommend path, no pandas) get the same values and kinds."""
    import numpy as np

    from hpcds1mpi.surrogates.columns import Columns, as_columns

    frame = pd.DataFrame({"partition": ["cpu", "gpu-big", "elsewhere", "cpu"],
                          "memory_gb": [1.0, float("nan"), float("nan"), float("nan")]})
    want = hardware_columns(frame, PARTITIONS)
    got = hardware_columns(as_columns(frame), PARTITIONS)
    assert isinstance(got, Columns)
    for col in want.columns:
        assert np.array_equal(np.asarray(got[col]), want[col].to_numpy(),
                              equal_nan=want[col].dtype.kind == "f"), col
        if col != "partition":  # text stays <U in Columns
            assert np.asarray(got[col]).dtype.kind == want[col].dtype.kind, col


def test_matching_partition_by_name_then_by_hardware():
    bundle = FakeBundle()
    assert matching_partition(bundle, Partition("laptop", cores_per_node=6, memory_gb=16)) is None
    # Same hardware under another name (memory within 25 %) is recognised.
    assert matching_partition(bundle, Partition("batch", cores_per_node=16, memory_gb=60)) == "cpu"
    assert matching_partition(bundle, Partition("batch", cores_per_node=16, memory_gb=90)) is None
    # A known name with other hardware is not that partition.
    assert matching_partition(bundle, Partition("cpu", cores_per_node=8, memory_gb=64,
                                                gpus_per_node=2)) == "gpu-big"
