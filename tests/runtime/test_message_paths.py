"""A path in a one-line message and in the commands it suggests (s35 tester R4, R8): bash
reads each suggested word back as the same bytes, on one line."""

from __future__ import annotations

import os
import subprocess

import pytest

from hpcds1mpi.runtime.message_paths import shell_word, shown_path

NAMES = ["/tmp/camp B", "/tmp/a\nb", "it's $(rm -rf x) `y` *", "/tmp/\x1b[2J\ttab",
         os.fsdecode(b"/tmp/\xff\xfe"), "/tmp/\u202eevil", "/tmp/caf\u00e9 \u00a0\x9b"]


@pytest.mark.parametrize("name", NAMES)
def test_bash_reads_the_word_back_as_the_same_bytes(name):
    word = shell_word(name)
    assert "\n" not in word and word.isprintable(), word
    said = subprocess.run(["bash", "-c", f"printf '%s' {word}"], capture_output=True,
                          check=True).stdout
    assert said == os.fsencode(name)


def test_a_plain_path_is_shown_as_it_is_and_only_an_unprintable_one_escaped():
    assert shown_path("/tmp/camp B") == "/tmp/camp B" and shell_word("/x/camp B") == "'/x/camp B'"
    assert shell_word("/srv/proj/priv") == "/srv/proj/priv"
    assert shown_path("/tmp/a\nb/t.h5") == "$'/tmp/a\\nb/t.h5'"
    assert shown_path(os.fsdecode(b"/tmp/\xff")) == "$'/tmp/\\xff'"
    assert shown_path(b"/tmp/x") == "/tmp/x"
