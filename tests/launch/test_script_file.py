"""Reading a job script a user names: one-line errors, never a wait on a FIFO."""

from __future__ import annotations

import os

import pytest

from hpcds1mpi.errors import ConfigError
from hpcds1mpi.launch.script_file import script_text


def test_a_script_is_read_and_what_is_not_one_is_one_line(tmp_path):
    (tmp_path / "job.sh").write_text("#!/bin/bash\n#SBATCH -N 2\n")
    assert script_text(tmp_path / "job.sh").startswith("#!/bin/bash")
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "bin").write_bytes(b"\xff\xfe\x00")
    for name, fragment in (("fifo", "not a regular file"), ("missing", "not found"),
                           ("bin", "not UTF-8"), (".", "is a directory")):
        with pytest.raises(ConfigError, match=fragment) as err:
            script_text(tmp_path / name)
        assert "\n" not in str(err.value)
    with pytest.raises(ConfigError, match="not a regular file"):
        script_text("/dev/zero")
