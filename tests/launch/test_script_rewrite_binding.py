"""A rewrite's Open MPI binding: ``PE=`` follows the threads in every ``--map-by`` form (and
goes at one thread), Open MPI's mpirun gets a core set per rank where the script gives it
none, and the thread variables the tool's own scripts export follow the layout."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from hpcds1mpi.launch.launch_line_checks import launch_family
from hpcds1mpi.launch.script_binding import binding_note, remap
from hpcds1mpi.launch.script_reading import read_script
from hpcds1mpi.launch.script_rewrite import Layout, rewrite

#: Tester T's my6.sbatch: 1 rank x 2 threads with its own core set.
MY6 = """#!/bin/bash
#SBATCH -J h2o
#SBATCH -p debug
#SBATCH -N 1
#SBATCH --ntasks-per-node=1
#SBATCH --cpus-per-task=2
#SBATCH -t 00:10:00
export OMP_NUM_THREADS=2
/usr/bin/mpirun.openmpi -np 1 --map-by slot:PE=2 --bind-to core cp2k.psmp -i h2o-150.inp
"""
#: Tester T's my4.sbatch: 2 ranks x 1 thread, mpirun with no placement of its own.
MY4 = """#!/bin/bash
#SBATCH --job-name=water
#SBATCH --partition=debug
#SBATCH --nodes=1
#SBATCH --ntasks=2
#SBATCH --cpus-per-task=1
#SBATCH --time=0:15:00

export OMP_NUM_THREADS=1
INP=h2o-250.inp
/usr/bin/mpirun.openmpi cp2k.psmp -i $INP > h2o-250.out
"""
#: The thread lines of a script recommend wrote (tester T's r4.sbatch), 1 x 2 threads.
OWN = """#!/bin/bash
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=1
#SBATCH --cpus-per-task=2
set -euo pipefail
export OMP_NUM_THREADS=2
export OPENBLAS_NUM_THREADS=2
export MKL_NUM_THREADS=2
export OMP_PLACES=cores
export OMP_PROC_BIND=close
export HPCDS1MPI_THREADS=2
export HPCDS1MPI_PRECISION=fp64
/usr/bin/mpirun.openmpi -n 1 --map-by slot:PE=2 cp2k.psmp -i h2o-250.inp
"""


def launch_line(text: str) -> str:
    return next(ln for ln in text.splitlines() if "mpirun" in ln or "mpiexec" in ln)


@pytest.mark.parametrize("value, per_node, threads, new", [
    ("slot:PE=2", 2, 1, "slot"),
    ("slot:PE=2", 1, 4, "slot:PE=4"),
    ("ppr:1:node:pe=2", 4, 1, "ppr:4:node"),
    ("ppr:2:node:PE=2", 1, 3, "ppr:1:node:PE=3"),
    ("socket:PE=2:OVERSUBSCRIBE", 2, 1, "socket:OVERSUBSCRIBE"),
    ("node:PE=4", 1, 2, "node:PE=2"),
    ("ppr:2:socket:pe=2", 4, 2, "ppr:2:socket:pe=2"),  # per socket: not the per-node count
    (":PE=2", 2, 1, ""),
    ("slot:OVERSUBSCRIBE", 2, 2, "slot:OVERSUBSCRIBE"),
    # Open MPI 4.1's comma-separated modifiers (s28 tester Z): PE=1 had been kept
    ("slot:PE=1,oversubscribe", 1, 2, "slot:PE=2,oversubscribe"),
    ("ppr:2:node:PE=2,span", 2, 1, "ppr:2:node:span"),
    ("node:oversubscribe,PE=2", 1, 1, "node:oversubscribe"),
])
def test_pe_follows_the_threads_in_every_map_by_form(value, per_node, threads, new):
    assert remap(value, per_node, threads) == new


def test_one_thread_drops_pe_and_the_job_starts():
    # my6 -> 2 ranks x 1 thread: PE=2 kept with 2 ranks on 2 CPUs was refused by mpirun
    new, changes = rewrite(read_script(MY6), Layout(1, 2, 1), "openmpi")
    assert launch_line(new) == ("/usr/bin/mpirun.openmpi -np 2 --map-by slot --bind-to core "
                                "cp2k.psmp -i h2o-150.inp")
    assert "export OMP_NUM_THREADS=1" in new
    assert binding_note(read_script(MY6), Layout(1, 2, 1), "openmpi") is None


def test_the_tools_own_thread_variables_follow_the_layout():
    new, changes = rewrite(read_script(OWN), Layout(2, 1, 1), "openmpi")
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                 "HPCDS1MPI_THREADS"):
        assert f"export {name}=1\n" in new, name
    # one core per rank now: recommend writes no OpenMP placement for Open MPI at 1 thread
    assert "OMP_PLACES" not in new and "OMP_PROC_BIND" not in new
    assert launch_line(new) == "/usr/bin/mpirun.openmpi -n 2 --map-by slot cp2k.psmp -i " \
        "h2o-250.inp"
    assert {(c.line, c.new) for c in changes if "OMP_P" in c.old} == {(9, ""), (10, "")}
    more, _ = rewrite(read_script(OWN), Layout(1, 1, 4), "openmpi")  # more threads: kept
    assert "export OMP_PLACES=cores\n" in more and "export MKL_NUM_THREADS=4\n" in more
    assert "--map-by slot:PE=4" in more


def test_a_blas_held_at_one_thread_stays():
    text = OWN.replace("OPENBLAS_NUM_THREADS=2", "OPENBLAS_NUM_THREADS=1")
    new, _ = rewrite(read_script(text), Layout(1, 1, 4), "openmpi")
    assert "export OPENBLAS_NUM_THREADS=1\n" in new and "export OMP_NUM_THREADS=4\n" in new


@pytest.mark.parametrize("layout, added", [
    (Layout(1, 1, 2, cores_per_node=2), "--map-by slot:PE=2"),
    (Layout(2, 2, 2, cores_per_node=8), "--map-by ppr:2:node:PE=2"),
    (Layout(1, 2, 2, cores_per_node=2), "--bind-to none"),  # threads beyond the cores
    (Layout(1, 1, 2), "--bind-to none"),  # cores unknown
])
def test_open_mpi_gets_a_core_set_per_rank_where_the_script_gives_none(layout, added):
    script = read_script(MY4)
    new, changes = rewrite(script, layout, "openmpi")
    assert launch_line(new) == f"/usr/bin/mpirun.openmpi {added} cp2k.psmp -i $INP > h2o-250.out"
    assert any(c.line == 11 and added in c.new for c in changes)  # in the changes list
    note = binding_note(script, layout, "openmpi")
    assert note.startswith("line 11: --rewrite adds it:") and added in note


@pytest.mark.parametrize("text", [
    MY4.replace("mpirun.openmpi cp2k", "mpirun.openmpi --bind-to none cp2k"),
    MY4.replace("mpirun.openmpi cp2k", "mpirun.openmpi --cpus-per-proc 1 cp2k"),
    MY4.replace("INP=h2o", "export OMPI_MCA_hwloc_base_binding_policy=none\nINP=h2o"),
])
def test_a_binding_of_the_scripts_own_is_kept(text):
    new, _ = rewrite(read_script(text), Layout(1, 1, 2, cores_per_node=2), "openmpi")
    assert "PE=" not in launch_line(new) and "--map-by" not in launch_line(new)


def test_an_mpi_not_known_here_gets_a_note_and_mpich_nothing():
    text = MY4.replace("/usr/bin/mpirun.openmpi", "mpirun")
    script, layout = read_script(text), Layout(1, 1, 2, cores_per_node=2)
    assert launch_family(script, script.launch) is None  # a bare name, no files read
    new, _ = rewrite(script, layout, None)
    assert launch_line(new) == launch_line(text)
    note = binding_note(script, layout, None)
    assert "mpirun's MPI is not known here" in note and "--map-by slot:PE=2" in note
    assert rewrite(script, layout, "mpich")[0] == new
    assert binding_note(script, layout, "mpich") is None


def test_a_script_binding_each_rank_to_one_core_is_said():
    text = MY4.replace("mpirun.openmpi cp2k", "mpirun.openmpi --bind-to core cp2k")
    note = binding_note(read_script(text), Layout(1, 1, 2, cores_per_node=2), "openmpi")
    assert "(--bind-to core) binds each rank to one core" in note
    assert "give --map-by slot:PE=2" in note


@pytest.mark.parametrize("launcher, family", [
    ("/usr/bin/mpirun.openmpi", "openmpi"), ("orterun", "openmpi"),
    ("mpiexec.hydra", "mpich"), ("srun", None), ("mpiexec", None)])
def test_the_launchers_name_tells_its_family(launcher, family):
    script = read_script(MY4.replace("/usr/bin/mpirun.openmpi", launcher))
    assert launch_family(script, script.launch) == family


@pytest.mark.skipif(not shutil.which("mpirun.openmpi"), reason="needs Open MPI's mpirun")
def test_a_bare_mpirun_that_is_open_mpis_is_known_from_its_file(tmp_path):
    real = os.path.realpath(shutil.which("mpirun.openmpi"))
    link = tmp_path / "mpirun"
    link.symlink_to(real)
    script = read_script(MY4.replace("/usr/bin/mpirun.openmpi", "./mpirun"))
    assert launch_family(script, script.launch) is None  # text alone: no file read
    assert launch_family(script, script.launch, str(tmp_path)) == "openmpi"


def _cpus_per_rank(line: str, ranks: int) -> list[int]:
    """The CPUs each rank of ``line`` (a rewritten launch line) may run on, run for real
    with ``ranks`` ranks (a line without ``-np`` starts the job's, outside a job the
    machine's cores')."""
    words = line.split()
    program = words.index("cp2k.psmp")
    given = [] if "-np" in words else ["-np", str(ranks)]
    cmd = [shutil.which("mpirun.openmpi"), *given, *words[1:program], "sh", "-c",
           "grep Cpus_allowed_list /proc/self/status"]
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    env = {k: v for k, v in env.items() if not k.startswith("SLURM_")}  # not a job step
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=env)
    assert out.returncode == 0, out.stderr
    counts = []
    for row in out.stdout.splitlines():
        spans = row.split(":", 1)[1].strip().split(",")
        counts.append(sum(int(b) - int(a) + 1 for a, _, b in
                          (s.partition("-") if "-" in s else (s, "", s) for s in spans)))
    return counts


@pytest.mark.skipif(not shutil.which("mpirun.openmpi") or (os.cpu_count() or 1) < 2,
                    reason="needs Open MPI's mpirun and 2 cores")
def test_the_rewritten_lines_bind_as_the_layout_needs():
    one, _ = rewrite(read_script(MY6), Layout(1, 2, 1), "openmpi")
    assert _cpus_per_rank(launch_line(one), 2) == [1, 1]  # one core each, and it starts
    two, _ = rewrite(read_script(MY4), Layout(1, 1, 2, cores_per_node=2), "openmpi")
    assert _cpus_per_rank(launch_line(two), 1) == [2]  # both threads' cores


def test_placement_goes_as_written_under_csh_or_beside_other_variables():
    csh = OWN.replace("#!/bin/bash", "#!/bin/csh -f").replace("set -euo pipefail\n", "") \
        .replace("export OMP_PLACES=cores", "setenv OMP_PLACES cores")
    new, _ = rewrite(read_script(csh), Layout(1, 2, 1), "openmpi")
    assert "OMP_PLACES" not in new and "OMP_PROC_BIND" not in new
    joined = OWN.replace("export OMP_PLACES=cores\nexport OMP_PROC_BIND=close\n",
                         "export OMP_PLACES=cores OMP_PROC_BIND=close FOO=1\n")
    new, _ = rewrite(read_script(joined), Layout(1, 2, 1), "openmpi")
    assert "export FOO=1\n" in new and "OMP_P" not in new


PER_SOCKET = ("#!/bin/bash\n#SBATCH -N 2\n#SBATCH --ntasks-per-node=4\n"
              "mpirun --map-by ppr:2:socket:PE=4 ./app\n")


def test_a_kept_per_socket_ppr_is_noted_when_the_ranks_per_node_change():
    """(s28 reviewer R8) remap keeps ``ppr:2:socket``, 2 ranks per socket, which 8 ranks per
    node no longer fit; nothing said so."""
    script = read_script(PER_SOCKET)
    out, _ = rewrite(script, Layout(2, 8, 2, cores_per_node=16), "openmpi")
    assert "--map-by ppr:2:socket:PE=2 " in out
    assert binding_note(script, Layout(2, 8, 2, cores_per_node=16), "openmpi") == (
        "line 4: --map-by ppr:2:socket:PE=4 places 2 ranks per socket, which --rewrite leaves "
        "as written while the ranks per node become 8: set it to fit them (ppr:8:node places "
        "them per node)")
    assert binding_note(script, Layout(2, 4, 2, cores_per_node=16), "openmpi") is None
    per_node = read_script(PER_SOCKET.replace("ppr:2:socket", "ppr:4:node"))
    assert binding_note(per_node, Layout(2, 8, 2, cores_per_node=16), "openmpi") is None


def test_cafruns_rank_count_and_binding_are_rewritten_after_its_n():
    """s32 tester X3: cafrun's -n follows the layout like mpirun's, and an Open MPI binding
    is added after it (``cafrun --map-by ... -n 2`` only prints cafrun's usage)."""
    from hpcds1mpi.launch.mpi_names import OPENMPI

    text = "#!/bin/bash\n#SBATCH -N 1\n#SBATCH --ntasks-per-node=4\ncafrun -n 4 ./heat 100000\n"
    new, _ = rewrite(read_script(text), Layout(1, 1, 2, cores_per_node=2), OPENMPI)
    line = new.splitlines()[-1]
    assert line.startswith("cafrun -n 1 --") and line.endswith(" ./heat 100000"), line
