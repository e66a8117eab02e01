"""A candidate table's columns as numpy arrays."""

from __future__ import annotations

import numpy as np
import pandas as pd

from hpcds1mpi.decide.column_arrays import column_array


def test_a_missing_categorical_value_is_nan_not_the_last_category():
    """Its code is -1, which had indexed the last category: ['a', None, 'b'] read a, b, b."""
    frame = pd.DataFrame({"partition": pd.Categorical(["a", None, "b"])})
    assert column_array(frame, "partition").tolist() == ["a", "nan", "b"]
    assert column_array(pd.DataFrame({"p": pd.Categorical([None, None])}), "p").tolist() == [
        "nan", "nan"]  # no category at all


def test_text_is_fixed_width_unicode_and_numbers_stay_numbers():
    frame = pd.DataFrame({"device": ["cpu", "gpu"], "nodes": [1, 2]})
    assert column_array(frame, "device").dtype.kind == "U"
    assert np.array_equal(column_array(frame, "nodes"), np.array([1, 2]))
