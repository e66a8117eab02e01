"""The Python API: ``import hpcds1mpi`` stays light, the names load on first use, the answers
are the command line's (same numbers as ``recommend --json``), and the README's example runs
as written in a fresh process."""

from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import hpcds1mpi
from hpcds1mpi.errors import ConfigError, ModelError
from tests.helpers import REPO, run_cli
from tests.api_fixtures import model, user_files  # noqa: F401 (fixtures)
from tests.records.ingest.joblogs import GAIA, needs_joblogs, swf_slice

CLUSTER = str(REPO / "tests" / "data" / "jobscripts" / "lab.toml")
SCRIPT = REPO / "tests" / "data" / "jobscripts" / "lab_stencil.sbatch"


def fresh(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=REPO, timeout=300)


def test_import_is_light_and_the_api_loads_on_first_use():
    res = fresh("import sys, hpcds1mpi\n"
                "heavy = ('numpy', 'pandas', 'torch', 'hpcds1mpi.api', 'hpcds1mpi.decide')\n"
                "print([m for m in heavy if m in sys.modules])\n"
                "hpcds1mpi.__version__, hpcds1mpi.SHIPPED_MODEL\n"
                "print([m for m in heavy if m in sys.modules])\n"
                "hpcds1mpi.load_model\n"
                "print('hpcds1mpi.api' in sys.modules, 'load_model' in dir(hpcds1mpi))\n")
    assert res.returncode == 0, res.stderr
    assert res.stdout.split("\n")[:3] == ["[]", "[]", "True True"]


def test_the_errors_the_api_raises_are_the_packages_names():
    """The README names `ConfigError` as what a wrong argument raises; `hpcds1mpi.ConfigError`
    was an AttributeError (s34 tester S6)."""
    from hpcds1mpi import errors

    assert hpcds1mpi.ConfigError is errors.ConfigError
    assert issubclass(hpcds1mpi.ModelError, hpcds1mpi.HpcdsError)
    with pytest.raises(hpcds1mpi.ConfigError):
        hpcds1mpi.advise(str(REPO / "no-such-script.sbatch"))
    assert "ConfigError" in dir(hpcds1mpi)


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no_such_thing"):
        hpcds1mpi.no_such_thing  # noqa: B018


def test_recommend_is_the_command_lines_answer(model, tmp_path):
    rec = model.recommend("stencil", 128, cluster=CLUSTER, objective="energy")
    assert isinstance(rec, hpcds1mpi.Recommendation)
    assert isinstance(rec.pick, hpcds1mpi.Prediction) and rec.verdict in ("auto", "confirm")
    assert 0 <= rec.confidence <= 1 and rec.alternatives and rec.front
    assert all(isinstance(p, hpcds1mpi.Prediction) for p in rec.alternatives + rec.front)
    res = run_cli(["recommend", "--workload", "stencil", "--size", "128", "--cluster", CLUSTER,
                   "--objective", "energy", "--json"],
                  env={"HPCDS1MPI_CACHE": str(tmp_path / "c2"),
                       "HPCDS1MPI_HISTORY": str(tmp_path / "c2" / "f.json")})
    assert res.returncode == 0, res.stderr
    cli = json.loads(res.stdout)["pick"]
    assert {k: cli[k] for k in ("nodes", "ranks_per_node", "threads", "device",
                                "precision")} == rec.pick.config.as_dict()
    assert cli["runtime_s"] == pytest.approx(rec.pick.runtime_s, rel=1e-12)
    assert cli["energy_j"] == pytest.approx(rec.pick.energy_j, rel=1e-12)
    assert cli["confidence"] == pytest.approx(rec.confidence, rel=1e-12)
    assert rec.to_dict()["pick"]["runtime_s"] == pytest.approx(rec.pick.runtime_s)
    assert rec.script().startswith("#!/bin/bash\n#SBATCH")


def test_the_single_run_band_is_the_command_lines(model, tmp_path):
    """``Recommendation.single_run`` is ``recommend --json``'s ``pick.single_run`` and its
    ``a single run:`` line (s38 tester B3: the API had no band)."""
    from hpcds1mpi.decide.recommendation import format_table

    rec = model.recommend("nbody", 3000, objective="energy")
    band = rec.single_run  # nbody's repeats scatter wider than the model's interval
    assert band is not None and band["runtime_hi"] > rec.pick.runtime_hi
    assert band["runtime_lo"] is None or 0 < band["runtime_lo"] <= rec.pick.runtime_s
    assert rec.to_dict()["pick"]["single_run"] == band
    assert f"  {band['line']}" in format_table(rec.raw).splitlines()
    res = run_cli(["recommend", "--workload", "nbody", "--size", "3000", "--objective",
                   "energy", "--json"], env={"HPCDS1MPI_CACHE": str(tmp_path / "c2"),
                                             "HPCDS1MPI_HISTORY": str(tmp_path / "c2" / "f")})
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["pick"]["single_run"] == pytest.approx(band)


def test_predict_gives_the_numbers_recommend_ranks_by(model):
    rec = model.recommend("stencil", 128, cluster=CLUSTER)
    configs = [p.config for p in rec.alternatives[:3]]
    got = model.predict(configs, "stencil", 128, cluster=CLUSTER)
    assert [p.config for p in got] == configs
    for mine, theirs in zip(got, rec.alternatives[:3]):
        assert mine.runtime_s == pytest.approx(theirs.runtime_s, rel=1e-9)
        assert mine.energy_j == pytest.approx(theirs.energy_j, rel=1e-9)
    as_dicts = model.predict([c.as_dict() for c in configs], "stencil", 128, cluster=CLUSTER)
    assert [p.runtime_s for p in as_dicts] == [p.runtime_s for p in got]


def test_an_unknown_workload_gets_the_guards_verdict_not_a_guess(model):
    """s41 review F5: a program the model never measured is calibrated with its command
    (``program``, which the API lacked); without one, no steps and the note says why."""
    rec = model.recommend("mystery", 100, cluster=CLUSTER, program="./mystery {size}")
    assert rec.verdict == "escalate" and rec.pick is None and rec.confidence is None
    assert any("never measured" in r for r in rec.reasons) and rec.calibration
    assert {c.precision for c in rec.calibration} == {"fp64"}  # no {precision} in it
    assert "--command './mystery {size}'" in rec.script()  # the program it was given
    bare = model.recommend("mystery", 100, cluster=CLUSTER)
    assert bare.verdict == "escalate" and not bare.calibration
    assert any(n.startswith("no calibration sweep for 'mystery'") and "program=" in n
               for n in bare.to_dict()["notes"])


def test_advise_takes_text_a_path_or_a_path_string(model):
    by_text = hpcds1mpi.advise(SCRIPT.read_text(), model=model, cluster=CLUSTER)
    by_path = model.advise(SCRIPT, cluster=CLUSTER)
    by_name = model.advise(str(SCRIPT), cluster=CLUSTER)
    assert by_text.script == "<text>" and by_path.script == by_name.script == SCRIPT.name
    assert by_text.to_dict()["recommended"] == by_path.to_dict()["recommended"]
    assert math.isfinite(by_text.asked.runtime_s) and by_text.summary().startswith("asked: ")


def test_advise_refuses_text_sbatch_refuses_as_it_refuses_the_file(model):
    """s29 tester D7: a Slurm script without #! was refused from a file only."""
    text = SCRIPT.read_text().split("\n", 1)[1]
    assert text.startswith("#SBATCH")
    for call in (lambda: hpcds1mpi.advise(text, model=model, cluster=CLUSTER),
                 lambda: model.advise(text, cluster=CLUSTER)):
        with pytest.raises(ConfigError, match=r"is not #! and sbatch refuses it .*add "
                           r"#!/bin/bash as the first line$"):
            call()


def test_read_script_and_configurations():
    script = hpcds1mpi.read_script(SCRIPT)
    assert script.layout() == (2, 1, 2)
    space = hpcds1mpi.configurations(CLUSTER, workload="stencil")
    assert space and all(c.ranks_per_node * c.threads <= 2 and c.nodes <= 4 for c in space)
    assert max(c.nodes for c in hpcds1mpi.configurations(CLUSTER, max_nodes=2)) == 2


def test_a_missing_bundle_is_one_line(tmp_path):
    with pytest.raises(ModelError, match="not found"):
        hpcds1mpi.load_model(tmp_path / "nothing")


def readme_example() -> str:
    text = (REPO / "README.md").read_text()
    section = re.search(r"<!-- BEGIN advise-api.*?-->(.*?)<!-- END advise-api -->", text, re.S)
    assert section, "README.md lacks the advise-api markers"
    blocks = re.findall(r"```python\n(.*?)```", section.group(1), re.S)
    assert len(blocks) == 1, "the advise-api section holds one python example"
    return blocks[0]


def test_the_readme_example_runs_as_written():
    res = fresh(readme_example())
    assert res.returncode == 0, res.stderr
    assert "asked: 2 nodes x 1 rank x 2 threads" in res.stdout


@needs_joblogs
def test_propose_walltime_from_a_path_or_a_table_gives_recommends_proposal(tmp_path):
    """The API's walltime is `recommend --history`'s: the same table read from a log path or
    passed as a DataFrame gives the same proposal, capped at the request."""
    from hpcds1mpi.records.ingest import read_job_log

    log = swf_slice(GAIA, tmp_path / "gaia.swf", jobs=2000)
    table = read_job_log(log)[0]
    user = str(table["user"].value_counts().index[0])
    from_path = hpcds1mpi.propose_walltime(log, user, time_limit_s=86400)
    from_table = hpcds1mpi.propose_walltime(table, user, time_limit_s=86400)
    assert from_path.to_dict() == from_table.to_dict()
    assert from_path.time_s is not None and 60 <= from_path.time_s <= 86400
    assert from_path.lines() and from_path.lines()[0].startswith("walltime: --time ")
    nobody = hpcds1mpi.propose_walltime(table, "no-such-user")
    assert nobody.time_s is None and "cannot propose" in nobody.lines()[0]


@needs_joblogs
def test_propose_walltime_checks_a_frames_rows_as_a_files(tmp_path):
    """A frame was used as given (s39 tester C7, C8): jobs twice halved the walltime, ends
    before submissions moved it, a run time of 10^12 s was pandas' OutOfBoundsTimedelta.
    Now its rows are dropped as a table file's are, said in one warning."""
    import pandas as pd

    from hpcds1mpi.records.ingest import read_job_log

    table = read_job_log(swf_slice(GAIA, tmp_path / "gaia.swf", jobs=1500))[0]
    user = str(table["user"].value_counts().index[0])
    bad = table.index[table["user"] == user][::5]
    clean = hpcds1mpi.propose_walltime(table.drop(index=bad), user, time_limit_s=86400)
    for broken, said in (
            (pd.concat([table.drop(index=bad)] * 2), "same job twice"),
            (table.assign(end_time=table["end_time"].where(
                ~table.index.isin(bad), table["submit_time"] - pd.Timedelta(hours=5))),
             f"dropped {len(bad)} x End before Start"),
            (table.assign(runtime_s=table["runtime_s"].where(~table.index.isin(bad), 1e12)),
             f"dropped {len(bad)} x runtime_s absurd")):
        with pytest.warns(UserWarning, match=said):
            p = hpcds1mpi.propose_walltime(broken, user, time_limit_s=86400)
        assert p.to_dict() == clean.to_dict()
    with pytest.raises(hpcds1mpi.HpcdsError, match="lacks runtime_s"):
        hpcds1mpi.propose_walltime(table.drop(columns="runtime_s"), user)


@pytest.mark.parametrize("call, words", [
    (lambda m: m.recommend("stencil", 300, deadline_s=float("nan")),
     "recommend(): deadline_s must be a finite number"),  # the constraint vanished
    (lambda m: m.recommend("stencil", 300, deadline_s=-1), "deadline_s must be > 0"),  # no pick
    (lambda m: m.recommend("stencil", 2**80), "size must be <= 1099511627776"),  # Overflow
    (lambda m: m.recommend("stencil", 300, energy_budget_j="x"), "energy_budget_j must be"),
    (lambda m: m.recommend(" ", 300), "workload"),
    (lambda m: m.predict([{}], "stencil", float("nan")), "predict(): size must be an integer"),
    (lambda m: m.advise("#!/bin/bash\nsrun ./a\n", objective="x"), "advise(): objective"),
    (lambda m: hpcds1mpi.configurations(max_nodes=-1), "configurations(): max_nodes must be"),
    (lambda m: hpcds1mpi.configurations(max_nodes="x"), "max_nodes must be an integer"),
    (lambda m: hpcds1mpi.propose_walltime(5, "alice"), "history must be a job table"),
    (lambda m: hpcds1mpi.propose_walltime(None, "alice", coverage=2.0), "coverage must be"),
])
def test_wrong_arguments_are_one_config_error_naming_them(model, call, words):
    """The API raised OverflowError / TypeError / AttributeError, returned no pick, or dropped
    the constraint where the CLI refuses the same value in one line."""
    with pytest.raises(ConfigError, match=re.escape(words)) as err:
        call(model)
    assert "\n" not in str(err.value)


def test_numpy_numbers_are_taken_as_numbers(model):
    import numpy as np

    rec = model.recommend("stencil", np.int64(300), deadline_s=np.float64(60))
    assert rec.pick is not None and rec.size == 300
    assert len(model.predict([{}], "stencil", np.int32(300))) == 1


def test_predict_and_recommend_ask_about_a_site_name_under_the_trained_one(tmp_path):
    """A partition with a trained partition's hardware under another name: predict gives
    recommend's numbers, and both the trained partition's (the name is a model feature)."""
    from dataclasses import replace

    from hpcds1mpi.api import Model
    from tests.decide.test_system1 import NameSensitiveBundle
    from tests.fake_bundle import fake_partitions

    model = Model(NameSensitiveBundle(), tmp_path)
    trained = fake_partitions()["cpu"]
    site = replace(trained, name="standard")
    rec = model.recommend("gemm", 1024, cluster=site)
    assert rec.pick.partition == "standard" and rec.raw.notes
    configs = [rec.pick.config] + [p.config for p in rec.alternatives[:2]]
    got = model.predict(configs, "gemm", 1024, cluster=site)
    want = model.predict(configs, "gemm", 1024, cluster=trained)
    assert [p.partition for p in got] == ["standard"] * 3
    assert got[0].runtime_s == rec.pick.runtime_s
    assert [p.runtime_s for p in got] == [p.runtime_s for p in want]


def test_predict_checks_validity_as_the_service_does(model):
    """Model.predict scored 100 nodes on a 4-node partition, a GPU where there is none, bf16
    for stencil and 64 ranks on 2 cores as feasible; /v1/predict says valid: false. Both now
    run one check (decide.predict_configs)."""
    from hpcds1mpi.decide.predict_configs import predict_configs

    C = hpcds1mpi.Configuration
    configs = [C(1, 2, 1), C(100, 2, 1), C(1, 2, 1, device="gpu"), C(1, 2, 1, precision="bf16"),
               C(1, 64, 1)]
    got = model.predict(configs, "stencil", 128, cluster=CLUSTER)
    assert [p.valid for p in got] == [True, False, False, False, False]
    assert got[0].feasible and got[0].reason == "" and math.isfinite(got[0].runtime_s)
    for p in got[1:]:
        assert not p.feasible and p.reason and math.isnan(p.runtime_s)
    assert "at most 4" in got[1].reason and "no GPUs" in got[2].reason
    assert "cannot run cpu bf16" in got[3].reason and "64 ranks" in got[4].reason
    from hpcds1mpi.places import allowed_places

    _, part = allowed_places(CLUSTER, ())[0]
    rows = predict_configs(model.bundle, "stencil", 128, part, configs)
    assert [(r["valid"], r["reason"]) for r in rows] == [(p.valid, p.reason) for p in got]


def test_predict_says_where_it_extrapolates(model):
    """2 nodes on the one-node shipped bundle: predicted with no word that no run had 2."""
    C = hpcds1mpi.Configuration
    one, two = model.predict([C(1, 2, 1), C(2, 2, 1)], "stencil", 128, cluster=CLUSTER)
    assert one.extrapolated == () and two.extrapolated == ("nodes 2 above the most measured (1)",)


@pytest.mark.parametrize("call, words", [
    (lambda m: m.recommend("stencil", None), "recommend(): size is required"),
    (lambda m: m.recommend(None, 128), "recommend(): workload is required"),
    (lambda m: m.predict([(1, 2, 1)], "stencil", 128), "configs[0] must be a Configuration"),
    (lambda m: m.predict(hpcds1mpi.Configuration(), "stencil", 128), "configs must be a list"),
    (lambda m: m.predict([{"node": 2}], "stencil", 128), "unknown key 'node'"),
    (lambda m: m.predict([{"nodes": 0}], "stencil", 128), "configs[0]: nodes must be"),
    (lambda m: m.predict([{}], None, 128), "predict(): workload is required"),
    (lambda m: hpcds1mpi.load_model(5), "load_model(): path must be a bundle directory"),
    (lambda m: m.recommend("stencil", 128, cluster=CLUSTER).script("lsf"),
     "script(): scheduler must be 'slurm' or 'pbs'"),
    (lambda m: m.advise("/nonexistent/job.sbatch"), "/nonexistent/job.sbatch: job script not "
                                                   "found"),
    (lambda m: m.advise(str(REPO / "tests")), "is a directory"),
    (lambda m: m.advise(REPO / "tests" / "missing.sbatch"), "job script not found"),
])
def test_bad_arguments_are_one_line_config_errors_not_type_errors(model, call, words):
    with pytest.raises(ConfigError, match=re.escape(words)) as err:
        call(model)
    assert "\n" not in str(err.value)


def test_a_one_line_text_starting_with_a_hash_is_script_text_not_a_path():
    assert hpcds1mpi.read_script("#SBATCH -N 2").layout()[0] == 2


def test_api_errors_name_arguments_not_cli_options(model):
    with pytest.raises(ConfigError) as err:  # the decide layer says "use --device cpu"
        model.recommend("stencil", 128, cluster=CLUSTER, device="gpu")
    assert "use device cpu" in str(err.value) and "--" not in str(err.value)


def test_advise_takes_a_bundle_directory_as_the_model(model):
    """``model=`` a bundle directory (what load_model and --model DIR take) raised
    AttributeError: 'str' object has no attribute 'advise'."""
    want = hpcds1mpi.advise(SCRIPT, model=model, cluster=CLUSTER).to_dict()
    for path in (str(hpcds1mpi.SHIPPED_MODEL), hpcds1mpi.SHIPPED_MODEL):
        assert hpcds1mpi.advise(SCRIPT, model=path, cluster=CLUSTER).to_dict() == want
    with pytest.raises(ModelError) as err:  # a missing bundle: load_model's line
        hpcds1mpi.advise(SCRIPT, model="/nonexistent/bundle", cluster=CLUSTER)
    assert str(err.value) == ("model bundle /nonexistent/bundle not found; give the directory "
                              "of a trained bundle (hpcds1mpi train --out DIR) or None for the "
                              "shipped one")  # not the CLI's "pass --model DIR"


@pytest.mark.parametrize("wrong", [5, 1.5, True, [1], {"a": 1}, object()])
def test_a_model_of_another_type_is_one_config_error(wrong):
    with pytest.raises(ConfigError, match=re.escape(
            f"advise(): model must be a Model from load_model(), a bundle directory (str or "
            f"Path) or None for the shipped one, got {type(wrong).__name__}")):
        hpcds1mpi.advise(SCRIPT, model=wrong, cluster=CLUSTER)


def test_propose_walltime_needs_a_user(tmp_path):
    """user=None answered 'no history for this user' as if None were a user."""
    with pytest.raises(ConfigError, match=re.escape("propose_walltime(): user is required")):
        hpcds1mpi.propose_walltime(tmp_path / "jobs.parquet", None)


def test_predict_says_what_the_whole_job_is_beyond_as_the_service_does(model, tmp_path):
    """Was: Model.predict gave valid rows with extrapolated=() on hardware the model never
    saw and at a size 100x past the measured ones, where /v1/predict lists both first (the
    README says the two are one check: decide.predict_job)."""
    from hpcds1mpi.serve.schemas import PredictRequest
    from hpcds1mpi.serve.service import Service

    cluster = tmp_path / "big.toml"
    cluster.write_text("[clusters.c.partitions.big]\ncores_per_node = 64\nmemory_gb = 256\n"
                       "max_nodes = 2\n")
    lo, hi = model.size_range["stencil"]
    size = int(hi * 100)
    got = model.predict([hpcds1mpi.Configuration(1, 2, 1)], "stencil", size,
                        cluster=str(cluster))[0]
    assert got.valid and got.extrapolated[:2] == (
        "partition big (64 cores, 0 GPUs, 256 GB) never trained on",
        f"size {size} outside the measured sizes {lo:g}–{hi:g}")
    served = Service(None, str(cluster), tmp_path / "state").predict(PredictRequest(
        workload="stencil", size=size, configs=[{"nodes": 1, "ranks_per_node": 2}]))
    assert tuple(served["predictions"][0]["extrapolated"]) == got.extrapolated


def test_a_prediction_says_how_many_runs_at_this_size_its_values_are(model):
    # s31 tester QA: measured_runs from System 1's rows, in predict and recommend alike; on
    # the bundle's hardware naming no CPU (this machine's name may be one the bundle's runs
    # are not known to be of: s38 tester K2)
    runs = model.bundle.training_frame().query("status == 'ok'").iloc[0]
    config = hpcds1mpi.Configuration(int(runs.nodes), int(runs.ranks_per_node),
                                     int(runs.threads), str(runs.device), str(runs.precision))
    assert model.predict([config], runs.workload, int(runs["size"]), cluster=CLUSTER)[0] \
        .measured_runs >= 1
    assert model.predict([config], runs.workload, 7 * int(runs["size"]) + 3,
                         cluster=CLUSTER)[0].measured_runs == 0
    pick = model.recommend(runs.workload, int(runs["size"]), cluster=CLUSTER, max_nodes=1).pick
    assert pick.to_dict()["measured_runs"] == pick.measured_runs >= 1


def test_advise_reads_the_job_folder_as_the_command_does(model, tmp_path, monkeypatch):
    """s33 tester B5: the API passed no job folder, so the launcher and program files went
    unread: no warning, no --rewrite fix, where ``hpcds1mpi advise`` warned. Here Open MPI's
    mpirun (first on PATH) starts an MPICH-built program in the submit folder."""
    from tests.helpers import system_program

    shutil.copy(system_program("NPmpich2"), tmp_path / "np")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "mpirun").symlink_to(system_program("mpirun.openmpi"))
    job = tmp_path / "job.sbatch"
    job.write_text("#!/bin/bash\n#SBATCH --partition=standard\n#SBATCH --nodes=1\n"
                   "#SBATCH --ntasks-per-node=2\n#SBATCH --time=00:30:00\n"
                   "mpirun -np 2 ./np -u 8\n")
    path = f"{bin_dir}:{Path(sys.executable).parent}"
    res = run_cli(["advise", str(job), "--cluster", CLUSTER, "--workload", "stencil",
                   "--size", "128", "--json"], cwd=tmp_path, env={"PATH": path})
    assert res.returncode == 0, res.stderr
    cli = json.loads(res.stdout)
    assert len(cli["warnings"]) == 1 and "linked against the MPICH family" in cli["warnings"][0]
    monkeypatch.setenv("PATH", path)
    monkeypatch.chdir(tmp_path)  # the submit folder, as the command's
    for script in (job, job.name, job.read_text()):
        api = model.advise(script, cluster=CLUSTER, workload="stencil", size=128).to_dict()
        assert {k: api[k] for k in ("warnings", "notes", "changes")} == {
            k: cli[k] for k in ("warnings", "notes", "changes")}, script
    monkeypatch.chdir(REPO)  # elsewhere: the folder is given, else ./np is not found there
    given = hpcds1mpi.advise(job, model=model, cluster=CLUSTER, workload="stencil", size=128,
                             job_folder=tmp_path).to_dict()
    assert given["warnings"] == cli["warnings"]


@pytest.mark.parametrize("folder, words", [
    ("/nonexistent/folder", "advise(): job_folder /nonexistent/folder is not a folder; give "
                            "the folder the job is submitted from"),
    (5, "advise(): job_folder must be the folder the job is submitted from (str or Path), "
        "got 5"),
    ("  ", "advise(): job_folder must be the folder")])
def test_a_job_folder_that_is_no_folder_is_one_line(model, folder, words):
    with pytest.raises(ConfigError, match=re.escape(words)) as err:
        model.advise(SCRIPT, cluster=CLUSTER, job_folder=folder)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("workload, size", [("gemm", 2048), ("stencil", 300)])
def test_a_recommendations_rows_say_what_predict_says_they_extrapolate(model, workload, size):
    """s37 tester P3: the pick (2 nodes on the one-node bundle; a size beyond the measured)
    and its alternatives read () while predict() and --json said they were extrapolated."""
    rec = model.recommend(workload, size, cluster=CLUSTER)
    rows = [rec.pick, *rec.alternatives, *rec.front]
    said = model.predict([p.config for p in rows], workload, size, cluster=CLUSTER)
    assert [p.extrapolated for p in rows] == [p.extrapolated for p in said]
    # each case has rows beyond what was measured (gemm's 2 nodes no longer the pick: an
    # unmeasured level does not win on the trees' interval alone, s40 tester B9)
    assert any(p.extrapolated for p in rows)
    assert set(rec.pick.extrapolated) >= set(rec.to_dict()["pick"]["extrapolated"])


def test_to_dict_has_the_keys_recommend_json_has(model, tmp_path):
    """s37 tester P3: to_dict() lacked --json's "runtime" key."""
    rec = model.recommend("stencil", 128, cluster=CLUSTER)
    res = run_cli(["recommend", "--workload", "stencil", "--size", "128", "--cluster", CLUSTER,
                   "--json"], env={"HPCDS1MPI_CACHE": str(tmp_path / "c2"),
                                   "HPCDS1MPI_HISTORY": str(tmp_path / "c2" / "f.json")})
    assert res.returncode == 0, res.stderr
    cli = json.loads(res.stdout)
    assert set(rec.to_dict()) == set(cli) and rec.to_dict()["runtime"] == cli["runtime"]


@pytest.mark.parametrize("call, words", [
    (lambda path: hpcds1mpi.load_model(path), "load_model(): path is empty, got ''"),
    (lambda path: hpcds1mpi.advise(SCRIPT, model=path), "advise(): model is empty, got ''"),
])
def test_an_empty_model_path_is_refused_as_the_cli_refuses_it(call, words):
    """s37 tester P5: an unset variable's "" loaded the shipped bundle, nothing said."""
    with pytest.raises(ConfigError, match=re.escape(words)):
        call("")


def test_a_file_given_as_the_bundle_is_called_a_file_not_missing():
    """s37 tester P5: an existing file was "not found"."""
    with pytest.raises(ModelError, match=r"lab\.toml is a file, not a bundle folder; give the "
                                         "directory of a trained bundle"):
        hpcds1mpi.load_model(CLUSTER)


def test_size_range_gives_the_integer_sizes_recommend_takes(model):
    """s37 tester P11: (40.0, 256.0) fed back to recommend was refused as not an integer."""
    lo, hi = model.size_range["stencil"]
    assert (type(lo), type(hi)) == (int, int) and (lo, hi) == (40, 256)
    assert model.recommend("stencil", hi, cluster=CLUSTER).size == hi


def test_an_argument_error_points_to_a_help_that_shows_the_ranges(model):
    """s37 tester P11: errors said "see help(hpcds1mpi)", which shows no range."""
    import pydoc

    from hpcds1mpi.decide.system1 import OBJECTIVES
    from hpcds1mpi.schemas.api_args import ApiArguments
    from hpcds1mpi.schemas.limits import MAX_SIZE

    with pytest.raises(ConfigError, match=re.escape("see help(hpcds1mpi.api) for each "
                                                    "argument's type and range")):
        model.recommend("stencil", 2**50)
    shown = pydoc.render_doc(hpcds1mpi.api, renderer=pydoc.plaintext)
    assert f"size: an integer, 1 to {MAX_SIZE:,}" in shown
    ranges = hpcds1mpi.api.ARGUMENT_RANGES
    assert all(re.search(rf"\b{name}\b", ranges) for name in ApiArguments.model_fields)
    assert all(f"'{objective}'" in ranges for objective in OBJECTIVES)


def test_each_recommended_row_says_its_own_partitions_extrapolation(tmp_path):
    """s37 reviewer R7: the alternatives and front took the pick's partition's lines; each row
    now says what ``predict`` says for that configuration on its own partition (one of them
    with a GPU the bundle never measured)."""
    import hpcds1mpi

    model = hpcds1mpi.load_model()
    cluster = tmp_path / "two.toml"
    cluster.write_text("[clusters.two.partitions.small]\ncores_per_node = 2\n"
                       "memory_gb = 25.3\nmax_nodes = 1\n"
                       "[clusters.two.partitions.wide]\ncores_per_node = 2\n"
                       "memory_gb = 25.3\nmax_nodes = 8\ngpus_per_node = 1\n"
                       "gpu_memory_gb = 16\n")
    cluster = str(cluster)
    rec = model.recommend("stencil", 256, cluster=cluster)
    rows = [rec.pick, *rec.alternatives, *rec.front]
    assert {r.partition for r in rows} >= {rec.pick.partition}
    for row in rows:
        said = model.predict([row.config], "stencil", 256, cluster=cluster,
                             partition=row.partition)[0]
        assert row.extrapolated == said.extrapolated, (row.config, row.partition)
