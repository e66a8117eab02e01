"""The MPI installation a program's libmpi belongs to and its own launcher, and when two
launcher files are one (s35 tester I5, I6): Intel MPI from PyPI (``scripts/intel-mpi``), a
program built with its ``mpicc``, the venv's MPICH wheel and Debian's MPIs; real files."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from hpcds1mpi.launch import mpi_family
from hpcds1mpi.launch.given_launcher import instead
from hpcds1mpi.launch.mpi_installation import (installation_launcher, launcher_file_family,
                                               other_installation, same_launcher)
from hpcds1mpi.launch.script_mpi_check import mpi_mismatch
from hpcds1mpi.launch.script_reading import read_script
from tests.helpers import system_program
from tests.intel_mpi import build_hybrid, intel_mpi

WHEEL_MPIEXEC = str(Path(sys.executable).parent / "mpiexec")


@pytest.fixture(scope="module")
def intel_program(tmp_path_factory):
    """(Intel MPI's folder, a program its mpicc built: libmpi.so.12 through RUNPATH)."""
    root = intel_mpi()
    return root, str(build_hybrid(tmp_path_factory.mktemp("intel")))


def test_intels_mpiexec_and_mpiexec_hydra_are_one_launcher(tmp_path):
    """s35 tester I5: the two are byte-identical files (on oneAPI one links the other); the
    venv's MPICH hydra is another launcher."""
    root = intel_mpi()
    own, hydra = str(root / "bin" / "mpiexec"), str(root / "bin" / "mpiexec.hydra")
    assert same_launcher(own, hydra)
    (tmp_path / "mpiexec").symlink_to(hydra)
    assert same_launcher(str(tmp_path / "mpiexec"), own)
    assert not same_launcher(own, WHEEL_MPIEXEC)
    assert not same_launcher(own, str(tmp_path / "missing"))


def test_one_rule_of_the_same_launcher_for_files_names_and_records(tmp_path):
    """s40 review G5: one rule for the scripts' launchers and a resumed or merged file's: a
    name is itself (srun), a copy of the bytes beside it is the launcher (the MPICH wheel's
    mpiexec.hydra for its mpiexec), a recorded path that is gone here is itself by its real
    path; a copy in another folder is another (an mpirun takes its prefix from its folder)."""
    from hpcds1mpi.records.telemetry.merged_settings import same_launch_value

    (tmp_path / "bin").mkdir()
    own, copy = tmp_path / "bin" / "mpiexec", tmp_path / "bin" / "mpiexec.hydra"
    elsewhere = tmp_path / "mpiexec"
    for path in (own, copy, elsewhere):
        shutil.copy2(WHEEL_MPIEXEC, path)
    gone = str(tmp_path / "gone" / "mpirun")
    for first, second in (("srun", "srun"), (str(own), str(copy)), (gone, gone),
                          (gone, str(tmp_path / "gone" / ".." / "gone" / "mpirun"))):
        assert same_launcher(first, second) and same_launch_value("command", first, second)
    for first, second in (("srun", WHEEL_MPIEXEC), (gone, WHEEL_MPIEXEC),
                          (str(own), str(elsewhere))):
        assert not same_launcher(first, second)
        assert not same_launch_value("command", first, second)


def test_a_programs_launcher_is_the_one_beside_the_libmpi_it_loads(intel_program):
    """s35 tester I6: Intel's bin is on no PATH; the sweep named the venv's MPICH mpiexec, advise
    Debian's mpiexec.mpich. Both now name Intel's own, and the same one."""
    root, app = intel_program
    program = mpi_family.program_mpi([app])
    library = mpi_family.library_file(program)
    assert program.family == "mpich" and library.startswith(str(root)), (program, library)
    own = str(root / "bin" / "mpiexec")
    assert installation_launcher(library, "mpich") == own
    assert installation_launcher(library, "openmpi") is None  # no Open MPI in Intel's bin
    openmpi_run = system_program("mpirun.openmpi")
    assert mpi_family.candidates("mpich", library=library)[0] == own
    assert instead(program)[0][0] == own
    with pytest.raises(Exception, match=f"use its launcher: --mpiexec {own}$"):  # the sweep
        mpi_family.check_launcher(program, openmpi_run)
    script = read_script(f"#!/bin/bash\n#SBATCH -N 1\n{openmpi_run} -n 2 {app}\n")
    kind, line = mpi_mismatch(script, script.launches[0], os.getcwd())  # advise
    assert kind == "warning" and f"launch it with {own} " in line, line


def test_debians_mpiexec_is_passed_over_for_its_mpich(tmp_path):
    """/usr/bin/mpiexec is Open MPI's orterun on Debian: its suffixed names come first."""
    library = os.path.realpath("/usr/lib/x86_64-linux-gnu/libmpich.so.12")
    if not os.path.exists(library):
        pytest.skip("needs Debian's MPICH")
    assert installation_launcher(library, "mpich") == "/usr/bin/mpiexec.mpich"
    assert installation_launcher(library, "openmpi") == "/usr/bin/mpirun.openmpi"
    assert installation_launcher(None, "mpich") is None


def test_a_launcher_of_another_installation_of_the_family_is_said(intel_program):
    """s35 tester I6: with Intel's bin first on PATH and no --mpiexec, the sweep used the venv's
    MPICH 5 mpiexec unsaid. One line names the program's library and its own launcher."""
    root, app = intel_program
    library = mpi_family.library_file(mpi_family.program_mpi([app]))
    said = other_installation(library, "mpich", WHEEL_MPIEXEC)
    assert said and "\n" not in said and said.endswith(f"--mpiexec {root / 'bin' / 'mpiexec'}")
    assert f"the launcher {WHEEL_MPIEXEC} is another installation's" in said
    assert other_installation(library, "mpich", str(root / "bin" / "mpiexec.hydra")) is None
    assert other_installation(None, "mpich", WHEEL_MPIEXEC) is None  # library not read


def _elf_launcher(path: Path, marks: bytes = b"") -> str:
    """An executable ELF file at ``path`` (a copy of ``true``) with ``marks`` in its bytes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(Path(os.path.realpath(shutil.which("true"))).read_bytes() + marks)
    path.chmod(0o755)
    return str(path)


def test_a_relocating_open_mpi_wrapper_is_its_installations_launcher(tmp_path):
    """s40 tester A2: the PyPI wheel's bin/mpirun links only libc and execs ompirun_wrapper
    after setting OPAL_PREFIX; it was never the launcher of its own libmpi.so.40, so Debian's
    4.1 mpirun.openmpi was named and a 4.1 launcher for the 5.0 program went unsaid."""
    prefix = tmp_path / "ompi5"
    (prefix / "lib").mkdir(parents=True)
    library = prefix / "lib" / "libmpi.so.40"
    library.write_bytes(b"\x7fELF")
    own = _elf_launcher(prefix / "bin" / "mpirun", b"\0ompirun_wrapper\0OPAL_PREFIX\0")
    assert launcher_file_family(own) == "openmpi"
    assert launcher_file_family(_elf_launcher(tmp_path / "plain" / "mpirun")) is None
    assert installation_launcher(str(library), "openmpi") == own
    assert installation_launcher(str(library), "mpich") is None
    other = _elf_launcher(tmp_path / "ompi4" / "bin" / "orterun")
    said = other_installation(str(library), "openmpi", other)
    assert said and said.endswith(f"--mpiexec {own}") and f"the launcher {other} is" in said


def test_prrtes_launcher_is_open_mpis_by_its_version_or_its_file(tmp_path):
    """s40 tester A3: Open MPI 5's prterun prints "prterun (PRRTE) 3.0.14"; the wheel's,
    relocated, only a help-file-missing box: both were "not an MPI launcher"."""
    from hpcds1mpi.launch.mpi_installation import version_family

    prterun = _elf_launcher(tmp_path / "bin" / "prterun")
    assert version_family(prterun, "prterun (PRRTE) 3.0.14\n\nReport bugs to ...") == "openmpi"
    box = "----\nSorry!  You were supposed to get help about:\n    version\n----\n"
    assert version_family(prterun, box) == "openmpi"  # its file's name says
    assert version_family(_elf_launcher(tmp_path / "bin" / "tool"), box) is None
    assert version_family(prterun, "HYDRA build details:") == "mpich"


def test_the_open_mpi_5_wheels_launchers_are_its_own():
    """s40 tester A2/A3 on the real wheel (where installed): its mpirun is the launcher of its
    libmpi.so.40, and its prterun (whose --version fails relocated) is Open MPI's."""
    from tests.openmpi5 import openmpi5

    prefix = openmpi5()
    library = str(prefix / "lib" / "libmpi.so.40")
    assert installation_launcher(library, "openmpi") == str(prefix / "bin" / "mpirun")
    assert mpi_family.launcher_family(str(prefix / "bin" / "prterun")) == "openmpi"
    assert mpi_family.launcher_family(str(prefix / "bin" / "mpirun")) == "openmpi"
    debian = "/usr/bin/mpirun.openmpi"
    if os.path.exists(debian):
        said = other_installation(library, "openmpi", debian)
        assert said and said.endswith(f"--mpiexec {prefix / 'bin' / 'mpirun'}")
