"""Work a job script does after its launch keeps its time limit; set-up and output handling
do not (s42: a program on the line after the launch had the limit cut to one launch's)."""

from __future__ import annotations

import pytest

from hpcds1mpi.decide.work_after_launch import work_after, work_after_note, work_before
from hpcds1mpi.launch.script_reading import read_script

HEAD = "#!/bin/bash\n#SBATCH -N 1\n#SBATCH --ntasks-per-node=4\n#SBATCH --time=00:30:00\n"
LAUNCH = "mpirun -np 4 ./prog 128"


def _after(body: str, launch: str = LAUNCH):
    script = read_script(f"{HEAD}{launch}\n{body}")
    return work_after(script, script.launch)


@pytest.mark.parametrize("body, found", [
    ("./postprocess out.dat\n", (6, "./postprocess out.dat")),
    ("python3 plot.py\n", (6, "python3 plot.py")),
    ("echo done\n\n# plot it\npython3 plot.py > plot.log 2>&1\n", (9, "python3 plot.py")),
    ("cd results && gnuplot run.gp\n", (6, "gnuplot run.gp")),
    ("time ./postprocess\n", (6, "time ./postprocess")),  # an exec wrapper's program
    ("env X=1 Rscript stats.R\n", (6, "env X=1 Rscript stats.R")),
    ("if [ -f out.dat ]; then\n  python3 plot.py\nfi\n", (7, "python3 plot.py")),
    ("sleep 600\n", (6, "sleep 600")),  # takes time
    ("source post.sh\n", (6, "source post.sh")),  # runs commands not read here
    ("$POST out.dat\n", (6, "$POST out.dat")),  # a program not known here is work
    ("find . -name '*.dat' -exec python3 post.py {} +\n",  # runs a program of its own (R4)
     (6, "find . -name *.dat -exec python3 post.py {} +")),
    # s42 tester F1: an assignment's command substitution runs a program
    ("RESULT=$(python3 summarize.py out.dat)\necho $RESULT\n",
     (6, "python3 summarize.py out.dat")),
    ("x=`./post`\n", (6, "./post")),
    ('echo "mean: $(awk -f m.awk $(./post out.dat))"\n', (6, "./post out.dat")),
])
def test_a_program_after_the_launch_is_found_with_its_line(body, found):
    assert _after(body) == found


@pytest.mark.parametrize("body", [
    "",
    "echo done\nexit 0\n",
    "# python3 plot.py\n",  # a comment
    "wait\nRESULT=out.dat\nexport OMP_NUM_THREADS=1\ncd $HOME\nmodule purge\n",
    "cp out.dat $HOME/\nmv log old.log\ntar czf out.tgz out/\nrm -rf tmp\nmkdir -p done\n",
    "seff $SLURM_JOB_ID\ndate\nhostname\n",
    "if [ $? -ne 0 ]; then echo failed; exit 1; fi\n",
    "for f in *.dat; do gzip $f; done\n",
    "cat > post.in <<EOF\npython3 plot.py\n./postprocess\nEOF\n",  # a here-document's body
    # s42 review R4: chaining the next job, stopping a monitor, asking about the node
    "sbatch --dependency=afterok:$SLURM_JOB_ID next.sh\nkill $MON\njobstats\nnproc\nfree -g\n"
    "uname -a\nscancel $OTHER\ndeactivate\n",
    # substitutions that ask something, arithmetic, quoted text
    'N=$(nproc)\nfor i in $(seq 1 4); do echo $i; done\nOUT=$(basename $(pwd))\n'
    "echo $((2 * 3)) '$(python3 x.py)'\nD=`date +%s`\n",
    # s42 tester F6: PBS's own chaining and queries, as Slurm's
    "qsub -W depend=afterok:$PBS_JOBID next.pbs\nqstat -f $PBS_JOBID\nqdel $OTHER\n"
    "pbsnodes -a\ntracejob $PBS_JOBID\n",
])
def test_set_up_and_output_handling_after_the_launch_are_no_work(body):
    assert _after(body) is None


def test_a_here_document_fed_to_the_launch_is_no_command():
    assert _after("python3 plot.py\n./postprocess\nEND\necho done\n",
                  LAUNCH + " <<END") is None


@pytest.mark.parametrize("launch, found", [
    (LAUNCH + " ; python3 plot.py", "python3 plot.py"),
    (LAUNCH + " && ./postprocess", "./postprocess"),
    (LAUNCH + " | ./filter > out", "./filter"),
    (LAUNCH + " 2>&1 | tee run.log", None),  # output handling
    (LAUNCH + " || echo failed", None),
])
def test_work_on_the_launchs_own_line_is_found(launch, found):
    assert _after("", launch) == ((5, found) if found else None)


def test_the_note_names_the_line_the_command_and_the_kept_limit():
    script = read_script(f"{HEAD}{LAUNCH}\npython3 plot.py\n")
    note = work_after_note(script, script.launch)
    assert note == ("line 6 runs `python3 plot.py` after the launch on line 5: the recommended "
                    "walltime covers the launch alone, so --rewrite keeps its --time "
                    "(00:30:00); check it covers both")
    assert work_after_note(script, None) is None


@pytest.mark.parametrize("before, found", [
    ("python3 make_mesh.py 128\n", (5, "python3 make_mesh.py 128")),
    ("module load gcc\nsource env.sh\n./preprocess in.dat\n", (7, "./preprocess in.dat")),
    ('set -euo pipefail\neval "$(conda shell.bash hook)"\nconda activate sim\nexport X=1\n'
     "cd $SLURM_SUBMIT_DIR\nmkdir -p out\ncp in.dat out/\nulimit -s unlimited\n", None),
])
def test_a_program_before_the_launch_is_work_and_set_up_is_none(before, found):
    """s42 review R3: `python3 make_mesh.py` before the launch had the limit cut to the
    launch's own; set-up (modules, environments, copies) before it is no work."""
    script = read_script(f"{HEAD}{before}{LAUNCH}\n")
    assert work_before(script, script.launch) == found
    note = work_after_note(script, script.launch)
    assert (note is not None and "before the launch" in note and "00:30:00" in note) == bool(found)


@pytest.mark.parametrize("before, after, found", [
    ("trap 'python3 post.py' EXIT\n", "", (5, "python3 post.py")),
    ('trap "cp out.dat $HOME/; python3 post.py" 0 TERM\n', "", (5, "python3 post.py")),
    ("", "trap 'python3 post.py' EXIT\n", (6, "python3 post.py")),
    ("trap 'cp out.dat $HOME/' EXIT\n", "", None),  # output handling
    ("trap 'python3 post.py' TERM USR1\n", "", None),  # runs only on a signal
    ("trap - EXIT\n", "", None),
])
def test_an_exit_traps_command_runs_after_the_launch(before, after, found):
    """s42 tester F2: `trap 'python3 post.py' EXIT` post-processes when the script ends, after
    the launch; it is no work before it."""
    script = read_script(f"{HEAD}{before}{LAUNCH}\n{after}")
    assert work_after(script, script.launch) == found
    assert work_before(script, script.launch) is None
    note = work_after_note(script, script.launch)
    assert (note or "").startswith("line 5 sets an exit trap that runs `python3 post.py` after "
                                   "the launch on line 6" if found and before else
                                   "line 6 runs" if found else "")


@pytest.mark.parametrize("before, after, found", [
    # s42 tester F4: inspection before the launch, a monitor in the background
    ("env | sort > env.txt\nnumactl --hardware\ngit rev-parse HEAD > version.txt\n"
     "ldd ./prog\nlfs setstripe -c 4 .\n", "", None),
    ("./monitor.sh &\nMON=$!\n", "kill $MON\n", None),
    ("", "./post_a out.dat &\n", None),  # the job ends with the script
    ("./pre_a &\n./pre_b &\nwait\n", "", (5, "./pre_a")),  # waited for: work
    ("./pre_a & ./pre_b & wait\n", "", (5, "./pre_a")),
    ("./monitor.sh &\n", "wait\n", (5, "./monitor.sh")),
    ("numactl --cpunodebind=0 ./pre\n", "", (5, "numactl --cpunodebind=0 ./pre")),
])
def test_inspection_and_unwaited_background_jobs_are_no_work(before, after, found):
    script = read_script(f"{HEAD}{before}{LAUNCH}\n{after}")
    assert (work_before(script, script.launch) or work_after(script, script.launch)) == found


@pytest.mark.parametrize("script_body, found", [
    # s42 tester F5: calling the function that holds the launch is the launch
    (f"run_sim() {{\n  {LAUNCH}\n}}\nrun_sim\n", None),
    (f"function run_sim {{\n  {LAUNCH}\n}}\nrun_sim 128 && echo done\n", None),
    (f"run_sim()\n{{\n  {LAUNCH}\n}}\nrun_sim 128\nrun_sim 256\n", (10, "run_sim 256")),  # again
    (f"run_sim() {{\n  {LAUNCH}\n}}\nrun_sim\npython3 plot.py\n", (9, "python3 plot.py")),
    # called in a loop it launches once per pass: work, the limit kept (not one launch's)
    (f"run_sim() {{\n  {LAUNCH}\n}}\nfor s in 1 2; do run_sim $s; done\n",
     (8, "run_sim $s")),
    (f"run_sim() {{\n  {LAUNCH}\n}}\nfor s in 1 2\ndo\n  run_sim $s\ndone\n", (10, "run_sim $s")),
])
def test_a_call_of_the_function_holding_the_launch_is_no_work(script_body, found):
    script = read_script(f"{HEAD}{script_body}")
    assert (work_before(script, script.launch) or work_after(script, script.launch)) == found


@pytest.mark.parametrize("launch, tool", [
    # s42 tester F9: the measured program ran without the tool, which slows it
    ("srun valgrind --tool=memcheck --log-file=v.log ./prog 128", "valgrind"),
    ("mpirun -np 4 nsys profile -o out ./prog 128", "nsys"),
    ("srun numactl -l strace -f ./prog 128", "strace"),
    ("srun gdb -batch -ex run --args ./prog 128", "gdb"),
    ("srun tau_exec -T mpi ./prog 128", "tau_exec"),
    ("srun likwid-pin -c 0-3 ./prog 128", ""),  # pins, at no cost
    (LAUNCH, ""),
])
def test_a_program_under_a_profiler_or_debugger_keeps_the_limit(launch, tool):
    script = read_script(f"{HEAD}{launch}\n")
    note = work_after_note(script, script.launch)
    assert note == (f"line 5 runs the program under `{tool}`, which slows it: the recommended "
                    "walltime is the program's alone, measured without it, so --rewrite keeps "
                    f"its --time (00:30:00); check it covers the run under {tool}"
                    if tool else None)


def test_a_launcher_asked_only_for_its_version_before_the_launch_is_no_work():
    """s42 tester F3: `mpirun --version` before the launch is read as no launch
    (launch/informational_launches.py), and so it is no work either: it prints and exits."""
    for line in ("mpirun --version", "srun --version", "mpiexec --help"):
        script = read_script(f"{HEAD}{line}\n{LAUNCH}\n")
        assert work_before(script, script.launch) is None, line


@pytest.mark.parametrize("after, found", [
    ("PID=$!\nwhile kill -0 $PID; do sleep 60; done\n", None),
    ("PID=$!\nwhile kill -0 $PID 2>/dev/null\ndo\n  sleep 60\n  tail -1 run.log\ndone\n", None),
    ("PID=$!\nuntil ! ps -p $PID > /dev/null; do sleep 30; done\necho done\n", None),
    ("PID=$!\nwhile [ -d /proc/$PID ]; do sleep 30; done\n", None),
    # the poll waits for its job; other work in the loop, or after it, is work still
    ("PID=$!\nwhile kill -0 $PID; do python3 watch.py; sleep 60; done\n",
     (7, "python3 watch.py")),
    ("PID=$!\nwhile kill -0 $PID; do sleep 60; done\npython3 plot.py\n", (8, "python3 plot.py")),
    ("sleep 60\n", (6, "sleep 60")),  # a sleep of its own
])
def test_polling_a_background_launch_until_it_ends_is_no_work(after, found):
    """s42: ``while kill -0 $PID; do sleep 60; done`` waits for the launch run with ``&``,
    but its ``sleep`` was work, so the limit was kept."""
    assert _after(after, LAUNCH + " &") == found


@pytest.mark.parametrize("after, found", [
    ("PID=$!\nwhile kill -0 $PID; do sleep 60; done; sleep 3600\n", (7, "sleep 3600")),
    ("PID=$!\nwhile kill -0 $PID\ndo\n  sleep 60\ndone; sleep 3600\n", (10, "sleep 3600")),
    ("PID=$!\nwhile kill -0 $PID; do for i in 1 2; do sleep 9; done; done; sleep 5\n",
     (7, "sleep 5")),
    ("PID=$!\nsleep 5; while kill -0 $PID; do sleep 60; done\n", (7, "sleep 5")),
    ("PID=$!\ntrue; while kill -0 $PID; do sleep 60; done\n", None),
])
def test_only_a_sleep_in_the_polling_loops_body_waits_for_the_job(after, found):
    """s43 tester J7: ``done; sleep 3600`` on the poll loop's line had been taken for the
    poll's own sleep, so the hour after the launch was missed and the limit cut."""
    assert _after(after, LAUNCH + " &") == found


def test_a_polled_background_job_is_waited_for():
    """A job polled until it ends holds job time, as one a ``wait`` waits for does."""
    script = read_script(f"{HEAD}{LAUNCH}\n./post &\nP=$!\nwhile kill -0 $P; do sleep 5; done\n")
    assert work_after(script, script.launch) == (6, "./post")


@pytest.mark.parametrize("script_body, note_start", [
    # s42: the body of a function defined before the launch had been said to run before it
    ("post() {\n  python3 plot.py\n}\n" + LAUNCH + "\npost\n",
     "line 9 runs `post (runs python3 plot.py)` after the launch on line 8"),
    ("post() { python3 plot.py; }\n" + LAUNCH + "\npost out.dat\n",
     "line 7 runs `post out.dat (runs python3 plot.py)` after the launch on line 6"),
    ("post() {\n  python3 plot.py\n}\npost\n" + LAUNCH + "\n",
     "line 8 runs `post (runs python3 plot.py)` before the launch on line 9"),
    ("post() {\n  python3 plot.py\n}\n" + LAUNCH + "\npost &\n", ""),  # not waited for
    ("post() { python3 plot.py; }\n" + LAUNCH + "\n", ""),  # never called
])
def test_a_functions_work_is_said_where_it_is_called(script_body, note_start):
    script = read_script(f"{HEAD}{script_body}")
    assert (work_after_note(script, script.launch) or "").startswith(note_start)


@pytest.mark.parametrize("body, before, after", [
    ("finish() { echo done; cp out.dat $HOME/; }\n" + LAUNCH + "\nfinish\n", None, None),
    ("finish() {\n  echo done\n  cp out.dat $HOME/\n}\n" + LAUNCH + "\nfinish\n", None, None),
    ("setup() { source env.sh; module load x; }\nsetup\n" + LAUNCH + "\n", None, None),
    ("setup() { source env.sh; }\n" + LAUNCH + "\nsetup\n", None,
     (7, "setup (runs source env.sh)")),
    ("finish() { echo done; python3 plot.py; }\n" + LAUNCH + "\nfinish\n", None,
     (7, "finish (runs python3 plot.py)")),
])
def test_a_calls_work_is_its_bodys_by_the_rules_of_the_calls_place(body, before, after):
    """s43 review R7: a call was judged apart from where it stands (``source`` in a body
    called before the launch was work) and said by its name alone."""
    script = read_script(HEAD + body)
    assert (work_before(script, script.launch), work_after(script, script.launch)) == \
        (before, after)


@pytest.mark.parametrize("poll", [
    "while kill -0 $PID; do sleep 60; done", "while test -d /proc/$PID; do sleep 60; done",
    "while [ -e /proc/$PID ]; do sleep 60; done",
    'while [[ -d "/proc/${PID}" ]]; do sleep 60; done',
    'while [ -n "$(ps -p $PID -o pid=)" ]; do sleep 60; done',
    "until ! ps -p $PID > /dev/null; do sleep 60; done",
    "while pgrep -f ./prog > /dev/null; do sleep 60; done",
    "while pidof prog > /dev/null; do sleep 60; done"])
def test_any_spelling_of_a_poll_of_the_launch_waits_for_it(poll):
    """s43 review R8: only the tests' spellings had been polls; the others' sleep was work."""
    script = read_script(f"{HEAD}{LAUNCH} &\nPID=$!\n{poll}\n")
    assert work_after(script, script.launch) is None


def test_a_loop_waiting_for_a_file_is_no_poll_of_the_launch():
    script = read_script(f"{HEAD}{LAUNCH} &\nwhile ! [ -f done.flag ]; do sleep 60; done\n")
    assert work_after(script, script.launch) == (6, "sleep 60")


@pytest.mark.parametrize("tail, before", [
    ("PID=$!\nwhile kill -0 $PID; do sleep 60; done\n", None),
    ("PID=$!\nwait $PID\n", None),
    ("wait\n", (5, "./monitor.sh")),  # a bare wait waits for every background job
    ("PID=$!\nwait $PID $MON\n", (5, "./monitor.sh"))])
def test_a_wait_or_poll_of_one_pid_waits_for_that_job_alone(tail, before):
    """s43 review R15: a poll of the launch's PID had waited for a monitor started before."""
    body = "./monitor.sh &\n" + ("MON=$!\n" if "$MON" in tail else "") + LAUNCH + " &\n" + tail
    script = read_script(HEAD + body)
    assert work_before(script, script.launch) == before


@pytest.mark.parametrize("body, before, after", [
    ("run_sim() { srun ./app 96 20; }\npython3 make_mesh.py\nrun_sim\n",
     (6, "python3 make_mesh.py"), None),
    ("run_sim() {\n  srun ./app 96 20\n}\npython3 make_mesh.py\nrun_sim\n",
     (8, "python3 make_mesh.py"), None),
    ("run_sim() {\n  python3 pre.py\n  srun ./app 96 20\n  python3 post.py\n}\nrun_sim\n",
     (6, "python3 pre.py"), (8, "python3 post.py")),
    ("run_sim() { srun ./app 96 20; }\necho ready\nrun_sim\npython3 plot.py\n",
     None, (8, "python3 plot.py"))])
def test_a_launch_in_a_function_runs_at_its_call(body, before, after):
    """s43 review R13: pre-processing between the definition and the call had been said to
    run after the launch (placed at the definition)."""
    script = read_script(HEAD + body)
    assert (work_before(script, script.launch), work_after(script, script.launch)) == \
        (before, after)
    if before and not after:  # the note says work after the launch first
        assert "(run by `run_sim` on line" in work_after_note(script, script.launch)


@pytest.mark.parametrize("tail, before", [
    ("while kill -0 $!; do sleep 60; done\n", None),  # $!: the launch's PID
    ("wait $!\n", None),
    ("./other &\nOTHER=$!\nwait $OTHER\n", None)])  # another job's PID set after
def test_a_wait_for_the_last_background_pid_waits_for_that_job_alone(tail, before):
    script = read_script(HEAD + "./monitor.sh &\n" + LAUNCH + " &\n" + tail)
    assert work_before(script, script.launch) == before
