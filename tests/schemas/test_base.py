"""The one helper: a pydantic verdict as one line (file, key path, what is wrong, what to do)."""

from __future__ import annotations

from typing import Literal, Optional

import pytest

from hpcds1mpi.errors import ClusterFileError, HpcdsError
from hpcds1mpi.schemas.base import Count, Flag, Schema, describe, key_path, validate


class _Inner(Schema):
    count: Count
    mode: Literal["a", "b"] = "a"


class _Outer(Schema):
    flag: Flag = False
    ratio: Optional[float] = None
    inner: dict[str, _Inner] = {}
    items: list[_Inner] = []


def _message(data) -> str:
    with pytest.raises(ClusterFileError) as info:
        validate(_Outer, data, source="f.toml", error=ClusterFileError, fix="fix it in f.toml")
    return str(info.value)


def test_key_paths():
    assert key_path(("clusters", "a", "partitions", "cpu", "memory_gb")) == \
        "clusters.a.partitions.cpu.memory_gb"
    assert key_path(("kernel", 1, "sizes")) == "kernel[1].sizes" and key_path(()) == ""


@pytest.mark.parametrize("data, expected", [
    ({"flag": "no"}, "f.toml: flag must be true or false, got 'no'; fix it in f.toml"),
    ({"flag": 1}, "f.toml: flag must be true or false, got 1; fix it in f.toml"),
    ({"ratio": float("nan")}, "ratio must be a finite number (not nan or inf), got nan"),
    ({"ratio": True}, "ratio must be a number, got True"),
    ({"inner": {"x": {"count": 0}}}, "inner.x.count must be > 0, got 0"),
    ({"inner": {"x": {"count": 10**7}}}, "inner.x.count must be <= 1000000, got 10000000"),
    ({"inner": {"x": {}}}, "inner.x is missing required key 'count'"),
    ({"inner": {"x": {"count": 1, "mode": "c"}}}, "inner.x.mode must be 'a' or 'b', got 'c'"),
    ({"items": [{"count": 1}, {"count": 1, "cuont": 2}]},
     "unknown key items[1].cuont (known: count, mode)"),
    ({"bogus": 1}, "f.toml: unknown key bogus (known: flag, ratio, inner, items)"),
    ({"inner": 3}, "inner must be a table, got 3"),
    ({"items": [{"count": "x" * 100}]}, "items[0].count must be an integer, got 'xxxxxxxxx"),
])
def test_one_line_per_problem(data, expected):
    message = _message(data)
    assert expected in message and "\n" not in message and message.endswith("; fix it in f.toml")
    assert len(message) < 400


def test_more_problems_are_counted_and_the_error_class_is_the_callers():
    message = _message({"flag": "x", "ratio": "y"})
    assert "flag must be true or false" in message and "(and 1 more)" in message
    with pytest.raises(HpcdsError):
        validate(_Inner, {"count": "1"}, source="s", error=HpcdsError, fix="f")
    assert validate(_Inner, {"count": 3}, source="s", error=HpcdsError, fix="f").count == 3


def test_describe_falls_back_to_pydantics_words():
    error = {"type": "something_new", "loc": ("a",), "msg": "Value error, it is odd", "input": 1}
    assert describe(error) == "a: it is odd"
