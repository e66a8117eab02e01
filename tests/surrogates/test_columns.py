"""Columns: the recommend path's plain-array table; its grouping matches pandas'."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from hpcds1mpi.surrogates.columns import Columns, as_columns, factorize, first_rows


@pytest.mark.parametrize("values", [
    np.array([5, 3, 5, 9, 3, 3, 1]), np.array(["b", "a", "b", "c"]), np.array([2.5, 2.5, -1.0]),
    np.zeros(0, dtype=np.int64), np.arange(1000)[::-1] % 7,
])
def test_factorize_is_pandas_factorize(values):
    codes, uniques = factorize(values)
    want_codes, want_uniques = pd.factorize(values)
    assert codes.tolist() == want_codes.tolist()
    assert list(uniques) == list(want_uniques)


def test_first_rows_are_drop_duplicates():
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"a": rng.integers(0, 3, 200), "b": rng.choice(["x", "y"], 200),
                          "c": rng.integers(0, 2, 200)})
    got = first_rows(as_columns(frame), ["a", "b", "c"])
    assert got.tolist() == frame.drop_duplicates(["a", "b", "c"]).index.tolist()


def test_rows_columns_and_lengths():
    t = Columns({"n": np.arange(4), "s": np.array(["a", "b", "a", "c"])})
    assert len(t) == 4 and t.columns == ["n", "s"] and "s" in t
    assert t[t["s"] == "a"]["n"].tolist() == [0, 2]
    assert t[["s"]].columns == ["s"]
    with pytest.raises(ValueError, match="rows"):
        Columns({"a": [1, 2], "b": [1]})
    assert t.to_frame().equals(pd.DataFrame({"n": np.arange(4), "s": ["a", "b", "a", "c"]}))


def test_missing_text_becomes_empty():
    frame = pd.DataFrame({"s": ["a", None, "b"]}, dtype=object)
    assert as_columns(frame)["s"].tolist() == ["a", "", "b"]


@pytest.mark.parametrize("values", [np.array([5, 3, 5, 9, 3]), np.arange(50)[::-1] * 2 ** 40])
def test_unordered_factorize_groups_the_same_rows(values):
    codes, uniques = factorize(values, ordered=False)
    assert np.array_equal(uniques[codes], values)
    assert len(uniques) == len(set(values.tolist()))
