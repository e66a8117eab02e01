"""The tests against the real two-node test Slurm, and what they share."""

import sys
import textwrap
from pathlib import Path

VENV_BIN = str(Path(sys.executable).parent)
#: The cluster file of the test Slurm (scripts/slurm-up: nodes n1, n2 with 2 CPUs and 4000 MB
#: each), the jobs finding this venv's hpcds1mpi first on their PATH.
CLUSTER_TOML = textwrap.dedent(f"""\
    [clusters.hpcds1mpi]
    preamble = ["export PATH={VENV_BIN}:$PATH"]

    [clusters.hpcds1mpi.partitions.debug]
    cores_per_node = 2
    memory_gb = 4
    max_nodes = 2
""")
