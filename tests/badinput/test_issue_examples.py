"""Issue #14's examples, one regression test each (the issue's words in each docstring).

A case whose fix belongs to another engineer and has not landed is marked
``xfail(strict=True, reason="<owner>: <what>")``: it turns into a failure (XPASS) the day the
fix lands, so the mark is removed then."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from tests.badinput.harness import SHIPPED_BUNDLE, assert_unchanged, invoke, snapshot

TRAIN_FAST = ["--no-embedding", "--members", "1", "--member-trees", "1"]


def test_train_out_refuses_a_users_folder(box, capsys):
    """`train --out DIR` writes into any existing directory (a user's README.txt and
    manifest.json silently replaced)."""
    user = box.root / "mine"
    user.mkdir()
    (user / "README.txt").write_text("my notes\n")
    (user / "manifest.json").write_text('{"my": "manifest"}\n')
    box.refused(capsys, ["train", "--telemetry", "{tel}", "--out", str(user), *TRAIN_FAST], 2,
                str(user))


def test_quickstart_out_refuses_a_users_folder(box, capsys):
    """`quickstart --out DIR` overwrites plan.toml and appends to an existing telemetry.h5."""
    user = box.root / "mine"
    user.mkdir()
    (user / "plan.toml").write_text("# my own plan\n[sweep]\n")
    (user / "telemetry.h5").write_bytes((box.tel).read_bytes())
    box.refused(capsys, ["quickstart", "--out", str(user)], 2)


def test_learn_on_a_damaged_bundle_changes_nothing(box, capsys):
    """`learn` rewrites a bundle in place, so a failure half-way leaves new members beside the
    old manifest: a failing learn leaves the bundle byte-identical."""
    (box.bundle / "training_data.parquet").write_bytes(b"garbage")
    box.refused(capsys, ["learn", "--model", "{bundle}", "--telemetry", "{tel}"], 2)


@pytest.mark.parametrize("argv, fragment", [
    (["--timeout", "0"], "--timeout"),
    (["--out", "no_such_dir/tune.h5"], "no_such_dir"),
], ids=["timeout-0", "unwritable-out"])
def test_tune_checks_before_launching(box, capsys, argv, fragment):
    """`tune` launches its whole budget before noticing `--timeout 0` or an unwritable
    `--out` (the tripwire fails the test if anything is launched)."""
    base = ["tune", "--kernel", "gemm", "--size", "64", "--out", "tune.h5", "--cluster",
            "{cluster}", "--partition", "small", "--launcher", "mpiexec"]
    i = base.index(argv[0]) if argv[0] in base else None
    if i is not None:
        base[i + 1] = argv[1]
    else:
        base += argv
    box.refused(capsys, base, 2, fragment)


def test_external_mode_refuses_retry_crashed(box, capsys):
    """External mode ignores `--retry-crashed` and `--snapshot-every` without a word: the
    first is refused there, the second now applies (and is checked: a negative one refused)."""
    box.refused(capsys, ["sweep", "--command", "./app {size}", "--sizes", "10", "--list",
                         "--retry-crashed"], 2, "--retry-crashed")
    box.refused(capsys, ["sweep", "--command", "./app {size}", "--sizes", "10", "--list",
                         "--snapshot-every", "-5"], 2, "--snapshot-every")
    res = invoke(capsys, ["sweep", "--command", "./app {size}", "--sizes", "10", "--list",
                          "--snapshot-every", "5"])
    # the one line said: the label taken from the program's file name (s41 tester A1)
    assert res.code == 0 and res.err.splitlines() == [
        "hpcds1mpi sweep: workload label 'app', the program's file name: give --label NAME "
        "for another"], res.err


def test_unbalanced_quotes_in_command(box, capsys):
    """Tracebacks: unbalanced quotes in `--command`."""
    box.refused(capsys, ["sweep", "--command", "./app 'unbalanced", "--sizes", "10", "--list"],
                2, "quot")


@pytest.mark.parametrize("argv", [
    ["sweep", "--kernel", "stencil", "--sizes", "99999999999999999999", "--out", "t.h5"],
    ["recommend", "--workload", "stencil", "--size", "99999999999999999999"],
    ["mobo", "--analytic", "--workload", "stencil", "--size", "99999999999999999999"],
    ["run", "stencil", "--size", "99999999999999999999"],
    ["tune", "--kernel", "gemm", "--size", "99999999999999999999", "--out", "t.h5"],
], ids=["sweep", "recommend", "mobo", "run", "tune"])
def test_huge_size(box, capsys, argv):
    """Tracebacks: huge sizes such as `--size 99999999999999999999`, which also poisons the
    telemetry file for every later `--resume` (refused before anything is written)."""
    box.refused(capsys, argv, 2, "size")


def test_corrupt_bundle_file(box, capsys):
    """Tracebacks: a corrupt bundle file."""
    (box.bundle / "members.pkl").write_bytes(b"\x80\x04garbage")
    box.refused(capsys, ["recommend", "--workload", "stencil", "--size", "1024", "--model",
                         "{bundle}"], 2, "bundle")


def test_tampered_journal_line(box, capsys):
    """Tracebacks: a tampered journal line."""
    with open(str(box.tel) + ".journal", "ab") as fh:
        fh.write(b'{"event": "finished", "run_id": 7}\n')
    box.refused(capsys, ["telemetry", "show", "{tel}"], 2, "journal")


def _bad_job_table(path, column, value):
    data = pd.read_parquet(SHIPPED_BUNDLE / "training_data.parquet").drop(columns=["kept"])
    data = data.head(60).copy()
    if isinstance(value, float):
        data[column] = data[column].astype(float)
    data.loc[data.index[3], column] = value
    data.to_parquet(path)


@pytest.mark.parametrize("column, value", [("size", -5), ("nodes", 0), ("size", np.nan),
                                           ("device", "tpu")],
                         ids=["size-minus-5", "nodes-0", "size-nan", "device-tpu"])
def test_train_refuses_impossible_rows(box, capsys, column, value):
    """Silent accepts: `train` accepts size −5, nodes 0, NaN size, device `tpu`."""
    _bad_job_table(box.root / "jobs.parquet", column, value)
    box.refused(capsys, ["train", "--jobs", "jobs.parquet", "--out", "model", *TRAIN_FAST], 2,
                column)


def test_ingest_counts_negative_elapsed_as_malformed(box, capsys):
    """Silent accepts: `ingest` turns ElapsedRaw −5 into a runtime and reports 0 malformed."""
    lines = box.sacct.read_text().splitlines()
    head = lines[0].split("|")
    col = head.index("ElapsedRaw")
    fields = lines[1].split("|")
    fields[col] = "-5"
    lines[1] = "|".join(fields)
    box.sacct.write_text("\n".join(lines) + "\n")
    before = snapshot(box.root)
    res = invoke(capsys, ["ingest", str(box.sacct), "--out", "jobs.parquet"])
    assert res.code == 0 and "Traceback" not in res.err, res.err
    assert "malformed" in res.out or "dropped" in res.out, res.out
    table = pd.read_parquet(box.root / "jobs.parquet")
    assert not (table["runtime_s"] < 0).any()
    after = snapshot(box.root)
    after.pop("jobs.parquet")
    assert_unchanged(before, after)


@pytest.mark.parametrize("line, key", [("memory_gb = nan", "memory_gb"),
                                       ("idle_watts_node = -90", "idle_watts_node")],
                         ids=["memory-nan", "negative-watts"])
def test_cluster_toml_refuses_nan_and_negative(box, capsys, line, key):
    """Silent accepts: cluster TOML accepts `memory_gb = nan`, negative watts."""
    text = "[clusters.c.partitions.p]\ncores_per_node = 4\nmax_nodes = 2\n"
    text += line + ("\nmemory_gb = 16\n" if key != "memory_gb" else "\n")
    (box.root / "c.toml").write_text(text)
    box.refused(capsys, ["cluster", "--cluster", "c.toml"], 2, key)


def test_plan_valid_only_string_is_refused(box, capsys):
    """Silent accepts: a plan's `valid_only = "no"` reads as true."""
    (box.root / "plan.toml").write_text(
        '[sweep]\nvalid_only = "no"\n[[kernel]]\nname = "stencil"\nsizes = [40]\n')
    box.refused(capsys, ["sweep", "--plan", "plan.toml", "--list"], 2, "valid_only")


@pytest.mark.parametrize("command", [
    ["run", "stencil"], ["mobo", "--analytic", "--workload", "stencil", "--size", "1000"],
    ["sweep", "--kernel", "stencil", "--list"],
    ["tune", "--kernel", "gemm", "--size", "64", "--out", "t.h5"],
], ids=["run", "mobo", "sweep", "tune"])
def test_partition_nosuch_on_this_machine(box, capsys, command):
    """Silent accepts: `--partition nosuch` labels local runs "nosuch"."""
    box.refused(capsys, [*command, "--partition", "nosuch"], 2, "nosuch")


def test_mobo_negative_size(box, capsys):
    """Silent accepts: `mobo --size -100` produces a front."""
    box.refused(capsys, ["mobo", "--analytic", "--workload", "stencil", "--size", "-100",
                         "--cluster", "{cluster}", "--partition", "small"], 2, "--size")


def test_recommend_impossible_deadline(box, capsys):
    """Silent accepts: `recommend --deadline 0.000001` exits 0 with no recommendation."""
    box.refused(capsys, ["recommend", "--workload", "stencil", "--size", "1024", "--deadline",
                         "0.000001"], 2, "deadline")


def test_mobo_one_node_names_the_candidates(box, capsys):
    """Misleading: `mobo` on a one-node bundle said "budget 1 is smaller than the initial
    design" (the cause: one candidate). A space no larger than the budget is now scored
    exactly, and says so."""
    from tests.badinput.harness import invoke

    # The shipped bundle was trained on a one-node machine: one candidate in the nodes space.
    res = invoke(capsys, ["mobo", "--workload", "stencil", "--size", "256", "--out",
                          str(box.root / "mobo_out")])
    assert res.code == 0, res.err
    assert "1 candidate <= budget" in res.out and "scored exactly" in res.out
    assert "nothing to choose from" in res.out
    assert "initial design" not in res.out + res.err


def test_recommend_output_without_emit(box, capsys):
    """Misleading: `recommend -o f` without `--emit` prints "wrote None script"."""
    line = box.refused(capsys, ["recommend", "--workload", "stencil", "--size", "1024", "-o",
                                "f"], 2, "--emit")
    assert "None" not in line


def test_long_job_name_says_it_is_long(box, capsys):
    """Misleading: a 500-character job name is "characters not allowed"."""
    line = box.refused(capsys, ["recommend", "--workload", "stencil", "--size", "1024",
                                "--emit", "slurm", "--job-name", "a" * 500], 2,
                       "characters long")
    assert "not allowed" not in line


def test_string_format_version(box, capsys):
    """Misleading: a string `format_version` reads "bundle format 1 but this hpcds1mpi reads
    format 1"."""
    manifest = box.bundle / "manifest.json"
    doc = json.loads(manifest.read_text())
    doc["format_version"] = "1"
    manifest.write_text(json.dumps(doc))
    line = box.refused(capsys, ["recommend", "--workload", "stencil", "--size", "1024",
                                "--model", "{bundle}"], 2, "format_version")
    assert "format 1 but" not in line
