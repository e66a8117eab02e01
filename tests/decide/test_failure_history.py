"""The failure history: what it rules out, how it is stored, and an unreadable file."""

from __future__ import annotations

import json

import pytest

from hpcds1mpi.decide.failure_history import FailureHistory, default_history_path
from hpcds1mpi.errors import ConfigError


def test_a_failure_rules_out_that_size_and_larger_on_that_partition(tmp_path):
    history = FailureHistory.load(tmp_path / "h.json")
    assert history.failures == []
    history.record("gemm", 2048, "gpu-small", "lab", "oom")
    again = FailureHistory.load(tmp_path / "h.json")
    hit = again.failed_on("gemm", 4096, "gpu-small", "lab")
    assert hit is not None and hit["status"] == "oom"
    assert again.failed_on("gemm", 2048, "gpu-small") is not None  # no cluster given: any
    assert again.failed_on("gemm", 1024, "gpu-small", "lab") is None  # smaller still fits
    assert again.failed_on("gemm", 4096, "gpu-big", "lab") is None
    assert again.failed_on("fft", 4096, "gpu-small", "lab") is None
    assert again.failed_on("gemm", 4096, "gpu-small", "other-cluster") is None
    stored = json.loads((tmp_path / "h.json").read_text())
    assert stored["version"] == 1 and len(stored["failures"]) == 1
    assert not (tmp_path / "h.tmp").exists()


def test_unreadable_history_is_a_config_error(tmp_path):
    path = tmp_path / "h.json"
    path.write_text("{not json")
    with pytest.raises(ConfigError, match="unreadable"):
        FailureHistory.load(path)


def test_default_path_follows_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("HPCDS1MPI_HISTORY", str(tmp_path / "x.json"))
    assert default_history_path() == tmp_path / "x.json"
    monkeypatch.delenv("HPCDS1MPI_HISTORY")
    monkeypatch.setenv("HPCDS1MPI_CACHE", str(tmp_path / "cache"))
    assert default_history_path() == tmp_path / "cache" / "failures.json"


def test_recording_leaves_every_other_file_alone(tmp_path):
    """The writer used PATH.tmp as its temporary: a user's hist.tmp beside hist.json was
    overwritten, then renamed away."""
    (tmp_path / "hist.tmp").write_text("precious notes")
    history = FailureHistory.load(tmp_path / "hist.json")
    history.record("stencil", 300, "local")
    assert (tmp_path / "hist.tmp").read_text() == "precious notes"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hist.json", "hist.tmp"]
    assert FailureHistory.load(tmp_path / "hist.json").failed_on("stencil", 300, "local")


@pytest.mark.parametrize("content, fragment", [
    ('{"failures": 5}', "'failures' is not a list"),
    ('{"failures": [{"workload": "s", "partition": "p", "size": "big"}]}', "entry 0: size 'big'"),
    ('{"failures": [{"workload": "s", "partition": "p", "size": null}]}', "entry 0: size None"),
    ('{"failures": [{"workload": "s", "partition": "p", "size": 1e400}]}', "entry 0: size inf"),
    ("[" * 100000 + "]" * 100000, "unreadable; fix or delete it"),
])
def test_wrong_typed_or_hostile_content_is_one_config_error(tmp_path, content, fragment):
    path = tmp_path / "h.json"
    path.write_text(content)
    with pytest.raises(ConfigError, match="is unreadable") as err:
        FailureHistory.load(path)
    assert fragment in str(err.value) and "\n" not in str(err.value)


def test_a_fifo_is_refused_not_waited_on(tmp_path):
    import os

    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(ConfigError, match="not a regular file"):
        FailureHistory.load(tmp_path / "fifo")
