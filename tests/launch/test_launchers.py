"""Launchers: one class per launcher, the same tokens for local launches and batch scripts."""

from __future__ import annotations

import os

import pytest

from hpcds1mpi.cluster import Cluster, Partition
from hpcds1mpi.config import Configuration
from hpcds1mpi.errors import ConfigError, LaunchError
from hpcds1mpi.launch import launcher_discovery, launchers
from hpcds1mpi.launch.open_mpi_binding import UNBIND_OPEN_MPI


def test_srun_tokens_are_the_same_here_and_in_a_script():
    config = Configuration(2, 4, 3)
    tokens = launchers.local("srun").tokens(config)
    assert tokens == ["srun", "--nodes=2", "--ntasks=8", "--ntasks-per-node=4", "-c", "3",
                      "--cpu-bind=cores", "--kill-on-bad-exit=1", "--mpi=pmi2"]
    assert launchers.for_script("slurm").tokens(config) == tokens
    no_plugin = launchers.local("srun", mpi="").tokens(Configuration(1, 1, 1))
    assert not any(t.startswith("--mpi") for t in no_plugin)
    assert launchers.Srun().binds_cores and not launchers.Mpiexec().binds_cores


def test_mpiexec_tokens_one_and_many_nodes(monkeypatch):
    """s36 tester M0: the sweep's hydra and mpirun are given the ranks per node at one node
    too (in an allocation of several nodes they had spread a 1-node configuration's ranks one
    per node); a batch script's job holds its configuration's nodes only."""
    assert launchers.local("mpiexec", mpiexec="/x/mpiexec").tokens(
        Configuration(1, 4, 2)) == ["/x/mpiexec", "-n", "4", "-ppn", "4"]
    assert launchers.HydraMpiexec("/x/mpiexec").tokens(Configuration(1, 4, 2)) == \
        ["/x/mpiexec", "-n", "4"]
    monkeypatch.setattr(launcher_discovery, "mpiexec_flavor", lambda path: "hydra")
    assert isinstance(launchers.local("mpiexec", mpiexec="/x/mpiexec"), launchers.HydraMpiexec)
    assert launchers.local("mpiexec", mpiexec="/x/mpiexec").tokens(
        Configuration(2, 3, 1)) == ["/x/mpiexec", "-n", "6", "-ppn", "3"]
    monkeypatch.setattr(launcher_discovery, "mpiexec_flavor", lambda path: "openmpi")
    assert isinstance(launchers.local("mpiexec", mpiexec="/x/mpiexec"), launchers.OpenMpiMpirun)
    assert launchers.local("mpiexec", mpiexec="/x/mpiexec").tokens(
        Configuration(2, 3, 1))[-2:] == ["--map-by", "ppr:3:node"]
    for config, mapping in ((Configuration(1, 3, 1), "ppr:3:node"),
                            (Configuration(1, 2, 2), "ppr:2:node:PE=2")):
        assert launchers.local("mpiexec", mpiexec="/x/mpiexec", cores=4).tokens(
            config)[-2:] == ["--map-by", mapping]
    own = launchers.local("mpiexec", mpiexec="/x/mpiexec", args=("--map-by", "core"))
    assert "ppr:1:node" not in own.tokens(Configuration(1, 1, 1))  # the user's placement


def test_script_launcher_from_the_cluster_file():
    part = Partition("p", cores_per_node=8, memory_gb=8, max_nodes=2)
    site = Cluster(name="s", partitions={"p": part}, mpi="pmix")
    assert launchers.for_script("slurm", site) == launchers.Srun("pmix")
    assert launchers.for_script("pbs", site).tokens(Configuration(2, 4, 2)) == \
        ["mpiexec", "-n", "8"]
    mpirun = Cluster(name="s", partitions={"p": part}, launcher="mpirun")
    assert launchers.for_script("slurm", mpirun).tokens(Configuration(1, 2, 1)) == \
        ["mpirun", "-n", "2"]
    with pytest.raises(ConfigError, match="unknown"):
        launchers.for_script("slurm", Cluster(name="s", partitions={"p": part}, launcher="aprun"))
    with pytest.raises(ConfigError):
        launchers.for_script("lsf")


def test_detect_inside_and_outside_slurm(monkeypatch):
    # no squeue: job 7 cannot be asked about and is believed (leftovers: test_slurm_allocation)
    monkeypatch.setattr(launcher_discovery.shutil, "which",
                        lambda name, **_: None if name == "squeue" else f"/usr/bin/{name}")
    assert launcher_discovery.detect({"SLURM_JOB_ID": "7"}) == "srun"
    assert launcher_discovery.detect({}) == "mpiexec"
    monkeypatch.setattr(launcher_discovery.shutil, "which", lambda name, **_: None)
    assert launcher_discovery.detect({"SLURM_JOB_ID": "7"}) == "mpiexec"  # no srun on PATH


def test_unknown_launcher_and_environment():
    with pytest.raises(LaunchError, match="unknown launcher"):
        launchers.local("aprun")
    env = launchers.Srun().environment(Configuration(1, 1, 4, "cpu", "fp32"))
    assert env["OMP_NUM_THREADS"] == "4" and env["HPCDS1MPI_PRECISION"] == "fp32"
    assert env["OMP_PROC_BIND"] == "close"
    assert "OMP_PROC_BIND" not in launchers.Mpiexec().environment(Configuration(1, 1, 4))


def test_venv_mpiexec_found_and_flavor():
    path = launcher_discovery.mpiexec_path()
    assert path.endswith("mpiexec")
    assert launcher_discovery.mpiexec_flavor(path) == "hydra"  # the mpich wheel
    assert launchers.local("srun").total_tokens(3) == ["srun", "-n", "3", "--mpi=pmi2"]
    assert launchers.local("mpiexec").total_tokens(3) == [path, "-n", "3"]
    assert launchers.library_version(path).startswith("mpiexec ")


def test_the_version_is_asked_once_per_path(tmp_path, monkeypatch):
    calls = []
    real_run = launcher_discovery.subprocess.run

    def counting_run(argv, **kw):
        calls.append(argv)
        return real_run(["echo", "Open MPI 5.0"], **kw)

    monkeypatch.setattr(launcher_discovery.subprocess, "run", counting_run)
    path = str(tmp_path / "mpiexec")
    assert launcher_discovery.mpiexec_flavor(path) == "openmpi"
    assert launchers.library_version(path) == "mpiexec Open MPI 5.0"
    launchers.local("mpiexec", mpiexec=path)
    assert calls == [[path, "--version"]]


def test_a_launcher_script_is_asked_again_under_another_path(tmp_path, monkeypatch):
    """s35 fixer L4: Intel MPI's bin/mpirun runs mpiexec.hydra as PATH finds it; the cached
    --version of the first PATH named the family of a launcher PATH no longer finds."""
    from hpcds1mpi.launch.mpi_family import launcher_family

    script = tmp_path / "intel" / "mpirun"  # a wrapper as Intel's: the real one by bare name
    script.parent.mkdir()
    script.write_text('#!/bin/sh\nexec mpiexec.hydra "$@"\n')
    script.chmod(0o755)
    banners = {"hydra": "HYDRA build details:", "ompi": "mpirun (Open MPI) 4.1.4"}
    for name, banner in banners.items():
        (tmp_path / name).mkdir()
        real = tmp_path / name / "mpiexec.hydra"
        real.write_text(f"#!/bin/sh\necho '{banner}'\n")
        real.chmod(0o755)
    system = os.environ["PATH"]
    monkeypatch.setenv("PATH", f"{tmp_path / 'hydra'}:{system}")
    assert launcher_family(str(script)) == "mpich"
    monkeypatch.setenv("PATH", f"{tmp_path / 'ompi'}:{system}")
    assert launcher_family(str(script)) == "openmpi"  # was "mpich", the first PATH's answer
    assert launcher_discovery.mpiexec_flavor(str(script)) == "openmpi"


def test_a_launcher_that_cannot_run_is_unknown_in_the_fingerprint(tmp_path):
    # The fingerprint (mpi_library -> machine_id) has said "unknown" for this case since it began.
    missing = str(tmp_path / "no-such-mpiexec")
    assert launchers.library_version(missing) == "unknown"
    assert launcher_discovery.mpiexec_flavor(missing) == "hydra"


def test_a_help_box_before_or_instead_of_the_version_is_not_the_version(tmp_path):
    """s40: the PyPI Open MPI 5 wheel's prterun, which cannot find its help files, answers
    --version with a help box framed by dashes; the fingerprint recorded the frame as the
    launcher's version. The version line is the one with a version number; none: unknown."""
    box = ("-" * 74 + "\nSorry!  You were supposed to get help about:\n    version\n"
           "But I couldn't open the help file:\n    /opt/openmpi/share/prte/help-prterun.txt: "
           "No such file or directory.\nSorry!\n" + "-" * 74 + "\n")
    for name, text, expected in (
            ("prterun", box, "prterun unknown"),
            ("prte", box + "prte (PRRTE) 3.0.14\n\nReport bugs to: https://github.com/openpmix/"
             "prrte\n", "prte prte (PRRTE) 3.0.14"),
            ("mpiexec", "HYDRA build details:\n    Version:        4.2.0\n", "mpiexec Version:"
             "        4.2.0")):
        (tmp_path / name).write_text(f"#!/bin/sh\ncat <<'EOF'\n{text}EOF\n")
        (tmp_path / name).chmod(0o755)
        assert launchers.library_version(str(tmp_path / name)) == expected


def test_one_scheduler_check_for_scripts_and_launchers():
    from hpcds1mpi.errors import ConfigError

    with pytest.raises(ConfigError, match="--emit must be one of slurm, pbs, got 'lsf'"):
        launchers.for_script("lsf")
    assert launchers.check_scheduler("pbs") == "pbs"


def test_launcher_args_follow_the_launchers_own_options_everywhere():
    config = Configuration(1, 2, 1)
    srun = launchers.local("srun", mpi="pmix", args=("--overlap",))
    assert srun.tokens(config)[-2:] == ["--mpi=pmix", "--overlap"]
    assert srun.total_tokens(2)[-1] == "--overlap"
    hydra = launchers.local("mpiexec", mpiexec=launcher_discovery.mpiexec_path(), args=("-l",))
    assert hydra.tokens(config)[1:] == ["-n", "2", "-ppn", "2", "-l"]  # s36 tester M0
    assert launchers.parse_args("--mca btl 'self,vader'") == ("--mca", "btl", "self,vader")
    with pytest.raises(ConfigError, match="cannot be parsed.*fix its quoting"):
        launchers.parse_args("--bind-to 'core")
    with pytest.raises(ConfigError, match="control character"):
        launchers.parse_args("-l\nrm -rf /")


def test_open_mpi_root_and_oversubscription_are_explicit_and_said():
    ompi = launchers.OpenMpiMpirun("/usr/bin/mpirun.openmpi", as_root=True, cores=2)
    assert ompi.tokens(Configuration(1, 2, 1)) == ["/usr/bin/mpirun.openmpi", "-n", "2",
                                                   "--allow-run-as-root"]
    assert ompi.tokens(Configuration(1, 4, 1))[3:] == ["--allow-run-as-root", "--oversubscribe"]
    notes = ompi.notes(Configuration(1, 4, 1))
    assert any("--allow-run-as-root" in n for n in notes)
    assert any("4 ranks on a node of 2 cores" in n and "--oversubscribe" in n for n in notes)
    user = launchers.OpenMpiMpirun("mpirun", as_root=False, cores=None)
    assert user.tokens(Configuration(1, 64, 1)) == ["mpirun", "-n", "64"] and not user.notes(
        Configuration(1, 64, 1))
    import os

    mpirun = launchers.local(mpiexec="/usr/bin/mpirun.openmpi", cores=2)
    if os.path.exists("/usr/bin/mpirun.openmpi"):
        assert isinstance(mpirun, launchers.OpenMpiMpirun)
        assert mpirun.as_root == (os.geteuid() == 0)


def test_the_cluster_files_launcher_settings_reach_the_script_launcher():
    part = Partition("p", cores_per_node=8, memory_gb=8, max_nodes=2)
    site = Cluster(name="s", partitions={"p": part}, launcher="mpirun",
                   mpiexec="/opt/ompi/bin/mpirun", launcher_args="--bind-to core")
    assert launchers.for_script("pbs", site).tokens(Configuration(1, 2, 1)) == \
        ["/opt/ompi/bin/mpirun", "-n", "2", "--bind-to", "core"]
    assert launchers.for_script("pbs", site).script_lines(Configuration(1, 2, 1))[0].startswith(
        'if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1')
    srun = Cluster(name="s", partitions={"p": part}, mpi="pmix", launcher_args="--overlap")
    assert launchers.for_script("slurm", srun).tokens(Configuration(1, 2, 1))[-2:] == \
        ["--mpi=pmix", "--overlap"]
    assert launchers.for_script("slurm", srun).script_lines(Configuration(1, 2, 2)) == []


def test_open_mpi_gives_each_rank_the_cores_of_its_threads():
    """Open MPI's mpirun binds a rank to one core (2 ranks or fewer): T threads shared it, and
    the thread dimension was recorded ok while measuring nothing (s25 tester B 2)."""
    def ompi(cores, args=()):
        return launchers.OpenMpiMpirun("mpirun", tuple(args), as_root=False, cores=cores)

    fits, crowded = Configuration(1, 1, 2), Configuration(1, 2, 2)
    assert ompi(2).tokens(fits) == ["mpirun", "-n", "1", "--map-by", "slot:PE=2"]
    assert ompi(2).tokens(crowded) == ["mpirun", "-n", "2", "--bind-to", "none"]
    assert ompi(None).tokens(fits)[-2:] == ["--bind-to", "none"]  # cores unknown: PE may not fit
    assert ompi(8).tokens(Configuration(2, 2, 2))[-2:] == ["--map-by", "ppr:2:node:PE=2"]
    assert ompi(2).tokens(Configuration(2, 2, 2))[-4:] == ["--map-by", "ppr:2:node",
                                                            "--bind-to", "none"]
    assert ompi(2).tokens(Configuration(1, 2, 1)) == ["mpirun", "-n", "2"]  # one thread: its own
    # Said and recorded, as --oversubscribe is; the threads follow their rank's cores.
    assert any("--map-by slot:PE=2 (each rank bound to 2 cores" in n for n in ompi(2).notes(fits))
    assert any("2 ranks x 2 threads on a node of 2 cores" in n and "--bind-to none" in n
               for n in ompi(2).notes(crowded))
    assert ompi(2).binding(fits) == "mpiexec --map-by slot:PE=2"
    assert ompi(2).environment(fits)["OMP_PROC_BIND"] == "close"
    assert "OMP_PROC_BIND" not in ompi(2).environment(crowded)
    # The user's own placement or binding: nothing added, and the binding says whose it is.
    for own in (["--bind-to", "core"], ["--map-by=socket"], ["-bind-to", "none"],
                ["--mca", "hwloc_base_binding_policy", "none"], ["--cpus-per-rank", "2"]):
        assert ompi(2, own).tokens(fits) == ["mpirun", "-n", "1", *own], own
        assert not ompi(2, own).notes(fits) and "user's launcher options" in \
            ompi(2, own).binding(fits)


def test_open_mpis_mpirun_really_gives_a_rank_the_cores_of_its_threads():
    import os
    import subprocess
    import sys

    from tests.helpers import system_program

    mpirun = system_program("mpirun.openmpi")
    cores = len(os.sched_getaffinity(0))
    if cores < 2:
        pytest.skip("one CPU here")
    config = Configuration(1, 1, 2)
    launch = launchers.local(mpiexec=mpirun, cores=cores)
    cpus = subprocess.run(
        [*launch.tokens(config), sys.executable, "-c",
         "import os; print(len(os.sched_getaffinity(0)))"], capture_output=True, text=True,
        timeout=120, env={**os.environ, **launch.environment(config)})
    assert cpus.stdout.strip() == "2", cpus.stderr  # was 1: both threads on one core


def test_an_mpiexec_of_unknown_flavour_keeps_a_ranks_threads_off_one_core():
    """A bare mpiexec that is Open MPI's bound each rank to one core, which its threads
    shared (tester V 7): the script unbinds Open MPI's ranks by a variable MPICH ignores."""
    part = Partition("p", cores_per_node=2, memory_gb=8, max_nodes=2)
    bare = launchers.for_script("pbs", Cluster(name="s", partitions={"p": part}), cores=2)
    lines = bare.script_lines(Configuration(1, 1, 2))
    assert f"export {UNBIND_OPEN_MPI}=none" in lines
    assert any(line.startswith("# 2 threads per rank: if the launcher below is Open MPI's") and
               "--map-by slot:PE=2" in line for line in lines)
    # one thread: Open MPI's own core binding is right; the user's binding options win
    assert not any(UNBIND_OPEN_MPI in line
                   for line in bare.script_lines(Configuration(1, 2, 1)))
    own = Cluster(name="s", partitions={"p": part}, launcher_args="--bind-to core")
    assert not any(UNBIND_OPEN_MPI in line for line in
                   launchers.for_script("pbs", own).script_lines(Configuration(1, 1, 2)))
    # a known flavour needs no guess: Open MPI gets its options, hydra binds nothing
    for known in (launchers.OpenMpiMpirun("mpirun", cores=2), launchers.HydraMpiexec()):
        assert not any(UNBIND_OPEN_MPI in line
                       for line in known.script_lines(Configuration(1, 1, 2)))


@pytest.mark.parametrize("family", ["mpirun.openmpi", "mpirun.mpich"])
def test_a_bare_mpiexec_script_gives_a_rank_its_threads_cores_under_either_mpi(family, tmp_path,
                                                                               monkeypatch):
    """Run the script's lines with ``mpiexec`` resolving to each real MPI here: Open MPI's
    rank had one CPU (its default core binding), MPICH's has the node's either way."""
    import os
    import subprocess
    import sys

    from hpcds1mpi.launch import scripts as batch
    from hpcds1mpi.launch.directives import BatchJob
    from tests.helpers import system_program

    cores = len(os.sched_getaffinity(0))
    if cores < 2:
        pytest.skip("one CPU here")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    # A wrapper, not a link: hydra looks for its proxy next to the name it was started as.
    real = os.path.realpath(system_program(family))
    (bin_dir / "mpiexec").write_text(f'#!/bin/sh\nexec {real} "$@"\n')
    (bin_dir / "mpiexec").chmod(0o755)
    part = Partition("p", cores_per_node=cores, memory_gb=8, max_nodes=1)
    job = BatchJob(config=Configuration(1, 1, 2), partition=part, cluster=Cluster(
        name="s", partitions={"p": part}), job_name="j", time_limit_s=600,
        # a program of no MPI (a Python's would be checked against the script's mpiexec)
        program=["awk", "/^Cpus_allowed_list/ {print $2}", "/proc/self/status"])
    script = tmp_path / "job.pbs"
    # the script is written where the job's PATH is this one (its bare mpiexec is checked there)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    script.write_text(batch.render(job, "pbs"))
    done = subprocess.run(["bash", str(script)], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PBS_O_WORKDIR": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    allowed = [range(int(a), int(b or a) + 1) for a, _, b in
               (span.partition("-") for span in done.stdout.strip().split(","))]
    assert sum(map(len, allowed)) == cores  # Open MPI was 1: both threads on core 0
