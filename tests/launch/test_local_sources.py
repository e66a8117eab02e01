"""The program's own files an interpreted program reads in, walked for what they load
(:mod:`hpcds1mpi.launch.local_sources`): breadth first, each file once, bounded."""

from __future__ import annotations

import os

from hpcds1mpi.launch.local_sources import MAX_FILES, first_loaded, read_text


def _reader(read: list[str]):
    """A reader of a toy language: ``load X`` loads X, ``use F`` reads in the file F beside
    it; the files it reads go into ``read``."""
    def reader(text: str, here: str):
        read.append(text)
        words = text.split()
        if "load" in words:
            return words[words.index("load") + 1], []
        return None, [os.path.join(here, w) for a, w in zip(words, words[1:]) if a == "use"]
    return reader


def test_the_first_load_breadth_first_each_file_once(tmp_path):
    (tmp_path / "main").write_text("use a use b")
    (tmp_path / "a").write_text("use main use c")  # a loop: main is not read again
    (tmp_path / "b").write_text("load B")
    (tmp_path / "c").write_text("load C")  # one level deeper than b
    read: list[str] = []
    assert first_loaded([str(tmp_path / "main")], _reader(read)) == "B"
    assert read == ["use a use b", "use main use c", "load B"]
    assert first_loaded([str(tmp_path / "missing")], _reader([])) is None


def test_the_walk_is_bounded_in_depth_and_count(tmp_path):
    for k in range(MAX_FILES + 1):  # f0 uses f1 ... f33 loads X
        (tmp_path / f"f{k}").write_text(f"use f{k + 1}")
    (tmp_path / f"f{MAX_FILES + 1}").write_text("load X")
    read: list[str] = []
    assert first_loaded([str(tmp_path / "f0")], _reader(read)) is None
    assert len(read) == MAX_FILES
    assert first_loaded([str(tmp_path / "f31")], _reader([]), max_depth=2) == "X"
    assert first_loaded([str(tmp_path / "f31")], _reader([]), max_depth=1) is None
    assert read_text(str(tmp_path)) is None  # a folder: unreadable, skipped
