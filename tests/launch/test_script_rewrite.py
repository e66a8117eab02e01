"""Rewriting a user's script: only the directives, the launch line and OMP_NUM_THREADS change,
every other line stays byte for byte, and the result asks for the new layout."""

from __future__ import annotations

import difflib
import re
from pathlib import Path

import pytest

from hpcds1mpi.errors import ConfigError
from hpcds1mpi.launch.script_reading import read_script
from hpcds1mpi.launch.script_rewrite import Layout, ranks_note, rewrite, threads_note

SCRIPTS = Path(__file__).resolve().parents[1] / "data" / "jobscripts"
NAMES = sorted(p.name for p in SCRIPTS.iterdir() if p.suffix in (".sbatch", ".pbs"))
ADDED_RE = re.compile(r"^(#SBATCH --[a-z-]+=\S+|#PBS -[lq] \S+|export OMP_NUM_THREADS=\d+)$")


def allowed_lines(script) -> set[int]:
    """Lines a rewrite may change: directives, launch lines, OMP_NUM_THREADS settings."""
    lines = {opt.line for opt in script.directives.values()}
    for launch in script.launches:
        lines |= set(range(launch.line, launch.last_line + 1))
    return lines | {s.line for s in script.settings if s.name == "OMP_NUM_THREADS"}


def diff(old: str, new: str) -> tuple[set[int], list[str]]:
    """(old line numbers changed or removed, lines added) between two texts, as diff says."""
    changed, added = set(), []
    a, b = old.split("\n"), new.split("\n")
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False
                                                        ).get_opcodes():
        if tag in ("replace", "delete"):
            changed |= set(range(i1 + 1, i2 + 1))
        if tag in ("replace", "insert"):
            added += b[j1:j2]
    return changed, added


@pytest.mark.parametrize("name", NAMES)
def test_only_the_lines_it_must_change(name):
    text = (SCRIPTS / name).read_text()
    script = read_script(text)
    gpus = 2 if script.gpus_per_node else 0
    new, changes = rewrite(script, Layout(3, 6, 2, gpus, 5400))
    changed, added = diff(text, new)
    assert changed <= allowed_lines(script), (changed, allowed_lines(script))
    for line in added:  # an added line is a new directive or export, or a changed allowed line
        assert ADDED_RE.match(line) or any(c.new == line for c in changes if c.old), line
    again = read_script(new)
    assert again.layout(cores_per_node=128) == (3, 6, 2)
    assert again.gpus_per_node == gpus and again.time_s == 5400
    assert {c.line for c in changes if c.old} == changed  # what advise shows is the diff


def test_every_other_byte_is_kept():
    text = (SCRIPTS / "archer2_mpi.sbatch").read_text()
    new, changes = rewrite(read_script(text), Layout(2, 64, 2, 0, 1800))
    old_lines, new_lines = text.split("\n"), new.split("\n")
    assert len(old_lines) == len(new_lines)  # every value it needs was there to change
    kept = [k for k in range(len(old_lines)) if k + 1 not in {c.line for c in changes}]
    assert all(old_lines[k] == new_lines[k] for k in kept)
    assert [(c.line, c.new) for c in changes] == [
        (5, "#SBATCH --time=00:30:00"), (6, "#SBATCH --nodes=2"),
        (7, "#SBATCH --ntasks-per-node=64"), (8, "#SBATCH --cpus-per-task=2"),
        (18, "export OMP_NUM_THREADS=2")]  # srun gets -c through SRUN_CPUS_PER_TASK


def test_values_keep_their_spelling():
    text = "#!/bin/bash\n#SBATCH -N2\n#SBATCH --ntasks-per-node 4   # four\n" \
           "#SBATCH -t 30\nexport OMP_NUM_THREADS=$SLURM_CPUS_PER_TASK\n" \
           "#SBATCH --nodes=9\nsrun -n 8 ./app\n"
    new, _ = rewrite(read_script(text), Layout(1, 2, 1, 0, 600))
    assert new == ("#!/bin/bash\n#SBATCH -N1\n#SBATCH --ntasks-per-node 2   # four\n"
                   "#SBATCH -t 00:10:00\nexport OMP_NUM_THREADS=$SLURM_CPUS_PER_TASK\n"
                   "#SBATCH --nodes=9\nsrun -n 2 ./app\n")  # the ignored directive stays


def test_missing_directives_are_added_after_the_last_one_and_threads_exported():
    text = "#!/bin/bash\n#SBATCH --job-name=x\n\necho hi\nsrun ./app\n"
    new, changes = rewrite(read_script(text), Layout(2, 4, 2, 0, 120))
    assert new == ("#!/bin/bash\n#SBATCH --job-name=x\n#SBATCH --nodes=2\n"
                   "#SBATCH --ntasks-per-node=4\n#SBATCH --cpus-per-task=2\n"
                   "#SBATCH --time=00:02:00\n\necho hi\nexport OMP_NUM_THREADS=2\n"
                   "srun -c 2 ./app\n")
    assert [c.old for c in changes if c.old] == ["srun ./app"]


def test_pbs_select_and_walltime():
    text = (SCRIPTS / "pbspro_select.pbs").read_text()
    new, _ = rewrite(read_script(text), Layout(1, 16, 4, 0, 7200))
    assert "#PBS -l select=1:ncpus=64:mpiprocs=16:ompthreads=4\n" in new
    assert "#PBS -l walltime=02:00:00\n" in new and "mpiexec -n 16 ./solver" in new


def test_an_advised_queue_is_added_where_the_script_names_none():
    slurm = "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --time=00:10:00\nsrun ./app\n"
    new, _ = rewrite(read_script(slurm), Layout(1, 2, 1, 0, 60, "long"))
    assert read_script(new).partition == "long" and "#SBATCH --partition=long\n" in new
    pbs = "#!/bin/bash\n#PBS -l select=1:ncpus=2\nmpiexec ./app\n"
    new, _ = rewrite(read_script(pbs), Layout(1, 2, 1, 0, 60, "workq"))
    assert "#PBS -q workq\n" in new and new.index("#PBS -q") < new.index("mpiexec")
    new, _ = rewrite(read_script(slurm), Layout(1, 2, 1, 0, 60))
    assert "partition" not in new  # none advised: none added


def test_crlf_scripts_are_refused_for_pbs_as_for_slurm():
    # Was: a CRLF PBS script rewritten with its line ends kept; bash then runs `cd "dir\r"`
    # and the program gets `128\r` (s29 tester D8)
    with pytest.raises(ConfigError, match="carriage return.*dos2unix"):
        read_script("#!/bin/bash\r\n#PBS -l nodes=2:ppn=2\r\nmpiexec ./app\r\n")


def test_a_slurm_script_sbatch_would_refuse_or_several_jobs_in_one_are_refused():
    # Was: CRLF read and rewritten (sbatch refuses "DOS line breaks"), and a heterogeneous job
    # read as one request, component 0's tasks with component 1's nodes.
    with pytest.raises(ConfigError, match="DOS line breaks.*dos2unix"):
        read_script("#!/bin/bash\r\n#SBATCH --nodes=2\r\nsrun ./app\r\n")
    hetero = ("#!/bin/bash\n#SBATCH --nodes=1 --ntasks=1\n#SBATCH hetjob\n"
              "#SBATCH --nodes=2 --ntasks-per-node=2\nsrun --het-group=0 a : --het-group=1 b\n")
    with pytest.raises(ConfigError, match="heterogeneous job"):
        read_script(hetero)
    with pytest.raises(ConfigError, match="heterogeneous job"):
        read_script("#!/bin/bash\n#SBATCH -N 2\nsrun --het-group=1 ./b\n")
    read_script("#!/bin/bash\n#SBATCH --job-name=hetjob\nsrun ./app\n")  # a name, not a split


def test_values_the_scheduler_fills_in_stay_and_literal_ones_change():
    text = "#SBATCH -N 2 --ntasks-per-node=4 -c 2\nNP=8\n" \
           "srun -n $SLURM_NTASKS -c ${SLURM_CPUS_PER_TASK} ./a\nmpirun -np $NP ./b\n"
    new, _ = rewrite(read_script(text), Layout(1, 2, 1, 0, None))
    assert "srun -n $SLURM_NTASKS -c ${SLURM_CPUS_PER_TASK} ./a\n" in new
    assert new.startswith("#SBATCH -N 1 --ntasks-per-node=2 -c 1\n")
    again = read_script(new)
    assert again.layout() == (1, 2, 1)


@pytest.mark.parametrize("text", [
    "#PBS -l select=1:ncpus=2:mpiprocs=1:ompthreads=2\nexport OMP_NUM_THREADS=2\n"
    "mpiexec -n 1 hpcds1mpi run stencil --size 128 --threads 2\n",
    "#SBATCH -N 1\n#SBATCH --cpus-per-task=2\nsrun hpcds1mpi run stencil --size 128 \\\n"
    "    --threads=2\n",
])
def test_hpcds1mpi_own_threads_change_with_the_layout(text):
    """A rewrite to one thread per rank must not keep the program at --threads 2 (it would
    run twice the threads the new layout gives each rank)."""
    new, changes = rewrite(read_script(text), Layout(nodes=2, ranks_per_node=2, threads=1))
    assert "--threads 2" not in new and "--threads=2" not in new
    assert read_script(new).threads == 1
    assert any("--threads" in c.new for c in changes)


@pytest.mark.parametrize("gres, gpus, new", [
    ("lscratch:200,gpu:a100:2", 1, "#SBATCH --gres=lscratch:200,gpu:a100:1"),
    ("lscratch:200,gpu:a100:2", 0, "#SBATCH --gres=lscratch:200"),
    ("gpu:2(S:0)", 1, "#SBATCH --gres=gpu:1(S:0)"),
    ("gpu:a100", 2, "#SBATCH --gres=gpu:a100:2"),
    ("gpu:a100:2,gpu:v100:1", 2, "#SBATCH --gres=gpu:a100:2"),  # the total, once
    ("lscratch:200", 0, "#SBATCH --gres=lscratch:200"),  # was lscratch:0
])
def test_only_the_gpus_of_a_gres_list_change(gres, gpus, new):
    text = f"#!/bin/bash\n#SBATCH -N 1 --ntasks-per-node=2\n#SBATCH --gres={gres}\nsrun ./a\n"
    out, _ = rewrite(read_script(text), Layout(1, 2, 1, gpus))
    assert out.split("\n")[2] == new
    assert read_script(out).gpus_per_node == gpus


def test_a_gres_without_a_gpu_gets_the_gpus_beside_it():
    text = "#!/bin/bash\n#SBATCH -N 1\n#SBATCH --gres=lscratch:200\nsrun ./a\n"
    out, _ = rewrite(read_script(text), Layout(1, 2, 1, 2))
    assert "#SBATCH --gres=lscratch:200\n" in out and "#SBATCH --gpus-per-node=2\n" in out
    assert read_script(out).gpus_per_node == 2


def test_a_layout_without_gpus_removes_the_gpu_request():
    """The program runs on the CPU (h_gpucpu): its rewrite asked for 8 nodes x 1 GPU it would
    never use."""
    text = ("#!/bin/bash\n#SBATCH -N 1\n#SBATCH --gpus-per-node=4   # all four\n"
            "#SBATCH --ntasks-per-node=4 --gpus-per-task=1\n"
            "srun --gpus-per-task=1 ./a --device cpu\n")
    out, changes = rewrite(read_script(text), Layout(2, 4, 1, 0))
    assert out == ("#!/bin/bash\n#SBATCH -N 2\n#SBATCH --ntasks-per-node=4\n"
                   "export OMP_NUM_THREADS=1\nsrun ./a --device cpu\n")
    assert read_script(out).gpus_per_node == 0
    assert [(c.line, c.new) for c in changes if not c.new] == [(3, "")]  # removed


def test_the_steps_gpus_follow_the_layout():
    """A step asking more GPUs than the rewritten job holds is refused by Slurm."""
    text = "#!/bin/bash\n#SBATCH -N 1 --ntasks-per-node=4 --gpus-per-node=4\n" \
           "srun --gpus-per-node=4 ./a\n"
    out, _ = rewrite(read_script(text), Layout(4, 1, 2, 1))
    assert "srun -c 2 --gpus-per-node=1 ./a\n" in out
    again = read_script(out)
    assert again.gpus_per_node == 1 and again.base[0]["gpus_per_node"] == 1


GMX = ("#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --ntasks-per-node=1\n#SBATCH --cpus-per-task=2\n"
       "mpirun.openmpi -np 1 gmx_mpi mdrun -s w/30/topol.tpr -nsteps 300 -ntomp 2 -deffnm run\n")


def test_a_programs_thread_option_in_its_measured_command_changes_with_the_layout():
    """advise --rewrite cut --cpus-per-task to 1 and kept -ntomp 2: two threads on one CPU."""
    script = read_script(GMX)
    script.command = "gmx_mpi mdrun -s w/{size}/topol.tpr -nsteps 100 -ntomp {threads} -deffnm run"
    from hpcds1mpi.launch.script_request import resolve_launch

    resolve_launch(script, script.launch)
    out, changes = rewrite(script, Layout(1, 1, 1))
    assert "--cpus-per-task=1\n" in out and "-ntomp 1 -deffnm run\n" in out
    assert threads_note(script, Layout(1, 1, 1)) is None


def test_a_thread_option_the_rewrite_cannot_know_is_said_in_one_line():
    script = read_script(GMX)  # no measured command: which argument sets threads is unknown
    out, _ = rewrite(script, Layout(1, 1, 1))
    assert "-ntomp 2" in out  # not guessed
    note = threads_note(script, Layout(1, 1, 1))
    assert note == ("line 5: --rewrite does not change gmx_mpi's own thread option (-ntomp 2): "
                    "it sets 1 thread per rank in `--cpus-per-task=1` and `OMP_NUM_THREADS=1` "
                    "only, and the job runs "
                    "with the program's option as it is; set it to 1 by hand")
    assert threads_note(script, Layout(1, 1, 2)) is None  # the threads stay
    plain = read_script("#SBATCH -N 1 -c 4\nsrun ./app 8\n")
    assert "a thread option in app's arguments, if it has one" in \
        threads_note(plain, Layout(1, 1, 2))
    own = read_script("#SBATCH -N 1 -c 4\nsrun hpcds1mpi run gemm --size 8 --threads 4\n")
    assert threads_note(own, Layout(1, 1, 2)) is None  # its --threads is rewritten


def test_no_thread_option_is_asked_of_a_measured_command_without_threads():
    """s31 tester P7: every rewrite of `./heat 2400 100` asked to set "a thread option in
    heat's arguments, if it has one", though its measured command has no {threads}."""
    plain = read_script("#SBATCH -N 1 -c 4\nsrun ./heat 2400 100\n")
    plain.command = "./heat {size} 100"
    assert threads_note(plain, Layout(1, 1, 2)) is None
    gmx = read_script(GMX)
    gmx.command = "gmx_mpi mdrun -s w/{size}/topol.tpr -nsteps 100 -ntomp 2 -deffnm run"
    assert "(-ntomp 2)" in threads_note(gmx, Layout(1, 1, 1))  # a literal one is still said


def test_added_directives_come_before_an_added_export():
    """The export was added above the new #SBATCH lines when the launch line followed the
    directives: sbatch stops reading directives at the first command, so the job ran without
    the new --cpus-per-task and --time."""
    text = "#!/bin/bash\n#SBATCH -N 1\n#SBATCH --ntasks-per-node=2\nsrun ./app\n"
    out, _ = rewrite(read_script(text), Layout(2, 1, 4, 0, 60))
    assert out == ("#!/bin/bash\n#SBATCH -N 2\n#SBATCH --ntasks-per-node=1\n"
                   "#SBATCH --cpus-per-task=4\n#SBATCH --time=00:01:00\n"
                   "export OMP_NUM_THREADS=4\nsrun -c 4 ./app\n")
    again = read_script(out)
    assert again.ignored == [] and again.time_s == 60 and again.cpus_per_task == 4


PW = ("#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --ntasks=2\n#SBATCH --time=00:10:00\n"
      "NK=2\nmpirun pw.x -nk 2 -nd 1 -i si-30.in > si-30.out\n")


def _pw(text: str, command: str | None):
    from hpcds1mpi.launch.script_request import resolve_launch

    script = read_script(text)
    script.command = command
    resolve_launch(script, script.launch)
    return script


@pytest.mark.parametrize("placeholder", ["{ranks}", "{ranks_per_node}"])
def test_a_rank_count_in_the_measured_command_changes_with_the_layout(placeholder):
    """s27 tester R 2: --rewrite went from 2 ranks to 1 and kept pw.x's -nk 2, which pw.x
    refuses ("invalid number of pools"). Where the measured command has -nk {ranks}, the
    rewrite sets it as it sets -ntomp {threads}."""
    script = _pw(PW, f"pw.x -nk {placeholder} -nd 1 -i si-{{size}}.in")
    out, changes = rewrite(script, Layout(1, 1, 2))
    assert out.endswith("mpirun pw.x -nk 1 -nd 1 -i si-30.in > si-30.out\n"), out
    assert any(c.line == 6 for c in changes)
    assert ranks_note(script, Layout(1, 1, 2), Layout(1, 2, 1)) is None
    wide, _ = rewrite(script, Layout(2, 4, 1))
    assert f"-nk {8 if placeholder == '{ranks}' else 4} -nd 1" in wide
    by_variable = _pw(PW.replace("-nk 2", "-nk $NK"), "pw.x -nk {ranks} -i si-{size}.in")
    out, _ = rewrite(by_variable, Layout(1, 1, 1))
    assert "-nk $NK" in out  # the script's own variable: said, not edited
    assert ranks_note(by_variable, Layout(1, 1, 1), Layout(1, 2, 1)) == (
        "line 6: the program's -nk 2 comes from $NK, which --rewrite does not change: set it "
        "to 1")


def test_arguments_equal_to_the_old_rank_count_are_named_when_the_rewrite_changes_it():
    script = _pw(PW, "pw.x -i si-{size}.in")  # which argument follows the ranks is unknown
    out, _ = rewrite(script, Layout(1, 1, 2))
    assert "pw.x -nk 2 -nd 1" in out  # not guessed
    assert ranks_note(script, Layout(1, 1, 2), Layout(1, 2, 1)) == (
        "line 6: pw.x's -nk 2 equals the script's 2 ranks and stays as written; the rewrite "
        "runs 1 rank, which it may no longer fit (a pool or decomposition count must divide "
        "the ranks): set it by hand, or sweep the program with it as {ranks} so --rewrite "
        "sets it")
    assert ranks_note(script, Layout(1, 2, 2), Layout(1, 2, 1)) is None  # the ranks stay
    assert ranks_note(_pw(PW, None), Layout(1, 1, 1), Layout(1, 2, 1)).startswith(
        "line 6: pw.x's -nk 2 equals")  # a workload known by its label alone
    several = _pw(PW.replace("-nd 1", "--ndiag=2 -ntomp 2"), None)
    assert "pw.x's -nk 2, --ndiag=2 equal the script's 2 ranks and stay" in ranks_note(
        several, Layout(1, 4, 1), Layout(1, 2, 1))  # -ntomp 2: threads_note's, not named
    one_rank = _pw(PW.replace("--ntasks=2", "--ntasks=1").replace("-nk 2", "-nk 1"), None)
    assert ranks_note(one_rank, Layout(1, 4, 1), Layout(1, 1, 1)) is None  # 1 fits any count
    sized = _pw(PW.replace("si-30.in", "2"), "pw.x -nk 1 -nd 1 -i {size}")
    assert "-nk 2 equals" in ranks_note(sized, Layout(1, 1, 1), Layout(1, 2, 1))
    assert "-i 2" not in ranks_note(sized, Layout(1, 1, 1), Layout(1, 2, 1))  # the size


GEMM_PBS = ("#!/bin/bash\n#PBS -l select=2:ncpus=2:mpiprocs=2:ompthreads=1\n#PBS -l place=scatter\n"
            "#PBS -l walltime=00:10:00\ncd $PBS_O_WORKDIR\n"
            "mpiexec -n 4 hpcds1mpi run gemm --size 3000 --precision bf16\n")


def test_hpcds1mpi_run_without_threads_gets_the_layouts_threads():
    """s28 tester V5: the rewrite to 2 threads per rank set ompthreads=2 and left `hpcds1mpi
    run` without --threads, which runs 1 thread."""
    script = read_script(GEMM_PBS)
    out, changes = rewrite(script, Layout(4, 1, 2))
    assert out.endswith("mpiexec -n 4 hpcds1mpi run --threads 2 gemm --size 3000 "
                        "--precision bf16\n")
    assert read_script(out).threads == 2 and any(c.line == 6 for c in changes)
    assert threads_note(script, Layout(4, 1, 2)) is None  # the rewrite sets them
    assert "--threads" not in rewrite(script, Layout(4, 2, 1))[0]  # 1: run's default


CSH = ("#!/bin/csh\n#PBS -l select=1:ncpus=2:mpiprocs=1:ompthreads=2\n#PBS -l walltime=00:10:00\n"
       "cd $PBS_O_WORKDIR\nsetenv OMP_NUM_THREADS 2\nmpiexec -n 1 ./app --size 128\n")


def test_csh_setenv_is_read_and_rewritten_as_export_is():
    """s28 tester V6: `setenv OMP_NUM_THREADS 2` was neither read nor rewritten: the rewrite to
    2 ranks x 1 thread per node left 2 threads per rank."""
    assert read_script(CSH).threads == 2
    assert read_script(CSH.replace("THREADS 2", "THREADS 1")).threads == 1  # not ompthreads'
    out, changes = rewrite(read_script(CSH), Layout(4, 2, 1))
    assert "\nsetenv OMP_NUM_THREADS 1\n" in out and read_script(out).threads == 1
    slurm = "#!/bin/tcsh -f\n#SBATCH -N 1\nsrun ./app\n"
    out, _ = rewrite(read_script(slurm), Layout(1, 1, 2))
    assert "\nsetenv OMP_NUM_THREADS 2\nsrun -c 2 ./app\n" in out and "export" not in out


def test_env_after_the_launcher_sets_the_ranks_threads():
    """``mpiexec -n 1 env OMP_NUM_THREADS=2 ./app``: the program was read as ``env``, its
    threads as none set."""
    script = read_script("#PBS -l select=1:ncpus=2\nmpiexec -n 1 env OMP_NUM_THREADS=2 ./app 5\n")
    assert (script.threads, script.launch.program, script.launch.args) == (2, "./app", ["5"])
    out, _ = rewrite(script, Layout(2, 2, 1))
    assert out.endswith("mpiexec -n 4 env OMP_NUM_THREADS=1 ./app 5\n")


VARIABLE_THREADS = "#!/bin/bash\n#PBS -l select=2:ncpus=2:mpiprocs=2\n#PBS -l walltime=00:05:00\n"


@pytest.mark.parametrize("setting, given", [
    ('export FOO=1 OMP_NUM_THREADS=1 BAR="x y" && echo keep-me\n', "${OMP_NUM_THREADS}"),
    ("export OMP_NUM_THREADS=1\n", '"$OMP_NUM_THREADS"'),
    ("setenv OMP_NUM_THREADS 1;echo keep-me\n", "$OMP_NUM_THREADS"),
    ("export OMP_NUM_THREADS=1\n", "=${OMP_NUM_THREADS}"),
])
def test_a_threads_variable_is_given_threads_and_follows_the_rewrite(setting, given):
    """s28 tester Z2: `--threads ${OMP_NUM_THREADS}` was not seen, so the rewrite added
    `--threads 2` before it and the job failed: '--threads is given 2 times'."""
    shell = "#!/bin/csh\n" if setting.startswith("setenv") else ""
    text = (shell + VARIABLE_THREADS.split("\n", 1)[1] if shell else VARIABLE_THREADS) + \
        setting + "mpiexec -n 4 hpcds1mpi run stencil --size 200 --threads" + \
        ("" if given.startswith("=") else " ") + given + "\n"
    script = read_script(text)
    assert script.threads == 1
    out, _ = rewrite(script, Layout(1, 1, 2))
    launch_line = out.splitlines()[-1]
    assert launch_line.count("--threads") == 1 and launch_line.endswith(given)
    assert read_script(out).threads == 2  # through the OMP_NUM_THREADS the rewrite set
    assert threads_note(script, Layout(1, 1, 2)) is None


def test_a_threads_variable_of_the_scripts_own_is_kept_and_said():
    """`--threads $NT`: the rewrite does not change NT, adds no second --threads, and says
    to set it."""
    text = VARIABLE_THREADS + "NT=1\nmpiexec -n 4 hpcds1mpi run stencil --size 200 --threads $NT\n"
    script = read_script(text)
    out, _ = rewrite(script, Layout(1, 1, 2))
    assert out.count("--threads") == 1 and "NT=1\n" in out
    assert "come from $NT" in threads_note(script, Layout(1, 1, 2))
    unknown = read_script(text.replace("NT=1\n", ""))  # unknown here: still no second one
    assert rewrite(unknown, Layout(1, 1, 2))[0].count("--threads") == 1
    assert any("--threads $NT could not be resolved" in n for n in unknown.notes)


def test_srun_gets_the_mpi_plugin_advises_check_found_it_needs():
    """s32 tester U5: the rewrite kept `srun meep ...` (MpiDefault=pmi2, Debian's Open MPI)
    and the rewritten job failed in MPI_Init; the plugin advise's check names
    (``script.srun_mpi_fix``) is written on the srun line, or replaces its own --mpi."""
    text = ("#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --ntasks-per-node=2\n\n"
            "srun meep res=18 wg.ctl\n")
    script = read_script(text)
    script.srun_mpi_fix = "pmix"
    new, changes = rewrite(script, Layout(1, 1, 1))
    assert new.splitlines()[-1] == "srun --mpi=pmix meep res=18 wg.ctl", new
    script = read_script(text.replace("srun meep", "srun --mpi=pmi2 meep"))
    script.srun_mpi_fix = "pmix"
    assert rewrite(script, Layout(1, 1, 1))[0].splitlines()[-1] == \
        "srun --mpi=pmix meep res=18 wg.ctl"
    script = read_script(text)  # nothing found: the line is kept
    assert rewrite(script, Layout(1, 1, 1))[0].splitlines()[-1] == "srun meep res=18 wg.ctl"


@pytest.mark.parametrize("launch", ["mpirun -np $SLURM_NTASKS ./toy 16000",
                                    "mpirun -np 4 -machinefile hosts ./toy 16000",
                                    "srun ./toy 16000"])
def test_a_rewrite_to_one_thread_sets_omp_num_threads(launch):
    """s38 tester D3: the rewrite to 2 ranks x 1 thread set no OMP_NUM_THREADS, and under the
    venv's mpirun each rank of the OpenMP program ran 2 threads on the node's 2 cores."""
    text = f"#!/bin/bash\n#SBATCH --ntasks=4\n#SBATCH --time=90\n\nmodule purge\n{launch}\n"
    out, changes = rewrite(read_script(text), Layout(1, 2, 1, 0, 60))
    assert f"module purge\nexport OMP_NUM_THREADS=1\n{launch.replace('-np 4', '-np 2')}\n" \
        in out
    assert any(c.new == "export OMP_NUM_THREADS=1" for c in changes)
    csh = rewrite(read_script("#!/bin/csh -f\n" + text.split("\n", 1)[1]), Layout(1, 2, 1))[0]
    assert "setenv OMP_NUM_THREADS 1\n" in csh
    kept = rewrite(read_script(text.replace("module purge", "export OMP_NUM_THREADS=2")),
                   Layout(1, 2, 1))[0]
    assert "export OMP_NUM_THREADS=1\n" in kept and kept.count("OMP_NUM_THREADS") == 1


def test_a_program_that_sets_its_own_threads_gets_no_export_for_one():
    """hpcds1mpi run's --threads sets its threads: nothing to add at one thread."""
    text = "#!/bin/bash\n#SBATCH --ntasks=4\nsrun hpcds1mpi run gemm --size 512\n"
    assert "OMP_NUM_THREADS" not in rewrite(read_script(text), Layout(1, 2, 1))[0]


def test_a_per_cpu_memory_is_raised_per_cpu_of_the_rewritten_node():
    """s41 tester B8: only a --mem was raised; a --mem-per-cpu below the need stayed. It is
    now the layout's memory per node over the CPUs the rewritten script gives a node."""
    script = read_script("#!/bin/bash\n#SBATCH -N 1\n#SBATCH -n 2\n#SBATCH -c 2\n"
                         "#SBATCH --mem-per-cpu=1M\n#SBATCH -t 10\nsrun ./app\n")
    text, _ = rewrite(script, Layout(1, 2, 1, memory_mib=1035))
    assert "#SBATCH --mem-per-cpu=518M\n" in text and "#SBATCH -c 1\n" in text, text
    text, _ = rewrite(script, Layout(1, 1, 3, memory_mib=1035))
    assert "#SBATCH --mem-per-cpu=345M\n" in text, text
    text, _ = rewrite(script, Layout(1, 2, 1))  # enough: kept
    assert "#SBATCH --mem-per-cpu=1M\n" in text


@pytest.mark.parametrize("line, kept", [
    ("srun apptainer exec sim.sif hpcds1mpi run --threads 2 stencil --size 48", None),
    ("srun valgrind -q hpcds1mpi run --threads 2 stencil --size 48", None),
    ("srun apptainer exec sim.sif gmx_mpi mdrun -ntomp 2", "gmx_mpi's own thread option "
     "(-ntomp 2)")])
def test_a_programs_thread_option_under_a_container_is_its_own(line, kept):
    """s42 tester F8: `apptainer exec IMG hpcds1mpi run --threads 2` kept --threads 2 at one
    thread per rank, and the note blamed "apptainer's own thread option"."""
    script = read_script(f"#!/bin/bash\n#SBATCH -N 1\n#SBATCH -c 2\n{line}\n")
    out, _ = rewrite(script, Layout(1, 2, 1))
    note = threads_note(script, Layout(1, 2, 1))
    if kept is None:
        assert "--threads 1 stencil" in out and note is None
    else:
        assert kept in note and "apptainer" not in note
