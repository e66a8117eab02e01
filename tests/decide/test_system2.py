"""System 2 (``hpcds1mpi tune``): the search on known tables, then real runs under mpiexec."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest

from hpcds1mpi.decide import system2
from hpcds1mpi.config import Configuration
from tests.helpers import run_cli, run_mpi, hpcds1mpi_exe

CLUSTER = """\
[clusters.box.partitions.debug]
cores_per_node = 2
memory_gb = 4
max_nodes = 1
"""


def _space(cores: int = 4, nodes: int = 1) -> system2.Space:
    from hpcds1mpi.cluster import Partition

    part = Partition("p", cores_per_node=cores, memory_gb=16, max_nodes=nodes)
    return system2.build_space(part, max_nodes=nodes, precisions=["fp64", "fp32"])


def _table_evaluator(table: dict, calls: list):
    """evaluate() over a dict config-label -> runtime (None = the run fails)."""
    def evaluate(config: Configuration) -> dict:
        calls.append(config.label())
        value = table.get(config.label(), 10.0)
        if value is None:
            return {"status": "oom", "error": "out of memory", "run_id": config.label()}
        return {"status": "ok", "runtime_s": value, "runtime_min_s": value * 0.99,
                "repeats": 3, "energy_j": value * 100, "run_id": config.label()}
    return evaluate


def _predictions(space, table: dict, spread: float = 0.1) -> system2.Predictions:
    n = len(space.configs)
    value = np.array([table.get(c.label(), 10.0) or 10.0 for c in space.configs], float)
    return system2.Predictions(value, np.full(n, spread), np.zeros(n), np.ones(n, bool))


# ------------------------------------------------------------------------- the search itself


def test_keeps_improvements_reverts_regressions_excludes_failures():
    space = _space()
    start = Configuration(1, 4, 1)
    table = {start.label(): 4.0,
             "N1xR2xT2-cpu-fp64": 6.0,   # slower: reverted
             "N1xR2xT1-cpu-fp64": None,  # fails: excluded
             "N1xR4xT1-cpu-fp32": 2.0}   # better: kept
    calls = []
    result = system2.tune(space, start, _table_evaluator(table, calls), budget=20)
    decisions = {t.config.label(): t.decision for t in result.trials}
    assert calls[:4] == [start.label(), "N1xR2xT2-cpu-fp64", "N1xR2xT1-cpu-fp64",
                         "N1xR4xT1-cpu-fp32"]
    assert decisions[start.label()] == "start"
    assert decisions["N1xR2xT2-cpu-fp64"] == "reverted"
    assert decisions["N1xR2xT1-cpu-fp64"] == "excluded"
    assert decisions["N1xR4xT1-cpu-fp32"] == "kept"
    assert result.best == Configuration(1, 4, 1, "cpu", "fp32") and result.best_value == 2.0
    # Excluded and reverted configurations are never run again from the new best.
    assert len(calls) == len(set(calls)) == result.runs  # nothing run twice
    assert "local optimum" in result.stop_reason


def test_a_within_noise_result_is_not_kept():
    space = _space()
    start = Configuration(1, 4, 1)
    # 2 % better but the measured noise is 10 %: a real tuner must not chase that.
    table = {start.label(): 1.0, "N1xR4xT1-cpu-fp32": 0.98}

    def evaluate(config):
        value = table.get(config.label(), 2.0)
        return {"status": "ok", "runtime_s": value, "runtime_min_s": value * 0.9, "repeats": 5}

    result = system2.tune(space, start, evaluate, budget=3)
    assert result.best == start
    assert result.noise == pytest.approx(0.1)
    assert [t.decision for t in result.trials][1] == "reverted"


def test_model_guided_search_stops_when_expected_gain_is_below_noise():
    space = _space()
    start = Configuration(1, 2, 2)
    table = {c.label(): 5.0 for c in space.configs}
    table[start.label()] = 1.0
    calls = []
    result = system2.tune(space, start, _table_evaluator(table, calls),
                          predictions=_predictions(space, table), budget=10, min_runs=1)
    assert result.runs == 1 and calls == [start.label()]
    assert "below the measured noise" in result.stop_reason
    # By default confirmation runs of the best alternatives come first: one run cannot tell
    # the pick from its runner-up, however sure the model is.
    calls.clear()
    result = system2.tune(space, start, _table_evaluator(table, calls),
                          predictions=_predictions(space, table), budget=10)
    assert result.runs == system2.DEFAULT_MIN_RUNS > 1 and calls[0] == start.label()
    assert "below the measured noise" in result.stop_reason


def test_model_error_keeps_the_search_going_when_predictions_are_overconfident():
    """Members that agree (tiny spread) while the model is wrong: the measured/predicted
    ratios' spread must widen the expected improvement so the true winner is still tried."""
    space = _space()
    start = Configuration(1, 2, 2)
    predicted = {c.label(): 1.1 for c in space.configs}  # predicted 10 % slower
    predicted[start.label()] = 1.0
    truth = {c.label(): 0.5 for c in space.configs}  # every alternative twice as fast
    truth[start.label()] = 1.0
    preds = _predictions(space, predicted)
    preds.spread[:] = 0.001  # overconfident ensemble: its own spread says "no chance"
    calls = []
    result = system2.tune(space, start, _table_evaluator(truth, calls), predictions=preds,
                          budget=len(space.configs), min_runs=1)
    assert result.runs >= 2, result.stop_reason
    assert result.best_value == 0.5 and result.best != start


def test_a_model_wrong_on_two_nodes_does_not_stop_the_search_before_one_node():
    """Measured live: a one-node bundle predicted two nodes 5x faster than they are; the
    two-node runs' error must not be carried to the (right) one-node predictions unchecked."""
    space = _space(cores=2, nodes=2)
    truth = {c.label(): (1.0 + 0.1 * c.threads + 0.05 * c.ranks_per_node)
             * (1.5 if c.nodes == 2 else 1.0) for c in space.configs}
    truth["N1xR2xT1-cpu-fp32"] = 0.5  # the real winner: one node
    predicted = {k: (v / 5 if k.startswith("N2") else v) for k, v in truth.items()}
    preds = _predictions(space, predicted, spread=0.05)
    start = system2.system1_start(space, preds)
    assert start.nodes == 2  # System 1 is fooled
    calls = []
    result = system2.tune(space, start, _table_evaluator(truth, calls), predictions=preds,
                          budget=len(space.configs))
    assert result.best == Configuration(1, 2, 1, "cpu", "fp32"), (calls, result.stop_reason)


def test_model_guided_search_goes_straight_to_the_predicted_winner():
    space = _space()
    start = Configuration(1, 4, 1)
    table = {c.label(): 5.0 for c in space.configs}
    table[start.label()] = 4.0
    table["N1xR1xT2-cpu-fp32"] = 1.0
    calls = []
    result = system2.tune(space, start, _table_evaluator(table, calls),
                          predictions=_predictions(space, table), budget=10)
    assert calls[:2] == [start.label(), "N1xR1xT2-cpu-fp32"]
    assert result.best == Configuration(1, 1, 2, "cpu", "fp32")
    # Nothing else is expected to beat it: the search stops after the minimum runs.
    assert result.runs == system2.DEFAULT_MIN_RUNS
    assert "below the measured noise" in result.stop_reason


def test_budget_and_bad_start():
    space = _space()
    calls = []
    result = system2.tune(space, Configuration(1, 4, 1), _table_evaluator({}, calls), budget=2)
    assert result.runs == 2 and "budget" in result.stop_reason
    from hpcds1mpi.errors import ConfigError

    with pytest.raises(ConfigError, match="does not fit"):
        system2.tune(space, Configuration(1, 8, 1), _table_evaluator({}, []))


def test_failed_start_moves_on_to_a_working_configuration():
    space = _space()
    start = Configuration(1, 4, 1)
    calls = []
    result = system2.tune(space, start, _table_evaluator({start.label(): None}, calls), budget=3)
    assert result.trials[0].decision == "excluded"
    assert result.best is not None and result.best != start


def test_run_noise_ignores_one_slow_repeat():
    row = {"runtime_s": 1.0, "runtime_min_s": 0.97, "runtime_max_s": 9.0, "repeats": 5,
           "noise": 8.03}
    assert system2.run_noise(row) == pytest.approx(0.03)
    assert system2.run_noise({"runtime_s": 1.0, "repeats": 1}) == 0.0


def test_expected_improvement_is_zero_far_above_and_positive_below():
    ei = system2.expected_improvement(1.0, np.log(np.array([10.0, 0.5])), np.array([0.05, 0.05]))
    assert ei[0] < 1e-9 and ei[1] == pytest.approx(1 - 0.5 * np.exp(0.05 ** 2 / 2), rel=1e-6)


# ------------------------------------------------------------------------- real runs


def test_tune_outside_an_allocation_without_launcher_is_one_line(tmp_path):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SLURM_", "PMI_", "OMPI_", "PMIX_"))}
    import subprocess

    res = subprocess.run(
        [hpcds1mpi_exe(), "tune", "--kernel", "gemm", "--size", "64", "--out", "t.h5"],
        capture_output=True, text=True, timeout=60, env=env, cwd=tmp_path)
    assert res.returncode == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "inside an allocation" in lines[0] and "Traceback" not in res.stderr
    assert not (tmp_path / "t.h5").exists()


def test_submit_without_sbatch_is_one_line(tmp_path):
    (tmp_path / "c.toml").write_text(CLUSTER)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
    env["PATH"] = str(Path(sys.executable).parent)  # no sbatch here
    import subprocess

    res = subprocess.run([hpcds1mpi_exe(), "tune", "--kernel", "gemm", "--size", "64", "--out",
                          "t.h5", "--cluster", "c.toml", "--submit"], capture_output=True,
                         text=True, timeout=60, env=env, cwd=tmp_path)
    assert res.returncode == 2
    assert res.stderr.strip().count("\n") == 0 and "sbatch not found" in res.stderr


def test_tune_in_process_under_mpiexec_writes_every_run(tmp_path):
    (tmp_path / "c.toml").write_text(CLUSTER)
    res = run_mpi(2, [hpcds1mpi_exe(), "tune", "--kernel", "gemm", "--size", "192",
                      "--budget", "3", "--min-time", "0.05", "--max-repeats", "5",
                      "--cluster", "c.toml", "--out", "t.h5", "--json"], cwd=tmp_path,
                  timeout=240)
    assert res.returncode == 0, res.stderr[-2000:]
    data = json.loads(res.stdout)
    assert data["mode"] == "in-process" and data["start_from"] == "default"
    assert data["start"] == {"nodes": 1, "ranks_per_node": 2, "threads": 1, "device": "cpu",
                             "precision": "fp64"}
    assert 1 <= data["runs"] <= 3
    from hpcds1mpi.records.telemetry import read_runs

    runs = read_runs(tmp_path / "t.h5")
    assert len(runs) == data["runs"] and runs["run_id"].is_unique
    assert {t["run_id"] for t in data["trials"]} == set(runs["run_id"])
    best = min((t for t in data["trials"] if t["status"] == "ok"), key=lambda t: t["value"])
    assert data["best_value"] <= best["value"] * (1 + data["noise"]) + 1e-12


def test_tune_a_program_with_the_launcher_excludes_failures(tmp_path):
    (tmp_path / "c.toml").write_text(CLUSTER)
    # Runtime grows with threads; two ranks fail: the tuner must exclude that and settle on
    # one rank, one thread.
    app = tmp_path / "app.py"
    app.write_text("import os, sys, time\n"
                   "if os.environ.get('PMI_SIZE') == '2': sys.exit(3)\n"
                   "time.sleep(0.4 * int(os.environ['OMP_NUM_THREADS']))\n")
    res = run_cli(["tune", "--program", f"{sys.executable} {app}", "--label", "app",
                   "--size", "1", "--launcher", "mpiexec", "--cluster", "c.toml",
                   "--threads", "2", "--ranks-per-node", "1", "--budget", "4", "--out", "a.h5",
                   "--json"], cwd=tmp_path, timeout=240)
    assert res.returncode == 0, res.stderr[-2000:]
    data = json.loads(res.stdout)
    assert data["start_from"] == "your settings" and data["mode"] == "mpiexec"
    by_label = {t["label"]: t for t in data["trials"]}
    assert by_label["N1xR2xT1-cpu-fp64"]["decision"] == "excluded"
    assert by_label["N1xR2xT1-cpu-fp64"]["status"] == "failed"
    assert by_label["N1xR1xT1-cpu-fp64"]["decision"] == "kept"
    assert data["best"]["threads"] == 1 and data["best"]["ranks_per_node"] == 1
    from hpcds1mpi.records.telemetry import read_runs

    runs = read_runs(tmp_path / "a.h5")
    assert len(runs) == data["runs"] and set(runs["workload"]) == {"app"}


def test_tune_front_with_mobo_on_real_runs(tmp_path):
    (tmp_path / "c.toml").write_text(CLUSTER)
    res = run_cli(["tune", "--kernel", "gemm", "--size", "128", "--objective", "front",
                   "--budget", "4", "--launcher", "mpiexec", "--min-time", "0.02",
                   "--max-repeats", "3", "--cluster", "c.toml", "--out", "f.h5", "--json"],
                  cwd=tmp_path, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    data = json.loads(res.stdout)
    from hpcds1mpi.records.telemetry import read_runs

    runs = read_runs(tmp_path / "f.h5")
    assert 2 <= len(runs) == data["runs"] <= 4 and runs["run_id"].is_unique
    assert data["front"], data
    front = {(p["runtime_s"], p["energy_j"]) for p in data["front"]}
    ok = [(t["runtime_s"], t["energy_j"]) for t in data["trials"] if t["status"] == "ok"]
    for r, e in front:  # no measured point dominates a front point
        assert not any(r2 <= r and e2 <= e and (r2, e2) != (r, e) for r2, e2 in ok)


def test_learn_refuses_telemetry_of_another_machine(tmp_path):
    (tmp_path / "c.toml").write_text(CLUSTER)
    res = run_mpi(2, [hpcds1mpi_exe(), "sweep", "--kernel", "gemm", "--sizes", "64,128",
                      "--ranks-per-node", "1,2", "--threads", "1", "--precisions", "fp64,fp32",
                      "--min-time", "0.01", "--max-repeats", "2", "--cluster", "c.toml",
                      "--out", "mine.h5", "--no-progress"], cwd=tmp_path, timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    res = run_cli(["train", "--telemetry", "mine.h5", "--out", "model", "--members", "2",
                   "--no-embedding"], cwd=tmp_path, timeout=240)
    assert res.returncode == 0, res.stderr[-2000:]
    from hpcds1mpi.records import telemetry

    rows = telemetry.read_runs(tmp_path / "mine.h5").to_dict("records")
    for row in rows:
        row["machine_id"] = "f0f0f0f0f0f0f0f0"
        row["run_id"] = "x" + str(row["run_id"])[1:]
    telemetry.append(tmp_path / "other.h5", rows)
    manifest = (tmp_path / "model" / "manifest.json").read_text()
    res = run_cli(["learn", "--model", "model", "--telemetry", "other.h5"], cwd=tmp_path,
                  timeout=120)
    assert res.returncode == 2
    err = res.stderr.strip()
    assert err.count("\n") == 0 and "never mixed" in err and "f0f0f0f0f0f0" in err
    assert (tmp_path / "model" / "manifest.json").read_text() == manifest  # untouched


@pytest.mark.parametrize("relaunches", [1, 0])
def test_launch_that_never_started_the_sweep_is_made_again(tmp_path, monkeypatch, relaunches):
    """A launch failing before the sweep records anything (a PMI wire-up error on the test
    Slurm) is launched again once; with relaunches=0 the same launch stays a crash."""
    from hpcds1mpi.launch import launchers
    from hpcds1mpi.cluster import Partition

    marker = tmp_path / "failed-once"
    flaky = tmp_path / "flaky-launch"
    flaky.write_text("#!/bin/sh\n"
                     f"if [ ! -e {marker} ]; then touch {marker}; "
                     "echo 'PMI2 wire-up failed' >&2; exit 7; fi\n"
                     f"exec {launchers.mpiexec_path()} -n 1 \"$@\"\n")
    flaky.chmod(0o755)
    monkeypatch.setattr(launchers, "launch_tokens", lambda config, launcher=None: [str(flaky)])
    part = Partition("p", cores_per_node=2, memory_gb=4, max_nodes=1)
    settings = system2.RunSettings("stencil", 12, min_time=0.01, max_repeats=1)
    runner = system2.LaunchRunner(settings, str(tmp_path / "t.h5"), part, "srun",
                                  relaunches=relaunches)
    row = runner(Configuration(1, 1, 1, "cpu", "fp64"))
    if relaunches:
        assert row["status"] == "ok", row
        assert [r[1] for r in runner.relaunched] == [7]
    else:
        assert row["status"] == "crashed" and "launch exited 7" in row["error"], row
        assert runner.relaunched == []
