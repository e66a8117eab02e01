"""``train --machine``: the whole id, or a unique start of it (a refusal once printed ids cut
to 12 characters, which --machine then refused)."""

from __future__ import annotations

import json

import pandas as pd

from tests.commands.test_train import assert_one_line_error, write
from tests.helpers import run_cli
from tests.surrogates.test_bundle import make_runs

IDS = ("5a21b1bc8ca63db8", "5a21ffff00000000", "a1f575dd1818c3af")


def two_machines(tmp_path) -> str:
    runs = [make_runs(seed=i, machine=m, sizes=(32, 48)) for i, m in enumerate(IDS)]
    return write(tmp_path / "runs.h5", pd.concat(runs, ignore_index=True))


def test_train_takes_a_unique_start_of_a_machine_id(tmp_path):
    runs = two_machines(tmp_path)
    proc = run_cli(["train", "--telemetry", runs, "--machine", "5a21b1bc8ca6", "--out",
                    str(tmp_path / "m"), "--members", "2", "--no-embedding", "--threads", "1"],
                   timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert json.loads((tmp_path / "m" / "manifest.json").read_text())["machine_ids"] == [IDS[0]]


def test_train_names_the_ids_an_ambiguous_start_matches(tmp_path):
    runs = two_machines(tmp_path)
    proc = run_cli(["train", "--telemetry", runs, "--machine", "5a21", "--out",
                    str(tmp_path / "m")], timeout=120)
    assert_one_line_error(proc, f"machine '5a21' is the start of 2 ids ({IDS[0]}, {IDS[1]}); "
                                "give more of the one you mean")
    assert not (tmp_path / "m").exists()
