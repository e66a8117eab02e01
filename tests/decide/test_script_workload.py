"""Which trained workload a batch script runs, by any command line its rows ran."""

from __future__ import annotations

import pytest

from hpcds1mpi.decide.script_workload import RecordedCommands, choose_launch, match_workload
from hpcds1mpi.launch.script_placeholders import size_from
from hpcds1mpi.launch.script_reading import read_script

#: A program whose rows ran two command lines (learn merged a sweep of the second).
LINES = {"myapp": ("./myapp {size} 40", "./myapp --n {size} --steps 40")}


def test_a_script_is_read_by_the_recorded_command_line_it_runs():
    """Before, rows of two command lines left no command: the program matched no workload and
    its size was not read. The most-run line is read unless the script runs another."""
    commands = RecordedCommands(LINES)
    assert commands == {"myapp": "./myapp {size} 40"}
    script = read_script("#SBATCH -N 1\nsrun ./myapp --n 4096 --steps 40\n")
    assert match_workload(script.launch, [], commands) == "myapp"
    assert size_from(script.launch, commands["myapp"]) is None  # not by the most-run line
    assert choose_launch(script, [], commands) == ("myapp", script.launch)
    assert commands.line_for("myapp", script.launch) == "./myapp --n {size} --steps 40"
    assert size_from(script.launch, commands.line_for("myapp", script.launch)) == 4096
    assert commands == {"myapp": "./myapp {size} 40"}  # left as it was: a bundle's answers share it
    plain = read_script("#SBATCH -N 1\nsrun ./myapp 512 40\n")
    assert choose_launch(plain, [], commands)[0] == "myapp"
    assert commands.line_for("myapp", plain.launch) == "./myapp {size} 40"


def test_the_line_that_reads_the_size_is_preferred_to_one_run_at_one_size():
    """GROMACS swept at sizes 25-40, then with -ntomp at size 35 only (no {size} in it)."""
    commands = RecordedCommands({"gromacs": ("gmx_mpi mdrun -s /w/{size}/topol.tpr -deffnm run",
                                             "gmx_mpi mdrun -s /w/35/topol.tpr -ntomp 1 "
                                             "-deffnm run")})
    script = read_script("#SBATCH -N 1\nsrun gmx_mpi mdrun -s /w/35/topol.tpr -ntomp 1 "
                         "-deffnm run\n")
    assert choose_launch(script, [], commands)[0] == "gromacs"
    assert size_from(script.launch, commands.line_for("gromacs", script.launch)) == 35


def test_a_plain_dict_of_one_command_each_still_matches():
    script = read_script("#SBATCH -N 1\nsrun ./bin/myapp.x -n 4096 --steps 10\n")
    commands = {"myapp-run": "./myapp -n {size} --steps {threads}"}
    assert choose_launch(script, ["stencil"], commands)[0] == "myapp-run"
    assert commands == {"myapp-run": "./myapp -n {size} --steps {threads}"}
    assert match_workload(script.launch, ["stencil"], RecordedCommands({})) is None


def test_a_size_fed_on_standard_input_is_said_not_read():
    """s27 tester R 8: 'srun pw.x < si-30.in' was refused for having no size, without a word
    that the redirection is not read."""
    from hpcds1mpi.decide.script_workload import no_size

    script = read_script("#SBATCH -N 1\nsrun pw.x < si-30.in > si-30.out\n")
    message = no_size("pw", script.launch, "pw.x -i si-{size}.in", None)
    assert message == ("no problem size for pw in the script: line 2 runs 'pw.x', which does "
                       "not have the form of its measured command 'pw.x -i si-{size}.in', so "
                       "the size cannot be read (its input comes from '< si-30.in': advise "
                       "reads the program's arguments, not what a standard-input redirection "
                       "feeds it); pass --size")
    plain = read_script("#SBATCH -N 1\nsrun pw.x > si-30.out\n")
    assert "standard-input" not in no_size("pw", plain.launch, "pw.x -i si-{size}.in", None)


@pytest.mark.parametrize("body, why", [
    ("for N in 4000 8000 16000; do\n  srun --ntasks=2 ./toy $N\ndone\n",
     "it is a for loop's variable, so the line runs 3 sizes (4000, 8000 and 16000); pass "
     "--size with each in turn"),
    ("SIZES=(4000 8000 16000)\nN=${SIZES[$SLURM_ARRAY_TASK_ID]}\nsrun ./toy $N\n",
     "it follows the array task's index, so each array task runs its own size; pass --size "
     "with each in turn"),
    ("srun ./toy $N\n", "pass --size"),
])
def test_a_size_held_in_a_variable_is_said_so(body, why):
    """s38 tester D5: `./toy $N` was "not the form of its measured command './toy {size}'";
    it has that form, and what is unknown is $N."""
    from hpcds1mpi.decide.script_workload import no_size

    script = read_script("#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --ntasks=2\n" + body)
    message = no_size("toy", script.launches[0], "./toy {size}", None, script)
    line = script.launches[0].line
    assert message == (f"no problem size for toy in the script: line {line} runs './toy $N', "
                       "whose $N stands where its measured command './toy {size}' has {size}, "
                       f"but could not be resolved{':' if why != 'pass --size' else ';'} {why}")


def test_a_size_given_two_values_asks_for_size_naming_both():
    """s29 tester C3: a PETSc program measured with ``-da_grid_x {size} -da_grid_y {size}``,
    launched with 120 and 480, was advised as size 120 (its grid 4x larger)."""
    from hpcds1mpi.decide.script_workload import no_size

    template = ("./poisson -da_grid_x {size} -da_grid_y {size} -ksp_type cg -pc_type jacobi "
                "-log_view")
    script = read_script("#!/bin/bash\n#SBATCH -J poisson\n#SBATCH -N 1\n"
                         "#SBATCH --ntasks-per-node=2\n#SBATCH -t 00:10:00\n#SBATCH -p debug\n"
                         "mpirun.openmpi -np 2 ./poisson -da_grid_x 120 -da_grid_y 480 "
                         "-ksp_type cg -pc_type jacobi -log_view\n")
    commands = RecordedCommands({"poisson": (template,)})
    assert choose_launch(script, ["poisson"], commands) == ("poisson", script.launch)
    assert size_from(script.launch, commands.line_for("poisson", script.launch)) is None
    message = no_size("poisson", script.launch, template, None)
    assert message == ("no problem size for poisson in the script: line 7 gives 120 and 480 "
                       f"where its measured command {template!r} has {{size}} in each place, "
                       "so which is the size is not guessed; pass --size")


MULTISTEP = ("#!/bin/bash\n#SBATCH --partition=debug\n#SBATCH --nodes=2\n"
             "#SBATCH --ntasks-per-node=2\n#SBATCH --time=00:20:00\n\n"
             "module load gcc openmpi\nsrun -n 1 ./preprocess input.dat\nsrun -n 4 ./app 128\n"
             "srun -n 1 ./postprocess output.dat\n")


def test_among_unmatched_launches_the_one_with_the_most_ranks_is_taken_and_named():
    """s29 tester D3: the 1-rank preprocess step was taken as the workload, read as '2 nodes
    x 1 rank', and --rewrite spread it to `srun -n 8 ./preprocess`."""
    from hpcds1mpi.launch.script_request import resolve_launch
    from hpcds1mpi.launch.script_rewrite import Layout, rewrite

    script = read_script(MULTISTEP)
    label, launch = choose_launch(script, ["stencil"], {})
    assert label is None and launch.line == 9
    assert ("line 9 `srun -n 4 ./app 128` taken as the workload among 3 launches: no "
            "launched program matches a trained workload, and it starts the most ranks; the "
            "other launches are left as written") in script.notes
    resolve_launch(script, launch)
    assert script.layout(2) == (2, 2, 1)
    out, _ = rewrite(script, Layout(4, 2, 1))
    # (its threads set before it: s38 tester D3)
    assert ("srun -n 1 ./preprocess input.dat\nexport OMP_NUM_THREADS=1\nsrun -n 8 ./app 128\n"
            "srun -n 1 ./postprocess") in out


def test_a_launch_of_the_whole_allocation_outranks_a_counted_one():
    script = read_script("#SBATCH -N 4\nsrun -N 1 ./pre\nsrun -n 2 ./check\nsrun ./app 8\n"
                         "srun ./post\n")
    assert choose_launch(script, [], {})[1].line == 4  # the first of the two that take all
    # said as the first of equals, not as the one starting the most (s29 V2-6)
    assert any("starts the most ranks (the first of those starting as many)" in n
               for n in script.notes), script.notes
    single = read_script("#SBATCH -N 4\nsrun -n 1 ./pre\n")
    assert choose_launch(single, [], {})[1].line == 2
    assert not any("taken as the workload" in n for n in single.notes)


def test_no_size_without_a_launch_line_names_the_line_that_runs_the_program():
    """s29 tester B5: `gpaw -P 2 python h2.py 25` (GPAW starts its own ranks) gave "line ?
    runs '', which does not have the form of its measured command"."""
    from hpcds1mpi.decide.script_workload import no_size

    script = read_script("#!/bin/bash\n#SBATCH -N 1\n#SBATCH --ntasks-per-node=2\n"
                         "export OMP_NUM_THREADS=1\ngpaw -P 2 python h2.py 25\n")
    message = no_size("gpaw", script.launch, "gpaw python h2.py {size}", None, script)
    assert message == ("no problem size for gpaw in the script: no launch line (srun / mpirun "
                       "/ mpiexec / aprun / ibrun) was recognised (line 5 runs `gpaw -P 2 "
                       "python h2.py 25`); pass --size")
    assert "line ?" not in no_size("gpaw", None, "gpaw python h2.py {size}", None)


def test_a_script_setting_the_size_through_env_matches_its_workload():
    """s30 tester K1: `mpirun -n 2 env POISSON_N=320 python3 poisson_cfg.py` matched another
    workload and read no size."""
    commands = RecordedCommands({"poisson": ("/usr/bin/python3 poisson.py {size}",),
                                 "poisson_env": ("env POISSON_N={size} /usr/bin/python3 "
                                                 "poisson_cfg.py",)})
    script = read_script("#SBATCH -n 2\nmpirun -n 2 env POISSON_N=320 /usr/bin/python3 "
                         "poisson_cfg.py\n")
    label, launch = choose_launch(script, ["poisson", "poisson_env"], commands)
    assert label == "poisson_env"
    assert size_from(launch, commands.line_for(label, launch)) == 320


def test_a_recorded_line_knows_the_file_its_sweep_ran_for_a_bare_word():
    """s33 tester B2: advise warned of the venv's python3 only where the measured command
    spelled out /usr/bin/python3; swept as `python3 ...` under /usr/bin/mpirun.openmpi (whose
    prefix gave the ranks /usr/bin/python3) it said nothing, and the job failed."""
    import os

    import pytest

    from hpcds1mpi.decide.script_workload import RecordedCommands

    if not os.path.exists("/usr/bin/mpirun.openmpi") or not os.path.exists("/usr/bin/python3"):
        pytest.skip("needs Debian's Open MPI and python3")
    launch = {"launcher": "mpiexec", "command": "/usr/bin/mpirun.openmpi", "args": [],
              "flavour": "OpenMpiMpirun", "mpi": ""}
    commands = RecordedCommands({"lap": ("python3 laplace.py {size}",)}, {"lap": launch})
    line = commands.line_for("lap", None)
    assert line == "python3 laplace.py {size}"
    assert line.program_file == "/usr/bin/python3"
    assert RecordedCommands({"lap": ("python3 laplace.py {size}",)}).line_for(
        "lap", None).program_file is None


def test_an_hpcds1mpi_run_line_with_kernel_options_is_that_deck():
    """s40 tester B13: the script recommend writes for stencil measured with sweeps = 100
    runs ``hpcds1mpi run stencil --option sweeps=100``: that is the option deck's workload,
    never the default deck's."""
    script = read_script("#SBATCH -N 1\nsrun hpcds1mpi run stencil --size 96 --option "
                         "sweeps=100 --threads 1\n")
    labels = ["stencil", "stencil+sweeps.100"]
    assert match_workload(script.launch, labels, RecordedCommands({})) == "stencil+sweeps.100"
    assert match_workload(script.launch, ["stencil"], RecordedCommands({})) is None
    plain = read_script("#SBATCH -N 1\nsrun hpcds1mpi run stencil --size 96\n")
    assert match_workload(plain.launch, labels, RecordedCommands({})) == "stencil"


def test_an_hpcds1mpi_run_line_whose_options_run_refuses_is_no_plain_kernel():
    """s41 tester D14: ``--option sweeps=0`` (``=1e2``, a key stencil does not read, no value,
    a key twice) fails at once under ``hpcds1mpi run``, and advise read it as plain stencil and
    said the script already asks the recommended layout."""
    from hpcds1mpi.errors import ConfigError

    labels = ["stencil", "stencil+sweeps.100"]
    for given in ("--option sweeps=0", "--option sweeps=1e2", "--option iterations=5",
                  "--option sweeps", "--option sweeps=5 --option sweeps=6", "--option"):
        script = read_script(f"#SBATCH -N 1\nsrun hpcds1mpi run stencil --size 40 {given}\n")
        with pytest.raises(ConfigError, match=r"^line 2: hpcds1mpi run stencil refuses its "
                           r"options, so the job fails at once \(.*\); fix the --option"):
            match_workload(script.launch, labels, RecordedCommands({}))
    # a program that only shares a kernel's name reads its own arguments
    own = read_script("#SBATCH -N 1\nsrun ./stencil --option sweeps=0\n")
    assert match_workload(own.launch, labels, RecordedCommands({})) == "stencil"


def test_an_hpcds1mpi_run_line_of_a_deck_never_trained_says_which_deck_it_is():
    """s41 tester D14: ``--option sweeps=10`` (stencil's default value, its own workload)
    read as "matches no workload the model was trained on" without why."""
    script = read_script("#SBATCH -N 1\nsrun hpcds1mpi run stencil --size 40 --option "
                         "sweeps=10\n")
    assert choose_launch(script, ["stencil", "stencil+sweeps.100"], RecordedCommands({}))[0] \
        is None
    assert any("line 2 runs the kernel deck 'stencil+sweeps.10' (hpcds1mpi run with --option), "
               "which the model was never trained on" in note for note in script.notes)


def test_a_size_glued_to_a_redirection_is_said_to_be_a_file_descriptor():
    """s41 tester B4: `./grow 8000>log` is refused (the shell runs `./grow` with file
    descriptor 8000 redirected, no argument); the refusal now says why."""
    from hpcds1mpi.decide.script_workload import no_size

    script = read_script("#!/bin/bash\n#SBATCH -n 2\nsrun ./grow 8000>log\n")
    assert script.launch.args == []
    message = no_size("grow", script.launch, "./grow {size}", None, script)
    assert "reads 8000> as a redirection of file descriptor 8000" in message
    spaced = read_script("#!/bin/bash\n#SBATCH -n 2\nsrun ./grow 8000 out.h5>log\n")
    assert size_from(spaced.launch, "./grow {size} out.h5") == 8000  # `>log` apart
    assert spaced.launch.args == ["8000", "out.h5"]


def test_the_workload_is_read_inside_a_shells_command_string():
    """s41 tester B3: `mpiexec -n 2 sh -c './grow 8000'` was "the program 'sh' matches no
    workload", while the command check read the same string as the measured command."""
    script = read_script("#!/bin/bash\n#SBATCH -n 2\n"
                         "mpiexec -n 2 sh -o pipefail -c './grow 8000'\n")
    assert match_workload(script.launch, ["grow"], {"grow": "./grow {size}"}) == "grow"
    assert match_workload(script.launch, ["other"], {"other": "./other {size}"}) is None


@pytest.mark.parametrize("line, label", [
    ("srun ./wrap ./stencil 128", None),  # s42: read as the kernel stencil
    ("srun ./wrap --kernel stencil", None),
    ("srun ./myapp stencil", "myapp"),  # its program, not its argument
    ("srun ./stencil 128", "stencil"),
    ("srun env X=1 numactl -l ./stencil 128", "stencil"),  # known wrappers are stepped over
    ("srun python3 -u stencil.py 128", "stencil"),  # an interpreter's program
    ("srun hpcds1mpi run stencil --size 128", "stencil"),  # the kernel hpcds1mpi runs
    ("srun hpcds1mpi run --size 128 --json stencil", "stencil"),
    ("srun python3 -m hpcds1mpi run stencil", "stencil"),
    ("srun hpcds1mpi sweep --kernel stencil", None),
    ("srun sh -c './wrap ./stencil 128'", None),
    ("srun sh -c 'env X=1 ./stencil 128'", "stencil")])
def test_only_the_program_word_names_the_workload(line, label):
    """s42: any word of the launch line named the workload, so `./wrap ./stencil` was advised
    as the kernel stencil (its size asked for, its layout predicted), though the job runs the
    user's wrapper; only the program word (as the launcher reader finds it) names it now."""
    script = read_script(f"#!/bin/bash\n#SBATCH -n 2\n{line}\n")
    assert match_workload(script.launch, ["stencil", "myapp"], RecordedCommands({})) == label


@pytest.mark.parametrize("line, label", [
    ("srun apptainer exec --nv img.sif ./stencil 128", "stencil"),  # as the label rule reads it
    ("srun singularity exec img.sif ./stencil 128", "stencil"),
    ("srun podman run img ./stencil 128", "stencil"),
    ("srun shifter --image=img ./stencil 128", "stencil"),
    ("srun nsys profile -o prof ./stencil 128", "stencil"),
    ("srun nsys profile -o stencil ./myapp 5", "myapp"),  # an option's value is no path
    ("srun valgrind --tool=memcheck ./stencil 128", "stencil"),
    ("srun perf stat ./stencil 128", "stencil"),
    ("srun gdb --args ./stencil 128", "stencil"),
    ("srun likwid-pin -c 0 ./stencil 128", "stencil"),
    ("srun valgrind ./wrap 128", None)])
def test_a_program_in_a_container_or_under_a_profiler_names_the_workload(line, label):
    """s42 review R1: once only the program word named the workload, a program run in a
    container or under a profiler or debugger matched none (before, any word had)."""
    script = read_script(f"#!/bin/bash\n#SBATCH -n 2\n{line}\n")
    assert match_workload(script.launch, ["stencil", "myapp"], RecordedCommands({})) == label


@pytest.mark.parametrize("line, label", [
    ("srun nsys profile -o stencil ./myapp 48", None),
    ("srun ncu -o stencil ./myapp 48", None),
    ("srun hpcrun -e CPUTIME -o stencil ./myapp 48", None),
    ("srun nsys profile -o stencil myapp 48", None),
    ("srun valgrind ./myapp stencil", None),
    ("srun nsys profile -o prof ./stencil 128", "stencil"),
    ("srun valgrind hpcds1mpi run --threads 2 stencil --size 48", "stencil"),
    ("srun perf stat -e cycles -- stencil 48", "stencil")])
def test_an_option_value_or_argument_of_a_tools_program_names_no_workload(line, label):
    """s42 tester F7: after a profiler every later bare word was a candidate, so the ``-o``
    value of ``nsys profile -o stencil ./myapp`` named the workload stencil whenever
    ``./myapp`` matched none; the tool's program is one word now."""
    script = read_script(f"#!/bin/bash\n#SBATCH -n 2\n{line}\n")
    assert match_workload(script.launch, ["stencil"], RecordedCommands({})) == label


@pytest.mark.parametrize("line, program", [
    ("srun nsys profile -o stencil ./myapp 48", "./myapp"),
    ("srun apptainer exec img.sif valgrind -q ./myapp", "./myapp"),
    ("srun ./myapp 48", "./myapp"),
    ("srun apptainer run img.sif", "apptainer")])
def test_the_note_names_the_program_past_its_profiler(line, program):
    """s42 tester F7: advise said "the program 'nsys' matches no workload" of a job running
    ./myapp under nsys."""
    from hpcds1mpi.decide.script_workload import launched_program

    assert launched_program(read_script(f"#!/bin/bash\n#SBATCH -n 2\n{line}\n").launch) == program


@pytest.mark.parametrize("line, label", [
    ("mpirun -np 2 pvbatch sph.py 60", None),  # the tester's u2: another script
    ("mpirun -np 2 pvbatch wav.py 60", "pvbatch"),
    ("mpirun -np 2 pvbatch /home/u/pv/wav.py 60", "pvbatch"),  # the same file's name
    ("mpirun -np 2 pvbatch wav.py 60 out.vtk", "pvbatch"),  # a file added, none taken away
    ("mpirun -np 2 pvbatch $SCRIPT 60", "pvbatch")])  # not read: not called another
def test_a_program_given_another_input_file_matches_no_workload(line, label):
    """s45 tester E3: ``pvbatch sph.py`` was advised by the runs of ``pvbatch wav.py {size}``
    as "other arguments" (confidence 0.94, a rewrite), where train refuses the two lines under
    one label as two programs; by train's rule it matches no workload, a note says why."""
    commands = RecordedCommands({"pvbatch": ("pvbatch wav.py {size}",)})
    script = read_script(f"#SBATCH -N 1\n{line}\n")
    assert match_workload(script.launch, ["pvbatch"], commands) == label
    assert choose_launch(script, ["pvbatch"], commands)[0] == label
    said = [n for n in script.notes if "another computation" in n]
    assert said == ([] if label else [
        "line 2 runs pvbatch with sph.py where the runs of 'pvbatch' ran wav.py ('pvbatch "
        "wav.py {size}'): another computation, which train keeps apart as another program, so"
        " the model never measured it; sweep it with --command and its own --label"])


def test_a_program_given_another_input_file_matches_the_label_that_ran_it():
    commands = RecordedCommands({"pvbatch": ("pvbatch wav.py {size}",),
                                 "sph": ("pvbatch sph.py {size}",)})
    script = read_script("#SBATCH -N 1\nmpirun -np 2 pvbatch sph.py 60\n")
    assert choose_launch(script, ["pvbatch", "sph"], commands)[0] == "sph"
    deck = RecordedCommands({"pw": ("pw.x -i si-{size}.in",)})  # any value of its placeholder
    assert match_workload(read_script("#SBATCH -N 1\nsrun pw.x -i si-30.in\n").launch,
                          ["pw"], deck) == "pw"
