"""``recommend --program`` against the command its pick's runs ran
(:mod:`hpcds1mpi.decide.given_program`): a placeholder's value put back, another program said,
other arguments said."""

from __future__ import annotations

import pytest

from hpcds1mpi.config import Configuration
from hpcds1mpi.decide.given_program import (given_program, measured_path,
                                            program_arguments_note)

PW = "pw.x -nk {ranks} -in si.in"
ONE_RANK = Configuration(nodes=1, ranks_per_node=1, threads=1, device="cpu", precision="fp64")


def test_a_given_value_where_the_measured_command_has_a_placeholder_is_the_picks():
    """s36 tester Q1: `recommend --program "pw.x -nk 2 -in si.in"` for the measured
    `pw.x -nk {ranks} -in si.in` at a 1-rank pick wrote `mpirun -n 1 pw.x -nk 2 -in si.in`
    in silence; the job failed ("invalid number of pools, out of range")."""
    program, note = given_program("pw.x -nk 2 -in si.in", PW, ONE_RANK, 50)
    assert program == "pw.x -nk '{ranks}' -in si.in"  # the script fills it: -nk 1
    assert note == ("--program gives '-nk 2' where the measured command "
                    "'pw.x -nk {ranks} -in si.in' has {ranks}, 1 at this pick: the script runs "
                    "'-nk 1', as the runs the prediction is for did")
    # a word of several placeholders; its value that is the pick's stays, and its size is
    # the user's, run as given (s46 tester J4); a token list
    words, note = given_program(["./app", "--in", "si-40-2.in", "-t", "1"],
                                "./app --in si-{size}-{ranks}.in -t {threads}", ONE_RANK, 50)
    assert words == ["./app", "--in", "si-40-{ranks}.in", "-t", "1"]
    assert "'--in si-40-2.in' where the measured command" in note
    assert "has {ranks}, 1 at this pick: the script runs '--in si-40-1.in'" in note


def test_a_given_size_is_run_as_written_as_the_verdict_judges_it():
    """s46 tester J4: `--program './probe2 500'` for the measured './probe2 {size}' asked at
    3000 wrote a script running `./probe2 3000` while the verdict said the job runs '500'
    (lowered to confirm). The size is the user's: the script runs it as written, the words
    the verdict judges (script_words)."""
    from hpcds1mpi.decide.given_program import script_words

    assert given_program("./probe2 500", "./probe2 {size}", ONE_RANK, 3000) == (
        "./probe2 500", "")
    for words, command in ((["./probe2", "500"], "./probe2 {size}"),
                           (["./app", "--in", "si-40-2.in", "-t", "3"],
                            "./app --in si-{size}-{ranks}.in -t {threads}"),
                           (["pw.x", "-nk", "2", "-in", "si.in"], PW)):
        program, _ = given_program(words, command, ONE_RANK, 3000)
        filled = [w.replace("{ranks}", "1").replace("{threads}", "1") for w in program]
        assert filled == script_words(words, command, ONE_RANK, 3000)


@pytest.mark.parametrize("program", [
    "pw.x -nk 1 -in si.in",  # the pick's own value
    "pw.x -nk {ranks} -in si.in",  # the placeholder itself
    "pw.x -in si.in",  # left out: the other-arguments note's
    PW,
])
def test_the_picks_value_or_no_value_changes_nothing(program):
    assert given_program(program, PW, ONE_RANK, 50) == (program, "")


def test_another_program_than_the_measured_one_is_said():
    """s36 tester Q2: `recommend --program "ph.x -in si.in"` for the pw.x model wrote pw.x's
    prediction, time limit and setup for ph.x in silence."""
    program, note = given_program("ph.x -in si.in", PW, ONE_RANK, 50)
    assert program == "ph.x -in si.in"  # run as asked: a wrapper may run pw.x
    assert note.startswith("--program runs ph.x, not pw.x, the program the model measured "
                           "(as 'pw.x -nk {ranks} -in si.in'): the prediction is pw.x's"), note
    assert "give --time-limit" in note
    # the measured program past a wrapper or an interpreter is the same program
    assert given_program("env OMP_NUM_THREADS=1 /opt/qe/bin/pw.x -nk 1 -in si.in", PW,
                         ONE_RANK, 50)[1] == ""
    assert given_program("python3 app.py 50", "/usr/bin/python3 ./app.py {size}",
                         ONE_RANK, 50)[1] == ""


def test_recommend_programs_other_arguments_are_said():
    """s32 tester U3: `recommend --program "meep res={size} T=2000 wg.ctl"` wrote a 1 min
    script in silence (the measured `meep res={size} wg.ctl` ran 808 ms, T=2000 41.8 s)."""
    measured = "meep res={size} wg.ctl"
    note = program_arguments_note("meep res={size} T=2000 wg.ctl", measured, False)
    assert note is not None and note.startswith(
        f"--program runs meep with other arguments than its measured command {measured!r} "
        "(adds 'T=2000'): the prediction is for the measured command's arguments"), note
    assert "give --time-limit" in note
    assert "time limit is yours" in program_arguments_note("meep res=18 T=2 wg.ctl",
                                                           measured, True)
    assert program_arguments_note("meep res={size} wg.ctl", measured, False) is None
    assert program_arguments_note("meep res=18 wg.ctl", measured, False) is None
    assert program_arguments_note("./other 18", measured, False) is None  # another program


def test_the_script_of_a_given_value_runs_the_picks_and_says_so():
    """s36 tester Q1 through the script: the launch line runs the pick's rank count as the
    pool count, and the note is among the script's (a program not installed here: its MPI
    goes unchecked)."""
    from hpcds1mpi.decide.recommend import recommend
    from hpcds1mpi.decide.recommendation import emit_script, script_program
    from tests.fake_bundle import FakeBundle, fake_places

    rec = recommend(FakeBundle(), "gemm", 1024, fake_places("cpu"), objective="time")
    rec.workload, rec.program_command = "qe", PW.replace("pw.x", "./pw-here.x")
    ranks = rec.picked.choice.config().ranks
    program, note = script_program(rec, f"./pw-here.x -nk {ranks + 1} -in si.in")
    script = emit_script(rec, "slurm", program, notes=[note])
    launched = [line for line in script.splitlines() if "pw-here.x" in line and line[0] != "#"]
    assert len(launched) == 1 and launched[0].endswith(f" ./pw-here.x -nk {ranks} -in si.in")
    assert f"# note: --program gives '-nk {ranks + 1}' where the measured command" in script


def test_a_relative_path_to_the_measured_program_is_written_as_the_measured_path(tmp_path,
                                                                                monkeypatch):
    """s39 tester A5: `--program ./run.sh` given from the wrapper's folder, for runs of
    /abs/run.sh in `--workdir runs/{size}-{ranks}`, wrote a script running ./run.sh in
    runs/175-1, where it is not: the job failed."""
    run = tmp_path / "run.sh"
    run.write_text("#!/bin/sh\nexec true\n")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "run.sh").write_text("#!/bin/sh\n")
    monkeypatch.chdir(tmp_path)
    program, note = given_program("./run.sh -v", f"{run} -v", ONE_RANK, 50)
    assert program == f"{run} -v"
    assert note == (f"--program's ./run.sh is the measured {run}: the script names it by that "
                    "path, since the job runs it in the folder its runs ran in, not here")
    # another file of the name, a path not there, a measured relative path: as given
    for given, measured in (("other/run.sh -v", f"{run} -v"), ("./gone.sh -v", f"{run} -v"),
                            ("./run.sh -v", "./run.sh -v")):
        assert given_program(given, measured, ONE_RANK, 50)[0] == given


@pytest.mark.parametrize("command", ['/abs/app "{size}', "   "])
def test_a_recorded_command_that_does_not_split_leaves_the_program_as_given(command):
    """s39 review: a recorded command with an unclosed quote (hand-made or older telemetry,
    the API's bundles) raised IndexError in measured_path."""
    assert given_program("./app 1", command, ONE_RANK, 50) == ("./app 1", "")
    assert measured_path(["./app", "1"], command) == (["./app", "1"], "")
    assert measured_path([], "/abs/app {size}") == ([], "")


def test_the_words_a_script_runs_have_the_picks_layout_values_and_the_given_size():
    """s45 tester A2: `--program "pw.x -nk 2 -in si.in"` at a 1-rank pick runs `-nk 1`, and
    is judged so; a size other than the asked one stays as given (another job)."""
    from hpcds1mpi.decide.given_program import script_words

    assert script_words(["pw.x", "-nk", "2", "-in", "si.in"], PW, ONE_RANK, 50) == [
        "pw.x", "-nk", "1", "-in", "si.in"]
    words = ["./app", "--in", "si-40-2.in", "-t", "3"]
    assert script_words(words, "./app --in si-{size}-{ranks}.in -t {threads}", ONE_RANK,
                        50) == ["./app", "--in", "si-40-1.in", "-t", "1"]
    assert script_words(["./jacobi", "512", "40"], "./jacobi {size} 40", ONE_RANK, 1024) == [
        "./jacobi", "512", "40"]
    other = ["ph.x", "-nk", "2", "-in", "si.in"]
    assert script_words(other, PW, ONE_RANK, 50) == other  # another program: as given
