"""System 1 at a size some configurations were measured at: the others are still held to their
own runs either side (s28 tester Y: after ``learn`` of a tune at 768, 1 x 1 x 2, never run at
768, was predicted 173 ms / 1.66 J there, below its runs at 512 and 1024, and energy picked
it)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from hpcds1mpi.decide import system1 as s1
from tests.fake_bundle import FakeBundle, fake_partitions, set_prediction

CPU = fake_partitions()["cpu"]
ONE_NODE = s1.Constraints(max_nodes=1, devices=["cpu"], precisions=["fp64"])
# {(threads, size): (runtime s, energy J)} of 1 node x 1 rank (tester Y's heat.c runs)
RUNS = {(1, 512): (0.1186, 1.54), (1, 768): (0.1404, 1.83), (1, 1024): (0.1783, 2.32),
        (2, 512): (0.196, 3.92), (2, 1024): (0.287, 5.72)}
# what the learnt model said at 768
PREDICTED = {1: (0.1404, 1.82), 2: (0.173, 1.66)}


class Learnt(FakeBundle):
    def __init__(self):
        super().__init__(workloads=("heatm",), sizes=(512, 768, 1024))

    def training_frame(self) -> pd.DataFrame:
        return pd.DataFrame([dict(workload="heatm", size=s, nodes=1, ranks_per_node=1,
                                  threads=t, device="cpu", precision="fp64", partition="cpu",
                                  cores_per_node=16, memory_gb=64.0, gpus_per_node=0,
                                  status="ok", runtime_s=r, energy_j=e, peak_rss_mb=100.0)
                             for (t, s), (r, e) in RUNS.items()])

    def predict(self, df: pd.DataFrame) -> pd.DataFrame:
        out = super().predict(df)
        mine = [PREDICTED.get(int(t), (100.0, 1000.0)) if r == 1 else (100.0, 1000.0)
                for r, t in zip(df["ranks_per_node"], df["threads"])]
        runtime, energy = (np.array(v, dtype=float) for v in zip(*mine))
        set_prediction(out, runtime, energy, runtime_band=(0.93, 1.27), energy_band=(0.92, 1.14))
        return out


def test_energy_does_not_pick_a_layout_predicted_below_both_its_runs():
    choice = s1.choose(s1.score(Learnt(), "heatm", 768, [CPU], ONE_NODE), "energy")
    assert choice.pick["threads"] == 1
    cols = choice.scores.cols
    two = int(np.flatnonzero((cols["ranks_per_node"] == 1) & (cols["threads"] == 2))[0])
    assert 0.196 < cols["runtime_s"][two] < 0.287  # 0.245 s, between its runs
    assert cols["energy_j"][two] > 3.92  # 4.9 J, or the partition's power floor above it
    assert cols["runtime_s"][two] == pytest.approx(0.245, abs=0.001)
