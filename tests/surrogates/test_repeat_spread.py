"""The training runs' fastest and slowest repeats, as System 1's candidates get them."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from hpcds1mpi.surrogates.repeat_spread import (FAST_RATIO, FASTEST, SLOW_RATIO, SLOWEST,
                                                RepeatSpread, add_repeat_columns, cover_repeats,
                                                median_interval)

_LAYOUT = dict(ranks_per_node=1, threads=1, device="cpu", precision="fp64", partition="p")


def _runs():
    rows = [dict(workload="w", size=10, nodes=1, status="ok", runtime_s=1.0,
                 runtime_min_s=1.0, runtime_max_s=4.0),
            dict(workload="w", size=10, nodes=1, status="ok", runtime_s=1.1,  # measured again
                 runtime_min_s=0.9, runtime_max_s=2.0),
            dict(workload="w", size=20, nodes=2, status="ok", runtime_s=2.0,
                 runtime_min_s=2.0, runtime_max_s=8.0),
            dict(workload="w", size=20, nodes=1, status="failed", runtime_s=np.nan,
                 runtime_min_s=np.nan, runtime_max_s=np.nan)]
    return pd.DataFrame([{**_LAYOUT, **r} for r in rows])


def _candidates(nodes):
    return {"partition": np.array(["p"] * len(nodes)), "nodes": np.array(nodes),
            **{k: np.array([v] * len(nodes)) for k, v in _LAYOUT.items() if k != "partition"}}


def test_a_measured_configuration_gets_its_runs_extremes_and_every_one_the_ratios():
    spread = RepeatSpread.fit(_runs())
    fast, slow = spread.ratios[("w", "p")]
    assert fast == pytest.approx(np.median([1.0, 0.9 / 1.1, 1.0]))
    assert slow == pytest.approx(np.median([4.0, 2.0 / 1.1, 4.0]))
    cols = _candidates([1, 2, 4])
    add_repeat_columns(cols, spread, "w", 10)
    assert cols[FASTEST][0] == 0.9 and cols[SLOWEST][0] == 4.0  # both runs at 10
    assert np.isnan(cols[FASTEST][1:]).all()  # 2 nodes ran at 20 only, 4 never
    assert (cols[FAST_RATIO] == fast).all() and (cols[SLOW_RATIO] == slow).all()


def test_nothing_known_is_nan():
    cols = _candidates([1])
    add_repeat_columns(cols, RepeatSpread.fit(_runs().drop(columns=["runtime_min_s"])), "w", 10)
    assert all(np.isnan(cols[c]).all() for c in (FASTEST, SLOWEST, FAST_RATIO, SLOW_RATIO))
    cols = _candidates([1])
    add_repeat_columns(cols, RepeatSpread.fit(_runs()), "w", 10, trained={"p": None})
    assert np.isnan(cols[FAST_RATIO]).all()  # hardware no measured partition has
    add_repeat_columns(cols, RepeatSpread.fit(_runs()), "other", 10)
    assert np.isnan(cols[FASTEST]).all()


def test_a_measured_interval_holds_its_repeats_and_its_energy_follows():
    """At a measured size the interval was the runs' medians and at most +-50 %: repeats
    0.70-2.30 s around 1.45 s read 0.72-2.17 s (s40 tester C1)."""
    cols = {"runtime_s": np.array([1.446, 1.0, 1.0]), "runtime_lo": np.array([0.723, 0.5, 0.9]),
            "runtime_hi": np.array([2.169, 1.5, 1.1]), "energy_lo": np.array([10.0, 5.0, 9.0]),
            "energy_hi": np.array([30.0, 15.0, 11.0]),
            FASTEST: np.array([0.703, 0.8, np.nan]), SLOWEST: np.array([2.298, 1.2, np.nan])}
    cover_repeats(cols)
    assert list(cols["runtime_lo"]) == [0.703, 0.5, 0.9]  # only ever widened
    assert list(cols["runtime_hi"]) == [2.298, 1.5, 1.1]
    assert cols["energy_lo"][0] == pytest.approx(10.0 * 0.703 / 0.723)
    assert cols["energy_hi"][0] == pytest.approx(30.0 * 2.298 / 2.169)
    assert list(cols["energy_hi"][1:]) == [15.0, 11.0]


def test_the_median_interval_is_the_one_before_the_cover_unless_a_later_step_moved_it():
    """System 2 compares runs' medians and the edge carries its interval beyond the sizes:
    one run's repeats are not that interval's spread (the race's fft 32: 72/72 -> 71/72)."""
    cols = {"runtime_s": np.array([1.0, 1.0, 1.0]), "runtime_lo": np.array([0.8, 0.8, 0.8]),
            "runtime_hi": np.array([1.2, 1.2, 1.2]), "energy_lo": np.array([8.0, 8.0, 8.0]),
            "energy_hi": np.array([12.0, 12.0, 12.0]),
            FASTEST: np.array([0.5, 0.5, np.nan]), SLOWEST: np.array([2.0, 2.0, np.nan])}
    cover_repeats(cols)
    assert list(cols["runtime_lo"]) == [0.5, 0.5, 0.8] and list(cols["runtime_hi"]) == [2.0, 2.0, 1.2]
    cols["runtime_lo"] = np.array([0.5, 0.3, 0.8])  # a later step widened row 1 past the cover
    cols["runtime_hi"] = np.array([2.0, 2.5, 1.2])
    lo, hi = median_interval(cols, "runtime")
    assert list(lo) == [0.8, 0.3, 0.8] and list(hi) == [1.2, 2.5, 1.2]
    e_lo, e_hi = median_interval(cols, "energy")
    assert list(e_lo) == [8.0, 8.0, 8.0] and list(e_hi) == [12.0, 12.0, 12.0]
    assert cols["energy_lo"][0] == pytest.approx(5.0)  # the shown interval keeps the cover
    raised = dict(cols, runtime_lo=np.array([0.9, 0.9, 0.9]))  # a floor raised every low end
    assert list(median_interval(raised, "runtime")[0]) == [0.9, 0.9, 0.9]
    plain = {"runtime_lo": np.array([0.5]), "runtime_hi": np.array([2.0])}  # never covered
    assert [list(end) for end in median_interval(plain, "runtime")] == [[0.5], [2.0]]
