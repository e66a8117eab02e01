"""``hpcds1mpi advise SCRIPT`` as users run it (a fresh process, the shipped bundle): the table,
JSON, ``--rewrite OUT`` changing only the lines it must, and the refusals that write nothing."""

from __future__ import annotations

import difflib
import json
import shutil
import sys
from pathlib import Path

import pytest

from tests.badinput.harness import assert_refused, invoke
from tests.helpers import run_cli

SCRIPTS = Path(__file__).resolve().parents[1] / "data" / "jobscripts"
CLUSTER = str(SCRIPTS / "lab.toml")
SCRIPT = """#!/bin/bash
#SBATCH --job-name=stencil
#SBATCH --partition=standard
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
#SBATCH --cpus-per-task=2
#SBATCH --time=00:30:00

# the stencil kernel at size 128, one rank per node with two threads
module load hpcds1mpi
export OMP_NUM_THREADS=2
srun hpcds1mpi run stencil --size 128 --precision fp64
echo "done"
"""
#: Lines of SCRIPT a rewrite may change: directives 2-7, the OMP export, the launch line.
MAY_CHANGE = {2, 3, 4, 5, 6, 7, 11, 12}


@pytest.fixture
def job(tmp_path, monkeypatch):
    monkeypatch.setenv("HPCDS1MPI_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HPCDS1MPI_HISTORY", str(tmp_path / "cache" / "failures.json"))
    path = tmp_path / "job.sbatch"
    path.write_text(SCRIPT)
    return path


def test_table_in_a_fresh_process(job):
    res = run_cli(["advise", str(job), "--cluster", CLUSTER])
    assert res.returncode == 0, res.stderr
    out = res.stdout
    assert "workload stencil (from the program on line 12), size 128" in out
    # hpcds1mpi run without --threads runs one thread per rank, whatever OMP_NUM_THREADS says
    assert "asked       2 nodes x 1 rank x 1 thread, cpu, fp64 on lab/standard" in out
    # A stencil size between measured ones: a guess the guard lets out (auto or confirm, as
    # the shipped bundle's confidence has it), never an escalation.
    assert "predicted runtime" in out and "modelled" in out
    assert "verdict auto" in out or "verdict confirm" in out
    assert "--rewrite changes only these lines:" in out


def test_json(job, capsys):
    res = invoke(capsys, ["advise", str(job), "--cluster", CLUSTER, "--json"])
    assert res.code == 0, res.err
    data = json.loads(res.out)
    assert data["workload"] == "stencil" and data["asked"]["config"]["nodes"] == 2
    assert data["recommended"]["runtime_s"] > 0
    assert data["verdict"]["verdict"] in ("auto", "confirm")


def test_rewrite_changes_only_the_lines_it_must(job, tmp_path, capsys):
    out = tmp_path / "new.sbatch"
    res = invoke(capsys, ["advise", str(job), "--cluster", CLUSTER, "--rewrite", str(out)])
    assert res.code == 0, res.err
    assert f"wrote {out}" in res.out
    old, new = SCRIPT.split("\n"), out.read_text().split("\n")
    changed = set()
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new).get_opcodes():
        if tag != "equal":
            changed |= set(range(i1 + 1, i2 + 1))
            assert all(x.startswith(("#SBATCH ", "export OMP_NUM_THREADS=", "srun "))
                       for x in new[j1:j2])
    assert changed and changed <= MAY_CHANGE, changed
    assert job.read_text() == SCRIPT  # the input is untouched
    data = json.loads(invoke(capsys, ["advise", str(out), "--cluster", CLUSTER,
                                      "--json"]).out)
    assert data["asked"]["config"] == data["recommended"]["config"]  # asks for the pick now


def test_rewrite_never_overwrites_the_input(job, capsys):
    res = invoke(capsys, ["advise", str(job), "--cluster", CLUSTER, "--rewrite", str(job),
                          "--force"])
    assert_refused(res, 2, "is the input script")
    assert job.read_text() == SCRIPT


def test_rewrite_refuses_an_existing_out_without_force(job, tmp_path, capsys):
    out = tmp_path / "taken.sbatch"
    out.write_text("keep me\n")
    res = invoke(capsys, ["advise", str(job), "--cluster", CLUSTER, "--rewrite", str(out)])
    assert_refused(res, 2, "exists; pass --force")
    assert out.read_text() == "keep me\n"
    res = invoke(capsys, ["advise", str(job), "--cluster", CLUSTER, "--rewrite", str(out),
                          "--force"])
    assert res.code == 0 and out.read_text() != "keep me\n"


def test_a_second_rewrite_into_one_file_is_refused_while_the_first_writes(job, tmp_path,
                                                                            capsys):
    """Two advise --rewrite into one new file both wrote it, the second over the first, never
    "exists; pass --force": the check is now made under the output lock (s47 tester M6)."""
    from tests.helpers import lock_held_elsewhere

    out = tmp_path / "rw.sbatch"
    with lock_held_elsewhere(out) as lock:
        res = invoke(capsys, ["advise", str(job), "--cluster", CLUSTER, "--rewrite", str(out)])
        assert_refused(res, 1, "being written by another process", str(lock), "--rewrite")
    assert not out.exists()


def test_a_rewrite_inside_the_model_bundle_is_refused_before_reading(job, tmp_path, capsys):
    """advise --rewrite MODEL/rw.sh wrote into the bundle, which learn then refused as "not a
    hpcds1mpi bundle" (s47 tester M11)."""
    model = tmp_path / "bm"
    model.mkdir()
    res = invoke(capsys, ["advise", str(job), "--model", str(model), "--rewrite",
                          str(model / "rw.sh")])
    assert_refused(res, 2, "is inside the --model bundle", "choose a path outside it")
    assert not any(model.iterdir())


def test_nothing_is_written_when_there_is_nothing_to_recommend(job, tmp_path, capsys):
    job.write_text(SCRIPT.replace("hpcds1mpi run stencil --size 128 --precision fp64",
                                  "./lulesh -s 40"))
    out = tmp_path / "new.sbatch"
    res = invoke(capsys, ["advise", str(job), "--cluster", CLUSTER, "--rewrite", str(out)])
    assert_refused(res, 2, "nothing to rewrite", "escalate")
    assert res.err.count("verdict escalate") == 1, res.err  # said once (s29 V1-6)
    assert not out.exists()
    res = invoke(capsys, ["advise", str(job), "--cluster", CLUSTER])
    assert res.code == 0 and "verdict escalate: no settings guessed" in res.out
    assert "predicted" not in res.out


@pytest.mark.parametrize("args, fragment", [
    (["advise", "no_such.sbatch"], "job script not found"),
    (["advise", "{dir}"], "is a directory"),
    (["advise", "{bin}"], "not text"),
    (["advise", "{job}", "--force"], "--force only applies to --rewrite"),
    (["advise", "{job}", "--size", "0"], "'--size': 0 is out of range; give a problem size"),
    (["advise", "{job}", "--size", "\u0663\u0660"], "is not a whole number"),  # read as 30
    (["advise", "{job}"], "partition 'standard'"),  # this machine has no such partition
    (["advise", "{empty}"], "no #SBATCH / #PBS directive"),
    (["advise", "x" * 10_000], "cannot read the job script"),
    (["advise", "{job}", "--cluster", CLUSTER, "--rewrite", "{dir}"], "is a directory"),
    (["advise", "{job}", "--cluster", CLUSTER, "--rewrite", "{dir}/no/such/new.sbatch"],
     "no such directory"),
    # an empty value was taken for "not given": --rewrite '' wrote nothing and exited 0
    (["advise", "{job}", "--cluster", CLUSTER, "--rewrite", ""], "--rewrite is empty"),
    (["advise", "{job}", "--cluster", CLUSTER, "--rewrite", "  "], "--rewrite is empty"),
    (["advise", "{job}", "--cluster", CLUSTER, "--workload", ""], "--workload is empty"),
])
def test_bad_input_is_one_line(job, tmp_path, capsys, args, fragment):
    binary = tmp_path / "a.bin"
    binary.write_bytes(bytes(range(256)))
    empty = tmp_path / "empty.sbatch"
    empty.write_text("")
    names = {"{job}": str(job), "{dir}": str(tmp_path), "{bin}": str(binary),
             "{empty}": str(empty)}
    before = sorted(p.name for p in tmp_path.iterdir())
    argv = [a.replace("{dir}", str(tmp_path)) if a.startswith("{dir}/") else names.get(a, a)
            for a in args]
    assert_refused(invoke(capsys, argv), 2, fragment)
    assert sorted(p.name for p in tmp_path.iterdir()) == before and job.read_text() == SCRIPT


def test_cpus_per_task_beyond_the_node_is_said_under_asked(job):
    """sbatch refuses --cpus-per-task=64 on 2-core nodes; advise predicted the layout as if
    it ran (its OMP_NUM_THREADS=2 fits). It is advice: the rewrite fixes it, exit 0."""
    job.write_text(SCRIPT.replace("--cpus-per-task=2", "--cpus-per-task=64"))
    res = run_cli(["advise", str(job), "--cluster", CLUSTER])
    assert res.returncode == 0, res.stderr
    asked = res.stdout.split("  recommended ")[0]
    assert "! 1 rank x 64 CPUs per task = 64 CPUs per node, but partition 'standard' has 2" \
        in asked and "predicted runtime" not in asked
    assert "line 6: #SBATCH --cpus-per-task=64  ->  #SBATCH --cpus-per-task=1" in res.stdout


def test_every_site_script_is_advised_without_a_traceback(tmp_path, capsys):
    for script in sorted(SCRIPTS.glob("*.sbatch")) + sorted(SCRIPTS.glob("*.pbs")):
        copy = tmp_path / script.name
        shutil.copy(script, copy)
        res = invoke(capsys, ["advise", str(copy), "--workload", "stencil", "--size", "128"])
        assert res.code in (0, 2), (script.name, res.err)
        assert "Traceback" not in res.err
        if res.code == 2:  # a partition this machine lacks: said in one line
            assert_refused(res, 2, "pass --cluster")


def test_a_loop_keeps_the_time_limit_and_says_why(job, tmp_path):
    job.write_text(SCRIPT.replace("srun hpcds1mpi run stencil --size 128 --precision fp64",
                                  "for step in 1 2 3; do\n  srun hpcds1mpi run stencil --size "
                                  "128 --precision fp64\ndone"))
    out = tmp_path / "new.sbatch"
    res = run_cli(["advise", str(job), "--cluster", CLUSTER, "--rewrite", str(out)])
    assert res.returncode == 0, res.stderr
    assert "walltime 00:30:00  (kept from the script: it launches more than once" in res.stdout
    notes = [x for x in res.stdout.splitlines() if "launches more than once (" in x]
    assert len(notes) == 1 and notes[0].startswith("  note: ")
    assert "#SBATCH --time=00:30:00" in out.read_text()


def test_a_launcher_of_another_mpi_family_is_a_warning_line(job):
    """Open MPI's mpirun starting an MPICH-built program was advised as if fine. The bare
    mpirun is the one on PATH, the program read in the folder advise runs in (the submit
    folder); after `module load` the job's PATH is not this one: nothing is said."""
    from tests.helpers import system_program

    job.write_text(SCRIPT.replace("srun hpcds1mpi run stencil --size 128 --precision fp64",
                                  "mpirun -np 2 ./np -u 8"))
    shutil.copy(system_program("NPmpich2"), job.parent / "np")
    bin_dir = job.parent / "bin"
    bin_dir.mkdir()
    (bin_dir / "mpirun").symlink_to(system_program("mpirun.openmpi"))
    argv = ["advise", str(job), "--cluster", CLUSTER, "--workload", "stencil", "--size", "128"]
    env = {"PATH": f"{bin_dir}:{Path(sys.executable).parent}"}
    res = run_cli(argv, cwd=job.parent, env=env)
    assert res.returncode == 0 and "module load" in job.read_text(), res.stderr
    assert "warning:" not in res.stdout
    job.write_text(job.read_text().replace("module load hpcds1mpi\n", ""))
    res = run_cli(argv, cwd=job.parent, env=env)
    warnings = [x for x in res.stdout.splitlines() if x.startswith("  warning: ")]
    # and Open MPI's own binding of its 2 ranks, one core each for 2 threads (s46 tester H3)
    assert res.returncode == 0 and len(warnings) == 2, (res.stdout, res.stderr)
    assert "line 11: np is linked against the MPICH family" in warnings[0]
    assert "Open MPI's launcher" in warnings[0] and "launch it with " in warnings[0]
    assert "line 11: Open MPI's mpirun binds each rank to one core by default" in warnings[1]


@pytest.mark.mpi
@pytest.mark.slow
def test_a_swept_programs_size_comes_from_the_script(tmp_path):
    """The user's story: a program swept with sweep --command (under a label that is not its
    name) and trained on; advise matches the script's launch line to it and reads the size
    where {size} was, with no --size (before: 'no problem size ... pass --size')."""
    from tests.apps import jacobi

    exe = jacobi.build(tmp_path)
    if exe is None:
        pytest.skip("the wheel's mpicc or a C compiler is missing")
    sweep = run_cli(["sweep", "--command", "./jacobi {size} 20", "--label", "relax",
                     "--sizes", "64,128", "--ranks-per-node", "1,2", "--min-repeats", "1",
                     "--max-repeats", "1", "--min-time", "0", "--no-progress", "--out",
                     "t.h5"], cwd=tmp_path, timeout=300)
    assert sweep.returncode == 0, sweep.stderr
    train = run_cli(["train", "--telemetry", "t.h5", "--out", "model", "--no-embedding",
                     "--members", "2", "--member-trees", "20"], cwd=tmp_path, timeout=300)
    assert train.returncode == 0, train.stderr
    levels = json.loads((tmp_path / "model" / "measured_levels.json").read_text())
    assert levels["relax"]["command"] == "./jacobi {size} 20"
    (tmp_path / "job.sbatch").write_text("#!/bin/bash\n#SBATCH --nodes=1\n"
                                         "#SBATCH --ntasks-per-node=2\n#SBATCH --time=00:10:00\n"
                                         "srun ./jacobi 96 20\n")
    res = run_cli(["advise", "job.sbatch", "--model", "model", "--cluster", CLUSTER],
                  cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert "workload relax (from the program on line 5), size 96 (from the command on line 5)" \
        in res.stdout
    # s43: a profiler's -o path, a one-line function, a polled background launch and a
    # post-processing function called after the launch, each read as a user writes them
    head = "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --ntasks-per-node=2\n#SBATCH --time=00:10:00\n"
    for body, said in [
            ("srun nsys profile -o /scratch/prof ./jacobi 96 20\n", "walltime 00:10:00  (kept"),
            ("run_sim() { srun ./jacobi 96 20; }\nrun_sim\n", "walltime 00:01:00"),
            ("mpirun -np 2 ./jacobi 96 20 &\nPID=$!\nwhile kill -0 $PID; do sleep 60; done\n",
             "walltime 00:01:00"),
            ("post() { python3 plot.py; }\nsrun ./jacobi 96 20\npost\n",
             "line 7 runs `post (runs python3 plot.py)` after the launch on line 6")]:
        (tmp_path / "job.sbatch").write_text(head + body)
        res = run_cli(["advise", "job.sbatch", "--model", "model", "--cluster", CLUSTER],
                      cwd=tmp_path)
        assert res.returncode == 0, res.stderr
        assert "workload relax" in res.stdout and said in res.stdout, (body, res.stdout)


@pytest.mark.parametrize("scheduler, said", [
    ("slurm", "hpcds1mpi recommend --emit slurm writes this sweep"),
    ("pbs", "with hpcds1mpi sweep in a job; the written calibration sweep is for Slurm only"),
])
def test_the_calibration_list_says_how_to_measure_it_on_the_scripts_scheduler(scheduler, said):
    """A PBS script's escalated advice pointed at --emit slurm, which a PBS site cannot use."""
    from types import SimpleNamespace

    from hpcds1mpi.commands.advise import format_advice

    advice = SimpleNamespace(
        verdict={"verdict": "escalate", "reasons": []}, script="job", scheduler=scheduler,
        workload=None, asked=None, recommended=None, energy_saving_pct=None,
        runtime_change_pct=None, confidence=None, changes=[], warnings=[], notes=[],
        calibration=[{"config": {"nodes": 1, "ranks_per_node": 1, "threads": 1,
                                 "device": "cpu", "precision": "fp64"},
                      "label": "N1xR1xT1-cpu-fp64", "reason": "least certain"}])
    text = format_advice(advice)
    assert said in text
    # each step by its label, as recommend prints it (s29 tester C8: dict reprs were printed)
    assert "     N1xR1xT1-cpu-fp64  least certain" in text and "{'nodes'" not in text


def test_a_new_program_named_with_workload_is_calibrated_and_says_its_program(job, capsys):
    """s41 review F5: advise of a script running a program the model never measured, named
    with --workload, lost its calibration sweep (it has the command: its launch line), and
    pointed at an --emit that refuses it without --program."""
    job.write_text(SCRIPT.replace("hpcds1mpi run stencil --size 128 --precision fp64",
                                  "./lulesh -s 40"))
    res = invoke(capsys, ["advise", str(job), "--cluster", CLUSTER,
                          "--workload", "lulesh", "--size", "40"])
    assert res.code == 0, res.err
    out = res.out
    assert ("measure first (hpcds1mpi recommend --emit slurm --workload lulesh --size 40 "
            "--program \"<the script's program, {size} for its size>\" writes this sweep):"
            in out), out
    job.write_text(SCRIPT.replace("srun hpcds1mpi run stencil --size 128 --precision fp64",
                                  "./lulesh 40"))  # no launch line: no command, said why
    res = invoke(capsys, ["advise", str(job), "--cluster", CLUSTER,
                          "--workload", "lulesh", "--size", "40"])
    out = res.out
    assert res.code == 0 and "measure first" not in out, out
    assert "note: no calibration sweep for 'lulesh': it is not a built-in kernel" in out, out


def test_a_removed_line_is_shown_as_removed():
    """A CPU program's GPU directive goes in the rewrite; it was shown as 'line 6: ... ->'
    with nothing after the arrow."""
    from types import SimpleNamespace

    from hpcds1mpi.commands.advise import format_advice
    from hpcds1mpi.launch.script_rewrite import Change

    advice = SimpleNamespace(
        verdict={"verdict": "confirm", "reasons": []}, script="job", scheduler="slurm",
        workload=None, asked=None, recommended=None, energy_saving_pct=None,
        runtime_change_pct=None, confidence=None, warnings=[], notes=[], calibration=[],
        changes=[Change(6, "#SBATCH --gpus-per-node=4", ""),
                 Change(7, "#SBATCH --time=01:00:00", "#SBATCH --time=00:01:00")])
    text = format_advice(advice)
    assert "     line 6: #SBATCH --gpus-per-node=4  (removed)\n" in text
    assert "line 7: #SBATCH --time=01:00:00  ->  #SBATCH --time=00:01:00" in text


PBS_CLUSTER = """[clusters.lab]
account = "proj42"
[clusters.lab.partitions.workq]
cores_per_node = 2
memory_gb = 25.3
max_nodes = 4
"""


def test_a_pbs_script_is_advised_in_pbs_terms(tmp_path, capsys, monkeypatch):
    """s28 tester V: a PBS script's walltime was shown in Slurm form (1-12:00:00, V9), and its
    rewrite to more threads per rank left `hpcds1mpi run` at its default of one (V5)."""
    monkeypatch.setenv("HPCDS1MPI_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HPCDS1MPI_HISTORY", str(tmp_path / "cache" / "failures.json"))
    cluster = tmp_path / "lab.toml"
    cluster.write_text(PBS_CLUSTER)
    job = tmp_path / "g.pbs"
    job.write_text("#!/bin/bash\n#PBS -l select=2:ncpus=2:mpiprocs=2:ompthreads=1\n"
                   "#PBS -l place=scatter\n#PBS -lwalltime=36:00:00\ncd $PBS_O_WORKDIR\n"
                   "mpiexec -n 4 hpcds1mpi run gemm --size 3000 --precision bf16\n")
    out = tmp_path / "g.new.pbs"
    res = invoke(capsys, ["advise", str(job), "--cluster", str(cluster), "--rewrite", str(out),
                          "--json"])
    assert res.code == 0, res.err
    data = json.loads(res.out)
    threads = data["recommended"]["config"]["threads"]
    launch = out.read_text().splitlines()[-1]
    assert (f"hpcds1mpi run --threads {threads} gemm" in launch) if threads > 1 \
        else "--threads" not in launch
    res = invoke(capsys, ["advise", str(job), "--cluster", str(cluster)])
    # s46 tester H6: the walltime named every line of the request ("lines 2, 4, 6"): its own
    # line alone, the layout's on the asked line
    assert "              walltime 36:00:00  (from line 4)\n" in res.out
    asked = next(line for line in res.out.splitlines() if line.startswith("  asked"))
    assert asked.endswith("(from lines 2, 6)"), asked


def test_a_line_too_long_to_read_refuses_the_rewrite_and_writes_nothing(job, tmp_path, capsys):
    """s28 tester Z7: a 2000-chunk select was skipped as too long and the rewrite added a
    second select beside it."""
    select = "+".join(["1:ncpus=1:mpiprocs=1"] * 2000)
    job.write_text(SCRIPT.replace("#SBATCH --nodes=2\n", f"#SBATCH --comment={select}\n"))
    out = tmp_path / "new.sbatch"
    res = invoke(capsys, ["advise", str(job), "--cluster", CLUSTER, "--rewrite", str(out)])
    assert res.code != 0 and "Traceback" not in res.err and not out.exists()
    assert res.err.strip().startswith("hpcds1mpi: error: --rewrite refused: line 4 is over "
                                      "32,768 characters") and res.err.count("\n") == 1, res.err
    assert "asked" in res.out and "--rewrite changes only these lines" not in res.out
    res = invoke(capsys, ["advise", str(job), "--cluster", CLUSTER])  # the reading stays
    # said as what --rewrite would do: it was not asked (s29 V1-4)
    assert res.code == 0 and "--rewrite would be refused: line 4 is over 32,768 characters" \
        in res.out


def test_the_proposed_time_limit_adds_the_setup_as_recommends_script_does(tmp_path):
    """s31: advise's proposed --time left out the sweep's --setup, which recommend's script
    adds (s30 tester O1: a 65 s setup before a 0.4 s solver got 1 minute and hit it). Both now
    add it by the same rule; the basis says so."""
    from surrogates.bundle_files import LEVELS_FILE, MANIFEST, file_hashes

    app = tmp_path / "app.py"
    app.write_text("print('time: 0.01 s')\n")
    sweep = run_cli(["sweep", "--command", f"{sys.executable} {app} {{size}}", "--label", "app",
                     "--sizes", "10,20", "--ranks-per-node", "1,2", "--threads", "1",
                     "--workdir", "w{size}", "--setup", "true", "--time-regex",
                     r"time: (\S+) s", "--min-repeats", "1", "--max-repeats", "1",
                     "--min-time", "0", "--no-progress", "--out", "t.h5"],
                    cwd=tmp_path, timeout=300)
    assert sweep.returncode == 0, sweep.stderr
    assert run_cli(["train", "--telemetry", "t.h5", "--no-embedding", "--members", "2",
                    "--member-trees", "20", "--out", "model"], cwd=tmp_path,
                   timeout=300).returncode == 0
    # a 90 s setup, as its runs would have recorded it (a real one would take 90 s here)
    levels = json.loads((tmp_path / "model" / LEVELS_FILE).read_text())
    assert levels["app"]["setup_s"], levels["app"]
    levels["app"]["setup_s"] = {"": 90.0}
    (tmp_path / "model" / LEVELS_FILE).write_text(json.dumps(levels))
    manifest = json.loads((tmp_path / "model" / MANIFEST).read_text())
    manifest["files"] = file_hashes(tmp_path / "model")
    (tmp_path / "model" / MANIFEST).write_text(json.dumps(manifest))
    (tmp_path / "job.sbatch").write_text("#!/bin/bash\n#SBATCH --nodes=1\n"
                                         "#SBATCH --ntasks-per-node=2\n#SBATCH --time=00:30:00\n"
                                         f"cd w15\nsrun {sys.executable} {app} 15\n")
    res = run_cli(["advise", "job.sbatch", "--model", "model", "--cluster", CLUSTER, "--json"],
                  cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    shown = json.loads(res.stdout)["recommended"]
    assert "plus 90 s for the --setup (the longest measured for this program)" in \
        shown["walltime_basis"], shown
    script = run_cli(["recommend", "--workload", "app", "--size", "15", "--model", "model",
                      "--cluster", CLUSTER, "--emit", "slurm"], cwd=tmp_path)
    assert script.returncode == 0, script.stderr
    assert "plus 90 s for the --setup (the longest measured for this program)" in script.stdout
    limit = next(line for line in script.stdout.splitlines() if line.startswith("#SBATCH --time"))
    assert shown["walltime_s"] >= 120 and limit == \
        f"#SBATCH --time=00:{shown['walltime_s'] // 60:02d}:00", (limit, shown)


def test_a_newline_in_a_script_or_rewrite_name_keeps_each_line_one_line(job, tmp_path, capsys):
    """The header and the "wrote" line show a name's newline as ``\\n`` (``telemetry show``'s
    way), not raw: "hpcds1mpi advise: q" / "nl.sh (slurm)" (s39 tester D11)."""
    script, out = tmp_path / "q\nnl.sh", tmp_path / "o\nx.sh"
    shutil.copy(job, script)
    res = invoke(capsys, ["advise", str(script), "--cluster", CLUSTER, "--rewrite", str(out)])
    assert res.code == 0, res.err
    lines = res.out.splitlines()
    assert lines[0] == "hpcds1mpi advise: q\\nnl.sh (slurm)"  # its name, as before
    assert lines[-1].startswith(f"wrote {tmp_path}/o\\nx.sh (") and out.is_file()


@pytest.mark.parametrize("launch", [
    "srun nsys profile -o /scratch/prof ./stencil --size 128",
    "mpirun -np 2 nsys profile -o /scratch/prof -t mpi,cuda ./stencil --size 128"])
def test_a_profilers_option_value_written_as_a_path_is_not_the_program(job, tmp_path, launch):
    """s42: ``/scratch/prof``, the value of nsys's ``-o``, was read as the program, so the
    script "matched no workload"; the program after it is ``./stencil``."""
    path = tmp_path / "prof.sbatch"
    path.write_text("#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --ntasks-per-node=2\n"
                    f"#SBATCH --time=00:30:00\n{launch}\n")
    res = run_cli(["advise", str(path), "--cluster", CLUSTER])
    assert res.returncode == 0, res.stderr
    assert "workload stencil (from the program on line 5), size 128" in res.stdout
    assert "line 5 runs the program under `nsys`" in res.stdout


@pytest.mark.parametrize("failed_after, said", [
    (3.52, "its runs failed after 3.52 s (measured: the launch's wall time, start-up included,"
           " no runtime)"),
    (float("nan"), "no time until it fails: no failed run of it was measured at this size"),
])
def test_a_failing_layouts_time_is_its_own_measured_failure_never_another_layouts(
        failed_after, said):
    """Was (s43 tester L2): GetDP's 1 rank, failed after 3.52 s at size 50, was given
    "predicted time until it fails 1.47 s (1.39 s–2.2 s)", the 2 ranks' runtime there."""
    from hpcds1mpi.commands.advise import _side
    from hpcds1mpi.config import Configuration
    from hpcds1mpi.decide.advise_answer import Side

    side = Side(Configuration(1, 1, 1, "cpu", "fp64"), "local", 300, runtime_s=1.47,
                runtime_lo=1.39, runtime_hi=2.2, energy_j=14.7, energy_lo=11.0, energy_hi=18.6,
                problem="predicted to fail", failed_after_s=failed_after)
    lines = _side("asked", side, "modelled", "slurm")
    assert lines[1].strip() == said
    assert not any("1.47" in ln or "14.7" in ln for ln in lines)
