"""The calibration sweep of an escalated job: enough configurations to train a model of a
partition the model was not trained on, and a script whose closing advice works there."""

from __future__ import annotations

import os

import numpy as np
import pytest

from hpcds1mpi.cluster import Partition
from hpcds1mpi.decide.calibration_sweep import CALIBRATION_STEPS, calibration_steps
from hpcds1mpi.decide.scores import Scores
from hpcds1mpi.records.training import MIN_OK_RUNS
from hpcds1mpi.launch import calibration_script as calib

DEBUG = Partition(name="debug", cores_per_node=2, memory_gb=3.9, max_nodes=2)


def scores(rows, partition: str = "debug") -> Scores:
    """Scored candidates (nodes, ranks per node, threads, precision) with widening intervals."""
    n = len(rows)
    cols = {"partition": np.array([partition] * n), "device": np.array(["cpu"] * n),
            "nodes": np.array([r[0] for r in rows]),
            "ranks_per_node": np.array([r[1] for r in rows]),
            "threads": np.array([r[2] for r in rows]),
            "precision": np.array([r[3] for r in rows]),
            "runtime_s": np.full(n, 10.0), "runtime_lo": 10.0 - np.arange(n, dtype=float),
            "runtime_hi": 10.0 + np.arange(n, dtype=float), "reason": np.array([""] * n),
            "mem_need_mb": np.full(n, 100.0), "mem_limit_mb": np.full(n, 3000.0)}
    return Scores(cols, "abinit", 16)


def layouts(nodes=(1, 2), precisions=("fp64",)):
    """Every layout of a 2-core node, as the grid offers a program measured at fp64 only."""
    return [(n, r, t, p) for n in nodes for r, t in ((1, 1), (1, 2), (2, 1)) for p in precisions]


def test_a_calibration_measures_as_many_runs_as_a_model_needs():
    assert CALIBRATION_STEPS >= MIN_OK_RUNS


def test_a_node_of_too_few_layouts_is_completed_on_the_next_node_count():
    """A 2-core node holds 3 layouts of a program: 3 runs train no model (tester U's calibration
    job measured 3 and `train` refused them), so the 4th step runs on 2 nodes."""
    steps = calibration_steps(scores(layouts()), DEBUG)
    labels = [s.config.label() for s in steps]
    assert len(set(labels)) == MIN_OK_RUNS, labels
    assert sorted(s.config.nodes for s in steps) == [1, 1, 1, 2]


def test_one_node_of_enough_configurations_stays_on_one_node():
    steps = calibration_steps(scores(layouts(precisions=("fp64", "fp32"))), DEBUG)
    assert len(steps) == CALIBRATION_STEPS and {s.config.nodes for s in steps} == {1}
    # The widest interval of each precision first, then the anchor: every core a rank.
    assert [s.reason.split(" (")[0] for s in steps[:2]] == [
        "widest runtime interval for cpu fp32", "widest runtime interval for cpu fp64"]
    assert any(s.config.ranks_per_node == 2 and s.config.threads == 1 for s in steps)


def test_a_partition_of_fewer_configurations_than_steps_measures_them_all():
    steps = calibration_steps(scores(layouts(nodes=(1,))), DEBUG)
    assert len(steps) == 3


def _script(steps, **values) -> str:
    from hpcds1mpi.launch import scripts
    from hpcds1mpi.launch.directives import BatchJob

    job = BatchJob(config=steps[0].config, partition=DEBUG, program=["true"])
    return scripts.render_template("calibration", job, "slurm", workload="gemm", size=16,
                                   reason="", telemetry="calibration.h5", steps=[], **values)


def _advice(script: str) -> str:
    return " ".join(line[2:] for line in script.splitlines() if line.startswith("# ")
                    and "Written by" not in line)


@pytest.mark.parametrize("new_machine", [None, True, False], ids=["unknown", "new", "trained"])
def test_the_script_says_what_makes_its_runs_a_model(new_machine):
    """learn takes runs of a partition the model was trained on; those of another partition are
    another machine, which learn refuses: they train a model of their own."""
    steps = calibration_steps(scores(layouts()), DEBUG)
    values = {} if new_machine is None else {"new_machine": new_machine}
    text = _advice(_script(steps, **values))
    learn = "hpcds1mpi learn --model MODEL_DIR --telemetry calibration.h5 --out NEW_MODEL_DIR"
    train = "hpcds1mpi train --telemetry calibration.h5 --out NEW_MODEL_DIR"
    assert (learn in text) == (new_machine is not True)
    assert (train in text) == (new_machine is not False)
    if new_machine is not False:
        assert f"at least {MIN_OK_RUNS} ok runs" in text


def test_the_script_of_an_escalated_program_on_a_new_partition_has_four_steps(tmp_path):
    """Tester U's case: partition debug (2 cores) unlike the trained one; a program measured
    at fp64 only (no {precision} in its command). The script measures 4 configurations and
    names train."""
    from hpcds1mpi.launch import scripts

    steps = calibration_steps(scores(layouts()), DEBUG)
    text = calib.render_calibration(steps, DEBUG, "abinit", 16, program="/bin/true si.abi")
    assert text.count("hpcds1mpi sweep --command") == MIN_OK_RUNS
    assert "#SBATCH --nodes=2" in text
    assert "hpcds1mpi train --telemetry calibration.h5 --out NEW_MODEL_DIR" in text


def _folder_script(tmp_path, workdir: str) -> str:
    """A calibration script of tester Y's four steps (``--workdir 'runs/{size}-{ranks}'``,
    size 2048) whose steps only say that they ran."""
    from hpcds1mpi.config import Configuration
    from hpcds1mpi.decide.calibration_folders import step_folders
    from hpcds1mpi.launch import scripts
    from hpcds1mpi.launch.directives import BatchJob

    configs = [Configuration(1, 1, 2), Configuration(1, 2, 1), Configuration(1, 1, 1),
               Configuration(2, 1, 2)]
    steps = [calib.CalibrationStep(c, "why") for c in configs]
    values = step_folders(steps, 2048, {"workdir": workdir, "time_regex": "t: (.+)"})
    job = BatchJob(config=Configuration(2, 2, 1), partition=DEBUG, program=["true"],
                   job_name="heatm-calib", exclusive=True)
    rendered = [{"label": c.label(), "reason": "why", "environment": "X=1",
                 "launch": f"echo ran {c.label()}"} for c in configs]
    text = scripts.render_template("calibration", job, "slurm", workload="heatm", size=2048,
                                   reason="escalated", telemetry="calibration.h5",
                                   steps=rendered, **values)
    (tmp_path / "calib.sbatch").write_text(text)
    return text


def test_a_calibration_with_missing_workdir_folders_stops_before_its_first_step(tmp_path):
    """s28 tester Y2: with --workdir 'runs/{size}-{ranks}', each of the 4 steps failed alike
    ('--workdir 'runs/2048-1' ... is not a folder'), then 'every step failed'. The script now
    names the folders at its top and checks them all before the first step: one line, exit 1."""
    import subprocess

    text = _folder_script(tmp_path, "runs/{size}-{ranks}")
    assert ("# that fails does not stop the others; the job exits 1 when every step failed.\n"
            "# Before you submit: the steps run in --workdir 'runs/{size}-{ranks}'; these "
            "folders must\n# exist, with the program's input, in the folder you submit from: "
            "runs/2048-1, runs/2048-2\n# (never created here") in text

    def submit():
        return subprocess.run(["bash", "calib.sbatch"], cwd=tmp_path, capture_output=True,
                              text=True, timeout=30)

    (tmp_path / "runs" / "2048-2").mkdir(parents=True)
    done = submit()
    assert done.returncode == 1 and "ran" not in done.stdout
    assert done.stderr == (f"calibration: no step ran: --workdir folder(s) runs/2048-1 missing "
                           f"in {tmp_path}; create each with the program's input, then submit "
                           "again\n")
    (tmp_path / "runs" / "2048-1").mkdir()
    done = submit()
    assert done.returncode == 0 and done.stdout.count("ran N") == 4, done.stderr


def test_a_calibration_without_workdir_checks_no_folder(tmp_path):
    from hpcds1mpi.decide.calibration_folders import step_folders

    assert step_folders([], 2048, {"time_regex": "t: (.+)"}) == {} == step_folders([], 1, None)
    assert "missing_folders" not in _folder_script(tmp_path, "")


def test_recommend_says_which_workdir_the_steps_need_before_submitting():
    from hpcds1mpi.decide.calibration_sweep import calibration_measurement

    options, notes = calibration_measurement(None, {"workdir": "runs/{size}-{ranks}"})
    assert options == {"workdir": "runs/{size}-{ranks}"}
    assert notes[-1] == ("each step runs in --workdir 'runs/{size}-{ranks}' (placeholders filled "
                         "per step, from the folder you submit in): create those folders, with "
                         "the program's input, before you submit")
    assert not any("--workdir '" in n for n in calibration_measurement(None, {})[1])


def test_a_recorded_fail_regex_is_repeated_and_another_given_one_is_noted():
    """--fail-regex is a reading option like the others: the record's is used, a given one
    that differs is noted (learn would mix runs counted ok with runs counted failed), and a
    record from before the option existed is none, not a gap."""
    from hpcds1mpi.decide.calibration_sweep import calibration_measurement
    from hpcds1mpi.surrogates.levels import MeasuredLevels

    recorded = {"time_regex": "t=(\\S+)", "fom_regex": "", "ranks_regex": "",
                "output_file": "", "workdir": "", "fail_regex": "NOT converged"}
    levels = MeasuredLevels("scf", True, runtime="program's own time (--time-regex t=(\\S+))",
                            measured_with=recorded)
    options, notes = calibration_measurement(levels, {"fail_regex": None})
    # launched_with {}: the record names no launcher (the steps' srun; s29 V2-5)
    assert options == {"time_regex": "t=(\\S+)", "fail_regex": "NOT converged",
                       "launched_with": {}} and notes == []
    options, notes = calibration_measurement(levels, {"fail_regex": "did not converge"})
    assert options["fail_regex"] == "did not converge"
    assert notes == ["--fail-regex differs from how the model's runs were measured; learn "
                     "would mix the two: give the same, or keep these runs in a separate model"]
    old = MeasuredLevels.from_dict({"workload": "scf", "external": True,
                                    "runtime": levels.runtime, "measured_with": {
                                        k: v for k, v in recorded.items() if k != "fail_regex"}})
    options, notes = calibration_measurement(old, {})
    assert "fail_regex" not in options and notes == []
    assert "--fail-regex" in calibration_measurement(old, {"fail_regex": "NOT c"})[1][0]


def test_an_absolute_workdir_note_names_no_submit_folder():
    """s29 V1-2."""
    from hpcds1mpi.decide.calibration_sweep import calibration_measurement

    notes = calibration_measurement(None, {"workdir": "/scratch/{size}"})[1]
    assert any("--workdir '/scratch/{size}' (placeholders filled per step)" in n for n in notes)
    notes = calibration_measurement(None, {"workdir": "runs/{size}"})[1]
    assert any("per step, from the folder you submit in)" in n for n in notes)


def test_a_workdir_of_the_submit_folder_asks_no_folder_created():
    """s30 tester N5: --workdir '.' was noted as "create those folders" (the folder '.')."""
    from hpcds1mpi.decide.calibration_sweep import calibration_measurement

    options, notes = calibration_measurement(None, {"workdir": "."})
    assert options == {"workdir": "."}
    assert not any("create" in n or "--workdir" in n for n in notes), notes


def test_a_calibration_of_pooled_sweeps_of_two_launchers_launches_with_the_one_of_most_runs(
        tmp_path):
    """s31 F4: the levels of two sweeps pooled by train (one with this venv's mpiexec, two
    sizes; one with Debian's mpiexec.mpich, one size) keep both launchers; the calibration
    passed them on as they were, which the script ignored, so its steps took srun without a
    word. Now the steps launch with the one of the most runs, and the script says so."""
    import shutil
    import sys

    import pandas as pd

    from hpcds1mpi.decide.calibration_sweep import calibration_measurement
    from hpcds1mpi.launch import scripts
    from hpcds1mpi.records.telemetry_rows import telemetry_rows
    from hpcds1mpi.surrogates.levels import levels_from_frame
    from tests.helpers import run_cli

    here = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    other = shutil.which("mpiexec.mpich") or shutil.which("mpiexec.hydra")
    if other is None or not os.path.isfile(here):
        pytest.skip("needs two MPICH launchers (this venv's and Debian's mpiexec.mpich)")
    app = tmp_path / "app.sh"
    app.write_text('#!/bin/sh\necho "time: 0.01 s"\n')
    app.chmod(0o755)
    for sizes, launcher, out in (("1,2", here, "a.h5"), ("2", other, "b.h5")):
        res = run_cli(["sweep", "--command", f"{app} {{size}}", "--label", "app", "--sizes",
                       sizes, "--ranks-per-node", "1", "--threads", "1", "--time-regex",
                       r"time: ([0-9.]+) s", "--min-repeats", "1", "--max-repeats", "1",
                       "--min-time", "0", "--mpiexec", launcher, "--out", out,
                       "--no-progress"], timeout=180, cwd=tmp_path)
        assert res.returncode == 0, res.stderr
    pooled = levels_from_frame(pd.concat([telemetry_rows(str(tmp_path / f))
                                          for f in ("a.h5", "b.h5")], ignore_index=True))["app"]
    options, notes = calibration_measurement(pooled, {})
    assert options["launched_with"]["command"] == here
    assert (f"the pooled sweeps launched the program with 2 launchers ({here} (2 runs), "
            f"{other} (1 runs)); the steps launch with {here}, which ran the most runs, "
            "unless a cluster file names a launcher") in notes, notes
    steps = calibration_steps(scores(layouts()), DEBUG)
    text = calib.render_calibration(steps, DEBUG, "app", 2, program=f"{app} {{size}}",
                                    measure=options, notes=notes)
    assert text.count(f"--mpiexec {here}") == len(steps) and "--launcher srun" not in text
    assert (f"# note: each step launches with {here}, the mpiexec one of the program's "
            "sweeps ran it with (no cluster file names a launcher") in text, text
    assert "# note: the pooled sweeps launched the program with 2 launchers" in text


def test_a_program_without_precision_gets_its_steps_at_fp64_alone_and_a_note():
    # s33 tester D10: 4 steps listed (fp64, fp32, bf16, the anchor), the script ran 2.
    from hpcds1mpi.decide.calibration_sweep import program_precision_note

    rows = layouts(nodes=(1,), precisions=("fp64", "fp32", "bf16"))
    steps = calibration_steps(scores(rows), DEBUG, precisions=("fp64",))
    assert {s.config.precision for s in steps} == {"fp64"} and len(steps) == 3
    assert program_precision_note("./app {size} plain").startswith(
        "note: the calibration steps run at fp64 alone: the command takes no {precision}")
    assert program_precision_note("./app {size} {precision}") == ""
    assert program_precision_note(None) == ""


def _shape_scores(partition: Partition, widest_threads: tuple = (57, 63)) -> Scores:
    """Every configuration of one node of ``partition`` at fp64 and fp32, scored as the
    shipped model scores a node it never saw: the same relative interval everywhere, rounding
    noise making ``widest_threads`` (one rank) the widest (s34 tester S5's 57 and 63)."""
    from hpcds1mpi.config import DEVICES, PRECISIONS, configuration_grid

    grid = configuration_grid(partition, max_nodes=1, precisions=("fp64", "fp32"))
    n = len(grid["nodes"])
    threads = grid["threads"]
    noise = np.where(np.isin(threads, widest_threads) & (grid["ranks_per_node"] == 1),
                     1e-12, 0.0)
    runtime = 10.0 / (grid["ranks_per_node"] * threads)
    cols = {"partition": np.array([partition.name] * n),
            "device": np.array(DEVICES)[grid["device_code"]],
            "nodes": grid["nodes"], "ranks_per_node": grid["ranks_per_node"],
            "threads": threads, "precision": np.array(PRECISIONS)[grid["precision_code"]],
            "runtime_s": runtime, "runtime_lo": runtime * 0.5,
            "runtime_hi": runtime * (1.5 + noise), "reason": np.array([""] * n),
            "mem_need_mb": np.full(n, 100.0), "mem_limit_mb": np.full(n, 3000.0)}
    return Scores(cols, "stencil", 300)


@pytest.mark.parametrize("gpus", [8, 6])
def test_a_big_gpu_nodes_calibration_spans_the_nodes_shape(gpus):
    """s34 tester S5: on a 128-core node of 8 GPUs every step was one rank of 57 or 63 threads
    (odd counts no job runs), the GPU steps on one GPU: the model is unsure alike everywhere
    there, so rounding noise chose. Now threads and ranks that divide the node, the every-core-
    a-rank anchor, and GPU steps on one GPU and on every GPU (one rank each); 6 GPUs, which
    do not divide 128 cores, too."""
    node = Partition(name="gpu", cores_per_node=128, memory_gb=1024, max_nodes=4096,
                     gpus_per_node=gpus, gpu_memory_gb=80)
    steps = calibration_steps(_shape_scores(node), node)
    shapes = {(s.config.device, s.config.ranks_per_node, s.config.threads) for s in steps}
    assert len(steps) >= CALIBRATION_STEPS and {s.config.nodes for s in steps} == {1}
    assert all(128 % t == 0 for _, _, t in shapes), shapes
    assert all(128 % r == 0 or (d == "gpu" and gpus % r == 0) for d, r, _ in shapes), shapes
    assert ("cpu", 128, 1) in shapes
    on_gpus = {r for d, r, _ in shapes if d == "gpu"}
    assert {1, gpus} <= on_gpus, shapes
    assert getattr(steps, "left_out", "") == ""  # 0.02 s runs: every step has time


def test_a_big_gpu_nodes_calibration_script_asks_for_every_gpu(tmp_path, capsys):
    """s34 tester S5's own command, with the shipped model: ``recommend --workload stencil
    --size 300 --cluster biggpu.toml --emit slurm`` wrote 4 steps of one rank and 57 or 63
    threads and asked for one GPU."""
    import re

    from tests.badinput.harness import invoke

    (tmp_path / "biggpu.toml").write_text(
        "[clusters.biggpu]\n[clusters.biggpu.partitions.gpu]\ncores_per_node = 128\n"
        "memory_gb = 1024\nmax_nodes = 4096\ngpus_per_node = 8\ngpu_memory_gb = 80\n")
    out = tmp_path / "cal.sbatch"
    res = invoke(capsys, ["recommend", "--workload", "stencil", "--size", "300", "--cluster",
                          str(tmp_path / "biggpu.toml"), "--emit", "slurm", "--output",
                          str(out)])
    assert res.code == 0, res.err
    text = out.read_text()
    steps = re.findall(r"^# N(\d+)xR(\d+)xT(\d+)-(cpu|gpu)-\w+: ", text, re.M)
    assert len(steps) >= CALIBRATION_STEPS, text
    assert all(128 % int(t) == 0 for _, _, t, _ in steps), steps
    assert ("1", "128", "1", "cpu") in steps
    assert {int(r) for n, r, _, d in steps if d == "gpu" and n == "1"} >= {1, 8}, steps
    assert "#SBATCH --gpus-per-node=8" in text
    assert f"calibration: $(({len(steps)} - steps_failed)) of {len(steps)} steps ran" in text


def test_the_script_states_trains_minimum_as_train_applies_it(monkeypatch):
    """s39 review: the template wrote 4 for train's minimum, a copy of config.MIN_OK_RUNS that
    a change of it would leave wrong."""
    import hpcds1mpi.config
    from hpcds1mpi.launch import scripts

    steps = calibration_steps(scores(layouts()), DEBUG)
    assert len(steps) == 4
    monkeypatch.setattr(hpcds1mpi.config, "MIN_OK_RUNS", 6)
    text = _advice(calib.render_calibration(steps, DEBUG, "abinit", 16,
                                            program="/bin/true si.abi", new_machine=True))
    assert "at least 6 ok runs" in text and "at least 4 ok runs" not in text
    assert "These are 4 configurations, fewer than the 6 ok runs train needs" in text
