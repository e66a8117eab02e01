"""A run the sweep's own --timeout cut short ran longer than the limit: a lower bound on its
runtime, not a failure (:mod:`hpcds1mpi.decide.timed_out`; s40 tester B12: a sweep with
--timeout 2 had 1 rank time out at 16000 and both layouts at 32000, and size 24000, which
2 ranks run in 2.3-2.7 s, was refused as "predicted to fail" without the word timeout)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from hpcds1mpi.decide import recommend as rec_mod
from hpcds1mpi.decide import system1 as s1
from hpcds1mpi.decide.energy_floor import FLOOR_WATTS
from hpcds1mpi.decide.recommendation import format_table, to_dict
from hpcds1mpi.decide.scaling_floor import scaling_note
from hpcds1mpi.decide.timed_out import raise_to_timeouts
from tests.fake_bundle import FakeBundle, fake_partitions, fake_places, isolate_user_files

CPU = fake_partitions()["cpu"]
ONE_NODE = s1.Constraints(max_nodes=1, devices=["cpu"], precisions=["fp64"], threads=[1],
                          max_ranks_per_node=2)
#: The columns :mod:`~hpcds1mpi.decide.timed_out` adds.
TIMED_OUT_AFTER, TIMED_OUT_SIZES = "timed_out_after_s", "timed_out_sizes"
#: The tester's sweep: {ranks per node: {size: status}}; runtime ~ size^2 / ranks.
RUNS = {1: {2000: "ok", 4000: "ok", 8000: "ok", 16000: "timeout", 32000: "timeout"},
        2: {2000: "ok", 4000: "ok", 8000: "ok", 16000: "ok", 32000: "timeout"}}
KILLED = "no exit within the 2 s timeout; killed"


@pytest.fixture(autouse=True)
def isolated_cache(tmp_path, monkeypatch):
    isolate_user_files(monkeypatch, tmp_path)


def _runtime(size, ranks):
    return 4.5e-9 * np.asarray(size, dtype=float) ** 2 / np.asarray(ranks, dtype=float)


class Grow(FakeBundle):
    """The sweep's runs as training rows; the model, as a runtime model trained on ok runs
    only does, knows nothing of the timeouts and its classifier reads them as failures."""

    def __init__(self, runs=RUNS, error=KILLED):
        super().__init__(workloads=("grow",), sizes=(2000, 32000))
        self.runs, self.error = runs, error

    def training_frame(self) -> pd.DataFrame:
        return pd.DataFrame([dict(workload="grow", size=s, nodes=1, ranks_per_node=r, threads=1,
                                  device="cpu", precision="fp64", partition="cpu",
                                  cores_per_node=16, memory_gb=64.0, gpus_per_node=0, status=st,
                                  runtime_s=2.05 if st == "timeout" else float(_runtime(s, r)),
                                  error=self.error if st == "timeout" else "",
                                  energy_j=1.0, peak_rss_mb=40.0)
                             for r, sizes in self.runs.items() for s, st in sizes.items()])

    def predict(self, df: pd.DataFrame) -> pd.DataFrame:
        out = super().predict(df)
        runtime = _runtime(df["size"], df["ranks_per_node"]) * 0.8  # trained below the truth
        out["runtime_s"], out["runtime_lo"], out["runtime_hi"] = runtime, runtime * 0.7, \
            runtime * 1.3
        big = df["size"].to_numpy(float) > 12000
        out["fail_prob"] = np.where(big, 0.6, 0.01)
        out["fail_prob_max"] = np.where(big, 0.7, 0.02)
        out["peak_rss_mb"] = 40.0
        return out


def _row(scores, rpn: int) -> int:
    return int(np.flatnonzero(scores.cols["ranks_per_node"] == rpn)[0])


def test_a_size_between_ok_runs_and_timeouts_is_not_predicted_to_fail():
    scores = s1.score(Grow(), "grow", 24000, [CPU], ONE_NODE)
    assert scores.cols["feasible"].all(), scores.cols["reason"]
    assert (scores.cols["fail_prob_max"] == 0).all()  # no run failed: the runs say, not 0.7
    rec = rec_mod.recommend(Grow(), "grow", 24000, fake_places("cpu"), constraints=ONE_NODE)
    assert rec.picked is not None and rec.picked.choice.pick["ranks_per_node"] == 2
    assert "predicted to fail" not in format_table(rec)


def test_a_timed_out_run_bounds_the_runtime_from_below_and_is_said_with_its_limit():
    scores = s1.score(Grow(), "grow", 24000, [CPU], ONE_NODE)
    one = _row(scores, 1)  # timed out at 16000 after 2 s: at 24000 it takes at least 2 s
    assert scores.cols[TIMED_OUT_AFTER][one] == 2.0
    assert scores.cols["runtime_lo"][one] >= 2.0 and scores.cols["runtime_s"][one] >= 2.0
    assert scores.cols[TIMED_OUT_SIZES][one] == \
        "2 s (the sweep's --timeout) at size 16000, 32000"
    two = _row(scores, 2)  # timed out only above the question: not bounded
    assert np.isnan(scores.cols[TIMED_OUT_AFTER][two])
    assert scores.cols["runtime_lo"][two] < 2.0
    # 1 rank the only layout at 16000, where it timed out: said, with the limit, no failure
    alone = s1.Constraints(max_nodes=1, devices=["cpu"], precisions=["fp64"], threads=[1],
                           max_ranks_per_node=1)
    choice = s1.choose(s1.score(Grow(), "grow", 16000, [CPU], alone))
    assert choice.pick["ranks_per_node"] == 1 and choice.pick["runtime_lo"] >= 2.0
    assert "1 node x 1 rank x 1 thread (cpu, fp64) timed out at 2 s (the sweep's --timeout) " \
        "at size 16000, 32000: it ran longer than that there, which is no failure; at size " \
        "16000 it is predicted at least the 2 s a run of it lasted there before the timeout" \
        in choice.neighbour_note
    assert choice.confidence <= s1.DOUBTED_CONFIDENCE
    # at 32000 every layout timed out: the pick says so in text and JSON
    rec = rec_mod.recommend(Grow(), "grow", 32000, fake_places("cpu"), constraints=ONE_NODE)
    assert rec.picked is not None and rec.picked.choice.pick["runtime_lo"] >= 2.0
    text = format_table(rec)
    assert "1 node x 2 ranks x 1 thread (cpu, fp64) timed out at 2 s (the sweep's --timeout) " \
        "at size 32000" in text
    assert "predicted to fail" not in text and "timed out at 2 s" in str(to_dict(rec))
    assert rec.verdict.verdict != "auto"


def test_a_deadline_below_the_timeout_leaves_out_the_layout_that_timed_out():
    tight = s1.Constraints(max_nodes=1, devices=["cpu"], precisions=["fp64"], threads=[1],
                           max_ranks_per_node=2, deadline_s=1.9)
    scores = s1.score(Grow(), "grow", 16000, [CPU], tight)
    assert scores.cols["reason"][_row(scores, 1)] == "deadline"


def test_an_ok_run_above_the_timed_out_size_lifts_the_bound_and_the_limit_falls_back():
    runs = {1: {2000: "ok", 8000: "timeout", 16000: "ok"}}
    scores = s1.score(Grow(runs, error="killed"), "grow", 20000, [CPU],
                      s1.Constraints(max_nodes=1, devices=["cpu"], precisions=["fp64"],
                                     threads=[1], max_ranks_per_node=1))
    assert np.isnan(scores.cols[TIMED_OUT_AFTER][0])  # it ran ok at 16000: no bound
    assert scores.cols[TIMED_OUT_SIZES][0] == "2.05 s (the sweep's --timeout) at size 8000"


def test_a_real_failure_beside_a_timeout_still_fails_and_both_are_said():
    runs = {1: {2000: "ok", 8000: "timeout", 16000: "crashed"}}
    rec = rec_mod.recommend(Grow(runs), "grow", 20000, fake_places("cpu"),
                            constraints=s1.Constraints(max_nodes=1, devices=["cpu"],
                                                       precisions=["fp64"], threads=[1],
                                                       max_ranks_per_node=1))
    assert rec.picked is None
    note = " ".join(rec.notes) + format_table(rec)
    assert "ran ok at one size (2000); failed at 16000; timed out at 2 s (the sweep's " \
        "--timeout) at size 8000" in note


@pytest.mark.parametrize("error, bound", [
    # a kernel configuration's limit covered set-up, warm-up and every repeat (s41 tester D16)
    ("no result within the 2 s timeout; the job was aborted and the sweep resumes after it",
     np.nan),
    ("no result within the 2 s timeout (set-up and warm-up covered, no measured repeat begun: "
     "no bound on one run); the job was aborted and the sweep resumes after it", np.nan),
    ("no result within the 2 s timeout (the measured repeat it cut short had run 0.25 s); the "
     "job was aborted and the sweep resumes after it", 0.25),
    (KILLED, 2.0),  # a program's --timeout is per launch: one run
])
def test_a_kernel_configurations_timeout_bounds_one_run_only_by_the_repeat_it_cut_short(
        error, bound):
    """s41 tester D16: a 1.5 s timeout over a warm-up and 10 repeats of 0.08 s bounded fp64 at
    160 at 1.5 s a run, and a never-measured precision was picked over it."""
    scores = s1.score(Grow(error=error), "grow", 24000, [CPU], ONE_NODE)
    one = _row(scores, 1)
    assert scores.cols[TIMED_OUT_SIZES][one] == \
        "2 s (the sweep's --timeout) at size 16000, 32000"  # the words keep the limit
    if np.isnan(bound):
        assert np.isnan(scores.cols[TIMED_OUT_AFTER][one])
        assert scores.cols["runtime_lo"][one] < 2.0
    else:
        assert scores.cols[TIMED_OUT_AFTER][one] == bound
        assert scores.cols["runtime_lo"][one] >= bound


def test_the_watchdog_says_what_of_one_run_its_timeout_cut_short():
    import time

    from hpcds1mpi.decide.timed_out import _CUT_SHORT
    from hpcds1mpi.measure.watchdog import covered

    assert "no bound on one run" in covered(None)
    said = covered(time.monotonic() - 0.5)
    assert 0.5 <= float(_CUT_SHORT.search(said).group(1)) < 5


def test_a_timed_out_layouts_upper_runtime_is_unknown_not_the_limit():
    """s41 tester D6: both layouts timed out at 800 (a 2-minute phase) with --timeout 3; the
    answer read "3 s (3 s–3 s)", a single run "2.94 s–3.06 s", met a 10 s deadline, and the
    script's 1 min limit killed the job."""
    from hpcds1mpi.decide.recommendation import emit_script
    from hpcds1mpi.errors import ConfigError

    scores = s1.score(Grow(), "grow", 32000, [CPU], ONE_NODE)  # both layouts timed out
    assert np.isinf(scores.cols["runtime_hi"]).all() and (scores.cols["runtime_lo"] >= 2.0).all()
    rec = rec_mod.recommend(Grow(), "grow", 32000, fake_places("cpu"), constraints=ONE_NODE)
    text = format_table(rec)
    assert "(2 s–?)" in text and "a single run" not in text
    assert to_dict(rec)["pick"]["runtime_hi"] is None  # JSON: unknown
    with pytest.raises(ConfigError) as err:
        emit_script(rec, "slurm", "./grow {size}")
    assert "no known upper end" in str(err.value) and "--time-limit" in str(err.value)
    assert "--time=01:00:00" in emit_script(rec, "slurm", "./grow {size}", time_limit_s=3600,
                                             time_limit_from="given")
    # a deadline far above the limit is not met by a run whose end is unknown
    ten = s1.Constraints(max_nodes=1, devices=["cpu"], precisions=["fp64"], threads=[1],
                         max_ranks_per_node=2, deadline_s=10.0)
    assert (s1.score(Grow(), "grow", 32000, [CPU], ten).cols["reason"] == "deadline").all()
    rec = rec_mod.recommend(Grow(), "grow", 32000, fake_places("cpu"), constraints=ten)
    assert rec.picked is None and "no known upper end" in format_table(rec)


def test_advise_keeps_the_scripts_limit_where_the_upper_runtime_is_unknown():
    from hpcds1mpi.decide.launch_time_limit import one_launch_limit

    assert one_launch_limit(float("inf"), kept_s=600) == (
        600, "kept from the script: the pick's runtime has no known upper end (it timed out in "
        "its sweep: it ran longer than the --timeout, for how long is not measured)")
    assert one_launch_limit(float("inf"), kept_s=None)[0] is None
    assert one_launch_limit(10.0, kept_s=600)[0] == 60  # known: sized from it as before


class OwnClock(Grow):
    """s44: the same sweep timed by the program's own clock (--time-regex), its launches
    0.8 s longer than that time (start-up, input); a timed-out run's 2.05 s is a launch's."""

    def __init__(self, outside=0.8, source="program's own time (--time-regex 'took ([0-9.]+)')",
                 **kw):
        super().__init__(**kw)
        self.outside, self.source = outside, source

    def training_data(self) -> pd.DataFrame:
        frame = self.training_frame()
        ok = frame["status"] == "ok"
        return frame.assign(kind="external", runtime_source=self.source,
                            elapsed_s=np.where(ok, frame["runtime_s"] + self.outside, 2.05))


def test_a_timeout_bounds_a_programs_own_time_by_the_limit_less_its_launches_time_outside():
    scores = s1.score(OwnClock(), "grow", 24000, [CPU], ONE_NODE)
    one = _row(scores, 1)  # the 2 s launch held at most 1.2 s of the program's own time
    assert scores.cols[TIMED_OUT_AFTER][one] == pytest.approx(1.2)
    assert scores.cols["runtime_lo"][one] >= 1.2
    alone = s1.Constraints(max_nodes=1, devices=["cpu"], precisions=["fp64"], threads=[1],
                           max_ranks_per_node=1)
    choice = s1.choose(s1.score(OwnClock(), "grow", 16000, [CPU], alone))
    assert "predicted at least the 1.2 s of the program's own time (--time-regex's clock): " \
        "its launch lasted 2 s there before the timeout, less the 0.8 s its ok launches of " \
        "this layout spent outside the program's timer" in choice.neighbour_note
    # timed by the launch's wall: one clock, the limit stands
    from hpcds1mpi.measure.readings import WALL

    walled = s1.score(OwnClock(outside=0.0, source=WALL), "grow", 24000, [CPU], ONE_NODE)
    assert walled.cols[TIMED_OUT_AFTER][_row(walled, 1)] == 2.0


def test_a_layout_that_never_ran_ok_is_bounded_by_the_workloads_other_launches_or_the_limit():
    """s44 review R4: a layout timed out at 2 s with no ok run of its own, under
    --time-regex, had no bound at all and was predicted 0.92 s at that very size."""
    alone = s1.Constraints(max_nodes=1, devices=["cpu"], precisions=["fp64"], threads=[1],
                           max_ranks_per_node=1)
    never = {1: {16000: "timeout"}, 2: RUNS[2]}  # layout 2's ok launches: 0.8 s outside
    for size in (16000, 24000):
        bare = s1.score(OwnClock(runs=never), "grow", size, [CPU], ONE_NODE)
        assert bare.cols[TIMED_OUT_AFTER][_row(bare, 1)] == pytest.approx(1.2)
        assert bare.cols["runtime_lo"][_row(bare, 1)] >= 1.2
        assert bare.cols[TIMED_OUT_SIZES][_row(bare, 1)].startswith("2 s (the sweep's --timeout)")
    note = s1.choose(s1.score(OwnClock(runs=never), "grow", 16000, [CPU], alone)).neighbour_note
    assert "least the 1.2 s of the program's own time (--time-regex's clock): its launch lasted " \
        "2 s there before the timeout, less the 0.8 s the most the workload's ok launches of " \
        "other layouts (none of this one ran ok) spent outside the program's timer" in note
    # no ok launch of the workload at all: the limit stands, said in the launch's clock
    lone = s1.score(OwnClock(runs={1: {16000: "timeout"}}), "grow", 16000, [CPU], alone)
    assert lone.cols[TIMED_OUT_AFTER][0] == 2.0 and lone.cols["runtime_lo"][0] >= 2.0
    note = s1.choose(lone).neighbour_note
    assert "least the 2 s a run of it lasted there before the timeout (its launch's clock: no " \
        "ok launch of the workload says how long" in note


def test_a_timed_out_layout_bounds_a_never_measured_one_after_its_bound():
    """s47 tester L1: 2 ranks ran past the limit, 1 rank was never run; perfect scaling was
    taken from the trees' 2-rank time before the bound (857 ms picked where 2 ranks ran past
    11 s), its note naming the bound (11 s) beside the old floor."""
    runs = {2: {2000: "ok", 4000: "ok", 8000: "timeout"}}
    scores = s1.score(Grow(runs), "grow", 8000, [CPU], ONE_NODE)
    cols, one, two = scores.cols, _row(scores, 1), _row(scores, 2)
    assert cols[s1.UNMEASURED][one] and cols[TIMED_OUT_AFTER][two] == 2.0
    # 1 rank: at least 2 ranks x 2 s, its upper end as unknown as its reference's
    assert cols["runtime_s"][one] >= 4.0 and cols["runtime_lo"][one] >= 4.0
    assert np.isinf(cols["runtime_hi"][one]) and np.isfinite(cols["energy_hi"][one])
    assert scaling_note(cols, one).endswith("from the measured 1 node x 2 ranks x 1 thread "
                                            "(2 s): at least 4 s")
    rec = rec_mod.recommend(Grow(runs), "grow", 8000, fake_places("cpu"), constraints=ONE_NODE)
    assert rec.picked.choice.pick["ranks_per_node"] == 2


def test_a_timed_out_layouts_energy_rises_with_its_runtime():
    """s47 tester L6: the bound raised the runtime only, so the layout that timed out kept
    the trees' energy of a far shorter run and was picked as the least energy."""
    runs = {1: {2000: "ok", 4000: "ok", 8000: "ok"}, 2: {2000: "ok", 4000: "ok", 8000: "timeout"}}
    bundle = Grow(runs)
    scores = s1.score(bundle, "grow", 8000, [CPU], ONE_NODE)
    cols, two = scores.cols, _row(scores, 2)
    # never below its layout's draw over the bounded runtime, the upper end no lower
    for energy, runtime in (("energy_j", "runtime_s"), ("energy_lo", "runtime_lo")):
        assert cols[runtime][two] >= 2.0
        assert cols[energy][two] >= cols[FLOOR_WATTS][two] * cols[runtime][two] * (1 - 1e-12)
    assert np.isfinite(cols["energy_hi"][two]) and cols["energy_hi"][two] >= cols["energy_j"][two]
    assert s1.choose(scores, "energy").pick["ranks_per_node"] == 1


def test_the_bound_raises_energy_by_its_runtimes_factors():
    """The draw lasts as long as the run: each energy end by its runtime end's factor, the
    upper end (its runtime's unknown) by the median's."""
    cols = {"runtime_s": np.array([0.5, 1.0]), "runtime_lo": np.array([0.25, 0.8]),
            "runtime_hi": np.array([1.0, 1.2]), "energy_j": np.array([10.0, 10.0]),
            "energy_lo": np.array([4.0, 8.0]), "energy_hi": np.array([20.0, 12.0]),
            TIMED_OUT_AFTER: np.array([2.0, np.nan])}
    raise_to_timeouts(cols)
    assert cols["runtime_s"].tolist() == [2.0, 1.0] and cols["runtime_lo"].tolist() == [2.0, 0.8]
    assert cols["runtime_hi"][0] == np.inf and cols["runtime_hi"][1] == 1.2
    assert cols["energy_j"].tolist() == [40.0, 10.0] and cols["energy_lo"].tolist() == [32.0, 8.0]
    assert cols["energy_hi"].tolist() == [80.0, 12.0]


class Drawn(Grow):
    """:class:`Grow` whose model draws ``watts`` at each end of its runtime interval (None:
    the stand-in's own energy): at 10 W every end lies below the layout's 48 W floor."""

    def __init__(self, runs, watts):
        super().__init__(runs)
        self.watts = watts

    def predict(self, df: pd.DataFrame) -> pd.DataFrame:
        out = super().predict(df)
        if self.watts is not None:
            for energy, runtime in (("energy_j", "runtime_s"), ("energy_lo", "runtime_lo"),
                                    ("energy_hi", "runtime_hi")):
                out[energy] = out[runtime] * self.watts
        return out


@pytest.mark.parametrize("watts", [None, 10.0])
def test_a_never_measured_layout_raised_from_a_timed_out_one_keeps_an_energy_interval(watts):
    """s47 review RX3: 1 rank, never run, raised to at least 4 s from 2 ranks that ran past
    2 s, read energy 192 J (192 J-192 J): its upper end was the model's for a 0.23 s run,
    floored to the median, and its lower end, raised by its runtime's larger factor, could
    pass the median (124 kJ over 96.7 kJ)."""
    runs = {2: {2000: "ok", 4000: "ok", 8000: "timeout"}}
    bundle = Drawn(runs, watts)
    scores = s1.score(bundle, "grow", 8000, [CPU], ONE_NODE)
    cols, one = scores.cols, _row(scores, 1)
    assert cols[s1.UNMEASURED][one] and cols["runtime_s"][one] >= 4.0
    assert np.isinf(cols["runtime_hi"][one])
    lo, point, hi = (float(cols[c][one]) for c in ("energy_lo", "energy_j", "energy_hi"))
    # at least as wide, relatively, as its runtime at the lower end (energy = power x time)
    assert lo <= point * cols["runtime_lo"][one] / cols["runtime_s"][one] * (1 + 1e-12)
    # its upper runtime unknown: as far above its median as the model put it, not at it
    model = bundle.predict(pd.DataFrame([dict(workload="grow", size=8000, nodes=1,
                                              ranks_per_node=1, threads=1, device="cpu",
                                              precision="fp64", partition="cpu")]))
    assert hi / point == pytest.approx(float(model["energy_hi"][0] / model["energy_j"][0]))
    assert np.isfinite(hi) and hi > point
