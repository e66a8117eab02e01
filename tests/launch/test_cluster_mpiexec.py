"""The cluster file's mpiexec as a job script's launcher: left unused by srun, or not there."""

from __future__ import annotations

import pytest

from hpcds1mpi.cluster import Cluster, load_cluster
from hpcds1mpi.errors import ConfigError
from hpcds1mpi.launch.launchers import for_script
from hpcds1mpi.launch.script_launcher import check_launch

CLUSTER = """[clusters.lab]
launcher = "{launcher}"
mpiexec = "{mpiexec}"
[clusters.lab.partitions.local]
cores_per_node = 2
memory_gb = 25.3
max_nodes = 2
"""


def test_an_mpiexec_left_unused_by_the_files_own_srun_launcher_is_said_so():
    """s41 tester B11: with ``launcher = "srun"`` and an ``mpiexec``, the note said the file
    "names no launcher" and to set launcher = "mpiexec" "too"."""
    from hpcds1mpi.launch.cluster_mpiexec import ignored_mpiexec

    site = Cluster("site", launcher="srun", mpiexec="/opt/mpi/bin/mpiexec")
    said = ignored_mpiexec(for_script("slurm", site), site)
    assert said == ("the cluster file's mpiexec = '/opt/mpi/bin/mpiexec' is not used: its "
                    'launcher = "srun" launches the script; to launch with that mpiexec set '
                    'launcher = "mpiexec" instead, or drop mpiexec'), said
    assert "names no launcher" in ignored_mpiexec(
        for_script("slurm", Cluster("site", mpiexec="/opt/mpi/bin/mpiexec")),
        Cluster("site", mpiexec="/opt/mpi/bin/mpiexec"))


@pytest.mark.parametrize("scheduler", ["slurm", "pbs"])
@pytest.mark.parametrize("what, why, code", [
    ("missing", "does not exist", 127), ("folder", "is a folder", 126),
    ("plain", "is not executable", 126)])
def test_a_cluster_files_mpiexec_that_is_no_executable_here_is_refused(tmp_path, scheduler,
                                                                       what, why, code):
    """s41 tester B12: ``mpiexec = "/nonexistent/bin/mpirun"`` was written into the script
    with only a note that the program "may run otherwise" under it; the job exits 127. Its
    folder is here, so the path can be looked for (one whose folder is not: a note)."""
    paths = {"missing": tmp_path / "mpirun", "folder": tmp_path,
             "plain": tmp_path / "mpirun.txt"}
    paths["plain"].write_text("not a launcher\n")
    file = tmp_path / "lab.toml"
    file.write_text(CLUSTER.format(launcher="mpiexec", mpiexec=paths[what]))
    cluster = load_cluster(file)
    with pytest.raises(ConfigError) as err:
        check_launch(["./app"], for_script(scheduler, cluster), cluster, scheduler=scheduler)
    assert str(err.value) == (
        f"{file}: mpiexec = '{paths[what]}' of cluster 'lab' {why} on this machine, so the "
        f"job would stop at its launch line (exit {code}); set mpiexec to the path of the "
        "site's launcher (`which mpiexec` on a node), or drop it to launch with the mpiexec "
        "the job's PATH finds")


@pytest.mark.parametrize("scheduler", ["slurm", "pbs"])
def test_an_mpiexec_in_a_folder_not_on_this_machine_is_written_with_a_note(tmp_path, scheduler):
    """s41 review F9: a cluster file describes the target cluster, whose launcher may sit in
    a folder only its nodes mount; it was refused as "does not exist on this machine", where
    a program path in a folder not here is left to the job (program_there.py)."""
    mpiexec = "/apps/nowhere-s41/openmpi/bin/mpiexec"
    file = tmp_path / "lab.toml"
    file.write_text(CLUSTER.format(launcher="mpiexec", mpiexec=mpiexec))
    cluster = load_cluster(file)
    note = check_launch(["./app"], for_script(scheduler, cluster), cluster,
                        scheduler=scheduler)
    assert (f"{file}: mpiexec = '{mpiexec}' of cluster 'lab' is not checked here (its folder "
            "'/apps/nowhere-s41/openmpi/bin' is not on this machine): the job runs it as "
            "written; if the job stops at its launch line (exit 127), set mpiexec to the "
            "site's launcher (`which mpiexec` on a node)") in note, note


def test_an_mpiexec_srun_leaves_unused_or_a_bare_name_is_not_refused(tmp_path):
    from hpcds1mpi.launch.cluster_mpiexec import missing_mpiexec

    for launcher, mpiexec in (("srun", tmp_path / "none"), ("mpiexec", "mpirun.none")):
        file = tmp_path / "c.toml"
        file.write_text(CLUSTER.format(launcher=launcher, mpiexec=mpiexec))
        cluster = load_cluster(file)
        assert missing_mpiexec(for_script("slurm", cluster), cluster) == ""


@pytest.mark.parametrize("what, why", [("missing", "does not exist"), ("folder", "is a folder"),
                                       ("plain", "is not executable")])
def test_a_sweeps_cluster_file_mpiexec_that_is_no_executable_here_is_refused_first(
        tmp_path, what, why):
    """s41: ``sweep --command --cluster FILE`` refused such an mpiexec without naming the file
    or the cluster ("the cluster file's mpiexec ... not found"); now as recommend refuses it,
    in one line, exit 2, before any launch (the program never ran, no telemetry file)."""
    from tests.helpers import run_cli

    paths = {"missing": tmp_path / "nonexistent" / "mpirun", "folder": tmp_path,
             "plain": tmp_path / "mpirun.txt"}
    paths["plain"].write_text("not a launcher\n")
    file = tmp_path / "lab.toml"
    file.write_text(CLUSTER.format(launcher="mpiexec", mpiexec=paths[what]))
    app = tmp_path / "app.sh"
    app.write_text(f"#!/bin/sh\ntouch {tmp_path}/ran\necho time 0.01\n")
    app.chmod(0o755)
    out = tmp_path / "o.h5"
    proc = run_cli(["sweep", "--cluster", str(file), "--command", f"{app} {{size}}", "--label",
                    "app", "--sizes", "1", "--time-regex", r"time ([0-9.]+)", "--out", str(out)],
                   timeout=120)
    assert proc.returncode == 2, proc.stderr
    [line] = proc.stderr.strip().splitlines()
    assert line.startswith(f"hpcds1mpi: error: {file}: mpiexec = '{paths[what]}' of cluster "
                           f"'lab' {why} on this machine, so the sweep can launch nothing with "
                           "it; set mpiexec to the path of an MPI launcher here"), line
    assert not out.exists() and not (tmp_path / "ran").exists()


@pytest.mark.parametrize("scheduler", ["slurm", "pbs"])
def test_a_bare_mpiexec_name_on_no_path_is_written_with_a_note(tmp_path, scheduler):
    """s42: a bare ``mpiexec = "NAME"`` on no PATH was written unchecked; the job may run on
    another machine, so it is said as a path in a folder not here is, not refused."""
    file = tmp_path / "lab.toml"
    file.write_text(CLUSTER.format(launcher="mpiexec", mpiexec="mpirun-nowhere-s42"))
    cluster = load_cluster(file)
    note = check_launch(["./app"], for_script(scheduler, cluster), cluster, scheduler=scheduler)
    assert (f"{file}: mpiexec = 'mpirun-nowhere-s42' of cluster 'lab' is not found on the "
            "job's PATH on this machine: the job runs it as written; if the job stops at its "
            "launch line (exit 127), set mpiexec to the path of the site's launcher (`which "
            "mpirun-nowhere-s42` on a node)") in note, note
    found = tmp_path / "c.toml"
    found.write_text(CLUSTER.format(launcher="mpiexec", mpiexec="mpiexec"))  # on PATH: no note
    here = load_cluster(found)
    assert "not found on the job's PATH" not in check_launch(
        ["./app"], for_script(scheduler, here), here, scheduler=scheduler)


def test_open_mpis_mpirun_by_bare_name_for_the_kernels_is_refused(tmp_path, monkeypatch):
    """s42: ``mpiexec = "mpirun.openmpi"`` for a kernel script (``hpcds1mpi run``) was
    written without a word where this PATH does not hold hpcds1mpi (the script puts its bin
    first), though ``hpcds1mpi run`` refuses to start under Open MPI (its mpi4py is MPICH's)."""
    import shutil

    from hpcds1mpi.launch.own_install import own_executable
    from hpcds1mpi.launch.own_launcher import mpi4py_mpi

    if not shutil.which("mpirun.openmpi") or not own_executable()[1] or \
            mpi4py_mpi().family != "mpich":
        pytest.skip("needs Open MPI's mpirun.openmpi and this Python's MPICH mpi4py")
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # hpcds1mpi on no PATH of the writer's
    file = tmp_path / "lab.toml"
    file.write_text(CLUSTER.format(launcher="mpiexec", mpiexec="mpirun.openmpi"))
    cluster = load_cluster(file)
    kernel = ["hpcds1mpi", "run", "stencil", "--size", "40"]
    with pytest.raises(ConfigError) as err:
        check_launch(kernel, for_script("slurm", cluster), cluster)
    assert "hpcds1mpi is linked against the MPICH family" in str(err.value)
    assert "the script's mpirun.openmpi (here /usr/bin/mpirun.openmpi" in str(err.value)
    assert "\n" not in str(err.value)
    said = check_launch(kernel, for_script("pbs", cluster), cluster, scheduler="pbs")
    assert said.startswith("warning: hpcds1mpi is linked against the MPICH family"), said
    file.write_text(CLUSTER.format(launcher="mpiexec", mpiexec="mpiexec"))  # the wheel's first
    bare = load_cluster(file)
    assert check_launch(kernel, for_script("slurm", bare), bare) == ""
