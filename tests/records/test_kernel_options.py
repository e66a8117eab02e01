"""A plan's kernel options (``[[kernel]] extra``) are recorded with each run, survive a merge,
and keep the runs apart from the kernel's default deck in training and in answers (s40 tester
B13: stencil ``sweeps = 100`` was trained, answered and scripted as plain stencil)."""

from __future__ import annotations

import json

from hpcds1mpi.records.kernel_options import (decks_note, kernel_of, labelled, no_run_line,
                                              options_label, options_text, run_options,
                                              typed_options)
from tests.helpers import ONE_QUICK_LAYOUT, run_cli

PLAN = ONE_QUICK_LAYOUT + """
[[kernel]]
name = "stencil"
sizes = [16, 24, 32, 40]
{extra}
"""


def _sweep(tmp_path, name: str, extra: str) -> str:
    (tmp_path / f"{name}.toml").write_text(PLAN.format(extra=extra))
    res = run_cli(["sweep", "--plan", f"{name}.toml", "--out", f"{name}.h5", "--no-progress"],
                  cwd=tmp_path, timeout=300)
    assert res.returncode == 0, res.stderr
    return str(tmp_path / f"{name}.h5")


def test_labels_name_the_kernel_and_its_options():
    text = options_text((("sweeps", 100),))
    assert text == '{"sweeps": 100}' and options_text(()) == ""
    assert options_label("stencil", text) == "stencil+sweeps.100"
    assert options_label("stencil", "") == "stencil"
    assert kernel_of("stencil+sweeps.100") == "stencil"
    assert kernel_of("stencil") is None and kernel_of("myapp+x.1") is None
    # characters a label cannot hold: replaced, and a hash keeps two decks apart
    a = options_label("io", options_text((("workdir", "/scratch/a_b"),)))
    b = options_label("io", options_text((("workdir", "/scratch/a/b"),)))
    assert a != b and a.startswith("io+workdir._scratch_a_b+")
    from hpcds1mpi.schemas.runs import WORKLOAD_LABEL
    import re

    assert all(re.fullmatch(WORKLOAD_LABEL, label) for label in (a, b))


def test_answers_say_the_options_and_a_script_passes_those_its_label_carries():
    known = ["stencil+sweeps.100", "gemm"]
    assert "'stencil+sweeps.100'" in decks_note("stencil", known)
    assert decks_note("gemm", known) == "" and decks_note("cg", known) == ""
    assert run_options("stencil+sweeps.100") == ["--option", "sweeps=100"]
    assert run_options("cg+iterations.7") == ["--option", "iterations=7"]
    assert no_run_line("stencil+sweeps.100") == "" and no_run_line("myapp") == ""
    assert run_options("stencil+sweeps.x") is None and run_options("myapp") is None
    hashed = options_label("io", options_text((("workdir", "/scratch/a"),)))
    assert run_options(hashed) is None
    line = no_run_line(hashed)
    assert line.startswith(f"no job script for {hashed!r}") and "--option KEY=VALUE" in line


def test_a_float_option_written_as_a_whole_number_is_one_workload_everywhere():
    """s41 review F3: a plan's ``allreduce_iteration_scale = 2`` was recorded as ``2`` and
    trained as ``...scale.2``, where ``--option ...=2`` and the label's own reading made
    ``...scale.2.0``: recommend --emit refused the workload, advise of its script matched none."""
    from hpcds1mpi.cluster import Partition
    from hpcds1mpi.config import Configuration
    from hpcds1mpi.measure.plan import RunSpec
    from hpcds1mpi.measure.rows import base_row
    from hpcds1mpi.records.kernel_options import run_deck

    label = "allreduce+allreduce_iteration_scale.2.0"
    spec = RunSpec("allreduce", 1024, Configuration(1, 2, 1, "cpu", "fp64"),
                   extra=(("allreduce_iteration_scale", 2),))
    recorded = base_row(spec, "m", Partition("p", cores_per_node=4, memory_gb=8), "s")["extra"]
    assert recorded == '{"allreduce_iteration_scale": 2.0}', recorded
    # a file written before reads as one written now; run and advise's reading agree
    assert options_label("allreduce", '{"allreduce_iteration_scale": 2}') == label
    assert options_label("allreduce", recorded) == label
    assert run_deck("allreduce", ["--size", "{size}", "--option",
                                  "allreduce_iteration_scale=2"]) == label
    assert run_options(label) == ["--option", "allreduce_iteration_scale=2.0"]
    assert no_run_line(label) == ""
    # a model trained before names it ``.2``: its script still runs that deck
    assert run_options("allreduce+allreduce_iteration_scale.2") == [
        "--option", "allreduce_iteration_scale=2"]
    # an int option and an option no kernel declares are left as given
    assert options_text((("sweeps", 100),), "stencil") == '{"sweeps": 100}'
    assert options_text((("x", 1),), "myapp") == '{"x": 1}'


def test_typed_options_read_words_as_the_kernel_declares_them():
    import pytest

    from hpcds1mpi import kernels
    from hpcds1mpi.errors import ConfigError

    assert typed_options(kernels.get("stencil"), {"sweeps": "100"}) == {"sweeps": 100}
    assert typed_options(kernels.get("io"), {"io_mode": "shards"}) == {"io_mode": "shards"}
    for words in ({"sweeps": "x"}, {"sweeps": "0"}, {"foo": "1"}):
        with pytest.raises(ConfigError):
            typed_options(kernels.get("stencil"), words)


def test_a_sweeps_options_are_recorded_merged_and_not_pooled(tmp_path):
    import h5py

    from hpcds1mpi.records.telemetry import read_runs
    from hpcds1mpi.records.training import TrainingData

    deck = _sweep(tmp_path, "deck", "extra = { sweeps = 3 }")
    plain = _sweep(tmp_path, "plain", "")
    assert set(read_runs(deck)["extra"]) == {'{"sweeps": 3}'}
    assert set(read_runs(plain)["extra"]) == {""}
    merged = run_cli(["telemetry", "merge", deck, plain, "--out", "both.h5"], cwd=tmp_path)
    assert merged.returncode == 0, merged.stderr
    frame = TrainingData.read(telemetry=[str(tmp_path / "both.h5")]).frame
    assert frame.groupby("workload").size().to_dict() == {"stencil": 4,
                                                          "stencil+sweeps.3": 4}
    # a file written before the column reads as runs without options
    with h5py.File(deck, "a") as f:
        del f["runs/extra"]
        f["runs"].attrs["columns"] = [c for c in f["runs"].attrs["columns"]
                                      if (c.decode() if isinstance(c, bytes) else c) != "extra"]
    assert set(read_runs(deck)["extra"]) == {""}
    assert set(TrainingData.read(telemetry=[deck]).frame["workload"]) == {"stencil"}


def test_labelled_leaves_program_rows_and_old_frames_alone():
    import pandas as pd

    frame = pd.DataFrame({"workload": ["app", "stencil", "stencil"],
                          "kind": ["external", "kernel", "kernel"],
                          "extra": [json.dumps({"x": 1}), "", '{"sweeps": 5}']})
    assert labelled(frame)["workload"].tolist() == ["app", "stencil", "stencil+sweeps.5"]
    old = frame.drop(columns="extra")
    assert labelled(old) is old


def test_recommend_keeps_the_decks_apart_and_the_script_runs_the_measured_deck(tmp_path):
    _sweep(tmp_path, "deck", "extra = { sweeps = 3 }")
    train = run_cli(["train", "--telemetry", "deck.h5", "--no-embedding", "--members", "2",
                     "--member-trees", "20", "--out", "m"], cwd=tmp_path, timeout=300)
    assert train.returncode == 0, train.stderr
    plain = run_cli(["recommend", "--workload", "stencil", "--size", "16", "--model", "m"],
                    cwd=tmp_path)
    assert "escalate" in plain.stdout and "'stencil+sweeps.3'" in plain.stdout, plain.stdout
    ask = ["recommend", "--workload", "stencil+sweeps.3", "--size", "16", "--model", "m"]
    assert "stencil+sweeps.3" in run_cli(ask, cwd=tmp_path).stdout
    emit = run_cli([*ask, "--emit", "slurm"], cwd=tmp_path)
    assert emit.returncode == 0, emit.stderr
    # its kernel's knobs are offered it (s41 tester D17), as plain stencil's: threads and
    # precision are the pick's, the deck is the measured one
    assert "hpcds1mpi run stencil --size 16 --option sweeps=3 --threads " in emit.stdout


def test_a_merge_keeps_the_options_a_record_from_before_the_column_lacks(tmp_path):
    """s41 tester D4: the same runs in a file with the ``extra`` column and one from before it
    merged into plain-kernel runs, in either order."""
    import shutil

    import h5py

    from hpcds1mpi.records.telemetry import read_runs

    deck = _sweep(tmp_path, "deck", "extra = { sweeps = 3 }")
    old = tmp_path / "old.h5"
    shutil.copy(deck, old)
    with h5py.File(old, "a") as f:  # as an hpcds1mpi before the column wrote it, measured later
        del f["runs/extra"]
        f["runs"].attrs["columns"] = [c for c in f["runs"].attrs["columns"]
                                      if (c.decode() if isinstance(c, bytes) else c) != "extra"]
        f["runs/finished_at"][...] = f["runs/finished_at"][...] + 60
    for first, second, out in ((old, deck, "m1.h5"), (deck, old, "m2.h5")):
        merged = run_cli(["telemetry", "merge", str(first), str(second), "--out", out],
                         cwd=tmp_path)
        assert merged.returncode == 0, merged.stderr
        assert set(read_runs(tmp_path / out)["extra"]) == {'{"sweeps": 3}'}, out
