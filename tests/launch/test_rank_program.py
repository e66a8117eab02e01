"""The program a launcher's ranks run and the PATH they find it on (s30 tester K4: `python3`
was read on pyenv's PATH, but Open MPI's mpirun by absolute path puts its prefix's bin first,
so the ranks ran /usr/bin/python3). Checked against a real launch of Debian's Open MPI."""

from __future__ import annotations

import os
import subprocess

import pytest

from hpcds1mpi.launch.rank_program import openmpi_prefix, rank_environment, rank_program
from tests.helpers import mpiexec, system_program


def _shim_first(tmp_path) -> dict:
    """This environment with a folder first on PATH whose `hpcc` is another file (a shim, as
    pyenv's), so the name resolves here otherwise than in /usr/bin."""
    system_program("hpcc")
    shims = tmp_path / "shims"
    shims.mkdir()
    (shims / "hpcc").write_text('#!/bin/sh\nexec $REAL "$@"\n')
    (shims / "hpcc").chmod(0o755)
    return {**os.environ, "PATH": f"{shims}:{os.environ['PATH']}",
            "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}


def test_open_mpis_mpirun_by_absolute_path_finds_the_program_where_its_ranks_do(tmp_path):
    launcher = system_program("mpirun.openmpi")
    env = _shim_first(tmp_path)
    words, found_env = rank_program(["hpcc"], env, launcher)
    resolved = subprocess.run(["sh", "-c", "command -v hpcc"], env=found_env,
                              capture_output=True, text=True).stdout.strip()
    ran = subprocess.run([launcher, "-n", "1", "sh", "-c", "command -v hpcc"], env=env,
                         capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stderr
    assert resolved == ran.stdout.strip() == os.path.join(os.path.dirname(launcher), "hpcc")
    # found by name, the same mpirun adds no prefix: the shim is what runs, and is read
    bare = subprocess.run(["mpirun.openmpi", "-n", "1", "sh", "-c", "command -v hpcc"],
                          env=env, capture_output=True, text=True, timeout=120)
    assert rank_environment("mpirun.openmpi", [], env) is env
    assert bare.stdout.strip() == str(tmp_path / "shims" / "hpcc")


def test_prefix_options_and_other_launchers():
    launcher = system_program("mpirun.openmpi")
    assert openmpi_prefix(launcher) == os.path.dirname(os.path.dirname(launcher))
    assert openmpi_prefix(launcher, ["--prefix", "/opt/ompi"]) == "/opt/ompi"
    assert openmpi_prefix("mpirun.openmpi", ["--prefix", "/opt/ompi"]) == "/opt/ompi"
    assert openmpi_prefix(launcher, ["--noprefix"]) is None
    assert openmpi_prefix(mpiexec()) is None  # hydra changes no PATH
    assert openmpi_prefix("srun") is None
    env = rank_environment(launcher, ["--prefix", "/opt/ompi"], {"PATH": "/bin"})
    assert env == {"PATH": "/opt/ompi/bin:/bin", "LD_LIBRARY_PATH": "/opt/ompi/lib"}


def test_an_exec_wrapper_prefix_is_read_past_on_the_ranks_path(tmp_path):
    launcher = system_program("mpirun.openmpi")
    env = _shim_first(tmp_path)
    words, found_env = rank_program(["env", "N=3", "hpcc", "x"], env, launcher)
    assert words == ["hpcc", "x"] and found_env["N"] == "3"
    assert found_env["PATH"].startswith(os.path.dirname(launcher) + ":")
    assert rank_program(["env", "-S", "a b", "hpcc"], env, launcher) is None


@pytest.mark.parametrize("args", [["--prefix", "/usr"], ["-prefix", "/usr"]])
def test_a_prefix_option_is_what_the_real_launch_uses(tmp_path, args):
    system_program("mpirun.openmpi")
    env = _shim_first(tmp_path)
    ran = subprocess.run(["mpirun.openmpi", *args, "-n", "1", "sh", "-c", "command -v hpcc"],
                         env=env, capture_output=True, text=True, timeout=120)
    found_env = rank_program(["hpcc"], env, "mpirun.openmpi", args)[1]
    assert ran.stdout.strip() == subprocess.run(
        ["sh", "-c", "command -v hpcc"], env=found_env, capture_output=True,
        text=True).stdout.strip() == "/usr/bin/hpcc"


def test_open_mpis_relocating_wrapper_puts_its_lib_first_but_leaves_the_ranks_path(tmp_path):
    """s40 tester A12: the PyPI Open MPI 5 wheel's bin/mpirun (an ELF naming OPAL_PREFIX,
    linking no ORTE) gives its ranks its lib on LD_LIBRARY_PATH but leaves PATH (measured:
    `mpirun -n 1 env`); the pre-flight put its bin first as Open MPI 4's mpirun does, so a
    bare python3 was read as the wheel venv's and ran as another, failing in MPI_Init."""
    import shutil
    from pathlib import Path

    from hpcds1mpi.launch.measured_program import measured_file
    from hpcds1mpi.launch.rank_program import prefix_bin_first

    prefix = tmp_path / "venv"
    (prefix / "bin").mkdir(parents=True)
    wrapper = prefix / "bin" / "mpirun"
    wrapper.write_bytes(Path(os.path.realpath(shutil.which("true"))).read_bytes()
                        + b"\0ompirun_wrapper\0OPAL_PREFIX\0")
    wrapper.chmod(0o755)
    python = prefix / "bin" / "python3"
    python.write_text("#!/bin/sh\n")
    python.chmod(0o755)
    env = {"PATH": "/usr/bin", "LD_LIBRARY_PATH": "/opt/x"}
    ranks = rank_environment(str(wrapper), (), env)
    assert ranks["PATH"] == "/usr/bin"
    assert ranks["LD_LIBRARY_PATH"] == f"{prefix / 'lib'}:/opt/x"
    assert prefix_bin_first(str(wrapper)) is None
    assert measured_file("python3 x.py", {"command": str(wrapper), "args": []}) is None
    if os.path.exists("/usr/bin/mpirun.openmpi"):  # Open MPI 4's mpirun by its path: both
        ranks = rank_environment("/usr/bin/mpirun.openmpi", (), env)
        assert ranks["PATH"].startswith("/usr/bin:") and prefix_bin_first(
            "/usr/bin/mpirun.openmpi") == "/usr/bin"
