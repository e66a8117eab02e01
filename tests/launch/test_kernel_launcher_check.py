"""The kernels' own MPI (this Python's mpi4py) against the launcher `sweep --launch` uses
(s33 tester A9: the MPICH wheel under srun --mpi=pmix had ended "exited 16")."""

from __future__ import annotations

import os
import shutil

import pytest

from hpcds1mpi.errors import ConfigError
from hpcds1mpi.launch.kernel_launcher_check import check_kernel_launcher, mpi4py_library
from hpcds1mpi.launch.launchers import Srun
from hpcds1mpi.launch.own_launcher import mpi4py_mpi
from hpcds1mpi.launch.mpi_names import MPICH

wheel = pytest.mark.skipif(mpi4py_mpi().family != MPICH or mpi4py_library() is None,
                           reason="this Python's mpi4py is not on an MPICH library read here")


def test_the_library_mpi4py_loads_is_found_where_ldd_of_its_extension_finds_none():
    library = mpi4py_library()
    assert library is None or (os.path.isfile(library) and "libmpi" in library)


@wheel
def test_a_pmix_plugin_for_an_mpich_without_pmix_is_refused_naming_pmi2():
    with pytest.raises(ConfigError) as exc:
        check_kernel_launcher(Srun("pmix"), "--mpi pmix")
    words = str(exc.value)
    assert "--mpi pmi2" in words and 'mpi = "pmi2" in the --cluster file' in words
    assert "srun --mpi=pmix (--mpi pmix)" in words and "\n" not in words
    check_kernel_launcher(Srun("pmi2"), "--mpi pmi2")  # the plugin that works: no refusal


@wheel
def test_no_wire_up_is_refused():
    with pytest.raises(ConfigError, match="--mpi=none"):
        check_kernel_launcher(Srun("none"), "--mpi none")


@wheel
@pytest.mark.skipif(shutil.which("srun") is None, reason="no srun here")
def test_a_kernel_sweep_under_srun_pmix_is_refused_before_anything_runs(tmp_path):
    from tests.helpers import run_cli

    cluster = tmp_path / "c.toml"
    cluster.write_text('[clusters.c]\nmpi = "pmix"\n[clusters.c.partitions.debug]\n'
                       'max_nodes = 2\ncores_per_node = 2\nmemory_gb = 4\n')
    for extra in (["--mpi", "pmix"], ["--cluster", str(cluster), "--partition", "debug"]):
        proc = run_cli(["sweep", "--launch", "1", "--kernel", "gemm", "--sizes", "64",
                        "--launcher", "srun", "--out", str(tmp_path / "t.h5"), *extra],
                       timeout=60)
        lines = proc.stderr.strip().splitlines()
        assert proc.returncode == 2 and len(lines) == 1, proc.stderr
        assert "pass --mpi pmi2" in lines[0] and "nothing was launched" in lines[0]
        assert ("(--mpi pmix)" if extra[0] == "--mpi" else
                '(mpi = "pmix" in the --cluster file)') in lines[0]
        assert not (tmp_path / "t.h5").exists()


@wheel
@pytest.mark.skipif(not os.path.exists("/usr/bin/mpirun.openmpi"), reason="no Open MPI mpirun")
def test_another_familys_mpiexec_is_refused_naming_the_launcher_beside_this_python():
    """s42 left: the refusal named Debian's /usr/bin/mpiexec.mpich (first on PATH), another
    MPICH than the wheel the kernels' mpi4py loads; now the mpiexec beside this Python (the
    venv's, the wheel's), whatever PATH holds first."""
    import sys
    from pathlib import Path

    from hpcds1mpi.launch.launchers import local

    beside = Path(sys.executable).parent / "mpiexec"
    if not beside.exists():
        pytest.skip("no mpiexec beside this Python")
    env = dict(os.environ, PATH="/usr/bin:/bin:" + os.environ.get("PATH", ""))
    with pytest.raises(ConfigError) as refused:
        check_kernel_launcher(local("mpiexec", mpiexec="/usr/bin/mpirun.openmpi"), "the default",
                              env=env, mpiexec_from="mpiexec in the --cluster file")
    line = str(refused.value)
    assert "/usr/bin/mpirun.openmpi is Open MPI's launcher" in line and "\n" not in line
    assert line.endswith(f"; set mpiexec in the --cluster file to {beside}; nothing was launched")
