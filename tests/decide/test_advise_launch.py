"""What advise says about a script's launch line beyond its layout
(:mod:`hpcds1mpi.decide.advise_launch`): arguments its measured command does not have, its
rank-dependent arguments under a rewrite, and the MPI of an ``srun`` line."""

from __future__ import annotations

import json
import math
import os

import pytest

from hpcds1mpi.decide.advise import advise
from hpcds1mpi.decide.advise_launch import argument_note
from hpcds1mpi.launch.script_reading import read_script

MEASURED = "pw.x -i si-{size}.in"


@pytest.mark.parametrize("line, command, said", [
    ("mpirun pw.x -nk 2 -i si-30.in > si-30.out", MEASURED, "(adds '-nk 2')"),
    ("srun pw.x -nk 2 -nd 4 -i si-30.in", "pw.x -nk {ranks} -nd 1 -i si-{size}.in",
     "('-nd 4' where it has '-nd 1')"),
    ("srun pw.x < si-30.in", MEASURED, "(leaves out '-i si-{size}.in'; feeds it '< si-30.in')"),
    ("srun ./app 30 41 -x", "./app {size} 40", "('41 -x' where it has '40')"),
    ("srun ./app 30 -a -b 40 -c 2 -d 3 -e -f", "./app {size} -a 1 -b 40 -c 2 -d 3 -e 4",
     "('-a' where it has '-a 1'; '-e -f' where it has '-e 4')"),
    ("srun ./app 30 -a 9 -b 9 -c 9 -d 9 -e 9", "./app {size} -a 1 -b 2 -c 3 -d 4 -e 5",
     "'-d 9' where it has '-d 4'; and 1 more)"),
])
def test_arguments_the_measured_command_does_not_have_are_named(line, command, said):
    """s27 tester R 2: 'pw.x -nk 2 -i si-30.in' was advised on 'pw.x -i si-{size}.in' without
    a word that its arguments differ (the pool count decides pw.x's multi-rank speed)."""
    note = argument_note(read_script(f"#SBATCH -N 1\n{line}\n").launch, command)
    assert note.startswith(f"line 2: the script runs {os.path.basename(command.split()[0])} "
                           f"with other arguments than its measured command {command!r} "
                           f"{said if said.startswith('(') else ''}"), note
    assert said in note and "the predictions are for the measured command" in note


@pytest.mark.parametrize("line, command", [
    ("srun pw.x -i si-30.in > si-30.out", MEASURED),  # placeholders take any value
    ("srun ./wrap.sh pw.x -i si-30.in", MEASURED),  # a wrapper before the program
    ("srun ./other -i si-30.in", MEASURED),  # another program: not this note's
    ("srun pw.x -nk 2", None),  # no measured command
])
def test_the_same_arguments_or_an_unknown_command_say_nothing(line, command):
    assert argument_note(read_script(f"#SBATCH -N 1\n{line}\n").launch, command) is None


def _pw_bundle(command: str):
    from hpcds1mpi.surrogates.levels import MeasuredLevels
    from tests.fake_bundle import WIDE_SIZES, FakeBundle

    bundle = FakeBundle(workloads=("pw",), sizes=WIDE_SIZES)
    bundle._measured_levels = {"pw": MeasuredLevels(
        "pw", True, precisions=("fp64",), devices=("cpu",), threads=(1, 2),
        ranks_per_node=(1, 2, 4, 8), nodes=(1,), command=command)}
    return bundle


PW_JOB = ("#!/bin/bash\n#SBATCH --job-name=si-scf\n#SBATCH --nodes=1\n#SBATCH --ntasks=2\n"
          "#SBATCH --time=00:10:00\nexport OMP_NUM_THREADS=1\n"
          "mpirun pw.x -nk 2 -i si-1024.in > si-1024.out\n")


def test_a_rewrite_to_another_rank_count_sets_or_names_the_programs_rank_arguments():
    """s27 tester R 2: the rewrite went from 2 ranks to 1 and kept -nk 2; pw.x refused the job
    at once. Measured as -nk {ranks}, the rewrite sets it; measured without, a note names it
    and the other arguments."""
    from tests.fake_bundle import fake_places

    a = advise(PW_JOB, _pw_bundle("pw.x -nk {ranks} -i si-{size}.in"), fake_places("cpu"))
    ranks = a.recommended.config.nodes * a.recommended.config.ranks_per_node
    assert ranks != 2 and f"mpirun pw.x -nk {ranks} -i si-1024.in" in a.rewritten
    assert not [n for n in a.notes if "-nk" in n], a.notes
    a = advise(PW_JOB, _pw_bundle(MEASURED), fake_places("cpu"))
    assert "mpirun pw.x -nk 2 -i si-1024.in" in a.rewritten
    assert [n for n in a.notes if "other arguments" in n] == [
        f"line 7: the script runs pw.x with other arguments than its measured command "
        f"{MEASURED!r} (adds '-nk 2'): the predictions are for the measured command, and "
        "these arguments may change the runtime (sweep the script's own command line to "
        "measure them)"]
    assert [n for n in a.notes if "stays as written" in n] == [
        f"line 7: pw.x's -nk 2 equals the script's 2 ranks and stays as written; the rewrite "
        f"runs {ranks} ranks, which it may no longer fit (a pool or decomposition count must "
        "divide the ranks): set it by hand, or sweep the program with it as {ranks} so "
        "--rewrite sets it"]


def test_srun_of_an_open_mpi_program_after_a_module_line_is_warned_about(tmp_path, monkeypatch):
    """s27 tester R 3: 'module load qe || true' then 'srun pw.x < si-30.in': no warning (the
    module line stopped the program being read), and the job died in MPI_Init under the
    site's MpiDefault=pmi2. Without a slurm.conf the plugin is unknown: a note."""
    from tests.fake_bundle import fake_places
    from tests.helpers import system_program

    app = system_program("hpcc")  # Open MPI, on this PATH
    text = (f"#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --ntasks-per-node=2\n"
            f"#SBATCH --time=00:10:00\nmodule load qe 2>/dev/null || true\n"
            f"srun {os.path.basename(app)} < si-1024.in > out\n")
    conf = tmp_path / "slurm.conf"
    conf.write_text("MpiDefault=pmi2\n")
    monkeypatch.setenv("SLURM_CONF", str(conf))
    bundle = _pw_bundle(f"{os.path.basename(app)} -i si-{{size}}.in")
    a = advise(text, bundle, fake_places("cpu"), size=1024, job_folder=str(tmp_path))
    assert len(a.warnings) == 1 and "MpiDefault=pmi2, which Open MPI cannot wire up" in \
        a.warnings[0] and "line 5 changes the job's environment first" in a.warnings[0]
    monkeypatch.setenv("SLURM_CONF", str(tmp_path / "none.conf"))
    a = advise(text, bundle, fake_places("cpu"), size=1024, job_folder=str(tmp_path))
    assert a.warnings == [] and any("srun --mpi=list" in n for n in a.notes), a.notes
    a = advise(text, bundle, fake_places("cpu"), size=1024)  # text alone: no file is read
    # (its srun's plugin goes unsaid; the rewrite's added -c is explained: s38 tester D1)
    assert a.warnings == [] and not any("--mpi" in n for n in a.notes)


def test_env_i_before_the_program_is_warned_about():
    """Was (s30 tester R6): `srun env -i ./hello` was advised as usual; every rank failed in
    MPI_Init (the launcher's wire-up variables cleared)."""
    from hpcds1mpi.decide.advise_launch import launch_notes

    script = read_script("#!/bin/bash\n#SBATCH -n 2\nsrun env -i ./hello 40\n")
    warnings, _ = launch_notes(script, script.launches[0], "./hello {size}", None)
    assert warnings == ["line 3: `env -i` clears the variables the launcher gives each rank "
                        "(its MPI wire-up, PMI_* / OMPI_*), so MPI_Init fails; set what the "
                        "program needs with `env NAME=VALUE` instead"]
    plain = read_script("#!/bin/bash\n#SBATCH -n 2\nsrun env A=1 ./hello 40\n")
    assert launch_notes(plain, plain.launches[0], "./hello {size}", None)[0] == []


def test_another_launch_line_asking_more_slots_than_the_job_has_is_warned_about(tmp_path):
    """s48 tester O8: advise of a rewritten script read line 8's `-np 1` and said nothing of
    line 9's `mpirun.openmpi -np 2` in the --ntasks=1 job, which stopped "not enough slots"
    (with the job's folder and from the text alone)."""
    from hpcds1mpi.decide.advise_launch import launch_notes
    from hpcds1mpi.launch.script_request import resolve_launch

    script = read_script("#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --ntasks=1\n"
                         "mpirun.openmpi -np 1 ./app 400\nmpirun.openmpi -np 2 ./app 300\n")
    resolve_launch(script, script.launches[0])
    said = ("line 5: Open MPI's mpirun.openmpi starts 2 ranks, but the job has 1 task, its "
            "slots: it stops at once (not enough slots); ask #SBATCH --ntasks=2, or give "
            "mpirun.openmpi --oversubscribe")
    for folder in (None, str(tmp_path)):
        warnings, _ = launch_notes(script, script.launches[0], "./app {size}", folder)
        assert warnings.count(said) == 1, (folder, warnings)
        assert not any(w.startswith("line 4") for w in warnings)


#: s49: a 1-task job whose hydra launch asks 2 ranks (MPICH's, Debian's or Intel MPI's
#: mpiexec ran both, sharing the job's one CPU, unsaid).
HYDRA_JOB = ("#!/bin/bash\n#SBATCH --partition=standard\n#SBATCH --nodes=1\n"
             "#SBATCH --ntasks=1\n#SBATCH --time=00:05:00\n"
             "{launcher} {count} hpcds1mpi run gemm --size 512\n")


def _hydra_launcher(name: str) -> str:
    """The launcher ``name`` as the job finds it, skipping where it is not hydra's here."""
    import shutil

    from hpcds1mpi.launch.mpi_installation import launcher_file_family
    from hpcds1mpi.launch.mpi_names import MPICH

    if name == "intel":
        from tests.intel_mpi import intel_mpi

        return str(intel_mpi() / "bin" / "mpiexec")
    found = shutil.which(name)
    if found is None or launcher_file_family(found) != MPICH:
        pytest.skip(f"{name} is not MPICH's hydra here")
    return name


@pytest.mark.parametrize("name, count", [("mpiexec", "-n 2"), ("mpiexec.mpich", "-np 2"),
                                         ("intel", "--np 2"), ("mpiexec", "-ppn 2")])
def test_hydra_asking_more_ranks_than_the_job_tasks_is_warned_of(tmp_path, name, count):
    """s49: advise warned of Open MPI's mpirun asking more ranks than the job's tasks (it
    stops), not of MPICH's or Intel MPI's mpiexec, which run them on the job's CPUs: the
    script is read from its file, its launcher's MPI from the launcher's file."""
    from tests.helpers import run_cli
    from tests.serve.conftest import LAB

    launcher = _hydra_launcher(name)
    job = tmp_path / "job.sbatch"
    job.write_text(HYDRA_JOB.format(launcher=launcher, count=count))
    proc = run_cli(["advise", str(job), "--cluster", str(LAB), "--json"], cwd=tmp_path,
                   timeout=120)
    assert proc.returncode == 0, proc.stderr
    each = " (2 per node)" if "ppn" in count else ""
    ask = "--ntasks=2 --ntasks-per-node=2" if each else "--ntasks=2"
    fewer = "-ppn 1" if each else "-n 1"
    said = [w for w in json.loads(proc.stdout)["warnings"] if "CPU" in w and "line 6" in w]
    launcher = os.path.basename(launcher)  # as the launch line is named
    assert said == [f"line 6: {launcher} starts 2 ranks{each}, but the job has 1 task: hydra "
                    "(MPICH, Intel MPI) runs them all, sharing the job's CPUs (2 ranks on 1 "
                    f"CPU), each slower for it; ask #SBATCH {ask}, or give {launcher} {fewer}"]


def test_hydra_within_the_job_tasks_is_not_warned_of_and_the_text_alone_tells_it(tmp_path):
    """One rank in the 1-task job says nothing; /v1/advise's text (no folder) warns of a
    launcher its name tells as hydra's."""
    from hpcds1mpi.decide.advise_launch import launch_notes

    launcher = _hydra_launcher("mpiexec.mpich")
    fits = read_script(HYDRA_JOB.format(launcher=launcher, count="-n 1"))
    over = read_script(HYDRA_JOB.format(launcher=launcher, count="-n 2"))
    command = "hpcds1mpi run gemm --size {size}"
    for folder in (None, str(tmp_path)):
        assert not any("sharing the job's CPUs" in w
                       for w in launch_notes(fits, fits.launch, command, folder)[0])
        assert [w for w in launch_notes(over, over.launch, command, folder)[0]
                if "sharing the job's CPUs" in w] == [
            "line 6: mpiexec.mpich starts 2 ranks, but the job has 1 task: hydra (MPICH, Intel "
            "MPI) runs them all, sharing the job's CPUs (2 ranks on 1 CPU), each slower for it; "
            "ask #SBATCH --ntasks=2, or give mpiexec.mpich -n 1"]


#: The lab's stencil job launched by hydra on a host file of its own, each rank bound to one
#: core for its two threads: both read from the text alone.
OWN_HOSTS_JOB = ("#!/bin/bash\n#SBATCH --job-name=stencil\n#SBATCH --partition=standard\n"
                 "#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=1\n#SBATCH --cpus-per-task=2\n"
                 "#SBATCH --time=00:30:00\nexport OMP_NUM_THREADS=2\n"
                 "mpiexec.hydra -f hosts.txt -n 2 -ppn 1 -bind-to core "
                 "hpcds1mpi run stencil --size 128 --precision fp64 --threads 2\n")


def test_the_services_advise_warns_of_a_host_list_and_one_core_as_the_cli_does(tmp_path):
    """s31 F4: the host-list and -bind-to core warnings (s31 tester P2, P3) came only where a
    job folder was given, so `advise FILE` warned and /v1/advise (text, no folder) did not."""
    from hpcds1mpi.serve.schemas import AdviseRequest
    from hpcds1mpi.serve.service import Service
    from tests.helpers import run_cli
    from tests.serve.conftest import LAB

    wanted = ["line 9: mpiexec.hydra -f hosts.txt runs the ranks on the nodes that host file "
              "names, not those Slurm gives the job",
              "line 9: -bind-to core binds each rank to one core, which its 2 threads share "
              "(they run as one): give -bind-to core:2"]
    served = Service(None, str(LAB), tmp_path / "state", cache_size=0).advise(
        AdviseRequest(script=OWN_HOSTS_JOB))
    job = tmp_path / "job.sbatch"
    job.write_text(OWN_HOSTS_JOB)
    proc = run_cli(["advise", str(job), "--cluster", str(LAB), "--json"], cwd=tmp_path,
                   timeout=120)
    assert proc.returncode == 0, proc.stderr
    for said in (served["warnings"], json.loads(proc.stdout)["warnings"]):
        for start in wanted:
            assert any(w.startswith(start) for w in said), (start, said)


def test_a_failing_srun_line_is_fixed_by_the_rewrite_and_said(tmp_path, monkeypatch):
    """s32 tester U5: the rewrite kept `srun meep` without --mpi=pmix; launch_notes keeps the
    plugin the check names for the rewrite and says it (real meep, site MpiDefault=pmi2)."""
    import shutil

    from hpcds1mpi.decide.advise_launch import launch_notes

    if shutil.which("meep") is None:
        pytest.skip("Debian's meep-openmpi not installed")
    conf = tmp_path / "slurm.conf"
    conf.write_text("MpiDefault=pmi2\n")
    script = read_script("#!/bin/bash\n#SBATCH --ntasks=2\nsrun meep res=18 wg.ctl\n")
    monkeypatch.setenv("SLURM_CONF", str(conf))
    warnings, notes = launch_notes(script, script.launch, "meep res={size} wg.ctl",
                                   str(tmp_path))
    assert any("add --mpi=pmix" in w for w in warnings), warnings
    assert "--rewrite gives line 3's srun --mpi=pmix, the plugin its program's MPI starts " \
        "with (see the warning)" in notes, notes
    assert script.srun_mpi_fix == "pmix"


def test_a_venv_python_for_a_measured_system_python_is_said_not_another_launcher(tmp_path,
                                                                               monkeypatch):
    """s32 tester U2: bare `mpirun.openmpi -n 2 python3 sim.py` with the venv first on PATH
    ran the venv's python3 (no meep); advise suggested mpiexec.mpich, which failed alike.
    The interpreter is named, and no launcher for the wrong interpreter is suggested."""
    import sys
    from pathlib import Path

    from hpcds1mpi.decide.advise_launch import launch_notes

    venv_bin = str(Path(sys.executable).parent)
    if not (Path(venv_bin).parent / "pyvenv.cfg").exists() or \
            not os.path.exists("/usr/bin/python3"):
        pytest.skip("needs a venv and /usr/bin/python3")
    monkeypatch.setenv("PATH", f"{venv_bin}:{os.environ['PATH']}")
    script = read_script("#!/bin/bash\n#SBATCH --ntasks=2\nmpirun.openmpi -n 2 python3 sim.py "
                         "15 20\n")
    warnings, _ = launch_notes(script, script.launch, "/usr/bin/python3 sim.py {size} 20",
                               str(tmp_path))
    assert len(warnings) == 1 and "another interpreter" in warnings[0], warnings
    assert "launch it with" not in warnings[0]


def test_ranks_of_a_program_without_mpi_are_warned_of_as_the_sweep_refuses_them(tmp_path):
    """s35 tester A2: `mpirun -np $SLURM_NTASKS mb-mpi run.nex` at 2 tasks (Debian's mb-mpi
    links no MPI) got no warning, and the job failed 11:0, two copies writing the same files.
    advise applies the sweep's rank proof (a real OpenMP-only binary here)."""
    from tests.fake_bundle import fake_places
    from tests.helpers import openmp_binary

    openmp_binary(tmp_path)
    text = ("#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --ntasks=2\n#SBATCH --time=00:10:00\n"
            "mpirun -np $SLURM_NTASKS ./omp run.nex\n")
    a = advise(text, _pw_bundle("./omp -n {size}"), fake_places("cpu"), size=1024,
               job_folder=str(tmp_path))
    copies = [w for w in a.warnings if "independent copies" in w]
    assert len(copies) == 1 and copies[0].startswith(
        f"line 5: omp ({tmp_path}/omp) links no MPI library"), a.warnings
    assert "ask for 1 task (#SBATCH --ntasks=1; its threads for speed)" in copies[0]
    # and no prediction of the copies (it had predicted 2 ranks faster than the measured 1)
    assert "independent copies" in a.asked.problem and math.isnan(a.asked.runtime_s), a.asked
    one = advise(text.replace("--ntasks=2", "--ntasks=1"), _pw_bundle("./omp -n {size}"),
                 fake_places("cpu"), size=1024, job_folder=str(tmp_path))
    assert not [w for w in one.warnings if "independent copies" in w], one.warnings


def test_a_valgrind_option_value_after_a_space_is_warned_about():
    """s43 tester J6: `valgrind --log-file /tmp/v.log ./app` runs /tmp/v.log; advise had
    only said the program matches no workload."""
    from hpcds1mpi.decide.advise_launch import launch_notes

    script = read_script("#!/bin/bash\n#SBATCH -n 2\n"
                         "srun -n 2 valgrind --log-file /tmp/v.log ./hello 40\n")
    warnings, _ = launch_notes(script, script.launches[0], "./hello {size}", None)
    assert warnings == ["line 3: valgrind takes an option's value after `=` only: as written "
                        "`--log-file /tmp/v.log` runs `/tmp/v.log` as the program, so the "
                        "launch fails; write `--log-file=/tmp/v.log`"]
