"""Merging telemetry shards."""

from __future__ import annotations

import time

import h5py

from hpcds1mpi.records import telemetry
from tests.records.telemetry.rows import run_row


def test_merge_idempotent_with_provenance(tmp_path):
    a, b, out = tmp_path / "a.h5", tmp_path / "b.h5", tmp_path / "all.h5"
    telemetry.append(a, [run_row(0, "m1"), run_row(1, "m1", status="crashed")])
    telemetry.append(b, [run_row(0, "m2"), run_row(1, "m1", finished_at=time.time() + 5)])
    first = telemetry.merge([a, b], out)
    assert first["rows"] == 3
    again = telemetry.merge([a, b], out)
    assert again["rows"] == 3 and again["added"] == 0
    df = telemetry.read_runs(out).set_index(["machine_id", "run_id"])
    assert df.loc[("m1", "r001"), "status"] == "ok"  # finished beats crashed
    assert df.loc[("m1", "r001"), "source_file"] == "b.h5"
    assert df.loc[("m2", "r000"), "source_file"] == "b.h5"
    assert df.loc[("m1", "r000"), "source_file"] == "a.h5"
    with h5py.File(out) as f:
        sources = [s.decode() for s in f["provenance/source_file"][()]]
    assert sorted(sources) == ["a.h5", "b.h5"]
