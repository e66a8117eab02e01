"""A candidate at a level never measured is predicted no faster than perfect scaling from the
measured candidates of its partition, device and precision (s33 tester P1)."""

from __future__ import annotations

import numpy as np
import pytest

from hpcds1mpi.cluster import Partition
from hpcds1mpi.decide import system1 as s1
from hpcds1mpi.decide.scaling_floor import (SCALING_FLOOR, floor_to_perfect_scaling,
                                            resources, scaling_note)
from hpcds1mpi.decide.scores import UNMEASURED
from tests.helpers import REPO, run_cli


def _cols(rows):
    """Hand-made System 1 columns from (nodes, ranks, threads, device, precision, runtime,
    measured) tuples; interval +-10 %, energy 2 J a second, one partition."""
    nodes, ranks, threads, device, precision, runtime, measured = map(np.array, zip(*rows))
    runtime = runtime.astype(float)
    return {"nodes": nodes, "ranks_per_node": ranks, "threads": threads, "device": device,
            "precision": precision, "partition": np.array(["p"] * len(rows)),
            "runtime_s": runtime, "runtime_lo": runtime * 0.9, "runtime_hi": runtime * 1.1,
            "energy_j": runtime * 2, "energy_lo": runtime * 1.8, "energy_hi": runtime * 2.2,
            UNMEASURED: ~measured.astype(bool)}


def test_resources_are_cores_on_cpu_and_gpus_on_gpu():
    cols = _cols([(2, 8, 2, "cpu", "fp64", 1.0, True), (4, 1, 16, "gpu", "fp64", 1.0, True)])
    assert resources(cols).tolist() == [32.0, 4.0]


def test_an_unmeasured_row_faster_than_perfect_scaling_is_raised_to_it():
    cols = _cols([(1, 1, 16, "cpu", "fp64", 8.0, True),    # 128 core-seconds
                  (1, 2, 16, "cpu", "fp64", 16.0, True),   # 512: not the reference
                  (1, 8, 2, "cpu", "fp64", 1.0, False),    # 16 cores: at least 8.0
                  (4, 8, 2, "cpu", "fp64", 2.5, False),    # 64 cores: at least 2.0, kept
                  (1, 8, 2, "cpu", "fp32", 0.1, False),    # no fp32 measured: no bound
                  (4, 1, 1, "gpu", "fp64", 0.5, False),    # no GPU measured: no bound
                  (1, 1, 1, "gpu", "bf16", 6.0, True),     # 1 GPU
                  (4, 1, 16, "gpu", "bf16", 0.1, False)])  # 4 GPUs: at least 1.5
    before = {k: np.array(v, copy=True) for k, v in cols.items()}
    floor_to_perfect_scaling(cols)
    rt, lo, hi = cols["runtime_s"], cols["runtime_lo"], cols["runtime_hi"]
    assert rt.tolist() == pytest.approx([8.0, 16.0, 8.0, 2.5, 0.1, 0.5, 6.0, 1.5])
    # Raised: from the reference's scaled lower end up to its own upper end (no speed-up).
    assert (lo[2], hi[2]) == pytest.approx((7.2, 8.8))
    assert (lo[7], hi[7]) == pytest.approx((1.35, 6.6))
    # Not raised: its ends at least the reference's scaled ones (2.5 x 0.9 = 2.25 > 1.8).
    assert (lo[3], hi[3]) == pytest.approx((2.25, 2.75))
    # Energy follows its runtime end by end; the measured and unbounded rows are untouched.
    assert cols["energy_j"][[2, 7]] == pytest.approx([16.0, 3.0])
    assert cols["energy_hi"][2] == pytest.approx(before["energy_hi"][2] * 8.8 / 1.1)
    for row in (0, 1, 4, 5, 6):
        for c in ("runtime_s", "runtime_lo", "runtime_hi", "energy_j", "energy_lo", "energy_hi"):
            assert cols[c][row] == before[c][row]
    assert np.isfinite(cols[SCALING_FLOOR]).tolist() == [False, False, True, False, False,
                                                         False, False, True]
    assert before["runtime_s"][2] == 1.0  # the caller's arrays are not written into
    assert scaling_note(cols, 2) == (
        "1 node x 8 ranks x 2 threads on cpu never measured: predicted no faster than perfect "
        "scaling from the measured 1 node x 1 rank x 16 threads (8 s): at least 8 s")
    assert scaling_note(cols, 3) == "" and scaling_note(cols, 0) == ""


def test_a_reference_whose_upper_end_is_unknown_still_bounds_from_its_lower_bound():
    """s47 tester L1: 2 ranks timed out (at least 11 s, upper end ``inf``) were no reference,
    so 1 rank, never run, scaled from nothing that ran past the limit."""
    cols = _cols([(1, 1, 1, "cpu", "fp64", 0.857, False), (1, 2, 1, "cpu", "fp64", 11.0, True)])
    cols["runtime_lo"][1], cols["runtime_hi"][1] = 11.0, np.inf
    energy_hi = cols["energy_hi"][0]
    floor_to_perfect_scaling(cols)
    assert (cols["runtime_s"][0], cols["runtime_lo"][0]) == pytest.approx((22.0, 22.0))
    assert np.isinf(cols["runtime_hi"][0]) and cols[SCALING_FLOOR][0] == pytest.approx(22.0)
    # energy ends follow their runtime ends; one now unknown the median's factor, as far above
    # it as the model's was (it had kept the model's end, far below the raised median: RX3)
    assert cols["energy_j"][0] == pytest.approx(44.0)
    assert cols["energy_hi"][0] == pytest.approx(energy_hi * 22.0 / 0.857)


def test_partitions_are_bounded_by_their_own_measured_rows():
    cols = _cols([(1, 1, 1, "cpu", "fp64", 8.0, True), (1, 2, 1, "cpu", "fp64", 1.0, False)])
    cols["partition"] = np.array(["p", "q"])
    floor_to_perfect_scaling(cols)
    assert cols["runtime_s"].tolist() == [8.0, 1.0]
    all_measured = _cols([(1, 1, 1, "cpu", "fp64", 8.0, True)])
    floor_to_perfect_scaling(all_measured)
    assert not np.isfinite(all_measured[SCALING_FLOOR]).any()


def test_an_unmeasured_level_at_perfect_scaling_is_no_surer_of_a_speed_up_than_measured():
    """s40 tester B9: stencil 160 at 2 threads, never run, read at exactly half the measured
    1-thread run (50.9 ms, 39.1-62.7): 25.5 ms (19.6-32.5), "wholly below" the measured
    interval, and was picked; the real 2-thread runs took 37-40 ms. Nothing measured says
    the second thread helps at all: its interval reaches the measured run's top."""
    from hpcds1mpi.decide.scaling_floor import no_unproven_speedup
    from hpcds1mpi.decide.unmeasured_bounds import measured_before_unmeasured, widen_unmeasured

    cols = _cols([(1, 1, 1, "cpu", "fp64", 0.0509, True),     # measured, 1 core
                  (1, 1, 2, "cpu", "fp64", 0.02546, False),   # 2 cores: the trees' half
                  (1, 2, 2, "cpu", "fp64", 0.0130, False),    # 4 cores
                  (1, 1, 2, "cpu", "fp32", 0.0200, False),    # no fp32 measured: no bound
                  (1, 4, 1, "cpu", "fp64", 0.0200, True),     # measured, 4 cores
                  (1, 4, 2, "cpu", "fp64", 0.0100, False)])   # 8 cores
    cols["runtime_lo"][0], cols["runtime_hi"][0] = 0.0391, 0.0627  # the run's own spread
    cols["runtime_hi"][1], cols["runtime_lo"][1] = 0.02565, 0.02407  # the trees' narrow one
    widen_unmeasured(cols)
    floor_to_perfect_scaling(cols)
    before = {k: np.array(v, copy=True) for k, v in cols.items()}
    no_unproven_speedup(cols)
    hi = cols["runtime_hi"]
    assert hi[1] == pytest.approx(0.0627)  # the 1-core run's top: the only one within 2 cores
    assert hi[2] == pytest.approx(0.022) and hi[5] == pytest.approx(0.022)  # the 4-core run's
    assert hi[3] == before["runtime_hi"][3]  # another precision: nothing measured bounds it
    assert (cols["runtime_s"] == before["runtime_s"]).all()  # the points stay the trees'
    assert cols["runtime_lo"][1] >= 0.0391 / 2 - 1e-12  # no faster than perfect scaling
    assert cols["energy_hi"][1] == pytest.approx(before["energy_hi"][1] * 0.0627 /
                                                 before["runtime_hi"][1])
    ranking = np.argsort(cols["runtime_s"][[0, 1]], kind="stable")
    picked, note = measured_before_unmeasured(cols, ranking, "time")
    assert picked[0] == 0 and note == ""  # the measured run, not the optimistic bound


def test_a_never_run_thread_count_at_perfect_scaling_is_not_picked_over_the_measured_run(
        tmp_path, monkeypatch):
    """B9 through System 1: one measured layout (1 x 1 x 1) and a model that reads 2 threads at
    exactly half of it, with its own narrow interval."""
    import pandas as pd

    from tests.fake_bundle import FakeBundle, fake_partitions, isolate_user_files

    isolate_user_files(monkeypatch, tmp_path)

    class OneThread(FakeBundle):
        def training_frame(self):
            return pd.DataFrame([dict(workload="stencil", size=s, nodes=1, ranks_per_node=1,
                                      threads=1, device="cpu", precision="fp64",
                                      partition="cpu", cores_per_node=16, memory_gb=64.0,
                                      gpus_per_node=0, status="ok", runtime_s=0.05 * s / 160,
                                      energy_j=0.5, peak_rss_mb=40.0)
                                 for s in (96, 128, 160, 192)])

        def predict(self, df):
            out = super().predict(df)
            point = 0.0509 * df["size"].to_numpy(float) / 160 / df["threads"].to_numpy(float)
            measured = (df["threads"] == 1).to_numpy()
            out["runtime_s"] = point
            out["runtime_lo"] = np.where(measured, point * 0.77, point * 0.95)
            out["runtime_hi"] = np.where(measured, point * 1.23, point * 1.01)
            out["fail_prob"], out["fail_prob_max"] = 0.0, 0.0
            return out

    bundle = OneThread(workloads=("stencil",), sizes=(96, 192))
    only = s1.Constraints(max_nodes=1, devices=["cpu"], precisions=["fp64"], threads=[1, 2],
                          max_ranks_per_node=1)
    choice = s1.choose(s1.score(bundle, "stencil", 160, [fake_partitions()["cpu"]], only))
    assert choice.pick["threads"] == 1, choice.nodes_note
    two = int(np.flatnonzero(choice.scores.cols["threads"] == 2)[0])
    assert choice.scores.cols["runtime_hi"][two] >= choice.pick["runtime_hi"] - 1e-12


#: /tmp/s33/P/gpu.toml's partition: the H200 node's hardware (16 cores, 128 GB, one GPU), up
#: to 4 nodes; predicted as the trained partition "local".
GPUQ = Partition(name="gpuq", cores_per_node=16, memory_gb=128, max_nodes=4, gpus_per_node=1,
                 gpu_memory_gb=140)


@pytest.fixture(scope="module")
def h200_bundle(tmp_path_factory):
    """A bundle trained as `hpcds1mpi train` trains one on the real H200 telemetry: gemm ran
    only on one node x one GPU x one thread, at fp64, fp32 and bf16."""
    from hpcds1mpi.decide.model_bundle import load_model

    out = tmp_path_factory.mktemp("h200") / "gpumodel"
    proc = run_cli(["train", "--telemetry", str(REPO / "data/gpu_h200/telemetry.h5"),
                    "--out", str(out)])
    assert proc.returncode == 0, proc.stderr
    return load_model(out)


@pytest.mark.parametrize("constraints", [s1.Constraints(max_nodes=1), s1.Constraints(),
                                         s1.Constraints(devices=["gpu"])],
                         ids=["one-node", "any", "gpu"])
def test_an_h200_bundle_picks_no_layout_faster_than_perfect_scaling(h200_bundle, constraints):
    # Was: 1 node x 8 ranks x 2 threads cpu fp64 at 0.781 ms (176 TFLOP/s on 16 cores, the CPU
    # never run); 4 nodes x 8 x 2 cpu at 0.102 ms; --device gpu: 4 nodes x 1 GPU at 0.104 ms,
    # 60x the one GPU measured (6.2 ms bf16) on 4x the GPUs.
    scores = s1.score(h200_bundle, "gemm", 4096, [GPUQ], constraints)
    cols = scores.cols
    choice = s1.choose(scores, "time")
    pick = choice.index
    assert not cols[UNMEASURED][pick], choice.config().label()
    assert choice.config().device == "gpu"
    cost = cols["runtime_s"] * resources(cols)
    measured = ~cols[UNMEASURED]
    for device in ("cpu", "gpu"):
        for precision in ("fp64", "fp32", "bf16"):
            same = (cols["device"] == device) & (cols["precision"] == precision)
            if (same & measured).any():
                assert (cost[same] >= cost[same & measured].min() * (1 - 1e-9)).all()
    if constraints.devices == ["gpu"]:  # the raised 4-GPU rows: said once, with the reference
        assert "never measured: predicted no faster than perfect scaling from the measured " \
            "1 node x 1 rank x 1 thread" in choice.nodes_note
    else:  # the CPU rows, never run: ranked after the measured GPU, said so
        assert "the best-predicted candidate is on cpu" in choice.nodes_note


def test_a_duration_just_under_a_second_is_written_in_seconds():
    """0.9996 s printed "1e+03 ms", as recommend's table did (s40 tester D4)."""
    from hpcds1mpi.decide.scaling_floor import _duration

    assert (_duration(0.9996), _duration(0.5)) == ("1 s", "500 ms")


def _unproven_reference(cols: dict) -> dict:
    """no_unproven_speedup as it was before issue 20's s46 speed-up (one pass per group of the
    grid), the reference the faster form must equal."""
    from hpcds1mpi.decide.scaling_floor import _group_codes, _resources

    cols = dict(cols)
    unmeasured = cols[UNMEASURED]
    if not unmeasured.any() or unmeasured.all():
        return cols
    hi = np.asarray(cols["runtime_hi"], dtype=float)
    on_gpu = np.asarray(cols["device"]) == "gpu"
    res, group = _resources(cols, on_gpu), _group_codes(cols, on_gpu)
    usable = np.isfinite(hi) & (hi > 0) & np.isfinite(res)
    top = np.full(len(hi), np.nan)
    for code in np.unique(group[unmeasured & usable]).tolist():
        refs = np.flatnonzero(usable & ~unmeasured & (group == code))
        if not len(refs):
            continue
        refs = refs[np.argsort(res[refs], kind="stable")]
        least = np.minimum.accumulate(hi[refs])
        rows = np.flatnonzero(unmeasured & usable & (group == code))
        within = np.searchsorted(res[refs], res[rows], side="right")
        top[rows[within > 0]] = least[within[within > 0] - 1]
    with np.errstate(invalid="ignore"):
        rows = np.flatnonzero(top > hi)
    runtimes, energies = hi.copy(), np.array(cols["energy_hi"], dtype=float)
    runtimes[rows] = top[rows]
    energies[rows] *= top[rows] / hi[rows]
    cols["runtime_hi"], cols["energy_hi"] = runtimes, energies
    return cols


@pytest.mark.parametrize("seed", range(6))
def test_no_unproven_speedup_by_measured_groups_is_the_pass_per_group(seed):
    # Passing over each group of the grid, most of them without a measured row, had been a
    # tenth of System 1's own work on 11,595 candidates (issue 20, s46): only the groups
    # with measured rows are passed over now, to the same answer, NaN and ties included.
    from hpcds1mpi.decide.scaling_floor import layout_groups, no_unproven_speedup

    rng = np.random.default_rng(seed)
    n = 400
    runtime = rng.uniform(0.5, 3.0, n)
    runtime[rng.random(n) < 0.05] = np.nan
    cols = {"nodes": rng.integers(1, 4, n), "ranks_per_node": rng.integers(1, 4, n),
            "threads": rng.integers(1, 3, n), "device": rng.choice(["cpu", "gpu"], n),
            "precision": rng.choice(["fp64", "fp32", "bf16"], n),
            "partition": rng.choice(["a", "b"], n), "runtime_hi": runtime,
            "energy_hi": runtime * 2, UNMEASURED: rng.random(n) < 0.9}
    want = _unproven_reference(cols)
    for groups in (None, layout_groups(cols), layout_groups(dict(cols, nodes=cols["nodes"] + 1))):
        got = dict(cols)
        no_unproven_speedup(got, groups)  # another table's groups: computed anew
        for col in ("runtime_hi", "energy_hi"):
            np.testing.assert_array_equal(got[col], want[col])


def test_the_layout_groups_are_computed_once_per_scoring(monkeypatch):
    # Three computations of a grid's groups per question had been a tenth of System 1's own
    # work on 11,595 candidates (issue 20, s46).
    from hpcds1mpi.decide import scaling_floor
    from tests.fake_bundle import FakeBundle, fake_partitions

    calls = []
    real = scaling_floor._group_codes
    monkeypatch.setattr(scaling_floor, "_group_codes", lambda *a: calls.append(1) or real(*a))
    scores = s1.score(FakeBundle(), "stencil", 700, [fake_partitions()["cpu"]])
    assert scores.cols[UNMEASURED].any() and not scores.cols[UNMEASURED].all()
    assert len(calls) == 1


def test_a_timed_out_reference_takes_the_upper_end_only_of_the_rows_it_raises():
    """s47 review RX4: a timed-out reference (upper end unknown) had made every never-measured
    layout of its group "no known upper end", raised or not, so --deadline refused them."""
    from hpcds1mpi.decide.scaling_floor import floor_to_perfect_scaling
    from hpcds1mpi.decide.scores import UNMEASURED

    cols = {"nodes": np.array([1, 1, 2, 1]), "ranks_per_node": np.array([2, 1, 2, 1]),
            "threads": np.array([1, 1, 1, 1]), "device": np.array(["cpu"] * 4),
            "precision": np.array(["fp64"] * 4), "partition": np.array(["p"] * 4),
            "runtime_s": np.array([11.0, 30.0, 8.0, 3.0]),
            "runtime_lo": np.array([11.0, 25.0, 7.0, 2.0]),
            "runtime_hi": np.array([np.inf, 35.0, 9.0, 4.0]),  # row 0 measured, timed out
            "energy_j": np.array([98.0, 200, 100, 30]), "energy_lo": np.array([98.0, 180, 90, 20]),
            "energy_hi": np.array([213.0, 220, 110, 40]),
            UNMEASURED: np.array([False, True, True, True])}
    floor_to_perfect_scaling(cols)
    # rows 1 and 2 are above their floors (22 s, 5.5 s): kept as predicted; row 3 (3 s, one
    # core) is raised to 22 s from the timed-out layout, so its upper end is unknown
    assert list(cols["runtime_hi"][1:3]) == [35.0, 9.0]
    assert cols["runtime_s"][3] == pytest.approx(22.0) and np.isinf(cols["runtime_hi"][3])
