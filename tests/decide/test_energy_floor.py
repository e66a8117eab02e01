"""The least energy a job can take: its layout's modelled draw (its nodes' idle draw, GPUs
included, and its busy cores at its workload's measured busy share)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from hpcds1mpi.cluster import Partition
from hpcds1mpi.decide import system1 as s1
from hpcds1mpi.decide.energy_floor import (FLOOR_WATTS, busy_share, core_watts, floor_energy,
                                           floor_watts, floor_words, idle_watts)
from tests.fake_bundle import FakeBundle


def test_a_nodes_idle_draw_counts_its_gpus():
    """A GPU node's four idle GPUs were left out of the floor: 100 W, not 100 + 4 x 50 W."""
    gpu = Partition("g", cores_per_node=8, memory_gb=64.0, max_nodes=4, gpus_per_node=4,
                    gpu_memory_gb=80.0, idle_watts_node=100.0, max_watts_node=400.0,
                    idle_watts_gpu=50.0, max_watts_gpu=300.0)
    cpu = Partition("c", cores_per_node=8, memory_gb=64.0, max_nodes=4, idle_watts_node=100.0,
                    max_watts_node=400.0)
    assert idle_watts(gpu) == 300.0 and idle_watts(cpu) == 100.0
    cols = {"partition": np.array(["g", "c"]), "nodes": np.array([2, 2]),
            **{k: np.array([1.0, 1.0]) for k in ("runtime_s", "runtime_lo", "runtime_hi")},
            **{k: np.array([0.0, 0.0]) for k in ("energy_j", "energy_lo", "energy_hi")}}
    floor_energy(cols, [gpu, cpu])
    assert cols["energy_j"].tolist() == [600.0, 200.0]



def test_an_unknown_upper_runtime_keeps_the_energys_width_above_a_floored_median():
    """s47 review RX3: a timed-out layout's energy median raised to the floor met its upper
    end there (192 J-192 J): the upper end stays as far above the median as it was."""
    cols = {"partition": np.array(["c", "c"]), "nodes": np.array([1, 1]),
            "runtime_s": np.array([2.0, 2.0]), "runtime_lo": np.array([2.0, 1.5]),
            "runtime_hi": np.array([np.inf, 3.0]), "energy_j": np.array([1.0, 1.0]),
            "energy_lo": np.array([0.9, 0.9]), "energy_hi": np.array([1.5, 1.5])}
    floor_energy(cols, [Partition("c", cores_per_node=8, memory_gb=64.0)], np.full(2, 10.0))
    assert cols["energy_j"].tolist() == [20.0, 20.0] and cols["energy_lo"].tolist() == [20.0, 15.0]
    assert cols["energy_hi"].tolist() == [30.0, 30.0]  # 1.5 x the median; 10 W x 3 s

@pytest.fixture(scope="module")
def shipped_bundle():
    from hpcds1mpi.decide.model_bundle import load_model

    return load_model(None)


LAB = Partition("standard", cores_per_node=2, memory_gb=25.3, max_nodes=4)  # 6 W idle, 20 W max


def test_the_floor_counts_the_busy_cores_of_the_layout_at_their_share():
    """s47 tester N1: 4 nodes x 2 ranks drew 24 W on the floor where the telemetry's model
    gives 4 x 6 W + 8 busy cores x 7 W = 80 W; threads beyond the node's cores add none."""
    assert core_watts(LAB) == 7.0
    cols = {"partition": np.array(["standard"] * 3), "nodes": np.array([4, 1, 2]),
            "ranks_per_node": np.array([2, 1, 2]), "threads": np.array([1, 4, 1])}
    assert floor_watts(cols, [LAB]).tolist() == [24.0, 6.0, 12.0]  # no share: idle alone
    assert floor_watts(cols, [LAB], np.array([1.0, 1.0, 0.5])).tolist() == [80.0, 20.0, 26.0]


class Runs(FakeBundle):
    """Ok runs at 1 node on ``LAB``'s figures: 1 rank x 2 threads at 13 W (half of two cores'
    range), 2 ranks at 20 W and 17 W (the least: 11 of 14 W), and one that failed at 6 W."""

    def training_frame(self) -> pd.DataFrame:
        runs = [(1, 2, 13.0, "ok"), (2, 1, 20.0, "ok"), (2, 1, 17.0, "ok"), (1, 1, 6.0, "oom")]
        return pd.DataFrame([dict(workload="stencil", size=64, nodes=1, ranks_per_node=r,
                                  threads=t, device="cpu", precision="fp64", partition="standard",
                                  cores_per_node=2, memory_gb=25.3, gpus_per_node=0, status=st,
                                  runtime_s=2.0, energy_j=watts * 2.0, peak_rss_mb=10.0)
                             for r, t, watts, st in runs])


def test_the_busy_share_is_the_least_its_workloads_runs_of_the_layout_drew():
    cols = {"partition": np.array(["standard"] * 4), "ranks_per_node": np.array([1, 2, 1, 4]),
            "threads": np.array([2, 1, 1, 1])}
    share = busy_share(Runs(), "stencil", cols, [LAB])
    # measured layouts their own least; others the least of all its runs (a failed one's not)
    assert share.tolist() == pytest.approx([0.5, 11 / 14, 0.5, 0.5])
    assert busy_share(Runs(), "gemm", cols, [LAB]).tolist() == [1.0] * 4  # no run says it


def test_multi_node_energy_is_floored_at_the_layouts_modelled_power(shipped_bundle):
    """s47 tester N1: the shipped bundle's nbody at 3000 on 4 nodes x 2 ranks read 0.011 J
    (4 nodes idle), a third of the tool's own model, and was the whole runtime-energy front."""
    scores = s1.score(shipped_bundle, "nbody", 3000, [LAB],
                      s1.Constraints(precisions=["fp32"], threads=[1]))
    cols = scores.cols
    widest = int(np.flatnonzero((cols["nodes"] == 4) & (cols["ranks_per_node"] == 2))[0])
    # nbody's 2-rank runs kept both cores busy: near the model's 80 W, not 24 W
    assert cols[FLOOR_WATTS][widest] > 0.9 * 80.0
    for energy, runtime in (("energy_j", "runtime_s"), ("energy_lo", "runtime_lo"),
                            ("energy_hi", "runtime_hi")):
        assert (cols[energy] >= cols[FLOOR_WATTS] * cols[runtime] * (1 - 1e-12)).all()
    choice = s1.choose(scores, "energy")
    assert choice.pick["nodes"] == 1 and len(choice.front) > 1


#: Partitions whose figures are no round numbers, one with GPUs (s47 review RX8).
ODD = Partition("odd", cores_per_node=48, memory_gb=256.0, max_nodes=8, idle_watts_node=87.5,
                max_watts_node=311.3)
GPUS = Partition("gpu", cores_per_node=6, memory_gb=64.0, max_nodes=4, gpus_per_node=3,
                 gpu_memory_gb=80.0, idle_watts_node=101.7, max_watts_node=433.1,
                 idle_watts_gpu=47.3, max_watts_gpu=301.9)


def test_the_floor_keeps_its_numbers_now_that_the_telemetrys_model_makes_them():
    """s47 review RX8: the floor had its own copy of the modelled power's formula; made by
    ``meters.modelled_watts`` now, every number is the one the copy gave (recorded from it
    before the change) but for the last bit or two: the terms are summed in the meters'
    order (1227.9 was 1227.8999999999999)."""
    parts = [LAB, ODD, GPUS]
    assert [idle_watts(p) for p in parts] == [6.0, 87.5, 243.59999999999997]
    assert [core_watts(p) for p in parts] == [7.0, 4.6625000000000005, 55.23333333333334]
    cols = {"partition": np.array(["standard", "odd", "gpu", "odd", "gpu", "standard"]),
            "nodes": np.array([4, 3, 3, 5, 1, 7]), "ranks_per_node": np.array([2, 7, 2, 48, 1, 1]),
            "threads": np.array([1, 3, 5, 2, 1, 4])}
    share = np.array([11 / 14, 0.37, 0.5, 1.0, 0.123456789, 0.5])
    _same(floor_watts(cols, parts), [24.0, 262.5, 730.8, 437.5, 243.59999999999997, 42.0])
    watts = floor_watts(cols, parts, share)
    _same(watts, [68.0, 371.182875, 1227.8999999999999, 1556.5, 250.41892997909997, 91.0])
    for part, want in ((ODD, [371.182875, 1556.5]), (GPUS, [1227.8999999999999,
                                                            250.41892997909997])):
        mine = cols["partition"] == part.name  # one partition alone: the same numbers
        _same(floor_watts({k: v[mine] for k, v in cols.items()}, [part], share[mine]), want)
    words = [floor_words(p, {**{k: v[i] for k, v in cols.items()}, FLOOR_WATTS: watts[i]})
             for i, p in enumerate([LAB, ODD, GPUS, ODD, GPUS, LAB])]
    assert words == ["4 nodes x 6 W idle + 8 busy cores x 7 W x 79% busy",
                     "3 nodes x 87.5 W idle + 63 busy cores x 4.66 W x 37% busy",
                     "3 nodes x 244 W idle + 18 busy cores x 55.2 W x 50% busy",
                     "5 nodes x 87.5 W idle + 240 busy cores x 4.66 W",
                     "1 node x 244 W idle + 1 busy core x 55.2 W x 12% busy",
                     "7 nodes x 6 W idle + 14 busy cores x 7 W x 50% busy"]
    runs = {"partition": np.array(["standard"] * 4), "ranks_per_node": np.array([1, 2, 1, 4]),
            "threads": np.array([2, 1, 1, 1])}
    lab_gpu = Partition("standard", cores_per_node=2, memory_gb=25.3, max_nodes=4,
                        gpus_per_node=1, idle_watts_node=3.3, max_watts_node=19.7,
                        idle_watts_gpu=1.1, max_watts_gpu=9.0)
    _same(busy_share(Runs(), "stencil", runs, [lab_gpu]),
          [0.524390243902439, 0.7682926829268293, 0.524390243902439, 0.524390243902439])


def _same(got, want) -> None:
    """Each of ``got`` within two units in the last place of ``want``'s."""
    want = np.asarray(want, dtype=float)
    assert (np.abs(np.asarray(got, dtype=float) - want) <= 2 * np.spacing(want)).all(), \
        (np.asarray(got).tolist(), want.tolist())


def test_the_floor_is_the_telemetrys_modelled_power_of_its_busy_cores():
    """The floor's watts are what a run of the layout would be recorded drawing, its busy
    cores busy the whole window and the nodes' GPUs idle (``meters.modelled_power``)."""
    from hpcds1mpi.measure.meters import modelled_power, power_model

    cols = {"partition": np.array(["gpu"] * 3), "nodes": np.array([1, 3, 4]),
            "ranks_per_node": np.array([2, 6, 3]), "threads": np.array([3, 2, 1])}
    share = np.array([0.25, 1.0, 0.6])
    watts = floor_watts(cols, [GPUS], share)
    for i, used in enumerate([6, 6, 3]):  # ranks x threads, at most the node's 6 cores
        nodes = int(cols["nodes"][i])
        run = modelled_power(power_model(GPUS), nodes=nodes, window_s=2.0,
                             cpu_s=2.0 * used * nodes * share[i], gpus=3 * nodes)
        assert watts[i] == pytest.approx(run, rel=1e-12)
