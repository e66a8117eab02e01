"""recommend says in one line where the pick's memory was not judged, in train's words."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from hpcds1mpi.cluster import Partition
from hpcds1mpi.decide.memory_judged import memory_note

PART = Partition("debug", cores_per_node=2, memory_gb=4.0, max_nodes=1)


def _runs(workload: str, measured) -> list[dict]:
    rows = []
    for size in (1, 2, 3):
        for rpn in (1, 2):
            runtime = 0.4 * size / rpn ** 0.5
            rows.append(dict(
                run_id=f"{workload}-{size}-{rpn}", machine_id="m0", workload=workload,
                kind="external", size=size, nodes=1, ranks_per_node=rpn, ranks=rpn, threads=1,
                device="cpu", precision="fp64", status="ok", error="", runtime_s=runtime,
                peak_rss_mb=100.0 + 10 * size if measured(size, rpn) else np.nan,
                energy_j=runtime * 20, avg_power_w=20.0, energy_source="modelled",
                partition="debug", cores_per_node=2, memory_gb=4.0, gpus_per_node=0))
    return rows


def _trained(tmp_path, rows: list[dict]):
    from hpcds1mpi.surrogates.bundle import load_bundle, train_bundle

    bundle = train_bundle(pd.DataFrame(rows), seed=1, n_members=2, use_embedding=False,
                          threads=1)
    bundle.save(tmp_path / "model")
    return load_bundle(tmp_path / "model")


def _answer(bundle, tmp_path, workload: str):
    from hpcds1mpi.decide import recommend as rec_mod
    from hpcds1mpi.decide.recommendation import format_table, to_dict

    rec = rec_mod.recommend(bundle, workload, 2, [(None, PART)], model_dir=tmp_path / "model")
    assert rec.picked is not None
    return rec, format_table(rec), json.loads(json.dumps(to_dict(rec), default=str))


def test_a_bundle_without_a_memory_target_says_memory_was_not_judged(tmp_path):
    """s37 tester K4: train said the target was left out, recommend said nothing (before: no
    line in the text or the JSON); now one line, with train's count and where to look."""
    bundle = _trained(tmp_path, _runs("h2o", lambda size, rpn: (size, rpn) == (1, 1)))
    assert "peak_rss_mb" not in bundle.manifest["targets"]
    rec, text, answer = _answer(bundle, tmp_path, "h2o")
    line = ("memory was not judged: the bundle learnt no peak_rss_mb target; 1 of 6 ok run(s) "
            "measured it, at least 2 are needed (the runs' `telemetry export` says why each was "
            "not measured)")
    assert [n for n in rec.notes if n.startswith("memory ")] == [line]
    assert text.count(line) == 1 and f"  note: {line}" in text
    assert answer["notes"].count(line) == 1


def test_a_workload_whose_runs_never_measured_memory_says_whose_runs_judged_it(tmp_path):
    bundle = _trained(tmp_path, _runs("h2o", lambda size, rpn: True)
                      + _runs("ch4", lambda size, rpn: False))
    assert "peak_rss_mb" in bundle.manifest["targets"]
    rec, _, _ = _answer(bundle, tmp_path, "ch4")
    assert [n for n in rec.notes if n.startswith("memory ")] == [
        "memory was judged from other workloads' runs only: 0 of 6 ok run(s) of ch4 measured it "
        "(the runs' `telemetry export` says why each was not measured)"]
    rec, _, _ = _answer(bundle, tmp_path, "h2o")  # its own runs measured it: nothing to say
    assert not [n for n in rec.notes if n.startswith("memory ")]


@pytest.mark.parametrize("need, said", [
    (math.nan, "memory was not judged: "),
    (512.0, "memory was judged by gemm's declared working set only: ")])
def test_a_declared_working_set_is_said_to_be_all_that_was_judged(need, said):
    """A stand-in bundle (no training rows): the count is not known, the line still stands."""
    line = memory_note(object(), "gemm", {"peak_rss_mb": math.nan, "mem_need_mb": need})
    assert line == (f"{said}the bundle learnt no peak_rss_mb target; too few runs measured it, "
                    "at least 2 are needed (the runs' `telemetry export` says why each was not "
                    "measured)")
