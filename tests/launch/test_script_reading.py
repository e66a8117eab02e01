"""Reading users' batch scripts: 16 scripts in the styles of site user guides (NERSC, ALCF,
LUMI, ARCHER2, TACC, CSD3, PBS Pro, Torque), each read to the nodes, ranks per node, threads,
GPUs and time limit the scheduler would give it, and sbatch's rules one by one."""

from __future__ import annotations

from pathlib import Path

import pytest

from hpcds1mpi.errors import ConfigError
from hpcds1mpi.launch.script_options import gpu_count, parse_pbs_time, parse_slurm_time
from hpcds1mpi.launch.script_reading import read_script, unread_lines

SCRIPTS = Path(__file__).resolve().parents[1] / "data" / "jobscripts"

# name: (scheduler, nodes, ranks per node, threads, GPUs per node, time s, partition,
#        launcher, program)
EXPECTED = {
    "nersc_perlmutter_cpu.sbatch": ("slurm", 2, 16, 8, 0, 1800, None, "srun", "./mycode.exe"),
    "nersc_perlmutter_gpu.sbatch": ("slurm", 2, 4, 32, 4, 3600, None, "srun", "./gpu_app"),
    "archer2_mpi.sbatch": ("slurm", 4, 128, 1, 0, 1200, "standard", "srun",
                           "./my_mpi_executable.x"),
    "archer2_hybrid.sbatch": ("slurm", 2, 16, 8, 0, 3600, "standard", "srun", "xthi"),
    "lumi_g.sbatch": ("slurm", 2, 8, 1, 8, 129600, "standard-g", "srun", "./select_gpu"),
    "lumi_c_ntasks.sbatch": ("slurm", 2, 128, 1, 0, 1800, "standard", "srun",
                             "./my_application"),
    "tacc_frontera.sbatch": ("slurm", 4, 8, 7, 0, 5400, "normal", "ibrun", "./mycode.exe"),
    "csd3_icelake.sbatch": ("slurm", 1, 76, 1, 0, 7200, "icelake", "mpirun", None),
    "alcf_polaris.pbs": ("pbs", 4, 4, 2, 0, 1800, "debug-scaling", "mpiexec",
                         "./hello_affinity"),
    "pbspro_select.pbs": ("pbs", 2, 32, 2, 0, 3600, "workq", "mpiexec", "./solver"),
    "torque_nodes_ppn.pbs": ("pbs", 2, 32, 1, 0, 600, None, "mpirun", "./a.out"),
    "directives_after_command.sbatch": ("slurm", 2, 4, 1, 0, None, None, "srun", "./app"),
    "continuation.sbatch": ("slurm", 2, 8, 4, 0, 109800, None, "srun", "./stencil"),
    "gres_gpu.sbatch": ("slurm", 1, 4, 8, 4, 2700, "gpu", "srun", "./train.py"),
    "openmpi_mapby.sbatch": ("slurm", 2, 8, 2, 0, 5400, None, "mpirun", "./nbody"),
    "abbreviated.sbatch": ("slurm", 3, 4, 1, 0, 360, None, "srun", "./app"),
    "lab_stencil.sbatch": ("slurm", 2, 1, 2, 0, 1800, "standard", "srun", "hpcds1mpi"),
}


def test_every_script_here_is_checked():
    scripts = {p.name for p in SCRIPTS.iterdir() if p.suffix in (".sbatch", ".pbs")}
    assert scripts == set(EXPECTED)
    assert len(EXPECTED) >= 12


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_site_script_is_read_as_the_scheduler_would(name):
    scheduler, nodes, per_node, threads, gpus, time_s, partition, launcher, program = \
        EXPECTED[name]
    script = read_script((SCRIPTS / name).read_text())
    assert script.scheduler == scheduler
    assert script.layout(cores_per_node=128) == (nodes, per_node, threads)
    assert script.gpus_per_node == gpus
    assert script.time_s == time_s
    assert script.partition == partition
    assert script.launch.launcher == launcher
    assert script.launch.program == program


def test_directives_after_the_first_command_are_ignored():
    script = read_script((SCRIPTS / "directives_after_command.sbatch").read_text())
    assert script.first_command == 5
    assert script.ignored == [6, 7]  # --nodes=8 and --time=10:00:00 never count
    assert script.nodes == 2 and script.time_s is None


def test_lines_say_where_each_value_was_read():
    script = read_script((SCRIPTS / "nersc_perlmutter_cpu.sbatch").read_text())
    assert script.lines["nodes"] == [2]
    assert script.lines["time"] == [6]
    assert script.lines["ranks"] == [13]            # srun -n 32
    assert sorted(script.lines["threads"]) == [9, 13]  # OMP_NUM_THREADS=8, srun -c 16
    assert script.cpus_per_task == 16 and script.threads == 8


def test_continued_launch_line_spans_its_lines():
    script = read_script((SCRIPTS / "continuation.sbatch").read_text())
    assert (script.launch.line, script.launch.last_line) == (8, 11)
    assert script.launch.args == ["--size", "128"]  # the redirections are not arguments
    assert script.job_name == "stencil run"


def test_a_quoted_empty_word_is_an_argument_an_unquoted_empty_expansion_is_none():
    """Before, every argument whose value was empty was dropped: ``./app 5 '' end`` read as
    ``./app 5 end``, so the command a model recorded, and every script written from it, ran
    the program with its later arguments shifted (s39 tester D6). As bash: ``''``, ``""`` and
    ``"$EMPTY"`` are words; an unquoted ``$EMPTY`` is none."""
    script = read_script("#!/bin/bash\n#SBATCH -n 2\nEMPTY=\n"
                         "srun ./app 5 '' \"\" \"$EMPTY\" $EMPTY end\n")
    assert script.launch.args == ["5", "", "", "", "end"]
    assert [raw for _, _, raw in script.launch.spans[1:]] == ["5", "''", '""', '"$EMPTY"', "end"]


def test_heredoc_bodies_are_not_commands():
    script = read_script((SCRIPTS / "lumi_g.sbatch").read_text())
    assert [launch.line for launch in script.launches] == [25]  # not the srun in the EOF body
    assert script.launch.args == ["./my_gpu_app", "-i", "input.dat"]


def test_a_here_string_is_no_here_document():
    script = read_script("#SBATCH -N 1\ncat <<< hello\nsrun -n 2 ./app\n")
    assert script.launch.program == "./app" and script.ntasks == 2


def test_variables_and_arithmetic_are_followed():
    script = read_script((SCRIPTS / "alcf_polaris.pbs").read_text())
    assert script.ntasks == 16  # $(( NNODES * NRANKS_PER_NODE )), NNODES from $PBS_NODEFILE
    assert script.launch.env["OMP_NUM_THREADS"][0] == "2"


def test_what_cannot_be_resolved_is_said():
    script = read_script((SCRIPTS / "csd3_icelake.sbatch").read_text())
    assert any("'$np' could not be resolved" in n for n in script.notes)
    assert any("program mpirun starts could not be read" in n for n in script.notes)


@pytest.mark.parametrize("directive, nodes", [
    ("-N2", 2), ("-N 2", 2), ("--nodes=2", 2), ("--nodes 2", 2), ("--nodes=2-4", 2),
    ("--node=3", None),  # ambiguous prefix (--nodes, --nodelist): sbatch refuses it
    ("--nodes=5 --nodes=3", 3),  # the last one counts
    ("--nodes=2 # --nodes=7", 2), ("--job-name=a#b --nodes=4", None),  # '#' ends the line
    ("--nodes='6'", 6),
])
def test_sbatch_option_spellings(directive, nodes):
    script = read_script(f"#!/bin/bash\n#SBATCH {directive}\nsrun ./app\n")
    assert script.nodes == nodes


def test_ntasks_without_nodes_takes_the_fewest_nodes():
    script = read_script("#!/bin/bash\n#SBATCH --ntasks=96\n#SBATCH -c 2\nsrun ./app\n")
    assert script.nodes is None
    assert script.layout(cores_per_node=64) == (3, 32, 2)  # 96 x 2 CPUs on 64-core nodes
    with pytest.raises(ConfigError, match="--ntasks without --nodes"):
        script.layout()


def test_only_column_zero_directives_count_and_blank_or_comment_lines_do_not_end_them():
    text = "#!/bin/bash\n\n# a comment\n  #SBATCH --nodes=9\n#SBATCH --nodes=2\n#SLURM -c 4\n" \
           "srun ./app\n"
    script = read_script(text)
    assert script.nodes == 2 and script.cpus_per_task == 4


@pytest.mark.parametrize("value, seconds", [
    ("30", 1800), ("30:15", 1860), ("1:02:03", 3780), ("2-3", 183600), ("2-3:04", 183840),
    ("2-3:04:05", 183900), ("0", None), ("UNLIMITED", None), ("abc", None),
    ("\u0663\u0660", None), ("9" * 5000, None), ("1-" + "9" * 13, None)])
    # Arabic-Indic "30": Slurm reads ASCII digits only; 5,000 digits: no ValueError; seconds
    # round up to the next minute, as Slurm rounds them
def test_slurm_time_formats(value, seconds):
    assert parse_slurm_time(value) == seconds


@pytest.mark.parametrize("value, seconds", [("10:00", 600), ("01:30:00", 5400), ("90", 90),
                                            ("1:00:00:00", 86400), ("2:01:00:30", 176430),
                                            ("1:1:1:1:1", None), ("x", None), ("\u0669\u0660", None),
                                            ("9" * 400, None), ("1:" + "9" * 400, None)])
def test_pbs_walltime_formats(value, seconds):
    assert parse_pbs_time(value) == seconds


@pytest.mark.parametrize("option, value, count", [
    ("gres", "gpu", 1), ("gres", "gpu:4", 4), ("gres", "gpu:a100:4", 4),
    ("gres", "gpu:a100", 1), ("gres", "gpu:2,shard:4", 2), ("gres", "gpu:2(S:0)", 2),
    ("gres", "gres/gpu:3", 3), ("gres", "gpu:a100:2,gpu:v100:1", 3),
    ("gpus", "a100:8", 8), ("gpus", "2", 2), ("gpus-per-node", "2", 2),
    ("gpus-per-node", "a100:4", 4), ("gpus-per-task", "1", 1)])
def test_gpu_counts(option, value, count):
    assert gpu_count(value, option) == count


@pytest.mark.parametrize("value", ["lscratch:200,gpu:a100:2", "nvme:1,gpu:2",
                                   "craynetwork:1,gpu:a100:2", "gpu:a100:2,lscratch:200"])
def test_only_gpu_items_of_a_gres_list_are_gpus(value):
    """--gres=lscratch:200,gpu:a100:2 was 202 GPUs (every GRES count added), so advise said
    the scheduler would refuse a valid request and predicted nothing."""
    assert gpu_count(value, "gres") == 2
    assert gpu_count("lscratch:200", "gres") == 0 and gpu_count("mps:50", "gres") == 0
    script = read_script(f"#SBATCH -N 1 --ntasks-per-node=2\n#SBATCH --gres={value}\n"
                         "srun ./a\n")
    assert script.gpus_per_node == 2 and script.lines["gpus"] == [2]
    cpu = read_script("#SBATCH -N 1\n#SBATCH --gres=lscratch:200\nsrun ./a\n")
    assert cpu.gpus_per_node == 0 and cpu.device == "cpu" and "gpus" not in cpu.lines


def test_gpus_asked_on_the_srun_step_are_read():
    """srun --gpus-per-task=1 with no GPU directive was read as a CPU job."""
    script = read_script("#SBATCH -N 2 --ntasks-per-node=4\nsrun --gpus-per-task=1 ./a\n")
    assert script.gpus_per_node == 4 and script.step_gpus.name == "gpus-per-task"
    assert script.base[0]["gpus_per_node"] == 0  # the job's own: none
    total = read_script("#SBATCH -N 2 --gpus-per-node=4\nsrun -G 8 ./a\n")
    assert total.gpus_per_node == 4 and total.step_gpus is not None


def test_gpus_in_total_and_per_task():
    total = read_script("#SBATCH -N 2\n#SBATCH -G 8\nsrun ./a\n")
    per_task = read_script("#SBATCH -N 1\n#SBATCH --ntasks-per-node=4\n"
                           "#SBATCH --gpus-per-task=1\nsrun ./a\n")
    assert (total.gpus_per_node, per_task.gpus_per_node) == (4, 4)
    assert total.device == "gpu"


def test_launch_line_overrides_the_allocation_and_omp_export_sets_threads():
    text = "#SBATCH -N 4 --ntasks-per-node=8 -c 4\nexport OMP_NUM_THREADS=4\n" \
           "OMP_NUM_THREADS=2 srun -N 2 -n 8 ./app\n"
    script = read_script(text)
    assert script.layout() == (2, 4, 2)


@pytest.mark.parametrize("text, what", [
    ("", "no #SBATCH"), ("echo hello\n", "no #SBATCH"), ("a\x00b", "no job script"),
    ("#SBATCH --job-name='open\nsrun ./a\n", "unbalanced quotes"),
    ("#SBATCH -N 1\n" + "#" * 4 * 2**20, "the script: over 4 MiB, Slurm's default "
                                          "max_script_size")])
def test_not_a_job_script(text, what):
    with pytest.raises(ConfigError, match=what):
        read_script(text)


def test_a_script_with_a_byte_order_mark_is_refused_as_sbatch_refuses_it():
    text = "#!/bin/bash\n#SBATCH --nodes=2\nsrun hpcds1mpi run stencil --size 128\n"
    assert read_script(text).directives
    with pytest.raises(ConfigError, match="byte-order mark"):
        read_script("\ufeff" + text)


def test_directive_numbers_out_of_reach_are_unread_not_a_traceback():
    """--nodes and --time of 5,000 digits raised ValueError (int's digit limit) out of
    read_script; a walltime of 400 nines overflowed math.ceil."""
    huge = "9" * 5000
    script = read_script(f"#!/bin/bash\n#SBATCH --time={huge}\nsrun ./app\n")
    assert script.time_s is None
    with pytest.raises(ConfigError, match="line 2: .*sbatch refuses this count .*not a valid"):
        read_script(f"#!/bin/bash\n#SBATCH --nodes={huge}\nsrun ./app\n")  # as sbatch does
    pbs = read_script(f"#!/bin/bash\n#PBS -l select={huge}:ncpus=2\n#PBS -l walltime="
                      f"{'9' * 400}\nmpiexec ./app\n")
    assert pbs.time_s is None
    assert gpu_count(f"gpu:{huge}", "gres") == 1 and gpu_count("gpu:\u0663", "gres") == 1


@pytest.mark.parametrize("text, note", [
    ("#SBATCH --nodes=1-4\nsrun ./app\n", "line 2: nodes 1-4 is a range: its minimum 1 is read"),
    ("#SBATCH -N 2\nsrun -N 2-8 ./app\n", "line 3: srun nodes 2-8 is a range: its minimum 2"),
])
def test_a_node_range_reads_its_minimum_and_says_so(text, note):
    """sbatch --nodes=1-4 lets the scheduler give 1 to 4 nodes; reading it as 1 without a
    word hid that the job may run on more."""
    script = read_script("#!/bin/bash\n" + text)
    assert script.nodes == int(note.split("minimum ")[1].split()[0])
    assert any(n.startswith(note) for n in script.notes), script.notes
    plain = read_script("#!/bin/bash\n#SBATCH --nodes=2-2\nsrun ./app\n")
    assert not any("range" in n for n in plain.notes)


def test_launches_inside_loops_are_marked():
    """A launch in a loop runs more than once: advise must not size the job's time limit by
    one launch. One-line loops (``for i in 1 2 3; do srun ./app; done``), nested ones and a
    ``done < list`` are followed."""
    script = read_script("""#!/bin/bash
#SBATCH -N 1
srun ./pre
for i in 1 2 3; do srun ./app $i; done
while read x; do
  if true; then
    mpirun ./inner
  fi
done < list.txt
srun ./post
for i in 1 2; do echo $i; done; srun ./after
until false; do srun -n 2 ./u 5;done
""")
    assert [(x.program, x.args, x.in_loop) for x in script.launches] == [
        ("./pre", [], False), ("./app", ["$i"], True), ("./inner", [], True),
        ("./post", [], False), ("./after", [], False), ("./u", ["5"], True)]


def test_a_semicolon_ends_a_command_even_against_a_word():
    """``cd run; srun ./app 10;`` read ``10;`` as the program's argument (and a size of none);
    a quoted or escaped ``;`` and a directive's value stay as written."""
    script = read_script('#!/bin/bash\n#SBATCH --comment=a;b\ncd run;srun ./app 10;\n'
                         'srun ./b "x;" \\; y;\n')
    assert script.directives["comment"].value == "a;b"
    assert [(x.program, x.args) for x in script.launches] == [
        ("./app", ["10"]), ("./b", ["x;", ";", "y"])]


# ---- hostile scripts: bounded memory and time -----------------------------------------------


def _peak_mb(action) -> float:
    import tracemalloc

    tracemalloc.start()
    try:
        action()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def test_a_doubling_variable_bomb_is_read_in_little_memory():
    """60 lines of a{i}=$a{i-1}$a{i-1} (807 bytes) asked for 2^59 characters: a MemoryError
    on the command line, 15 GB in the server's worker. Past the cap the value is unknown."""
    text = "#!/bin/bash\n#SBATCH -N 2\na0=1\n" + "".join(
        f"a{i}=$a{i - 1}$a{i - 1}\n" for i in range(1, 60)) + "srun ./app --size $a59\n"
    found = {}
    assert _peak_mb(lambda: found.update(script=read_script(text))) < 20
    script = found["script"]
    assert script.scope["a12"] == "1" * 4096 and "a13" not in script.scope
    assert script.launch.args == ["--size", "$a59"]  # unresolved: kept as written


def test_expansions_past_the_scripts_budget_are_unknown_and_said_once():
    body = "a0=1\n" + "".join(f"a{i}=$a{i - 1}$a{i - 1}\n" for i in range(1, 12))  # 2,048
    body += ("srun ./a" + " $a11$a11" * 3000 + "\n") * 2  # 12 MB of arguments asked
    script = read_script("#!/bin/bash\n#SBATCH -N 1\n" + body + "N=$((1+1))\nsrun -n $N ./b\n")
    spent = [n for n in script.notes if "expand to over 2,000,000 characters" in n]
    assert spent == ["line 15: the script's variables expand to over 2,000,000 characters by "
                     "here; values from this line on are read as unknown"]
    assert script.settings[-1].resolved is None and "$a11$a11" in script.launches[0].args
    assert sum(map(len, script.launches[0].args)) < 2_100_000


def test_many_launch_lines_between_assignments_keep_one_scope():
    """Each launch line kept its own copy of every variable: a 256 kB script alternating the
    two held launches x variables entries (3 GB for 15,000 of each)."""
    k = 2500
    text = "#!/bin/bash\n#SBATCH -N 1\n" + "".join(f"v{i}={i}\nsrun -n $v{i} ./a\n"
                                                   for i in range(k))
    found = {}
    assert _peak_mb(lambda: found.update(script=read_script(text))) < 30
    launches = found["script"].launches
    assert len(launches) == k and launches[7].scope["v7"] == "7" and "v8" not in launches[7].scope
    assert launches[7].value("ntasks", launches[7].scope) == "7"


def test_thousands_of_unread_lines_get_a_bounded_list_of_notes():
    text = "#!/bin/bash\n" + "".join(f"#SBATCH --zz{i}\n" for i in range(5000)) + "srun ./a\n"
    notes = read_script(text).notes
    assert len(notes) == 51 and notes[-1] == "more than 50 notes; the rest are left out"


@pytest.mark.parametrize("long_line", [
    "x=" + "$((" * 30_000,  # one 90,000-character word: shlex's splitting is quadratic in it
    "srun ./a " + "\\\n" * 20_000 + "--size 8",  # continuations joined into one line
    "#SBATCH --comment=" + "c" * 40_000,
])
def test_a_line_over_the_limit_is_skipped_with_a_note(long_line):
    import time

    start = time.perf_counter()
    script = read_script(f"#!/bin/bash\n#SBATCH -N 2\n{long_line}\nsrun -n 4 ./b\n")
    assert time.perf_counter() - start < 2.0
    assert "line 3 is over 32,768 characters long; not read" in script.notes
    assert script.nodes == 2 and script.launches[-1].program == "./b"
    assert unread_lines(script) == [3]  # what --rewrite is refused for (s28 tester Z7)


def test_a_long_line_the_scheduler_skips_anyway_leaves_nothing_unread():
    """A ``#PBS`` line in a Slurm script and a directive after the first command are ignored
    by sbatch too: a rewrite may go ahead."""
    long = "c" * 40_000
    script = read_script(f"#SBATCH -N 2\n#PBS -N {long}\nsrun ./b\n#SBATCH --comment={long}\n")
    assert unread_lines(script) == [] and script.nodes == 2


@pytest.mark.parametrize("line, stdin", [
    ("srun pw.x < si-30.in > si-30.out", "< si-30.in"),
    ("srun pw.x <si-30.in 2>&1 | tee log", "<si-30.in"),
    ("srun pw.x 0< si-30.in", "0< si-30.in"),
    ("srun pw.x << EOF\n&control\nEOF", "<< EOF"),
    ("srun pw.x -i si-30.in > out < /dev/null", "< /dev/null"),
    ("srun pw.x -i si-30.in > out 2> err", ""),
])
def test_a_launch_lines_standard_input_is_kept(line, stdin):
    """s27 tester R 8: 'srun pw.x < si-30.in' lost its input redirection, so advise could not
    say that the size was in it. The redirection is kept, as written, and is no argument."""
    script = read_script(f"#SBATCH -N 1\n{line}\n")
    assert script.launch.stdin == stdin
    assert script.launch.args == ([] if "-i" not in line else ["-i", "si-30.in"])


@pytest.mark.parametrize("launcher", ["mpirun.mpich", "/usr/bin/mpirun.mpich", "mpiexec.hydra",
                                      "mpiexec.slurm", "orterun"])
def test_a_distribution_named_launcher_starts_the_ranks(launcher):
    """Was: 'mpirun.mpich -np 2 nwchem.mpich s5.nw', Debian's NWChem launch, read as no
    launch line at all ("no srun / mpirun / mpiexec line found"; s27 tester Q, 4)."""
    script = read_script("#!/bin/bash\n#SBATCH -N 1\nexport OMP_NUM_THREADS=1\n"
                         f"{launcher} -np 2 nwchem.mpich s5.nw > s5.out\n")
    assert len(script.launches) == 1 and script.launch.program_raw == "nwchem.mpich"
    assert script.launch.args == ["s5.nw"]


def test_a_command_merely_named_like_a_launcher_is_no_launch():
    script = read_script("#!/bin/bash\n#SBATCH -N 1\nmpirun_wrapper ./app 5\nmpirun. ./app\n")
    assert script.launches == []


def test_csh_setenv_sets_a_variable():
    """s28 tester V6: csh's `setenv NAME VALUE` is the script's `export NAME=VALUE`."""
    script = read_script("#!/bin/csh\n#SBATCH -N 1\nsetenv NP 4\nsetenv OMP_NUM_THREADS 3\n"
                         "srun -n $NP ./app\n")
    assert script.ntasks == 4 and script.threads == 3
    assert [(s.name, s.resolved, s.line) for s in script.settings] == [
        ("NP", "4", 3), ("OMP_NUM_THREADS", "3", 4)]


@pytest.mark.parametrize("value", ["UNLIMITED", "INFINITE", "unlimited", "0", "-1", "0:0"])
def test_no_time_limit_is_read_as_none_asked_and_said(value):
    """s29 tester D10: --time=UNLIMITED was "cannot read time 'UNLIMITED'; ignored", though
    sbatch takes it (the partition's limit then applies)."""
    script = read_script(f"#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --time={value}\nsrun ./a\n")
    assert script.time_s is None and script.lines["time"] == [3]
    assert f"line 3: asked no time limit ({value}): the partition's limit applies" in \
        script.notes
    assert not any("cannot read" in n for n in script.notes)
    # sbatch refuses --time=soon, and so does the reader now (s35 tester T8); a time sbatch
    # takes that is read as no limit here (-5 days) is still said and ignored
    with pytest.raises(ConfigError, match="line 2: #SBATCH --time=soon: sbatch refuses"):
        read_script("#!/bin/bash\n#SBATCH --time=soon\nsrun ./a\n")
    odd = read_script("#!/bin/bash\n#SBATCH --time=-5\nsrun ./a\n")
    assert odd.time_s is None and "line 2: cannot read time '-5'; ignored" in odd.notes


@pytest.mark.parametrize("line, program, env", [
    ("mpirun -n 2 env POISSON_N=320 /usr/bin/python3 app.py", "/usr/bin/python3",
     {"POISSON_N": "320"}),
    ("srun -n 2 env -u HOME A=1 nice -n 5 numactl --cpunodebind=0 ./app 3", "./app", {"A": "1"}),
    ("mpirun -n 2 taskset -c 0-3 stdbuf -oL ./app 3", "./app", {}),
    ("timeout 3600 srun -n 2 ./app 3", "./app", {}),  # a wrapper before the launcher
    ("env A=2 mpirun -n 2 ./app 3", "./app", {"A": "2"}),
])
def test_the_program_is_read_past_an_exec_wrapper_prefix(line, program, env):
    """s30 tester K1: only `env NAME=value` right after the launcher was looked through."""
    launch = read_script(f"#!/bin/bash\n#SBATCH -n 2\n{line}\n").launches[0]
    assert launch.program == program and launch.args[-1:] in (["3"], ["app.py"])
    assert {k: v for k, (v, _) in launch.env.items()} == env


# -- s32 tester S5: scripts up to Slurm's default max_script_size, 4 MiB --------------------------

def _input_deck_script(lines: int, prefix: str = "") -> str:
    """The tester's script: an input deck of ``lines`` lines written by a heredoc, then run."""
    deck = "".join(f"{prefix}param{i} = {i} ; some text | with $signs and `ticks`\n"
                   for i in range(lines))
    return ("#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --ntasks-per-node=2\n#SBATCH --time=10\n"
            f"cat > input.txt <<'EOF'\n{deck}EOF\nsrun ./solver input.txt\n")


def test_an_input_deck_in_a_heredoc_is_read_up_to_slurms_4_mib():
    """A 1.4 MB script (an input deck in a heredoc, which the test Slurm ran) was refused as
    "no job script (binary or over 256 kB of text)"."""
    for lines in (25_000, 72_000):  # 1.4 MB; 4.1 MB, just under 4 MiB
        text = _input_deck_script(lines)
        assert len(text) <= 4 * 2**20
        script = read_script(text)
        assert script.layout()[:2] == (1, 2) and script.launches[-1].program == "./solver"


def test_a_script_over_4_mib_is_refused_naming_it_and_the_limit():
    text = _input_deck_script(75_000)
    assert len(text) > 4 * 2**20
    with pytest.raises(ConfigError) as info:
        read_script(text, name="deck.sh")
    assert str(info.value).startswith("deck.sh: over 4 MiB, Slurm's default max_script_size")
    assert "\n" not in str(info.value)


def test_the_4_mib_are_counted_in_bytes_as_slurm_counts_them():
    """2.2 million 'é' are 4.4 MB of UTF-8: over the limit, though fewer characters."""
    deck = _input_deck_script(1, prefix="é" * 2_200_000)
    assert len(deck) < 4 * 2**20 < len(deck.encode())
    with pytest.raises(ConfigError, match="over 4 MiB"):
        read_script(deck)
    assert read_script(_input_deck_script(1, prefix="é" * 2_000_000)).launches


def test_a_script_file_is_read_whole_up_to_4_mib(tmp_path):
    """The file reader stopped at 2,000,001 characters: a 3 MB script would be read cut."""
    from hpcds1mpi.launch.script_file import script_text

    path = tmp_path / "deck.sh"
    path.write_text(_input_deck_script(53_000))  # 3 MB
    assert read_script(script_text(path)).launches[-1].program == "./solver"


@pytest.mark.parametrize("kind", ["heredoc", "commands"])
def test_reading_a_script_takes_time_linear_in_its_size(kind):
    """Four times the script must take about four times as long to read, not sixteen: a
    4 MiB script is read in seconds (heredoc bodies are skipped; each command line is split
    into words once)."""
    from tests.scaling import assert_linear, best_seconds

    def commands(lines: int) -> str:
        return "#!/bin/bash\n#SBATCH -N 1\n" + "".join(
            f"export VAR{i}=value{i}_$VAR{i - 1}\n" if i % 3 == 0 else f"echo step {i} && cd /tmp\n"
            for i in range(lines)) + "srun ./app\n"

    make = _input_deck_script if kind == "heredoc" else commands
    small = 18_000 if kind == "heredoc" else 2_000  # 1 MB; 60 kB

    def seconds(lines: int) -> float:
        text = make(lines)
        return best_seconds(lambda: read_script(text), repeats=2)

    assert_linear(seconds, small)


#: s32 tester X3's caf-job1.sbatch: OpenCoarrays' launcher, 4 images on 2 tasks.
CAFRUN = """#!/bin/bash
#SBATCH --partition=debug
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=2
#SBATCH --time=00:10:00
cafrun -n 4 ./heat 100000
"""


def test_a_cafrun_line_is_a_launch_with_mpiruns_options():
    script = read_script(CAFRUN)
    launch = script.launch
    assert (launch.launcher, launch.kind, launch.program, launch.args) == (
        "cafrun", "mpi", "./heat", ["100000"])
    assert launch.options["ntasks"].value == "4" and script.layout(2) == (1, 4, 1)
    # cafrun reads -n first and hands the rest to mpiexec: options go after it
    assert CAFRUN[launch.options_at - len("-n 4"):launch.options_at] == "-n 4"


@pytest.mark.parametrize("line", ["jsrun -n 4 -a 1 ./heat 100000", "charmrun +p4 ./heat 1"])
def test_an_unknown_launcher_is_no_launch_line(line):
    script = read_script(CAFRUN.replace("cafrun -n 4 ./heat 100000", line))
    assert script.launch is None


@pytest.mark.parametrize("outer, value", [("export OMP_NUM_THREADS=2\n", "2"), ("", None)])
@pytest.mark.parametrize("subshell", [
    "( export OMP_NUM_THREADS=8; ./prep )\n", "(export OMP_NUM_THREADS=8 && ./prep) > log\n",
    "(\n  export OMP_NUM_THREADS=8\n  ./prep\n)\n", "(cd pre; OMP_NUM_THREADS=8; ./prep)\n",
    "prep() (\n  export OMP_NUM_THREADS=8\n  ./prep\n)\nprep\n"])
def test_a_subshells_export_ends_with_it(outer, value, subshell):
    """s45 S1 (a regression of s44's O9): a top-level subshell's `export` was read as the
    script's own, so the `srun` after it ran 8 threads where bash runs it with the outer
    value, or none; a launch inside the subshell is still read with it."""
    head = "#!/bin/bash\n#SBATCH -N 1 -n 2\n"
    script = read_script(f"{head}{outer}{subshell}srun ./app 96\n")
    assert script.threads == int(value or 1)  # none set: one thread per task
    assert script.scope.get("OMP_NUM_THREADS") == script.launch.scope.get("OMP_NUM_THREADS") \
        == value
    inside = read_script(f"{head}{outer}( export OMP_NUM_THREADS=8; srun ./app 96 )\n"
                         "srun ./post\n")
    assert inside.threads == 8 and inside.launch.program == "./app"
    assert [launch.scope.get("OMP_NUM_THREADS") for launch in inside.launches] == [
        "8", value]


def test_a_subshells_variable_is_not_expanded_after_it_and_arrays_close_nothing():
    script = read_script("#!/bin/bash\n#SBATCH -N 1\nT=3\nlist=(1 2 3)\n(T=8; ./prep)\n"
                         "(( n = 2 ))\nsrun -n $T ./app\n(T=4\n srun -n $T ./app)\n")
    first, second = script.launches
    assert first.value("ntasks", first.scope) == "3" and script.ntasks == 3
    assert second.value("ntasks", second.scope) == "4" and script.scope["T"] == "3"


@pytest.mark.parametrize("line", [
    "x=$(hostname); export OMP_NUM_THREADS=4\n",
    "x=`hostname`; export OMP_NUM_THREADS=4\n",
    "N=$( echo 4 | cat ); export OMP_NUM_THREADS=4\n",
    'echo "started $(date)"; export OMP_NUM_THREADS=4\n',
])
def test_a_command_after_a_substitution_and_a_semicolon_is_read(line):
    """s46 review RV4: the `;` glued to ``$(...)`` stayed in its word, so the export after it
    was read as the first command's arguments (1 thread; a launch there: none found)."""
    script = read_script("#!/bin/bash\n#SBATCH -N 1\n" + line + "srun ./app\n")
    assert script.threads == 4
    launched = read_script('#!/bin/bash\n#SBATCH -N 1\necho "started $(date)"; srun ./app\n')
    assert [launch.program for launch in launched.launches] == ["./app"]


@pytest.mark.parametrize("body", [
    'case "$SLURM_JOB_PARTITION" in\n  big) export OMP_NUM_THREADS=4 ;;\n'
    '  *) export OMP_NUM_THREADS=4 ;;\nesac\n',
    "case x in\n x)\n   export OMP_NUM_THREADS=4 ;;\nesac\n",
    "case x in\n (x) export OMP_NUM_THREADS=4 ;;\nesac\n",
    "case x in x) export OMP_NUM_THREADS=4 ;; esac\n",
    "case x in a | x) export OMP_NUM_THREADS=4 ;& *) ;;\nesac\n",
])
def test_an_assignment_on_a_case_arms_line_is_read(body):
    """s46 review RV3: the arm's pattern was read as the command's first word and `;;` as no
    separator: 1 thread, where bash gives the launch 4."""
    script = read_script("#!/bin/bash\n#SBATCH -N 1\n" + body + "srun ./app\n")
    assert script.threads == 4


def test_a_launch_on_a_case_arms_line_is_read_with_nothing_after_it():
    script = read_script('#!/bin/bash\n#SBATCH -N 1\n#SBATCH -n 2\ncase "$P" in\n'
                         "  big) srun -n 2 ./app 8 ;;\n  *) srun -n 2 ./app 8 ;;\nesac\n")
    assert [(launch.line, launch.program, launch.args, launch.then)
            for launch in script.launches] == [(5, "./app", ["8"], ()), (6, "./app", ["8"], ())]
    one = read_script("#!/bin/bash\n#SBATCH -N 1\ncase x in x) srun ./app 8 ;; esac\n")
    assert [(launch.program, launch.then) for launch in one.launches] == [("./app", ())]


def test_an_open_mpi_launchs_mca_parameters_are_all_kept():
    """``options`` keeps the last ``--mca`` alone; the slot check reads them all (s46 review
    RV2), and Open MPI's ``-c N`` is its rank count, not the program."""
    script = read_script("#!/bin/bash\n#SBATCH -n 2\nV=1\nmpirun.openmpi --mca a $V -mca b 2 "
                         "--gmca c x -c 2 ./app\n")
    launch = script.launches[0]
    assert launch.mca == {"a": "1", "b": "2", "c": "x"}
    assert (launch.program, launch.options["ntasks"].value) == ("./app", "2")
