"""``hpcds1mpi train`` / ``learn`` end to end, and their one-line errors on bad input."""

from __future__ import annotations

import json

import numpy as np
import pytest

from hpcds1mpi.records import telemetry
from tests.helpers import run_cli
from tests.surrogates.test_bundle import make_runs
from tests.test_atomic import fill, read_only_dir, small_disk  # noqa: F401 (fixtures)

FAST = ["--epochs", "2", "--members", "2", "--threads", "1"]


def write(path, frame):
    telemetry.append(path, frame.to_dict("records"))
    return str(path)


def assert_one_line_error(proc, text):
    assert proc.returncode != 0
    lines = [ln for ln in proc.stderr.strip().splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert text in lines[0], lines[0]


@pytest.mark.slow
def test_train_then_learn(tmp_path):
    runs = make_runs()
    first = runs[runs["size"] < 96]
    tele = write(tmp_path / "a.h5", first)
    out = tmp_path / "model"
    proc = run_cli(["train", "--telemetry", tele, "--out", str(out), "--sample-rate", "0.75",
                    *FAST], timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "MODELLED" in proc.stdout
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["sampling"]["target_rate"] == 0.75
    assert manifest["n_rows"] == len(first)

    more = write(tmp_path / "b.h5", runs[runs["size"] == 96])
    proc = run_cli(["learn", "--model", str(out), "--telemetry", more, "--threads", "1"],
                   timeout=300)
    assert proc.returncode == 0, proc.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["n_rows"] == len(runs)
    assert manifest["size_range"]["gemm"] == [32.0, 96.0]

    foreign = write(tmp_path / "c.h5", make_runs(machine="other").head(8))
    proc = run_cli(["learn", "--model", str(out), "--telemetry", foreign], timeout=120)
    assert_one_line_error(proc, "never mixed")


@pytest.mark.parametrize("case, message", [
    ("empty", "empty"),
    ("failed", "no successful runs"),
    ("nan", "NaN"),
])
def test_bad_telemetry_is_a_one_line_error(tmp_path, case, message):
    runs = make_runs().head(24)
    if case == "empty":
        runs = runs.iloc[0:0]
    elif case == "failed":
        runs = runs.assign(status="failed", runtime_s=np.nan)
    elif case == "nan":
        runs = runs.assign(runtime_s=np.where(np.arange(len(runs)) == 3, np.nan, runs["runtime_s"]))
    tele = write(tmp_path / "t.h5", runs)
    proc = run_cli(["train", "--telemetry", tele, "--out", str(tmp_path / "m"), *FAST],
                   timeout=120)
    assert_one_line_error(proc, message)


def test_unknown_columns_in_job_table_is_a_one_line_error(tmp_path):
    jobs = make_runs().head(24).drop(columns=["run_id", "machine_id"]).assign(mystery=1.0)
    path = tmp_path / "jobs.parquet"
    jobs.to_parquet(path)
    proc = run_cli(["train", "--jobs", str(path), "--out", str(tmp_path / "m"), *FAST],
                   timeout=120)
    assert_one_line_error(proc, "unknown column(s) mystery")


def test_train_knob_member_features_is_recorded_and_kept_by_learn(tmp_path):
    from hpcds1mpi.surrogates.models import KNOB_FEATURES

    runs = make_runs()
    tele = write(tmp_path / "a.h5", runs[runs["size"] < 96])
    more = write(tmp_path / "b.h5", runs[runs["size"] == 96])
    out = tmp_path / "model"
    proc = run_cli(["train", "--telemetry", tele, "--out", str(out), "--no-embedding",
                    "--member-features", "knobs", "--members", "2", "--threads", "1"],
                   timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert json.loads((out / "manifest.json").read_text())["member_features"] == \
        list(KNOB_FEATURES)
    proc = run_cli(["learn", "--model", str(out), "--telemetry", more, "--threads", "1"],
                   timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert json.loads((out / "manifest.json").read_text())["member_features"] == \
        list(KNOB_FEATURES)


# -- never overwrite what is not ours; the old bundle stays whole (#14) ------------------------

FASTEST = ["--no-embedding", "--members", "2", "--member-trees", "20", "--threads", "1"]


def sha256s(folder):
    import hashlib

    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def saved_bundle(tmp_path_factory):
    """A real (small) bundle folder, trained in-process once."""
    from hpcds1mpi.surrogates.bundle import train_bundle

    path = tmp_path_factory.mktemp("bundle") / "model"
    train_bundle(make_runs(), n_members=2, use_embedding=False, threads=1).save(path)
    return path


def user_folder(path):
    path.mkdir()
    (path / "README.txt").write_text("my thesis notes")
    (path / "manifest.json").write_text('{"name": "my web app"}')
    return path


@pytest.mark.parametrize("force", [[], ["--force"]], ids=["plain", "force"])
def test_train_refuses_a_folder_that_is_not_a_bundle(tmp_path, force):
    tele = write(tmp_path / "a.h5", make_runs().head(24))
    out = user_folder(tmp_path / "mine")
    before = sha256s(tmp_path)
    proc = run_cli(["train", "--telemetry", tele, "--out", str(out), *FASTEST, *force],
                   timeout=120)
    assert_one_line_error(proc, "is not empty and not a hpcds1mpi bundle; choose another --out")
    assert proc.returncode == 2 and sha256s(tmp_path) == before


def test_train_replaces_one_of_our_bundles_only_with_force(tmp_path, saved_bundle):
    import shutil

    tele = write(tmp_path / "a.h5", make_runs())
    out = tmp_path / "model"
    shutil.copytree(saved_bundle, out)
    before = sha256s(tmp_path)
    proc = run_cli(["train", "--telemetry", tele, "--out", str(out), *FASTEST], timeout=120)
    assert_one_line_error(proc, "already holds a hpcds1mpi bundle; pass --force")
    assert proc.returncode == 2 and sha256s(tmp_path) == before
    proc = run_cli(["train", "--telemetry", tele, "--out", str(out), *FASTEST, "--force"],
                   timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert sha256s(out) != before and sorted(p.name for p in tmp_path.iterdir()) == \
        ["a.h5", "model"]  # no temporary folder left beside it


@pytest.mark.parametrize("case, message", [
    ("file", "is a file, not a folder"),
    ("parent is a file", "is not a directory"),
])
def test_train_out_path_problems_are_one_usage_line(tmp_path, case, message):
    tele = write(tmp_path / "a.h5", make_runs().head(24))
    (tmp_path / "f").write_text("keep")
    out = tmp_path / "f" if case == "file" else tmp_path / "f" / "model"
    before = sha256s(tmp_path)
    proc = run_cli(["train", "--telemetry", tele, "--out", str(out), *FASTEST], timeout=120)
    assert_one_line_error(proc, message)
    assert proc.returncode == 2 and sha256s(tmp_path) == before


def test_train_on_a_full_disk_keeps_the_old_bundle(tmp_path, saved_bundle, small_disk):
    import shutil

    tele = write(tmp_path / "a.h5", make_runs())
    out = small_disk / "model"
    shutil.copytree(saved_bundle, out)
    fill(small_disk, 16 * 1024)
    before = sha256s(small_disk)
    proc = run_cli(["train", "--telemetry", tele, "--out", str(out), *FASTEST, "--force"],
                   timeout=300)
    assert_one_line_error(proc, "disk is full")
    assert proc.returncode == 1 and sha256s(small_disk) == before
    assert sorted(p.name for p in small_disk.iterdir()) == ["filler", "model"]


def test_train_into_a_read_only_place_is_one_usage_line(tmp_path, read_only_dir):
    tele = write(tmp_path / "a.h5", make_runs().head(24))
    proc = run_cli(["train", "--telemetry", tele, "--out", str(read_only_dir / "model"),
                    *FASTEST], timeout=120)
    assert_one_line_error(proc, "not writable")
    assert proc.returncode == 2 and list(read_only_dir.iterdir()) == []


# -- System 1's ranking recipe: chosen by train, kept by learn (#20) ---------------------------

def test_recipe_choices_are_the_ranking_recipes():
    """The CLI spells the recipes out (no import of surrogates for --help): they must match."""
    from hpcds1mpi.commands.train import command
    from hpcds1mpi.surrogates.ranking_cv import RECIPES

    choices = next(p for p in command.params if p.name == "recipe").type.choices
    assert list(choices) == [*RECIPES, "cv"]


@pytest.mark.slow
def test_train_ranking_recipe_is_recorded_and_kept_by_learn(tmp_path):
    runs = make_runs()
    tele = write(tmp_path / "a.h5", runs[runs["size"] < 96])
    more = write(tmp_path / "b.h5", runs[runs["size"] == 96])
    out = tmp_path / "model"
    proc = run_cli(["train", "--telemetry", tele, "--out", str(out), "--recipe", "centred+cores",
                    *FASTEST], timeout=300)
    assert proc.returncode == 0, proc.stderr
    ranking = json.loads((out / "manifest.json").read_text())["metrics"]["ranking"]
    assert ranking["recipe"] == "centred+cores" and ranking["centred_targets"]
    proc = run_cli(["learn", "--model", str(out), "--telemetry", more, "--threads", "1"],
                   timeout=300)
    assert proc.returncode == 0, proc.stderr
    after = json.loads((out / "manifest.json").read_text())
    assert after["metrics"]["ranking"]["centred_targets"] == ranking["centred_targets"]
    assert after["metrics"]["ranking"]["recipe"] == "centred+cores"
    assert "core_fraction" in after["member_features"]


@pytest.mark.slow
def test_train_recipe_cv_chooses_on_held_out_sizes_and_says_which(tmp_path):
    from hpcds1mpi.surrogates.ranking_cv import BUDGETS, FOLDS, RECIPES, split_recipe
    from hpcds1mpi.surrogates.size_neighbours import WEIGHTS

    tele = write(tmp_path / "a.h5", make_runs())
    out = tmp_path / "model"
    proc = run_cli(["train", "--telemetry", tele, "--out", str(out), "--recipe", "cv",
                    *FASTEST], timeout=600)
    assert proc.returncode == 0, proc.stderr
    ranking = json.loads((out / "manifest.json").read_text())["metrics"]["ranking"]
    # every recipe, then the chosen one's measured-neighbours weights; no members' budgets
    # (ranking_cv.BUDGETS): --member-trees fixed the trees
    assert set(RECIPES) <= set(ranking["cv_scores"])
    assert {split_recipe(r)[0] for r in ranking["cv_scores"]} - set(RECIPES) == set()
    assert len(ranking["cv_scores"]) == len(RECIPES) + len(WEIGHTS) - 1
    assert not any(suffix in r for r in ranking["cv_scores"] for suffix in BUDGETS)
    assert ranking["chosen_by"] == (f"{FOLDS}-fold leave-size-out CV of pick speed "
                                    "(hpcds1mpi train --recipe cv)")
    assert f"recipe {ranking['recipe']!r}, chosen by {FOLDS}-fold" in proc.stdout


def test_a_ranking_recipe_on_all_features_is_one_usage_line(tmp_path):
    tele = write(tmp_path / "a.h5", make_runs())
    proc = run_cli(["train", "--telemetry", tele, "--out", str(tmp_path / "m"), "--recipe",
                    "centred+cores", "--member-features", "all", *FASTEST], timeout=120)
    assert proc.returncode == 2
    assert_one_line_error(proc, "ranks on the knob features")
    assert not (tmp_path / "m").exists()


def test_the_row_counts_leave_out_runs_with_no_outcome_and_say_so():
    """An interrupted run trains no target: 'on 290 of 290 rows' for 289 learnt is wrong."""
    import pandas as pd

    from hpcds1mpi.commands.train import summary_lines

    class Trained:
        manifest = {"family": "xgboost", "n_members": 5, "use_embedding": False,
                    "sampling": {"n_kept": 4, "n_total": 5, "target_rate": 1.0,
                                 "achieved_rate": 0.8, "seed": 0},
                    "targets": ["runtime_s"], "workloads": ["fft"], "machine_ids": ["m"],
                    "metrics": {"train_seconds": {"sampling": 0.0, "fit": 0.0}}}

        def training_frame(self):
            return pd.DataFrame({"status": ["ok", "ok", "failed", "interrupted", "ok"],
                                 "kept": [True, True, True, True, False]})

    lines = summary_lines(Trained(), "model")
    assert " on 3 of 4 rows " in lines[0]
    assert "  left out 1 run(s) with no outcome to learn from (1 interrupted)" in lines


def test_timeouts_train_no_target_and_train_says_how_they_are_treated():
    """A run cut short at the sweep's --timeout is no failure label and has no runtime: it
    trains no target, and train says what recommend makes of it."""
    import pandas as pd

    from hpcds1mpi.commands import train

    class Trained:
        manifest = {"family": "xgboost", "n_members": 5, "use_embedding": False,
                    "sampling": {"n_kept": 5, "n_total": 5, "target_rate": 1.0,
                                 "achieved_rate": 1.0, "seed": 0},
                    "targets": ["runtime_s"], "workloads": ["fft"], "machine_ids": ["m"],
                    "metrics": {"train_seconds": {"sampling": 0.0, "fit": 0.0}}}

        def training_frame(self):
            return pd.DataFrame({"status": ["ok", "ok", "timeout", "timeout", "cancelled"],
                                 "kept": [True] * 5})

    lines = train.summary_lines(Trained(), "model")
    assert " on 2 of 2 rows " in lines[0]
    assert "  left out 1 run(s) with no outcome to learn from (1 cancelled)" in lines
    words = train.TIMED_OUT_WORDS
    assert f"  left out 2 timeout run(s) from the targets: {words}" in lines
    assert "no failure" in words and "--timeout" in words


def test_a_job_table_with_many_sub_second_jobs_trains_and_says_what_it_left_out(tmp_path):
    """3 of 20 ok jobs at 0 s (sacct's ElapsedRaw for a job under a second) refused the table:
    'fix or drop those rows', which no option does; no run-time column said the same."""
    jobs = make_runs().head(24).drop(columns=["run_id", "machine_id"])
    ok = jobs.index[jobs["status"] == "ok"]
    jobs.loc[ok[:6], "runtime_s"] = 0.0
    path = tmp_path / "jobs.parquet"
    jobs.to_parquet(path)
    proc = run_cli(["train", "--jobs", str(path), "--out", str(tmp_path / "m"), "--no-embedding",
                    *FAST], timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert ("  left out 6 ok job(s) with no run time to learn from: 6 that ran under 1 s (0 s "
            "recorded); the manifest counts them (dropped_zero_runtime_jobs)") in proc.stdout
    manifest = json.loads((tmp_path / "m" / "manifest.json").read_text())
    assert manifest["dropped_zero_runtime_jobs"] == 6

    jobs.assign(runtime_s=np.nan).to_parquet(path)
    proc = run_cli(["train", "--jobs", str(path), "--out", str(tmp_path / "n"), *FAST],
                   timeout=120)
    assert proc.returncode == 2
    assert_one_line_error(proc, "the job table has no run times: none of its 24 ok job(s) has "
                                "a runtime_s (the log had no run-time column")
    assert not (tmp_path / "n").exists()


def test_names_with_bytes_that_are_not_utf8_are_refused_in_one_line_before_anything(tmp_path):
    """pyarrow and the bundle's files take UTF-8 names only: train had died with a
    UnicodeEncodeError traceback (after the training, for the output name)."""
    import os

    tele = write(tmp_path / os.fsdecode(b"t\xff.h5"), make_runs())
    plain = write(tmp_path / "plain.h5", make_runs())
    before = sorted(os.listdir(tmp_path))
    for argv, named in ((["--telemetry", tele, "--out", str(tmp_path / "b")], "--telemetry"),
                        (["--telemetry", plain, "--out", str(tmp_path / os.fsdecode(b"b\xff"))],
                         "--out"),
                        (["--jobs", str(tmp_path / os.fsdecode(b"j\xff.parquet")), "--out",
                          str(tmp_path / "b")], "--jobs")):
        proc = run_cli(["train", *argv, *FAST], timeout=120)
        assert proc.returncode == 2, proc.stderr
        assert_one_line_error(proc, f"{named} ")
        assert "\\xff" in proc.stderr and "not UTF-8" in proc.stderr
    assert sorted(os.listdir(tmp_path)) == before


LAB = ("[clusters.lab.partitions.cpu]\ncores_per_node = 8\nmemory_gb = 16\nmax_nodes = 2\n")


def test_the_calibration_loop_at_one_size_ends_in_an_answer(tmp_path):
    """s31 tester Q2: a calibration sweep measures one size; train on its telemetry, and the
    size it measured must be answered (was: escalated again, "distance 3.725 > 0", asking to
    measure the same layouts), another size escalated with why, and train says so."""
    runs = make_runs(workloads=("stencil",), sizes=(64, 96))
    tele = write(tmp_path / "cal.h5", runs[runs["size"] == 64])
    out = tmp_path / "model"
    proc = run_cli(["train", "--telemetry", tele, "--out", str(out), *FAST], timeout=300)
    assert proc.returncode == 0, proc.stderr
    warning = [ln for ln in proc.stderr.splitlines() if ln.startswith("warning:")]
    assert len(warning) == 1 and "one size only: stencil (size 64)" in warning[0], proc.stderr
    assert "escalates any other size" in warning[0]
    lab = tmp_path / "lab.toml"
    lab.write_text(LAB)

    def verdict(size, cluster=lab):
        got = run_cli(["recommend", "--workload", "stencil", "--size", str(size), "--model",
                       str(out), "--cluster", str(cluster), "--json"], timeout=120)
        assert got.returncode == 0, got.stderr
        return json.loads(got.stdout)["verdict"]

    measured = verdict(64)
    assert measured["verdict"] != "escalate", measured
    assert measured["checks"]["learned"] == "pass" and measured["distance"] == 0
    assert measured["escalate_threshold"] == 0  # calibrated on one size: nothing held out
    other = verdict(80)
    assert other["verdict"] == "escalate"
    assert any("one size of each workload" in r for r in other["reasons"]), other["reasons"]

    # s31 tester Q4: a partition that names another CPU than the measured one is never auto.
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["partitions"]["cpu"]["cpu_model"] = "AMD EPYC"
    (out / "manifest.json").write_text(json.dumps(manifest))
    intel = tmp_path / "intel.toml"
    intel.write_text(LAB + 'cpu_model = "Intel(R) Xeon(R) Processor"\n')
    there = verdict(64, intel)
    assert there["verdict"] in ("confirm", "escalate") and there["checks"]["cpu"] == "confirm"
    assert any("CPU Intel(R) Xeon(R) Processor but the model was measured on CPU AMD EPYC" in r
               for r in there["reasons"]), there["reasons"]
    assert "cpu" not in verdict(64)["checks"]  # the cluster file names no CPU: nothing new


def test_train_force_over_a_private_bundle_keeps_it_private_and_loadable(tmp_path,
                                                                           saved_bundle):
    """s32 verifier V1: train --force swapped in a 0755 folder of 0644 files for a 0750 bundle
    of 0640 ones; its group and the files' modes are kept now, and it still loads."""
    import shutil

    from hpcds1mpi.surrogates.bundle import load_bundle

    out = tmp_path / "model"
    shutil.copytree(saved_bundle, out)
    for item in out.rglob("*"):
        item.chmod(0o750 if item.is_dir() else 0o640)
    out.chmod(0o750)
    tele = write(tmp_path / "a.h5", make_runs())
    proc = run_cli(["train", "--telemetry", tele, "--out", str(out), *FASTEST, "--force"],
                   timeout=300)
    assert proc.returncode == 0, proc.stderr
    modes = {str(p.relative_to(out)): p.stat().st_mode & 0o7777 for p in out.rglob("*")}
    assert out.stat().st_mode & 0o7777 == 0o750 and "members.pkl" in modes
    assert set(modes.values()) == {0o640}, modes
    assert load_bundle(out).manifest["n_rows"] == len(make_runs())


def test_train_takes_one_machines_runs_under_two_partition_names_as_one(tmp_path):
    """s33's left item: learn took the runs of a bundle's machine under another partition name
    (tester B6), train still refused the same two files as "mixes 2 machines". Other hardware
    under the second name is still refused."""
    from hpcds1mpi.measure.meters import machine_id
    from tests.measure.test_same_machine import stored_runs, this_machine

    def stored(name: str, machine: dict, runs) -> str:
        return stored_runs(tmp_path / name, machine, runs)

    local, debug = this_machine("local"), this_machine("debug")
    runs = make_runs(seed=3)
    files = [stored("local.h5", local, runs[runs["size"] < 96]),
             stored("debug.h5", debug, runs[runs["size"] >= 96])]
    proc = run_cli(["train", "--out", str(tmp_path / "m"), "--members", "2", "--no-embedding",
                    "--threads", "1", *(a for f in files for a in ("--telemetry", f))],
                   timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert (f"note: the {int((runs['size'] >= 96).sum())} run(s) of machine "
            f"{debug['machine_id']} (partition debug) are of machine {local['machine_id']} "
            "under another partition name") in proc.stderr
    manifest = json.loads((tmp_path / "m" / "manifest.json").read_text())
    assert manifest["machine_ids"] == [local["machine_id"]]
    other = {**debug, "physical_cores": 64}
    other["machine_id"] = machine_id(other)
    files[1] = stored("big.h5", other, runs[runs["size"] >= 96])
    proc = run_cli(["train", "--out", str(tmp_path / "m2"), "--members", "2",
                    "--no-embedding", "--threads", "1",
                    *(a for f in files for a in ("--telemetry", f))], timeout=300)
    assert proc.returncode != 0 and "mixes 2 machines" in proc.stderr


def test_the_held_out_evaluation_is_named_as_a_command_that_runs_installed(tmp_path):
    """train and learn printed `(held-out: analysis/h1_eval.py)`, a path only a checkout has
    (s38 tester B6); the module form runs from any folder, installed or in a checkout."""
    import subprocess
    import sys

    import pandas as pd

    from hpcds1mpi.commands.train import summary_lines

    class Trained:
        manifest = {"family": "xgboost", "n_members": 5, "use_embedding": False,
                    "sampling": {"n_kept": 2, "n_total": 2, "target_rate": 1.0,
                                 "achieved_rate": 1.0, "seed": 0},
                    "targets": ["runtime_s"], "workloads": ["fft"], "machine_ids": ["m"],
                    "metrics": {"runtime_s": {"mape_in_sample": 0.1, "r2_in_sample": 0.9},
                                "train_seconds": {"sampling": 0.0, "fit": 0.0}}}

        def training_frame(self):
            return pd.DataFrame({"status": ["ok", "ok"], "kept": [True, True]})

    line = [ln for ln in summary_lines(Trained(), "model") if "in-sample MAPE" in ln]
    assert line and line[0].endswith("(held-out: python -m hpcds1mpi.analysis.h1_eval)")
    assert "analysis/h1_eval.py" not in "\n".join(summary_lines(Trained(), "model"))
    proc = subprocess.run([sys.executable, "-m", "hpcds1mpi.analysis.h1_eval", "--help"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "--telemetry" in proc.stdout, proc.stderr


def test_the_bundle_line_shows_a_newline_in_its_name_escaped():
    """``--out $'mo\\ndel'`` (learn prints the same lines): "bundle written to mo" and "del" on
    two lines had broken the summary a script reads line by line (s39 tester D11); shown as
    ``telemetry show`` shows such a name."""
    from hpcds1mpi.commands.train import summary_lines

    class Trained:
        manifest = {"family": "xgboost", "n_members": 5, "use_embedding": False,
                    "sampling": {"n_kept": 1, "n_total": 1, "target_rate": 1.0,
                                 "achieved_rate": 1.0, "seed": 0},
                    "targets": ["runtime_s"], "workloads": ["fft"], "machine_ids": ["m"],
                    "metrics": {"train_seconds": {"sampling": 0.0, "fit": 0.0}}}

        def training_frame(self):
            import pandas as pd

            return pd.DataFrame({"status": ["ok"], "kept": [True]})

    lines = summary_lines(Trained(), "mo\ndel")
    assert lines[-1] == "bundle written to mo\\ndel"
    assert not any("\n" in line for line in lines)
