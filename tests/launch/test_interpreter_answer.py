"""An interpreter's marked answer naming a file (:mod:`hpcds1mpi.launch.interpreter_answer`),
the one reading R's and Ruby's binding questions share."""

from __future__ import annotations

import os

from hpcds1mpi.launch.interpreter_answer import marked_file, on_path


def test_the_last_marked_line_naming_a_file_is_the_answer(tmp_path):
    there = tmp_path / "mpi.so"
    there.write_bytes(b"")
    said = f"echo noise; echo 'M:/nonexistent'; echo 'M:{there}'"
    assert marked_file(["sh", "-c", said], "M:", dict(os.environ)) == str(there)


def test_no_file_a_failure_or_no_interpreter_is_no_answer(tmp_path):
    env = dict(os.environ)
    assert marked_file(["sh", "-c", "echo M:/nonexistent"], "M:", env) is None
    assert marked_file(["sh", "-c", f"echo M:{tmp_path}; exit 1"], "M:", env) is None
    assert marked_file([str(tmp_path / "no-such-ruby")], "M:", env) is None


def test_a_word_is_found_as_a_path_or_on_path(tmp_path):
    assert on_path("sh", {"PATH": "/bin:/usr/bin"}) in ("/bin/sh", "/usr/bin/sh")
    assert on_path("$RUBY", dict(os.environ)) is None and on_path("", {}) is None
    assert on_path(str(tmp_path), {}) is None  # a folder is no program file
