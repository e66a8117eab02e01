"""The libraries a binary needs, followed through its libraries' own ``NEEDED`` from the files
alone (:mod:`hpcds1mpi.launch.elf_libraries`; nothing is run)."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from hpcds1mpi.launch import elf_libraries, script_mpi_check

XDLU = "/usr/lib/x86_64-linux-gnu/scalapack/mpich-tests/xdlu"


@pytest.fixture
def chain(tmp_path):
    """app -> libsolver.so (found through app's RUNPATH $ORIGIN/lib) -> libmpi.so.40 (a stub
    of Open MPI's soname beside it): an MPI reached only through another library."""
    if shutil.which("gcc") is None:
        pytest.skip("gcc not installed")
    lib = tmp_path / "lib"
    lib.mkdir()

    def cc(*args):
        subprocess.run(["gcc", *args], check=True, capture_output=True, cwd=tmp_path)

    (tmp_path / "mpi.c").write_text("int MPI_Init(void) { return 0; }\n")
    cc("-shared", "-fPIC", "-Wl,-soname,libmpi.so.40", "-o", "lib/libmpi.so.40", "mpi.c")
    (tmp_path / "solver.c").write_text("int MPI_Init(void);\n"
                                       "int solve(void) { return MPI_Init(); }\n")
    cc("-shared", "-fPIC", "-Wl,-soname,libsolver.so", "-o", "lib/libsolver.so", "solver.c",
       "lib/libmpi.so.40", "-Wl,-rpath,$ORIGIN")
    (tmp_path / "app.c").write_text("int solve(void);\nint main(void) { return solve(); }\n")
    cc("-o", "app", "app.c", "lib/libsolver.so", "-Wl,--enable-new-dtags,-rpath,$ORIGIN/lib")
    return str(tmp_path / "app")


def test_an_mpi_reached_through_another_library_is_found_from_the_files(chain, monkeypatch):
    # Before: program_file_family read only the program's own NEEDED: (None, "").
    monkeypatch.setattr(subprocess, "run", None)  # nothing is run
    monkeypatch.setattr(subprocess, "Popen", None)
    assert elf_libraries.elf_needed(chain)[0] == "libsolver.so"
    tree = dict(elf_libraries.needed_tree(chain))
    assert tree["libsolver.so"] == () and tree["libmpi.so.40"] == ("libsolver.so",)
    assert script_mpi_check.program_file_family(chain) == (
        "openmpi", "links libmpi.so.40 through libsolver.so")


def test_the_walk_is_bounded_in_depth_and_files(chain):
    assert "libmpi.so.40" not in dict(elf_libraries.needed_tree(chain, max_depth=1))
    assert "libmpi.so.40" not in dict(elf_libraries.needed_tree(chain, max_files=0))


def test_the_loaders_folders_come_from_its_configuration(tmp_path):
    (tmp_path / "conf.d").mkdir()
    (tmp_path / "ld.so.conf").write_text("include conf.d/*.conf\n# a comment\n/opt/first\n")
    (tmp_path / "conf.d" / "a.conf").write_text("/opt/mpi/lib  # the site's MPI\n")
    dirs = elf_libraries.library_dirs.__wrapped__(str(tmp_path / "ld.so.conf"))
    assert dirs[:2] == ("/opt/mpi/lib", "/opt/first")
    assert "/usr/lib" in dirs and "/lib" in dirs


def test_debians_scalapack_test_reaches_mpich_through_libscalapack():
    if not os.path.exists(XDLU):
        pytest.skip("scalapack-mpi-test not installed (bash scripts/system-packages)")
    assert script_mpi_check.program_file_family(XDLU) == (
        "mpich", "links libmpich.so.12 through libscalapack-mpich.so.2.2")
