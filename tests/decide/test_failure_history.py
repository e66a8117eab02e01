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


def test_a_json_object_that_is_no_history_is_refused_not_replaced(tmp_path):
    """s47 tester M10: any JSON object was read as an empty history, and --record-failure
    replaced it (a user's settings.json, a bundle's manifest.json) with exit 0."""
    settings = tmp_path / "settings.json"
    settings.write_text('{"my_settings": {"x": 1, "keep": "this"}}')
    with pytest.raises(ConfigError, match="is not a failure history") as err:
        FailureHistory.load(settings).record("stencil", 28, "local")
    assert "\n" not in str(err.value)
    assert settings.read_text() == '{"my_settings": {"x": 1, "keep": "this"}}'
    empty = tmp_path / "empty.json"  # nothing in it to lose: a history, as before
    empty.write_text("{}")
    FailureHistory.load(empty).record("stencil", 28, "local")
    assert FailureHistory.load(empty).failed_on("stencil", 28, "local")


def test_a_history_inside_a_bundle_folder_is_refused(tmp_path):
    """s47 tester M10: a history written into a model bundle made it no bundle (learn and
    train --force refuse a folder with files a bundle does not have)."""
    from hpcds1mpi.errors import OutputError

    bundle = tmp_path / "model"
    bundle.mkdir()
    (bundle / "manifest.json").write_text(
        '{"format_version": 1, "targets": [], "feature_spec": {}}')
    for inside in (bundle / "failures.json", bundle / "sub" / "f.json"):
        with pytest.raises(OutputError, match="is inside the model bundle") as err:
            FailureHistory.load(inside).record("stencil", 28, "local")
        assert "\n" not in str(err.value)
    assert [p.name for p in bundle.iterdir()] == ["manifest.json"]
    beside = tmp_path / "failures.json"  # beside the bundle: written as before
    FailureHistory.load(beside).record("stencil", 28, "local")
    assert FailureHistory.load(beside).failed_on("stencil", 28, "local")


def test_a_fifo_is_refused_not_waited_on(tmp_path):
    import os

    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(ConfigError, match="not a regular file"):
        FailureHistory.load(tmp_path / "fifo")


def test_two_jobs_that_loaded_the_history_before_either_recorded_keep_both(tmp_path):
    """Each record rewrote the list it had loaded: of six jobs recording at once, two
    failures were lost (s26 tester m, 2)."""
    first = FailureHistory.load(tmp_path / "h.json")
    second = FailureHistory.load(tmp_path / "h.json")
    first.record("stencil", 64, "local")
    second.record("gemm", 96, "local")
    stored = FailureHistory.load(tmp_path / "h.json")
    assert [f["workload"] for f in stored.failures] == ["stencil", "gemm"]
    assert stored.failed_on("stencil", 64, "local") and stored.failed_on("gemm", 96, "local")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["h.json"]  # no lock file left


def test_jobs_recording_at_the_same_time_all_keep_their_failure(tmp_path):
    import subprocess
    import sys

    code = ("import sys; from hpcds1mpi.decide.failure_history import FailureHistory; "
            "FailureHistory.load(sys.argv[1]).record(sys.argv[2], 64, 'local')")
    procs = [subprocess.Popen([sys.executable, "-c", code, str(tmp_path / "h.json"), f"w{i}"])
             for i in range(6)]
    assert [proc.wait(timeout=120) for proc in procs] == [0] * 6
    stored = FailureHistory.load(tmp_path / "h.json")
    assert sorted(f["workload"] for f in stored.failures) == [f"w{i}" for i in range(6)]


def test_a_read_only_folder_is_one_line_naming_it_and_what_to_set(tmp_path):
    """mkdir's OSError reached the CLI as a traceback (s26 tester m, 4)."""
    import subprocess

    from hpcds1mpi.errors import OutputError

    ro = tmp_path / "ro"
    ro.mkdir()
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k,ro", "tmpfs", str(ro)],
                          capture_output=True, text=True, timeout=30)
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a read-only tmpfs here ({proc.stderr.strip()}); needs root")
    try:
        for path in (ro / "c" / "failures.json", ro / "failures.json"):
            with pytest.raises(OutputError) as err:
                FailureHistory.load(path).record("stencil", 96, "local")
            text = str(err.value)
            assert text.startswith(f"{path.parent}: cannot write the failure history (Read-only")
            assert "HPCDS1MPI_HISTORY" in text and "\n" not in text and err.value.exit_code == 2
    finally:
        subprocess.run(["umount", "-l", str(ro)], capture_output=True, timeout=30)


def test_no_home_is_one_line_and_creates_no_home(tmp_path, monkeypatch):
    """HOME=/nonexistent made mkdir(parents=True) build that home (s26 tester m, 13)."""
    from hpcds1mpi.errors import OutputError

    home = tmp_path / "nonexistent"
    monkeypatch.chdir(tmp_path)  # an empty HPCDS1MPI_CACHE was the current folder
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("HPCDS1MPI_HISTORY", raising=False)
    monkeypatch.setenv("HPCDS1MPI_CACHE", "")  # empty: as if unset
    assert FailureHistory.load().failures == []  # every recommend reads it: no history yet
    with pytest.raises(OutputError, match=f"HOME={home} is not an existing folder; set "
                                          "HPCDS1MPI_HISTORY") as err:
        FailureHistory.load().record("stencil", 96, "local")
    assert err.value.exit_code == 2 and not home.exists()


def test_a_failure_recorded_by_mistake_can_be_forgotten(tmp_path):
    """Was: no way back but editing the JSON; one wrong --record-failure ruled the partition
    out for the workload at that size and every larger one, for good (s27 tester S, 6)."""
    path = tmp_path / "f.json"
    FailureHistory.load(path).record("stencil", 32, "cpu", "c", "oom")
    FailureHistory.load(path).record("stencil", 64, "gpu", "c", "failed")
    FailureHistory.load(path).record("gemm", 32, "cpu", "c", "oom")
    history = FailureHistory.load(path)
    assert history.failed_on("stencil", 4000, "cpu", "c") is not None
    assert history.forget("stencil", "cpu", "c") == 1
    again = FailureHistory.load(path)
    assert again.failed_on("stencil", 4000, "cpu", "c") is None
    assert again.failed_on("stencil", 64, "gpu", "c") and again.failed_on("gemm", 32, "cpu", "c")
    assert again.forget("stencil", "cpu", "c") == 0
    assert FailureHistory.load(tmp_path / "none.json").forget("stencil", "cpu") == 0
    assert not (tmp_path / "none.json").exists()


def test_a_history_another_user_may_not_read_says_so_not_fix_or_delete(tmp_path, monkeypatch):
    """s34 tester U5: another user's 0600 history was "unreadable; fix or delete it"."""
    import os

    from tests.runtime.test_denied_access import as_nobody, needs_root  # noqa: F401

    if os.geteuid() != 0:
        pytest.skip("becomes another user: needs root")
    import tempfile

    shared = tempfile.mkdtemp(prefix="hpcds1mpi-history-", dir="/tmp")
    os.chmod(shared, 0o755)
    history = os.path.join(shared, "fail.json")
    with open(history, "w") as fh:
        fh.write('{"failures": []}')
    os.chmod(history, 0o600)
    monkeypatch.setenv("HPCDS1MPI_HISTORY", history)
    FailureHistory.load()  # imports what the child needs
    kind, said = as_nobody(FailureHistory.load)
    os.remove(history)
    os.rmdir(shared)
    assert kind == "raised" and said.startswith(
        f"ConfigError: failure history {history}: permission denied (you may not read it")
    assert "fix or delete" not in said and "set HPCDS1MPI_HISTORY to a file of your own" in said


def test_a_recorded_failure_stores_and_shows_its_time_with_its_zone(tmp_path):
    """s35 tester T7: --record-failure stored time.strftime("%Y-%m-%dT%H:%M:%S"), local with no
    zone, and recommend showed it beside the journal's UTC times. It is stored with its offset
    and shown in UTC, named; an entry written before (no zone) is read as the local time it
    was."""
    import datetime

    from tests.runtime.test_zoned_times import local_zone

    path = tmp_path / "h.json"
    path.write_text(json.dumps({"version": 1, "failures": [
        {"workload": "fft", "size": 8, "partition": "p", "cluster": "", "status": "oom",
         "time": "2026-12-06T14:59:00"}]}))
    with local_zone():  # +13:45 in December
        FailureHistory.load(path).record("gemm", 64, "p", "", "timeout")
        history = FailureHistory.load(path)
        old = history.failed_on("fft", 8, "p")
        new = history.failed_on("gemm", 64, "p")
    assert old["time"] == "2026-12-06 01:14:00 UTC"
    stored = json.loads(path.read_text())["failures"]
    assert stored[0]["time"] == "2026-12-06T14:59:00"  # the file keeps what it held
    assert stored[1]["time"].endswith("+00:00")
    shown = datetime.datetime.strptime(new["time"], "%Y-%m-%d %H:%M:%S UTC")
    utc_now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
    assert abs((utc_now - shown).total_seconds()) < 60
