"""The single-run band (``decide/run_scatter.py``) is what was measured: never below 0 nor
below the fastest repeat, its top holding the slow repeats (s38 tester B3)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from hpcds1mpi.decide.recommend import recommend
from hpcds1mpi.decide.recommendation import format_table, to_dict
from tests.fake_bundle import FakeBundle, fake_places


class SlowEveryThird(FakeBundle):
    """Each run's fastest repeat is its median and its slowest 4x it (one launch in three 4x
    slower, as on a loaded node): noise 3.0, every interval +-1 %."""

    spread = 0.01

    def predict(self, df):
        out = super().predict(df)
        out["runtime_noise"] = 3.0
        return out

    def training_frame(self):
        if self._frame is None:
            frame = super().training_frame()
            frame["runtime_min_s"] = frame["runtime_s"]
            frame["runtime_max_s"] = frame["runtime_s"] * 4.0
        return self._frame


class NoiseOnly(SlowEveryThird):
    """The same noise from a bundle trained before its frame kept the fastest and slowest
    repeat."""

    def training_frame(self):
        frame = FakeBundle.training_frame(self)
        return frame.drop(columns=["runtime_min_s", "runtime_max_s"], errors="ignore")


def _band(bundle, size):
    rec = recommend(bundle, "gemm", size, fake_places("cpu"), objective="time")
    pick = to_dict(rec)["pick"]
    lines = [x for x in format_table(rec).splitlines() if x.startswith("  a single run:")]
    assert lines == [f"  {pick['single_run']['line']}"]  # the table says what the JSON says
    return pick, pick["single_run"]


def test_a_modelled_pick_gets_its_workloads_measured_repeat_ratios():
    pick, band = _band(SlowEveryThird(), 300)  # between the measured 256 and 512
    assert pick["measured_runs"] == 0
    assert band["source"] == "repeats"
    # The old band was the median +- 150 %: 0 s to 2.5x the median, below the 4x launches.
    assert band["runtime_lo"] == pytest.approx(pick["runtime_s"])
    assert band["runtime_hi"] == pytest.approx(pick["runtime_s"] * 4.0)
    assert "fastest repeat at 1.00x and their slowest at 4.00x their median" in band["line"]


class MeasuredPick(SlowEveryThird):
    """The modelled pick at 256 (2 nodes x 8 ranks x 2 threads, fp32) run there too, its
    repeats 0.9x to 3x its median: other ratios than its workload's."""

    def training_frame(self):
        if self._frame is None:
            frame = super().training_frame()
            run = frame.iloc[[0]].copy()
            for col, value in dict(workload="gemm", size=256, nodes=2, ranks_per_node=8,
                                   threads=2, device="cpu", precision="fp32",
                                   partition="cpu").items():
                run[col] = value
            run["runtime_s"] = float(self.predict(run)["runtime_s"].iloc[0])
            run["runtime_min_s"], run["runtime_max_s"] = (run["runtime_s"] * 0.9,
                                                          run["runtime_s"] * 3.0)
            self._frame = pd.concat([frame, run], ignore_index=True)
        return self._frame


def test_a_measured_pick_s_interval_holds_its_own_runs_fastest_and_slowest_repeat():
    """Since s40 (tester C1) the interval of a pick measured at the size holds its repeats
    itself, so no separate single-run band is needed (before: a band beside an interval of the
    runs' medians, at most +-50 %)."""
    bundle = MeasuredPick()
    rec = recommend(bundle, "gemm", 256, fake_places("cpu"), objective="time")
    pick = to_dict(rec)["pick"]
    assert pick["measured_runs"] > 0 and "single_run" not in pick
    assert "a single run:" not in format_table(rec)
    frame = bundle.training_frame()
    runs = frame[(frame["workload"] == "gemm") & (frame["size"] == 256)
                 & (frame["partition"] == "cpu") & (frame["status"] == "ok")]
    for col in ("nodes", "ranks_per_node", "threads", "device", "precision"):
        runs = runs[runs[col] == pick[col]]
    # Its noise (3.0, read at most +-50 %) already takes the lower end below the 0.9x repeat;
    # the 3x repeat was above that +-50 % and is now the upper end.
    assert pick["runtime_lo"] <= runs["runtime_min_s"].min()
    assert pick["runtime_hi"] == pytest.approx(runs["runtime_max_s"].max())
    assert pick["runtime_hi"] == pytest.approx(pick["runtime_s"] * 3.0)


def test_only_the_noise_known_gives_a_sound_band_with_no_made_up_lower_end():
    pick, band = _band(NoiseOnly(), 300)
    assert band["source"] == "noise" and band["noise"] == 3.0
    assert band["runtime_lo"] is None  # 300 % apart: how much faster a repeat was is unknown
    assert band["runtime_hi"] == pytest.approx(pick["runtime_s"] * 4.0)
    assert band["line"].startswith("a single run: up to about ")
    assert "0 ms" not in band["line"] and "did not record" in band["line"]


def test_no_band_where_nothing_measured_says_or_the_models_interval_holds_it():
    quiet = to_dict(recommend(FakeBundle(), "gemm", 300, fake_places("cpu"), objective="time"))
    assert "single_run" not in quiet["pick"]

    class Steady(SlowEveryThird):
        def training_frame(self):
            frame = super().training_frame()
            frame["runtime_max_s"] = frame["runtime_s"] * 1.05
            return frame

    held = to_dict(recommend(Steady(), "gemm", 300, fake_places("cpu"), objective="time"))
    assert "single_run" not in held["pick"]  # 1.0x-1.05x lies inside its +-10 %
    assert np.isfinite(held["pick"]["runtime_s"])


def test_an_unknown_noise_is_none_alike_in_the_band_and_the_json():
    """The API's band is ``run_scatter``'s own: a NaN noise there had differed from the JSON's
    None."""
    from hpcds1mpi.decide.recommendation import format_time
    from hpcds1mpi.decide.run_scatter import run_scatter

    class NoNoise(SlowEveryThird):
        def predict(self, df):
            return FakeBundle.predict(self, df)

    rec = recommend(NoNoise(), "gemm", 300, fake_places("cpu"), objective="time")
    band = run_scatter(rec.picked.choice, format_time)
    assert band["source"] == "repeats" and band["noise"] is None
    assert to_dict(rec)["pick"]["single_run"] == band
