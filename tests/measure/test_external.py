"""External-program mode: one launch per configuration, exit classified, FOM read."""

from __future__ import annotations

import json
import re
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from hpcds1mpi.measure import external, external_plan
from hpcds1mpi.measure.plan import RunSpec
from hpcds1mpi.records import telemetry
from hpcds1mpi.config import Configuration
from hpcds1mpi.errors import ConfigError
from hpcds1mpi.launch import calibration_script as calib
from tests.helpers import error_lines, hpcds1mpi_exe, run_cli

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
    assert external_plan.format_command("app --n {size} -t {threads} -p {precision} -r {ranks}",
                                   spec) == ["app", "--n", "42", "-t", "3", "-p", "bf16", "-r", "2"]
    # Unknown braces stay literal (str.format refused them; the scripts kept them).
    assert external_plan.format_command("awk '{print $1}' {nope} {size}", spec) == \
        ["awk", "{print $1}", "{nope}", "42"]
    with pytest.raises(ConfigError, match="--command"):
        external_plan.format_command("app 'unbalanced", spec)


def test_classify_exit_codes():
    base = {"stdout": "", "stderr": "", "timed_out": False}
    assert external.classify({**base, "exit_code": 0}, 5)[0] == "ok"
    assert external.classify({**base, "exit_code": 1, "stderr": "bad\n"}, 5) == \
        ("failed", "exit code 1: bad")
    # a bare SIGKILL is no sign of memory (s46 testers G1, H1): oom near the memory only
    assert external.classify({**base, "exit_code": 137}, 5)[0] == "failed"
    assert external.classify({**base, "exit_code": 137, "rss_mb": 900.0}, 5, 1000.0)[0] == "oom"
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
    from hpcds1mpi.launch.open_mpi_binding import UNBIND_OPEN_MPI

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
    # The variable a bare mpiexec's script sets for Open MPI's mpirun (its rank binding) is
    # read by the launcher, not the program: the program rule's variables are compared.
    exported.pop(UNBIND_OPEN_MPI, None)
    # So is srun's SLURM_EXPORT_ENV=ALL (a job submitted with --export=NONE: s29 V2-1).
    exported.pop("SLURM_EXPORT_ENV", None)
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
    # 3. The calibration script: its step is a real `hpcds1mpi sweep --command ... --launcher
    # srun` (srun stubbed: a file this time, the sweep runs it); it renders and measures.
    part = Partition("p", cores_per_node=8, memory_gb=8, max_nodes=1)
    sweep = calib.render_calibration([calib.CalibrationStep(config, "x")], part, "braces", 7,
                                     program=program, telemetry=str(tmp_path / "c.h5"))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "srun").write_text(FAKE_SRUN)
    (bin_dir / "srun").chmod(0o755)
    env["PATH"] = f"{bin_dir}:{Path(sys.executable).parent}:{env['PATH']}"
    proc = subprocess.run(["bash", "-c", sweep.split("\n", 1)[1]], env=env, capture_output=True,
                          text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 0 and "failed (exit" not in proc.stderr, proc.stderr
    assert json.loads((tmp_path / "7.json").read_text())["argv"] == swept
    rows = telemetry.read_runs(tmp_path / "c.h5")
    assert list(rows["status"]) == ["ok"]


# ---- launcher failures, options of the other mode, signals ----------------------------------


def _one_line_error(proc, code):
    assert proc.returncode == code, proc.stderr
    assert "Traceback" not in proc.stderr and len(error_lines(proc.stderr)) == 1, proc.stderr


def test_a_program_that_cannot_start_is_refused_before_anything_is_stored(tmp_path):
    out = tmp_path / "x.h5"
    script = tmp_path / "app.sh"
    script.write_text("#!/bin/sh\necho hi\n")  # not executable
    for program, words in [("/nonexistent/app", "not found"), ("no-such-app-xyz {size}",
                                                                 "not on PATH"),
                           (str(script), "not an executable"), (str(tmp_path), "executable")]:
        proc = run_cli(["sweep", "--command", program, "--sizes", "1", "--out", str(out),
                        "--no-progress"], timeout=60)
        _one_line_error(proc, 2)
        assert words in proc.stderr
        assert not out.exists() and not telemetry.journal_path(out).exists()


def test_the_launchers_cannot_start_words_are_a_launch_problem():
    base = {"stdout": "", "timed_out": False}
    hydra = ("[proxy:0@vm] HYDU_create_process (launch.c:73): execvp error on file ./app "
             "(Permission denied)\n")
    assert "execvp error" in external.launch_problem({**base, "exit_code": 255, "stderr": hydra})
    srun = "slurmstepd: error: execve(): /x/app: No such file or directory\n"
    assert "execve()" in external.launch_problem({**base, "exit_code": 2, "stderr": srun})
    assert external.launch_problem({**base, "exit_code": 127,
                                    "stderr": "sh: 1: app: command not found\n"})
    # A program's own failure stays a measurement.
    assert not external.launch_problem({**base, "exit_code": 1,
                                        "stderr": "input.dat: No such file or directory\n"})
    assert not external.launch_problem({**base, "exit_code": 0, "stderr": hydra})


@pytest.mark.parametrize("extra, words", [
    (["--retry-crashed"], "--retry-crashed applies to kernel sweeps only"),
    (["--race-rounds", "3"], "--race-rounds applies to kernel sweeps only"),
    (["--kernel-module", "x.py"], "--kernel-module"),
    (["--launch", "2"], "drop --launch"),
])
def test_kernel_sweep_options_are_refused_with_command(tmp_path, extra, words):
    out = tmp_path / "x.h5"
    proc = run_cli(["sweep", "--command", "true", "--sizes", "1", "--out", str(out), *extra,
                    "--no-progress"], timeout=60)
    _one_line_error(proc, 2)
    assert words in proc.stderr and not out.exists()


@pytest.mark.parametrize("extra, words", [
    (["--label", "x"], "--label applies to --command sweeps only"),
    (["--fom-regex", "(1)"], "--fom-regex"), (["--launcher", "mpiexec"], "drop it"),
])
def test_external_options_are_refused_without_command(tmp_path, extra, words):
    proc = run_cli(["sweep", "--kernel", "stencil", "--sizes", "8", "--out",
                    str(tmp_path / "x.h5"), *extra, "--no-progress"], timeout=60)
    _one_line_error(proc, 2)
    assert words in proc.stderr


# Size 1 ends at once; size 2 writes its pid and its child's, then waits (a long run); once
# the pid file is there (a rerun), size 2 ends at once too.
SLOW_APP = """
import os, subprocess, sys, time
if sys.argv[1] == "2" and not os.path.exists(sys.argv[2]):
    child = subprocess.Popen(["sleep", "60"])
    with open(sys.argv[2], "w") as fh:
        fh.write(f"{os.getpid()} {child.pid}")
    time.sleep(60)
"""


def _slow_args(tmp_path):
    app = tmp_path / "slow.py"
    app.write_text(SLOW_APP)
    return ["sweep", "--command", f"{sys.executable} {app} {{size}} {tmp_path / 'pids'}",
            "--sizes", "1,2", "--timeout", "120", "--out", str(tmp_path / "s.h5"),
            "--min-repeats", "1", "--max-repeats", "1", "--no-progress"]


def _start_slow_sweep(tmp_path, extra=()):
    pids = tmp_path / "pids"
    out = tmp_path / "s.h5"
    proc = subprocess.Popen([hpcds1mpi_exe(), *_slow_args(tmp_path), *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    import time

    deadline = time.monotonic() + 60
    while not (pids.exists() and pids.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert pids.exists(), "the program never started"
    return proc, out, [int(p) for p in pids.read_text().split()]


def _alive(pid: int) -> bool:
    import psutil

    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_a_signal_to_the_external_sweep_kills_the_program_and_the_run_is_interrupted(
        tmp_path, sig):
    import signal as signals
    import time

    proc, out, pids = _start_slow_sweep(tmp_path)
    proc.send_signal(getattr(signals, sig))
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 1, err
    assert "Traceback" not in err and len(error_lines(err)) == 1, err
    assert f"stopped by {sig}" in err and "--resume" in err
    time.sleep(0.2)
    assert not [p for p in pids if _alive(p)], "the user's program outlived the sweep"
    df = telemetry.read_runs(out).set_index("size")
    assert df.loc[1, "status"] == "ok" and df.loc[2, "status"] == "interrupted"
    assert df.loc[2, "energy_source"] == ""  # not a measurement: no modelled energy
    assert not telemetry.lock_path(out).exists() and not telemetry.journal_path(out).exists()
    # --resume runs the interrupted run again, not the finished one.
    proc = run_cli([*_slow_args(tmp_path), "--resume"], timeout=120)
    assert proc.returncode == 0 and "1 already done" in proc.stderr, proc.stderr
    df = telemetry.read_runs(out).set_index("size")
    assert df.loc[2, "status"] == "ok" and df.loc[2, "attempt"] == 2 and len(df) == 2


def test_snapshot_every_applies_to_the_external_sweep(tmp_path):
    """With --snapshot-every 0 the HDF5 snapshot itself (not only the journal) holds the first
    run while the second one runs; SIGKILL of the sweep then loses nothing and the launch,
    told by the kernel, ends the user's program."""
    import h5py

    proc, out, pids = _start_slow_sweep(tmp_path, ["--snapshot-every", "0"])
    with h5py.File(out, "r") as f:
        assert [x.decode() for x in f["runs/run_id"][()]] != []
    import signal as signals

    os.killpg(proc.pid, signals.SIGKILL)  # the sweep cannot catch this
    proc.communicate(timeout=30)
    import time

    deadline = time.monotonic() + 20  # the launcher was told (PR_SET_PDEATHSIG) and ends it
    while [p for p in pids if _alive(p)] and time.monotonic() < deadline:
        time.sleep(0.1)
    left = [p for p in pids if _alive(p)]
    for pid in left:
        os.kill(pid, signals.SIGKILL)
    assert not left, "the user's program outlived a SIGKILL of the sweep"
    df = telemetry.read_runs(out).set_index("size")
    assert df.loc[1, "status"] == "ok" and df.loc[2, "status"] == "interrupted"


def test_disk_full_ends_the_external_sweep_with_one_line_and_keeps_finished_runs(small_disk):
    from tests.helpers import fill_disk

    out = small_disk / "e.h5"
    args = ["sweep", "--command", "true {size}", "--sizes", "1..512", "--ranks-per-node", "1",
            "--out", str(out), "--no-progress", "--snapshot-every", "0", "--resume"]
    for leave in (0, 100 * 1024):
        filler = fill_disk(small_disk, leave)
        proc = run_cli(args, timeout=120)
        _one_line_error(proc, 1)
        assert "No space left on device" in proc.stderr
        filler.unlink()
        kept = telemetry.read_runs(out) if out.exists() else None
        if leave:
            assert kept is not None and len(kept) >= 1 and (kept["status"] == "ok").all()
    proc = run_cli(args, timeout=120)
    assert proc.returncode == 0, proc.stderr
    df = telemetry.read_runs(out)
    assert len(df) == len(set(df["run_id"])) == 10 and (df["status"] == "ok").all()


def test_a_missing_launcher_is_one_line_exit_1_before_anything_is_stored(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
    env["PATH"] = str(Path(sys.executable).parent)  # no srun here
    out = tmp_path / "x.h5"
    proc = subprocess.run([hpcds1mpi_exe(), "sweep", "--command", sys.executable, "--sizes",
                           "1", "--launcher", "srun", "--out", str(out), "--no-progress"],
                          capture_output=True, text=True, timeout=60, env=env)
    _one_line_error(proc, 1)
    assert "srun" in proc.stderr and not out.exists()


def test_a_programs_repeats_default_to_at_least_three_and_are_checked():
    plan = external_plan.build_external_plan("true", "t", sizes="1")
    assert (plan.min_repeats, plan.max_repeats, plan.min_time, plan.warmup) == (3, 10, 1.0, 0)
    plan = external_plan.build_external_plan("true", "t", sizes="1", min_repeats=12)
    assert plan.max_repeats == 12  # raised to the minimum when not given
    plan = external_plan.build_external_plan("true", "t", sizes="1", max_repeats=1)
    assert (plan.min_repeats, plan.max_repeats) == (1, 1)  # lowered to the maximum likewise
    for bad, words in (({"min_repeats": 0}, "--min-repeats 0"),
                       ({"min_repeats": 4, "max_repeats": 2}, "below --min-repeats"),
                       ({"min_time": float("nan")}, "--min-time"), ({"warmup": -1}, "--warmup")):
        with pytest.raises(ConfigError, match=words):
            external_plan.build_external_plan("true", "t", sizes="1", **bad)


# ---- what a program reports is what is recorded ----------------------------------------------

def _script(tmp_path, name: str, body: str) -> Path:
    path = tmp_path / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return path


def _once(program, tmp_path, *extra) -> list[str]:
    return ["sweep", "--command", f"{program} {{size}}", "--label", "own", "--ranks-per-node",
            "1", "--threads", "1", "--min-time", "0", "--no-progress", "--out",
            str(tmp_path / "own.h5"), *extra]


def test_a_program_that_rewrites_its_output_file_is_read_whole(tmp_path):
    # "> result.txt" each run: before, a longer rewrite was read from the old size (size
    # 123456 gave runtime_s 56) and one of the same length gave "matched no number".
    program = _script(tmp_path, "ow.sh", 'echo "run $1" > result.txt\n'
                                         'echo "time: 0.0$1 s" >> result.txt\n')
    (tmp_path / "wd").mkdir()
    proc = run_cli(_once(program, tmp_path, "--sizes", "1,22,3", "--workdir",
                         str(tmp_path / "wd"), "--output-file", "result.txt", "--time-regex",
                         r"([0-9.]+) s", "--min-repeats", "2", "--max-repeats", "2"), timeout=120)
    assert proc.returncode == 0, proc.stderr
    df = telemetry.read_runs(tmp_path / "own.h5").set_index("size")
    assert (df["status"] == "ok").all(), df["error"].tolist()
    assert df["runtime_s"].to_dict() == {1: 0.01, 22: 0.022, 3: 0.03}
    assert (df["repeats"] == 2).all()


def test_a_reported_time_that_cannot_be_a_runtime_is_recorded_failed(tmp_path):
    # Before, each was recorded ok, and energy modelled from it (negative for -0.2).
    program = _script(tmp_path, "t.sh", 'case "$1" in 1) t=-0.2;; 2) t=0;; 3) t=1e30;; '
                                        '4) t=nan;; 5) t=inf;; 6) t=250;; *) t=0.001;; esac\n'
                                        'echo "TIME=$t"\n')
    proc = run_cli(_once(program, tmp_path, "--sizes", "1,2,3,4,5,7", "--time-regex",
                         r"TIME=(\S+)", "--max-repeats", "1"), timeout=120)
    assert proc.returncode == 0, proc.stderr
    df = telemetry.read_runs(tmp_path / "own.h5").set_index("size")
    words = {1: "'-0.2' .* not a positive finite",
             3: "1e\\+30 s .* over a year", 4: "'nan' .* not a positive finite",
             5: "'inf' .* not a positive finite"}
    for size, expected in words.items():
        row = df.loc[size]
        assert row.status == "failed" and re.search(expected, row.error), row.error
        assert r"--time-regex 'TIME=(\S+)'" in row.error and "\n" not in row.error
        assert 0 < row.energy_j and row.runtime_s == row.elapsed_s < 60
    assert df.loc[7].status == "ok" and df.loc[7].runtime_s == 0.001
    # a zero is under the timer's tick, no failure (s47 tester K1): half its wall time here
    zero = df.loc[2]
    assert zero.status == "ok" and zero.runtime_s == pytest.approx(zero.elapsed_s / 2)
    # over the wall time: the regex's reading, the sweep stops, nothing recorded (s46 H2)
    proc = run_cli(_once(program, tmp_path, "--sizes", "6", "--time-regex", r"TIME=(\S+)",
                         "--max-repeats", "1", "--resume"), timeout=120)
    _one_line_error(proc, 2)
    assert re.search("own size 6 .*: exit 0, but .*250 s .* a unit mistake .* the sweep stops",
                     proc.stderr), proc.stderr
    assert 6 not in telemetry.read_runs(tmp_path / "own.h5")["size"].tolist()


def test_resuming_with_another_command_or_reading_is_refused(tmp_path):
    program = _script(tmp_path, "t.sh", 'echo "TIME=0.001 GF=$1"\n')
    first = _once(program, tmp_path, "--sizes", "1", "--time-regex", r"TIME=(\S+)",
                  "--max-repeats", "1")
    assert run_cli(first, timeout=120).returncode == 0
    out = tmp_path / "own.h5"
    before = telemetry.read_snapshot(out).attrs["launch"]
    other = _script(tmp_path, "u.sh", 'echo "TIME=0.002"\n')
    for args, words in (
            ([a for a in first if a not in ("--time-regex", r"TIME=(\S+)")],
             r"--time-regex 'TIME=(\S+)' (now none)"),
            (first + ["--fom-regex", r"GF=(\S+)"], "--fom-regex none (now 'GF=(\\S+)')"),
            (_once(other, tmp_path, "--sizes", "1,2", "--time-regex", r"TIME=(\S+)"),
             f"--command '{program} {{size}}' (now '{other} {{size}}')")):
        proc = run_cli(args + ["--resume"], timeout=120)
        _one_line_error(proc, 2)
        assert words in proc.stderr and "give a new --out" in proc.stderr
        assert telemetry.read_snapshot(out).attrs["launch"] == before
        assert len(telemetry.read_runs(out)) == 1
    more = [("1,2" if a == "1" and first[i - 1] == "--sizes" else a) for i, a in enumerate(first)]
    proc = run_cli(more + ["--resume"], timeout=120)  # the same, with a size more: runs it
    assert proc.returncode == 0 and len(telemetry.read_runs(out)) == 2


def test_gpu_runs_of_a_program_without_gpus_are_unsupported_and_not_launched(tmp_path):
    from hpcds1mpi.cluster import Partition

    log = tmp_path / "launches"
    program = _script(tmp_path, "app.sh", f'echo "$1" >> {log}\n')
    plan = external_plan.build_external_plan(f"{program} {{size}}", "own", sizes="5",
                                        devices="cpu,gpu", min_repeats=1, max_repeats=1,
                                        min_time=0)
    part = Partition("cpuonly", cores_per_node=2, memory_gb=4.0, gpus_per_node=0)
    summary = external.run_external(plan, str(tmp_path / "g.h5"), part, progress=False)
    assert summary["statuses"] == {"ok": 1, "unsupported": 1}
    df = telemetry.read_runs(tmp_path / "g.h5").set_index("device")
    assert df.loc["cpu"].status == "ok" and df.loc["gpu"].status == "unsupported"
    assert "partition 'cpuonly' has no GPUs" in df.loc["gpu"].error
    assert log.read_text() == "5\n"  # the gpu run was never launched


def test_an_output_file_that_is_a_folder_is_refused_in_one_line(tmp_path):
    (tmp_path / "wd" / "result.txt").mkdir(parents=True)
    for name in ("result.txt", "out/"):
        proc = run_cli(_once("true", tmp_path, "--sizes", "1", "--workdir",
                             str(tmp_path / "wd"), "--output-file", name), timeout=60)
        _one_line_error(proc, 2)
        assert "--output-file" in proc.stderr and "folder" in proc.stderr
        assert not (tmp_path / "own.h5").exists()


def _one_python_run(app, out, sizes: str = "10") -> list[str]:
    return ["sweep", "--command", f"{sys.executable} {app} {{size}}", "--label", "myapp",
            "--sizes", sizes, "--ranks-per-node", "1", "--threads", "1", "--min-repeats", "1",
            "--max-repeats", "1", "--min-time", "0", "--no-progress", "--out", str(out)]


def test_a_program_sweep_gets_the_machine_id_of_a_kernel_sweep_with_the_same_mpi(tmp_path):
    # It was "mpiexec Version: 5.0.2" (the launcher) against the kernels' "MPICH Version:
    # 5.0.2": two ids for one machine and MPI, and learn refused the program's runs.
    app = tmp_path / "app.py"
    app.write_text(APP)
    assert run_cli(_one_python_run(app, tmp_path / "prog.h5"), timeout=120).returncode == 0
    kernels = ["sweep", "--kernel", "gemm", "--sizes", "32", "--ranks-per-node", "1",
               "--threads", "1", "--precisions", "fp64", "--min-repeats", "1",
               "--max-repeats", "1", "--min-time", "0", "--no-progress",
               "--out", str(tmp_path / "kern.h5")]
    assert run_cli(kernels, timeout=120).returncode == 0
    prog, kern = (telemetry.read_machines(tmp_path / f).iloc[0]
                  for f in ("prog.h5", "kern.h5"))
    assert prog["mpi_library"] == kern["mpi_library"]
    assert prog["machine_id"] == kern["machine_id"]
    assert set(telemetry.read_runs(tmp_path / "prog.h5")["machine_id"]) == {kern["machine_id"]}


def test_resuming_runs_fingerprinted_from_the_launcher_is_refused_and_the_file_kept(tmp_path):
    from hpcds1mpi.measure import meters

    app = tmp_path / "app.py"
    app.write_text(APP)
    assert run_cli(_one_python_run(app, tmp_path / "new.h5"), timeout=120).returncode == 0
    # The file an older program sweep wrote: the same machine, fingerprinted from mpiexec.
    machine = telemetry.read_machines(tmp_path / "new.h5").iloc[0].to_dict()
    machine.update(mpi_library="mpiexec Version: 5.0.2")
    machine["machine_id"] = meters.machine_id(machine)
    run = telemetry.read_runs(tmp_path / "new.h5").iloc[0].to_dict()
    run["machine_id"] = machine["machine_id"]
    old = tmp_path / "old.h5"
    with telemetry.TelemetryWriter(old) as writer:
        writer.machine(machine)
        writer.start(run)
        writer.record(run, {})
    before = old.read_bytes()
    proc = run_cli(_one_python_run(app, old, "10,11") + ["--resume"], timeout=120)
    _one_line_error(proc, 2)
    assert "fingerprinted from the launcher ('mpiexec Version: 5.0.2', machine " \
           f"{machine['machine_id'][:12]})" in proc.stderr
    assert "sweep into a new --out" in proc.stderr
    assert old.read_bytes() == before
    # A file of this version resumes as before.
    proc = run_cli(_one_python_run(app, tmp_path / "new.h5", "10,11") + ["--resume"],
                   timeout=120)
    assert proc.returncode == 0 and len(telemetry.read_runs(tmp_path / "new.h5")) == 2


def test_each_reason_a_run_failed_is_said_once_while_the_sweep_goes_on(tmp_path):
    # Before, a sweep of a misspelled input said only "(failed 3; ...)": the why was in the
    # telemetry's error column alone.
    from hpcds1mpi.cluster import Partition

    program = _script(tmp_path, "app.sh", 'case "$1" in 1) echo "TIME=0.001";; '
                      '2|3) echo "ERROR: Cannot open input script in.ljj"; exit 1;; '
                      '*) echo "TIME=-1";; esac\n')
    plan = external_plan.build_external_plan(f"{program} {{size}}", "own", sizes="1,2,3,4",
                                        min_repeats=1, max_repeats=1, min_time=0)
    from hpcds1mpi.measure.readings import Readings

    said: list[str] = []
    summary = external.run_external(
        plan, str(tmp_path / "f.h5"), Partition("p", cores_per_node=2, memory_gb=4.0),
        progress=False, readings=Readings.of(time_regex=r"TIME=(\S+)"), say=said.append)
    assert summary["statuses"] == {"ok": 1, "failed": 3}
    errors = telemetry.read_runs(tmp_path / "f.h5").set_index("size")["error"]
    reasons = sorted(line.split(": failed: ", 1)[1] for line in said if ": failed: " in line)
    assert reasons == sorted([errors[2], errors[4]]) and errors[2] == errors[3], said
    assert errors[2] == "exit code 1: ERROR: Cannot open input script in.ljj"


def test_a_journal_left_by_the_nul_crash_is_resumed_keeping_its_runs(tmp_path):
    """Debian mpi4py's library version ends in a NUL: every snapshot of such a sweep crashed
    ("VLEN strings do not support embedded NULLs"), --resume too, and its runs lived only in
    the journal, under a machine id hashed from the NUL (s25 tester B 1)."""
    import socket

    from hpcds1mpi.cluster import Partition
    from hpcds1mpi.measure import meters
    from tests.launch.test_mpi_family import fake_python

    python = fake_python(tmp_path, "MPICH Version:      9.9.9\0")  # (a family the wheel starts)
    part = Partition("p", cores_per_node=2, memory_gb=4.0)

    def plan(sizes):
        return external_plan.build_external_plan(f"{python} app.py {{size}}", "pyd", sizes=sizes,
                                            min_repeats=1, max_repeats=1, min_time=0)

    fresh = tmp_path / "fresh.h5"
    external.run_external(plan("1"), str(fresh), part, progress=False)
    now = telemetry.load(fresh)
    (new_id, machine), = now.machines.items()
    assert machine["mpi_library"] == "MPICH Version: 9.9.9"
    # What the crashing version left: a snapshot with no runs, the journal with its runs.
    crashed = {**machine, "mpi_library": "MPICH Version: 9.9.9\0"}
    crashed["machine_id"] = old_id = meters.machine_id(crashed)
    (run,) = now.runs.values()
    out = tmp_path / "crashed.h5"
    writer = telemetry.TelemetryWriter(out, attrs={k: now.attrs[k] for k in ("plan", "launch")})
    writer.open()
    writer.machine(crashed)
    writer.record({**run, "machine_id": old_id}, {})
    writer.release()
    said: list[str] = []
    summary = external.run_external(plan("1,2"), str(out), part, resume=True, progress=False,
                                    say=said.append)
    assert summary["skipped"] == 1 and summary["configs"] == 1  # its run is kept, not redone
    assert any(f"carried id {old_id[:12]}" in line and new_id[:12] in line for line in said)
    kept = telemetry.load(out)
    assert list(kept.machines) == [new_id] == [meters.fingerprint(
        part, hostnames=[socket.gethostname()], mpi_library=machine["mpi_library"],
        gpu_aware=False)["machine_id"]]
    assert kept.runs[(new_id, run["run_id"])]["started_at"] == run["started_at"]
    assert len(kept.runs) == 2 and not telemetry.journal_path(out).exists()


def test_a_program_whose_mpi_cannot_be_read_is_noted_and_its_row_says_so(tmp_path):
    """A wrapper of an Open MPI program under the wheel's hydra ran as 1-rank copies, recorded
    ok without a word, its machine row reading as MPICH (s25 tester B 4)."""
    from hpcds1mpi.cluster import Partition
    from hpcds1mpi.measure import program_mpi
    from hpcds1mpi.measure.readings import Readings

    wrapper = _script(tmp_path, "run.sh", 'echo "ranks: ${PMI_SIZE:-1}"\n')
    plan = external_plan.build_external_plan(f"{wrapper} {{size}}", "wr", sizes="1",
                                        ranks_per_node="1,2", min_repeats=1, max_repeats=1,
                                        min_time=0)
    part = Partition("p", cores_per_node=2, memory_gb=4.0)
    said: list[str] = []
    external.run_external(plan, str(tmp_path / "w.h5"), part, progress=False, say=said.append)
    notes = [line for line in said if line.startswith("note: the launch is unverified")]
    assert len(notes) == 1 and "run.sh is a script run by /bin/sh" in notes[0]
    assert "--ranks-regex" in notes[0]
    (library,) = telemetry.read_machines(tmp_path / "w.h5")["mpi_library"]
    # The wheel's hydra's own library stands in, said to be assumed (s29 tester E1).
    assert library.startswith("MPICH Version:") and library.endswith(program_mpi.ASSUMED)
    # --ranks-regex checks every launch: nothing to note; one rank needs no check either.
    for readings, ranks in ((Readings.of(ranks_regex=r"ranks: (\d+)"), "1,2"),
                            (Readings.of(), "1")):
        said.clear()
        external.run_external(
            external_plan.build_external_plan(f"{wrapper} {{size}}", "wr", sizes="1",
                                         ranks_per_node=ranks, min_repeats=1, max_repeats=1,
                                         min_time=0),
            str(tmp_path / f"w{ranks}{bool(readings.ranks)}.h5"), part, progress=False,
            readings=readings, say=said.append)
        assert not any(line.startswith("note: the launch") for line in said), said


def test_a_command_that_starts_with_an_option_is_refused_before_anything_runs():
    """Was: "program '-n' is not on PATH; give its path (e.g. ./-n)" from sweep and tune,
    while recommend wrote the words after srun's own options."""
    with pytest.raises(ConfigError, match="^--command: program starts with '-n'"):
        external_plan.build_external_plan("-n 2 hostname", "t", sizes="1")
    with pytest.raises(ConfigError, match="^--program: program starts with '--ntasks=1'"):
        external.check_program(["--ntasks=1", "hostname"], option="--program")


def test_configurations_sharing_one_folder_are_noted_once(tmp_path, monkeypatch):
    """pw.x's scratch (outdir, prefix) and CRASH files of every configuration were written in
    one folder without a word: one configuration's could be read or deleted by another's (s27
    tester R 7). Folders per configuration get no note."""
    from hpcds1mpi.cluster import Partition

    monkeypatch.chdir(tmp_path)
    app = _script(tmp_path, "app.sh", 'echo "size $1"\n')
    part = Partition("p", cores_per_node=2, memory_gb=4.0)

    def sweep(name, workdir=None):
        said: list[str] = []
        plan = external_plan.build_external_plan(f"{app} {{size}}", "sh", sizes="1,2",
                                                 min_repeats=1, max_repeats=1, min_time=0)
        external.run_external(plan, str(tmp_path / name), part, progress=False,
                              workdir=workdir, say=said.append)
        return [line for line in said if "folder" in line]

    (note,) = sweep("one.h5")
    assert note.startswith("note: all 2 configurations run in one folder (the current folder)")
    assert "--workdir 'runs/{size}-{ranks}'" in note and "\n" not in note
    (tmp_path / "w-1").mkdir()
    (tmp_path / "w-2").mkdir()
    assert sweep("apart.h5", "w-{size}") == []
    (note,) = sweep("same.h5", "w-1")
    assert "(--workdir 'w-1')" in note


def test_a_relative_program_missing_from_its_workdir_is_said_there(tmp_path):
    """s28 tester Y7a: `./heat_mpich` beside the sweep, not in each --workdir folder, was
    "not found" with no word of where it had been looked for."""
    from hpcds1mpi.errors import ConfigError
    from hpcds1mpi.measure.external import check_program

    (tmp_path / "runs").mkdir()
    with pytest.raises(ConfigError, match=r"^--command: program './heat' not found in --workdir "
                                          r"'.*runs': the program starts in each"):
        check_program(["./heat", "8"], None, str(tmp_path / "runs"))


@pytest.mark.parametrize("tokens, words", [
    (["env", "A=1"], "'env A=1' names no program after env's words"),
    (["nice", "-n", "5"], "'nice -n 5' names no program after nice's words"),
    (["env", "-i", "true"], "env -i clears the variables the launcher gives each rank"),
    (["timeout", "true", "64"], "timeout's first word after its options is its duration "
                                "(e.g. timeout 600 ./app), not 'true'"),
    (["nice", "-n", "5", "sl"], "program 'sl' (the word after `nice -n 5`) is not on PATH"),
])
def test_an_exec_wrapper_that_starts_no_mpi_program_is_refused_before_launch(tokens, words):
    """Was (s30 tester R7, R6): `nice -n 5` or `env A=1` alone was timed as the program, or
    every launch failed (`env -i` clears the launcher's wire-up)."""
    with pytest.raises(ConfigError) as err:
        external.check_program(tokens)
    assert words in str(err.value) and "\n" not in str(err.value)
    external.check_program(["nice", "-n", "5", "env", "A=1", "true"])  # a program after them
    external.check_program(["timeout", "-s", "KILL", "2m", "true"])


def test_the_recorded_mpi_is_that_of_the_program_an_open_mpi_prefix_makes_the_ranks_run(
        tmp_path, monkeypatch):
    """s31 review M3: `mpirun --prefix /usr` runs Debian's python3 (Open MPI's mpi4py) where
    this PATH finds the venv's (MPICH's); the pre-flight honoured the prefix, the fingerprint
    did not (it read the launcher without its options) and recorded MPICH."""
    from hpcds1mpi.cluster import Partition
    from hpcds1mpi.launch.preflight import LaunchChoice
    from tests.helpers import system_program

    system_program("mpirun.openmpi")
    if subprocess.run(["/usr/bin/python3", "-c", "import mpi4py"],
                      capture_output=True).returncode != 0:
        pytest.skip("no Debian python3 with mpi4py here")
    here = os.path.dirname(sys.executable)  # python3 here: the venv's, its mpi4py MPICH's
    monkeypatch.setenv("PATH", f"{here}:{os.environ['PATH']}")
    monkeypatch.setenv("OMPI_ALLOW_RUN_AS_ROOT", "1")
    monkeypatch.setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    ours = subprocess.run(["python3", "-c", "import mpi4py.MPI as M; "
                           "print(M.Get_library_version())"], capture_output=True, text=True)
    if not ours.stdout.startswith("MPICH"):
        pytest.skip("this PATH's python3 has no MPICH mpi4py")
    app = tmp_path / "app.py"
    # an MPI program (s33 tester D4: one naming no MPI is read as MPI-free, not by its mpi4py)
    app.write_text("import sys, mpi4py\nopen(sys.argv[2], 'w').write(sys.executable)\n")
    plan = external_plan.build_external_plan(
        f"python3 {app} {{size}} {tmp_path / 'ran'}", "pre", sizes="1", ranks_per_node="1",
        min_repeats=1, max_repeats=1, min_time=0)
    choice = LaunchChoice("mpiexec", mpiexec="mpirun.openmpi", args=("--prefix", "/usr"))
    said: list[str] = []
    external.run_external(plan, str(tmp_path / "p.h5"), Partition("p", cores_per_node=2,
                                                                   memory_gb=4.0),
                          progress=False, choice=choice, say=said.append)
    assert (tmp_path / "ran").read_text() == "/usr/bin/python3"  # what the ranks ran
    # s47 tester K8: recorded as the file the ranks ran, not this PATH's (the venv's)
    launch = json.loads(telemetry.load(tmp_path / "p.h5").attrs["launch"])
    assert launch["program_path"] == "/usr/bin/python3", launch
    assert any(line.startswith("program MPI: Open MPI") for line in said), said
    (library,) = telemetry.read_machines(tmp_path / "p.h5")["mpi_library"]
    assert library.startswith("Open MPI v"), library
    assert (telemetry.read_runs(tmp_path / "p.h5")["status"] == "ok").all()


def test_the_program_the_ranks_run_is_read_once_at_a_sweeps_start(tmp_path, monkeypatch):
    """s31 review M3: the pre-flight's cache key, its check, the unverified-launch note and
    the fingerprint each read the command's exec-wrapper prefix and the ranks' PATH anew."""
    from hpcds1mpi.cluster import Partition
    from hpcds1mpi.launch import rank_program

    read = []
    real = rank_program.past_wrappers
    monkeypatch.setattr(rank_program, "past_wrappers",
                        lambda tokens, env: read.append(tokens) or real(tokens, env))
    wrapper = _script(tmp_path, "run.sh", "exit 0\n")  # its MPI unknown: the note is asked
    plan = external_plan.build_external_plan(f"env N={{size}} {wrapper}", "once", sizes="1",
                                             ranks_per_node="1,2", min_repeats=1,
                                             max_repeats=1, min_time=0)
    said: list[str] = []
    external.run_external(plan, str(tmp_path / "o.h5"), Partition("p", cores_per_node=2,
                                                                   memory_gb=4.0),
                          progress=False, say=said.append)
    assert any(line.startswith("note: the launch is unverified") for line in said), said
    assert read == [["env", "N=1", str(wrapper)]]


def test_an_exit_0_after_saying_an_input_of_the_command_line_is_missing_is_failed(tmp_path):
    # s38 tester A7: Ray's "cannot access 'reads_7777.fasta'", then lines, exit 0, was ok.
    program = _script(tmp_path, "ray.sh", "[ -e \"$1\" ] || echo \"ray: cannot access "
                                          "'$1': No such file or directory\"\n"
                                          "echo 'Rank 0: Assembler panic: no k-mers'\n")
    (tmp_path / "in_1.fa").write_text(">r\nACGT\n")
    proc = run_cli(["sweep", "--command", f"{program} in_{{size}}.fa", "--label", "own",
                    "--sizes", "1,2", "--ranks-per-node", "1", "--min-time", "0",
                    "--no-progress", "--out", str(tmp_path / "own.h5")], timeout=120,
                   cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    df = telemetry.read_runs(tmp_path / "own.h5").set_index("size")
    assert df.loc[1].status == "ok"
    assert df.loc[2].status == "failed" and df.loc[2].error.startswith(
        "exit 0, but the program said: ray: cannot access 'in_2.fa'"), df.loc[2].error


def test_a_sweep_of_a_program_without_mpi_records_that_its_ranks_cannot_be_one_job(tmp_path):
    """s39 tester A2: RAxML's 1-rank sweep kept no word that it links no MPI (the sweep refuses
    it more ranks), so recommend offered 2 ranks; the record now reaches the runs' rows."""
    from hpcds1mpi.cluster import Partition
    from hpcds1mpi.records.telemetry_rows import telemetry_rows
    from tests.helpers import openmp_binary

    binary = openmp_binary(tmp_path)
    plan = external_plan.build_external_plan(f"{binary} {{size}}", "omp", sizes="1",
                                             min_repeats=1, max_repeats=1, min_time=0)
    part = Partition("p", cores_per_node=2, memory_gb=4.0)
    external.run_external(plan, str(tmp_path / "o.h5"), part, progress=False)
    launch = json.loads(telemetry.load(tmp_path / "o.h5").attrs["launch"])
    assert launch["one_rank_only"].startswith("the program omp links no MPI library")
    (row,) = telemetry_rows(tmp_path / "o.h5")["launched_with"]
    assert json.loads(row)["one_rank_only"] == launch["one_rank_only"]


def test_the_sweep_reads_the_programs_mpi_once_for_its_rank_proof(tmp_path):
    """The unverified-launch note and the one-rank-only record each asked a Python program's
    interpreter about its mpi4py (up to 60 s each) with the same arguments: the sweep now asks
    once for both."""
    from hpcds1mpi.cluster import Partition
    from hpcds1mpi.launch.mpi_family import MPI4PY_PROBE

    folder = tmp_path / "fakebin"
    folder.mkdir()
    asked = tmp_path / "asked"
    python = folder / "python3"  # logs each question; its mpi4py is MPICH's (the wheel's)
    python.write_text(f"#!/bin/sh\nprintf '%s\\n' \"$*\" >> {asked}\n"
                      "echo 'MPICH Version:      9.9.9'\n")
    python.chmod(0o755)
    plan = external_plan.build_external_plan(f"{python} app.py {{size}}", "py", sizes="1",
                                             ranks_per_node="1,2", min_repeats=1,
                                             max_repeats=1, min_time=0)
    external.run_external(plan, str(tmp_path / "p.h5"), Partition("p", cores_per_node=2,
                                                                  memory_gb=4.0),
                          progress=False)
    probes = [line for line in asked.read_text().splitlines() if MPI4PY_PROBE in line]
    # the pre-flight's, the rank proof's (its note and its record: was two) and the fingerprint's
    assert len(probes) == 3, probes


def test_a_time_summed_over_threads_stops_the_sweep_and_is_no_failure(tmp_path):
    """s46 tester H2: a CPU time summed over 2 threads, over the launch's wall time, was stored
    ``failed`` (a failure the model learns) though the program ran and exited 0."""
    app = tmp_path / "app.py"
    app.write_text("import os, time\nt = int(os.environ['OMP_NUM_THREADS'])\ntime.sleep(0.5)\n"
                   "print(f'total : {0.5 * t:.2f}')\n")  # its sleep, as a CPU time, per thread
    out = tmp_path / "app.h5"
    proc = run_cli(["sweep", "--command", f"{sys.executable} {app} {{size}}", "--label", "app",
                    "--sizes", "1", "--ranks-per-node", "1", "--threads", "1,2", "--time-regex",
                    r"total : ([0-9.]+)", "--out", str(out), "--no-progress"], timeout=200)
    assert proc.returncode == 2, proc.stderr
    said = error_lines(proc.stderr)
    assert len(said) == 1 and said[0].startswith(
        "hpcds1mpi: error: app size 1 N1xR1xT2-cpu-fp64: exit 0, but the program's own time "
        "1 s"), said
    assert "a CPU time summed over the 2 threads" in said[0] and "the sweep stops" in said[0]
    df = telemetry.read_runs(out)
    assert df["threads"].tolist() == [1] and df["status"].tolist() == ["ok"]  # nothing lost
