"""A launch's host list spelled as the other MPI family's launcher spells it (session 41's left
list: hydra's -H and Open MPI's --hosts were not warned of)."""

from __future__ import annotations

import pytest

from hpcds1mpi.decide.advise_launch import text_only_checks
from hpcds1mpi.launch.host_spelling import host_spelling_warning
from hpcds1mpi.launch.mpi_names import MPICH, OPENMPI
from hpcds1mpi.launch.recorded_mpi import RecordedMPI
from hpcds1mpi.launch.launch_line_checks import launch_checks, launch_family
from hpcds1mpi.launch.script_reading import read_script

SCRIPT = "#!/bin/bash\n#SBATCH -N 2\n#SBATCH -t 30\n{launch} ./heat 2000 100\n"


@pytest.mark.parametrize("launch, said", [
    # measured: MPICH 5.0.2's mpiexec prints its usage for -H, Intel MPI's refuses it
    ("mpiexec.hydra -H n1,n2 -n 2", "line 4: mpiexec.hydra -H n1,n2: hydra's mpiexec (MPICH, "
     "Intel MPI) has no -H: MPICH's mpiexec and mpirun and Intel MPI's mpirun print the usage "
     "and exit 0 having run nothing, Intel MPI's mpiexec stops (unrecognized argument H); give "
     "-hosts n1,n2"),
    # measured: Open MPI 4.1.4 stops at an unknown option for --hosts and -hosts
    ("mpirun.openmpi --hosts n1,n2 -n 2", "line 4: mpirun.openmpi --hosts n1,n2: Open MPI's "
     "mpirun has no --hosts: it stops (unknown option); give --host n1,n2"),
    ("mpirun.openmpi -n 2 -hosts n1:2", "line 4: mpirun.openmpi -hosts n1:2: Open MPI's mpirun "
     "has no -hosts: it stops (unknown option); give --host n1:2"),
    ("orterun --hosts=n1,n2", "line 4: orterun --hosts=n1,n2: Open MPI's mpirun has no "
     "--hosts: it stops (unknown option); give --host n1,n2")])
def test_a_host_list_its_launcher_refuses_is_warned_of_with_its_spelling(launch, said):
    script = read_script(SCRIPT.format(launch=launch))
    assert host_spelling_warning(script, script.launch,
                                 launch_family(script, script.launch)) == said
    # in a job, with the job's nodes unused, said once: a clause of host_list_warning's line
    written, rest = said.split(": ", 1)[1].split(": ", 1)
    does, right = rest.rsplit("; give ", 1)
    [line] = [w for w in text_only_checks(script) if written in w]
    assert "or build it from the job's nodes" in line
    assert line.endswith(f"; kept, it would be {right}: {does}")


def test_a_continued_host_option_is_said_on_one_line_and_once():
    """A `\\`-continued -H put a newline and the indent inside both warnings, and the job's
    host-list warning ("drop -H") and the spelling one ("give -hosts") were two (s43 review
    R12)."""
    script = read_script(SCRIPT.format(launch="mpiexec.hydra -H \\\n   n1,n2 -n 2"))
    warnings = text_only_checks(script)
    [line] = [w for w in warnings if "-H" in w]
    assert "\n" not in line and "\\" not in line
    assert line.startswith("line 4: mpiexec.hydra -H n1,n2 runs the ranks on the nodes that "
                           "host list names")
    assert "kept, it would be -hosts n1,n2: hydra's mpiexec" in line


@pytest.mark.parametrize("launch", [
    # what each takes (measured): hydra -host, -hosts, --host, --hosts; Open MPI -H, -host, --host
    "mpiexec.hydra -hosts n1,n2", "mpiexec.hydra --hosts n1,n2", "mpiexec.hydra -host n1,n2",
    "mpiexec.hydra --host n1,n2", "mpirun.openmpi -H n1,n2", "mpirun.openmpi --host n1,n2",
    "mpirun.openmpi -host n1,n2",
    # a launcher whose name does not tell its MPI: nothing said from the text alone
    "mpirun -H n1,n2", "mpiexec --hosts n1,n2"])
def test_a_spelling_its_launcher_takes_is_not(launch):
    script = read_script(SCRIPT.format(launch=launch))
    assert not any("has no" in w for w in text_only_checks(script))


def test_the_recorded_sweeps_mpi_tells_a_plain_launchers_family(tmp_path):
    """An `mpiexec` whose file is not here: the MPI its program's sweep ran with says."""
    script = read_script(SCRIPT.format(launch="/opt/none/bin/mpiexec -H n1,n2 -n 2"))
    recorded = RecordedMPI(MPICH, "/opt/x/bin/mpiexec", "the sweep's launcher")
    warnings = launch_checks(script, str(tmp_path), measured=(4, recorded))[0]
    assert any(w.startswith("line 4: mpiexec -H n1,n2 ") and "kept, it would be -hosts n1,n2: "
               "hydra's mpiexec (MPICH, Intel MPI) has no -H" in w for w in warnings)
    assert host_spelling_warning(script, script.launch, OPENMPI) is None  # Open MPI takes -H


def _install(tmp_path, intel: bool):
    """A hydra install's bin folder: mpiexec.hydra, mpiexec, mpirun (and Intel's impi_info)."""
    folder = tmp_path / ("intel" if intel else "mpich") / "bin"
    folder.mkdir(parents=True)
    for name in ("mpiexec.hydra", "mpiexec", "mpirun") + (("impi_info",) if intel else ()):
        (folder / name).write_text("#!/bin/sh\n")
    return folder


@pytest.mark.parametrize("intel, name, said", [
    # measured (s43 tester J5): Intel MPI's mpirun prints hydra's usage, exit 0, runs nothing
    (True, "mpirun", "Intel MPI's mpirun has no -H: it prints hydra's usage and exits 0 having "
     "run nothing; give -hosts n1"),
    (True, "mpiexec", "Intel MPI's mpiexec has no -H: it stops (unrecognized argument H); give "
     "-hosts n1"),
    (True, "mpiexec.hydra", "Intel MPI's mpiexec has no -H: it stops (unrecognized argument H)"),
    (False, "mpiexec", "MPICH's mpiexec has no -H: it prints its usage and exits 0 having run "
     "nothing; give -hosts n1"),
    (False, "mpirun", "MPICH's mpirun has no -H: it prints its usage and exits 0")])
def test_h_is_said_as_each_hydra_launcher_by_its_path_does_with_it(tmp_path, intel, name, said):
    """s43 tester J5: Intel MPI's mpirun by its path (a shell script, whose file names no MPI)
    with -H was not warned of."""
    launcher = _install(tmp_path, intel) / name
    script = read_script(SCRIPT.format(launch=f"{launcher} -H n1 -n 2"))
    does, _, right = said.partition("; give ")  # said as a clause of the job's host-list line
    said = f"kept, it would be {right}: {does}" if right else does
    assert any(said in w for w in text_only_checks(script)), text_only_checks(script)


@pytest.mark.parametrize("launch, said", [
    # measured (s43 tester J10): Open MPI 4.1.4 stops at hydra's -ppn (unknown option) ...
    ("mpirun.openmpi --host n1:2,n2:2 -ppn 1", "line 4: mpirun.openmpi -ppn 1: Open MPI's "
     "mpirun has no -ppn (hydra's): it stops (unknown option); give -npernode 1 (or --map-by "
     "ppr:1:node)"),
    ("mpirun.openmpi -perhost 2 -n 4", "Open MPI's mpirun has no -perhost (hydra's)"),
    # ... and at -npernode K over a host of fewer slots (not enough slots)
    ("mpirun.openmpi --host n1,n2 -npernode 2", "line 4: mpirun.openmpi -npernode 2 over host "
     "list n1,n2: Open MPI refuses it (not enough slots: n1:1, n2:1); give each host 2 slots "
     "(n1:2,n2:2) or --oversubscribe")])
def test_ranks_per_node_open_mpi_stops_at_are_warned_of(launch, said):
    script = read_script(SCRIPT.format(launch=launch))
    assert any(said in w for w in text_only_checks(script)), text_only_checks(script)


@pytest.mark.parametrize("launch", [
    "mpirun.openmpi --host n1:2,n2:2 -npernode 2", "mpirun.openmpi --host n1,n1,n2:2 -npernode 2",
    "mpirun.openmpi --host n1,n2 -npernode 2 --oversubscribe", "mpiexec.hydra --host n1,n2 -ppn 2",
    "mpirun.openmpi -npernode 2 -n 4"])
def test_ranks_per_node_that_run_are_not(launch):
    script = read_script(SCRIPT.format(launch=launch))
    assert not any("Open MPI refuses" in w or "has no -" in w for w in text_only_checks(script))
