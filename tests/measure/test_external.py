"""External-program mode: one launch per configuration, exit classified, FOM read."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from hpcds1mpi.measure import external
from hpcds1mpi.measure.plan import RunSpec
from hpcds1mpi.records import telemetry
from hpcds1mpi.config import Configuration
from hpcds1mpi.errors import ConfigError
from tests.helpers import hpcds1mpi_exe, run_cli

pytestmark = pytest.mark.mpi

APP = """
import os, sys
size = int(sys.argv[1])
rank = int(os.environ.get("PMI_RANK", "0"))
if size == 13:
    sys.exit(3)                                   # a plain failure
if size == 17:
    print("Killed: out of memory", file=sys.stderr); sys.exit(137)
if size == 19:
    import time; time.sleep(60)                   # hangs past the timeout
if rank == 0:
    print(f"threads={os.environ['OMP_NUM_THREADS']} prec={os.environ['HPCDS1MPI_PRECISION']}")
    print(f"GFLOPS: {size * 1.5}")
"""


def test_external_sweep_statuses_fom_and_resume(tmp_path):
    app = tmp_path / "app.py"
    app.write_text(APP)
    out = tmp_path / "app.h5"
    args = ["sweep", "--command", f"{sys.executable} {app} {{size}}", "--label", "myapp",
            "--sizes", "10,13,17,19", "--ranks-per-node", "1,2", "--threads", "2",
            "--precisions", "fp32", "--timeout", "3", "--fom-regex", r"GFLOPS: ([0-9.]+)",
            "--out", str(out), "--no-progress"]
    proc = run_cli(args, timeout=200)
    assert proc.returncode == 0, proc.stderr
    df = telemetry.read_runs(out)
    assert len(df) == 8 and (df["workload"] == "myapp").all() and (df["kind"] == "external").all()
    by = {(int(r.size), int(r.ranks)): r for r in df.itertuples()}
    for ranks in (1, 2):
        assert by[(10, ranks)].status == "ok" and by[(10, ranks)].fom == pytest.approx(15.0)
        assert by[(13, ranks)].status == "failed" and "exit code 3" in by[(13, ranks)].error
        assert by[(17, ranks)].status == "oom"
        assert by[(19, ranks)].status == "timeout"
        assert 2.5 < by[(19, ranks)].runtime_s < 20
    ok = by[(10, 2)]
    assert ok.runtime_s > 0 and ok.cpu_s > 0 and ok.energy_source == "modelled"
    assert "-n 2" in ok.command and str(app) in ok.command
    # Resume: nothing is launched again, nothing duplicated.
    proc = run_cli(args + ["--resume"], timeout=60)
    assert proc.returncode == 0 and "8 already done" in proc.stderr
    assert len(telemetry.read_runs(out)) == 8


def test_placeholders_and_env_reach_the_program(tmp_path):
    spec = RunSpec("x", 42, Configuration(1, 2, 3, "cpu", "bf16"), 0, (("command", "c"),))
    assert external.format_command("app --n {size} -t {threads} -p {precision} -r {ranks}",
                                   spec) == ["app", "--n", "42", "-t", "3", "-p", "bf16", "-r", "2"]
    # Unknown braces stay literal (str.format refused them; the scripts kept them).
    assert external.format_command("awk '{print $1}' {nope} {size}", spec) == \
        ["awk", "{print $1}", "{nope}", "42"]
    with pytest.raises(ConfigError, match="--command"):
        external.format_command("app 'unbalanced", spec)


def test_classify_exit_codes():
    base = {"stdout": "", "stderr": "", "timed_out": False}
    assert external.classify({**base, "exit_code": 0}, 5)[0] == "ok"
    assert external.classify({**base, "exit_code": 1, "stderr": "bad\n"}, 5) == \
        ("failed", "exit code 1: bad")
    assert external.classify({**base, "exit_code": 137}, 5)[0] == "oom"
    assert external.classify({**base, "exit_code": 1, "stderr": "std::bad_alloc"}, 5)[0] == "oom"
    assert external.classify({**base, "exit_code": -9, "timed_out": True}, 5)[0] == "timeout"


def test_command_needs_sizes_and_no_plan(tmp_path):
    proc = run_cli(["sweep", "--command", "true", "--out", str(tmp_path / "x.h5")], timeout=60)
    assert proc.returncode != 0 and "--sizes" in proc.stderr
    assert not (tmp_path / "x.h5").exists()


# ---- the measured job is the submitted job -------------------------------------------------

# Writes its environment (the program rule's variables) and its argv to $DUMP/<size>.json.
DUMP_APP = """
import json, os, sys
names = [k for k in os.environ if k.startswith(("OMP_", "OPENBLAS_", "MKL_", "HPCDS1MPI_"))]
with open(os.path.join(os.environ["DUMP"], sys.argv[1] + ".json"), "w") as fh:
    json.dump({"env": {k: os.environ[k] for k in names}, "argv": sys.argv[1:]}, fh)
"""

FAKE_SRUN = """#!/bin/sh
# srun stand-in: drop srun's options, run the program once.
while [ $# -gt 0 ]; do
  case "$1" in -c|-n|-N) shift 2;; -*) shift;; *) break;; esac
done
[ $# -gt 0 ] && exec "$@"
echo "slurm 23.02 (fake)"
"""


def _clean_env(tmp_path) -> dict:
    # The rule's variables must come from the sweep, not from the test's own environment.
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OMP_", "OPENBLAS_", "MKL_", "HPCDS1MPI_", "SLURM_"))}
    env["DUMP"] = str(tmp_path)
    return env


def _cli(args: list[str], env: dict) -> subprocess.CompletedProcess:
    # run_cli merges os.environ back in; these tests need exactly ``env``.
    return subprocess.run([hpcds1mpi_exe(), *args], env=env, capture_output=True, text=True,
                          timeout=120)


def _script_exports(text: str) -> dict:
    exports = {}
    for line in text.splitlines():
        if line.startswith("export "):
            name, value = line[len("export "):].split("=", 1)
            exports[name] = shlex.split(value)[0]
    return exports


def _job(config, program, size):
    from hpcds1mpi.cluster import Partition
    from hpcds1mpi.launch.directives import BatchJob

    part = Partition("p", cores_per_node=8, memory_gb=8, max_nodes=2)
    return BatchJob(config, part, program, size=size, job_name="envcheck")


@pytest.mark.parametrize("launcher,scheduler", [("mpiexec", "pbs"), ("srun", "slurm")])
def test_measured_environment_equals_the_scripts_variable_by_variable(tmp_path, launcher,
                                                                      scheduler):
    """A --command program's environment, seen by the launched program itself, is the one the
    generated script for the same launcher exports: mpiexec <-> PBS, srun <-> Slurm."""
    from hpcds1mpi.launch import scripts

    app = tmp_path / "dump.py"
    app.write_text(DUMP_APP)
    env = _clean_env(tmp_path)
    if launcher == "srun":
        bin_dir = tmp_path / "bin"
        bin_dir.mkdir()
        (bin_dir / "srun").write_text(FAKE_SRUN)
        (bin_dir / "srun").chmod(0o755)
        env["PATH"] = f"{bin_dir}:{env['PATH']}"
    program = f"{sys.executable} {app} {{size}}"
    proc = _cli(["sweep", "--command", program, "--label", "envcheck", "--sizes", "5",
                 "--threads", "3", "--precisions", "fp32", "--launcher", launcher,
                 "--out", str(tmp_path / "e.h5"), "--no-progress"], env)
    assert proc.returncode == 0, proc.stderr
    measured = json.loads((tmp_path / "5.json").read_text())["env"]
    config = Configuration(1, 1, 3, "cpu", "fp32")
    exported = _script_exports(scripts.render(_job(config, program, 5), scheduler))
    assert measured == exported
    assert measured["OPENBLAS_NUM_THREADS"] == "3"
    assert ("OMP_PROC_BIND" in measured) == (launcher == "srun")


def test_literal_braces_behave_the_same_in_sweep_calibration_and_recommended_script(tmp_path):
    """One program with literal braces: the argv the sweep launches, the argv the recommended
    script launches, and the argv the calibration script's step measures are the same."""
    from hpcds1mpi.cluster import Partition
    from hpcds1mpi.launch import scripts

    app = tmp_path / "dump.py"
    app.write_text(DUMP_APP)
    program = f"{sys.executable} {app} {{size}} '{{print $1}}' {{nope}} {{threads}}"
    config = Configuration(1, 1, 2, "cpu", "fp64")
    env = _clean_env(tmp_path)
    # 1. The sweep.
    proc = _cli(["sweep", "--command", program, "--label", "braces", "--sizes", "7",
                 "--threads", "2", "--out", str(tmp_path / "s.h5"), "--no-progress"], env)
    assert proc.returncode == 0, proc.stderr
    swept = json.loads((tmp_path / "7.json").read_text())["argv"]
    assert swept == ["7", "{print $1}", "{nope}", "2"]
    (tmp_path / "7.json").unlink()
    # 2. The recommended script, run with srun stubbed to run the program once.
    text = scripts.render(_job(config, program, 7), "slurm")
    stub = "srun() { while [ \"${1#-}\" != \"$1\" ]; do [ \"$1\" = -c ] && shift; shift; done; \"$@\"; }\n"
    body = text.split("\n", 1)[1]
    proc = subprocess.run(["bash", "-c", stub + body], env=env, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads((tmp_path / "7.json").read_text())["argv"] == swept
    (tmp_path / "7.json").unlink()
    # 3. The calibration script: its step is a real `hpcds1mpi sweep --command` (here outside
    # Slurm it launches with mpiexec); it renders and measures, it does not fail.
    part = Partition("p", cores_per_node=8, memory_gb=8, max_nodes=1)
    calib = scripts.render_calibration([scripts.CalibrationStep(config, "x")], part, "braces", 7,
                                       program=program, telemetry=str(tmp_path / "c.h5"))
    env["PATH"] = f"{Path(sys.executable).parent}:{env['PATH']}"
    proc = subprocess.run(["bash", "-c", calib.split("\n", 1)[1]], env=env, capture_output=True,
                          text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 0 and "failed (recorded)" not in proc.stderr, proc.stderr
    assert json.loads((tmp_path / "7.json").read_text())["argv"] == swept
    rows = telemetry.read_runs(tmp_path / "c.h5")
    assert list(rows["status"]) == ["ok"]
