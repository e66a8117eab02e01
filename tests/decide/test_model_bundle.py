"""Loading a model bundle: every failure is one line of ModelError."""

from __future__ import annotations

import sys

import pytest

from hpcds1mpi.decide.model_bundle import DEFAULT_MODEL, load_model
from hpcds1mpi.errors import ModelError


def test_load_model_wraps_loader_exceptions(tmp_path, monkeypatch):
    import types

    fake = types.ModuleType("hpcds1mpi.surrogates.bundle")

    def boom(path):
        raise ValueError("unpickling failed\nsecond line")

    fake.load_bundle = boom
    monkeypatch.setitem(sys.modules, "hpcds1mpi.surrogates.bundle", fake)
    with pytest.raises(ModelError) as info:
        load_model(tmp_path)
    assert "\n" not in str(info.value) and "unpickling failed" in str(info.value)


def test_missing_bundle_says_which_and_what_to_do(tmp_path, monkeypatch):
    with pytest.raises(ModelError, match="not found; pass --model"):
        load_model(tmp_path / "nope")
    # Without --model the shipped bundle is read; where none is shipped, the error says so.
    import hpcds1mpi.decide.model_bundle as model_bundle

    monkeypatch.setattr(model_bundle, "DEFAULT_MODEL", tmp_path / "absent")
    with pytest.raises(ModelError, match="no default model shipped"):
        model_bundle.load_model(None)
    assert DEFAULT_MODEL.parts[-3:] == ("hpcds1mpi", "data", "default_model")


def test_a_file_given_as_the_bundle_is_called_a_file(tmp_path):
    """`recommend --model garbage.h5` (a file that exists) had said "model bundle garbage.h5 not
    found" (s29 tester E6)."""
    import subprocess

    from tests.helpers import hpcds1mpi_exe

    (tmp_path / "garbage.h5").write_bytes(b"not a bundle")
    proc = subprocess.run([hpcds1mpi_exe(), "recommend", "--workload", "stencil", "--size",
                           "300", "--model", "garbage.h5"], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert proc.stderr.strip() == (
        "hpcds1mpi: error: garbage.h5: a file, not a model bundle folder; pass --model DIR, the "
        "folder `hpcds1mpi train --telemetry FILE --out DIR` wrote")


@pytest.mark.parametrize("empty", ["", "  "])
def test_an_empty_path_is_refused_not_read_as_the_shipped_bundle(empty):
    """s37 tester P5: load_model("") loaded the shipped bundle; only None means it."""
    with pytest.raises(ModelError, match="path is empty; pass --model DIR, or leave it out"):
        load_model(empty)
