"""The user's cache folder and the keys of what is cached there."""

from __future__ import annotations

import os

from hpcds1mpi.user_cache import folder_key


def test_a_folder_named_with_bytes_that_are_not_utf8_has_a_key(tmp_path):
    """A bundle trained in a folder named ``bad\\xffdir`` (train takes it) had its guard's cache
    key fail to encode, and recommend refused the bundle naming the key's text, not a file
    (s39 tester D12): the name's bytes are hashed as they are."""
    bad, other = tmp_path / os.fsdecode(b"bad\xffdir"), tmp_path / os.fsdecode(b"bad\xfedir")
    for folder in (bad, other):
        folder.mkdir()
        (folder / os.fsdecode(b"f\xff.txt")).write_text("x")
    key = folder_key(bad)
    assert len(key) == 16 and int(key, 16) >= 0
    assert key == folder_key(bad) and key != folder_key(other)
