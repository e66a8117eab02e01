"""Ranks that each start a job of their own stop the sweep (s38 tester A6: ``abyss-pe np=2``,
a make driver running its own ``mpirun``, ran as 2 copies and failed on a missing file)."""

from __future__ import annotations

import pytest

from hpcds1mpi.errors import LaunchError
from hpcds1mpi.measure.rank_copies import check_rank_copies
from hpcds1mpi.records import telemetry
from tests.helpers import executable_script, mpiexec, run_cli

pytestmark = pytest.mark.mpi


def _driver(folder, launch: str) -> str:
    """A make driver (no shell script: its text is not read) whose recipe runs ``launch``."""
    return executable_script(folder, "drv.mk", "#!/usr/bin/make -rRf\nnp ?= 1\nall:\n"
                             f"\t{launch} > out-$(np).txt\n\tcat out-$(np).txt\n")


def _sweep(tmp_path, ranks: str):
    return run_cli(["sweep", "--command", "./drv.mk np={ranks}", "--label", "drv", "--sizes",
                    "1", "--ranks-per-node", ranks, "--threads", "1", "--mpiexec", mpiexec(),
                    "--min-repeats", "1", "--max-repeats", "1", "--warmup", "0", "--out",
                    "d.h5", "--no-progress"], cwd=tmp_path, timeout=120)


def test_ranks_that_each_start_a_job_stop_the_sweep_naming_the_launcher_line(tmp_path):
    _driver(tmp_path, f"{mpiexec()} -n $(np) sleep 0.3")
    proc = _sweep(tmp_path, "1,2")
    assert proc.returncode != 0
    line = proc.stderr.strip().splitlines()[-1]
    assert "N1xR2xT1" in line and "its ranks each started a launcher of their own" in line
    assert "-n 2 sleep 0.3" in line and "2 copies of that job" in line, line
    runs = telemetry.read_runs(str(tmp_path / "d.h5"))
    # the 1-rank run is the driver's one job: measured and kept
    assert list(runs["ranks_per_node"]) == [1] and list(runs["status"]) == ["ok"]


def test_a_launcher_only_asked_its_version_is_no_job(tmp_path):
    _driver(tmp_path, f"{mpiexec()} --version >/dev/null; sleep 0.3; echo")
    proc = _sweep(tmp_path, "2")
    assert proc.returncode == 0, proc.stderr
    assert list(telemetry.read_runs(str(tmp_path / "d.h5"))["status"]) == ["ok"]


@pytest.mark.parametrize("ranks, seen", [(1, "mpirun -np 2 app"), (2, ""), (4, "")])
def test_one_rank_or_no_launcher_seen_passes(ranks, seen):
    check_rank_copies({"ranks": ranks, "rank_launcher": seen}, "x")


def test_the_refusal_is_one_line_with_the_fix():
    with pytest.raises(LaunchError) as caught:
        check_rank_copies({"ranks": 3, "rank_launcher": "mpirun -np 3\napp"}, "w size 1")
    text = str(caught.value)
    assert "\n" not in text and "3 copies" in text and "--ranks-per-node 1" in text


class _Proc:
    """A process as the sampler reads it: its pid and command line."""

    def __init__(self, pid: int, argv: list[str]):
        self.pid, self._argv = pid, argv

    def cmdline(self) -> list[str]:
        return self._argv


@pytest.mark.parametrize("exe, argv, seen", [
    ("mpiexec.hydra", ["/usr/bin/mpiexec", "-n", "2", "./app"], True),
    ("bash", ["bash", "/opt/intel/bin/mpirun", "-np", "2", "./app"], True),
    ("srun", ["srun", "--ntasks=2", "./app"], True),
    # a tool that names the launcher's file starts no job (the review of s39: the sweep
    # stopped 2 times in 3 on a driver's `sha256sum "$MPI_BIN/mpiexec"`)
    ("sha256sum", ["sha256sum", "/usr/bin/mpiexec"], False),
    ("ldd", ["ldd", "/usr/bin/mpirun", "-n"], False),
    ("mpiexec.hydra", ["/usr/bin/mpiexec", "--version"], False),
    ("mpiexec.hydra", ["/usr/bin/mpiexec", "-info"], False),
])
def test_only_a_launcher_line_that_starts_processes_is_a_job(exe, argv, seen):
    from hpcds1mpi.measure.launch_tree import LAUNCHER, TreeSampler

    sampler = TreeSampler(2**22 + 7, set()).stop()  # no such process: nothing sampled
    sampler._program_pids = {10}
    sampler._find_rank_launcher([_Proc(11, argv)], {11: 10}, {11: LAUNCHER}, {11: exe})
    assert bool(sampler.rank_launcher) is seen
