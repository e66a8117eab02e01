"""System 1 beyond the largest measured size: its pick is no surer than at that size (s28
tester T4: cp2k read confidence 0.81 at the measured 250 and 0.93 at the unmeasured 350)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from hpcds1mpi.decide import system1 as s1
from tests.fake_bundle import FakeBundle, fake_partitions, set_prediction

CPU = fake_partitions()["cpu"]
ONE_NODE = s1.Constraints(max_nodes=1, devices=["cpu"], precisions=["fp64"])
#: {(threads, size): seconds} of 1 node x 1 rank measured at sizes 24 and 40.
MEASURED = {(1, 24): 1.0, (1, 40): 2.0, (2, 24): 1.1, (2, 40): 2.2}
#: The model's answer {size: {threads: seconds}}: at 40 as measured; beyond, the 1-thread
#: prediction falls (raised to its 40's run) and the 2-thread one grows, a wider margin.
PREDICTED = {40: {1: 2.0, 2: 2.2}, 80: {1: 1.0, 2: 3.0}}


class Beyond(FakeBundle):
    def __init__(self):
        super().__init__(workloads=("prog",), sizes=(24, 40))

    def training_frame(self) -> pd.DataFrame:
        return pd.DataFrame([dict(workload="prog", size=s, nodes=1, ranks_per_node=1,
                                  threads=t, device="cpu", precision="fp64", partition="cpu",
                                  cores_per_node=16, memory_gb=64.0, gpus_per_node=0,
                                  status="ok", runtime_s=v, energy_j=v * 10, peak_rss_mb=100.0)
                             for (t, s), v in MEASURED.items()])

    def predict(self, df: pd.DataFrame) -> pd.DataFrame:
        out = super().predict(df)
        runtime = np.array([PREDICTED.get(int(s), {}).get(int(t), 100.0) if r == 1 else 100.0
                            for s, t, r in zip(df["size"], df["threads"], df["ranks_per_node"])])
        set_prediction(out, runtime)
        return out


def _choose(size: int) -> s1.Choice:
    return s1.choose(s1.score(Beyond(), "prog", size, [CPU], ONE_NODE), "time")


def test_the_pick_beyond_the_measured_sizes_is_no_surer_than_at_the_largest():
    edge, beyond = _choose(40), _choose(80)
    assert edge.pick["threads"] == beyond.pick["threads"] == 1
    # the run at 40 grown along the measured slope (1.36 both), not the model's fall
    assert beyond.pick["runtime_s"] == pytest.approx(2.0 * 2 ** (np.log(2) / np.log(40 / 24)))
    assert beyond.pick["runtime_lo"] >= 2.0 * 0.9 - 1e-9  # the run, widened by the model's
    assert beyond.confidence <= edge.confidence


#: s29 tester C1 after learn: {(ranks per node, threads, size): seconds} of PETSc poisson on
#: one node; the tune measured 1 rank x 2 threads at 112 only.
POISSON = {(1, 1, 64): 0.01405, (1, 1, 96): 0.06662, (1, 1, 112): 0.03882, (1, 1, 128): 0.08383,
           (2, 1, 64): 0.03655, (2, 1, 96): 0.03076, (2, 1, 112): 0.04624, (2, 1, 128): 0.14612,
           (1, 2, 112): 0.03255}
#: The learnt model at 120 {(ranks per node, threads): seconds}: 1 x 2 threads at 16.9 ms.
POISSON_MODEL = {(1, 1): 0.0389, (2, 1): 0.1154, (1, 2): 0.0169}


class Tuned(FakeBundle):
    def __init__(self):
        super().__init__(workloads=("poisson",), sizes=(64, 96, 112, 128))

    def training_frame(self) -> pd.DataFrame:
        return pd.DataFrame([dict(workload="poisson", size=s, nodes=1, ranks_per_node=r,
                                  threads=t, device="cpu", precision="fp64", partition="cpu",
                                  cores_per_node=16, memory_gb=64.0, gpus_per_node=0,
                                  status="ok", runtime_s=v, energy_j=v * 10, peak_rss_mb=100.0)
                             for (r, t, s), v in POISSON.items()])

    def predict(self, df: pd.DataFrame) -> pd.DataFrame:
        out = super().predict(df)
        set_prediction(out, np.array([POISSON_MODEL.get((int(r), int(t)), 1.0) for r, t
                                      in zip(df["ranks_per_node"], df["threads"])]),
                       runtime_band=(0.88, 1.4))
        return out


def test_a_pick_measured_at_one_other_size_is_held_to_that_run_and_not_sure():
    """C1: at 120 (inside the measured 64-128) 1 x 2 threads, run once at 112 (32.5 ms), was
    predicted 16.9 ms and picked with confidence 0.95, verdict auto; it ran 34-156 ms."""
    choice = s1.choose(s1.score(Tuned(), "poisson", 120, [CPU], ONE_NODE), "time")
    assert (choice.pick["ranks_per_node"], choice.pick["threads"]) == (1, 2)
    assert choice.pick["runtime_s"] >= 0.03255 - 1e-9 and choice.pick["runtime_lo"] >= 0.0325
    assert choice.confidence <= s1.DOUBTED_CONFIDENCE
    assert "measured at one size only (112: 0.0325 s)" in choice.neighbour_note
    at_112 = s1.choose(s1.score(Tuned(), "poisson", 112, [CPU], ONE_NODE), "time")
    assert at_112.neighbour_note == ""  # at its own size its run stands


class Bracketing(Tuned):
    """V2-3's picture: 1 x 1 and 2 x 1 measured at 64, 96 and 128, 1 x 2 threads at 112."""

    def __init__(self, runs: dict | None = None):
        super().__init__()
        self.runs = {k: v for k, v in POISSON.items() if k[2] != 112 or k[1] == 2} \
            if runs is None else runs

    def training_frame(self) -> pd.DataFrame:
        frame = super().training_frame()
        keep = [(r, t, s) in self.runs for r, t, s in
                zip(frame["ranks_per_node"], frame["threads"], frame["size"])]
        return frame[keep].reset_index(drop=True)


def _row(bundle, size: int, rpn: int, threads: int) -> dict:
    scores = s1.score(bundle, "poisson", size, [CPU], ONE_NODE)
    c = scores.cols
    i = int(np.flatnonzero((c["nodes"] == 1) & (c["ranks_per_node"] == rpn)
                           & (c["threads"] == threads) & (c["device"] == "cpu"))[0])
    return {k: float(c[k][i]) for k in ("runtime_s", "runtime_lo", "runtime_hi")}


def test_beyond_its_own_size_a_layout_grows_as_the_workload_was_measured_to():
    """V2-3: recommend at 128 picked 1 x 2 threads at 32.5 ms (its run at 112), and at 160
    still 32.5 ms, where 1 x 1 ran 83.8 ms at 128. Its floor now grows as 1 x 1 grew from 112
    (66.6 ms at 96, 83.8 ms at 128, log-log) to 128, and stays there beyond 128."""
    grown = 0.03255 * (0.08383 / 0.06662) ** (np.log(128 / 112) / np.log(128 / 96))
    for size in (128, 160):
        got = _row(Bracketing(), size, 1, 2)
        assert got["runtime_s"] >= grown * (1 - 1e-12)
        assert got["runtime_lo"] >= grown * 0.88 * (1 - 1e-12)
    # the tester's own runs (1 x 1 and 2 x 1 at 112 too): 2.16x, capped at slope 4
    assert _row(Tuned(), 128, 1, 2)["runtime_s"] >= 0.03255 * (128 / 112) ** 4 * (1 - 1e-12)
    choice = s1.choose(s1.score(Bracketing(), "poisson", 160, [CPU], ONE_NODE), "time")
    assert choice.confidence <= s1.DOUBTED_CONFIDENCE


def test_with_nothing_measured_beyond_its_size_or_at_the_size_nothing_changes():
    at_most_112 = Bracketing({k: v for k, v in POISSON.items() if k[2] <= 112})
    # nothing spans: the run grown along the median end slope (1 x 1 and 2 x 1, 96 -> 112:
    # a fall, as 0, and 2 x 1's 2.68)
    slope = np.log(0.04624 / 0.03076) / np.log(112 / 96) / 2
    assert _row(at_most_112, 128, 1, 2)["runtime_s"] == pytest.approx(
        0.03255 * (128 / 112) ** slope)
    # 1 x 1, measured at 128, is its run there (83.8 ms; the model said 38.9 ms: s31 Q1)
    assert _row(Bracketing(), 128, 1, 1)["runtime_s"] == pytest.approx(0.08383)


def _lab_standard():
    from hpcds1mpi.cluster import load_clusters

    return list(load_clusters("tests/data/jobscripts/lab.toml").values())[0] \
        .partitions["standard"]


def _shipped_stencil(size: int) -> tuple[float, float, float]:
    from hpcds1mpi.decide.model_bundle import load_model

    bundle = _shipped_stencil.bundle = getattr(_shipped_stencil, "bundle", None) \
        or load_model(None)
    c = s1.score(bundle, "stencil", size, [_lab_standard()],
                 s1.Constraints(max_nodes=1, devices=["cpu"], precisions=["fp32"])).cols
    i = int(np.flatnonzero((c["ranks_per_node"] == 2) & (c["threads"] == 1))[0])
    return tuple(float(c[k][i]) for k in ("runtime_s", "runtime_lo", "runtime_hi"))


def test_beyond_the_shipped_sizes_the_point_never_turns_back_and_the_interval_widens():
    """s31 tester Q7: stencil 2 x 1 fp32 (measured 40-256) read 103.7 ms at 300 and 96.0 ms
    at 400 (2.4x the work); at 20 0.0618 ms (0.0591-0.0657 ms), where 40 -> 20 measured a
    2.8x speed-up (1 x 1: 0.371 -> 0.132 ms), not 8x."""
    above = [_shipped_stencil(s) for s in (257, 280, 300, 400, 600)]
    below = [_shipped_stencil(s) for s in (39, 30, 20, 10)]
    for side in (above, below):
        points = [p for p, _, _ in side]
        widths = [hi / lo for _, lo, hi in side]
        assert points == sorted(points, reverse=side is below)
        assert widths == sorted(widths) and widths[-1] > 2 * widths[0]
    edge = 0.6455e-3  # its run at 40
    point, lo, hi = below[2]
    assert lo <= edge / 2.8 <= hi and point > edge / 8


def test_a_level_never_measured_is_marked_and_not_as_sure_as_a_measured_one():
    """s31 tester Q5: a GPU configuration on the CPU-only shipped bundle was the CPU's number
    +-5 %; its pick is now marked unmeasured and its confidence capped."""
    from dataclasses import replace

    from hpcds1mpi.decide.model_bundle import load_model
    from hpcds1mpi.decide.scores import UNMEASURED

    gpu = replace(_lab_standard(), gpus_per_node=1, gpu_memory_gb=80.0)
    bundle = load_model(None)
    scores = s1.score(bundle, "stencil", 200, [gpu], s1.Constraints(max_nodes=1))
    c = scores.cols
    cpu_fp32 = (c["device"] == "cpu") & (c["precision"] == "fp32")
    assert c[UNMEASURED][c["device"] == "gpu"].all() and not c[UNMEASURED][cpu_fp32].any()
    on_gpu = s1.choose(s1.score(bundle, "stencil", 200, [gpu],
                                s1.Constraints(max_nodes=1, devices=["gpu"])), "time")
    assert on_gpu.pick["device"] == "gpu" and on_gpu.confidence <= s1.DOUBTED_CONFIDENCE
