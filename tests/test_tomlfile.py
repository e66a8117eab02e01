"""read_toml: every way a named TOML file can be wrong gives one line naming the file."""

from __future__ import annotations

import os

import pytest

from hpcds1mpi.errors import ClusterFileError, ConfigError
from hpcds1mpi.tomlfile import read_toml


def test_reads_a_document(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text('[clusters.a]\nname = "x"\n')
    assert read_toml(path, "cluster file", ClusterFileError) == {"clusters": {"a": {"name": "x"}}}


@pytest.mark.parametrize("make, match", [
    (lambda p: None, "cluster file not found; check the path"),
    (lambda p: p.mkdir(), "is a directory"),
    (lambda p: p.write_bytes(b"\x7fELF\x02\x01\x01\x00\xff\xfe\x00"), "not text|not valid TOML"),
    (lambda p: p.write_text("[clusters\n"), "not valid TOML"),
])
def test_a_bad_file_is_one_line_naming_it(tmp_path, make, match):
    path = tmp_path / "c.toml"
    make(path)
    with pytest.raises(ClusterFileError, match=match) as info:
        read_toml(path, "cluster file", ClusterFileError)
    assert str(path) in str(info.value) and "\n" not in str(info.value)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_unreadable(tmp_path):
    path = tmp_path / "p.toml"
    path.write_text("")
    path.chmod(0)
    with pytest.raises(ConfigError, match="not readable"):
        read_toml(path, "plan file", ConfigError)


def test_a_binary_that_is_not_utf8_is_called_not_text(tmp_path):
    path = tmp_path / "p.toml"
    path.write_bytes(b"\xff\xfe\xfa")
    with pytest.raises(ConfigError, match="not text"):
        read_toml(path, "plan file", ConfigError)


@pytest.mark.parametrize("make, match", [
    (lambda p: os.mkfifo(p), "not a regular file"),  # was a wait for ever
    (lambda p: p.write_text("a = " + "[" * 1000 + "]" * 1000), "nested too deep"),  # traceback
    (lambda p: p.write_bytes(b"a = 1\n" + b"#" * (16 << 20)), "over 16 MiB"),
])
def test_hostile_files_are_one_line_not_a_hang_or_a_traceback(tmp_path, make, match):
    path = tmp_path / "c.toml"
    make(path)
    with pytest.raises(ClusterFileError, match=match) as err:
        read_toml(path, "cluster file", ClusterFileError)
    assert "\n" not in str(err.value) and str(path) in str(err.value)
    with pytest.raises(ConfigError, match="not a regular file"):
        read_toml("/dev/zero", "plan file", ConfigError)


def test_a_byte_order_mark_is_read_past(tmp_path):
    """Windows editors start UTF-8 with a BOM: it was 'not valid TOML (Invalid statement (at
    line 1, column 1))'."""
    path = tmp_path / "c.toml"
    path.write_bytes(b"\xef\xbb\xbf" + b'[clusters.a]\nname = "x"\n')
    assert read_toml(path, "cluster file", ClusterFileError) == {"clusters": {"a": {"name": "x"}}}


def test_utf16_text_is_named_with_the_fix(tmp_path):
    path = tmp_path / "c.toml"
    path.write_bytes('[clusters.a]\nname = "x"\n'.encode("utf-16"))  # PowerShell's Out-File
    with pytest.raises(ClusterFileError) as err:
        read_toml(path, "cluster file", ClusterFileError)
    assert str(err.value) == (f"{path}: cluster file is UTF-16 text (it starts with a UTF-16 "
                              "byte-order mark); save it as UTF-8")
