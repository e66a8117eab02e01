"""The supervisor: relaunch until the plan is done, stop on a user error or on no progress.

Launches are faked (``subprocess.run`` replaced): each fake launch appends rows to the telemetry
file as a real launch would and returns an exit code. The real relaunch after a timeout and a
lone failing rank is tested in tests/measure/test_watchdog.py; real launches here: a rank's
``os._exit(0)``, a segfault, SIGINT / SIGTERM of the supervisor.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time

import pytest

from hpcds1mpi.errors import LaunchError
from hpcds1mpi.launch import launchers
from hpcds1mpi.measure import supervise as supervise_module
from hpcds1mpi.measure.supervise import supervise
from hpcds1mpi.records import telemetry
from hpcds1mpi.records.telemetry import journal
from tests.helpers import REPO, hpcds1mpi_exe, wait_for_start

FAULTS = str(REPO / "tests" / "fault_kernels.py")


def _fake_launches(monkeypatch, out, script):
    """Replace launches by ``script``: a list of (rows to record, exit code[, plan done]), one
    per launch (plan done defaults to ``exit code == 0``).

    Returns the argv of every launch made, filled in as they are made.
    """
    calls = []

    def run_launch(argv):
        rows, rc, *done = script[len(calls)]
        done = done[0] if done else rc == 0
        calls.append(list(argv))
        w = telemetry.TelemetryWriter(out, resume=True,
                                      attrs={supervise_module.COMPLETE_ATTR: int(done)}).open()
        for i in range(rows):
            w.record({"run_id": f"r{len(calls)}-{i}", "machine_id": "m", "workload": "w",
                      "status": "ok"})
        if rc in (0, 2, 124):  # ended (the watchdog records its timeout itself)
            w.close()
        else:  # died while a run was on
            w.start({"run_id": "dying", "machine_id": "m", "workload": "w"})
            w.release()
        return rc

    monkeypatch.setattr(supervise_module, "run_launch", run_launch)
    # The launcher's own tokens are tested in tests/launch; here only that they come first.
    class Launch:
        def total_tokens(self, ranks):
            return ["launch", "-n", str(ranks)]

    monkeypatch.setattr(launchers, "local",
                        lambda launcher=None, mpi="pmi2", mpiexec=None, args=(): Launch())
    return calls


def test_relaunches_with_resume_until_done(monkeypatch, tmp_path, capsys):
    """A timeout abort (124), then exit 2 after progress (a user error only on launch 1)."""
    out = tmp_path / "t.h5"
    calls = _fake_launches(monkeypatch, out, [(2, 124), (1, 2), (1, 0)])
    assert supervise(3, ["--plan", "p.toml", "--out", str(out)], str(out),
                     launcher="mpiexec") == 0
    assert len(calls) == 3
    assert calls[0][-5:] == ["sweep", "--plan", "p.toml", "--out", str(out)]
    assert calls[0][:3] == ["launch", "-n", "3"]
    assert all(c[-1] == "--resume" and c.count("--resume") == 1 for c in calls[1:])
    err = capsys.readouterr().err
    assert "launch 1 exited 124; 2 runs recorded, resuming" in err
    assert "launch 2 exited 2; 3 runs recorded, resuming" in err


def test_user_error_on_the_first_launch_is_returned(monkeypatch, tmp_path):
    out = tmp_path / "t.h5"
    calls = _fake_launches(monkeypatch, out, [(0, 2)])
    assert supervise(2, ["--out", str(out)], str(out), launcher="mpiexec") == 2
    assert len(calls) == 1


def test_a_launch_without_progress_stops(monkeypatch, tmp_path):
    out = tmp_path / "t.h5"
    _fake_launches(monkeypatch, out, [(1, 1), (0, 1)])
    with pytest.raises(LaunchError, match="launch 2 exited 1 without recording a run"):
        supervise(2, ["--out", str(out)], str(out), launcher="mpiexec")
    calls = []
    monkeypatch.setattr(supervise_module, "run_launch", lambda argv: calls.append(argv) or 137)
    with pytest.raises(LaunchError, match="launch 1 exited 137 without recording"):
        supervise(2, [], str(tmp_path / "none.h5"), launcher="mpiexec")  # no file at all


def test_gives_up_after_max_launches(monkeypatch, tmp_path):
    out = tmp_path / "t.h5"
    _fake_launches(monkeypatch, out, [(1, 1)] * 3)
    with pytest.raises(LaunchError, match="not finished after 3 launches"):
        supervise(2, [], str(out), max_launches=3, launcher="mpiexec")


def test_a_crash_leaves_a_note_a_timeout_abort_does_not(monkeypatch, tmp_path):
    out = tmp_path / "t.h5"
    notes = []
    real = journal.write_crash_note
    monkeypatch.setattr(journal, "write_crash_note",
                        lambda path, evidence: notes.append(evidence) or real(path, evidence))
    _fake_launches(monkeypatch, out, [(1, 124), (1, -11), (1, 0)])
    assert supervise(2, ["--out", str(out)], str(out), launcher="mpiexec") == 0
    assert notes == ["launch 2 was killed by SIGSEGV while it ran"]


def test_an_error_of_the_sweep_itself_stops_without_a_note(monkeypatch, tmp_path):
    out = tmp_path / "t.h5"
    calls = _fake_launches(monkeypatch, out, [(1, supervise_module.SWEEP_ERROR_EXIT)])
    assert supervise(2, ["--out", str(out)], str(out), launcher="mpiexec") == 1
    assert len(calls) == 1 and not journal.crash_note_path(out).exists()
    assert telemetry.read_runs(out).set_index("run_id").loc["dying", "status"] == \
        "interrupted"


def test_exit_0_before_the_plan_is_done_is_an_error(monkeypatch, tmp_path):
    out = tmp_path / "t.h5"
    calls = _fake_launches(monkeypatch, out, [(1, 0, False)])
    with pytest.raises(LaunchError, match="exited 0 before its plan was done"):
        supervise(2, ["--out", str(out)], str(out), launcher="mpiexec")
    assert len(calls) == 1  # not relaunched: the same rank would leave again
    assert not journal.crash_note_path(out).exists()  # not a crash: re-run by --resume


# ------------------------------------------------------------------------- real launches


def _sweep_args(out, kernel, sizes, ranks="2"):
    return ["sweep", "--launch", ranks, "--kernel-module", FAULTS, "--kernel", kernel,
            "--sizes", sizes, "--ranks-per-node", ranks, "--threads", "1", "--precisions",
            "fp64", "--min-time", "0", "--max-repeats", "1", "--warmup", "0", "--out", str(out),
            "--no-progress"]


def _run(argv, timeout=120):
    return subprocess.run([hpcds1mpi_exe(), *argv], capture_output=True, text=True,
                          timeout=timeout)


@pytest.mark.mpi
def test_a_rank_exiting_0_under_launch_is_a_non_zero_exit_and_not_done(tmp_path):
    out = tmp_path / "t.h5"
    proc = _run(_sweep_args(out, "fault_exit", "5,1000"))
    assert proc.returncode == 1, proc.stderr
    assert "exited 0 before its plan was done" in proc.stderr and "Traceback" not in proc.stderr
    df = telemetry.read_runs(out).set_index("size")
    assert df.loc[5, "status"] == "ok" and df.loc[1000, "status"] == "interrupted"
    # --resume runs it again (the rank leaves again: the same error, the ok run kept).
    proc = _run(_sweep_args(out, "fault_exit", "5,1000") + ["--resume"])
    assert proc.returncode == 1
    df = telemetry.read_runs(out).set_index("size")
    assert df.loc[5, "status"] == "ok" and df.loc[1000, "attempt"] == 2


@pytest.mark.mpi
def test_a_segfault_under_launch_is_crashed_with_its_evidence(tmp_path):
    out = tmp_path / "t.h5"
    proc = _run(_sweep_args(out, "fault_segv", "5,1000,6"))
    assert proc.returncode == 0, proc.stderr
    df = telemetry.read_runs(out).set_index("size")
    assert (df.loc[[5, 6], "status"] == "ok").all()
    assert df.loc[1000, "status"] == "crashed" and "launch 1" in df.loc[1000, "error"]


def _pids_of(session: int) -> list[int]:
    """Processes still alive in session ``session`` (the supervisor's own session)."""
    import psutil

    found = []
    for proc in psutil.process_iter(["pid", "status"]):
        try:
            if os.getsid(proc.pid) == session and proc.info["status"] != psutil.STATUS_ZOMBIE:
                found.append(proc.pid)
        except (ProcessLookupError, PermissionError, psutil.Error):
            continue
    return found


@pytest.mark.mpi
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_to_the_supervisor_ends_every_rank_and_the_run_is_interrupted(tmp_path, sig):
    out = tmp_path / "t.h5"
    args = _sweep_args(out, "fault_sleep", "5,4000")
    sup = subprocess.Popen([hpcds1mpi_exe(), *args], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, start_new_session=True)
    wait_for_start(out, 4000)  # the long run has started
    import psutil

    ranks = [p.pid for p in psutil.Process(sup.pid).children(recursive=True)]
    assert ranks, "the launch had not started"
    sup.send_signal(sig)
    _, err = sup.communicate(timeout=60)
    assert sup.returncode == 1, err
    assert f"stopped by {signal.Signals(sig).name}" in err and "Traceback" not in err
    ours = [ln for ln in err.splitlines() if ln.startswith("hpcds1mpi")]
    assert len(ours) == 1, err  # one line (beside MPI's own abort notices)
    assert "1 finished run(s) are kept" in ours[0], err  # not the interrupted one too
    time.sleep(0.2)
    assert not [p for p in ranks if psutil.pid_exists(p) and
                psutil.Process(p).status() != psutil.STATUS_ZOMBIE], "a rank outlived the sweep"
    df = telemetry.read_runs(out).set_index("size")
    assert df.loc[5, "status"] == "ok" and df.loc[4000, "status"] == "interrupted"


@pytest.mark.mpi
def test_disk_full_under_launch_stops_with_one_line_and_no_false_crash(small_disk):
    """The sweep's own error (a full disk) is no crash of the run: no note, no relaunch."""
    from tests.helpers import fill_disk

    out = small_disk / "t.h5"
    args = _sweep_args(out, "fault_sleep", "1..64") + ["--snapshot-every", "0"]
    filler = fill_disk(small_disk, 120 * 1024)
    proc = _run(args, timeout=60)
    assert proc.returncode == 1, proc.stderr
    ours = [ln for ln in proc.stderr.splitlines() if ln.startswith("hpcds1mpi")]
    assert len(ours) == 1 and "No space left on device" in ours[0], proc.stderr
    assert "Traceback" not in proc.stderr
    assert not journal.crash_note_path(out).exists()
    filler.unlink()
    df = telemetry.read_runs(out)
    assert len(df) >= 1 and set(df["status"]) <= {"ok", "interrupted"}


@pytest.mark.mpi
def test_sigkill_of_the_supervisor_leaves_no_rank(tmp_path):
    """SIGKILL cannot be caught: the kernel tells the launch (PR_SET_PDEATHSIG), which ends
    its ranks; the run is interrupted."""
    import psutil

    out = tmp_path / "t.h5"
    sup = subprocess.Popen([hpcds1mpi_exe(), *_sweep_args(out, "fault_sleep", "5,4000")],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for_start(out, 4000)  # the long run has started
    ranks = [p.pid for p in psutil.Process(sup.pid).children(recursive=True)]
    sup.kill()
    sup.communicate(timeout=30)
    deadline = time.monotonic() + 20
    alive = ranks
    while alive and time.monotonic() < deadline:
        alive = [p for p in ranks if psutil.pid_exists(p)
                 and psutil.Process(p).status() != psutil.STATUS_ZOMBIE]
        time.sleep(0.1)
    for pid in alive:
        os.kill(pid, signal.SIGKILL)
    assert not alive, "a rank outlived a SIGKILL of the supervisor"
    df = telemetry.read_runs(out).set_index("size")
    assert df.loc[5, "status"] == "ok" and df.loc[4000, "status"] == "interrupted"


@pytest.mark.mpi
def test_a_crashed_run_is_named_as_not_done_not_counted_already_done(tmp_path):
    """s33 tester C10: the relaunch's summary had counted the crashed run "already done" and
    named nothing; --resume skips it (README), --retry-crashed runs it again."""
    out = tmp_path / "t.h5"
    proc = _run(_sweep_args(out, "fault_segv", "5,1000,6"))
    assert proc.returncode == 0, proc.stderr
    line = (f"hpcds1mpi sweep: 1 configuration(s) in {out} crashed and are not run again: "
            "fault_segv size 1000 N1xR2xT1-cpu-fp64; add --retry-crashed to --resume to run "
            "them again")
    assert line in proc.stderr.splitlines(), proc.stderr
    assert "; 2 already done)" in proc.stderr, proc.stderr


@pytest.mark.mpi
def test_a_rank_sent_sigterm_alone_under_launch_is_said_in_one_line(tmp_path):
    """s33 tester C8: SIGTERM to one rank (not the supervisor) ended the sweep with exit 1 and
    only MPICH's "Abort(3) on node 1": its ranks left the line to the supervisor, which took
    the exit for an error the sweep had said."""
    import psutil

    out = tmp_path / "t.h5"
    sup = subprocess.Popen([hpcds1mpi_exe(), *_sweep_args(out, "fault_sleep", "5,4000")],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for_start(out, 4000)  # the long run has started
    ranks = [p for p in psutil.Process(sup.pid).children(recursive=True)
             if "sweep" in " ".join(p.cmdline()) and p.name() != "mpiexec"
             and "hydra" not in p.name()]
    assert ranks, "the launch had not started"
    ranks[-1].send_signal(signal.SIGTERM)
    _, err = sup.communicate(timeout=60)
    assert sup.returncode == 1, err
    ours = [ln for ln in err.splitlines() if ln.startswith("hpcds1mpi")]
    assert ours == [f"hpcds1mpi: error: a rank of sweep launch 1 ended (signal SIGTERM); the "
                    f"launch was ended, 1 finished run(s) are kept in {out}; --resume "
                    "continues"], err
    df = telemetry.read_runs(out).set_index("size")
    assert df.loc[5, "status"] == "ok" and df.loc[4000, "status"] == "interrupted"


@pytest.mark.slurm
def test_launches_outlasting_their_job_stop_interrupted_not_without_progress(slurm, tmp_path):
    """s33 tester A8 under ``--launch``: each launch crashes on one size and is relaunched;
    past the job's time limit srun refuses the relaunch ("Job/step already completing or
    completed"), which read as a launch without progress. It is the allocation's end."""
    out = tmp_path / "t.h5"
    sizes = ",".join(str(size) for size in range(1000, 1120))  # each crashes: one a launch
    proc = subprocess.run(["salloc", "-N1", "-n1", "-J", "hpcds1mpi-timelimit", "--time=1",
                           hpcds1mpi_exe(), *_sweep_args(out, "fault_segv", sizes, ranks="1"),
                           "--launcher", "srun"], capture_output=True, text=True,
                          timeout=150, env=slurm.env, cwd=tmp_path, stdin=subprocess.DEVNULL)
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("hpcds1mpi: error:")]
    assert proc.returncode == 1 and len(errors) == 1, proc.stderr[-3000:]
    assert "reached its time limit" in errors[0] and "--resume inside a new allocation" \
        in errors[0], errors[0]
    assert "without recording a run" not in proc.stderr
