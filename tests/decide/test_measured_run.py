"""A recommended program's script runs it as its sweep did: in the sweep's ``--workdir`` folder
for the pick (s29 tester A1) and with the sweep's launcher where no cluster file names one
(s29 tester B4). The levels come from a real sweep's telemetry; the scripts run under bash."""

from __future__ import annotations

import os
import subprocess

import pytest

from hpcds1mpi.decide.recommend import recommend
from hpcds1mpi.decide.recommendation import emit_script, script_program
from hpcds1mpi.errors import ConfigError
from hpcds1mpi.launch.scripts import check_bash_syntax
from tests.fake_bundle import FakeBundle, fake_places, isolate_user_files
from tests.helpers import run_cli


@pytest.fixture(autouse=True)
def isolated_cache(tmp_path, monkeypatch):
    isolate_user_files(monkeypatch, tmp_path)


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    """(the levels of a real sweep of ``app`` in ``--workdir 'cases/{size}-{ranks}'``, the
    folder it ran in): the program reads its input from the folder it runs in, as
    OpenFOAM's pre-decomposed cases do."""
    from hpcds1mpi.records.telemetry_rows import telemetry_rows
    from hpcds1mpi.surrogates.levels import levels_from_frame

    top = tmp_path_factory.mktemp("swept")
    app = top / "app.sh"
    app.write_text('#!/bin/sh\ncat controlDict >/dev/null || exit 3\necho "time: 0.01 s"\n')
    app.chmod(0o755)
    for size in (1, 2):
        (top / "cases" / f"{size}-1").mkdir(parents=True)
        (top / "cases" / f"{size}-1" / "controlDict").write_text("ok\n")
    out = top / "app.h5"
    res = run_cli(["sweep", "--command", f"{app} {{size}}", "--label", "app", "--sizes", "1,2",
                   "--ranks-per-node", "1", "--threads", "1", "--time-regex",
                   r"time: ([0-9.]+) s", "--workdir", "cases/{size}-{ranks}",
                   "--min-repeats", "1", "--max-repeats", "1", "--min-time", "0",
                   "--out", str(out), "--no-progress"], timeout=180, cwd=top)
    assert res.returncode == 0, res.stderr
    return levels_from_frame(telemetry_rows(str(out)))["app"], top


def _program_rec(levels, size: int = 2, cluster=None):
    """The pick (1 node x 1 rank x 2 threads on a two-core partition) of program ``app`` at ``size``, holding
    ``levels`` as ``decide/recommend.recommend`` gives a program's recommendation its levels;
    ``cluster``: the place's cluster (default: one that names no launcher)."""
    from hpcds1mpi.cluster import Cluster, Partition

    hardware = {"cores_per_node": 2, "memory_gb": 8.0, "gpus_per_node": 0,
                "gpu_memory_gb": 0.0, "max_nodes": 1}
    tiny = Partition(name="cpu", **hardware)
    owner = cluster or Cluster("lab", {"cpu": tiny})
    rec = recommend(FakeBundle(partitions={"cpu": hardware}), "gemm", 1024, [(owner, tiny)])
    rec.workload, rec.size, rec.program_command = "app", size, levels.command
    rec.program_levels = levels
    return rec


def _script(rec, scheduler: str) -> str:
    """``rec``'s script as ``recommend --emit`` writes it: the command its sweep ran."""
    program, recorded = script_program(rec, None)
    return emit_script(rec, scheduler, program, notes=[recorded])


def _run(script: str, cwd) -> subprocess.CompletedProcess:
    check_bash_syntax(script)
    path = cwd / "job.sh"
    path.write_text(script)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "OMPI_"))}
    return subprocess.run(["bash", str(path)], capture_output=True, text=True, cwd=cwd,
                          timeout=120, env=env)


def test_the_script_runs_the_program_in_its_sweeps_workdir_for_the_pick(swept):
    """s29 tester A1: swept in ``cases/{size}-{ranks}``, the script ran the program in the
    submit folder (no controlDict there) and said nothing; now it checks and enters the
    pick's folder, relative to the submit folder, and says so."""
    levels, top = swept
    assert levels.measured_with["workdir"] == "cases/{size}-{ranks}"
    for scheduler in ("slurm", "pbs"):
        script = _script(_program_rec(levels), scheduler)
        assert "\ncd cases/2-1\n" in script, script
        assert ("# note: the job runs the program in 'cases/2-1' (its sweep's --workdir "
                "'cases/{size}-{ranks}' for this configuration), in the folder you submit "
                "from") in script
    script = _script(_program_rec(levels), "slurm")
    ran = _run(script, top)
    assert ran.returncode == 0, ran.stderr
    assert "time: 0.01 s" in ran.stdout
    # a size with no folder: the job says which, where, and what to do, and runs nothing
    ran = _run(_script(_program_rec(levels, size=7), "slurm"), top)
    assert ran.returncode == 1
    assert ("job: no run: the program's folder cases/7-1 is missing in " + str(top)) \
        in ran.stderr and "create it with the program's input" in ran.stderr


def test_a_program_without_a_workdir_runs_in_the_submit_folder(swept):
    import dataclasses

    levels, _ = swept
    plain = dataclasses.replace(levels, measured_with={**levels.measured_with, "workdir": ""})
    script = _script(_program_rec(plain), "slurm")
    assert "\ncd " not in script and "runs the program in" not in script


def test_the_script_launches_the_program_as_its_sweep_did_without_a_cluster_launcher(swept):
    """s29 tester B4: a program swept with mpirun got ``srun --mpi=pmi2``, which its Open MPI
    cannot start as one job (refused); with no cluster file naming a launcher, the script
    launches it with the sweep's launcher, said in a note."""
    levels, top = swept
    launch = levels.launched_with
    assert launch is not None and launch["launcher"] == "mpiexec", launch
    script = _script(_program_rec(levels), "slurm")
    last = script.rstrip().splitlines()[-1]
    assert last.startswith(launch["command"] + " ") and "srun" not in last, last
    assert (f"# note: the script launches with {launch['command']}, the mpiexec the "
            "program's sweep ran it with (no cluster file names a launcher") in script
    ran = _run(script, top)
    assert ran.returncode == 0 and "time: 0.01 s" in ran.stdout, ran.stderr


def test_pooled_sweeps_of_two_launchers_script_the_one_of_the_picks_runs_and_say_so(swept):
    """s31 tester P6: two sweeps of one program with different MPICH launchers, pooled by
    train, got srun --mpi=pmi2 / a bare mpiexec with no note; now the launcher of the pick's
    runs (here the second sweep's, which alone ran the pick's configuration), said."""
    import shutil

    import pandas as pd

    from hpcds1mpi.records.telemetry_rows import telemetry_rows
    from hpcds1mpi.surrogates.levels import levels_from_frame

    levels, top = swept
    hydra = shutil.which("mpiexec.mpich") or shutil.which("mpiexec.hydra")
    if hydra is None or hydra == levels.launched_with["command"]:
        pytest.skip("needs a second MPICH launcher (Debian's mpiexec.mpich)")
    # The pick below is 1 node x 1 rank x 2 threads in bf16, which this sweep alone runs.
    res = run_cli(["sweep", "--command", f"{top / 'app.sh'} {{size}} {{precision}}", "--label",
                   "app", "--sizes", "2", "--ranks-per-node", "1", "--threads", "2",
                   "--precisions", "bf16", "--time-regex",
                   r"time: ([0-9.]+) s", "--workdir", "cases/{size}-{ranks}",
                   "--min-repeats", "1", "--max-repeats", "1", "--min-time", "0",
                   "--mpiexec", hydra, "--out", "other.h5", "--no-progress"],
                  timeout=180, cwd=top)
    assert res.returncode == 0, res.stderr
    pooled = levels_from_frame(pd.concat([telemetry_rows(str(top / "app.h5")),
                                          telemetry_rows(str(top / "other.h5"))],
                                         ignore_index=True))["app"]
    for scheduler in ("slurm", "pbs"):
        script = _script(_program_rec(pooled), scheduler)
        assert script.rstrip().splitlines()[-1].startswith(hydra + " "), script
        assert (f"# note: the pooled sweeps launched the program with 2 launchers ("
                f"{levels.launched_with['command']} (2 runs), {hydra} (1 runs)); this "
                f"script's is {hydra}, which ran 1 of the 1 runs of N1xR1xT2-cpu-bf16") \
            in script, script
    ran = _run(_script(_program_rec(pooled), "slurm"), top)
    assert ran.returncode == 0 and "time: 0.01 s" in ran.stdout, ran.stderr


def test_a_cluster_files_launcher_still_wins(swept):
    from hpcds1mpi.cluster import Cluster, Partition

    levels, _ = swept
    tiny = Partition(name="cpu", cores_per_node=2, memory_gb=8.0, max_nodes=1)
    site = Cluster("lab", {"cpu": tiny}, mpi="pmix")
    script = _script(_program_rec(levels, cluster=site), "slurm")
    assert script.rstrip().splitlines()[-1].startswith("srun ")
    assert "--mpi=pmix" in script and "the program's sweep ran it with" not in script


def test_a_bundle_without_the_launch_record_keeps_the_old_launcher(swept):
    import dataclasses

    levels, _ = swept
    old = dataclasses.replace(levels, launched_with=None)
    try:
        script = _script(_program_rec(old), "slurm")
    except ConfigError as exc:  # srun of an Open MPI without Slurm PMI: refused, as before
        assert "--cluster FILE" in str(exc)
    else:
        assert script.rstrip().splitlines()[-1].startswith("srun ")


def test_an_absolute_workdir_is_said_as_itself_not_in_the_submit_folder(swept, tmp_path):
    """s29 V1-2: with --workdir '/abs/{size}-{ranks}' the note said "in the folder you submit
    from: create it there" and the check "is missing in $PWD"."""
    import dataclasses

    levels, _ = swept
    absolute = dataclasses.replace(levels, measured_with={
        **levels.measured_with, "workdir": f"{tmp_path}/cases/{{size}}-{{ranks}}"})
    script = _script(_program_rec(absolute, size=7), "slurm")
    assert (f"the job runs the program in '{tmp_path}/cases/7-1' (its sweep's --workdir "
            f"'{tmp_path}/cases/{{size}}-{{ranks}}' for this configuration): create it with "
            "the program's input before you submit") in script
    assert "submit from" not in script and "$PWD" not in script
    ran = _run(script, tmp_path)
    assert ran.returncode == 1 and f"folder {tmp_path}/cases/7-1 is missing; create it" \
        in ran.stderr, ran.stderr


def test_a_bundle_without_a_launcher_record_hints_at_training_again(swept):
    """s29 V1-8: the hint a refusal of the script's launcher gets (``scripts.render(hint=)``)."""
    import dataclasses

    from hpcds1mpi.decide.measured_run import measured_run
    from hpcds1mpi.launch.script_launcher import RETRAIN_HINT

    levels, _ = swept
    assert measured_run(_program_rec(levels), "slurm").hint == ""
    old = dataclasses.replace(levels, launched_with=None)
    assert measured_run(_program_rec(old), "slurm").hint == RETRAIN_HINT


@pytest.fixture(scope="module")
def set_up(tmp_path_factory):
    """(the folder, the slurm script ``recommend --emit slurm`` wrote from a bundle trained on
    a real sweep whose ``--setup`` writes each configuration's input: the program checks it)."""
    from tests.measure.test_setup_command import SETUP, _case, _sweep

    top = _case(tmp_path_factory.mktemp("set_up"))
    env = {"HPCDS1MPI_CACHE": str(top / "cache"),
           "HPCDS1MPI_HISTORY": str(top / "cache" / "failures.json")}
    assert _sweep(top, SETUP).returncode == 0
    trained = run_cli(["train", "--telemetry", str(top / "t.h5"), "--out", str(top / "bundle"),
                       "--members", "1", "--member-trees", "5"], timeout=300, env=env)
    assert trained.returncode == 0, trained.stderr
    emitted = run_cli(["recommend", "--model", str(top / "bundle"), "--workload", "chk",
                       "--size", "2", "--emit", "slurm", "-o", str(top / "job.sbatch")],
                      timeout=120, env=env, cwd=top)
    assert emitted.returncode == 0, emitted.stderr
    (top / "setup.log").unlink()
    return top, (top / "job.sbatch").read_text()


def test_the_script_runs_its_sweeps_setup_for_the_pick_before_the_launch(set_up):
    """An OpenFOAM case decomposed per rank count, an input written from {size}: the job
    repeats the sweep's --setup, filled for the pick, in its folder, quotes, | && $ intact."""
    top, script = set_up
    lines = script.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("/bin/sh -c "))
    assert lines[at - 1].startswith("cd runs/2-") and "mpiexec" in lines[at + 1], script
    assert "# note: the job runs the sweep's --setup " in script
    ran = _run(script, top)  # bash -n first
    assert ran.returncode == 0, ran.stderr
    assert "time: 0.01 s" in ran.stdout
    assert (top / "setup.log").read_text().splitlines() == [
        f"{lines[at - 1][len('cd runs/'):]} threads=1"]


def test_a_failing_setup_stops_the_job_before_its_launch(set_up, tmp_path):
    top, script = set_up
    failing = script.replace("/bin/sh -c 'printf", "/bin/sh -c 'exit 5; printf")
    ran = _run(failing, top)
    assert ran.returncode == 5 and "job: no run: the setup (its sweep's --setup) failed " \
        "with exit 5" in ran.stderr and "time:" not in ran.stdout, ran.stderr


def test_the_setup_runs_in_the_job_on_the_test_slurm(set_up, slurm):
    top, script = set_up
    folder = top / script.split("\ncd ", 1)[1].split("\n", 1)[0]
    (folder / "input.txt").unlink(missing_ok=True)
    out = top / "slurm-%j.out"
    job, state, text = slurm.run_job(
        lambda: slurm.sbatch(top / "job.sbatch", "-o", str(out), cwd=top), out)
    assert state == "COMPLETED", text
    assert "time: 0.01 s" in text and (folder / "input.txt").exists()


def test_with_a_setup_the_job_creates_a_missing_folder_for_it(set_up):
    """s30 tester N7a: the script of a sweep whose --setup writes the input exited "folder
    ... is missing"; it now creates it, as the sweep does, and the setup fills it."""
    import shutil

    top, script = set_up
    folder = script.split("\ncd ", 1)[1].split("\n", 1)[0]
    assert f"\nmkdir -p -- {folder} ||" in script and "is missing" not in script, script
    assert "created if missing for the --setup to prepare" in script
    shutil.rmtree(top / folder)
    ran = _run(script, top)
    assert ran.returncode == 0 and "time: 0.01 s" in ran.stdout, ran.stderr
    assert (top / folder / "input.txt").exists()


class _WithSetup:
    """A program's levels as a bundle whose levels keep ``setup_s`` gives them (the field is
    surrogates/levels.py's: s30 tester O1); everything else is ``levels``'."""

    def __init__(self, levels, setup_s):
        self._levels, self.setup_s = levels, setup_s

    def __getattr__(self, name):
        return getattr(self._levels, name)


def test_the_time_limit_adds_the_longest_setup_measured(swept):
    """s30 tester O1: a 65 s setup before a 0.4 s solver got ``--time=00:01:00`` and the job
    hit the limit: the limit now adds the setup's longest measured time for the pick (else
    the program's), and the summary comment says so."""
    import dataclasses

    levels, _ = swept
    with_setup = dataclasses.replace(levels, measured_with={**levels.measured_with,
                                                            "setup": "sleep 65"})
    plain = _script(_program_rec(with_setup), "slurm")
    assert "\nmkdir -p -- cases/2-1 ||" in _script(_program_rec(with_setup), "pbs")  # N7a
    assert "#SBATCH --time=00:01:00" in plain and "s for the --setup (" not in plain
    for recorded, whence in (({"N1xR1xT2-cpu-fp64": 65.0, "": 90.0}, "this configuration"),
                             ({"N1xR2xT1-cpu-fp64": 90.0, "": 90.0}, "this program")):
        rec = _program_rec(with_setup)
        label = rec.picked.choice.config().label()
        recorded = {(label if k == "N1xR1xT2-cpu-fp64" else k): v for k, v in recorded.items()}
        script = _script(_program_rec(_WithSetup(with_setup, recorded)), "slurm")
        assert "#SBATCH --time=00:01:00" not in script, script
        # (65 or 90 s + the run) x the 1.5 margin, whole minutes
        assert f"#SBATCH --time=00:0{2 if whence == 'this configuration' else 3}:00" in script
        assert f"plus {'65 s' if whence == 'this configuration' else '90 s'} for " \
            f"the --setup (the longest measured for {whence})" in script, script
    # no setup in the sweep: a recorded time means nothing
    script = _script(_program_rec(_WithSetup(levels, {"": 90.0})), "slurm")
    assert "#SBATCH --time=00:01:00" in script and "s for the --setup (" not in script


def test_no_size_note_where_the_setup_carries_the_size(swept):
    """s30 testers N7b, O7: scripts said "the command carries no {size}" though the sweep's
    --setup wrote the input from {size}, and the script repeats it filled."""
    import dataclasses

    levels, top = swept
    bare = str(top / "app.sh")  # no {size} in the command
    for setup, said in (("sed 's/@N@/{size}/' ../in.tmpl > in", False), ("true", True)):
        lv = dataclasses.replace(levels, command=bare, measured_with={
            **levels.measured_with, "workdir": "cases/x-{ranks}", "setup": setup})
        script = _script(_program_rec(lv), "slurm")
        assert ("the command carries no {size}" in script) is said, script


def test_a_workdir_of_the_submit_folder_is_no_folder_to_create(swept):
    """s30 tester N5: --workdir '.' gave "the job runs the program in '.' ...: create it there"
    and a `cd .`; the submit folder is neither created, checked nor entered."""
    import dataclasses

    levels, _ = swept
    script = _script(_program_rec(dataclasses.replace(
        levels, measured_with={**levels.measured_with, "workdir": "."})), "slurm")
    assert "\ncd " not in script and "create it" not in script and "'.'" not in script, script


def _swept_app(top, command: str):
    """The levels of a real sweep, without --workdir, of ``command`` (sizes 1, 2) run from
    ``top``, where ``app.sh`` is."""
    from hpcds1mpi.records.telemetry_rows import telemetry_rows
    from hpcds1mpi.surrogates.levels import levels_from_frame

    out = top / "app.h5"
    res = run_cli(["sweep", "--command", command, "--label", "app",
                   "--sizes", "1,2", "--ranks-per-node", "1", "--threads", "1",
                   "--time-regex", r"time: ([0-9.]+) s", "--min-repeats", "1",
                   "--max-repeats", "1", "--min-time", "0", "--out", str(out),
                   "--no-progress"], timeout=180, cwd=top)
    assert res.returncode == 0, res.stderr
    return levels_from_frame(telemetry_rows(str(out)))["app"]


@pytest.fixture(scope="module")
def swept_here(tmp_path_factory):
    """(the levels of a real sweep, without --workdir, of ``./app.sh in/case-{size}.txt``
    run from its folder, that folder): the command's paths are relative to it."""
    top = tmp_path_factory.mktemp("swept_here")
    app = top / "app.sh"
    app.write_text('#!/bin/sh\ncat "$1" >/dev/null || exit 3\necho "time: 0.01 s"\n')
    app.chmod(0o755)
    (top / "in").mkdir()
    for size in (1, 2):
        (top / "in" / f"case-{size}.txt").write_text("ok\n")
    return _swept_app(top, "./app.sh in/case-{size}.txt"), top


def test_a_program_swept_without_a_workdir_runs_in_the_sweeps_folder(swept_here, tmp_path):
    """s37 tester G3: ``nwchem.openmpi nw/h2o-{size}.nw`` swept without --workdir got a
    script that ran it wherever the job was submitted from (exit 127: no nw/h2o-3.nw there),
    with no note. The sweep records its folder; the script enters it, checks the relative
    paths there first, and says so; a job submitted from elsewhere runs."""
    levels, top = swept_here
    assert levels.swept_in == str(top)
    script = _script(_program_rec(levels), "slurm")
    assert f"\ncd {top}\n" in script, script
    assert (f"# note: the job runs the program in '{top}', the folder its sweep ran it in (no "
            "--workdir), where its inputs (./app.sh, in/case-2.txt) are") in script
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    ran = _run(script, elsewhere)
    assert ran.returncode == 0 and "time: 0.01 s" in ran.stdout, ran.stderr
    # an input gone: the job says which and where before launching anything
    ran = _run(_script(_program_rec(levels, size=7), "slurm"), elsewhere)
    assert ran.returncode == 1 and (f"the program's input in/case-7.txt is missing in {top}"
                                    in ran.stderr), ran.stderr


def test_a_bundle_without_the_sweeps_folder_warns_of_the_relative_paths(swept_here):
    """s37 tester G3: a bundle from telemetry that did not record the sweep's folder (written
    before it was) cannot go there: a warning names the relative paths and the fix."""
    import dataclasses

    levels, _ = swept_here
    script = _script(_program_rec(dataclasses.replace(levels, swept_in=None)), "slurm")
    assert "\ncd " not in script
    assert ("# note: warning: the model does not record the folder its sweep ran app.sh in"
            in script and "reads ./app.sh, in/case-2.txt relative to the folder the job "
            "starts in: submit the script from the folder the sweep ran in, or add `cd "
            "THAT_FOLDER`" in script), script


def test_a_sweep_folder_not_here_warns_instead_of_entering_it(swept_here, tmp_path):
    """s37 reviewer R5: a model trained on another machine records that machine's folder; the
    job had stopped on it ("folder missing") where it ran in the submit folder before."""
    import dataclasses

    levels, _ = swept_here
    gone = str(tmp_path / "on-a-laptop")
    script = _script(_program_rec(dataclasses.replace(levels, swept_in=gone)), "slurm")
    assert "\ncd " not in script
    assert (f"# note: warning: the model's sweep ran app.sh in '{gone}', not a folder here, "
            "and the command reads ./app.sh, in/case-2.txt relative to the folder the job "
            "starts in") in script, script


@pytest.fixture(scope="module")
def swept_writing(tmp_path_factory):
    """(the levels of a real sweep of ``./app.sh in_{size}.txt out.txt``, which reads its
    first argument and writes its second, that folder)."""
    top = tmp_path_factory.mktemp("swept_writing")
    app = top / "app.sh"
    app.write_text('#!/bin/sh\ncat "$1" >/dev/null || exit 3\necho done > "$2"\n'
                   'echo "time: 0.01 s"\n')
    app.chmod(0o755)
    for size in (1, 2):
        (top / f"in_{size}.txt").write_text("ok\n")
    return _swept_app(top, "./app.sh in_{size}.txt out.txt"), top


def test_the_job_checks_the_new_sizes_input_not_what_the_sweep_wrote(swept_writing, tmp_path):
    """s38 tester A1: dgord's output out.ord, left by the sweep, was checked as an input (the
    job refused once it was gone) and the new size's input m2_300.grf only where it existed
    at recommend time. An argument whose measured fillings were there before the first launch
    is an input, checked filled for the new size; one the sweep wrote is not."""
    levels, top = swept_writing
    assert levels.swept_from is not None and (top / "out.txt").exists()
    script = _script(_program_rec(levels, size=7), "slurm")
    assert "for input in ./app.sh in_7.txt; do" in script, script
    (top / "out.txt").unlink()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    ran = _run(script, elsewhere)
    assert ran.returncode == 1 and (f"the program's input in_7.txt is missing in {top}"
                                    in ran.stderr), ran.stderr
    (top / "in_7.txt").write_text("ok\n")
    ran = _run(script, elsewhere)
    assert ran.returncode == 0 and "time: 0.01 s" in ran.stdout, ran.stderr


def test_a_bundle_without_the_first_launchs_time_judges_by_what_is_there(swept_writing):
    import dataclasses

    levels, top = swept_writing
    (top / "out.txt").write_text("done\n")
    script = _script(_program_rec(dataclasses.replace(levels, swept_from=None), size=2),
                     "slurm")
    assert "for input in ./app.sh in_2.txt out.txt; do" in script, script


def test_a_given_program_not_in_the_sweeps_folder_is_refused_before_the_script(swept_here):
    """s39 tester D3: `--program './nonexist {size}'` (or `./my app` unquoted) got a script
    entering the sweep's folder, exit 0, and the job failed there. The folder is this
    machine's: refused as sweep refuses it, nothing written."""
    levels, top = swept_here
    rec = _program_rec(levels)
    with pytest.raises(ConfigError, match=(r"^--program: program './nonexist' not found in "
                                           f"'{top}' \\(the folder the job runs it in\\)")):
        emit_script(rec, "slurm", "./nonexist in/case-{size}.txt")
    assert "\ncd " in emit_script(rec, "pbs", "./app.sh in/case-{size}.txt")


def test_a_sweep_folder_whose_name_holds_a_newline_is_entered_quoted(tmp_path_factory,
                                                                      tmp_path):
    """s39 tester D2: a program swept in `nl\\nfolder $x` got "not a folder here" although it
    was the current folder, and a script without its cd (run from elsewhere: ./app not
    found). The script enters it by bash's $'...' and runs from anywhere."""
    top = tmp_path_factory.mktemp("swept_nl") / "nl\nfolder $x"
    top.mkdir()
    app = top / "app.sh"
    app.write_text('#!/bin/sh\ncat "$1" >/dev/null || exit 3\necho "time: 0.01 s"\n')
    app.chmod(0o755)
    for size in (1, 2):
        (top / f"in-{size}.txt").write_text("ok\n")
    levels = _swept_app(top, "./app.sh in-{size}.txt")
    assert levels.swept_in == str(top)
    quoted = "$'" + str(top).replace("\n", "\\n") + "'"
    for scheduler in ("slurm", "pbs"):
        script = _script(_program_rec(levels), scheduler)
        assert f"\ncd {quoted}\n" in script, script
        assert "not a folder here" not in script
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    ran = _run(_script(_program_rec(levels), "slurm"), elsewhere)
    assert ran.returncode == 0 and "time: 0.01 s" in ran.stdout, ran.stderr


def test_the_pbs_note_reads_the_programs_mpi_in_the_sweeps_folder(swept_here, tmp_path,
                                                                   monkeypatch):
    """s46 tester J2: an srun sweep's ``./app.sh`` (here an MPICH program) was read in this
    shell's folder: from another, the PBS note said "not read here: ./app.sh not found"."""
    import dataclasses

    from hpcds1mpi.decide.measured_run import measured_run
    from tests.helpers import system_program

    levels, _ = swept_here
    top = tmp_path / "top"
    (top / "in").mkdir(parents=True)
    (top / "app.sh").symlink_to(system_program("NPmpich2"))
    (top / "in" / "case-2.txt").write_text("ok\n")
    srun = {"launcher": "srun", "command": "srun", "args": [], "mpi": "pmix", "flavour": "Srun"}
    levels = dataclasses.replace(levels, swept_in=str(top), launched_with=srun)
    monkeypatch.chdir(tmp_path)
    notes = measured_run(_program_rec(levels), "pbs", levels.command).notes
    said = [note for note in notes if "bare mpiexec" in note]
    assert len(said) == 1 and "so that mpiexec must be the MPICH family" in said[0], notes


def test_an_input_missing_now_is_named_missing_not_said_to_be_there(swept_here):
    """s48 tester Q7: at an unmeasured size the note said the job runs "where its inputs
    (aln4000.binary, start.nwk) are", though aln4000.binary was not there."""
    from hpcds1mpi.decide.measured_run import measured_run

    levels, top = swept_here
    notes = measured_run(_program_rec(levels, size=7), "slurm",
                         "./app.sh in/case-{size}.txt").notes
    said = next(note for note in notes if str(top) in note)
    assert said.startswith("warning: ") and "where its inputs" not in said, said
    assert ("its input in/case-7.txt is missing now (./app.sh is there): create it there "
            "before the job starts, or the job's own check") in said, said


class _Swept:
    """A stand-in model whose runs of ``app`` carry ``error``."""

    def __init__(self, error: str):
        self.error = error

    def training_frame(self):
        import pandas as pd

        return pd.DataFrame([dict(workload="app", size=2, status="ok", error=self.error)])


def test_a_sweep_that_met_a_runs_outputs_in_the_jobs_folder_is_warned_of(swept_here, tmp_path):
    """s48 tester Q1: ExaML's sweep measured in fresh folders, as ExaML refused the outputs a
    run had left; the job ran the same run ID in that folder and failed in 3 s, unwarned."""
    from hpcds1mpi.decide.measured_run import measured_run
    from hpcds1mpi.measure.repeat_folders import FRESH_RUN

    levels, top = swept_here
    notes = measured_run(_program_rec(levels), "slurm", "./app.sh in/case-{size}.txt",
                         _Swept(FRESH_RUN + str(top))).notes
    said = [note for note in notes if "earlier outputs" in note]
    # said as what the sweep met: they may be gone by now (s48 review RY5)
    assert said == [f"warning: its sweep met earlier outputs in {top}, which the program "
                    "refuses (so it was measured in fresh folders), and left its own there: if "
                    "they are still there when the job starts, the program stops at once; "
                    "remove them, or name the outputs per run"], notes
    for other in (_Swept(FRESH_RUN + str(tmp_path)), _Swept("")):  # another folder, or none
        assert not any("earlier outputs" in note for note in measured_run(
            _program_rec(levels), "slurm", "./app.sh in/case-{size}.txt", other).notes)
