"""Each rank's peak memory where the sweep's tree does not hold it (srun, an mpirun inside an
allocation), from its own wrapper: the wrapper's report, the rank it leaves unchanged (status,
signals, descriptors), and real sweeps of a short program under srun and Open MPI's mpirun."""

from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import tempfile
import time
from types import SimpleNamespace

import pytest

from hpcds1mpi.measure.rank_peak import MARK, WRAPPER, is_wrapped, take_reports, wrapped
from hpcds1mpi.measure.ranks_usage import ranks_usage

WRAP = [sys.executable, "-I", "-S", WRAPPER, "--"]


def _report(kib: int, cpu: float = 0.5) -> bytes:
    return f"{MARK}maxrss_kib={kib} cpu_s={cpu:.6f}\n".encode()


def _wrapper_run(program: list[str], **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([*WRAP, *program], capture_output=True, timeout=30, **kwargs)


def test_srun_and_any_launcher_in_an_allocation_wrap_their_ranks():
    assert wrapped("srun", ["srun", "-n", "2"], ["./app", "1"]) == [
        "srun", "-n", "2", *WRAP, "./app", "1"]
    assert is_wrapped(wrapped("srun", ["srun"], ["./app"]))
    # outside an allocation an mpiexec's ranks on this node are the sweep's own descendants
    assert wrapped("mpiexec", ["mpiexec", "-n", "2"], ["./app"]) == ["mpiexec", "-n", "2", "./app"]
    # inside one its daemons (orted, hydra_pmi_proxy) and so its ranks start through srun
    assert wrapped("mpiexec", ["mpirun.openmpi", "-n", "2"], ["./app"], in_allocation=True) == [
        "mpirun.openmpi", "-n", "2", *WRAP, "./app"]


def test_reports_leave_the_programs_stderr_as_it_wrote_it():
    """Whole report lines go, a srun --label before one too; one written after the program's
    unfinished last line leaves that line; the largest peak and the summed CPU are kept."""
    with tempfile.TemporaryFile() as err:
        err.write(b"warning: slow\n" + _report(2048, 0.25) + b"1: " + _report(4096, 0.5)
                  + b"no newline" + _report(1024, 0.25) + b"after\n")
        found = take_reports(err)
        err.seek(0)
        assert err.read() == b"warning: slow\nno newlineafter\n"
    assert (found.count, found.peak_mb, found.cpu_s) == (3, 4.0, 1.0)
    assert found.source(3) == "rank wrapper under srun (wait4 ru_maxrss, the largest rank)"
    with tempfile.TemporaryFile() as err:
        err.write(_report(2048))
        assert take_reports(err, "mpirun.openmpi").source(1) == (
            "rank wrapper under mpirun.openmpi (wait4 ru_maxrss, the largest rank)")
    assert found.source(4).endswith(": 3 of 4 ranks reported (the others ended without)")


def test_a_stderr_without_reports_is_left_alone():
    with tempfile.TemporaryFile() as err:
        err.write(b"error: " + MARK.encode() + b"maxrss_kib=x\n")
        assert take_reports(err).count == 0
        err.seek(0)
        assert err.read() == b"error: " + MARK.encode() + b"maxrss_kib=x\n"


def test_the_rank_s_own_peak_is_reported_not_the_wrappers():
    """80 MB the rank touches: reported whole (ru_maxrss of the rank), however short it ran,
    and not the wrapper's own 8 MB on top; its output and exit code are its own."""
    rank = "import sys; held = bytearray(80 * 2**20); print('done'); sys.exit(3)"
    proc = _wrapper_run([sys.executable, "-c", rank])
    assert proc.returncode == 3 and proc.stdout == b"done\n"
    with tempfile.TemporaryFile() as err:
        err.write(proc.stderr)
        found = take_reports(err)
    assert found.count == 1 and 80 < found.peak_mb < 100, proc.stderr


def test_a_rank_killed_by_a_signal_kills_its_wrapper_so(tmp_path):
    """srun and the sweep read the rank's end (a crash, an OOM kill), not the wrapper's."""
    proc = _wrapper_run([sys.executable, "-c", "import os, signal; os.kill(os.getpid(), "
                         "signal.SIGTERM)"], cwd=tmp_path)
    assert proc.returncode == -signal.SIGTERM and MARK.encode() in proc.stderr


def test_a_program_that_cannot_start_is_said_as_slurmstepd_says_it():
    """launch_problem reads "execve()" as a program that never started (not a measurement)."""
    proc = _wrapper_run(["./no-such-program"])
    assert proc.returncode == 127
    assert b"execve(): ./no-such-program: No such file or directory" in proc.stderr


def test_descriptors_environment_and_sigpipe_pass_to_the_rank(tmp_path):
    """srun's pmi2 plugin gives a task its PMI_FD; Python ignores SIGPIPE, exec would keep it."""
    read_fd, write_fd = os.pipe()
    rank = 'printf wired > /dev/fd/$PMI_FD; grep SigIgn /proc/self/status'
    proc = _wrapper_run(["sh", "-c", rank], pass_fds=(write_fd,),
                        env={**os.environ, "PMI_FD": str(write_fd)})
    os.close(write_fd)
    assert os.read(read_fd, 10) == b"wired"
    os.close(read_fd)
    ignored = int(proc.stdout.decode().split()[1], 16)
    assert not ignored & (1 << (signal.SIGPIPE - 1)), proc.stdout


def test_a_signal_to_the_wrapper_reaches_the_rank_but_not_its_parents(tmp_path):
    """A ``kill`` of the wrapper goes on to the rank; its parent's does not (slurmstepd
    signals every process of the step, the rank included: it would get each signal twice)."""
    import psutil

    log = tmp_path / "got"
    rank = (f"import signal, time\ngot = []\ndef on(*a):\n    open({str(log)!r}, 'a')"
            ".write('usr1\\n'); got.append(1)\nsignal.signal(signal.SIGUSR1, on)\n"
            "print('ready', flush=True)\nend = time.monotonic() + 20\n"
            "while not got and time.monotonic() < end:\n    time.sleep(0.01)\n")
    # the wrapper's parent, a shell, signals it once told to
    parent = subprocess.Popen(["sh", "-c", '"$@" & w=$!; read go; kill -USR1 $w; echo sent; '
                               'wait $w', "sh", *WRAP, sys.executable, "-c", rank],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert parent.stdout.readline() == b"ready\n"
        parent.stdin.write(b"go\n")
        parent.stdin.flush()
        assert parent.stdout.readline() == b"sent\n"
        time.sleep(0.3)
        assert not log.exists()  # the parent's signal stayed with the wrapper
        wrapper = psutil.Process(parent.pid).children()[0]
        os.kill(wrapper.pid, signal.SIGUSR1)  # anyone else's is passed on
        assert parent.wait(timeout=20) == 0
        assert log.read_text() == "usr1\n"
    finally:
        if parent.poll() is None:
            parent.kill()


def test_reports_stand_over_sacct_where_ranks_ran_under_srun():
    """Before: a short step's ranks had no MaxRSS (NaN); the wrappers' peak is each rank's."""
    tree = SimpleNamespace(remote_starter="srun", program_seen=False, peak_mb=0.0)
    with tempfile.TemporaryFile() as err:
        err.write(_report(98 * 1024, 0.25) + _report(97 * 1024, 0.25))
        reports = take_reports(err)
    peak, cpu, source = ranks_usage(tree, 0.5, 2, None, reports=reports)
    assert (peak, cpu) == (98.0, 1.0) and source.startswith("rank wrapper under srun")
    peak, cpu, _ = ranks_usage(tree, 0.5, 3, None, reports=reports)  # one rank never reported
    assert peak == 98.0 and math.isnan(cpu)


def test_reports_stand_over_the_tree_and_count_local_ranks_cpu_once():
    """An mpirun in an allocation runs the ranks of its own node as its children: the tree's
    sample would hold the wrapper (a 2 MB program's 9 MB), and its children's CPU those ranks'."""
    with tempfile.TemporaryFile() as err:
        err.write(_report(2 * 1024, 0.25) + _report(3 * 1024, 0.25))
        reports = take_reports(err, "mpirun.openmpi")
    local = SimpleNamespace(remote_starter="", program_seen=True, peak_mb=9.0)
    assert ranks_usage(local, 0.6, 2, None, reports=reports)[:2] == (3.0, 0.5)
    mixed = SimpleNamespace(remote_starter="srun", program_seen=True, peak_mb=9.0)
    assert ranks_usage(mixed, 0.6, 2, None, reports=reports)[:2] == (3.0, 0.5)
    # some ranks unreported: the tree's sample as before where no rank ran elsewhere
    assert ranks_usage(local, 0.6, 3, None, reports=reports)[0] == 9.0


#: A short MPI program (well under Slurm's 1 s sampling here) whose ranks touch 64 MB each.
HOLDER = r"""
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    volatile char *held = malloc(64 << 20);
    long sum = 0;
    for (long i = 0; i < (64 << 20); i += 4096) held[i] = 1;
    for (long i = 0; i < (64 << 20); i += 4096) sum += held[i];
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) printf("ranks %d touched %ld pages\n", size, sum);
    free((void *)held);
    MPI_Finalize();
    return 0;
}
"""


@pytest.mark.slurm
def test_a_short_programs_ranks_under_srun_have_their_peak_recorded(slurm, tmp_path):
    """Before (README, K4): its step ended before Slurm's first memory sample, so the run's
    peak was NaN ("not measured") or a later, smaller sample; now each rank's own."""
    import shutil
    from pathlib import Path

    from hpcds1mpi.records.telemetry import read_runs
    from tests.helpers import hpcds1mpi_exe

    cc = Path(sys.executable).parent / "mpicc"
    if not cc.exists() or shutil.which("cc") is None:
        pytest.skip("the wheel's mpicc or a C compiler is missing")
    (tmp_path / "holder.c").write_text(HOLDER)
    subprocess.run([str(cc), "-O1", "-o", str(tmp_path / "holder"), str(tmp_path / "holder.c")],
                   check=True, timeout=60)
    out = tmp_path / "holder.h5"
    proc = slurm.cmd(["salloc", "-N1", "-n2", "--time=2", "--job-name=hpcds-rank-peak",
                      hpcds1mpi_exe(), "sweep", "--command", "./holder", "--label", "holder",
                      "--sizes", "1", "--ranks-per-node", "2", "--launcher", "srun", "--mpi",
                      "pmi2", "--ranks-regex", r"ranks (\d+)", "--max-repeats", "1",
                      "--warmup", "0", "--out", str(out), "--no-progress"],
                     timeout=60, check=False, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    run = read_runs(out).iloc[0]
    assert run["status"] == "ok", run[["status", "error"]].to_dict()
    assert 64 < run["peak_rss_mb"] < 120, run[["peak_rss_mb", "peak_rss_source"]].to_dict()
    assert run["peak_rss_source"].startswith("rank wrapper under srun"), run["peak_rss_source"]
    assert run["command"].endswith(" ./holder") and WRAPPER not in run["command"]  # as given


def _held_python(tmp_path, mb: int, hold_s: float) -> str:
    """A program (no MPI) that holds ``mb`` MB for ``hold_s`` seconds."""
    app = tmp_path / "held.py"
    app.write_text(f"import time\nheld = b'x' * ({mb} * 2**20)\ntime.sleep({hold_s})\n"
                   "print('held')\n")
    return f"/usr/bin/python3 {app}"


@pytest.mark.slurm
def test_a_rank_under_open_mpi_s_daemon_in_an_allocation_has_its_own_peak(slurm, tmp_path):
    """Before (s38 tester A5): inside an allocation Open MPI's mpirun starts its orted through
    srun, and sacct's MaxRSS of that task is the daemon's ~15 MB added to the rank's (dgord: 58
    MB for its 38), or none for a step shorter than Slurm's first sample; now the rank's own."""
    from hpcds1mpi.records.telemetry import read_runs
    from tests.helpers import hpcds1mpi_exe, system_program

    mpirun = system_program("mpirun.openmpi")
    own = subprocess.run(["/usr/bin/time", "-f", "%M", *_held_python(tmp_path, 60, 0).split()],
                         capture_output=True, text=True, timeout=30)
    own_mb = int(own.stderr.split()[-1]) / 1024 if own.returncode == 0 else 70.0
    out = tmp_path / "held.h5"
    # held past Slurm's 1 s sampling here, so the old read had the daemon's task's MaxRSS
    proc = slurm.cmd(["salloc", "-N2", "--ntasks-per-node=1", "--time=2",
                      "--job-name=hpcds-orted-peak", hpcds1mpi_exe(), "sweep", "--command",
                      _held_python(tmp_path, 60, 1.5), "--label", "held", "--sizes", "1",
                      "--nodes", "1", "--ranks-per-node", "1", "--mpiexec", mpirun,
                      "--max-repeats", "1", "--warmup", "0", "--out", str(out), "--no-progress"],
                     timeout=60, check=False, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    run = read_runs(out).iloc[0]
    assert run["status"] == "ok", run[["status", "error"]].to_dict()
    assert abs(run["peak_rss_mb"] - own_mb) < 4, (own_mb, run[["peak_rss_mb", "peak_rss_source"]]
                                                  .to_dict())
    assert run["peak_rss_source"].startswith("rank wrapper under mpirun.openmpi"), run[
        "peak_rss_source"]
    assert WRAPPER not in run["command"] and run["command"].startswith(mpirun)  # as given
    assert "hpcds1mpi-rank-peak" not in proc.stderr


@pytest.mark.slurm
def test_a_python_the_nodes_cannot_start_leaves_the_ranks_unwrapped(slurm, monkeypatch):
    """s38 review 1a: with the sweep's Python not on the compute nodes every wrapped launch
    failed; the wrapper is now asked once of the nodes and left out where it cannot start."""
    from hpcds1mpi.measure import rank_peak

    said: list[str] = []
    assert rank_peak.unreachable(1) == ""
    assert rank_peak.wrapping("srun", False, 1, said.append) and not said
    monkeypatch.setattr(rank_peak.sys, "executable", "/nonexistent/venv/bin/python3")
    assert "failed" in rank_peak.unreachable(1)
    assert not rank_peak.wrapping("srun", False, 1, said.append)
    assert len(said) == 1 and "without their peak's wrapper" in said[0]


def test_the_wrapper_can_be_turned_off(monkeypatch):
    from hpcds1mpi.measure import rank_peak

    monkeypatch.setenv(rank_peak.SWITCH, "0")
    assert rank_peak.unreachable(4) == f"{rank_peak.SWITCH}=0"
    assert not rank_peak.wrapping("mpirun", True, 4)
    assert not rank_peak.wrapping("mpiexec", False, 1)  # outside an allocation: never asked
