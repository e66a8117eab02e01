"""Every subcommand that ``hpcds1mpi --help`` lists against the wrong shape of command line: an
unknown option, a stray argument, an option missing its value. One line, exit 2, nothing
written; and every subcommand's --help still works (exit 0)."""

from __future__ import annotations

import pytest

from hpcds1mpi.cli import COMMANDS
from tests.helpers import REPO

#: A valid prefix per command, so that the last word is the only thing wrong.
PREFIX = {
    "kernels": ["kernels"],
    "cluster": ["cluster"],
    "run": ["run", "stencil"],
    "sweep": ["sweep", "--kernel", "stencil", "--list"],
    "telemetry": ["telemetry", "show", "{tel}"],
    "ingest": ["ingest", "{sacct}", "--out", "jobs.parquet"],
    "train": ["train", "--telemetry", "{tel}", "--out", "model"],
    "learn": ["learn", "--model", "{bundle}", "--telemetry", "{tel}"],
    "mobo": ["mobo", "--analytic", "--workload", "stencil", "--size", "1000"],
    "recommend": ["recommend", "--workload", "stencil", "--size", "1024"],
    "tune": ["tune", "--kernel", "gemm", "--size", "64", "--out", "t.h5"],
    "quickstart": ["quickstart", "--out", "qs"],
    "campaign": ["campaign", str(REPO / "plans" / "reference.toml"), "--emit", "slurm"],
    "advise": ["advise", "job.sbatch"],  # usage errors come before the script is read
    "serve": ["serve", "--host", "127.0.0.1", "--state-dir", "state"],
}
#: The last option of each prefix that takes a value (to leave its value off).
VALUED = {"run": "--size", "sweep": "--sizes", "telemetry": "--rows", "ingest": "--kind",
          "train": "--seed", "learn": "--seed", "mobo": "--seed", "recommend": "--deadline",
          "tune": "--budget", "quickstart": "--ranks", "cluster": "--partition"}
VALUED["campaign"] = "--shards"
VALUED["advise"] = "--workload"
VALUED["serve"] = "--port"


def test_the_suite_covers_every_subcommand():
    assert set(PREFIX) == set(COMMANDS)


@pytest.mark.parametrize("name", list(COMMANDS))
def test_unknown_option(box, capsys, name):
    box.refused(capsys, [*PREFIX[name], "--no-such-option"], 2, "--no-such-option")


@pytest.mark.parametrize("name", [n for n in COMMANDS if n not in ("ingest", "telemetry",
                                                                   "run")])
def test_stray_argument(box, capsys, name):
    box.refused(capsys, [*PREFIX[name], "stray_word"], 2, "stray_word")


@pytest.mark.parametrize("name", list(VALUED))
def test_option_without_its_value(box, capsys, name):
    box.refused(capsys, [*PREFIX[name], VALUED[name]], 2, VALUED[name])


@pytest.mark.parametrize("name", list(COMMANDS))
def test_help_still_works(box, capsys, name):
    from tests.badinput.harness import assert_unchanged, invoke, snapshot

    before = snapshot(box.root)
    res = invoke(capsys, [name, "--help"])
    assert res.code == 0 and "Usage:" in res.out and not res.err
    assert_unchanged(before, snapshot(box.root))
