"""The fastest measured configuration around a size: which sizes count, and what is left out."""

from __future__ import annotations

import numpy as np
import pandas as pd

from hpcds1mpi.surrogates.columns import as_columns
from hpcds1mpi.surrogates.measured_best import MeasuredBest


def _row(size, rpn, threads, runtime, status="ok", workload="gemm", partition="p"):
    return {"workload": workload, "size": size, "partition": partition, "nodes": 1,
            "ranks_per_node": rpn, "threads": threads, "device": "cpu", "precision": "fp64",
            "status": status, "runtime_s": runtime}


def _training():
    # At 100 and 400 the 2x1 layout is fastest; at 200 the 1x2 layout; at 800 the 2x1 layout
    # failed (its fast runtime must not count) so 1x2 is fastest there.
    rows = []
    for size, fast in ((100, (2, 1)), (200, (1, 2)), (400, (2, 1))):
        for layout in ((1, 1), (1, 2), (2, 1)):
            rows.append(_row(size, *layout, 1.0 if layout == fast else 2.0))
    rows += [_row(800, 2, 1, 0.1, status="failed"), _row(800, 1, 2, 1.5), _row(800, 1, 1, 3.0)]
    return pd.DataFrame(rows)


def _questions(*rows):
    return pd.DataFrame([_row(*r, runtime=np.nan) for r in rows])


def test_share_counts_the_measured_sizes_around_the_question():
    best = MeasuredBest.fit(_training())
    q = _questions((150, 2, 1), (150, 1, 2), (150, 1, 1),   # between 100 and 200
                   (300, 1, 2), (200, 1, 2), (200, 2, 1),   # between 200 and 400; at 200
                   (800, 1, 2), (800.0000001, 1, 2), (799.9999999, 2, 1))  # at 800, a hair off
    assert best.share(q).tolist() == [0.5, 0.5, 0.0, 0.5, 1.0, 0.0, 1.0, 1.0, 0.0]
    # Outside the measured range nothing is known on one side: no share.
    assert np.isnan(best.share(_questions((50, 2, 1), (5000, 1, 2)))).all()


def test_a_measured_size_is_that_size_whatever_its_logarithm_rounds_to():
    # 9170 and 19143 are sizes whose math.log and numpy log differ in the last bit here.
    for size in (9170, 19143, 3, 1 << 40):
        rows = [_row(size / 2, 1, 1, 1.0), _row(size / 2, 2, 1, 2.0),
                _row(size, 2, 1, 1.0), _row(size, 1, 1, 2.0),
                _row(size * 2, 1, 1, 1.0), _row(size * 2, 2, 1, 2.0)]
        best = MeasuredBest.fit(pd.DataFrame(rows))
        assert best.share_of("gemm", size, "p", 1, 2, 1, "cpu", "fp64") == 1.0, size
        assert best.share_of("gemm", size, "p", 1, 1, 1, "cpu", "fp64") == 0.0, size
        assert best.share(_questions((size, 2, 1)))[0] == 1.0


def test_unknown_workloads_and_partitions_are_nan_and_columns_answer_alike():
    best = MeasuredBest.fit(as_columns(_training()))
    q = pd.concat([_questions((150, 2, 1)),
                   pd.DataFrame([_row(150, 2, 1, np.nan, workload="fft"),
                                 _row(150, 2, 1, np.nan, partition="gpu")])],
                  ignore_index=True)
    share = best.share(as_columns(q))
    assert share[0] == 0.5 and np.isnan(share[1:]).all()
    assert np.array_equal(best.share(q), share, equal_nan=True)
    assert np.isnan(MeasuredBest.fit(_training().assign(status="failed")).share(q)).all()


def test_one_row_by_its_values_answers_as_the_table_does():
    best = MeasuredBest.fit(_training())
    q = _questions((150, 2, 1), (150, 1, 2), (300, 1, 2), (200, 1, 2), (50, 2, 1), (800, 1, 2))
    q = pd.concat([q, pd.DataFrame([_row(150, 2, 1, np.nan, workload="fft")])],
                  ignore_index=True)
    one = [best.share_of(r.workload, r.size, r.partition, r.nodes, r.ranks_per_node, r.threads,
                         r.device, r.precision) for r in q.itertuples()]
    assert np.array_equal(one, best.share(q), equal_nan=True)
    assert best.share_of("gemm", 150, "p", 1, 2, 1, "cpu", "fp32") == 0.0  # another precision


def test_of_equal_runtimes_the_first_row_measured_counts_and_row_order_does_not_matter():
    rows = [_row(100, 1, 2, 1.0), _row(100, 2, 1, 1.0), _row(100, 1, 1, 3.0),
            _row(100, 1, 1, 0.5, workload="fft"), _row(200, 2, 1, 0.7, workload="fft")]
    best = MeasuredBest.fit(pd.DataFrame(rows))
    assert best.share(_questions((100, 1, 2), (100, 2, 1))).tolist() == [1.0, 0.0]
    shuffled = MeasuredBest.fit(pd.DataFrame([rows[i] for i in (4, 2, 0, 3, 1)]))
    assert shuffled.share(_questions((100, 1, 2), (100, 2, 1))).tolist() == [1.0, 0.0]
    assert shuffled.share(pd.DataFrame([_row(150, 2, 1, np.nan, workload="fft")]))[0] == 0.5
