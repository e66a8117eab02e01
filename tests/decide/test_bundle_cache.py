"""What does not depend on the question is computed once per bundle (decide/bundle_cache.py):
the training frame, the guard's reference and the memory limits; answers stay the same."""

from __future__ import annotations

import json

import pytest

from hpcds1mpi.decide import bundle_cache
from hpcds1mpi.decide import recommend as rec_mod
from hpcds1mpi.decide.guard import build_reference, reference
from hpcds1mpi.decide.memory_limits import learn_limits, learn_memory_limits
from hpcds1mpi.decide.recommendation import to_dict
from tests.fake_bundle import WIDE_SIZES, FakeBundle, fake_partitions, fake_places, \
    isolate_user_files


@pytest.fixture(autouse=True)
def isolated_cache(tmp_path, monkeypatch):
    isolate_user_files(monkeypatch, tmp_path)


class Counting(FakeBundle):
    """The fake bundle, counting how often the question-independent work is asked for."""

    def __init__(self, **kw):
        super().__init__(**kw)
        self.frames = 0
        self.predicted_rows = []

    def training_frame(self):
        self.frames += 1
        return super().training_frame()

    def predict(self, df):
        self.predicted_rows.append(len(df))
        return super().predict(df)


def test_second_question_reads_no_training_frame_and_predicts_only_its_candidates():
    bundle = Counting(sizes=WIDE_SIZES)
    places = fake_places("gpu-small", "gpu-big", "cpu")
    first = rec_mod.recommend(bundle, "gemm", 2048, places)
    frames, calls = bundle.frames, len(bundle.predicted_rows)
    # (the fake's own training_matrix reads its frame too)
    assert frames <= 2  # not once per use: guard reference, memory limits, energy label
    bundle.predicted_rows.clear()
    second = rec_mod.recommend(bundle, "gemm", 3000, places)
    assert bundle.frames == frames
    # Only the question's own candidates are predicted: no out-of-memory rows again.
    assert len(bundle.predicted_rows) < calls
    assert second.picked is not None and first.picked is not None


def test_kept_values_give_the_same_answer_as_computing_each_time():
    places = fake_places("gpu-small", "gpu-big", "cpu")
    warm = FakeBundle(sizes=WIDE_SIZES)
    rec_mod.recommend(warm, "fft", 1000, places)  # fills the cache
    for workload, size, objective in (("gemm", 13000, "time"), ("stencil", 700, "energy"),
                                      ("fft", 5000, "balanced")):
        cold = FakeBundle(sizes=WIDE_SIZES)
        a = rec_mod.recommend(warm, workload, size, places, objective=objective)
        b = rec_mod.recommend(cold, workload, size, places, objective=objective)
        assert json.dumps(to_dict(a), sort_keys=True, default=str) == \
            json.dumps(to_dict(b), sort_keys=True, default=str)


def test_each_bundle_and_partition_set_has_its_own_values_and_callers_get_copies():
    parts = list(fake_partitions().values())
    one, two = FakeBundle(), FakeBundle(sizes=WIDE_SIZES)
    assert reference(one) is reference(one)
    assert reference(one) is not reference(two)
    assert len(reference(two).matrix) == len(build_reference(two).matrix)
    limits = learn_memory_limits(one, parts)
    assert limits == learn_limits(one, parts)
    limits["gpu-small"].gpu_mb = 1.0  # a caller's change stays with that caller
    assert learn_memory_limits(one, parts)["gpu-small"].gpu_mb > 1.0
    assert set(learn_memory_limits(one, parts[:1])) == {parts[0].name}


def test_an_object_without_weak_references_is_computed_every_time():
    calls = []
    assert bundle_cache.memo(3, "k", lambda: calls.append(1) or len(calls)) == 1
    assert bundle_cache.memo(3, "k", lambda: calls.append(1) or len(calls)) == 2
    bundle = FakeBundle()
    assert bundle_cache.memo(bundle, "k", lambda: "a") == "a"
    bundle_cache.forget(bundle)
    assert bundle_cache.memo(bundle, "k", lambda: "b") == "b"


def _query_frame_as_before(bundle, ref, workload, size, partition_name):
    """guard.query_frame as it was before the placed configurations were kept."""
    import pandas as pd

    from hpcds1mpi.decide.trained_hardware import hardware_columns, trained_partitions

    q = ref.configs.to_frame()  # the reference keeps plain arrays (Columns)
    if partition_name is not None:
        q["partition"] = partition_name
    q.insert(0, "size", size)
    q.insert(0, "workload", workload)
    hw = trained_partitions(bundle)
    q = hardware_columns(q, hw)
    if partition_name is not None:
        gpus = (hw.get(partition_name) or {}).get("gpus_per_node", 0) or 0
        q = q[(q["device"] != "gpu") | (q["ranks_per_node"] <= gpus)]
    return pd.DataFrame(q).reset_index(drop=True)


def test_guard_query_is_the_same_frame_as_building_it_each_time():
    import pandas as pd

    from hpcds1mpi.decide.guard import job_distance, query_frame

    bundle = FakeBundle(sizes=WIDE_SIZES)
    ref = reference(bundle)
    for part in (None, "cpu", "gpu-small", "gpu-big", "cpu", None):
        for workload, size in (("gemm", 300), ("stencil", 5000.0), ("unknown", 7)):
            pd.testing.assert_frame_equal(
                query_frame(bundle, ref, workload, size, part),
                _query_frame_as_before(bundle, ref, workload, size, part))
    q = query_frame(bundle, ref, "gemm", 300, "cpu")
    q["size"] = -1  # a caller's change does not reach the kept configurations
    assert (query_frame(bundle, ref, "gemm", 300, "cpu")["size"] == 300).all()
    assert job_distance(bundle, ref, "fft", 1000, "gpu-big") == job_distance(
        bundle, build_reference(bundle), "fft", 1000, "gpu-big")


def test_guard_calibration_is_read_once_until_the_file_changes(tmp_path, monkeypatch):
    from pathlib import Path

    from hpcds1mpi.decide import guard

    bundle = FakeBundle(sizes=WIDE_SIZES)
    cal = guard.calibrate(bundle)
    (tmp_path / guard.CALIBRATION_FILE).write_text(json.dumps(cal.as_dict()))
    reads = []
    original = Path.read_text
    monkeypatch.setattr(Path, "read_text", lambda self, *a, **k: reads.append(self.name)
                        or original(self, *a, **k))
    first = guard.load_calibration(bundle, tmp_path)
    first.auto_threshold = -1.0  # a caller's copy
    second = guard.load_calibration(bundle, tmp_path)
    assert reads.count(guard.CALIBRATION_FILE) == 1
    assert second.auto_threshold == cal.auto_threshold
    changed = dict(cal.as_dict(), auto_threshold=cal.auto_threshold / 2, source="x" * 3)
    (tmp_path / guard.CALIBRATION_FILE).write_text(json.dumps(changed))
    assert guard.load_calibration(bundle, tmp_path).auto_threshold == cal.auto_threshold / 2


def test_measured_levels_are_read_once_per_bundle_kernels_included():
    from hpcds1mpi.decide.model_bundle import load_model

    bundle = load_model(None)
    levels = bundle_cache.measured_levels(bundle)
    assert bundle_cache.measured_levels(bundle) is levels  # kept
    assert levels["stencil"].nodes == (1,) and not levels["stencil"].external

    class NoRows:  # a stand-in that cannot say: nothing is known measured
        def training_frame(self):
            raise OSError("no rows")

    assert bundle_cache.measured_levels(NoRows()) == {}


def test_columns_a_bundles_frame_file_predates_are_read_from_its_rows_once(monkeypatch):
    """The shipped bundle's frame file predates the launch columns (s48): asked for them, its
    rows are read for those columns alone, once per bundle; not asked, they are not read."""
    from hpcds1mpi.decide.model_bundle import load_model
    from hpcds1mpi.surrogates import bundle as bundle_mod

    reads = []
    original = bundle_mod.read_training_rows
    monkeypatch.setattr(bundle_mod, "read_training_rows",
                        lambda path, columns=None: reads.append(columns) or original(path, columns))
    bundle = load_model(None)
    plain = bundle_cache.training_columns(bundle)
    assert "elapsed_s" not in plain and reads == []
    need = ("workload", "kind", "elapsed_s", "measured_s")
    full = bundle_cache.training_columns(bundle, need)
    assert bundle_cache.training_columns(bundle, need) is full  # kept
    assert reads == [("kind", "elapsed_s", "measured_s")]  # only what the file lacks, once
    assert len(full) == len(plain) and set(plain.columns) < set(full.columns)
    assert bundle_cache.training_columns(bundle) is plain  # the others' columns unchanged
