"""Measured knob levels per workload: computed from training rows, stored beside the bundle,
read back (a damaged file is one line), and the offer that only names what was measured."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from hpcds1mpi.errors import ModelError
from hpcds1mpi.surrogates.levels import (LEVELS_FILE, MeasuredLevels, bundle_levels,
                                         levels_from_frame, measured_offer, read_levels,
                                         write_levels)


def runs() -> pd.DataFrame:
    rows = []
    for rpn in (1, 2):
        for threads in (1, 2):
            rows.append(dict(workload="myapp", kind="external", nodes=1, ranks_per_node=rpn,
                             threads=threads, device="cpu", precision="fp64", status="ok"))
            rows.append(dict(workload="stencil", kind="kernel", nodes=1, ranks_per_node=rpn,
                             threads=threads, device="cpu", precision="fp32", status="ok"))
    # Never really run: says nothing about the level.
    rows.append(dict(workload="myapp", kind="external", nodes=1, ranks_per_node=8, threads=1,
                     device="gpu", precision="bf16", status="unsupported"))
    return pd.DataFrame(rows)


def test_levels_come_from_the_rows_that_ran():
    levels = levels_from_frame(runs())
    app = levels["myapp"]
    assert app.external and app.precisions == ("fp64",) and app.devices == ("cpu",)
    assert app.threads == (1, 2) and app.ranks_per_node == (1, 2) and app.nodes == (1,)
    assert not levels["stencil"].external  # a kernel measured as a kernel


def test_a_kernel_name_with_external_rows_is_a_program():
    frame = runs()
    frame.loc[frame["workload"] == "stencil", "kind"] = "external"
    assert levels_from_frame(frame)["stencil"].external


def test_write_read_round_trip_and_damaged_file(tmp_path):
    levels = levels_from_frame(runs())
    write_levels(tmp_path, levels)
    assert read_levels(tmp_path) == levels
    (tmp_path / LEVELS_FILE).write_text("[1, 2")
    with pytest.raises(ModelError, match="unreadable.*retrain"):
        read_levels(tmp_path)
    (tmp_path / LEVELS_FILE).write_text(json.dumps({"myapp": {"workload": "myapp"}}))
    with pytest.raises(ModelError, match=LEVELS_FILE):
        read_levels(tmp_path)
    (tmp_path / LEVELS_FILE).unlink()
    assert read_levels(tmp_path) is None  # an older bundle


def test_offer_names_every_level_left_out():
    app = MeasuredLevels("myapp", True, ("fp64",), ("cpu",), (1, 2), (1, 2), (1,))
    offer = measured_offer(app, ["cpu", "gpu"], 8)
    assert offer.precisions == ["fp64"] and offer.devices == ["cpu"]
    assert offer.threads == [1, 2] and offer.max_ranks_per_node == 2
    assert "bf16: never measured for this program" in offer.left_out
    assert "fp32: never measured for this program" in offer.left_out
    assert "gpu: never measured for this program" in offer.left_out
    assert "threads 3-8: never measured for this program (measured 1, 2)" in offer.left_out
    assert any(t.startswith("ranks per node above 2") for t in offer.left_out)
    # A CPU-only place: the GPU is not "left out", it was never on offer.
    assert not any(t.startswith("gpu") for t in measured_offer(app, ["cpu"], 8).left_out)


class _Stub:
    def __init__(self, frame):
        self._frame = frame

    def training_data(self):
        return self._frame


def test_bundle_levels_only_restrict_programs():
    bundle = _Stub(runs())
    assert bundle_levels(bundle, "myapp").precisions == ("fp64",)
    assert bundle_levels(bundle, "stencil") is None  # declared knobs
    assert bundle_levels(bundle, "never-seen") is None
