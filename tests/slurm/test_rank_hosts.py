"""A legitimate two-node program sweep on the real test Slurm is still recorded as 2 nodes,
where the node count is told (inside ``salloc -N 2``) and where it is not and the host probe
(:mod:`hpcds1mpi.launch.rank_hosts`, s35 tester X2) finds the ranks on two nodes."""

from __future__ import annotations

import os
import sys

import pytest

from tests.helpers import hpcds1mpi_exe

pytestmark = pytest.mark.slurm

#: A program of the wheel's MPICH that says its ranks and the Slurm nodes they ran on.
APP = """import os
from mpi4py import MPI
nodes = MPI.COMM_WORLD.gather(os.environ.get("SLURMD_NODENAME", "none"), 0)
if MPI.COMM_WORLD.rank == 0:
    print("ranks:", MPI.COMM_WORLD.size, "nodes:", ",".join(sorted(set(nodes))))
"""


def _sweep(slurm, tmp_path, head: list[str], *launch: str):
    from hpcds1mpi.records.telemetry import read_runs

    (tmp_path / "app.py").write_text(APP)
    out = tmp_path / "two.h5"
    proc = slurm.cmd([*head, hpcds1mpi_exe(), "sweep", "--command",
                      f"{sys.executable} {tmp_path / 'app.py'}", "--label", "app", "--sizes",
                      "1", "--nodes", "2", "--ranks-per-node", "1", "--ranks-regex",
                      r"ranks: (\d+)", "--max-repeats", "1", "--out", str(out),
                      "--no-progress", *launch], timeout=240, check=False, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    runs = read_runs(out)
    assert list(runs["status"]) == ["ok"] and list(runs["nodes"]) == [2], runs.to_dict("records")
    return proc


def test_srun_in_a_two_node_allocation_is_recorded_as_two_nodes_without_a_host_probe(
        slurm, tmp_path):
    proc = _sweep(slurm, tmp_path, ["salloc", "-N2", "--time=3", "--job-name=hpcds-x2-srun"],
                  "--launcher", "srun", "--mpi", "pmi2")
    assert "node launch probe" not in proc.stderr  # the allocation tells the node count


def test_hydra_given_slurms_hosts_outside_an_allocation_passes_the_host_probe(slurm, tmp_path):
    """The node count is not told (the hosts are hydra's options); its ranks land on n1 and
    n2, so the 2-node run is measured and recorded as 2 nodes."""
    env_names = [k for k in os.environ if k.startswith("SLURM_") and k != "SLURM_CONF"]
    proc = _sweep(slurm, tmp_path, ["env", *(f"-u{k}" for k in env_names)],
                  "--launcher-args", "-launcher slurm -hosts n1,n2")
    here = os.uname().nodename
    assert (f"hpcds1mpi sweep: 2-node launch probe: its ranks landed on 2 hosts (n1 on {here}, "
            f"n2 on {here}); the launcher's host options left the node count to the launcher"
            ) in proc.stderr.splitlines(), proc.stderr


def test_a_node_count_that_landed_is_asked_once_per_process(slurm, tmp_path):
    """tune --program sweeps once per trial: one host probe per node count, not per trial."""
    from hpcds1mpi.launch import launchers
    from hpcds1mpi.measure.external_plan import build_external_plan
    from hpcds1mpi.measure.reachable_nodes import check_nodes_landed
    from tests.helpers import mpiexec

    env = {k: v for k, v in slurm.env.items() if not k.startswith("SLURM_") or
           k == "SLURM_CONF"}
    hydra = launchers.HydraMpiexec(mpiexec(), ("-launcher", "slurm", "-hosts", "n1,n2"))
    plan = build_external_plan("./app {size}", "app", sizes="8", nodes="1,2")
    first = check_nodes_landed(plan, hydra, env, cwd_of=lambda spec: str(tmp_path))
    again = check_nodes_landed(plan, hydra, env, cwd_of=lambda spec: str(tmp_path))
    assert len(first) == 1 and first[0].startswith("2-node launch probe: its ranks landed on "
                                                   "2 hosts (n1 on ")
    assert again == [f"{first[0]} (checked earlier in this run)"]


#: The tester's allocation (s36 M0): two nodes of one task each, 2 cpus per task.
ONE_TASK_PER_NODE = ["salloc", "-N2", "--ntasks-per-node=1", "-c", "2", "--time=3"]


def test_a_one_node_configuration_under_mpiexec_runs_on_one_node_of_a_wider_allocation(
        slurm, tmp_path):
    """s36 tester M0: in ``salloc -N2 --ntasks-per-node=1 -c 2`` hydra ran a 1-node x 2-rank
    configuration one rank per node (it fills the allocation's slots), stored as 1 node."""
    from hpcds1mpi.records.telemetry import read_runs

    where = tmp_path / "where"
    (tmp_path / "app.py").write_text(APP.replace(
        'print("ranks:"', f'open({str(where)!r}, "a").write(",".join(sorted(set(nodes))) + '
        '"\\n")\n    print("ranks:"'))
    out = tmp_path / "one.h5"
    proc = slurm.cmd([*ONE_TASK_PER_NODE, "--job-name=hpcds-m0", hpcds1mpi_exe(), "sweep",
                      "--command", f"{sys.executable} {tmp_path / 'app.py'}", "--label", "app",
                      "--sizes", "1", "--nodes", "1", "--ranks-per-node", "2", "--ranks-regex",
                      r"ranks: (\d+)", "--max-repeats", "1", "--out", str(out), "--no-progress",
                      "--launcher", "mpiexec"], timeout=240, check=False, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert where.read_text().split() == ["n1"]  # was "n1,n2": one rank on each node
    runs = read_runs(out)
    assert list(runs["nodes"]) == [1] and list(runs["ranks_per_node"]) == [2]
    assert any(line.startswith("hpcds1mpi sweep: 1-node x 2-rank launch probe: its ranks "
                               "landed on 1 host (n1 on ") for line in proc.stderr.splitlines())


def test_a_layout_that_lands_elsewhere_in_an_allocation_is_refused_before_any_run(slurm,
                                                                                  tmp_path):
    """The landing probe itself: hydra not given -ppn (as the sweep launched it before s36
    tester M0) spreads 1 node x 2 ranks over the allocation's two nodes: refused."""
    code = ("import sys\nfrom hpcds1mpi.launch import launchers\n"
            "from hpcds1mpi.measure.external_plan import build_external_plan\n"
            "from hpcds1mpi.measure.reachable_nodes import check_nodes_landed\n"
            "from tests.helpers import mpiexec\n"
            "plan = build_external_plan('./app {size}', 'app', sizes='8', nodes='1,2', "
            "ranks_per_node='1,2')\n"
            "for hold in (True, False):\n"
            "    try:\n"
            "        print(*check_nodes_landed(plan, launchers.HydraMpiexec(mpiexec(), (), hold)),"
            " sep=' | ')\n"
            "    except Exception as exc:\n"
            "        print(type(exc).__name__, exc)\n")
    proc = slurm.cmd([*ONE_TASK_PER_NODE, "--job-name=hpcds-m0-probe", sys.executable, "-c",
                      code], timeout=240, check=False, cwd=os.getcwd())
    held, spread = proc.stdout.strip().splitlines()[-2:]
    here = os.uname().nodename
    assert held.startswith(f"1-node x 2-rank launch probe: its ranks landed on 1 host (n1 on "
                           f"{here}: 2); this Slurm allocation ("), proc.stdout + proc.stderr
    assert [line.split(":")[0] for line in held.split(" | ")] == [
        "1-node x 2-rank launch probe", "2-node launch probe", "2-node x 2-rank launch probe"]
    assert spread.startswith("ConfigError --nodes 1 --ranks-per-node 2: a launch of 2 ranks, 2 "
                             f"per node, landed on 2 hosts (n1 on {here}: 1, n2 on {here}: 1); "
                             "this Slurm allocation (")
    assert spread.endswith("has 2 nodes, so nothing is recorded as 1 node x 2 ranks: launch "
                           "with srun inside the Slurm allocation (--launcher srun), which "
                           "places the ranks as asked")  # no options given: none to drop
