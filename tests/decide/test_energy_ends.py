"""A candidate's energy ends follow its runtime ends when System 1 raises them
(:mod:`hpcds1mpi.decide.energy_ends`, s47 review RX3)."""

from __future__ import annotations

import numpy as np
import pytest

from hpcds1mpi.decide.energy_ends import follow_runtime


def _cols(**runtimes):
    """Three candidates, 10 W at each end of a 1 s (0.8 s-1.5 s) run; ``runtimes`` moved."""
    cols = {"runtime_s": np.ones(3), "runtime_lo": np.full(3, 0.8), "runtime_hi": np.full(3, 1.5),
            "energy_j": np.full(3, 10.0), "energy_lo": np.full(3, 8.0),
            "energy_hi": np.full(3, 15.0)}
    before = {c: cols[c][[0, 1]].copy() for c in ("runtime_s", "runtime_lo", "runtime_hi")}
    for column, values in runtimes.items():
        cols[column] = np.array([*values, cols[column][2]], dtype=float)
    return cols, before


def test_each_energy_end_follows_its_runtime_end():
    cols, before = _cols(runtime_s=(2.0, 1.0), runtime_lo=(1.6, 0.8), runtime_hi=(3.0, 3.0))
    kept = {c: cols[c] for c in ("energy_j", "energy_lo", "energy_hi")}
    follow_runtime(cols, np.array([0, 1]), before)
    assert cols["energy_j"].tolist() == [20.0, 10.0, 10.0]
    assert cols["energy_lo"].tolist() == [16.0, 8.0, 8.0]
    assert cols["energy_hi"].tolist() == [30.0, 30.0, 15.0]  # the third row not moved
    assert kept["energy_j"].tolist() == [10.0, 10.0, 10.0]  # copies: a kept table is shared


def test_an_upper_end_now_unknown_moves_with_the_median():
    """The timeout bound's rule (s47 tester L6), the perfect-scaling floor's too (RX3: a
    never-measured layout raised from a timed-out one kept the model's upper end)."""
    cols, before = _cols(runtime_s=(4.0, 1.0), runtime_lo=(4.0, 0.8),
                         runtime_hi=(np.inf, np.inf))
    follow_runtime(cols, np.array([0, 1]), before)
    assert cols["energy_j"][:2].tolist() == [40.0, 10.0]
    assert cols["energy_hi"][:2].tolist() == [60.0, 15.0]  # 1.5 x the median, as the model's


def test_the_energy_interval_is_no_narrower_than_the_runtimes():
    """A lower end raised by a larger factor than the median had passed it (124 kJ over
    96.7 kJ); energy is power x time: at the same time, no more energy."""
    cols, before = _cols(runtime_s=(4.0, 1.0), runtime_lo=(4.0, 0.8), runtime_hi=(6.0, 4.0))
    cols["energy_lo"] = np.array([9.5, 8.0, 8.0])  # the model's lower power above its median's
    follow_runtime(cols, np.array([0, 1]), before)
    lo, point, hi = cols["energy_lo"], cols["energy_j"], cols["energy_hi"]
    assert lo[0] == point[0] == 40.0  # 9.5 x 4 / 0.8 = 47.5 had been above it
    assert hi[1] == pytest.approx(40.0)  # 15 x 4 / 1.5: as far above as the runtime's end
    assert lo[1] == 8.0 and hi[0] == pytest.approx(60.0)


def test_an_unknown_energy_stays_unknown():
    cols, before = _cols(runtime_s=(2.0, 2.0), runtime_lo=(1.6, 1.6), runtime_hi=(np.inf, 3.0))
    cols["energy_lo"] = np.array([np.nan, 8.0, 8.0])
    cols["energy_j"] = np.array([np.nan, np.nan, 10.0])
    follow_runtime(cols, np.array([0, 1]), before)
    assert np.isnan(cols["energy_lo"][0]) and np.isnan(cols["energy_j"][:2]).all()
    assert cols["energy_lo"][1] == 16.0 and cols["energy_hi"][1] == 30.0


def test_an_end_on_its_side_of_the_median_keeps_its_value():
    """s48 review RX1: a timeout-bounded row whose runtime ends were not raised (only its
    upper end made unknown) had its energy's lower end pulled to its runtime's relative width
    (95 J -> 50 J), and a floor raising only a runtime's lower end lowered the energy's."""
    cols = {"runtime_s": np.array([10.0]), "runtime_lo": np.array([5.0]),
            "runtime_hi": np.array([np.inf]), "energy_j": np.array([100.0]),
            "energy_lo": np.array([95.0]), "energy_hi": np.array([105.0])}
    before = {"runtime_s": np.array([10.0]), "runtime_lo": np.array([5.0]),
              "runtime_hi": np.array([12.0])}
    follow_runtime(cols, np.array([0]), before)
    assert (cols["energy_lo"][0], cols["energy_j"][0], cols["energy_hi"][0]) == (95.0, 100.0, 105.0)
    cols = {"runtime_s": np.array([2.1]), "runtime_lo": np.array([2.05]),
            "runtime_hi": np.array([2.2]), "energy_j": np.array([50.0]),
            "energy_lo": np.array([49.0]), "energy_hi": np.array([51.0])}
    before = {"runtime_s": np.array([2.1]), "runtime_lo": np.array([2.05]),
              "runtime_hi": np.array([2.15])}
    follow_runtime(cols, np.array([0]), before)
    assert cols["energy_lo"][0] == 49.0 and cols["energy_hi"][0] == pytest.approx(51.0 * 2.2 / 2.15)
