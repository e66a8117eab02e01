"""The API's typed answers: a Recommendation's batch script takes the program as a command line,
a path or a list of its arguments, refuses other types in one line, and names no partition for
this machine, as the command line does."""

from __future__ import annotations

import re

import pytest

import hpcds1mpi
from hpcds1mpi.errors import ConfigError
from tests.helpers import REPO
from tests.api_fixtures import model, user_files  # noqa: F401 (fixtures)

CLUSTER = str(REPO / "tests" / "data" / "jobscripts" / "lab.toml")


@pytest.mark.parametrize("program, words", [
    (5, "script(): program must be a command line (str), a path, a list of its arguments, "
        "or None for the workload's kernel, got int"),  # TypeError: not iterable
    (1.5, "got float"), (True, "got bool"),
    (b"./app", "got bytes"),  # was read byte by byte: srun 46 47 97 ...
    ({"./app": 1}, "got dict"),  # was read as its keys
    (["./app", None], "script(): program[1] must be a string, a path or a number, got NoneType"),
])
def test_a_program_of_a_wrong_type_is_one_config_error(model, program, words):
    rec = model.recommend("stencil", 128, cluster=CLUSTER)
    with pytest.raises(ConfigError, match=re.escape(words)) as err:
        rec.script("slurm", program=program)
    assert "\n" not in str(err.value)


def test_a_program_may_be_a_path_or_a_list_with_numbers(model, tmp_path):
    from pathlib import Path

    rec = model.recommend("stencil", 128, cluster=CLUSTER)
    app = Path(tmp_path / "my app")  # a path is one token, spaces and all
    text = rec.script("slurm", program=app)
    assert "'" + str(app) + "'" in text or '"' + str(app) + '"' in text
    assert "./app 128 --fast" in rec.script("slurm", program=["./app", 128, "--fast"])


def test_a_script_for_this_machine_names_no_partition_as_the_command_line_does(model,
                                                                                 monkeypatch):
    """Was: '#SBATCH --partition=local', a made-up name sbatch refuses (s27 tester P, 4)."""
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    here = model.recommend("stencil", 128).script("slurm")
    assert "--partition" not in "\n".join(l for l in here.splitlines()
                                          if l.startswith("#SBATCH"))
    assert "names no --partition: it was chosen for this machine" in here
    there = model.recommend("stencil", 128, cluster=CLUSTER).script("slurm")
    assert re.search(r"^#SBATCH --partition=\S+", there, re.M)
