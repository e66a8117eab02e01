"""The MPI families, and how a library or a version text tells one."""

from __future__ import annotations

from hpcds1mpi.launch.mpi_names import (clean_version, family_of_banner, family_of_soname,
                                        version_line)

#: Debian's mpi4py's Get_library_version(), its terminating NUL included (s25 tester B 1).
DEBIAN_MPI4PY = "Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4, May 26, 2022\0"


def test_sonames_and_banners():
    assert family_of_soname("libmpi.so.40") == "openmpi"
    assert family_of_soname("libmpi.so.12") == "mpich"
    assert family_of_soname("libmpich.so.12") == "mpich"
    assert family_of_soname("libmpi_abi.so.1") == "mpi-abi"
    assert family_of_soname("libmpi.so.4") is None  # not libmpi.so.40
    assert family_of_banner(b"..Open MPI v4.1.4, package..") == "openmpi"
    assert family_of_banner("Intel(R) MPI Library 2021.10") == "mpich"
    assert family_of_banner("no banner") is None


def test_a_library_version_is_read_as_c_reads_it():
    """Debian's mpi4py returned Get_library_version() with its NUL; the NUL was kept and the
    telemetry write crashed (s25 tester B 1)."""
    assert version_line(DEBIAN_MPI4PY + "\n") == DEBIAN_MPI4PY[:-1]
    assert version_line("\n  MPICH Version: 5.0.2\nMPICH Release date: x\n") == \
        "MPICH Version: 5.0.2"
    assert clean_version("A\tB\x1b[0m\0 after the NUL") == "A B [0m"


def test_the_families_names_have_one_home():
    """s31 review M5: split out of mpi_family (at the size limit), which reads them from here."""
    from hpcds1mpi.launch import mpi_family, mpi_names

    for name in ("OPENMPI", "MPICH", "FAMILY_NAMES", "LAUNCHER_NAMES", "CANDIDATES",
                 "ProgramMPI", "family_of_soname", "family_of_banner", "version_line"):
        assert getattr(mpi_family, name) is getattr(mpi_names, name)
    assert not hasattr(mpi_family, "clean_version")  # used elsewhere only: read from here
