"""The note of a PBS script for a program swept under srun (:mod:`hpcds1mpi.launch.srun_swept`;
s42 tester E: its bare ``mpiexec`` came with no word of which MPI it needs)."""

from __future__ import annotations

from hpcds1mpi.cluster import Cluster
from hpcds1mpi.launch.script_launcher import measured_cluster
from hpcds1mpi.launch.srun_swept import srun_swept_mpiexec
from tests.helpers import system_program

SRUN = {"launcher": "srun", "command": "srun", "args": [], "mpi": "pmix", "flavour": "Srun"}


def test_a_pbs_script_of_an_srun_sweep_names_the_programs_mpi():
    app = system_program("hpcc")  # Debian's, linked against Open MPI
    site = Cluster("lab")
    cluster, note = measured_cluster(site, "pbs", SRUN, f"{app} {{size}}")
    assert cluster is site  # still the bare mpiexec: a PBS job has no srun
    assert note.startswith("launches with the bare mpiexec the job's PATH finds: the "
                           "program's sweep ran it with srun --mpi=pmix only, which a PBS job "
                           "does not have, so that mpiexec must be Open MPI's (links "
                           "libmpi.so.40)"), note
    assert 'set launcher = "mpiexec" and mpiexec = its path in a --cluster file' in note


def test_an_unread_programs_note_says_its_mpi_is_not_read(tmp_path):
    app = tmp_path / "app"
    app.write_text("#!/bin/sh\nif true; then \"$X\" \"$@\"; fi\n")
    app.chmod(0o755)
    note = srun_swept_mpiexec("pbs", "", f"{app} in.bf")
    assert "sweep ran it with srun only" in note
    assert "must be the one of the MPI the program was built with (not read here: " in note
    assert "its MPI cannot be read" in note
