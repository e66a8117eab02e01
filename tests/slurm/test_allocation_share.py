"""Inside a partial-node allocation, ``cluster`` (and every command that detects the
allocation: recommend, advise, the API) describes the allocation's share of a node, as
``tune`` sizes itself: a script written there must run there."""

from __future__ import annotations

import json

import pytest

from tests.helpers import hpcds1mpi_exe

pytestmark = pytest.mark.slurm


@pytest.mark.parametrize("salloc, cores, nodes, memory_gb", [
    (["-c", "1"], 1, 1, 4.0),
    (["-N", "2"], 1, 2, 4.0),
    (["-N", "1", "-n", "2"], 2, 1, 4.0),
    (["-c", "1", "--mem=1000"], 1, 1, 1.0),
])
def test_cluster_in_an_allocation_reports_its_share(slurm, tmp_path, salloc, cores, nodes,
                                                   memory_gb):
    """Was: cores_per_node 2 (the node's CPUTot) in every one of them."""
    proc = slurm.cmd(["salloc", *salloc, "--time=2", "--job-name=hpcds-share", hpcds1mpi_exe(),
                      "cluster", "--json"], timeout=90, check=False, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    part = json.loads(proc.stdout)[0]["partition"]
    assert (part["cores_per_node"], part["max_nodes"]) == (cores, nodes), part
    assert part["memory_gb"] == memory_gb and part["name"] == "debug"
