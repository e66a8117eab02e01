"""Fixtures the Python API's tests share: the shipped model loaded once per module, and the
user's cache and failure history kept inside each test's own folder."""

from __future__ import annotations

import pytest

import hpcds1mpi


@pytest.fixture(scope="module")
def model():
    return hpcds1mpi.load_model()


@pytest.fixture(autouse=True)
def user_files(tmp_path, monkeypatch):
    monkeypatch.setenv("HPCDS1MPI_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HPCDS1MPI_HISTORY", str(tmp_path / "cache" / "failures.json"))
