"""A program sweep asking more nodes than its launcher reaches is refused before it launches
(:mod:`hpcds1mpi.measure.reachable_nodes`; real launchers, real sweeps on this machine)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from hpcds1mpi.errors import ConfigError
from hpcds1mpi.launch import launchers
from hpcds1mpi.measure.external_plan import build_external_plan
from hpcds1mpi.measure.reachable_nodes import check_nodes_reachable, reachable_nodes
from tests.helpers import hpcds1mpi_exe, system_program

#: Variables that place a process in a batch job (or give an mpiexec hosts): none of the
#: test's own, so the sweep runs as on a workstation.
_BATCH_PREFIXES = ("SLURM_", "PBS_", "LSB_", "HYDRA_", "OMPI_MCA_", "PRTE_MCA_", "PE_HOSTFILE",
                   "COBALT_", "I_MPI_HYDRA_", "FLUX_", "OPAL_", "PRTE_PREFIX")


def _outside_any_allocation() -> dict:
    return {k: v for k, v in os.environ.items() if not k.startswith(_BATCH_PREFIXES)}


def test_the_nodes_a_launcher_reaches_are_read_from_where_it_runs(tmp_path):
    hydra = launchers.HydraMpiexec("mpiexec", ())
    srun = launchers.Srun("pmi2", ())
    here = {"PATH": "/usr/bin"}
    assert reachable_nodes(hydra, here) == (1, "this machine, outside any allocation, is")
    assert reachable_nodes(srun, here) is None  # srun asks Slurm for its own nodes
    slurm = {**here, "SLURM_JOB_ID": "77", "SLURM_JOB_NUM_NODES": "3"}
    for launch in (hydra, srun):
        assert reachable_nodes(launch, slurm) == (3, "this Slurm allocation (77) has")
    assert reachable_nodes(hydra, {**here, "SLURM_JOB_ID": "77"}) is None  # no count: not told
    with pytest.raises(ConfigError, match="SLURM_JOB_NUM_NODES='x' is no node count"):
        reachable_nodes(hydra, {**slurm, "SLURM_JOB_NUM_NODES": "x"})
    for args in (("--hostfile", "hosts"), ("-H", "a,b"), ("--host=a,b",), ("-f", "hosts"),
                 ("-machinefile", "m")):  # hosts given: not told here
        assert reachable_nodes(launchers.HydraMpiexec("mpiexec", args), here) is None, args
    assert reachable_nodes(launchers.HydraMpiexec("mpiexec", ("--bind-to", "core")),
                           here)[0] == 1
    assert reachable_nodes(hydra, {**here, "HYDRA_HOST_FILE": "/h"}) is None
    nodefile = tmp_path / "nodes"
    nodefile.write_text("a\na\nb\nb\n")  # a PBS job of 2 hosts x 2 slots
    assert reachable_nodes(hydra, {**here, "PBS_NODEFILE": str(nodefile)}) == \
        (2, "this PBS job has")


def test_a_plan_on_more_nodes_than_reached_is_one_line_naming_what_to_do():
    hydra = launchers.HydraMpiexec("mpiexec", ())
    here = {"PATH": "/usr/bin"}

    def plan(nodes):
        return build_external_plan("./app {size}", "app", sizes="8", nodes=nodes)

    check_nodes_reachable(plan("1"), hydra, here)  # fits: nothing said
    check_nodes_reachable(plan("4"), launchers.Srun("pmi2", ()), here)  # srun's own: not told
    with pytest.raises(ConfigError) as caught:
        check_nodes_reachable(plan("2"), hydra, here)
    assert str(caught.value) == (
        "--nodes 2 asks for 2 nodes but this machine, outside any allocation, is 1 node: run "
        "the sweep inside `salloc -N 2` (or your cluster's allocation of 2 nodes), or name the "
        "hosts: --launcher-args \"--hostfile FILE\", or drop --nodes 2")
    with pytest.raises(ConfigError, match=r"this Slurm allocation \(9\) has 2 nodes: run the "
                       r"sweep inside `salloc -N 4` .*, or sweep --nodes 1,2 only$"):
        check_nodes_reachable(plan("1,2,4"), hydra,
                              {**here, "SLURM_JOB_ID": "9", "SLURM_NNODES": "2"})


@pytest.mark.mpi
def test_a_two_node_sweep_on_one_machine_is_refused_before_anything_launches(tmp_path):
    """s29 tester A8: ``sweep --command "simpleFoam -parallel" --nodes 2 --ranks-per-node 1
    --mpiexec /usr/bin/mpirun.openmpi`` on one machine outside any allocation launched, and
    every run failed with Open MPI's "more processes than the ppr" (hydra would have run both
    "nodes" here and recorded them as two)."""
    mpirun = system_program("mpirun.openmpi")
    app = tmp_path / "app.py"
    app.write_text("import sys\nprint('size', sys.argv[1])\n")
    out = tmp_path / "two.h5"
    proc = subprocess.run(
        [hpcds1mpi_exe(), "sweep", "--command", f"{sys.executable} {app} {{size}}",
         "--sizes", "3122", "--nodes", "2", "--ranks-per-node", "1", "--mpiexec", mpirun,
         "--out", str(out), "--no-progress", "--max-repeats", "1"],
        env=_outside_any_allocation(), capture_output=True, text=True, timeout=120,
        cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == (
        "hpcds1mpi: error: --nodes 2 asks for 2 nodes but this machine, outside any "
        "allocation, is 1 node: run the sweep inside `salloc -N 2` (or your cluster's "
        "allocation of 2 nodes), or name the hosts: --launcher-args \"--hostfile FILE\", or "
        "drop --nodes 2")
    assert "launch probe" not in proc.stderr and not out.exists()  # nothing launched


def _sweep_here(tmp_path, env: dict, *extra) -> subprocess.CompletedProcess:
    """A one-node program sweep under ``env``, capped (a hang or a memory blow-up fails the
    test, never the machine)."""
    import resource

    app = tmp_path / "app.py"
    app.write_text("import sys\nprint('size', sys.argv[1])\n")

    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (1_000_000_000, 1_000_000_000))

    return subprocess.run(
        [hpcds1mpi_exe(), "sweep", "--command", f"{sys.executable} {app} {{size}}", "--sizes",
         "8", "--out", str(tmp_path / "s.h5"), "--no-progress", "--max-repeats", "1", *extra],
        env={**_outside_any_allocation(), **env}, capture_output=True, text=True, timeout=60,
        cwd=tmp_path, preexec_fn=cap)


@pytest.mark.parametrize("kind", ["fifo", "zero"])
def test_a_pbs_nodefile_that_is_no_file_is_one_line_never_a_hang(tmp_path, kind):
    """s29 tester H3: PBS_NODEFILE=/dev/zero grew memory until a MemoryError traceback, a FIFO
    blocked the sweep forever in open(), before anything launched."""
    path = tmp_path / "fifo"
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path = "/dev/zero"
    proc = _sweep_here(tmp_path, {"PBS_NODEFILE": str(path)}, "--mpiexec",
                       system_program("mpiexec.hydra"))
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines() == [
        f"hpcds1mpi: error: PBS_NODEFILE={str(path)!r} is not a regular file; point it at the "
        "PBS job's node file, or unset PBS_NODEFILE outside a PBS job"]


def test_a_pbs_nodefile_is_read_bounded_and_in_any_encoding(tmp_path, monkeypatch):
    from hpcds1mpi.measure import reachable_nodes as module

    hydra = launchers.HydraMpiexec("mpiexec", ())
    nodefile = tmp_path / "nodes"
    nodefile.write_bytes(b"n\xe9ud1\r\nn\xe9ud1\r\n\nnode2")  # Latin-1, CRLF, no last break
    assert reachable_nodes(hydra, {"PBS_NODEFILE": str(nodefile)}) == (2, "this PBS job has")
    assert reachable_nodes(hydra, {"PBS_NODEFILE": str(tmp_path / "gone")}) is None  # not told
    assert reachable_nodes(hydra, {"PBS_NODEFILE": "a\0b"}) is None
    with pytest.raises(ConfigError, match="is not a regular file"):
        reachable_nodes(hydra, {"PBS_NODEFILE": str(tmp_path)})
    monkeypatch.setattr(module, "NODEFILE_MAX_BYTES", 3 << 20)
    nodefile.write_bytes(b"x" * (4 << 20))  # one huge line, then too large
    with pytest.raises(ConfigError, match=r"^PBS_NODEFILE='.*' has a line over 512 bytes, no "
                       r"host name; point it at"):
        reachable_nodes(hydra, {"PBS_NODEFILE": str(nodefile)})
    nodefile.write_bytes(b"node\n" * (1 << 20))
    with pytest.raises(ConfigError, match=r"is over 3 MiB, too large for a node file"):
        reachable_nodes(hydra, {"PBS_NODEFILE": str(nodefile)})
    nodefile.write_bytes(b"".join(b"n%d\n" % i for i in range(100_001)))
    with pytest.raises(ConfigError, match=r"names more than 100,000 hosts"):
        reachable_nodes(hydra, {"PBS_NODEFILE": str(nodefile)})


@pytest.mark.parametrize("count", ["²", "٣", "9" * 5000, "0", " ", "-1", "1e3"])
def test_a_slurm_node_count_of_other_than_ascii_digits_is_refused_in_one_line(count):
    """s29 tester H4: "²" passed isdigit() and crashed int(); "٣" was read as 3; 5,000 digits
    overran int()'s limit; 0 was taken as an allocation of no nodes."""
    hydra = launchers.HydraMpiexec("mpiexec", ())
    with pytest.raises(ConfigError) as caught:
        reachable_nodes(hydra, {"SLURM_JOB_ID": "1", "SLURM_JOB_NUM_NODES": count})
    message = str(caught.value)
    assert "\n" not in message and len(message) < 300, message
    assert message.startswith("SLURM_JOB_NUM_NODES=") and "is no node count; run the sweep in" \
        " a Slurm allocation that sets it (salloc -N ...)" in message


def test_a_garbled_slurm_node_count_stops_the_sweep_in_one_line(tmp_path):
    """The tester's command line: a traceback before, exit 2 and one line now."""
    proc = _sweep_here(tmp_path, {"SLURM_JOB_ID": "1", "SLURM_JOB_NUM_NODES": "²"},
                       "--cluster", str(Path(__file__).parents[1] / "serve/data/lab.toml"))
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines() == [
        "hpcds1mpi: error: SLURM_JOB_NUM_NODES='²' is no node count; run the sweep in a Slurm "
        "allocation that sets it (salloc -N ...), or unset SLURM_JOB_ID and "
        "SLURM_JOB_NUM_NODES outside one"]


def test_an_odd_job_id_or_host_option_keeps_the_message_on_one_line():
    hydra = launchers.HydraMpiexec("mpiexec", ())
    assert reachable_nodes(hydra, {"SLURM_JOB_ID": "7\n8", "SLURM_NNODES": "2"}) == \
        (2, "this Slurm allocation has")
    assert reachable_nodes(launchers.HydraMpiexec("mpiexec", ("--host=a\nb",)), {}) is None


def _plan(nodes: str):
    return build_external_plan("./app {size}", "app", sizes="8", nodes=nodes)


@pytest.mark.parametrize("variable, value", [
    ("I_MPI_HYDRA_HOST_FILE", "/h"), ("I_MPI_HYDRA_HOSTS", "a,b"), ("HYDRA_HOST_FILE", "/h"),
    ("FLUX_URI", "local:///run/flux/local"), ("FLUX_JOB_ID", "f2Abc"),
    ("LSB_JOBID", "12"), ("LSB_HOSTS", "a a b b"), ("LSB_MCPU_HOSTS", "a 2 b 2"),
    ("LSB_DJOB_HOSTFILE", "/h"), ("PE_HOSTFILE", "/h"), ("COBALT_NODEFILE", "/h"),
    ("OMPI_MCA_orte_default_hostfile", "/h"), ("PRTE_MCA_prte_default_hostfile", "/h"),
    ("OMPI_MCA_orte_default_dash_host", "a,b"), ("OMPI_MCA_mca_base_param_files", "/p"),
    ("OMPI_MCA_ras", "simulator"),
])
def test_a_host_source_the_check_does_not_count_means_not_told(variable, value):
    """s29 R3: an Intel MPI host list, a Flux / LSF / SGE / Cobalt job, an Open MPI host
    parameter each refused a multi-node sweep that would have run; not told now, no check."""
    for launch in (launchers.HydraMpiexec("mpiexec", ()),
                   launchers.OpenMpiMpirun("/nowhere/bin/mpirun", ())):
        assert reachable_nodes(launch, {"PATH": "/usr/bin", variable: value}) is None
        check_nodes_reachable(_plan("1,4"), launch, {"PATH": "/usr/bin", variable: value})
    assert reachable_nodes(launchers.HydraMpiexec("mpiexec", ()),
                           {"PATH": "/usr/bin", variable: ""}) == \
        (1, "this machine, outside any allocation, is")  # set but empty: no host source


@pytest.mark.parametrize("args", [
    "--mca orte_default_hostfile hosts", "-mca orte_default_hostfile hosts",
    "--prtemca prte_default_hostfile hosts", "--gmca orte_default_dash_host a,b",
    "--mca mca_base_param_files p.conf", "--tune p.conf", "--add-hostfile h", "--rankfile r",
    "--bind-to core --hostfile=h", "-hosts a,b", "-configfile c",
])
def test_launcher_args_that_give_hosts_mean_not_told(args):
    """s29 R3: ``--launcher-args "--mca orte_default_hostfile FILE"`` was refused."""
    for cls in (launchers.HydraMpiexec, launchers.OpenMpiMpirun):
        launch = cls("/nowhere/bin/mpirun", launchers.parse_args(args))
        assert reachable_nodes(launch, {"PATH": "/usr/bin"}) is None, (cls, args)
    for other in ("--mca btl self,tcp", "--bind-to core hostfile", "--mca rasx 1"):
        launch = launchers.HydraMpiexec("mpiexec", launchers.parse_args(other))
        assert reachable_nodes(launch, {"PATH": "/usr/bin"})[0] == 1, other


def _open_mpi_prefix(tmp_path: Path, files: dict[str, str]) -> Path:
    """A fake Open MPI installation PREFIX (bin/mpirun and etc/ ``files``); its mpirun."""
    (tmp_path / "bin").mkdir(parents=True)
    (tmp_path / "etc").mkdir()
    mpirun = tmp_path / "bin" / "mpirun"
    mpirun.write_text("#!/bin/sh\n")
    mpirun.chmod(0o755)
    for name, text in files.items():
        (tmp_path / "etc" / name).write_text(text)
    return mpirun


@pytest.mark.parametrize("files", [
    {"openmpi-default-hostfile": "# hosts\nnode1 slots=4\nnode2 slots=4\n"},
    {"prte-default-hostfile": "node1\nnode2\n"},
    {"openmpi-mca-params.conf": "btl = ^openib\norte_default_hostfile = /etc/hosts.mpi\n"},
    {"prte-mca-params.conf": "prte_default_hostfile=/h\n"},
])
def test_an_open_mpi_installation_that_names_hosts_means_not_told(tmp_path, files):
    """s29 R3: Open MPI's etc/openmpi-default-hostfile (or mca-params.conf naming one) gives
    mpirun hosts with no option or variable at all; the sweep was refused."""
    mpirun = _open_mpi_prefix(tmp_path, files)
    here = {"PATH": "/usr/bin", "HOME": str(tmp_path / "home")}
    for launch in (launchers.OpenMpiMpirun(str(mpirun), ()), launchers.Mpiexec(str(mpirun))):
        assert reachable_nodes(launch, here) is None
        check_nodes_reachable(_plan("2"), launch, here)
    on_path = launchers.OpenMpiMpirun("mpirun", ())  # a bare name: found on $PATH
    assert reachable_nodes(on_path, {**here, "PATH": str(mpirun.parent)}) is None
    # hydra has no such files: still refused
    assert reachable_nodes(launchers.HydraMpiexec(str(mpirun), ()), here)[0] == 1


def test_a_user_mca_file_or_opal_prefix_naming_hosts_means_not_told(tmp_path):
    mpirun = _open_mpi_prefix(tmp_path / "ompi", {})
    home = tmp_path / "home"
    (home / ".openmpi").mkdir(parents=True)
    (home / ".openmpi" / "mca-params.conf").write_text("orte_default_hostfile = /h\n")
    launch = launchers.OpenMpiMpirun(str(mpirun), ())
    assert reachable_nodes(launch, {"HOME": str(home)}) is None
    other = tmp_path / "other"
    (other / "etc").mkdir(parents=True)
    (other / "etc" / "openmpi-default-hostfile").write_text("n1\nn2\n")
    assert reachable_nodes(launch, {"OPAL_PREFIX": str(other)}) is None


def test_plain_mpirun_with_no_host_source_is_still_refused(tmp_path, monkeypatch):
    """The check's own case (s29 tester A8) holds: an installation whose default host file is
    comments only, MCA files that set no host parameter, no variable, no host option."""
    mpirun = _open_mpi_prefix(tmp_path, {
        "openmpi-default-hostfile": "# This is the default hostfile for Open MPI.\n\n",
        "openmpi-mca-params.conf": "# orte_default_hostfile = /h\nbtl = ^openib\n"})
    here = {"PATH": "/usr/bin", "HOME": str(tmp_path / "home")}
    for launch in (launchers.OpenMpiMpirun(str(mpirun), ("--bind-to", "core")),
                   launchers.HydraMpiexec("mpiexec", ())):
        assert reachable_nodes(launch, here) == (1, "this machine, outside any allocation, is")
        with pytest.raises(ConfigError, match=r'or name the hosts: --launcher-args "--hostfile '
                           r'FILE", or drop --nodes 2$'):
            check_nodes_reachable(_plan("2"), launch, here)
    # inside an allocation a host file does not help, and is not offered
    with pytest.raises(ConfigError) as caught:
        check_nodes_reachable(_plan("4"), launchers.HydraMpiexec("mpiexec", ()),
                              {**here, "SLURM_JOB_ID": "9", "SLURM_NNODES": "2"})
    assert "--hostfile" not in str(caught.value)


def test_an_installation_file_too_large_is_not_told_and_no_fifo_is_opened(tmp_path,
                                                                          monkeypatch):
    from hpcds1mpi.measure import reachable_nodes as module

    mpirun = _open_mpi_prefix(tmp_path, {"openmpi-mca-params.conf": "# x\n" * 100})
    launch = launchers.OpenMpiMpirun(str(mpirun), ())
    monkeypatch.setattr(module, "INSTALL_FILE_MAX_BYTES", 64)
    assert reachable_nodes(launch, {}) is None
    (tmp_path / "etc" / "openmpi-mca-params.conf").unlink()
    os.mkfifo(tmp_path / "etc" / "openmpi-default-hostfile")  # never opened to block
    assert reachable_nodes(launch, {})[0] == 1


#: Foreign schedulers' job variables that leave the node count unknown (s35 tester X2).
_FOREIGN_JOBS = {
    "lsf": ({"LSB_JOBID": "123", "LSB_HOSTS": "vm vm n9 n9", "LSB_MCPU_HOSTS": "vm 2 n9 2"},
            "LSB_JOBID, LSB_HOSTS, LSB_MCPU_HOSTS"),
    "sge": ({"JOB_ID": "7", "NSLOTS": "4", "PE_HOSTFILE": "pe_hostfile"},
            "JOB_ID, PE_HOSTFILE"),
    "flux": ({"FLUX_URI": "local:///run/flux/local", "FLUX_JOB_ID": "f2Abc"},
             "FLUX_JOB_ID, FLUX_URI"),
}


@pytest.mark.mpi
@pytest.mark.parametrize("job", sorted(_FOREIGN_JOBS))
def test_a_two_node_sweep_whose_ranks_land_on_one_host_is_refused_before_any_run(tmp_path,
                                                                                 job):
    """s35 tester X2: in an LSF (Grid Engine, Flux) job's variables the node count is not told,
    hydra started both ranks of ``--nodes 2`` here, and the run was recorded as 2 nodes."""
    variables, named = _FOREIGN_JOBS[job]
    (tmp_path / "pe_hostfile").write_text("vm 2 all.q@vm UNDEFINED\nn9 2 all.q@n9 UNDEFINED\n")
    ran = tmp_path / "ran"
    app = tmp_path / "app.py"
    app.write_text(f"open({str(ran)!r}, 'a').write('ran\\n')\n")
    out = tmp_path / "two.h5"
    proc = subprocess.run(
        [hpcds1mpi_exe(), "sweep", "--command", f"{sys.executable} {app} {{size}}", "--label",
         "app", "--sizes", "20", "--nodes", "2", "--ranks-per-node", "1", "--max-repeats",
         "1", "--out", str(out), "--no-progress"],
        env={**_outside_any_allocation(), **variables}, capture_output=True, text=True,
        timeout=120, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == (
        f"hpcds1mpi: error: --nodes 2: a launch of 2 ranks, one per node, landed on 1 host "
        f"({os.uname().nodename}); {named} left the node count unknown, so nothing is "
        "recorded as 2 nodes: run the sweep inside the allocation with a launcher that reads "
        "it, give the hosts to the launcher (--launcher-args \"--hostfile FILE\"), or sweep "
        "--nodes 1 only")
    assert not out.exists() and not ran.exists()  # no run recorded, the program never ran


@pytest.mark.mpi
def test_node_counts_are_probed_once_each_and_the_first_short_one_is_refused(tmp_path):
    from hpcds1mpi.measure.reachable_nodes import check_nodes_landed
    from tests.helpers import mpiexec

    hydra = launchers.HydraMpiexec(mpiexec(), ())
    env = {**_outside_any_allocation(), "LSB_JOBID": "5"}
    with pytest.raises(ConfigError, match=r"^--nodes 2: a launch of 2 ranks, one per node, "
                       r"landed on 1 host \(.*\); LSB_JOBID left the node count unknown, .* or "
                       r"sweep --nodes 1 only$"):
        check_nodes_landed(_plan("1,2,4"), hydra, env, cwd_of=lambda spec: str(tmp_path))
    assert check_nodes_landed(_plan("1"), hydra, env) == []  # one node: nothing launched


def test_no_host_probe_runs_where_one_node_is_reached_or_srun_places_the_ranks(tmp_path):
    """A launcher that cannot start (a missing path) proves nothing was launched. Inside an
    allocation of several nodes an mpiexec's layouts are asked too (s36 tester M0: it had
    spread a 1-node configuration over them); srun is given what it asks Slurm for."""
    from hpcds1mpi.errors import LaunchError
    from hpcds1mpi.measure.reachable_nodes import check_nodes_landed

    missing = launchers.HydraMpiexec("/nowhere/bin/mpiexec", ())
    here = {"PATH": "/usr/bin"}
    nodefile = tmp_path / "nodes"
    nodefile.write_text("a\nb\n")
    slurm = {**here, "SLURM_JOB_ID": "9", "SLURM_NNODES": "2", "SLURM_CONF": "/nowhere"}
    assert check_nodes_landed(_plan("1,2"), launchers.Srun("pmi2", ()), slurm) == []
    assert check_nodes_landed(_plan("1,2"), missing, here) == []  # this machine only
    assert check_nodes_landed(_plan("1"), missing, {**slurm, "SLURM_NNODES": "1"}) == []
    for where in (slurm, {**here, "PBS_NODEFILE": str(nodefile)}, {**here, "LSB_JOBID": "5"}):
        with pytest.raises(LaunchError, match="cannot start the launcher /nowhere/bin/mpiexec"):
            check_nodes_landed(_plan("2"), missing, where)


@pytest.mark.mpi
def test_ranks_landing_elsewhere_in_a_pbs_job_name_its_node_file_not_srun(tmp_path):
    """s36 review 6: the refusal always said "drop the placement options from
    --launcher-args, or launch with srun inside a Slurm allocation", in a PBS job too and
    with no launcher options at all; it names the options only where there are any, and in a
    PBS job the job's node file for the launcher."""
    from hpcds1mpi.measure.reachable_nodes import check_nodes_landed
    from tests.helpers import mpiexec

    here = os.uname().nodename
    nodefile = tmp_path / "nodes"
    nodefile.write_text(f"localhost\n{here}\n")  # two names, one machine: hydra stays here
    env = {**_outside_any_allocation(), "PBS_JOBID": "7.pbs", "PBS_NODEFILE": str(nodefile)}
    said = (f"^--nodes 2 --ranks-per-node 1: a launch of 2 ranks, one per node, landed on 1 "
            f"host \\({here}\\); this PBS job has 2 nodes, so nothing is recorded as 2 nodes x "
            "1 rank: ")
    hosts = "give the launcher the job's hosts (--launcher-args \"--hostfile $PBS_NODEFILE\")"
    with pytest.raises(ConfigError) as bare:
        check_nodes_landed(_plan("2"), launchers.HydraMpiexec(mpiexec(), ()), env,
                           cwd_of=lambda spec: str(tmp_path))
    assert re.match(said, str(bare.value)) and str(bare.value).endswith(": " + hosts)
    with pytest.raises(ConfigError) as bound:
        check_nodes_landed(_plan("2"), launchers.HydraMpiexec(mpiexec(), ("-bind-to", "core")),
                           env, cwd_of=lambda spec: str(tmp_path))
    assert str(bound.value).endswith(
        ": drop the placement options from --launcher-args (or the cluster file's "
        f"launcher_args: '-bind-to core'), or {hosts}")
    assert "srun" not in str(bare.value) + str(bound.value)
