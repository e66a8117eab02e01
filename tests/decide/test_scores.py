"""A job's scored candidates (``decide/scores.py``): Python values kept, rows read from them
when shared."""

from __future__ import annotations

from hpcds1mpi.decide import system1 as s1
from tests.fake_bundle import FakeBundle, fake_partitions

PARTS = fake_partitions()


def test_values_are_each_column_as_python_values_converted_once():
    from dataclasses import replace

    from hpcds1mpi.decide.batch_memo import freeze

    scores = s1.score(FakeBundle(), "gemm", 2048, list(PARTS.values()))
    sub = scores.subset("gpu-big")
    for name, column in sub.cols.items():
        got = sub.values(name)
        want = [v.item() if hasattr(v, "item") else v for v in column]
        assert [(type(v), repr(v)) for v in got] == [(type(v), repr(v)) for v in want], name
        assert sub.values(name) is got  # kept, not converted again
    plain = [sub.row(i) for i in range(len(sub))]
    freeze(sub)  # shared: rows read from the kept values, the same
    assert [repr(sub.row(i)) for i in range(len(sub))] == [repr(r) for r in plain]
    other = replace(sub, cols={k: v[::-1] for k, v in sub.cols.items()})
    assert other.values("runtime_s") == sub.values("runtime_s")[::-1]  # its own, not copied
    assert not other.shared and other._subsets == {}  # what was derived is not copied either
