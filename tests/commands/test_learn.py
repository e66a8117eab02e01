"""``hpcds1mpi learn``: where the retrained bundle may go, and a failure that costs nothing.

The happy path (train then learn, member features kept) is in ``test_train.py``.
"""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from tests.commands.test_train import (assert_one_line_error, saved_bundle,  # noqa: F401
                                       sha256s, user_folder, write)
from tests.helpers import run_cli
from tests.surrogates.test_bundle import make_runs
from tests.test_atomic import fill, small_disk, temporaries  # noqa: F401 (fixture)


@pytest.fixture
def model(tmp_path, saved_bundle):  # noqa: F811
    path = tmp_path / "model"
    shutil.copytree(saved_bundle, path)
    return path


def more_runs(tmp_path):
    runs = make_runs(seed=3)
    return write(tmp_path / "more.h5", runs[runs["size"] == 96])


@pytest.mark.parametrize("force", [[], ["--force"]], ids=["plain", "force"])
def test_learn_refuses_an_out_that_is_not_a_bundle(tmp_path, model, force):
    more = more_runs(tmp_path)
    out = user_folder(tmp_path / "mine")
    before = sha256s(tmp_path)
    proc = run_cli(["learn", "--model", str(model), "--telemetry", more, "--out", str(out),
                    "--threads", "1", *force], timeout=120)
    assert_one_line_error(proc, "is not empty and not a hpcds1mpi bundle; choose another --out")
    assert proc.returncode == 2 and sha256s(tmp_path) == before


def test_learn_replaces_another_bundle_only_with_force(tmp_path, model):
    more = more_runs(tmp_path)
    other = tmp_path / "other"
    shutil.copytree(model, other)
    before = sha256s(tmp_path)
    proc = run_cli(["learn", "--model", str(model), "--telemetry", more, "--out", str(other),
                    "--threads", "1"], timeout=120)
    assert_one_line_error(proc, "already holds a hpcds1mpi bundle; pass --force")
    assert proc.returncode == 2 and sha256s(tmp_path) == before


def test_learn_in_place_of_the_current_folder_is_refused_naming_model(tmp_path, model):
    """Was: learn --model . (from inside the bundle) retrained, then failed "Device or
    resource busy", exit 1: the new bundle cannot be renamed onto "." (s47 tester M7)."""
    more = more_runs(tmp_path)
    before = sha256s(tmp_path)
    proc = run_cli(["learn", "--model", ".", "--telemetry", more, "--threads", "1"],
                   timeout=120, cwd=model)
    assert_one_line_error(proc, "--model . names the folder by '.'")
    assert "give the folder's own name (../model)" in proc.stderr
    assert proc.returncode == 2 and sha256s(tmp_path) == before


@pytest.mark.parametrize("where", ["in place", "--out"])
def test_learn_recomputes_the_guard_calibration_and_drops_system1s(tmp_path, model, where):
    """The old calibrations describe the old members: the guard's is computed again for the
    new ones, System 1's confidence map is not carried over and the note says how to refit."""
    more = more_runs(tmp_path)
    (model / "guard_calibration.json").write_text('{"auto_threshold": 1e9}')
    (model / "system1_calibration.json").write_text('{"coef": [9, 0, 0]}')
    target = model if where == "in place" else tmp_path / "new"
    out = [] if where == "in place" else ["--out", str(target)]
    proc = run_cli(["learn", "--model", str(model), "--telemetry", more, "--threads", "1",
                    *out], timeout=300)
    assert proc.returncode == 0, proc.stderr
    fresh = json.loads((target / "guard_calibration.json").read_text())
    assert fresh["auto_threshold"] < 1e9 and fresh["escalate_threshold"] >= fresh["auto_threshold"]
    assert not (target / "system1_calibration.json").exists()
    assert "guard calibration recomputed for the new members" in proc.stdout
    assert "system1_calibration.json was fitted on the old members and is not carried over" \
        in proc.stdout and "--write-calibration" in proc.stdout
    assert temporaries(tmp_path) == []


@pytest.mark.parametrize("out", [None, "data/elsewhere"], ids=["no --out", "--out inside"])
def test_learn_refuses_to_rewrite_the_bundle_shipped_in_the_package(tmp_path, monkeypatch, out):
    """``learn --model <the shipped bundle>`` without --out would rewrite the package's own
    data; it is refused before anything is read (load_bundle must not even be reached)."""
    from click.testing import CliRunner

    import hpcds1mpi
    from hpcds1mpi.commands.learn import command
    from hpcds1mpi.errors import ConfigError
    from hpcds1mpi.surrogates import bundle

    def must_not_load(*args, **kwargs):
        raise AssertionError("learn went on to load (and would rewrite) the shipped bundle")

    monkeypatch.setattr(bundle, "load_bundle", must_not_load)
    monkeypatch.setattr(bundle, "train_bundle", must_not_load)
    package = hpcds1mpi.SHIPPED_MODEL.parent.parent
    args = ["--model", str(hpcds1mpi.SHIPPED_MODEL), "--telemetry", str(tmp_path / "new.h5")]
    if out:
        args += ["--out", str(package / out)]
    with pytest.raises(ConfigError, match="inside the installed hpcds1mpi package .*; pass "
                                          "--out DIR for the retrained bundle") as err:
        CliRunner().invoke(command, args, catch_exceptions=False)
    assert err.value.exit_code == 2 and not (package / "data" / "elsewhere").exists()


def test_learn_on_a_full_disk_keeps_the_old_bundle_whole(tmp_path, saved_bundle,  # noqa: F811
                                                         small_disk):  # noqa: F811
    more = more_runs(tmp_path)
    model = small_disk / "model"
    shutil.copytree(saved_bundle, model)
    fill(small_disk, 16 * 1024)
    before = sha256s(small_disk)
    proc = run_cli(["learn", "--model", str(model), "--telemetry", more, "--threads", "1"],
                   timeout=300)
    assert_one_line_error(proc, "disk is full")
    assert proc.returncode == 1 and sha256s(small_disk) == before
    assert sorted(p.name for p in small_disk.iterdir()) == ["filler", "model"]


def test_learn_keeps_the_members_learning_rate(tmp_path, model):
    """A bundle whose recipe chose its members' learning rate (ranking_cv.BUDGETS) is retrained
    at that rate, not at the default's."""
    manifest = json.loads((model / "manifest.json").read_text())
    trees = manifest["member_trees_and_learning_rate"][0]
    manifest.update(member_learning_rate=0.3, member_trees_and_learning_rate=[trees, 0.3])
    (model / "manifest.json").write_text(json.dumps(manifest))
    proc = run_cli(["learn", "--model", str(model), "--telemetry", more_runs(tmp_path),
                    "--threads", "1"], timeout=300)
    assert proc.returncode == 0, proc.stderr
    after = json.loads((model / "manifest.json").read_text())
    assert after["member_learning_rate"] == 0.3
    assert after["member_trees_and_learning_rate"] == [trees, 0.3]


def program_runs(command: str, sizes):
    """make_runs' rows at ``sizes`` as a program swept with ``sweep --command`` records them."""
    runs = make_runs(workloads=("myapp",))
    runs = runs[runs["size"].isin(sizes)].copy()
    runs["kind"] = "external"
    runs["command"] = [f"mpiexec -n {r} " + command.format(size=s)
                       for r, s in zip(runs["ranks"], runs["size"])]
    return runs


def test_learn_says_when_the_new_runs_ran_another_command_line(tmp_path):
    """Before, the program's recorded command became "" without a word, and advise no longer
    knew the program or its size; now both lines are kept and learn says so in one line."""
    from hpcds1mpi.surrogates.bundle import train_bundle
    from hpcds1mpi.surrogates.levels import read_levels

    model = tmp_path / "model"
    train_bundle(program_runs("./myapp {size} 40", (32, 48, 64)), n_members=2,
                 use_embedding=False, threads=1).save(model)
    more = write(tmp_path / "more.h5", program_runs("./myapp {size} 40 --fast", (96,)))
    proc = run_cli(["learn", "--model", str(model), "--telemetry", more, "--threads", "1"],
                   timeout=300)
    assert proc.returncode == 0, proc.stderr
    levels = read_levels(model)["myapp"]
    assert levels.command == "./myapp {size} 40"
    assert levels.other_commands == ("./myapp {size} 40 --fast",)
    notes = [ln for ln in proc.stdout.splitlines() if ln.startswith("note: the runs of myapp")]
    assert len(notes) == 1 and "ran 2 command lines, fitted as one program" in notes[0]


def test_learn_refuses_another_machine_with_a_train_command_that_works(tmp_path, model):
    """Tester U: a calibration sweep on a partition the model was not trained on measures
    another machine; learn's refusal printed its id cut to 12 characters and a train command
    that the cut id failed. Now the whole id and the command for these files, which works."""
    new_id = "5a21b1bc8ca63db8"
    runs = make_runs(seed=3, machine=new_id)
    calib = write(tmp_path / "calibration.h5", runs[runs["size"] == 32].head(6))
    before = sha256s(tmp_path)
    proc = run_cli(["learn", "--model", str(model), "--telemetry", calib, "--out",
                    str(tmp_path / "new"), "--threads", "1"], timeout=120)
    assert_one_line_error(proc, f"new runs come from machine(s) {new_id} (partition cpu)")
    assert proc.returncode != 0 and sha256s(tmp_path) == before
    command = proc.stderr.strip().split("`")[1]
    assert command == f"hpcds1mpi train --telemetry {calib} --out DIR"
    argv = command.split()[1:-1] + [str(tmp_path / "cal-model"), "--members", "2",
                                    "--no-embedding", "--threads", "1"]
    trained = run_cli(argv, timeout=300)
    assert trained.returncode == 0, trained.stderr
    manifest = json.loads((tmp_path / "cal-model" / "manifest.json").read_text())
    assert manifest["machine_ids"] == [new_id]


def test_learn_keeps_a_configuration_measured_again_and_names_a_disagreement(tmp_path):
    """Tester T (CP2K): learn of a tune replaced the sweep's 1x1 at 4.26 s by tune's 9.45 s
    ("added 0 new run(s) (3 read, 3 replaced an old run)") and said nothing. Now both are
    learnt, learn names the 2.2x disagreement, and learning the same file again adds nothing."""
    from hpcds1mpi.surrogates.bundle import train_bundle

    def swept(runs, sweep_id, start, noise):
        return runs.assign(sweep_id=sweep_id, started_at=start + np.arange(len(runs)),
                           noise=noise)

    runs = swept(make_runs(), "sweep", 1.7964e9, 0.05)
    model = tmp_path / "model"
    train_bundle(runs, n_members=2, use_embedding=False, threads=1).save(model)
    tune = swept(runs.head(3), "tune", 1.7965e9, 0.17)
    tune = write(tmp_path / "t.h5", tune.assign(runtime_s=tune["runtime_s"] * [2.2, 1.0, 1.05]))
    learn = ["learn", "--model", str(model), "--telemetry", tune, "--threads", "1"]
    proc = run_cli(learn, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert ("added 3 new run(s) (3 read, 0 replaced an old record of the same run, 3 measured "
            "a configuration again" in proc.stdout)
    warnings = [ln for ln in proc.stderr.splitlines() if ln.startswith("warning: ")]
    assert len(warnings) == 1 and "2.2x apart, beyond the noise" in warnings[0], proc.stderr
    assert json.loads((model / "manifest.json").read_text())["n_rows"] == len(runs) + 3
    proc = run_cli(learn, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "added 0 new run(s) (3 read, 3 replaced" in proc.stdout
    assert "warning:" not in proc.stderr
    assert json.loads((model / "manifest.json").read_text())["n_rows"] == len(runs) + 3


def private(folder):
    """``folder`` made private (0700, its files 0600), as a user keeps a bundle from others."""
    for item in folder.rglob("*"):
        item.chmod(0o700 if item.is_dir() else 0o600)
    folder.chmod(0o700)
    return folder


def modes(folder):
    return {str(p.relative_to(folder)): p.stat().st_mode & 0o7777
            for p in [folder, *folder.rglob("*")]}


def test_learn_in_place_keeps_a_private_bundle_private_and_loadable(tmp_path, model):
    """s32 verifier V1: learn's new folder came back 0755 with every file 0644 (members.pkl,
    training_data.parquet, ...): readable by every user of the cluster."""
    from hpcds1mpi.surrogates.bundle import load_bundle

    private(model)
    proc = run_cli(["learn", "--model", str(model), "--telemetry", more_runs(tmp_path),
                    "--threads", "1"], timeout=300)
    assert proc.returncode == 0, proc.stderr
    after = modes(model)
    assert after.pop(".") == 0o700 and "members.pkl" in after
    assert set(after.values()) == {0o600}, after  # new names too: guard_calibration.json
    assert load_bundle(model).manifest["n_rows"] > 0


def test_learn_takes_the_bundles_machine_under_another_partition_name(tmp_path):
    """s33 tester B6: a tune on `--partition debug` of the machine a model was trained on as
    `local` (same hardware, same MPI) was refused as "machine(s) ... (partition debug)", where
    tune and recommend took debug for the trained partition. Now its runs are learnt as that
    machine's; other hardware under the new name is still refused."""
    from hpcds1mpi.measure.meters import machine_id
    from hpcds1mpi.records import telemetry
    from hpcds1mpi.surrogates.bundle import train_bundle
    from tests.measure.test_same_machine import stored_runs, this_machine

    def stored(name: str, machine: dict, runs) -> str:
        return stored_runs(tmp_path / name, machine, runs)

    local, debug = this_machine("local"), this_machine("debug")
    runs = make_runs(seed=3)
    trained = tmp_path / "model"
    old = telemetry.read_runs(stored("old.h5", local, runs[runs["size"] < 96]))
    train_bundle(old, n_members=2, use_embedding=False, threads=1).save(trained)
    new = stored("tloc.h5", debug, runs[runs["size"] == 96].head(6))
    proc = run_cli(["learn", "--model", str(trained), "--telemetry", new, "--out",
                    str(tmp_path / "new"), "--threads", "1"], timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert (f"note: the 6 run(s) of machine {debug['machine_id']} (partition debug) are of the "
            f"bundle's machine {local['machine_id']}") in proc.stderr
    manifest = json.loads((tmp_path / "new" / "manifest.json").read_text())
    assert manifest["machine_ids"] == [local["machine_id"]]
    assert list(manifest["partitions"]) == ["local"]
    other = {**debug, "physical_cores": 64}
    other["machine_id"] = machine_id(other)
    big = stored("big.h5", other, runs[runs["size"] == 96].head(6))
    proc = run_cli(["learn", "--model", str(trained), "--telemetry", big, "--out",
                    str(tmp_path / "big"), "--threads", "1"], timeout=120)
    assert_one_line_error(proc, f"new runs come from machine(s) {other['machine_id']} "
                                "(partition debug) but the bundle was trained on "
                                f"{local['machine_id']}")


def test_learn_says_a_bundle_fingerprinted_by_an_older_launcher_is_this_machine(tmp_path):
    """s34 tester O4: a bundle trained on an older hpcds1mpi's program sweep (its id hashed
    from `mpiexec Version: 5.0.2`) and new runs of the same VM (`MPICH Version: 5.0.2`) were
    refused as "runs of different machines"; now the refusal says which id is the launcher's
    and the way out for a bundle."""
    from hpcds1mpi.records import telemetry
    from hpcds1mpi.surrogates.bundle import train_bundle
    from tests.measure.test_same_machine import stored_runs, this_machine

    def stored(name: str, machine: dict, runs) -> str:
        return stored_runs(tmp_path / name, machine, runs)

    old_machine = this_machine("local", "mpiexec Version: 5.0.2")
    new_machine = this_machine("local", "MPICH Version: 5.0.2")
    runs = make_runs(seed=3)
    trained = tmp_path / "model"
    old = telemetry.read_runs(stored("old.h5", old_machine, runs[runs["size"] < 96]))
    train_bundle(old, n_members=2, use_embedding=False, threads=1).save(trained)
    new = stored("new.h5", new_machine, runs[runs["size"] == 96].head(6))
    before = sha256s(tmp_path)
    proc = run_cli(["learn", "--model", str(trained), "--telemetry", new, "--out",
                    str(tmp_path / "lp"), "--threads", "1"], timeout=300)
    assert_one_line_error(proc, f"new runs of machine(s) {new_machine['machine_id']} "
                                "(partition local) are of the bundle's machine "
                                f"{old_machine['machine_id']} and MPI, but the bundle's id is "
                                "an older hpcds1mpi's fingerprint of the launcher ('mpiexec "
                                "Version: 5.0.2'), not of the program's MPI library ('MPICH "
                                "Version: 5.0.2')")
    assert "different machines" not in proc.stderr and sha256s(tmp_path) == before
    assert proc.stderr.strip().endswith(f"`hpcds1mpi train --telemetry {new} --out DIR`")


def test_learn_refuses_runs_whose_cpu_generation_one_record_does_not_say(tmp_path):
    """s38 tester K2: a VM whose CPU is only "AMD EPYC" had the id of a bundle's machine of
    that name whatever its generation, so learn pooled a Zen 5's runs with a Zen's. Now the
    id hashes the CPU's signature; a bundle of an older hpcds1mpi (no signature) is refused
    as not saying its generation, and so are an older file's runs for a newer bundle."""
    from hpcds1mpi.cpu_signature import cpu_signature
    from hpcds1mpi.measure.meters import machine_id
    from hpcds1mpi.records.telemetry_rows import telemetry_rows
    from hpcds1mpi.surrogates.bundle import train_bundle
    from tests.measure.test_same_machine import stored_runs, this_machine
    from tests.test_cpu_signature import ZEN5

    def on(cpu_signature_text: str) -> dict:
        row = {**this_machine("local"), "cpu_model": "AMD EPYC",
               "cpu_signature": cpu_signature_text}
        return {**row, "machine_id": machine_id(row)}

    old_machine, new_machine = on(""), on(cpu_signature(ZEN5))
    runs = make_runs(seed=3)
    for bundle_of, runs_of, whose in ((old_machine, new_machine, "the bundle's machine"),
                                      (new_machine, old_machine, "their machine")):
        folder = tmp_path / whose.replace(" ", "_").replace("'", "")
        folder.mkdir()
        trained = folder / "model"
        old = telemetry_rows(stored_runs(folder / "old.h5", bundle_of, runs[runs["size"] < 96]))
        train_bundle(old, n_members=2, use_embedding=False, threads=1).save(trained)
        new = stored_runs(folder / "new.h5", runs_of, runs[runs["size"] == 96].head(6))
        before = sha256s(tmp_path)
        proc = run_cli(["learn", "--model", str(trained), "--telemetry", new, "--out",
                        str(folder / "lp"), "--threads", "1"], timeout=300)
        assert_one_line_error(proc, f"{whose} was recorded on CPU 'AMD EPYC', a name that "
                                    "does not say which CPU generation, by an older hpcds1mpi "
                                    "that did not record the CPU's signature: taken as other "
                                    "hardware")
        assert f"new runs of machine(s) {runs_of['machine_id']} (partition local)" in proc.stderr
        assert sha256s(tmp_path) == before


def test_an_out_inside_the_model_bundle_is_refused_before_training(tmp_path, capsys):
    """learn --out MODEL/sub wrote a bundle inside its own input bundle, which learn then
    refused (s47 tester M11)."""
    from hpcds1mpi.records import telemetry
    from tests.badinput.harness import assert_usage, invoke
    from tests.records.telemetry.rows import run_row

    model, runs = tmp_path / "bm", tmp_path / "k.h5"
    model.mkdir()
    telemetry.append(runs, [run_row(0)])
    res = invoke(capsys, ["learn", "--model", model, "--telemetry", runs, "--out",
                          model / "sub"])
    assert_usage(res, "is inside the --model bundle", "choose a path outside it")
    assert not any(model.iterdir())
