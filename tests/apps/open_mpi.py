"""What the tests of Debian's Open MPI applications (hpcc, LAMMPS) share: the site file naming
Open MPI's mpirun for this machine, and the check of how a sweep's runs were launched and timed."""

from __future__ import annotations


def openmpi_site(folder, openmpi: str):
    """A cluster file for this machine (the one the bundle was trained on) whose launcher is
    Open MPI's ``openmpi`` mpirun; its path."""
    from hpcds1mpi.cluster import detect_local

    here = detect_local().partition()
    site = folder / "site.toml"
    site.write_text(f'[cluster]\nname = "vm"\nlauncher = "mpirun"\nmpiexec = "{openmpi}"\n'
                    f'[partitions.local]\ncores_per_node = {here.cores_per_node}\n'
                    f'memory_gb = {here.memory_gb}\n')
    return site


def assert_launched_by_open_mpi_timed_by_itself(telemetry_file, ranks_regex: str) -> None:
    """The file records that its runs were launched by Open MPI's mpirun, timed by the
    program's own clock and their ranks checked with ``ranks_regex``."""
    import json

    import h5py

    with h5py.File(telemetry_file, "r") as f:
        launch = json.loads(f.attrs["launch"])
    assert launch["runtime"].startswith("program's own time") and launch["flavour"] == \
        "OpenMpiMpirun" and launch["ranks_regex"] == ranks_regex
