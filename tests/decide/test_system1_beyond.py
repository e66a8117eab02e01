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
    assert beyond.pick["runtime_s"] == pytest.approx(2.0)  # held to the run at 40
    assert beyond.pick["runtime_lo"] >= 2.0 - 1e-9
    assert beyond.confidence <= edge.confidence
