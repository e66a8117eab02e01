"""A bundle's machine id that an older hpcds1mpi took from the launcher is found to be the new
runs' machine: same hardware, partition and MPI version (s34 tester O4)."""

from __future__ import annotations

from hpcds1mpi.measure.launcher_fingerprints import launcher_fingerprinted, launcher_lines
from tests.measure.test_same_machine import this_machine


def test_an_mpich_launcher_fingerprint_is_the_same_machine():
    old = this_machine("local", "mpiexec Version: 5.0.2")  # what v2's program sweep wrote
    new = this_machine("local", "MPICH Version: 5.0.2")
    found = launcher_fingerprinted({new["machine_id"]: new}, {old["machine_id"]}, ["local"])
    assert found == {new["machine_id"]: (old["machine_id"], "mpiexec Version: 5.0.2",
                                         "MPICH Version: 5.0.2")}


def test_an_open_mpi_launcher_under_another_partition_name_is_the_same_machine():
    old = this_machine("local", "mpirun mpirun (Open MPI) 4.1.4")
    new = this_machine("debug", "Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4")
    found = launcher_fingerprinted({new["machine_id"]: new}, {old["machine_id"]}, ["local"])
    assert found[new["machine_id"]][:2] == (old["machine_id"], "mpirun mpirun (Open MPI) 4.1.4")


def test_another_version_or_other_hardware_stays_another_machine():
    old = this_machine("local", "mpiexec Version: 5.0.2")
    newer = this_machine("local", "MPICH Version: 5.0.3")
    bigger = {**this_machine("local", "MPICH Version: 5.0.2"), "physical_cores": 64}
    bigger["machine_id"] = "b" * 16
    for row in (newer, bigger):
        assert launcher_fingerprinted({row["machine_id"]: row}, {old["machine_id"]},
                                      ["local"]) == {}
    assert launcher_lines("") == ["unknown"]
