"""A binary that links an MPI library but never starts MPI (Debian's apbs, s43 tester I1) is a
program without MPI: its ranks are copies, refused at more than one rank; programs that do
start MPI, themselves or through a library they load, never are."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from hpcds1mpi.errors import ConfigError
from hpcds1mpi.launch.mpi_family import known_without_mpi, program_mpi
from hpcds1mpi.launch.mpi_init_calls import INIT_SYMBOL, calls_mpi_init
from hpcds1mpi.launch.rank_proof import one_rank_only, unproven_ranks

#: Open MPI's compiler wrapper (Debian's), whose libmpi.so.40 the tester's apbs links.
MPICC = "/usr/bin/mpicc"


def _compile(folder, name: str, source: str, *flags: str) -> str:
    """``source`` compiled with Open MPI's mpicc into ``folder/name``; skips without it."""
    if not shutil.which(MPICC) or not shutil.which("nm"):
        pytest.skip("Open MPI's mpicc or nm missing")
    (folder / f"{name}.c").write_text(source)
    subprocess.run([MPICC, str(folder / f"{name}.c"), "-o", str(folder / name), *flags],
                   check=True, timeout=120, cwd=folder)
    return str(folder / name)


#: Links libmpi (as Debian's over-linked packages do) and calls none of it.
OVERLINKED = "#include <stdio.h>\nint main(void) { puts(\"rank 0 size 1\"); return 0; }\n"
#: Asks MPI_Initialized only: never starts MPI either.
ASKS_ONLY = ("#include <mpi.h>\n#include <stdio.h>\nint main(void) { int on = 0; "
             "MPI_Initialized(&on); printf(\"%d\\n\", on); return 0; }\n")
#: Starts MPI itself.
STARTS = ("#include <mpi.h>\nint main(int c, char **v) { MPI_Init(&c, &v); MPI_Finalize(); "
          "return 0; }\n")


def test_a_binary_linking_libmpi_that_never_starts_it_is_refused_at_two_ranks(tmp_path):
    for name, source in (("overlinked", OVERLINKED), ("asks", ASKS_ONLY)):
        path = _compile(tmp_path, name, source, "-Wl,--no-as-needed", "-lmpi")
        assert calls_mpi_init(path) is False
        program = program_mpi([path])
        assert program.family is None and known_without_mpi(program), program
        assert "links libmpi.so" in program.evidence and "MPI_Init" in program.evidence
        with pytest.raises(ConfigError) as refused:
            unproven_ranks(program, 2, ranks_regex=False)
        said = str(refused.value)
        assert "a build without MPI" in said and "--ranks-per-node 1" in said
        assert "--ranks-regex" in said and "\n" not in said
        assert "independent copies" in one_rank_only(program, False)
        assert one_rank_only(program, True) == ""  # a ranks regex proves its ranks


def test_programs_that_start_mpi_are_never_refused(tmp_path):
    # itself, with Open MPI's mpicc
    starts = _compile(tmp_path, "starts", STARTS)
    assert calls_mpi_init(starts) is True and program_mpi([starts]).family == "openmpi"
    # through a library it loads (PETSc's PetscInitialize, a framework's start-up)
    (tmp_path / "fw.c").write_text("#include <mpi.h>\nvoid fw_start(int *c, char ***v) "
                                   "{ MPI_Init(c, v); }\n")
    subprocess.run([MPICC, "-shared", "-fPIC", "fw.c", "-o", "libfw.so"], check=True,
                   timeout=120, cwd=tmp_path)
    through = _compile(tmp_path, "through", "void fw_start(int *, char ***);\nint main(int c, "
                       "char **v) { fw_start(&c, &v); return 0; }\n",
                       "-L.", "-lfw", "-Wl,-rpath," + str(tmp_path), "-Wl,--no-as-needed",
                       "-lmpi")
    assert calls_mpi_init(through) is True and program_mpi([through]).family == "openmpi"
    # Debian's MPI programs the testers swept
    for name in ("lmp", "hpcc", "tree-ppuzzle"):
        if path := shutil.which(name):
            assert calls_mpi_init(path) is True, name


@pytest.mark.parametrize("library", ["mpisolver", "mpifx", "mpi_helpers"])
def test_a_users_library_named_libmpi_that_starts_mpi_is_not_taken_for_mpis_own(tmp_path,
                                                                                 library):
    # s43 K3: a program starting MPI through its own libmpisolver.so (DFTB+'s libmpifx) was
    # refused, the library skipped as MPI's own by its name
    (tmp_path / "solver.c").write_text("#include <mpi.h>\nvoid solver_start(int *c, char ***v) "
                                       "{ MPI_Init(c, v); }\n")
    if not shutil.which(MPICC):
        pytest.skip("Open MPI's mpicc missing")
    subprocess.run([MPICC, "-shared", "-fPIC", "solver.c", "-o", f"lib{library}.so"],
                   check=True, timeout=120, cwd=tmp_path)
    app = _compile(tmp_path, "app", "#include <mpi.h>\nvoid solver_start(int *, char ***);\n"
                   "int main(int c, char **v) { int n; solver_start(&c, &v); "
                   "MPI_Comm_size(MPI_COMM_WORLD, &n); return 0; }\n",
                   "-L.", f"-l{library}", "-Wl,-rpath,$ORIGIN")
    assert calls_mpi_init(app) is True
    program = program_mpi([app])
    assert program.family == "openmpi" and not known_without_mpi(program), program
    unproven_ranks(program, 2, ranks_regex=False)  # not refused


def test_the_venv_mpich_mpicc_program_is_read_as_starting_mpi(tmp_path):
    import os
    import sys

    mpicc = os.path.join(os.path.dirname(sys.executable), "mpicc")
    if not os.path.exists(mpicc):
        pytest.skip("no mpicc in the venv")
    (tmp_path / "s.c").write_text(STARTS)
    subprocess.run([mpicc, "s.c", "-o", "s"], check=True, timeout=120, cwd=tmp_path)
    assert calls_mpi_init(str(tmp_path / "s")) is True
    assert program_mpi([str(tmp_path / "s")]).family == "mpich"


@pytest.mark.parametrize("symbol", ["MPI_Init", "MPI_Init_thread", "PMPI_Init", "mpi_init_",
                                    "mpi_init__", "MPI_INIT", "mpi_init_thread_",
                                    "mpi_init_f08_", "MPI_Session_init"])
def test_every_initialisation_spelling_counts(symbol):
    assert INIT_SYMBOL.match(symbol)


@pytest.mark.parametrize("symbol", ["MPI_Initialized", "mpi_initialized_", "MPI_Finalize",
                                    "MPI_Comm_rank", "ompi_init_f"])
def test_asking_or_other_calls_do_not(symbol):
    assert not INIT_SYMBOL.match(symbol)
