"""A user's program's memory need above its measured sizes, grown as its measured peak grew
(:mod:`hpcds1mpi.decide.memory_growth`), or held, and said which (s46 tester J7)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from hpcds1mpi.decide.memory_growth import MEMORY_GROWTH, grown_need_mb, memory_growth_note
from hpcds1mpi.surrogates.neighbour_bounds import NeighbourRuntimes

#: memp's measured peaks per rank, MiB (s46 tester J7): size^2 over the ranks.
PEAKS = {1: {8000: 504.8, 12000: 1084.2, 16000: 1939.6},
         2: {8000: 261.6, 12000: 549.8, 16000: 994.0}}


def _measured(peaks=PEAKS, partition="debug") -> NeighbourRuntimes:
    rows = [dict(workload="memp", partition=partition, size=size, nodes=1, ranks_per_node=rpn,
                 threads=1, device="cpu", precision="fp64", status="ok",
                 runtime_s=size / 1e4, energy_j=size / 1e3, peak_rss_mb=peak)
            for rpn, by_size in peaks.items() for size, peak in by_size.items()]
    return NeighbourRuntimes.fit(pd.DataFrame(rows))


def _cols(rpn=(1, 2, 4), held=None, partition="debug") -> dict:
    n = len(rpn)
    return {"nodes": np.ones(n, dtype=np.int64), "ranks_per_node": np.array(rpn),
            "threads": np.ones(n, dtype=np.int64),
            "device": np.array(["cpu"] * n, dtype=object),
            "precision": np.array(["fp64"] * n, dtype=object),
            "partition": np.array([partition] * n, dtype=object),
            "peak_rss_mb": np.full(n, 1000.0) if held is None else np.asarray(held, float)}


def test_above_the_sizes_each_layouts_need_grows_as_its_peak_grew():
    """s46 tester J7: memp at 20000 (1.25x its largest size) was asked --mem=2973M from a need
    held at 16000's 1944.8 MiB, and used 3050 MiB; its peak per rank grows as size^2."""
    cols = _cols()
    need = grown_need_mb(cols, _measured(), "memp", 20000, None, (8000, 16000))
    two = math.log(994.0 / 549.8) / math.log(16000 / 12000)  # 2.06, the steepest
    one = math.log(1939.6 / 1084.2) / math.log(16000 / 12000)  # 2.02
    assert two > one and cols[MEMORY_GROWTH].tolist() == pytest.approx([two] * 3)
    assert need[1] == pytest.approx(994.0 * 1.25 ** two)
    assert 2 * need[1] > 3050  # per node: above what the job used
    assert need[0] == pytest.approx(1939.6 * 1.25 ** two)
    # 4 ranks never ran: the held need grown along the steepest measured slope
    assert need[2] == pytest.approx(1000.0 * 1.25 ** two)


@pytest.mark.parametrize("size", [8000, 12000, 16000, 4000])
def test_inside_and_below_the_sizes_nothing_changes(size):
    cols = _cols()
    assert grown_need_mb(cols, _measured(), "memp", size, None, (8000, 16000)) is None
    assert MEMORY_GROWTH not in cols


def test_a_layout_measured_at_one_size_grows_along_its_partitions_steepest_slope():
    peaks = {1: PEAKS[1], 2: {16000: 994.0}}
    cols = _cols((1, 2))
    need = grown_need_mb(cols, _measured(peaks), "memp", 32000, None, (8000, 16000))
    one = math.log(1939.6 / 1084.2) / math.log(16000 / 12000)
    assert cols[MEMORY_GROWTH].tolist() == pytest.approx([one, one])
    assert need[1] == pytest.approx(994.0 * 2 ** one)


def test_too_few_sizes_hold_the_need_and_the_note_says_so():
    peaks = {1: {16000: 1939.6}, 2: {16000: 994.0}}
    cols = _cols((1, 2))
    need = grown_need_mb(cols, _measured(peaks), "memp", 20000, None, (16000, 16000))
    assert np.isnan(need).all() and np.isnan(cols[MEMORY_GROWTH]).all()
    row = {MEMORY_GROWTH: cols[MEMORY_GROWTH][1]}
    note = memory_growth_note(20000, (16000, 16000), row)
    assert "is held at the largest measured run's peak" in note and "extrapolated" not in note
    grown = memory_growth_note(20000, (8000, 16000), {MEMORY_GROWTH: 2.0577})
    assert grown.startswith("memory need at size 20000 is extrapolated from runs at sizes "
                            "8000–16000 along its peak's measured growth with size (as "
                            "size^2.06 per rank")


def test_hardware_never_measured_grows_the_held_need_from_the_largest_size():
    cols = _cols((2,), held=[900.0], partition="other")
    need = grown_need_mb(cols, _measured(), "memp", 32000, {"other": None}, (8000, 16000))
    slopes = [math.log(PEAKS[r][16000] / PEAKS[r][12000]) / math.log(16000 / 12000)
              for r in (1, 2)]
    assert need[0] == pytest.approx(900.0 * 2 ** max(slopes))


class _FlatBeyond:
    """A FakeBundle whose peak memory is held at its largest size beyond it, as the trees'."""

    def __new__(cls):
        from tests.fake_bundle import WIDE_SIZES, FakeBundle

        bundle = FakeBundle(workloads=("myapp",), sizes=WIDE_SIZES)
        predict = bundle.predict

        def flat(df):
            out = predict(df)
            edge = df.assign(size=np.minimum(df["size"].to_numpy(), max(WIDE_SIZES)))
            out["peak_rss_mb"] = bundle._need_mb(edge)
            return out

        bundle.predict = flat
        return bundle


def test_recommend_asks_a_programs_grown_need_above_its_sizes_and_says_so():
    """Through recommend: the pick's need at 2x the largest size is its peak grown (the
    analytic program's need grows nearly as size^2), not the largest size's, and the note
    says along what."""
    from hpcds1mpi.decide.recommend import recommend
    from tests.fake_bundle import fake_places

    bundle = _FlatBeyond()
    at_edge = recommend(bundle, "myapp", 16384, fake_places("cpu"))
    beyond = recommend(bundle, "myapp", 32768, fake_places("cpu"))
    edge_pick = at_edge.picked.choice.scores.row(at_edge.picked.choice.index)
    pick = beyond.picked.choice.scores.row(beyond.picked.choice.index)
    per_rank = bundle._need_mb(pd.DataFrame([{**pick, "size": 32768}]))[0]
    assert pick["mem_need_mb"] >= 0.9 * per_rank * pick["ranks_per_node"]
    assert pick["mem_need_mb"] > 3 * edge_pick["mem_need_mb"] / edge_pick["ranks_per_node"] \
        * pick["ranks_per_node"]
    assert any("along its peak's measured growth with size" in n for n in beyond.notes)
