"""The checksum line: a script of ours is replaced only while nobody has changed it."""

from __future__ import annotations

from hpcds1mpi.launch.script_seal import MARK, SEAL, script_state, seal


def test_a_sealed_script_is_unchanged_until_edited(tmp_path):
    path = tmp_path / "job.sh"
    text = seal(f"#!/bin/bash\n{MARK} 0.1.0.\necho hi\n")
    assert text.splitlines()[2].startswith(SEAL)
    path.write_text(text)
    assert script_state(path) == "unchanged"
    path.write_text(text + "echo mine\n")
    assert script_state(path) == "edited"
