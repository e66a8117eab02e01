"""The stamps of the inputs a program's runs read, kept per workload in the bundle's manifest
(:mod:`hpcds1mpi.surrogates.measured_inputs`; s48 tester O4: train copied none, so recommend
could not tell an edited input from the measured one)."""

from __future__ import annotations

import json
import math

import pandas as pd

from hpcds1mpi.surrogates.measured_inputs import COLUMN, KEY, measured_inputs, recorded_inputs

A = [14, 100.0, "a" * 64]
B = [16, 150.0, "b" * 64]


def _rows() -> pd.DataFrame:
    first = json.dumps({"/w/in1.txt": A, "/w/in2.txt": A})
    again = json.dumps({"/w/in1.txt": B})  # another sweep of the label, after an edit
    return pd.DataFrame([
        dict(workload="app", finished_at=120.0, **{COLUMN: first}),
        dict(workload="app", finished_at=200.0, **{COLUMN: again}),
        dict(workload="app", finished_at=210.0, **{COLUMN: first}),
        dict(workload="app", finished_at=900.0, **{COLUMN: None}),  # merged from elsewhere
        dict(workload="stencil", finished_at=50.0, **{COLUMN: None}),
        dict(workload="bad", finished_at=50.0, **{COLUMN: "not json"}),
        dict(workload="unended", finished_at=math.nan, **{COLUMN: first})])


def test_each_workloads_stamps_and_the_end_of_its_stamped_runs_are_kept():
    kept = measured_inputs(_rows())
    assert kept == {KEY: {"app": {"files": {"/w/in1.txt": [A, B], "/w/in2.txt": [A]},
                                  "until": 210.0}}}
    json.dumps(kept)  # the manifest is JSON


def test_rows_without_stamps_keep_no_entry():
    """Kernels, job logs and telemetry from before the stamps: the manifest gets no key."""
    assert measured_inputs(_rows().drop(columns=[COLUMN])) == {}
    assert measured_inputs(_rows().assign(**{COLUMN: None})) == {}
    assert measured_inputs(_rows().drop(columns=["finished_at"])) == {}


class _Bundle:
    def __init__(self, manifest):
        self.manifest = manifest


def test_the_recorded_stamps_are_read_back_and_anything_else_is_none():
    manifest = measured_inputs(_rows())
    files, until = recorded_inputs(_Bundle(manifest), "app")
    assert files == {"/w/in1.txt": [A, B], "/w/in2.txt": [A]} and until == 210.0
    for bundle, workload in ((_Bundle(manifest), "stencil"), (_Bundle({}), "app"),
                             (_Bundle({KEY: {"app": {"files": {}}}}), "app"),
                             (_Bundle({KEY: {"app": []}}), "app"), (object(), "app")):
        assert recorded_inputs(bundle, workload) is None
    damaged = {KEY: {"app": {"files": {"/w/x": [[1, 2], A, "x"]}, "until": 5}}}
    assert recorded_inputs(_Bundle(damaged), "app") == ({"/w/x": [A]}, 5.0)


def test_a_trained_bundle_keeps_them_in_its_manifest_and_rows(tmp_path):
    """train: the rows' stamps reach the manifest, which loads back (its schema knows the key),
    and the rows keep their column, which learn retrains on."""
    from hpcds1mpi.surrogates.bundle import load_bundle, train_bundle
    from tests.surrogates.test_bundle import make_runs

    runs = make_runs(workloads=("app",))
    runs["kind"], runs["finished_at"] = "external", 1000.0
    runs[COLUMN] = json.dumps({"/w/in32.txt": A})
    bundle = train_bundle(runs, n_members=1, member_trees=5, use_embedding=False, threads=1)
    assert bundle.manifest[KEY] == {"app": {"files": {"/w/in32.txt": [A]}, "until": 1000.0}}
    bundle.save(tmp_path / "model")
    loaded = load_bundle(tmp_path / "model")
    assert recorded_inputs(loaded, "app") == ({"/w/in32.txt": [A]}, 1000.0)
    assert set(loaded.training_data()[COLUMN]) == {json.dumps({"/w/in32.txt": A})}
