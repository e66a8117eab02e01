"""A program's failure prediction rests on its own runs (:mod:`hpcds1mpi.decide.own_failures`;
s39 tester B3, B7: one classifier over comm (sizes in KB), crashy and memhog (MB) made comm,
which never failed, "predicted to fail" everywhere past its sizes, and silently dropped a
memhog layout that never failed and was the fastest)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from hpcds1mpi.decide import recommend as rec_mod
from hpcds1mpi.decide import system1 as s1
from hpcds1mpi.decide.own_failures import failure_probability
from hpcds1mpi.decide.recommendation import format_table, to_dict
from tests.fake_bundle import FakeBundle, fake_partitions, fake_places, isolate_user_files

CPU = fake_partitions()["cpu"]
ONE_NODE = s1.Constraints(max_nodes=1, devices=["cpu"], precisions=["fp64"], threads=[1, 2],
                          max_ranks_per_node=2)
#: The tester's runs: {workload: {(ranks per node, threads): {size: status}}}. comm never
#: failed; crashy's 2 x 1 segfaults from 400 on, its 1 x 2 aborts at 800.
RUNS = {"comm": {(1, 1): {16: "ok", 64: "ok", 256: "ok"}, (1, 2): {16: "ok", 64: "ok", 256: "ok"},
                 (2, 1): {16: "ok", 64: "ok", 256: "ok"}},
        "crashy": {(1, 1): {200: "ok", 400: "ok", 800: "ok"},
                   (1, 2): {200: "ok", 400: "ok", 800: "failed"},
                   (2, 1): {200: "ok", 400: "failed", 800: "failed"}}}
#: Predicted runtime factor per layout: 2 x 1 the fastest, 1 x 1 the slowest.
SPEED = {(1, 1): 1.0, (1, 2): 0.7, (2, 1): 0.5, (2, 2): 0.6}


@pytest.fixture(autouse=True)
def isolated_cache(tmp_path, monkeypatch):
    isolate_user_files(monkeypatch, tmp_path)


class Pooled(FakeBundle):
    """Both programs in one bundle; its classifier, as the tester's did, compares raw sizes
    across them: any layout past 300 reads 0.55 (a member), whatever the program."""

    def __init__(self):
        super().__init__(workloads=("comm", "crashy"), sizes=(16, 800))
        self.size_range = {"comm": (16, 256), "crashy": (200, 800)}

    def training_frame(self) -> pd.DataFrame:
        return pd.DataFrame([dict(workload=w, size=s, nodes=1, ranks_per_node=r, threads=t,
                                  device="cpu", precision="fp64", partition="cpu",
                                  cores_per_node=16, memory_gb=64.0, gpus_per_node=0,
                                  status=st, runtime_s=1e-4 * s * SPEED[r, t],
                                  energy_j=8e-4 * s * SPEED[r, t],
                                  peak_rss_mb=40.0)
                             for w, layouts in RUNS.items() for (r, t), runs in layouts.items()
                             for s, st in runs.items()])

    def predict(self, df: pd.DataFrame) -> pd.DataFrame:
        out = super().predict(df)
        factor = np.array([SPEED.get((int(r), int(t)), 1.0) for r, t in
                           zip(df["ranks_per_node"], df["threads"])])
        runtime = 1e-4 * df["size"].to_numpy(float) * factor
        out["runtime_s"], out["runtime_lo"], out["runtime_hi"] = runtime, runtime * 0.9, runtime * 1.1
        out["energy_j"], out["energy_lo"], out["energy_hi"] = runtime * 8, runtime * 7, runtime * 9
        beyond = df["size"].to_numpy(float) > 300
        out["fail_prob"] = np.where(beyond, 0.3, 0.01)
        out["fail_prob_max"] = np.where(beyond, 0.55, 0.02)
        out["peak_rss_mb"] = 40.0
        return out


def _row(scores: s1.Scores, rpn: int, threads: int) -> int:
    c = scores.cols
    return int(np.flatnonzero((c["ranks_per_node"] == rpn) & (c["threads"] == threads))[0])


def test_a_program_that_never_failed_is_not_predicted_to_fail_by_another_programs_sizes():
    scores = s1.score(Pooled(), "comm", 512, [CPU], ONE_NODE)
    assert scores.cols["feasible"].all()  # 2 x 2 too: comm never failed at all
    assert (scores.cols["fail_prob"] == 0).all() and (scores.cols["fail_prob_max"] == 0).all()
    rec = rec_mod.recommend(Pooled(), "comm", 512, fake_places("cpu"), constraints=ONE_NODE)
    assert rec.picked is not None
    assert "predicted to fail" not in format_table(rec)


def test_a_layout_that_never_failed_is_kept_and_those_that_failed_are_dropped():
    scores = s1.score(Pooled(), "crashy", 1600, [CPU], ONE_NODE)
    assert scores.cols["feasible"][_row(scores, 1, 1)]  # ok at every size: not the 0.55
    for rpn, threads in ((2, 1), (1, 2)):  # failed at the nearest size below
        assert scores.cols["fail_prob_max"][_row(scores, rpn, threads)] == 1.0
    assert scores.cols["reason"][_row(scores, 2, 2)] == "fail"  # never ran: the classifier
    assert s1.choose(scores).pick["ranks_per_node"] == 1


def test_a_candidate_dropped_as_predicted_to_fail_is_named_with_why_in_text_and_json():
    rec = rec_mod.recommend(Pooled(), "crashy", 1600, fake_places("cpu"), constraints=ONE_NODE)
    note = next(n for n in rec.notes if n.startswith("left out as predicted to fail"))
    assert "1 node x 2 ranks x 1 thread (cpu, fp64), predicted " in note
    assert "s: ran ok at one size (200); failed at 400, 800 (failure probability 1.00 at size " \
        "1600)" in note
    assert "1 node x 1 rank x 2 threads (cpu, fp64), predicted " in note
    assert "s: ran ok at 2 sizes (200, 400); failed at 800 (failure probability 1.00" in note
    assert "1 node x 2 ranks x 2 threads (cpu, fp64), predicted " in note
    assert "s: the failure model, fitted on every program's runs in the bundle, gives up to " \
        "0.55 (no run of this configuration on this hardware)" in note
    assert note in format_table(rec) and note in to_dict(rec)["notes"]


def test_between_an_ok_run_and_a_failure_the_way_to_the_failure_in_log_size():
    sizes, failed = np.array([200.0, 400.0, 800.0]), np.array([False, True, True])
    assert failure_probability(sizes, failed, 300) == pytest.approx(np.log(1.5) / np.log(2))
    assert failure_probability(sizes, failed, 100) == 0.0  # below: its nearest run was ok
    assert failure_probability(sizes, failed, 1600) == 1.0
    assert failure_probability(sizes, failed, 400) == 1.0
    assert failure_probability(sizes[::-1][::-1], ~failed, 300) == \
        pytest.approx(1 - np.log(1.5) / np.log(2))  # failed below, ok above: mirrored
    scores = s1.score(Pooled(), "crashy", 300, [CPU], ONE_NODE)  # 0.0095 from the classifier
    assert scores.cols["reason"][_row(scores, 2, 1)] == "fail"
    assert scores.cols["fail_prob"][_row(scores, 1, 1)] == 0.0


def test_a_pick_between_its_ok_run_and_its_failures_says_both_and_is_not_the_safest():
    """s39 tester B2: at 250 (and 100) 2 x 1, ok at 200 and failed at 400 and 800, was said
    "measured at one size only" with the classifier's 0.0095, the safest of those offered."""
    for size in (250, 100):
        choice = s1.choose(s1.score(Pooled(), "crashy", size, [CPU], ONE_NODE))
        assert (choice.pick["ranks_per_node"], choice.pick["threads"]) == (2, 1)
        assert "1 node x 2 ranks x 1 thread (cpu, fp64) ran ok at one size only (200: " \
            in choice.neighbour_note
        assert "and failed at 400, 800; its prediction at size" in choice.neighbour_note
        assert choice.confidence <= s1.DOUBTED_CONFIDENCE
    scores = s1.score(Pooled(), "crashy", 250, [CPU], ONE_NODE)
    assert scores.cols["fail_prob"][_row(scores, 2, 1)] == pytest.approx(
        np.log(250 / 200) / np.log(2))  # the classifier's 0.01 had made it the safest
    assert scores.cols["fail_prob"][_row(scores, 1, 1)] == 0.0


def test_a_pick_that_ran_ok_at_several_sizes_and_failed_at_another_says_so():
    choice = s1.choose(s1.score(Pooled(), "crashy", 500, [CPU], ONE_NODE))
    assert (choice.pick["ranks_per_node"], choice.pick["threads"]) == (1, 2)
    assert "1 node x 1 rank x 2 threads (cpu, fp64) ran ok at 2 sizes (200, 400); failed at " \
        "800; at size 500 its failure probability from those runs is 0.32" \
        in choice.neighbour_note


def test_a_sizes_outcome_is_the_share_of_its_rounds_that_failed():
    """The review of s39: one failed round of five at 400 made a layout ok at 200, 400 and 800
    "predicted to fail" at 450 (0.83) and dropped it."""
    from hpcds1mpi.decide.own_failures import _per_configuration

    codes = np.array([7] * 7)
    sizes = np.array([200.0, 400, 400, 400, 400, 400, 800])
    bad = np.array([False, True, False, False, False, False, False])
    at, share = _per_configuration((codes, sizes, ~bad, bad))[7]
    assert at.tolist() == [200.0, 400.0, 800.0] and share.tolist() == [0.0, 0.2, 0.0]
    assert failure_probability(at, share, 450) == pytest.approx(0.2 * (1 - np.log(1.125) /
                                                                          np.log(2)))
    assert failure_probability(at, share, 400) == pytest.approx(0.2)


def test_the_candidates_configuration_codes_are_computed_once_per_question(monkeypatch):
    """own_failures and measured_at both match the candidates' configurations against the
    runs: System 1 computes their codes once for both (crashy at 400 needs both)."""
    from hpcds1mpi.surrogates import size_neighbours

    bundle = Pooled()
    s1.score(bundle, "crashy", 400, [CPU], ONE_NODE)  # the training rows' codes: cached
    made, real = [], size_neighbours.config_codes
    monkeypatch.setattr(size_neighbours, "config_codes",
                        lambda cols: made.append(1) or real(cols))
    scores = s1.score(bundle, "crashy", 400, [CPU], ONE_NODE)
    assert scores.cols["measured_failed"][_row(scores, 2, 1)]  # measured_at matched codes
    assert scores.cols["fail_from_runs"][_row(scores, 2, 1)]  # and so did own_failures
    assert len(made) == 1


class Brittle(Pooled):
    """A program each of whose measured layouts failed at the largest size it ran, some after
    running ok at smaller ones; its 2 x 2 never ran (the classifier's 0.55 past 300)."""

    RUNS = {(1, 1): {200: "ok", 400: "ok", 800: "failed"},
            (1, 2): {200: "ok", 800: "crashed"},
            (2, 1): {200: "failed", 400: "failed", 800: "failed"}}

    def __init__(self):
        super().__init__()
        self.workloads = ("brittle",)
        self.size_range = {"brittle": (200, 800)}

    def training_frame(self) -> pd.DataFrame:
        frame = super().training_frame()
        frame = frame[frame["workload"] == "crashy"].copy()
        frame["workload"] = "brittle"
        frame["status"] = [self.RUNS[r, t].get(s) for r, t, s in
                           zip(frame["ranks_per_node"], frame["threads"], frame["size"])]
        return frame[frame["status"].notna()]


def test_a_job_every_layout_is_predicted_to_fail_at_from_runs_on_both_sides_gets_a_calibration():
    """s40 tester B6, B12: every layout predicted to fail, some only between a size they ran
    ok at and one they failed at, escalated with "no allowed partition can run
    this job" and no calibration, and --emit told the user to "relax the constraints" none had
    given. Where the runs leave it open, the job escalates with a calibration of those layouts
    at this size; a layout that never ran ok is not a step."""
    from hpcds1mpi.decide.own_failures import undecided

    scores = s1.score(Brittle(), "brittle", 600, [CPU], ONE_NODE)
    assert (scores.cols["reason"] == "fail").all()
    open_ = undecided(scores.cols)
    assert open_[_row(scores, 1, 1)] and open_[_row(scores, 1, 2)]
    assert not open_[_row(scores, 2, 1)] and not open_[_row(scores, 2, 2)]
    rec = rec_mod.recommend(Brittle(), "brittle", 600, fake_places("cpu"), constraints=ONE_NODE)
    assert rec.picked is None and rec.verdict.verdict == "escalate"
    # 2 ranks only ever failed: since s45 tester B4 no measured level, so not offered; the
    # two layouts left are both predicted to fail only from their runs on either side
    assert any("every layout is predicted to fail at size 600, all of them only from their "
               "runs at other sizes" in r for r in rec.verdict.reasons), rec.verdict.reasons
    steps = {(s.config.ranks_per_node, s.config.threads) for s in rec.calibration_steps}
    assert steps and steps <= {(1, 1), (1, 2)}, steps
    # beyond every run, each layout's nearest run failed: nothing to calibrate, as before
    rec = rec_mod.recommend(Brittle(), "brittle", 1600, fake_places("cpu"), constraints=ONE_NODE)
    assert rec.picked is None and not rec.calibration_steps


class MissingInput(Brittle):
    """Every layout ran ok at 200 and 800 and failed at 400 only (its input missing there)."""

    RUNS = {(1, 1): {200: "ok", 400: "failed", 800: "ok"},
            (1, 2): {200: "ok", 400: "failed", 800: "ok"},
            (2, 1): {200: "ok", 400: "failed", 800: "ok"}}


def test_the_escalation_says_how_the_runs_lie_not_a_fixed_ok_below_failed_above():
    """s43 tester I3: Rheolef failed at 150 (its input missing), ok at 100 and 200 in every
    layout; recommend at 160 said "(ok at a smaller one, failed at a larger)"."""
    from hpcds1mpi.decide.own_failures import sides_said

    cols = {"ok_sizes": ["100, 200", "100"], "failed_sizes": ["150", "150"]}
    assert sides_said(cols, np.array([0]), 160).startswith("a failure at a size between sizes "
                                                           "it ran ok at")
    assert sides_said(cols, np.array([1]), 120) == "ok at a smaller one, failed at a larger"
    assert sides_said(cols, np.array([1]), 160) == "ok at some sizes, failed at others"
    rec = rec_mod.recommend(MissingInput(), "brittle", 500, fake_places("cpu"),
                            constraints=ONE_NODE)
    said = " ".join(rec.verdict.reasons)
    assert "every layout is predicted to fail at size 500" in said, said
    assert "a failure at a size between sizes it ran ok at" in said, said
    assert "ok at a smaller one, failed at a larger" not in said, said
    rec = rec_mod.recommend(Brittle(), "brittle", 600, fake_places("cpu"), constraints=ONE_NODE)
    assert any("(ok at a smaller one, failed at a larger)" in r for r in rec.verdict.reasons)
