"""A program none of whose measured layouts fits the node (s43 tester G4)."""

from __future__ import annotations

import pytest

from hpcds1mpi.decide.unfit_measured import NOTHING_FITS, nothing_fits_line

SCRIPT = """#!/bin/bash
#SBATCH --partition=cpu
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=32
#SBATCH --oversubscribe
#SBATCH --time=00:10:00
mpirun --oversubscribe -np 32 ./needs32 {size}
"""


def _levels(ranks, threads=(1,), external=True):
    from hpcds1mpi.surrogates.levels import MeasuredLevels

    return MeasuredLevels("needs32", external, precisions=("fp64",), devices=("cpu",),
                          threads=threads, ranks_per_node=ranks, nodes=(1,),
                          command="./needs32 {size}")


@pytest.fixture
def oversubscribed_bundle():
    """The analytic stand-in, knowing a program measured only at 32 and 64 ranks per node,
    more than the fake ``cpu`` partition's 16 cores (as mplrs at 3 and 4 on 2 cores)."""
    return _oversubscribed()


def _oversubscribed():
    """:func:`oversubscribed_bundle`'s stand-in."""
    from tests.fake_bundle import WIDE_SIZES, FakeBundle

    bundle = FakeBundle(workloads=("stencil", "needs32"), sizes=WIDE_SIZES)
    bundle._measured_levels = {"needs32": _levels((32, 64))}
    frame = bundle.training_frame()  # its rows ran at those ranks per node too
    mine = frame["workload"] == "needs32"
    frame.loc[mine, "ranks_per_node"] = frame.loc[mine, "ranks_per_node"].map(
        lambda r: 32 if r == 1 else 64)
    return bundle


def test_the_line_is_said_only_where_no_measured_layout_fits():
    line = nothing_fits_line(_levels((3, 4)), 2, "mplrs34")
    assert line.startswith(f"{NOTHING_FITS} the 2 cores per node: mplrs34 ran ok only at 3, 4 "
                           "ranks per node, so every layout within the cores was never run")
    assert "sweep --ranks-per-node 1,2" in line and "at least 3 cores (--cluster)" in line
    assert nothing_fits_line(_levels((2, 4)), 2, "p") == ""  # 2 ranks fit: measured, offered
    assert nothing_fits_line(_levels((1,), threads=(4,)), 2, "p") != ""  # 1 x 4 > 2 cores
    assert nothing_fits_line(_levels((3, 4), external=False), 2, "k") == ""  # a kernel
    assert nothing_fits_line(None, 2, "p") == ""


def test_layouts_within_the_cores_that_failed_are_named_and_no_sweep_of_them_asked():
    """mplrs swept at 1-4 ranks on 2 cores: 1 and 2 failed (MPI_ERR_RANK; its refusal)."""
    line = nothing_fits_line(_levels((1, 2, 3, 4)), 2, "mplrs", ok=[(3, 1), (4, 1)])
    assert line == (f"{NOTHING_FITS} the 2 cores per node: mplrs ran ok only at 3, 4 ranks per "
                    "node, and failed at 1, 2 (within the cores); recommend for nodes of at "
                    "least 3 cores (--cluster), where its ok layouts fit")
    assert nothing_fits_line(_levels((1, 2, 3)), 2, "p", ok=[(2, 1), (3, 1)]) == ""
    assert nothing_fits_line(_levels((1, 2)), 2, "p", ok=[]) == ""  # nothing ok: not this


def test_recommend_escalates_rather_than_pick_a_layout_never_run(oversubscribed_bundle,
                                                                   tmp_path, monkeypatch):
    """Was (s43 tester G4): mplrs, measured ok only at 3 and 4 ranks on a 2-core node, was
    recommended 1 rank, never run, under "Offered only what was measured"; the job aborted."""
    from hpcds1mpi.decide.recommend import recommend
    from hpcds1mpi.decide.recommendation import format_table
    from tests.fake_bundle import fake_places, isolate_user_files

    isolate_user_files(monkeypatch, tmp_path)
    rec = recommend(oversubscribed_bundle, "needs32", 1024, fake_places("cpu"))
    assert rec.verdict.verdict == "escalate" and rec.picked is None
    assert any(r.startswith(f"{NOTHING_FITS} the 16 cores per node") for r in rec.verdict.reasons)
    text = format_table(rec)
    assert "Offered only what was measured" not in text
    assert "Offered no layout it was measured ok at (none fits the node); left out:" in text
    from hpcds1mpi.decide.recommendation import to_dict

    assert to_dict(rec)["left_out_heading"].startswith("Offered no layout it was measured ok")
    assert rec.calibration_steps  # the runs to do: layouts that fit, measured at this size


def test_advise_does_not_rewrite_a_measured_layout_into_one_never_run(oversubscribed_bundle,
                                                                        tmp_path, monkeypatch):
    """Was (s43 tester G4): --rewrite turned the working 3-rank script into 1 rank, 1 min."""
    from hpcds1mpi.decide.advise import advise
    from tests.fake_bundle import fake_places, isolate_user_files

    isolate_user_files(monkeypatch, tmp_path)
    a = advise(SCRIPT.format(size=1024), oversubscribed_bundle, places=fake_places("cpu"),
               workload="needs32")
    assert a.recommendation.verdict.verdict == "escalate"
    assert a.recommended is None and not a.changes and a.rewritten is None


def test_no_calibration_of_layouts_that_failed_at_every_measured_size():
    """Was (s43 tester K6): need3, refusing fewer than 3 ranks, measured at 1-4 ranks on
    2-core nodes, was offered (and --emit wrote) a calibration sweep of 1 and 2 ranks, the
    layouts that had failed at every measured size, beside the line saying nothing fits."""
    from types import SimpleNamespace

    from hpcds1mpi.config import Configuration
    from hpcds1mpi.decide.unfit_measured import doomed_calibration_note, failed_layouts
    from hpcds1mpi.surrogates.columns import Columns

    runs = [(r, size, "ok" if r >= 3 else "failed") for r in (1, 2, 3, 4) for size in (10, 20, 40)]
    runs += [(2, 20, "failed")]  # a repeat
    rows = Columns({"workload": ["need3"] * len(runs) + ["other"],
                    "status": [s for _, _, s in runs] + ["failed"],
                    "nodes": [1] * (len(runs) + 1),
                    "ranks_per_node": [r for r, _, _ in runs] + [3],
                    "threads": [1] * (len(runs) + 1),
                    "size": [size for _, size, _ in runs] + [10]})
    bundle = SimpleNamespace(training_columns=lambda: rows)
    failed = failed_layouts(bundle, "need3")
    assert failed == {(1, 1, 1): [10, 20, 40], (1, 2, 1): [10, 20, 40]}  # 3, 4 ran ok

    def step(nodes, ranks):
        return SimpleNamespace(config=Configuration(nodes=nodes, ranks_per_node=ranks))

    why = doomed_calibration_note([step(1, 1), step(1, 2)], failed, "need3")
    assert why == ("the layouts that fit the node (N1xR1xT1-cpu-fp64, "
                   "N1xR2xT1-cpu-fp64) failed at every size need3 was measured at (10, 20, "
                   "40), so measuring them again would fail the same way; the fix is nodes of "
                   "more cores (--cluster)")
    # a step never run (2 nodes x 2 ranks: 4 ranks, which the program may take) keeps the sweep
    assert doomed_calibration_note([step(1, 1), step(2, 2)], failed, "need3") == ""
    assert doomed_calibration_note([], failed, "need3") == ""
    assert failed_layouts(SimpleNamespace(), "need3") == {}


def _refusing_below_three(tmp_path, monkeypatch):
    """A 2-core partition and a program measured at 1-4 ranks per node, ok only at 3 and 4
    (mplrs's "requires at least 3 processes"), at every measured size; its places."""
    import pandas as pd

    from hpcds1mpi.cluster import Cluster, Partition
    from tests.fake_bundle import WIDE_SIZES, FakeBundle, isolate_user_files

    isolate_user_files(monkeypatch, tmp_path)
    hw = {"cores_per_node": 2, "memory_gb": 64.0, "gpus_per_node": 0, "gpu_memory_gb": 0.0,
          "max_nodes": 1}
    bundle = FakeBundle(workloads=("stencil", "needs32"), sizes=WIDE_SIZES,
                        partitions={"two": hw})
    bundle._measured_levels = {"needs32": _levels((1, 2, 3, 4))}
    frame = bundle.training_frame()
    base = frame[(frame["workload"] == "needs32") & (frame["threads"] == 1)
                 & (frame["precision"] == "fp64")]
    runs = [base.assign(ranks_per_node=r, status="ok" if r >= 3 else "failed")
            for r in (1, 2, 3, 4)]
    bundle._frame = pd.concat([frame[frame["workload"] != "needs32"], *runs],
                              ignore_index=True)
    part = Partition(name="two", **hw)
    return bundle, [(Cluster("lab", {"two": part}), part)]


@pytest.mark.parametrize("size", [1024, 4096])
def test_within_the_measured_sizes_the_refusal_names_nodes_of_more_cores(size, tmp_path,
                                                                          monkeypatch):
    """Was (s44 tester N2): inside the measured sizes, --emit refused with the generic "nothing
    to run ... or measure the job with hpcds1mpi sweep" (a sweep that would fail the same way),
    and the left-out list lacked the layouts every run of which failed."""
    from hpcds1mpi.decide.recommend import recommend
    from hpcds1mpi.decide.recommendation import emit_script, format_table
    from hpcds1mpi.errors import ConfigError

    bundle, places = _refusing_below_three(tmp_path, monkeypatch)
    rec = recommend(bundle, "needs32", size, places)
    assert rec.picked is None and not rec.calibration_steps
    with pytest.raises(ConfigError) as refused:
        emit_script(rec, "slurm", "./needs32 {size}")
    said = str(refused.value)
    assert said.startswith("no calibration sweep: the layouts that fit the node (")
    assert "failed at every size needs32 was measured at" in said
    assert said.endswith("the fix is nodes of more cores (--cluster)")
    assert "ranks per node 1: every run failed (6 of 6, at sizes 256-16384)" in rec.left_out
    assert "ranks per node 2: every run failed (6 of 6, at sizes 256-16384)" in format_table(rec)


def test_the_layouts_that_failed_are_read_from_the_runs_not_the_levels(tmp_path, monkeypatch):
    """s45 (tester B4): a bundle's measured levels now name the levels of ok runs only (3 and
    4 ranks per node here), so the layouts within the cores that ran and failed are read from
    its runs; from the levels, 1 and 2 ranks were said never run."""
    from hpcds1mpi.decide.recommend import recommend
    from hpcds1mpi.surrogates.levels import levels_from_frame

    bundle, places = _refusing_below_three(tmp_path, monkeypatch)
    bundle._measured_levels = levels_from_frame(bundle.training_frame())
    assert bundle._measured_levels["needs32"].ranks_per_node == (3, 4)
    rec = recommend(bundle, "needs32", 1024, places)
    said = [line for line in rec.left_out if line.startswith(NOTHING_FITS)]
    assert len(said) == 1 and ("ran ok only at 3, 4 ranks per node, and failed at 1, 2 (within "
                               "the cores)") in said[0]
