"""``--setup``: a program sweep's per-configuration pre-step (an OpenFOAM case decomposed for
its rank count, an input file written from the size), run once per configuration before its
first launch. Real sweeps of a tiny Python program under the venv's mpiexec."""

from __future__ import annotations

import json
import time
import sys

import pytest

from hpcds1mpi.config import Configuration
from hpcds1mpi.errors import ConfigError
from hpcds1mpi.measure.setup_command import check_setup, filled_setup, run_setup
from tests.helpers import run_cli

#: The program: reads the input its setup wrote in its folder and checks it is this
#: configuration's; logs each launch, so a test can tell that a failed setup launched nothing.
CHECK = """import sys
size, ranks = sys.argv[1], sys.argv[2]
open("../../launches.log", "a").write(f"{size}-{ranks}\\n")
got = open("input.txt").read().split()
if got != [size, ranks]:
    print(f"error: input.txt holds {got}, not {size} {ranks}")
    sys.exit(4)
print("time: 0.01 s")
"""
#: Quotes, a pipe, ``&&`` and ``$``: the shell must see them all (the script's too).
SETUP = ("printf '%s %s\\n' {size} {ranks} | tee input.txt >/dev/null && "
         "echo \"{size}-{ranks} threads=$OMP_NUM_THREADS\" >> ../../setup.log")
#: Fails at size 2 x 2 ranks only, its last line holding an escape sequence.
FAILING = ("echo preparing {size}; if [ {size}-{ranks} = 2-2 ]; then printf 'mesh too coarse "
           "\\033[2J for {ranks}\\n'; exit 7; fi; " + SETUP)


def _case(tmp_path):
    (tmp_path / "check.py").write_text(CHECK)
    for size in (1, 2):
        for ranks in (1, 2):
            (tmp_path / "runs" / f"{size}-{ranks}").mkdir(parents=True)
    return tmp_path


def _sweep(top, setup: str | None, *extra: str, out: str = "t.h5"):
    args = ["sweep", "--command", f"{sys.executable} {top / 'check.py'} {{size}} {{ranks}}",
            "--label", "chk", "--sizes", "1,2", "--ranks-per-node", "1,2", "--threads", "1",
            "--workdir", "runs/{size}-{ranks}", "--min-repeats", "2", "--max-repeats", "2",
            "--min-time", "0", "--out", str(top / out), "--no-progress", *extra]
    return run_cli(args + (["--setup", setup] if setup is not None else []), timeout=180,
                   cwd=top)


def _rows(path) -> dict:
    from hpcds1mpi.records import telemetry

    return {f"{r['size']}-{r['ranks_per_node']}": r for r in telemetry.load(path).runs.values()}


def test_the_setup_prepares_each_configuration_once_before_its_launches(tmp_path):
    top = _case(tmp_path)
    proc = _sweep(top, SETUP)
    assert proc.returncode == 0, proc.stderr
    rows = _rows(top / "t.h5")
    assert sorted(rows) == ["1-1", "1-2", "2-1", "2-2"]
    assert {r["status"] for r in rows.values()} == {"ok"}, rows
    # once per configuration (2 repeats each), with the environment the launch gets
    assert sorted((top / "setup.log").read_text().splitlines()) == [
        "1-1 threads=1", "1-2 threads=1", "2-1 threads=1", "2-2 threads=1"]
    assert len((top / "launches.log").read_text().split()) >= 8  # 2 launches x 2 ranks ...
    from hpcds1mpi.records import telemetry

    assert json.loads(telemetry.load(top / "t.h5").attrs["launch"])["setup"] == SETUP
    shown = run_cli(["telemetry", "show", str(top / "t.h5")], timeout=60)
    assert f"setup (once per configuration, before its first launch): {SETUP}" in shown.stdout


def test_a_failing_setup_fails_its_configuration_only_and_launches_nothing(tmp_path):
    top = _case(tmp_path)
    proc = _sweep(top, FAILING)
    assert proc.returncode == 0, proc.stderr
    rows = _rows(top / "t.h5")
    assert {k: r["status"] for k, r in rows.items()} == {
        "1-1": "ok", "1-2": "ok", "2-1": "ok", "2-2": "failed"}
    reason = "setup failed (exit 7): mesh too coarse \\x1b[2J for 2"
    assert rows["2-2"]["error"] == reason
    assert f"chk size 2 N1xR2xT1-cpu-fp64: failed: {reason}" in proc.stderr
    assert "2-2" not in (top / "launches.log").read_text()


def test_a_setup_that_removes_its_own_folder_fails_only_its_configuration(tmp_path):
    """Was (s30 tester R5): the sweep stopped "cannot start .../mpiexec: No such file or
    directory", nothing recorded, the other configurations never run."""
    top = _case(tmp_path)
    removing = "if [ {size}-{ranks} = 1-2 ]; then cd .. && rm -rf 1-2; else " + SETUP + "; fi"
    proc = _sweep(top, removing)
    assert proc.returncode == 0, proc.stderr
    rows = _rows(top / "t.h5")
    assert {k: r["status"] for k, r in rows.items()} == {
        "1-1": "ok", "1-2": "failed", "2-1": "ok", "2-2": "ok"}
    assert rows["1-2"]["error"].startswith("setup failed (exit 0): it left no folder "), rows


def test_a_resume_with_another_setup_is_refused_and_with_the_same_goes_on(tmp_path):
    top = _case(tmp_path)
    assert _sweep(top, SETUP).returncode == 0
    for other in ("true {size}", None):
        proc = _sweep(top, other, "--resume")
        assert proc.returncode == 2 and "the file was measured with --setup" in proc.stderr \
            and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    proc = _sweep(top, SETUP, "--resume")
    assert proc.returncode == 0 and "4 already done" in proc.stderr, proc.stderr


@pytest.mark.parametrize("args, words", [
    (["--command", "true {size}", "--label", "t", "--setup", " "], "--setup is empty"),
    (["--kernel", "gemm", "--setup", "true"], "--setup applies to --command sweeps only"),
])
def test_an_empty_setup_or_one_without_a_command_is_one_line(tmp_path, args, words):
    proc = run_cli(["sweep", *args, "--sizes", "1", "--out", str(tmp_path / "o.h5")],
                   timeout=60, cwd=tmp_path)
    assert proc.returncode == 2 and words in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and not (tmp_path / "o.h5").exists()


def test_a_size_in_the_setup_alone_reaches_the_program(tmp_path):
    """Elk reads its size from the elk.in its setup writes: no {size} in --command."""
    proc = run_cli(["sweep", "--command", "elk", "--label", "elk", "--sizes", "1,2",
                    "--setup", "sed 's/@N@/{size}/' ../elk.in.tmpl > elk.in", "--list"],
                   timeout=60, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr


def test_the_setup_is_filled_and_checked():
    config = Configuration(2, 3, 1, "cpu", "fp32")
    # {{X}} is the literal {X} (s44 tester N7: placeholder_fill), other braces stay
    assert filled_setup("mk {size} {ranks} {nodes} {precision} {rank} ${{X}} ${Y}", config,
                        9) == "mk 9 6 2 fp32 {rank} ${X} ${Y}"
    assert check_setup(None) is None
    for bad in ("", "  ", "a\nb"):
        with pytest.raises(ConfigError):
            check_setup(bad)


def test_a_setup_that_runs_too_long_is_killed_and_failed(tmp_path):
    done = run_setup("echo started; sleep 30", {"PATH": "/usr/bin:/bin"}, str(tmp_path), 0.5)
    assert done.exit_code is None and done.wall_s < 10
    assert done.reason == "setup failed (timed out after 0.5 s): started"
    done = run_setup("exit 3", {}, str(tmp_path), 10)
    assert done.reason == "setup failed (exit 3): it printed nothing"
    assert run_setup("pwd > here", {}, str(tmp_path), 10).reason == ""
    assert (tmp_path / "here").read_text().strip() == str(tmp_path)


def _alive(pid: int) -> bool:
    import psutil

    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_a_sigkilled_sweep_leaves_nothing_of_its_setup_running(tmp_path):
    """s30 tester O4: ``kill -9`` of a sweep during ``--setup "... && sleep 301"`` left
    ``sleep 301`` running, reparented to init: only the setup's /bin/sh had the death
    signal. The guard ends the setup's whole group."""
    import os
    import signal
    import subprocess
    import time

    from tests.helpers import hpcds1mpi_exe

    top = _case(tmp_path)
    pid_file = top / "sleep.pid"
    setup = f"true && /bin/sh -c 'echo $$ > {pid_file}; exec sleep 301'"
    args = ["sweep", "--command", f"{sys.executable} {top / 'check.py'} {{size}} {{ranks}}",
            "--label", "chk", "--sizes", "1", "--ranks-per-node", "1", "--threads", "1",
            "--workdir", "runs/{size}-{ranks}", "--out", str(top / "t.h5"), "--no-progress",
            "--setup", setup]
    sweep = subprocess.Popen([hpcds1mpi_exe(), *args], cwd=top, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not (pid_file.exists() and pid_file.read_text().strip()):
        assert time.monotonic() < deadline and sweep.poll() is None, sweep.communicate()
        time.sleep(0.05)
    sleeper = int(pid_file.read_text())
    assert _alive(sleeper)
    sweep.kill()  # SIGKILL: nothing in the sweep runs after it
    sweep.communicate(timeout=30)
    deadline = time.monotonic() + 20
    while _alive(sleeper) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = _alive(sleeper)
    if left:
        os.kill(sleeper, signal.SIGKILL)
    assert not left, "the setup's child outlived a SIGKILL of the sweep"


def test_a_failed_setups_reason_is_read_as_a_failed_launchs(tmp_path):
    """s30 tester O5: a failed decomposePar was recorded by its last line, "FOAM exiting";
    now by its error, as a failed launch is. A timeout still says where it hung."""
    import os
    import shutil

    done = run_setup("echo 'Create mesh'; echo 'error: mesh too coarse for 4' >&2; "
                     "echo 'FOAM exiting'; exit 1", {"PATH": "/usr/bin:/bin"}, str(tmp_path),
                     10)
    assert done.reason == "setup failed (exit 1): error: mesh too coarse for 4", done
    if shutil.which("decomposePar") is None:
        pytest.skip("no OpenFOAM here: the real decomposePar is not checked")
    env = {**os.environ, "WM_PROJECT_DIR": os.environ.get("WM_PROJECT_DIR",
                                                          "/usr/share/openfoam")}
    case = tmp_path / "case" / "system"
    case.mkdir(parents=True)  # a case with no mesh
    (case / "controlDict").write_text(
        "FoamFile { version 2.0; format ascii; class dictionary; object controlDict; }\n"
        "application icoFoam; startFrom startTime; startTime 0; stopAt endTime; endTime 1;\n"
        "deltaT 1; writeControl timeStep; writeInterval 1;\n")
    (case / "decomposeParDict").write_text(
        "FoamFile { version 2.0; format ascii; class dictionary; object decomposeParDict; }\n"
        "numberOfSubdomains 2; method simple; coeffs { n (2 1 1); }\n")
    done = run_setup("decomposePar -force", env, str(tmp_path / "case"), 60)
    assert done.reason.startswith("setup failed (exit 1): FOAM FATAL"), done
    assert "FOAM exiting" not in done.reason and "\n" not in done.reason


def test_a_resume_runs_the_configurations_whose_setup_failed_again(tmp_path):
    """s30 tester O6: --resume had taken a configuration whose setup failed as done (its
    program never ran there) and said nothing."""
    from hpcds1mpi.measure.setup_command import failed_in_setup, setup_failed_words

    top = _case(tmp_path)
    flaky = "if [ -e ../../broken ] && [ {size}-{ranks} = 2-2 ]; then exit 9; fi; " + SETUP
    (top / "broken").write_text("")
    assert _sweep(top, flaky).returncode == 0
    rows = _rows(top / "t.h5")
    assert rows["2-2"]["status"] == "failed" and failed_in_setup(rows["2-2"])
    assert not failed_in_setup(rows["1-1"])
    (top / "broken").unlink()
    proc = _sweep(top, flaky, "--resume")
    assert proc.returncode == 0 and "3 already done" in proc.stderr, proc.stderr
    rows = _rows(top / "t.h5")
    assert rows["2-2"]["status"] == "ok" and rows["2-2"]["attempt"] == 2, rows["2-2"]
    assert "2-2" in (top / "launches.log").read_text()
    assert setup_failed_words({"setup_failed": 0}) == ""
    assert setup_failed_words({"setup_failed": 2}).startswith("; 2 of them failed in their "
                                                              "--setup")


def test_a_run_with_setup_records_its_seconds_and_one_without_none(tmp_path):
    """s30 tester O1: a job script's time limit must allow for the setup, so each
    configuration records its setup's wall seconds (``setup_s``)."""
    import math

    top = _case(tmp_path)
    assert _sweep(top, "sleep 0.3; " + SETUP).returncode == 0
    assert all(0.3 <= r["setup_s"] < 30 for r in _rows(top / "t.h5").values())
    assert _sweep(top, None, out="plain.h5").returncode == 0
    assert all(math.isnan(r["setup_s"]) for r in _rows(top / "plain.h5").values())


def test_a_file_from_before_the_setup_column_reads_as_none(tmp_path):
    """An older file has no ``setup_s`` column: it is whole, and reads NaN there."""
    import h5py

    from hpcds1mpi.records import telemetry

    top = _case(tmp_path)
    assert _sweep(top, SETUP).returncode == 0
    with h5py.File(top / "t.h5", "a") as f:
        del f["runs"]["setup_s"]
        f["runs"].attrs["columns"] = [n for n in f["runs"].attrs["columns"]
                                      if n not in ("setup_s", b"setup_s")]
    assert telemetry.read_runs(top / "t.h5")["setup_s"].isna().all()


def test_with_a_setup_the_sweep_creates_missing_folders_for_it(tmp_path):
    """s30 tester N7a: a --setup that writes the input was refused a --workdir folder that
    did not exist yet; without --setup it still is (an empty folder lacks the input)."""
    import shutil

    top = _case(tmp_path)
    shutil.rmtree(top / "runs")
    proc = _sweep(top, None)
    assert proc.returncode == 2 and "is not a folder" in proc.stderr and "--setup" in \
        proc.stderr, proc.stderr
    proc = _sweep(top, SETUP)
    assert proc.returncode == 0, proc.stderr
    assert "created 4 --workdir folder(s) for --setup to prepare: runs/1-1" in proc.stderr
    assert {r["status"] for r in _rows(top / "t.h5").values()} == {"ok"}
    from hpcds1mpi.measure.external_plan import build_external_plan
    from hpcds1mpi.measure.workdirs import prepare_folders

    (top / "file-1").write_text("")  # a file where the folder would go: never replaced
    plan = build_external_plan("true", "t", sizes="1")
    with pytest.raises(ConfigError, match="'.*file-1' .*is not a folder"):
        prepare_folders(str(top / "file-{size}"), plan.runs, setup=True)


def test_a_leftover_that_ignores_sigterm_is_killed_when_the_setup_returns(tmp_path):
    """Was (s30 review): `(trap '' TERM; exec sleep 7) &` outlived its setup, running beside
    the measured launches."""
    import os

    import psutil

    done = run_setup(f"(trap '' TERM; exec sleep 7) & echo $! > {tmp_path / 'pid'}",
                     dict(os.environ), str(tmp_path), 30)
    assert done.exit_code == 0 and not done.reason
    pid = int((tmp_path / "pid").read_text())
    time.sleep(0.3)
    try:
        alive = psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        alive = False
    assert not alive


def test_a_setup_whose_folder_is_gone_fails_in_one_line(tmp_path):
    """Was (s30 review): Popen's FileNotFoundError, a traceback ending the sweep."""
    import os

    done = run_setup("true", dict(os.environ), str(tmp_path / "gone"), 30)
    assert done.exit_code == 127 and done.reason.startswith("setup failed: cannot start in ")


def test_a_program_the_setup_puts_in_the_folder_is_not_refused_before_it(tmp_path):
    """Was (s30 verifier V2): `--command './check.py ...' --setup 'cp ../../check.py .'` was
    refused "program './check.py' not found in --workdir" before any setup ran."""
    top = _case(tmp_path)
    (top / "check.py").write_text("#!" + sys.executable + "\n" + CHECK)
    (top / "check.py").chmod(0o755)
    args = ["sweep", "--command", "./check.py {size} {ranks}", "--label", "cp", "--sizes", "1",
            "--ranks-per-node", "1", "--min-repeats", "1", "--max-repeats", "1",
            "--min-time", "0", "--no-progress"]
    proc = run_cli(args + ["--out", str(top / "cp.h5"), "--workdir", "runs/{size}-{ranks}",
                           "--setup",
                           "cp ../../check.py . && " + SETUP], timeout=180, cwd=top)
    assert proc.returncode == 0, proc.stderr
    assert {r["status"] for r in _rows(top / "cp.h5").values()} == {"ok"}
    (top / "bare" / "1-1").mkdir(parents=True)  # a folder without the program, no setup
    no_setup = run_cli([*args, "--out", str(top / "none.h5"), "--workdir", "bare/{size}-{ranks}"],
                       timeout=180, cwd=top)
    assert no_setup.returncode == 2 and "not found in --workdir" in no_setup.stderr
