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


# -- beyond the measured levels (item 3 of the new-user pass) ----------------------------------


def _levels():
    from hpcds1mpi.surrogates.levels import MeasuredLevels

    return MeasuredLevels("stencil", False, precisions=("fp64",), devices=("cpu",),
                          threads=(1, 2), ranks_per_node=(1, 2, 4), nodes=(1, 4))


def test_unmeasured_rows_mark_more_nodes_than_measured_and_levels_never_run():
    import numpy as np

    from hpcds1mpi.decide.scores import unmeasured_lines, unmeasured_rows

    cols = {"nodes": np.array([1, 2, 8, 1, 1, 1, 1]),
            "ranks_per_node": np.array([1, 1, 1, 3, 1, 1, 1]),
            "threads": np.array([1, 2, 1, 1, 4, 1, 1]),
            "device": np.array(["cpu"] * 5 + ["gpu", "cpu"]),
            "precision": np.array(["fp64"] * 6 + ["fp32"])}
    # 2 nodes lie between the measured 1 and 4: interpolation, not marked.
    assert unmeasured_rows(cols, _levels()).tolist() == [False, False, True, True, True, True,
                                                         True]
    assert not unmeasured_rows(cols, None).any()  # a workload never measured: the guard's
    row = {k: v[2].item() for k, v in cols.items()}
    assert unmeasured_lines(row, _levels()) == ["nodes 8 above the most measured (4)"]
    row = {k: v[4].item() for k, v in cols.items()}
    assert unmeasured_lines(row, _levels()) == ["threads 4 never measured (measured: 1, 2)"]
    assert unmeasured_lines({k: v[1].item() for k, v in cols.items()}, _levels()) == []


def test_never_measured_names_each_knobs_level_for_lines_and_for_the_tune():
    """s31 reviewer: tune's guesses had their own copy of the knobs, read back from the
    true/false ``unmeasured`` column; one function gives both readers the recorded levels."""
    from hpcds1mpi.decide.scores import never_measured, unmeasured_lines

    row = {"nodes": 8, "ranks_per_node": 3, "threads": 1, "device": "cpu", "precision": "fp32"}
    knobs = never_measured(row, _levels())
    assert [k.level for k in knobs] == ["nodes above 4", "ranks per node 3", "precision fp32"]
    assert unmeasured_lines(row, _levels()) == [k.line for k in knobs] == [
        "nodes 8 above the most measured (4)", "ranks per node 3 never measured (measured: "
        "1, 2, 4)", "precision fp32 never measured (measured: fp64)"]
    assert never_measured(row, None) == []
