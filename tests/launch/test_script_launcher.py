"""The launcher a job script writes: the cluster file's, else the program's sweep's
(s29 tester B4), and the one-line refusal of one that cannot start the program."""

from __future__ import annotations

import sys

from hpcds1mpi.cluster import Cluster
from hpcds1mpi.config import Configuration
from hpcds1mpi.launch.launchers import for_script
from hpcds1mpi.launch.script_launcher import measured_cluster, names_launcher

HERE = sys.executable  # a file that exists here, standing for an mpiexec path
MPIEXEC = {"launcher": "mpiexec", "command": HERE, "flavour": "HydraMpiexec",
           "args": ["-bind-to", "none"], "mpi": ""}


def test_an_mpiexec_the_sweep_used_is_written_by_its_path_with_its_options():
    cluster, note = measured_cluster(Cluster("lab"), "slurm", MPIEXEC)
    launcher = for_script("slurm", cluster, 2)
    assert launcher.tokens(Configuration(1, 1, 1))[0] == HERE
    assert cluster.launcher_args == "-bind-to none"
    assert note.startswith(f"launches with {HERE}, the mpiexec the program's sweep ran it with")
    none_given, note = measured_cluster(None, "pbs", MPIEXEC)  # no cluster at all
    assert none_given.mpiexec == HERE and note


def test_a_cluster_that_names_a_launcher_wins():
    for site in (Cluster("lab", launcher="srun"), Cluster("lab", mpi="pmix"),
                 Cluster("lab", mpiexec="/opt/mpi/bin/mpirun")):
        assert names_launcher(site)
        assert measured_cluster(site, "slurm", MPIEXEC) == (site, None)
    assert not names_launcher(Cluster("lab")) and not names_launcher(None)


def test_srun_keeps_its_mpi_under_slurm_only_and_an_absent_path_changes_nothing():
    srun = {"launcher": "srun", "command": "srun", "args": [], "mpi": "pmix", "flavour": "Srun"}
    cluster, note = measured_cluster(Cluster("lab"), "slurm", srun)
    assert cluster.mpi == "pmix" and "srun --mpi=pmix" in note
    site = Cluster("lab")
    assert measured_cluster(site, "pbs", srun) == (site, None)  # a PBS job has no srun
    gone = {**MPIEXEC, "command": "/nonexistent/bin/mpirun"}
    assert measured_cluster(site, "slurm", gone) == (site, None)
    assert measured_cluster(site, "slurm", None) == (site, None)
