"""The README's main job, end to end: quickstart on this machine (real mpiexec sweep)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from hpcds1mpi import kernels
from hpcds1mpi.records import telemetry
from hpcds1mpi.commands.quickstart import UNMEASURED_INDEX, UNMEASURED_WORKLOAD
from tests.helpers import run_cli


@pytest.fixture(scope="module")
def quickstarted(tmp_path_factory):
    """One real quickstart (sweep, training, recommend), shared by the tests that read it."""
    out = tmp_path_factory.mktemp("real") / "qs"
    return out, run_cli(["quickstart", "--out", str(out)], timeout=900)


@pytest.mark.slow
def test_quickstart_measures_trains_recommends_and_writes_a_script(quickstarted):
    out, proc = quickstarted
    assert proc.returncode == 0, proc.stderr[-2000:]
    for name in ("telemetry.h5", "model", "job.sbatch", "pareto.png", "recommendation.json"):
        assert (out / name).exists(), name
    runs = telemetry.read_runs(out / "telemetry.h5")
    assert (runs["status"] == "ok").mean() > 0.9
    size = kernels.get(UNMEASURED_WORKLOAD).default_sizes[UNMEASURED_INDEX]
    measured = set(runs[runs["workload"] == UNMEASURED_WORKLOAD]["size"])
    assert size not in measured and min(measured) < size < max(measured)
    rec = json.loads((out / "recommendation.json").read_text())
    assert rec["workload"] == UNMEASURED_WORKLOAD and rec["size"] == size
    script = (out / "job.sbatch").read_text()
    assert "#SBATCH --nodes=" in script and f"--size {size}" in script
    subprocess.run(["bash", "-n", str(out / "job.sbatch")], check=True)
    assert (out / "pareto.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "where everything is" in proc.stdout


@pytest.mark.slow
def test_a_real_rerun_replaces_an_older_quickstarts_script(quickstarted, tmp_path):
    """s34 tester O1, as the tester ran it: the folder of a quickstart from before scripts
    carried a checksum line (the same script without it, cp -a keeping the times); the rerun
    had failed at recommending, after the sweep and the training."""
    import shutil

    from hpcds1mpi.launch.script_seal import script_state

    assert quickstarted[1].returncode == 0, quickstarted[1].stderr[-2000:]
    out = tmp_path / "qs"
    shutil.copytree(quickstarted[0], out)  # copy2: the times are kept
    stamp = (out / "job.sbatch").stat()
    unseal(out / "job.sbatch")
    os.utime(out / "job.sbatch", ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    assert script_state(out / "job.sbatch") == "unsealed"
    proc = run_cli(["quickstart", "--out", str(out)], timeout=900)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert script_state(out / "job.sbatch") == "unchanged" and "where everything is" in proc.stdout


# -- quickstart's folder: a rerun resumes there, any other folder is refused (#14) -------------

def fake_recommending(cmd: list[str]) -> str:
    """quickstart's recommend step faked: recommend's own check of the script it replaces,
    then a sealed script and a JSON answer."""
    from hpcds1mpi.launch.script_seal import check_replace_script, seal

    script = Path(cmd[cmd.index("-o") + 1])
    check_replace_script(script, force="--force" in cmd)
    script.write_text(seal("#!/bin/bash\n# Written by hpcds1mpi (a faked step)\n"))
    return json.dumps({"workload": "stencil", "size": 1, "front": [],
                       "verdict": {"verdict": "auto"}})


@pytest.fixture
def fake_steps(monkeypatch):
    """quickstart with its three subprocess steps faked (no sweep, no training): the sweep
    appends a line to telemetry.h5, training writes model/, recommending the script."""
    from hpcds1mpi.commands import quickstart
    from hpcds1mpi.launch import launcher_discovery

    calls = []

    def run(cmd, what, timeout):
        calls.append((what, cmd))
        if what == "measuring sweep":
            path = Path(cmd[cmd.index("--out") + 1])
            with open(path, "a") as fh:
                fh.write("one more sweep\n")
        elif what == "training":  # a bundle's manifest (is_bundle), of the sweep alone
            model = Path(cmd[cmd.index("--out") + 1])
            model.mkdir(exist_ok=True)
            source = cmd[cmd.index("--telemetry") + 1]
            (model / "manifest.json").write_text(json.dumps(
                {"format_version": 1, "targets": [], "feature_spec": {}, "sources": [source]}))
        elif what == "recommending":
            return fake_recommending(cmd)
        return "table"

    monkeypatch.setattr(quickstart, "_run", run)
    monkeypatch.setattr(launcher_discovery, "mpiexec_path", lambda: "mpiexec")
    return calls


def invoke(*args):
    from click.testing import CliRunner

    from hpcds1mpi.commands.quickstart import command

    return CliRunner().invoke(command, list(args), catch_exceptions=False)


def test_a_rerun_keeps_the_runs_learn_added_to_its_model(tmp_path, fake_steps):
    """s37 tester K3: after `learn --model qs/model --telemetry tune.h5`, a rerun retrained the
    model from the sweep alone (train --force): the learnt runs were dropped, nothing said."""
    from hpcds1mpi.commands.quickstart import runs_beyond_the_sweep

    out = tmp_path / "qs"
    assert invoke("--out", str(out)).exit_code == 0
    model, telemetry = out / "model", out / "telemetry.h5"
    assert runs_beyond_the_sweep(model, telemetry) == []  # quickstart's own: retrained
    manifest = json.loads((model / "manifest.json").read_text())
    manifest["sources"].append("tune.h5")  # what learn records
    (model / "manifest.json").write_text(json.dumps(manifest))
    fake_steps.clear()
    result = invoke("--out", str(out))
    assert result.exit_code == 0
    steps = dict(fake_steps)
    assert "training" not in steps  # never train --force over the learnt runs
    assert steps["learning"][1:] == ["learn", "--model", str(model), "--telemetry",
                                     str(telemetry)]
    assert f"note: {model} holds runs beyond this folder's sweep (from tune.h5)" in result.output
    assert "--force starts the folder over" in result.output


@pytest.mark.parametrize("force", [[], ["--force"]], ids=["plain", "force"])
def test_a_folder_that_is_not_quickstarts_is_refused(tmp_path, fake_steps, force):
    from hpcds1mpi.errors import OutputError
    from tests.test_atomic import digests

    out = tmp_path / "mine"
    out.mkdir()
    (out / "plan.toml").write_text("[sweep]\nsizes = [1]  # the user's own plan\n")
    (out / "telemetry.h5").write_bytes(b"\x89HDF the user's measurements")
    before = digests(tmp_path)
    with pytest.raises(OutputError, match="is not empty and not a hpcds1mpi quickstart folder; "
                                          "choose another --out") as err:
        invoke("--out", str(out), *force)
    assert err.value.exit_code == 2 and digests(tmp_path) == before and not fake_steps
    proc = run_cli(["quickstart", "--out", str(out), *force], timeout=120)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
    assert "Traceback" not in proc.stderr and digests(tmp_path) == before


def test_a_rerun_resumes_in_its_own_folder_and_force_starts_over(tmp_path, fake_steps):
    from hpcds1mpi.commands.quickstart import MARK, is_quickstart_folder
    from tests.test_atomic import temporaries

    out = tmp_path / "qs"
    assert invoke("--out", str(out)).exit_code == 0
    assert is_quickstart_folder(out) and (out / MARK).is_file()
    assert invoke("--out", str(out)).exit_code == 0  # resumes: the telemetry is kept
    assert (out / "telemetry.h5").read_text().count("one more sweep") == 2
    train = [cmd for what, cmd in fake_steps if what == "training"]
    assert all("--force" in cmd for cmd in train)  # its own model is replaced
    assert invoke("--out", str(out), "--force").exit_code == 0  # starts over
    assert (out / "telemetry.h5").read_text().count("one more sweep") == 1
    assert temporaries(tmp_path) == []
    (out / "thesis.tex").write_text("a user's file now lives here")
    assert not is_quickstart_folder(out)


def test_force_keeps_the_earlier_run_until_the_new_one_is_whole(tmp_path, fake_steps,
                                                                 monkeypatch):
    """s47 tester M1: --force deleted the earlier folder (its model with the runs learn had
    added, script, telemetry) before measuring: a failed step or a Ctrl-C left nothing of it.
    Now the new folder is built aside and swapped in whole; it names its own paths."""
    from hpcds1mpi.commands import quickstart
    from hpcds1mpi.commands.quickstart import runs_beyond_the_sweep
    from hpcds1mpi.errors import RuntimeFailure
    from tests.test_atomic import digests, temporaries

    out = tmp_path / "qs"
    assert invoke("--out", str(out)).exit_code == 0
    manifest = json.loads((out / "model" / "manifest.json").read_text())
    (out / "model" / "manifest.json").write_text(json.dumps(
        {**manifest, "sources": [*manifest["sources"], "tune.h5"]}))  # as learn records
    before = digests(tmp_path)
    faked = quickstart._run

    def disk_full(cmd, what, timeout):
        if what == "training":
            raise RuntimeFailure("training failed: No space left on device")
        return faked(cmd, what, timeout)

    monkeypatch.setattr(quickstart, "_run", disk_full)
    with pytest.raises(RuntimeFailure, match="No space left"):
        invoke("--out", str(out), "--force")
    assert digests(tmp_path) == before and temporaries(tmp_path) == []
    monkeypatch.setattr(quickstart, "_run", faked)
    result = invoke("--out", str(out), "--force")
    assert result.exit_code == 0 and f"model           {out / 'model'}" in result.output
    assert (out / "telemetry.h5").read_text().count("one more sweep") == 1  # started over
    manifest = json.loads((out / "model" / "manifest.json").read_text())
    assert manifest["sources"] == [str(out / "telemetry.h5")]  # not the folder built aside
    assert runs_beyond_the_sweep(out / "model", out / "telemetry.h5") == []
    assert temporaries(tmp_path) == []


def test_a_quickstart_folder_from_before_the_mark_is_recognised(tmp_path, fake_steps):
    from hpcds1mpi.commands.quickstart import MARK, is_quickstart_folder

    out = tmp_path / "qs"
    assert invoke("--out", str(out)).exit_code == 0
    (out / MARK).unlink()
    assert is_quickstart_folder(out)
    (out / "plan.toml").write_text("[sweep]\n")
    assert not is_quickstart_folder(out)


def unseal(script: Path) -> None:
    """``script`` as a quickstart from before scripts carried a checksum line wrote it."""
    from hpcds1mpi.launch.script_seal import SEAL

    lines = script.read_text().splitlines(keepends=True)
    script.write_text("".join(ln for ln in lines if not ln.startswith(SEAL)))


def test_an_older_quickstarts_script_is_replaced_by_a_rerun(tmp_path, fake_steps):
    """s34 tester O1: a rerun in an older quickstart's folder failed at its last step, after
    the sweep and the training: job.sbatch had no checksum line. Now it is replaced."""
    import os

    out = tmp_path / "qs"
    assert invoke("--out", str(out)).exit_code == 0
    unseal(out / "job.sbatch")
    written = os.stat(out / "recommendation.json").st_mtime_ns  # the script came before it
    os.utime(out / "job.sbatch", ns=(written - 10**9, written - 10**9))
    assert invoke("--out", str(out)).exit_code == 0
    recommend = [cmd for what, cmd in fake_steps if what == "recommending"]
    assert "--force" not in recommend[0] and "--force" in recommend[1]
    from hpcds1mpi.launch.script_seal import script_state

    assert script_state(out / "job.sbatch") == "unchanged"
    assert (out / "telemetry.h5").read_text().count("one more sweep") == 2  # resumed


@pytest.mark.parametrize("change", ["edited", "unsealed-later", "foreign"])
def test_a_script_quickstart_may_not_replace_is_refused_before_any_work(tmp_path, fake_steps,
                                                                        change):
    """s34 tester O1: the refusal came after the sweep and the training, and advised `-o`,
    which quickstart has not. Now before any work, with what quickstart takes."""
    from hpcds1mpi.errors import OutputError
    from tests.test_atomic import digests

    out = tmp_path / "qs"
    assert invoke("--out", str(out)).exit_code == 0
    script = out / "job.sbatch"
    if change == "edited":
        script.write_text(script.read_text() + "module load mine\n")
    elif change == "unsealed-later":
        unseal(script)  # written after recommendation.json: perhaps edited
    else:
        script.write_text("#!/bin/bash\nsrun ./my_own_job\n")
    fake_steps.clear()
    before = digests(tmp_path)
    with pytest.raises(OutputError, match=f"{script}: a rerun of quickstart writes a new one "
                                          f"there, but .*; move it out of {out} to keep it "
                                          "and rerun quickstart") as err:
        invoke("--out", str(out))
    assert err.value.exit_code == 2 and not fake_steps and digests(tmp_path) == before
    proc = run_cli(["quickstart", "--out", str(out)], timeout=120)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
    assert digests(tmp_path) == before
    assert invoke("--out", str(out), "--force").exit_code == 0  # what it says starts over


def stopped_while_measuring(*args: str) -> tuple[int, str]:
    """quickstart with ``args`` in a child whose sweep measures a run ("a measured run" in its
    ``--out``), then is stopped by SIGTERM: its exit code and stderr."""
    import signal
    import sys
    import textwrap

    code = textwrap.dedent(f"""
        import time
        from pathlib import Path
        from hpcds1mpi.commands import quickstart
        from hpcds1mpi.launch import launcher_discovery

        def sweep(cmd, what, timeout):  # measures a run, then is stopped
            Path(cmd[cmd.index("--out") + 1]).write_text("a measured run")
            print("measuring", flush=True)
            time.sleep(60)

        quickstart._run, launcher_discovery.mpiexec_path = sweep, lambda: "mpiexec"
        from hpcds1mpi.cli import main
        main(["quickstart", *{list(args)!r}])
    """)
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    while (line := proc.stdout.readline()) and line.strip() != "measuring":
        pass
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    return proc.returncode, err


def test_sigterm_says_the_measured_runs_are_kept_for_the_rerun(tmp_path):
    """SIGTERM said "no partial output is left" while the folder, as designed, kept the runs
    measured so far for the rerun to resume."""
    from hpcds1mpi.commands.quickstart import is_quickstart_folder
    from tests.test_atomic import temporaries

    out = tmp_path / "qs"
    returncode, err = stopped_while_measuring("--out", str(out))
    assert returncode == 1
    assert err.strip().splitlines() == [
        f"hpcds1mpi: error: {out}: stopped by SIGTERM while writing the quickstart folder; the "
        "runs measured so far are kept there: rerun with the same --out (without --force) to "
        "resume"]
    assert (out / "telemetry.h5").read_text() == "a measured run"
    assert is_quickstart_folder(out) and temporaries(tmp_path) == []


def test_sigterm_during_force_leaves_the_earlier_run_as_it_was(tmp_path, fake_steps):
    """s47 tester M1: a stop during --force left only the new sweep's first runs, and said
    "the runs measured so far are kept there"; the earlier run was gone."""
    from tests.test_atomic import digests, temporaries

    out = tmp_path / "qs"
    assert invoke("--out", str(out)).exit_code == 0
    before = digests(tmp_path)
    returncode, err = stopped_while_measuring("--out", str(out), "--force")
    assert returncode == 1
    assert err.strip().splitlines() == [
        f"hpcds1mpi: error: {out}: stopped by SIGTERM while writing the quickstart folder; the "
        "earlier quickstart folder there is left as it was: rerun to start over (--force) or to "
        "resume it"]
    assert digests(tmp_path) == before and temporaries(tmp_path) == []


# -- more ranks than cores, a sweep past its time limit ----------------------------------------

@pytest.fixture
def two_cores(monkeypatch):
    from hpcds1mpi import cluster
    from hpcds1mpi.cluster import Cluster, Partition

    local = Cluster(name="local", partitions={"local": Partition(
        name="local", cores_per_node=2, memory_gb=4.0, max_nodes=1)})
    monkeypatch.setattr(cluster, "detect_local", lambda name="local": local)


def test_more_ranks_than_cores_is_refused_before_anything_starts(tmp_path, fake_steps,
                                                                  two_cores):
    """``--ranks 1000`` on 2 cores started mpiexec -n 1000 (load 390); the sweep only keeps
    layouts that fit the node, so it is refused in one line before any folder or process."""
    from hpcds1mpi.errors import ConfigError

    out = tmp_path / "qs"
    with pytest.raises(ConfigError, match=r"^--ranks 1000 is more than this machine's 2 cores "
                                          r".*; pass --ranks 2 or fewer$") as err:
        invoke("--out", str(out), "--ranks", "1000")
    assert err.value.exit_code == 2 and not fake_steps and not out.exists()
    assert invoke("--out", str(out), "--ranks", "2").exit_code == 0
    sweep = [cmd for what, cmd in fake_steps if what == "measuring sweep"][0]
    assert sweep[sweep.index("-n") + 1] == "2"


def test_a_step_past_its_time_limit_is_a_runtime_failure():
    """The README's exit-code table: a run cut short (walltime) is a runtime failure, 1."""
    from hpcds1mpi.commands.quickstart import _run
    from hpcds1mpi.errors import RUNTIME

    with pytest.raises(Exception, match=r"measuring sweep did not finish in 0 s; rerun "
                                        r"quickstart \(the sweep resumes") as err:
        _run(["sleep", "5"], "measuring sweep", 0.2)
    assert err.value.exit_code == RUNTIME == 1


# -- its children die with it; a child's own error passed through once (s33 tester C5) -------

def test_quickstart_killed_by_sigkill_leaves_no_sweep_running(tmp_path):
    """kill -9 of quickstart had left its mpiexec and the sweep ranks running, and the rerun
    then failed on the sweep's lock."""
    import os
    import signal
    import time

    from tests.commands.test_tune_stop import _sweeps_writing
    from tests.helpers import hpcds1mpi_exe

    out = tmp_path / "qs"
    telemetry = out / "telemetry.h5"
    proc = subprocess.Popen([hpcds1mpi_exe(), "quickstart", "--out", str(out)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while not _sweeps_writing(telemetry) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _sweeps_writing(telemetry), "the sweep never started"
    time.sleep(2.0)  # its ranks are measuring
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 20
    while _sweeps_writing(telemetry) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _sweeps_writing(telemetry) == []


def test_a_childs_own_error_is_said_once_with_its_exit_code(tmp_path):
    """The sweep's held-lock error had come out nested ("measuring sweep failed: hpcds1mpi:
    error: ...") and as exit 2; a held lock is a runtime failure, 1 (README)."""
    from hpcds1mpi.commands.quickstart import _run
    from hpcds1mpi.errors import RUNTIME
    import fcntl

    from hpcds1mpi.records.telemetry.side_files import lock_path
    from tests.helpers import hpcds1mpi_exe

    telemetry = tmp_path / "telemetry.h5"
    with open(lock_path(telemetry), "w") as held, pytest.raises(Exception) as err:
        held.write("pid 1 on elsewhere\n")
        held.flush()
        fcntl.flock(held, fcntl.LOCK_EX)  # another sweep writes it (the killed quickstart's)
        _run([hpcds1mpi_exe(), "sweep", "--kernel", "gemm", "--sizes", "64",
              "--ranks-per-node", "1", "--out", str(telemetry), "--no-progress"],
             "measuring sweep", 120)
    assert err.value.exit_code == RUNTIME
    message = str(err.value)
    assert message.startswith(f"measuring sweep failed: {telemetry} is being written by "
                              "another process (pid ")
    assert "error:" not in message and "\n" not in message


def test_a_childs_usage_error_keeps_exit_2():
    from hpcds1mpi.commands.quickstart import child_error

    error = child_error("training", 2, "note: x\nhpcds1mpi: error: --out x: not a folder\n")
    assert (error.exit_code, str(error)) == (2, "training failed: --out x: not a folder")
    assert child_error("training", -9, "").exit_code == 1


def test_each_step_is_echoed_as_a_command_to_paste(monkeypatch, capsys):
    """A folder ``qs 'q' $x `id` é`` had been echoed raw: pasted, the step ran on other paths
    (s39 tester D5). Each word is quoted as the shell reads it back; a newline as ``$'\\n'``,
    so the command stays one line."""
    import shlex
    import subprocess

    from hpcds1mpi.commands import quickstart
    from hpcds1mpi.runtime import processes

    monkeypatch.setattr(processes, "run_child",
                        lambda cmd, timeout=None: subprocess.CompletedProcess(cmd, 0, "", ""))
    cmd = ["hpcds1mpi", "train", "--telemetry", "qs 'q' $x `id` é/telemetry.h5", "--out",
           "qs 'q' $x `id` é/model", "--force"]
    quickstart._run(cmd, "training", 10)
    line = capsys.readouterr().out.rstrip("\n")
    assert line.startswith("→ training: hpcds1mpi train ") and "\n" not in line
    assert shlex.split(line.removeprefix("→ training: ")) == cmd
    quickstart._run(["hpcds1mpi", "train", "--out", "a\nb"], "training", 10)
    assert capsys.readouterr().out == "→ training: hpcds1mpi train --out $'a\\nb'\n"

