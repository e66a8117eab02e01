"""The program's MPI, read from the program (ELF, its interpreter's mpi4py), and the launchers
that can start it as one job: real Debian binaries, programs compiled with the wheel's mpicc."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from hpcds1mpi.errors import ConfigError, LaunchError
from hpcds1mpi.launch import elf_libraries, mpi_family, own_launcher
from hpcds1mpi.launch.script_launcher_mpi import check_script
from tests.helpers import mpiexec, system_program

HELLO = r"""
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == 0) printf("ranks: %d\n", size);
    MPI_Finalize();
    return 0;
}
"""


def compiled(tmp_path: Path, wrapper: str = "mpicc") -> str:
    """hello.c built with the mpich wheel's compiler wrapper (mpicc: libmpi.so.12, mpicc_abi:
    the MPI-5 ABI's libmpi_abi)."""
    cc = Path(sys.executable).parent / wrapper
    if not cc.exists() or shutil.which("cc") is None:
        pytest.skip(f"{wrapper} or a C compiler missing")
    src = tmp_path / "hello.c"
    src.write_text(HELLO)
    exe = tmp_path / f"hello_{wrapper}"
    subprocess.run([str(cc), "-o", str(exe), str(src)], check=True, timeout=120)
    return str(exe)


def readelf_needed(path: str) -> list[str]:
    text = subprocess.run(["readelf", "-d", path], capture_output=True, text=True).stdout
    return [ln.split("[", 1)[1].rstrip("]") for ln in text.splitlines() if "(NEEDED)" in ln]


def test_the_elf_reader_agrees_with_readelf():
    if shutil.which("readelf") is None:
        pytest.skip("readelf not installed")
    for path in (system_program("hpcc"), system_program("NPmpich2"), sys.executable,
                 shutil.which("sh")):
        assert elf_libraries.elf_needed(os.path.realpath(path)) == readelf_needed(path)


def test_debian_applications_by_their_linked_mpi():
    system_program("hpcc")
    hpcc = mpi_family.program_mpi(["hpcc"])
    assert hpcc.family == "openmpi" and "libmpi.so.40" in hpcc.evidence
    netpipe = mpi_family.program_mpi([system_program("NPmpich2"), "-u", "8"])
    assert netpipe.family == "mpich" and "libmpich.so.12" in netpipe.evidence


def test_a_program_built_with_the_wheels_mpicc_and_its_abi_wrapper(tmp_path):
    plain = mpi_family.program_mpi([compiled(tmp_path)])
    assert plain.family == "mpich" and "libmpi.so.12" in plain.evidence
    abi = mpi_family.program_mpi([compiled(tmp_path, "mpicc_abi")])
    # MPI-5 ABI: the implementation is the library the loader finds (the wheel's MPICH here)
    assert "libmpi_abi" in abi.evidence and abi.family == "mpich"


def test_python_programs_by_their_interpreters_mpi4py(tmp_path):
    direct = mpi_family.program_mpi([sys.executable, "app.py"])
    assert direct.family == "mpich" and "mpi4py" in direct.evidence
    script = tmp_path / "app.py"
    script.write_text(f"#!/usr/bin/env {Path(sys.executable).name}\nfrom mpi4py import MPI\n")
    script.chmod(0o755)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    assert mpi_family.program_mpi([str(script)], env).family == "mpich"


def test_what_cannot_be_read_is_unknown(tmp_path):
    wrapper = tmp_path / "run.sh"
    wrapper.write_text('#!/bin/sh\nexec $APP "$@"\n')  # named by a variable: no guess
    unread = mpi_family.program_mpi([str(wrapper)], {**os.environ, "APP": "hpcc"})
    assert unread.family is None and "names no one program outright" in unread.evidence
    assert mpi_family.program_mpi(["sh", "-c", "true"]).family is None  # links no MPI
    assert mpi_family.program_mpi([str(tmp_path / "missing")]).family is None
    text = tmp_path / "data.txt"
    text.write_text("not a program")
    assert elf_libraries.elf_needed(str(text)) is None


def _wrapper(tmp_path, name: str, text: str) -> str:
    from tests.helpers import executable_script

    return executable_script(tmp_path, name, text)


def test_a_wrappers_program_is_read_and_a_wrong_family_launcher_refused(tmp_path):
    """s29 tester E1: a #!/bin/sh wrapper of Open MPI's hpcc read "its MPI cannot be read", so
    the wheel's hydra was let start it as independent 1-rank copies."""
    hpcc = system_program("hpcc")
    openmpi = os.path.realpath(system_program("mpirun.openmpi"))
    run = _wrapper(tmp_path, "run.sh", '#!/bin/sh\nexport OMP_NUM_THREADS=1\nexec hpcc "$@"\n')
    found = mpi_family.program_mpi([run, "-x"])
    assert found.family == "openmpi" and found.path == hpcc
    assert found.evidence == "through the wrapper run.sh: its exec of hpcc: links libmpi.so.40"
    outer = _wrapper(tmp_path, "outer.sh", f"#!/bin/bash\ncd /tmp\n{run} in.dat\n")
    nested = mpi_family.program_mpi([outer])  # a wrapper's wrapper, bounded
    assert nested.family == "openmpi" and nested.evidence.startswith(
        f"through the wrapper outer.sh: its last command {run}, through the wrapper run.sh")
    with pytest.raises(LaunchError) as caught:
        mpi_family.check_launcher(found, mpiexec())
    text = str(caught.value)
    assert "linked against Open MPI (through the wrapper run.sh" in text
    assert os.path.realpath(text.rsplit("--mpiexec ", 1)[1]) == openmpi
    assert mpi_family.check_launcher(found, openmpi) == "openmpi"
    # the batch-script check reads it alike
    with pytest.raises(ConfigError, match=r"^run.sh is linked against Open MPI \(through the "
                                          r"wrapper run.sh.* set launcher = \"mpiexec\" and mpiexec = "):
        check_script([run], SimpleNamespace(name="mpiexec", command=mpiexec()))
    looping = _wrapper(tmp_path, "self.sh", f"#!/bin/sh\nexec {tmp_path}/self.sh\n")
    assert mpi_family.program_mpi([looping]).family is None


def test_launcher_families():
    assert mpi_family.launcher_family(system_program("mpirun.openmpi")) == "openmpi"
    assert mpi_family.launcher_family(system_program("mpiexec.mpich")) == "mpich"
    assert mpi_family.launcher_family(mpiexec()) == "mpich"
    assert mpi_family.launcher_family(shutil.which("ls")) is None


def test_the_wrong_launcher_is_refused_naming_one_that_can():
    hpcc = mpi_family.program_mpi([system_program("hpcc")])
    openmpi = os.path.realpath(system_program("mpirun.openmpi"))
    with pytest.raises(LaunchError) as caught:
        mpi_family.check_launcher(hpcc, mpiexec())
    text = str(caught.value)
    assert "linked against Open MPI" in text and "independent 1-rank copies" in text
    named = text.rsplit("--mpiexec ", 1)[1]
    assert os.path.realpath(named) == openmpi
    assert mpi_family.check_launcher(hpcc, openmpi) == "openmpi"
    netpipe = mpi_family.program_mpi([system_program("NPmpich2")])
    with pytest.raises(LaunchError, match="MPICH family.*--mpiexec .*mpiexec"):
        mpi_family.check_launcher(netpipe, openmpi)
    assert mpi_family.check_launcher(netpipe, system_program("mpiexec.mpich")) == "mpich"
    with pytest.raises(ConfigError,  # a bad --mpi value: exit 2 (s31 tester P8)
                       match="--mpi=none gives its ranks no wire-up: use srun --mpi=pmix"):
        mpi_family.check_launcher(hpcc, "srun", "none")
    assert mpi_family.check_launcher(hpcc, "srun", "pmix") == "slurm"


# ---- the launcher that started this process, against its mpi4py -----------------------------

OPEN_MPI_RANK = {"OMPI_COMM_WORLD_SIZE": "2", "OMPI_COMM_WORLD_RANK": "0", "PMIX_RANK": "0",
                 "PMIX_NAMESPACE": "1328939009"}  # what mpirun.openmpi sets (seen with env)
HYDRA_RANK = {"PMI_RANK": "0", "PMI_SIZE": "2", "PMI_FD": "9", "HYDI_CONTROL_FD": "7"}


def _clean(**extra) -> dict:
    names = own_launcher.OPEN_MPI_VARS + own_launcher.PMI_VARS + own_launcher.PMIX_VARS
    return {**{k: v for k, v in os.environ.items() if k not in names}, **extra}


def test_the_launcher_that_started_a_process_is_read_from_its_wire_up():
    assert own_launcher.started_by(_clean(**OPEN_MPI_RANK)) == mpi_family.OPENMPI
    assert own_launcher.started_by(_clean(**HYDRA_RANK)) == mpi_family.MPICH
    assert own_launcher.started_by(_clean()) is None  # not launched
    assert own_launcher.started_by(_clean(PMIX_RANK="0", PMIX_NAMESPACE="x")) is None  # srun pmix
    assert own_launcher.started_by(_clean(**OPEN_MPI_RANK, **HYDRA_RANK)) is None  # cannot tell


def test_this_pythons_mpi4py_is_read_without_starting_mpi():
    code = ("import sys; from hpcds1mpi.launch import own_launcher; f = own_launcher.mpi4py_mpi(); "
            "print(f.family, f.evidence, 'mpi4py.MPI' in sys.modules)")  # importing it starts MPI
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, env=_clean())
    assert proc.stdout.split() == ["mpich", "links", "libmpi.so.12", "False"], proc.stderr


def test_another_familys_launcher_is_refused_before_mpi_init_naming_the_wheels_mpiexec():
    """The wheel's MPICH under Open MPI's mpirun printed MPICH's error stack ("unsupported PMI
    version PMIx", exit 16) on every rank."""
    with pytest.raises(LaunchError) as caught:
        own_launcher.check_started_by(_clean(**OPEN_MPI_RANK))
    line = str(caught.value)
    assert line.startswith("hpcds1mpi was started by Open MPI's mpirun (OMPI_COMM_WORLD_SIZE "
                           "is set), but its mpi4py uses the MPICH family")
    assert f"start it with {mpiexec()} -n N instead" in line and "\n" not in line
    with pytest.raises(SystemExit) as quiet:  # the other ranks: the same exit, no second line
        own_launcher.check_started_by(_clean(**{**OPEN_MPI_RANK, "OMPI_COMM_WORLD_RANK": "1"}))
    assert quiet.value.code == LaunchError.exit_code
    for fits in (_clean(**HYDRA_RANK), _clean()):
        assert own_launcher.check_started_by(fits) is None


# ---- version texts, the launcher suggested, srun's plugin -------------------------------------

DEBIAN_MPI4PY = "Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4, May 26, 2022\0"


def fake_python(tmp_path: Path, version: str = DEBIAN_MPI4PY) -> str:
    """A ``python3`` whose mpi4py says ``version`` (Debian's keeps the C string's NUL)."""
    folder = tmp_path / "fakebin"
    folder.mkdir(exist_ok=True)
    python = folder / "python3"
    # printf's %b writes \0NNN as that byte; whatever the arguments, it prints the version.
    python.write_text("#!/bin/sh\nprintf '%b\\n' " + shlex.quote(version.replace("\0", "\\0000"))
                      + "\n")
    python.chmod(0o755)
    return str(python)


def test_a_python_programs_library_version_is_read_as_c_reads_it(tmp_path):
    """Debian's mpi4py returned Get_library_version() with its NUL; the NUL was kept and the
    telemetry write crashed (s25 tester B 1). The reading itself: tests/launch/test_mpi_names."""
    python = fake_python(tmp_path)
    assert subprocess.run([python, "-c", "x"], capture_output=True).stdout.endswith(b"\0\n")
    found = mpi_family.program_mpi([python, "app.py"])
    assert found.family == "openmpi" and found.path == python
    assert f"uses {DEBIAN_MPI4PY[:-1]} ({python})" in found.evidence  # no NUL, no doubled space


def test_the_launcher_suggested_is_the_one_whose_installation_owns_the_library(tmp_path):
    """A program of the wheel's MPICH was told to use Debian's mpiexec.mpich (s25 tester B 6)."""
    openmpi = system_program("mpirun.openmpi")
    wheel = mpi_family.program_mpi([compiled(tmp_path)])
    with pytest.raises(LaunchError) as caught:
        mpi_family.check_launcher(wheel, openmpi)
    assert str(caught.value).endswith(f"--mpiexec {Path(sys.executable).parent / 'mpiexec'}")
    assert mpi_family.library_file(wheel).startswith(str(Path(sys.executable).parent.parent))
    debian = mpi_family.program_mpi([system_program("NPmpich2")])
    with pytest.raises(LaunchError, match=r"--mpiexec /usr/bin/mpiexec\.mpich$"):
        mpi_family.check_launcher(debian, openmpi)
    assert mpi_family.owner_first(["/usr/bin/mpiexec.mpich", "/opt/mpich/bin/mpiexec.hydra",
                                   "/opt/mpich/bin/mpiexec"], "/opt/mpich/lib/libmpi.so.12") == \
        ["/opt/mpich/bin/mpiexec", "/opt/mpich/bin/mpiexec.hydra", "/usr/bin/mpiexec.mpich"]
    assert mpi_family.owner_first(["/b", "/a"], None) == ["/b", "/a"]


def test_open_mpi_under_srun_pmi2_is_refused_naming_what_was_not_tried():
    """It was refused by the probe with "srun --mpi=pmix/pmi2" though pmi2 had just failed
    (s25 tester B 5)."""
    hpcc = mpi_family.program_mpi([system_program("hpcc")])
    with pytest.raises(ConfigError) as caught:  # a bad --mpi value: exit 2 (s31 tester P8)
        mpi_family.check_launcher(hpcc, "srun", "pmi2")
    text = str(caught.value)
    assert "srun --mpi=pmi2 cannot start it as one job" in text
    # in words tune can follow too: its --mpi, not only a cluster file (s43 review R3)
    assert ('use srun --mpi=pmix (sweep and tune: --mpi pmix, or mpi = "pmix" in a --cluster '
            'file)') in text
    assert "pmix/pmi2" not in text and "--mpiexec " in text
    for fits in ("pmix", "pmix_v4", ""):  # "": one rank, no wire-up needed
        assert mpi_family.check_launcher(hpcc, "srun", fits) == "slurm"
    netpipe = mpi_family.program_mpi([system_program("NPmpich2")])
    assert mpi_family.check_launcher(netpipe, "srun", "pmi2") == "slurm"


# ---- whether the program's MPI library speaks PMIx (srun --mpi=pmix) ----------------------------

def fake_mpich(tmp_path: Path, name: str, *, links: tuple = (), text: str = "") -> str:
    """A program linked against a ``libmpich.so.12`` of its own that needs ``links`` (linker
    ``-l`` names) and carries ``text`` (a version banner), found through the program's RPATH."""
    if shutil.which("cc") is None:
        pytest.skip("no C compiler")
    folder = tmp_path / name
    folder.mkdir()
    (folder / "mpi.c").write_text(f'const char *banner = "{text}";\n'
                                  "int MPI_Init(void) { return 0; }\n")
    (folder / "main.c").write_text("int MPI_Init(void); int main(void) { return MPI_Init(); }\n")
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(folder / "libmpich.so.12"),
                    "-Wl,-soname,libmpich.so.12", str(folder / "mpi.c"), f"-L{tmp_path}",
                    "-Wl,--no-as-needed", *[f"-l{lib}" for lib in links]], check=True, timeout=120)
    subprocess.run(["cc", "-o", str(folder / "app"), str(folder / "main.c"), f"-L{folder}",
                    "-l:libmpich.so.12", f"-Wl,-rpath,{folder}"], check=True, timeout=120)
    return str(folder / "app")


def test_an_mpich_library_without_pmix_is_refused_under_srun_pmix(tmp_path):
    """srun --mpi=pmix started nwchem.mpich (Debian's MPICH) as two 1-rank copies, and the probe
    passed on the PMIx variables: the run was recorded ok (s27 tester Q 1)."""
    netpipe = mpi_family.program_mpi([system_program("NPmpich2")])
    assert mpi_family.speaks_pmix(netpipe) is False
    for plugin in ("pmix", "pmix_v4"):
        with pytest.raises(ConfigError) as caught:
            mpi_family.check_launcher(netpipe, "srun", plugin)
        line = str(caught.value)
        assert "libmpich.so.12 links no PMIx library" in line and "use srun --mpi=pmi2" in line
        assert f"srun --mpi={plugin} would start it as independent 1-rank copies" in line
    assert mpi_family.check_launcher(netpipe, "srun", "pmi2") == "slurm"
    assert mpi_family.check_launcher(netpipe, "srun", "") == "slurm"  # one rank: no wire-up
    wheel = mpi_family.program_mpi([compiled(tmp_path)])  # MPICH 5 aborts in MPI_Init there
    with pytest.raises(ConfigError, match=r"use srun --mpi=pmi2 \(sweep and tune: --mpi "
                                          r"pmi2, or mpi = \"pmi2\" in a --cluster file\)$"):
        mpi_family.check_launcher(wheel, "srun", "pmix")
    hpcc = mpi_family.program_mpi([system_program("hpcc")])  # Open MPI: PMIx through a plugin
    assert mpi_family.speaks_pmix(hpcc) is True


def test_an_mpich_library_linking_pmix_or_unreadable_is_let_through(tmp_path):
    if not Path("/usr/lib/x86_64-linux-gnu/libpmix.so.2").exists():
        pytest.skip("libpmix2 not installed")
    with_pmix = mpi_family.program_mpi([fake_mpich(tmp_path, "pmix", links=(":libpmix.so.2",))])
    assert with_pmix.family == "mpich" and mpi_family.speaks_pmix(with_pmix) is True
    assert mpi_family.check_launcher(with_pmix, "srun", "pmix") == "slurm"
    plain = mpi_family.program_mpi([fake_mpich(tmp_path, "plain")])
    assert mpi_family.speaks_pmix(plain) is False
    intel = mpi_family.program_mpi([fake_mpich(tmp_path, "intel", text="Intel(R) MPI Library")])
    assert mpi_family.speaks_pmix(intel) is None  # its PMI library is chosen at run time
    subprocess.run(["cc", "-shared", "-o", str(tmp_path / "libgone.so"), "-x", "c", "/dev/null"],
                   check=True, timeout=60)
    gone = mpi_family.program_mpi([fake_mpich(tmp_path, "gone", links=("gone",))])
    (tmp_path / "libgone.so").unlink()
    assert mpi_family.speaks_pmix(gone) is None  # a library it needs is not found
    for unreadable in (intel, gone, mpi_family.ProgramMPI(None, "a wrapper")):
        assert mpi_family.check_launcher(unreadable, "srun", "pmix") in ("slurm", None)


def test_a_script_asking_srun_pmix_for_an_mpich_program_is_refused():
    launcher = SimpleNamespace(name="srun", mpi="pmix")
    with pytest.raises(ConfigError, match=r'links no PMIx library.*set mpi = "pmi2" in the '
                                          "cluster file$"):
        check_script([system_program("NPmpich2"), "-u", "8"], launcher)
    check_script([system_program("NPmpich2")], SimpleNamespace(name="srun", mpi="pmi2"))
    check_script([system_program("hpcc")], launcher)


def test_open_mpi_built_with_slurms_pmi_is_let_through_under_srun_pmi2(tmp_path):
    """Every Open MPI program was refused under srun --mpi=pmi2, though Open MPI built
    --with-pmi (components mca_pmix_s1/s2) runs there (s28 tester U 8)."""
    from tests.launch.fake_openmpi import fake_openmpi

    with_pmi = mpi_family.program_mpi([fake_openmpi(tmp_path, "withpmi", components=(
        "mca_pmix_ext3x.so", "mca_pmix_s2.so"))])
    assert with_pmi.family == "openmpi"
    assert mpi_family.check_launcher(with_pmi, "srun", "pmi2") == "slurm"
    pmi2 = SimpleNamespace(name="srun", mpi="pmi2")
    check_script([with_pmi.path], pmi2)
    without = mpi_family.program_mpi([fake_openmpi(tmp_path, "without")])
    with pytest.raises(ConfigError, match=r"no Slurm PMI component \(no mca_pmix_s1/s2 in .*"
                                          r"/lib/openmpi\), so srun --mpi=pmi2 cannot start it "
                                          "as one job: use srun --mpi=pmix"):
        mpi_family.check_launcher(without, "srun", "pmi2")
    with pytest.raises(ConfigError, match="no Slurm PMI component.*set mpi = \"pmix\""):
        check_script([without.path], pmi2)
    for either in (with_pmi, without):  # no wire-up at all, whatever it was built with
        with pytest.raises(ConfigError, match="srun --mpi=none cannot start it"):
            check_script([either.path], SimpleNamespace(name="srun", mpi="none"))



def test_a_relative_program_is_read_in_the_folder_it_runs_in(tmp_path):
    """s33 tester D3: `--workdir runs/x` with `../../hello` was "not found", its MPI unread."""
    exe = Path(compiled(tmp_path))
    (tmp_path / "runs" / "x").mkdir(parents=True)
    found = mpi_family.program_mpi([f"../../{exe.name}"], cwd=str(tmp_path / "runs" / "x"))
    assert found.family == "mpich" and "libmpi" in found.evidence


def test_a_python_script_that_imports_no_mpi_is_unknown_not_its_mpi4py(tmp_path):
    """s33 tester D4: `python serial.py` was the MPICH family through the interpreter's mpi4py;
    one that imports MPI through a local module still is."""
    (tmp_path / "serial.py").write_text("import sys, time\nprint('Time: 1')\n")
    serial = mpi_family.program_mpi([sys.executable, "serial.py"], cwd=str(tmp_path))
    assert serial.family is None and "imports no MPI" in serial.evidence
    (tmp_path / "comm.py").write_text("from mpi4py import MPI\n")
    (tmp_path / "solver.py").write_text("import comm\n")
    with_mpi = mpi_family.program_mpi([sys.executable, "-u", "solver.py"], cwd=str(tmp_path))
    assert "imports no MPI" not in with_mpi.evidence


def test_an_openmp_binary_is_known_to_link_no_mpi(tmp_path):
    """s33 tester D2: a dynamic binary whose libraries ldd all resolves, none MPI."""
    from tests.helpers import openmp_binary

    found = mpi_family.program_mpi([openmp_binary(tmp_path)])
    assert mpi_family.known_without_mpi(found)
    assert not mpi_family.known_without_mpi(mpi_family.program_mpi([compiled(tmp_path)]))
