"""A table file's columns read without the table, and a table read as the file its path names."""

from __future__ import annotations

import pandas as pd
import pytest

from hpcds1mpi.records.table_files import column_names, read_file


def test_a_table_is_read_from_the_file_its_path_names_here(tmp_path, monkeypatch):
    """pandas reads a leading "~" as $HOME; a path the shell left it in names folder ``./~``
    (s39 tester D4), and a folder is no table (pyarrow would read it as an empty data set)."""
    home = tmp_path / "home"
    home.mkdir()
    (tmp_path / "~").mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(tmp_path)
    pd.DataFrame({"a": [1, 2]}).to_csv(tmp_path / "~" / "t.csv", index=False)
    pd.DataFrame({"a": [9]}).to_csv(home / "t.csv", index=False)
    assert read_file(pd.read_csv, "~/t.csv")["a"].tolist() == [1, 2]
    assert column_names("~/t.csv") == ["a"]
    (tmp_path / "d.parquet").mkdir()
    with pytest.raises(IsADirectoryError):
        read_file(pd.read_parquet, tmp_path / "d.parquet")
