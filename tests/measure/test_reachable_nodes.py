"""A program sweep asking more nodes than its launcher reaches is refused before it launches
(:mod:`hpcds1mpi.measure.reachable_nodes`; real launchers, real sweeps on this machine)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from hpcds1mpi.errors import ConfigError
from hpcds1mpi.launch import launchers
from hpcds1mpi.measure.external_plan import build_external_plan
from hpcds1mpi.measure.reachable_nodes import check_nodes_reachable, reachable_nodes
from tests.helpers import hpcds1mpi_exe, system_program

#: Variables that place a process in a batch job (or give an mpiexec hosts): none of the
#: test's own, so the sweep runs as on a workstation.
_BATCH_PREFIXES = ("SLURM_", "PBS_", "LSB_", "HYDRA_", "OMPI_MCA_", "PRTE_MCA_", "PE_HOSTFILE",
                   "COBALT_")


def _outside_any_allocation() -> dict:
    return {k: v for k, v in os.environ.items() if not k.startswith(_BATCH_PREFIXES)}


def test_the_nodes_a_launcher_reaches_are_read_from_where_it_runs(tmp_path):
    hydra = launchers.HydraMpiexec("mpiexec", ())
    srun = launchers.Srun("pmi2", ())
    here = {"PATH": "/usr/bin"}
    assert reachable_nodes(hydra, here) == (1, "this machine, outside any allocation, is")
    assert reachable_nodes(srun, here) is None  # srun asks Slurm for its own nodes
    slurm = {**here, "SLURM_JOB_ID": "77", "SLURM_JOB_NUM_NODES": "3"}
    for launch in (hydra, srun):
        assert reachable_nodes(launch, slurm) == (3, "this Slurm allocation (77) has")
    assert reachable_nodes(hydra, {**here, "SLURM_JOB_ID": "77"}) is None  # no count: not told
    with pytest.raises(ConfigError, match="SLURM_JOB_NUM_NODES='x' is no node count"):
        reachable_nodes(hydra, {**slurm, "SLURM_JOB_NUM_NODES": "x"})
    for args in (("--hostfile", "hosts"), ("-H", "a,b"), ("--host=a,b",), ("-f", "hosts"),
                 ("-machinefile", "m")):  # hosts given: not told here
        assert reachable_nodes(launchers.HydraMpiexec("mpiexec", args), here) is None, args
    assert reachable_nodes(launchers.HydraMpiexec("mpiexec", ("--bind-to", "core")),
                           here)[0] == 1
    assert reachable_nodes(hydra, {**here, "HYDRA_HOST_FILE": "/h"}) is None
    nodefile = tmp_path / "nodes"
    nodefile.write_text("a\na\nb\nb\n")  # a PBS job of 2 hosts x 2 slots
    assert reachable_nodes(hydra, {**here, "PBS_NODEFILE": str(nodefile)}) == \
        (2, "this PBS job has")


def test_a_plan_on_more_nodes_than_reached_is_one_line_naming_what_to_do():
    hydra = launchers.HydraMpiexec("mpiexec", ())
    here = {"PATH": "/usr/bin"}

    def plan(nodes):
        return build_external_plan("./app {size}", "app", sizes="8", nodes=nodes)

    check_nodes_reachable(plan("1"), hydra, here)  # fits: nothing said
    check_nodes_reachable(plan("4"), launchers.Srun("pmi2", ()), here)  # srun's own: not told
    with pytest.raises(ConfigError) as caught:
        check_nodes_reachable(plan("2"), hydra, here)
    assert str(caught.value) == (
        "--nodes 2 asks for 2 nodes but this machine, outside any allocation, is 1 node: run "
        "the sweep inside `salloc -N 2` (or your cluster's allocation of 2 nodes), or drop "
        "--nodes 2")
    with pytest.raises(ConfigError, match=r"this Slurm allocation \(9\) has 2 nodes: run the "
                       r"sweep inside `salloc -N 4` .*, or sweep --nodes 1,2 only$"):
        check_nodes_reachable(plan("1,2,4"), hydra,
                              {**here, "SLURM_JOB_ID": "9", "SLURM_NNODES": "2"})


@pytest.mark.mpi
def test_a_two_node_sweep_on_one_machine_is_refused_before_anything_launches(tmp_path):
    """s29 tester A8: ``sweep --command "simpleFoam -parallel" --nodes 2 --ranks-per-node 1
    --mpiexec /usr/bin/mpirun.openmpi`` on one machine outside any allocation launched, and
    every run failed with Open MPI's "more processes than the ppr" (hydra would have run both
    "nodes" here and recorded them as two)."""
    mpirun = system_program("mpirun.openmpi")
    app = tmp_path / "app.py"
    app.write_text("import sys\nprint('size', sys.argv[1])\n")
    out = tmp_path / "two.h5"
    proc = subprocess.run(
        [hpcds1mpi_exe(), "sweep", "--command", f"{sys.executable} {app} {{size}}",
         "--sizes", "3122", "--nodes", "2", "--ranks-per-node", "1", "--mpiexec", mpirun,
         "--out", str(out), "--no-progress", "--max-repeats", "1"],
        env=_outside_any_allocation(), capture_output=True, text=True, timeout=120,
        cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == (
        "hpcds1mpi: error: --nodes 2 asks for 2 nodes but this machine, outside any "
        "allocation, is 1 node: run the sweep inside `salloc -N 2` (or your cluster's "
        "allocation of 2 nodes), or drop --nodes 2")
    assert "launch probe" not in proc.stderr and not out.exists()  # nothing launched
