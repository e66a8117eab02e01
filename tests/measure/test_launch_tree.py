"""The memory and CPU time of the program's ranks, never its launcher's (s28 tester U, U1)."""

from __future__ import annotations

import math
import os
import shutil
import sys

import pytest

from hpcds1mpi.measure.program_launch import launch_once
from hpcds1mpi.measure.ranks_usage import SAMPLED

#: A launcher of 150 MB that runs its arguments as its child.
BIG_LAUNCHER = ("import subprocess, sys\nheld = b'x' * (150 * 2**20)\n"
                "sys.exit(subprocess.call(sys.argv[1:]))\n")
#: The same launcher, slow to ``exec`` its fork: the fork holds the launcher's 150 MB meanwhile.
SLOW_EXEC_LAUNCHER = ("import os, sys, time\nheld = b'x' * (150 * 2**20)\npid = os.fork()\n"
                      "if pid == 0:\n    time.sleep(0.3)\n    os.execvp(sys.argv[1], sys.argv[1:])\n"
                      "sys.exit(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))\n")
#: An srun stand-in: the program runs out of the launch's process tree (as under slurmstepd).
#: It starts once ``setsid -f``'s parent has exited: a program exec'd before that is still in
#: the tree for a moment, as no real rank under slurmstepd is (s30 flake hunt).
DETACHING_SRUN = ("#!/bin/sh\nsetsid -f sh -c 'sleep 0.2; exec \"$@\"' sh \"$@\" >/dev/null 2>&1\n"
                  "sleep 1.2\n")
#: A program of 60 MB that runs 0.6 s.
PROGRAM = "import time\nheld = b'x' * (60 * 2**20)\ntime.sleep(0.6)\n"


def test_the_peak_is_the_programs_not_the_launchers(tmp_path):
    """Was: the largest process of the launch (here the 150 MB launcher) was the program's."""
    app = tmp_path / "app.py"
    app.write_text(PROGRAM.replace("60 *", "20 *"))
    result = launch_once([sys.executable, "-c", BIG_LAUNCHER, "sh", "-c",
                          f"exec {sys.executable} {app}"], {}, 60, program="sh")
    assert result["exit_code"] == 0
    assert 15 < result["rss_mb"] < 100, result  # the program (under its sh wrapper): ~30 MB
    assert result["rss_source"] == SAMPLED and result["cpu_s"] > 0


def test_a_launchers_fork_before_its_exec_is_not_the_program(tmp_path):
    """Was (CI, a fast machine): the launcher's fork, sampled before its exec, was recorded as
    the program's peak: 161 MB for a 20 MB program."""
    app = tmp_path / "app.py"
    app.write_text(PROGRAM.replace("60 *", "20 *"))
    result = launch_once([sys.executable, "-c", SLOW_EXEC_LAUNCHER, "sh", "-c",
                          f"exec {sys.executable} {app}"], {}, 60, program="sh")
    assert result["exit_code"] == 0
    assert 15 < result["rss_mb"] < 100, result


def test_a_launchers_fork_that_execs_the_launchers_own_executable_is_the_program(tmp_path):
    """The fork's command line changes at its exec, its executable does not (a Python
    launcher starting ``python app.py``): the fork is the launcher's, the exec'd the program's."""
    app = tmp_path / "app.py"
    app.write_text(PROGRAM.replace("60 *", "20 *"))
    result = launch_once([sys.executable, "-c", SLOW_EXEC_LAUNCHER, sys.executable, str(app)],
                         {}, 60, program=str(app))
    assert result["exit_code"] == 0
    assert 15 < result["rss_mb"] < 100, result


def test_a_ranks_command_line_is_read_until_its_exec_not_every_sample(monkeypatch):
    """Was (s31 review M4): each sample read the command lines of every rank with its
    launcher's executable and of the launcher, for as long as the rank ran."""
    import subprocess
    import time

    import psutil

    from hpcds1mpi.measure.launch_tree import TreeSampler

    reads: dict[int, int] = {}
    cmdline = psutil.Process.cmdline

    def counted(proc):
        reads[proc.pid] = reads.get(proc.pid, 0) + 1
        return cmdline(proc)

    monkeypatch.setattr(psutil.Process, "cmdline", counted)
    rank = "import time; time.sleep(1)"
    root = subprocess.Popen([sys.executable, "-c", "import subprocess, sys; subprocess.run("
                             f"[sys.executable, '-c', {rank!r}])"])
    try:
        sampler = TreeSampler(root.pid, {"app"})
        time.sleep(0.8)
        ranks = [p.pid for p in psutil.Process(root.pid).children()]
        sampler.stop()
    finally:
        root.wait(10)
    assert ranks and sampler.program_seen
    assert all(reads.get(pid, 0) <= 3 for pid in ranks), (ranks, reads)


def test_a_fork_of_a_launcher_of_no_known_name_is_not_the_program(tmp_path):
    """A root the sampler does not know as a launcher makes its children ranks; its fork
    before the exec (a bash subshell holding 150 MB) was one too (s30 review)."""
    app = tmp_path / "app.py"
    app.write_text(PROGRAM.replace("60 *", "20 *"))
    site = ("big=$(head -c 150000000 /dev/zero | tr '\\0' a); "
            "( sleep 0.3; exec \"$0\" \"$@\" ); echo ${#big} > /dev/null")
    result = launch_once(["bash", "-c", site, sys.executable, str(app)], {}, 60,
                         program=sys.executable)
    assert result["exit_code"] == 0
    assert 15 < result["rss_mb"] < 100, result


@pytest.mark.skipif(shutil.which("setsid") is None, reason="no setsid here")
def test_ranks_that_ran_out_of_the_launch_are_not_measured_as_the_launcher(tmp_path):
    """Was: srun's own memory and CPU time (the ranks ran under slurmstepd, out of sight) were
    recorded as the program's: 13 MB and 0.09 s for ABINIT's 64 MB ranks."""
    srun = tmp_path / "srun"
    srun.write_text(DETACHING_SRUN)
    srun.chmod(0o755)
    app = tmp_path / "app.py"
    app.write_text(PROGRAM)
    result = launch_once([str(srun), "--mpi=pmi2", sys.executable, str(app)], {}, 60,
                         program=sys.executable)
    assert result["exit_code"] == 0
    assert math.isnan(result["rss_mb"]) and math.isnan(result["cpu_s"]), result
    assert result["rss_source"].startswith(
        "not measured: the ranks ran under slurmstepd (started through srun), not under the "
        "launch; not inside an allocation"), result["rss_source"]


#: A wrapper ``run.sh`` that ends in ``exec``, as the refusal of ``&&`` in --command advises:
#: its rank runs a program of another name, 100 MB for 1.5 s (s29 tester A3).
# The program by a variable: the venv's Python (its mpi4py is MPICH's) named outright would be
# refused under Open MPI's mpirun, as the wrapper's program is read now (s29 tester E1).
EXEC_WRAPPER = ("#!/bin/sh\nexec \"$PY\" -c \"import time; held = b'x' * (100 * 2**20); "
                "time.sleep(1.5)\"\n")


@pytest.mark.parametrize("ranks", [1, 2])
def test_a_wrapper_that_execs_its_program_is_measured_as_the_program(tmp_path, ranks):
    """Was (s29 tester A3): ranks were judged by name once per (pid, executable); after
    ``exec simpleFoam`` a rank of ``foam.sh`` was no process of the program: 1 rank gave
    memory and CPU NaN ("no process of the program was seen"), 2 ranks 0.016 MB (the shell)."""
    import subprocess

    from hpcds1mpi.records import telemetry
    from tests.helpers import hpcds1mpi_exe, system_program

    mpirun = system_program("mpirun.openmpi")
    wrapper = tmp_path / "run.sh"
    wrapper.write_text(EXEC_WRAPPER)
    wrapper.chmod(0o755)
    env = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_rmaps_base_oversubscribe": "1", "PY": sys.executable}
    env.pop("SLURM_JOB_ID", None)
    out = tmp_path / "t.h5"
    proc = subprocess.run(
        [hpcds1mpi_exe(), "sweep", "--command", f"{wrapper} {{size}}", "--label", "app",
         "--sizes", "1", "--nodes", "1", "--ranks-per-node", str(ranks), "--threads", "1",
         "--mpiexec", mpirun, "--min-repeats", "1", "--max-repeats", "1", "--min-time", "0",
         "--no-progress", "--out", str(out)],
        capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    row = telemetry.read_runs(out).iloc[0]
    assert row["status"] == "ok", row["error"]
    assert row["peak_rss_source"] == SAMPLED, row["peak_rss_source"]
    assert 100 < row["peak_rss_mb"] < 200 and row["cpu_s"] > 0, (row["peak_rss_mb"],
                                                                 row["cpu_s"])
