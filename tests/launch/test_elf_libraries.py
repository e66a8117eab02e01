"""The libraries a binary needs, followed through its libraries' own ``NEEDED`` from the files
alone (:mod:`hpcds1mpi.launch.elf_libraries`; nothing is run)."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from hpcds1mpi.launch import elf_libraries, script_mpi_check

XDLU = "/usr/lib/x86_64-linux-gnu/scalapack/mpich-tests/xdlu"


def _compiler(tmp_path):
    """(gcc run in ``tmp_path``, its ``lib`` folder, made); the test skips without gcc."""
    if shutil.which("gcc") is None:
        pytest.skip("gcc not installed")
    lib = tmp_path / "lib"
    lib.mkdir()

    def cc(*args):
        subprocess.run(["gcc", *args], check=True, capture_output=True, cwd=tmp_path)

    return cc, lib


@pytest.fixture
def chain(tmp_path):
    """app -> libsolver.so (found through app's RUNPATH $ORIGIN/lib) -> libmpi.so.40 (a stub
    of Open MPI's soname beside it): an MPI reached only through another library."""
    cc, lib = _compiler(tmp_path)
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


def _linked_app(tmp_path, libraries: dict) -> str:
    """app (RUNPATH $ORIGIN/lib) linking stub libraries {path under lib/: soname}; a path in
    a folder gets a link lib/<soname> to it, as Debian's alternatives do."""
    if shutil.which("gcc") is None:
        pytest.skip("gcc not installed")
    lib = tmp_path / "lib"
    lib.mkdir()
    (tmp_path / "stub.c").write_text("int stub(void) { return 0; }\n")
    links = []
    for rel, soname in libraries.items():
        target = lib / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["gcc", "-shared", "-fPIC", f"-Wl,-soname,{soname}", "-o", str(target),
                        str(tmp_path / "stub.c")], check=True, capture_output=True)
        if rel != soname:
            (lib / soname).symlink_to(target)
        links.append(str(lib / soname))
    # it starts MPI (weakly bound: the stub libraries define nothing), as an MPI program does
    (tmp_path / "app.c").write_text("extern int MPI_Init(void) __attribute__((weak));\n"
                                    "int main(void) { return MPI_Init ? MPI_Init() : 0; }\n")
    subprocess.run(["gcc", "-o", str(tmp_path / "app"), str(tmp_path / "app.c"),
                    "-Wl,--no-as-needed", *links, "-Wl,--enable-new-dtags,-rpath,$ORIGIN/lib"],
                   check=True, capture_output=True)
    return str(tmp_path / "app")


def test_a_binary_without_openmp_or_threaded_blas_has_no_threading_library(tmp_path):
    # s27 tester R 1c: pw.x links Open MPI and the reference BLAS, no OpenMP.
    app = _linked_app(tmp_path, {"libmpi.so.40": "libmpi.so.40",
                                 "blas/libblas.so.3.11.0": "libblas.so.3"})
    assert elf_libraries.threading_libraries(app) == []


@pytest.mark.parametrize("rel, soname", [
    ("libgomp.so.1", "libgomp.so.1"), ("libomp.so.5", "libomp.so.5"),
    ("libiomp5.so", "libiomp5.so"), ("libmkl_gnu_thread.so", "libmkl_gnu_thread.so"),
    # Debian's libblas.so.3 alternative may be OpenBLAS's threaded build
    ("openblas-pthread/libblas.so.3", "libblas.so.3"),
    ("libopenblasp-r0.3.21.so", "libopenblas.so.0")])
def test_an_openmp_runtime_or_threaded_blas_is_found_by_its_file(tmp_path, rel, soname):
    app = _linked_app(tmp_path, {"libmpi.so.40": "libmpi.so.40", rel: soname})
    assert elf_libraries.threading_libraries(app) == [soname]


def test_a_serial_openblas_is_no_threading_library_and_a_missing_one_is_unknown(tmp_path):
    app = _linked_app(tmp_path, {"openblas-serial/libblas.so.3": "libblas.so.3",
                                 "libsolver-stub.so.1": "libsolver-stub.so.1"})
    assert elf_libraries.threading_libraries(app) == []
    os.remove(tmp_path / "lib" / "libsolver-stub.so.1")  # what it loads cannot be told
    assert elf_libraries.threading_libraries(app) is None
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/sh\n")
    assert elf_libraries.threading_libraries(str(script)) is None


def test_a_truncated_elf_file_is_no_elf_not_a_traceback(tmp_path):
    """The last review of s40: a launcher file cut after its header (``head -c 100
    /bin/true``) raised struct.error in every reader of its libraries."""
    import shutil
    from pathlib import Path

    from hpcds1mpi.launch.elf_libraries import elf_dynamic, elf_needed
    from hpcds1mpi.launch.mpi_installation import launcher_file_family

    whole = Path(os.path.realpath(shutil.which("true"))).read_bytes()
    cut = tmp_path / "mpirun"
    for size in (64, 100, 1000, len(whole) // 2):
        cut.write_bytes(whole[:size])
        assert elf_dynamic(str(cut)) is None or isinstance(elf_dynamic(str(cut)), dict)
        elf_needed(str(cut))
        assert launcher_file_family(str(cut)) is None


def test_an_mpi_past_the_64th_library_is_found_and_srun_pmi2_warned(tmp_path):
    """Was (s45 tester E5): pvbatch reaches Debian's libmpi.so.40 as its 150th library; the
    walk stopped reading files at 64, so advise's srun check had the family but not the file
    ("its libmpi not found"): a note where the job aborts in MPI_Init."""
    from hpcds1mpi.launch.script_reading import read_script
    from tests.helpers import system_program

    system_program("mpirun.openmpi")  # Debian's Open MPI: no Slurm PMI component
    cc, lib = _compiler(tmp_path)
    (tmp_path / "solver.c").write_text("int solve(void) { return 0; }\n")
    cc("-shared", "-fPIC", "-Wl,-soname,libsolver.so", "-o", "lib/libsolver.so", "solver.c",
       "-Wl,--no-as-needed", "-l:libmpi.so.40")  # the system's, found as the loader would
    (tmp_path / "stub.c").write_text("int stub(void) { return 0; }\n")
    cc("-shared", "-fPIC", "-o", "lib/libstub00.so", "stub.c")  # no soname: NEEDED its name
    stubs = [f"libstub{i:02d}.so" for i in range(70)]
    for name in stubs[1:]:
        shutil.copy(lib / "libstub00.so", lib / name)
    (tmp_path / "app.c").write_text("int solve(void);\nint main(void) { return solve(); }\n")
    cc("-o", "app", "app.c", "-Llib", "-Wl,--no-as-needed", "-l:libsolver.so",
       *[f"-l:{name}" for name in stubs], "-Wl,--enable-new-dtags,-rpath,$ORIGIN/lib")
    app = str(tmp_path / "app")
    files = {name: file for name, _, file in elf_libraries.needed_files(app)}
    assert files["libstub69.so"] and files["libmpi.so.40"], files  # was None past 64 files
    conf = tmp_path / "slurm.conf"
    conf.write_text("MpiDefault=pmi2\n")
    script = read_script(f"#SBATCH -N 1\nsrun {app}\n")
    found = script_mpi_check.srun_fix(script, script.launches[-1], str(tmp_path),
                                      {"PATH": os.environ["PATH"], "SLURM_CONF": str(conf)})
    assert found and found[0] == "pmix" and "cannot wire up" in found[1], found
