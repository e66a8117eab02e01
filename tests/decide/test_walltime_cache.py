"""The fitted walltime model kept in the user's cache: fitted once per history, read only from
a private file, refitted on anything else (s34 tester S4)."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest

from hpcds1mpi.decide import walltime_cache
from hpcds1mpi.decide.walltime import propose_walltime
from hpcds1mpi.decide.walltime_cache import KEEP, cached_fit
from tests.records.ingest.joblogs import GAIA, needs_joblogs, swf_slice

SMALL = {"n_estimators": 40}


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HPCDS1MPI_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache" / "walltime-models"


GROUPS = ("user", "request")


def _rows(n=50, shift=0.0):
    """A history and the rows a fit learns from."""
    history = pd.DataFrame({"user": ["u"] * n, "partition": ["batch"] * n,
                            "time_limit_s": np.arange(1, n + 1) + shift,
                            "runtime_s": np.arange(1, n + 1, dtype=float),
                            "job_id": [str(i) for i in range(n)]})
    return history, np.arange(n - 5)


class Fits:
    """A fit that counts how often it ran."""

    def __init__(self):
        self.n = 0

    def __call__(self):
        self.n += 1
        return {"fitted": self.n}


def test_the_same_rows_fit_once(cache):
    fits = Fits()
    history, rows = _rows()
    assert cached_fit(history, GROUPS, rows, SMALL, fits) == {"fitted": 1}
    assert cached_fit(history.copy(), GROUPS, rows.copy(), dict(SMALL), fits) == {"fitted": 1}
    assert fits.n == 1
    (model,) = cache.glob("*.pkl")
    assert oct(model.stat().st_mode & 0o777) == "0o600"
    assert oct(cache.stat().st_mode & 0o777) == "0o700"


@pytest.mark.parametrize("change", ["row", "runtime", "rows", "groups", "args", "code"])
def test_anything_the_fit_depends_on_fits_again(cache, monkeypatch, change):
    fits = Fits()
    history, rows = _rows()
    groups = GROUPS
    cached_fit(history, groups, rows, SMALL, fits)
    args = dict(SMALL)
    if change == "row":
        history.loc[3, "partition"] = "gpu"
    elif change == "runtime":
        history["runtime_s"] *= 1.01
    elif change == "rows":  # another submit time: more jobs finished by then
        rows = np.arange(len(history))
    elif change == "groups":  # the new job has a name where the history had none
        groups = ("user", "name", "request")
    elif change == "args":
        args["coverage"] = 0.9
    else:  # another version of the code that fits it
        stamp = walltime_cache._code_stamp()
        monkeypatch.setattr(walltime_cache, "_code_stamp", lambda: stamp + "+edited")
    assert cached_fit(history, groups, rows, args, fits) == {"fitted": 2}


def test_no_cache_folder_fits_every_time(monkeypatch, tmp_path):
    monkeypatch.delenv("HPCDS1MPI_CACHE", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "nonexistent"))
    fits = Fits()
    history, rows = _rows()
    cached_fit(history, GROUPS, rows, SMALL, fits)
    cached_fit(history, GROUPS, rows, SMALL, fits)
    assert fits.n == 2 and not (tmp_path / "nonexistent").exists()


def test_a_damaged_file_is_fitted_anew_and_replaced(cache):
    fits = Fits()
    history, rows = _rows()
    cached_fit(history, GROUPS, rows, SMALL, fits)
    (model,) = cache.glob("*.pkl")
    model.write_bytes(b"\x80\x05truncated")
    assert cached_fit(history, GROUPS, rows, SMALL, fits) == {"fitted": 2}
    assert cached_fit(history, GROUPS, rows, SMALL, fits) == {"fitted": 2}  # the new one is kept


def test_a_file_others_can_write_is_never_unpickled(cache):
    # Unpickling runs code: a model file (or its folder) another user could have written is a
    # way into this user's account, so it is fitted anew instead.
    fits = Fits()
    history, rows = _rows()
    cached_fit(history, GROUPS, rows, SMALL, fits)
    (model,) = cache.glob("*.pkl")
    model.chmod(0o620)
    assert cached_fit(history, GROUPS, rows, SMALL, fits) == {"fitted": 2}
    cache.chmod(0o777)
    assert cached_fit(history, GROUPS, rows, SMALL, fits) == {"fitted": 3}
    assert oct(cache.stat().st_mode & 0o777) == "0o777"  # not ours to change; nothing kept


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give the file to another user")
def test_another_users_file_is_never_unpickled(cache):
    fits = Fits()
    history, rows = _rows()
    cached_fit(history, GROUPS, rows, SMALL, fits)
    (model,) = cache.glob("*.pkl")
    os.chown(model, 65534, 65534)
    assert cached_fit(history, GROUPS, rows, SMALL, fits) == {"fitted": 2}


def test_a_cache_that_cannot_be_written_costs_a_fit_not_the_answer(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("HPCDS1MPI_CACHE", str(blocker))
    fits = Fits()
    history, rows = _rows()
    assert cached_fit(history, GROUPS, rows, SMALL, fits) == {"fitted": 1}
    assert blocker.read_text() == "not a folder"


def _at(shift):
    history, rows = _rows(shift=shift)
    return history, GROUPS, rows


def test_a_column_the_features_do_not_read_is_no_other_history(cache):
    """A log copied elsewhere (its source_file), renumbered (job ids): the same fit."""
    fits = Fits()
    history, rows = _rows()
    cached_fit(history, GROUPS, rows, SMALL, fits)
    moved = history.assign(job_id=[f"x{i}" for i in range(len(history))], source_file="/b")
    assert cached_fit(moved, GROUPS, rows, SMALL, fits) == {"fitted": 1}


def test_the_least_recently_used_go_first(cache):
    fits = Fits()
    for shift in range(KEEP + 2):
        cached_fit(*_at(shift), SMALL, fits)
        os.utime(max(cache.glob("*.pkl"), key=lambda p: p.stat().st_mtime_ns),
                 ns=(shift * 10**9, shift * 10**9))  # distinct ages on a coarse clock
    assert len(list(cache.glob("*.pkl"))) == KEEP
    before = fits.n
    cached_fit(*_at(KEEP + 1), SMALL, fits)  # the newest is still there
    cached_fit(*_at(0), SMALL, fits)  # the oldest is not
    assert fits.n == before + 1


@needs_joblogs
def test_a_second_proposal_reads_the_fitted_model(cache, tmp_path, monkeypatch):
    history = swf_slice(GAIA, tmp_path / "gaia.swf", jobs=3000)
    from hpcds1mpi.records.ingest import read_job_log
    from hpcds1mpi.surrogates.job_runtime import RuntimePredictor

    table = read_job_log(history)[0]
    user = str(table["user"].value_counts().index[0])
    fit, calls = RuntimePredictor.fit, []
    monkeypatch.setattr(RuntimePredictor, "fit",
                        lambda self, *a, **k: calls.append(1) or fit(self, *a, **k))
    first = propose_walltime(table, user, time_limit_s=86400.0, predictor_args=SMALL)
    # Another job of the same user (other request, nodes): the same history, the same model.
    second = propose_walltime(table, user, time_limit_s=3600.0, nodes=2, predictor_args=SMALL)
    again = propose_walltime(table, user, time_limit_s=86400.0, predictor_args=SMALL)
    assert len(calls) == 1
    assert again.to_dict() == first.to_dict() and second.time_s <= 3600.0
    monkeypatch.setenv("HPCDS1MPI_CACHE", str(tmp_path / "elsewhere"))
    assert propose_walltime(table, user, time_limit_s=86400.0,
                            predictor_args=SMALL).to_dict() == first.to_dict()  # refitted
    assert len(calls) == 2


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give the folder to another user")
def test_a_folder_swapped_in_by_another_user_is_never_read(cache):
    # s35 review: the folder was checked by name and opened by name again; one another user
    # swapped in between had their pickle run. Read through descriptors, their folder is theirs.
    fits = Fits()
    history, rows = _rows()
    cached_fit(history, GROUPS, rows, SMALL, fits)
    (model,) = cache.glob("*.pkl")
    theirs = cache.parent / "theirs"
    cache.rename(theirs)
    os.chown(theirs, 65534, 65534)
    theirs.rename(cache)  # their folder, holding the very file name the key asks for
    assert cached_fit(history, GROUPS, rows, SMALL, fits) == {"fitted": 2}


def test_a_linked_folder_or_file_is_never_read(cache, tmp_path):
    fits = Fits()
    history, rows = _rows()
    cached_fit(history, GROUPS, rows, SMALL, fits)
    real = tmp_path / "real"
    cache.rename(real)
    cache.symlink_to(real)
    assert cached_fit(history, GROUPS, rows, SMALL, fits) == {"fitted": 2}


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give the folder to another user")
def test_a_folder_swapped_while_it_is_checked_is_never_read(cache, monkeypatch):
    # s35 review: checked by name (lstat) and opened by name again, a folder another user swaps
    # in between had its pickle loaded. Their folder is put in place the moment a name is
    # checked: read through descriptors, what is read is what was checked.
    import pickle

    fits = Fits()
    history, rows = _rows()
    cached_fit(history, GROUPS, rows, SMALL, fits)
    (model,) = cache.glob("*.pkl")
    theirs = cache.parent / "theirs"
    theirs.mkdir()
    (theirs / model.name).write_bytes(pickle.dumps({"planted": True}))
    os.chown(theirs / model.name, 65534, 65534)
    os.chown(theirs, 65534, 65534)
    real_lstat, checked = os.lstat, []

    def swapping_lstat(path, *args, **kwargs):
        answer = real_lstat(path, *args, **kwargs)
        if str(path).startswith(str(cache)):
            checked.append(path)
        if len(checked) == 2 and theirs.exists():
            # the folder and the file passed: now theirs takes its place
            cache.rename(cache.parent / "mine")
            theirs.rename(cache)
        return answer

    monkeypatch.setattr(walltime_cache.os, "lstat", swapping_lstat)
    assert cached_fit(history, GROUPS, rows, SMALL, fits) != {"planted": True}


def test_a_file_of_another_object_is_fitted_anew(cache):
    # s39 tester C6: a private cache file that unpickled to a dict ended recommend in
    # "AttributeError: 'dict' object has no attribute 'walltime_'"; a damaged one was refitted.
    import pickle

    fits = Fits()
    history, rows = _rows()

    def fitted(model):
        return isinstance(model, dict) and "fitted" in model

    cached_fit(history, GROUPS, rows, SMALL, fits, fitted)
    (model,) = cache.glob("*.pkl")
    model.write_bytes(pickle.dumps({"x": 1}))
    assert cached_fit(history, GROUPS, rows, SMALL, fits, fitted) == {"fitted": 2}
    assert cached_fit(history, GROUPS, rows, SMALL, fits, fitted) == {"fitted": 2}


def test_a_proposal_refits_over_a_file_of_another_object(cache, tmp_path):
    import pickle

    from tests.decide.walltime_synthetic import history as synthetic

    history = synthetic(tmp_path / "log.swf")
    first = propose_walltime(history, "1", time_limit_s=3600.0, predictor_args=SMALL)
    (model,) = cache.glob("*.pkl")
    model.write_bytes(pickle.dumps({"x": 1}))
    again = propose_walltime(history, "1", time_limit_s=3600.0, predictor_args=SMALL)
    assert again.to_dict() == first.to_dict()
