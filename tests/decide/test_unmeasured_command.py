"""A job whose command is not the one its workload measured
(:mod:`hpcds1mpi.decide.unmeasured_command`): at most ``confirm``, said why, in recommend's
verdict and script, the service's and the API's answers, and advise's, whose rewrite keeps
the script's time limit (s40 tester B3, B5, B10, B11)."""

from __future__ import annotations

import os
import shutil

import pytest

from hpcds1mpi.decide.advise import advise
from hpcds1mpi.decide.guard import Verdict
from hpcds1mpi.decide.recommend import recommend
from hpcds1mpi.decide.recommendation import emit_script
from hpcds1mpi.decide.unmeasured_command import (CHECK, command_difference, confirm_unmeasured,
                                                 judge_given_program)

MEASURED = "./jacobi {size} 40"
SCRIPT = """#!/bin/bash
#SBATCH --partition=cpu
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=4
#SBATCH --time=01:00:00
srun {line}
"""


@pytest.fixture
def program_bundle():
    """The analytic stand-in, knowing ``myjac`` by its measured command line."""
    from hpcds1mpi.surrogates.levels import MeasuredLevels
    from tests.fake_bundle import WIDE_SIZES, FakeBundle

    bundle = FakeBundle(workloads=("stencil", "myjac"), sizes=WIDE_SIZES)
    bundle._measured_levels = {"myjac": MeasuredLevels(
        "myjac", True, precisions=("fp64",), devices=("cpu",), threads=(1, 2),
        ranks_per_node=(1, 2, 4), nodes=(1, 2), command=MEASURED)}
    return bundle


def places():
    from tests.fake_bundle import fake_places

    return fake_places("cpu")


@pytest.mark.parametrize("words, said", [
    ("./fall {size} 40", "it runs fall, not jacobi"),  # another program under the label
    ("./jacobi {size} 40 extra-deck.in", "it runs jacobi with other arguments (adds "
                                         "'extra-deck.in')"),  # another input deck
    ("./jacobi 1024 80", "it runs jacobi with other arguments ('80' where it has '40')"),
    ("./jacobi 1024 40", ""),  # a placeholder's value is any value where the job's is unknown
    ("./jacobi {size} 40", ""),
    ("env OMP_NUM_THREADS=1 ./jacobi 7 40", ""),  # past a wrapper
])
def test_how_a_command_differs_from_the_measured_one(words, said):
    assert command_difference(words.split(), MEASURED) == said


@pytest.mark.parametrize("words, said", [
    ("./jacobi 8000 40", ""),
    ("./jacobi {size} 40", ""),
    ("./jacobi 16000000 40", "it runs jacobi with values other than this job's ('16000000' "
                             "where it has '8000'; the job's {size} 8000)"),
    ("./jacobi 8001 80", "it runs jacobi with other arguments ('80' where it has '40')"),
])
def test_a_value_where_the_measured_command_has_a_placeholder_is_the_jobs(words, said):
    """s40 reviewer F5: `--size 8000 --program 'grow 16000000'` counted as the measured
    `grow {size}`, verdict auto, for a job 2000x the size predicted."""
    assert command_difference(words.split(), MEASURED, values={"size": 8000, "ranks": 2}) == said
    assert command_difference(["./pw.x", "-nk", "2"], "./pw.x -nk {ranks}",
                              values={"ranks": 4}) == (
        "it runs pw.x with values other than this job's ('-nk 2' where it has '-nk 4'; the "
        "job's {ranks} 4)")


def test_another_file_of_the_programs_name_differs_and_the_same_file_does_not(tmp_path):
    """s40 tester B10: `other/grow` (a copy of `fall`) was taken for the measured `src/grow`,
    its name being the same."""
    (tmp_path / "src").mkdir()
    (tmp_path / "other").mkdir()
    measured = tmp_path / "src" / "grow"
    measured.write_text("#!/bin/sh\n")
    shutil.copy(measured, tmp_path / "other" / "grow")
    command = f"{measured} {{size}}"
    assert command_difference([str(tmp_path / "other" / "grow"), "8000"], command) == (
        f"it runs {tmp_path / 'other' / 'grow'}, another file than the measured {measured}")
    assert command_difference(["src/grow", "8000"], command, cwd=str(tmp_path)) == ""
    os.symlink(measured, tmp_path / "other" / "grow2")
    os.replace(tmp_path / "other" / "grow2", tmp_path / "other" / "grow")  # a link to it
    assert command_difference([str(tmp_path / "other" / "grow"), "8000"], command) == ""
    assert command_difference(["grow", "8000"], command) == ""  # a bare word: the job's PATH


def test_a_link_of_another_name_to_the_measured_program_is_the_measured_program(tmp_path):
    """s40 reviewer F8: `growlink {size}`, a symbolic link to the measured `grow`, read
    "it runs growlink, not grow"; a copy of it under another name is still another program."""
    measured = tmp_path / "grow"
    measured.write_text("#!/bin/sh\n")
    os.symlink(measured, tmp_path / "growlink")
    shutil.copy(measured, tmp_path / "growcopy")
    command = f"{measured} {{size}}"
    assert command_difference([str(tmp_path / "growlink"), "8000"], command) == ""
    assert command_difference(["./growlink", "8000", "-v"], command, cwd=str(tmp_path)) == (
        "it runs grow with other arguments (adds '-v')")
    assert command_difference([str(tmp_path / "growcopy"), "8000"], command) == (
        "it runs growcopy, not grow")


@pytest.mark.parametrize("words, said", [
    (["sh", "-c", "./jacobi 8000 40"], ""),  # s40 reviewer F8: "it runs jacobi 8000 40"
    (["env", "X=1", "bash", "-ec", "./jacobi {size} 40 > out.txt 2>&1"], ""),
    (["./jacobi", "{size}", "40", ">", "out.txt"], ""),  # an output redirection: no argument
    (["./jacobi", "{size}", "40", "2>err.txt", "|", "tee", "log"], ""),
    (["sh", "-c", "./jacobi 8000 40 < deck.in"], "it runs jacobi with other arguments "
                                                 "(adds '< deck.in')"),  # its input: kept
    (["sh", "-c", "./fall 8000 40"], "it runs fall, not jacobi"),
    (["sh", "run.sh", "8000"], "it runs run.sh, not jacobi"),  # a script file: as given
    # s41 tester B3: an option's value is no program ("it runs pipefail, not jacobi")
    (["sh", "-o", "pipefail", "-c", "./jacobi 8000 40"], ""),
    (["bash", "--rcfile", "rc", "-O", "extglob", "+o", "posix", "-ec", "./jacobi 8 40"], ""),
    (["sh", "-o", "pipefail", "-c", "./fall 8000 40"], "it runs fall, not jacobi"),
    (["sh", "-c", "./jacobi 8000 40>log"], "it runs jacobi with other arguments (leaves out "
                                           "'40')"),  # bash: 40> is file descriptor 40
])
def test_a_command_is_read_as_a_shell_runs_it(words, said):
    assert command_difference(words, MEASURED) == said


def test_the_verdict_is_at_most_confirm_with_the_reason_once():
    verdict = Verdict("auto", [], {})
    confirm_unmeasured(verdict, "why")
    confirm_unmeasured(verdict, "why")
    assert (verdict.verdict, verdict.reasons, verdict.checks) == ("confirm", ["why"],
                                                                  {CHECK: "confirm"})
    escalated = {"verdict": "escalate", "reasons": [], "checks": {}}
    confirm_unmeasured(escalated, "why")
    assert escalated["verdict"] == "escalate" and escalated["reasons"] == ["why"]


#: The verdict of the job asked without a program (the fixture's own: its uncalibrated
#: confidence, since session 40 a probability, may hold it below auto).
BASE = None


@pytest.mark.parametrize("program, verdict", [
    (None, BASE), (MEASURED, BASE), ("./jacobi 1024 40", BASE),
    ("./jacobi 512 40", "confirm"),  # another size than the asked 1024 (s40 reviewer F5)
    ("./jacobi {size} 40 extra-deck.in", "confirm"), ("./fall {size}", "confirm")])
def test_recommend_of_another_command_is_not_auto_and_its_script_says_why(
        program_bundle, program, verdict):
    """s40 tester B3: `recommend --program "fall {size}"` of the grow model answered
    "measured", confidence 0.83, verdict auto; the mismatch only a note under --emit, and
    the script's comment said "verdict auto" (B11: the script never says why)."""
    rec = recommend(program_bundle, "myjac", 1024, places(), program=program)
    base = recommend(program_bundle, "myjac", 1024, places()).verdict.verdict
    verdict = verdict or base
    assert rec.verdict.verdict == verdict
    reasons = [r for r in rec.verdict.reasons if r.startswith("the job's command is not")]
    assert len(reasons) == (program not in (None, MEASURED, "./jacobi 1024 40"))
    script = emit_script(rec, "slurm", program or MEASURED)
    assert f"verdict {verdict}" in script
    if reasons:
        assert f"# note: verdict confirm: {reasons[0]}" in script
        assert f"measured with ({MEASURED!r})" in reasons[0]


def test_a_value_the_picks_placeholder_fills_is_no_other_value(program_bundle):
    """s45 tester A2: `--program "pw.x -nk 2 -in si.in"` for the measured `-nk {ranks}`, at a
    1-rank pick, wrote a script running `-nk 1` (as measured) with verdict confirm, "the job
    runs other values"; the same from `-nk 1` got auto. The verdict judges what the script
    runs; a size other than the asked one is still another job."""
    from dataclasses import replace

    levels = program_bundle._measured_levels["myjac"]
    program_bundle._measured_levels = {"myjac": replace(levels, command="./jacobi {size} "
                                                        "-nk {ranks}")}
    base = recommend(program_bundle, "myjac", 1024, places())
    ranks = base.picked.choice.config().ranks
    for given in (ranks, ranks + 1):
        rec = recommend(program_bundle, "myjac", 1024, places(),
                        program=f"./jacobi 1024 -nk {given}")
        assert rec.verdict.verdict == base.verdict.verdict and not [
            r for r in rec.verdict.reasons if r.startswith("the job's command is not")]
    rec = recommend(program_bundle, "myjac", 1024, places(),
                    program=f"./jacobi 512 -nk {ranks + 1}")
    assert rec.verdict.verdict == "confirm" and "'512' where it has '1024'" in " ".join(
        rec.verdict.reasons)


def test_the_script_runs_the_given_size_its_verdict_judges(program_bundle):
    """s46 tester J4: `--program './probe2 500'` (measured './probe2 {size}') at size 3000
    wrote `srun ... ./probe2 3000` while its verdict said the job runs '500', confirm. The
    script, the notes and the verdict now agree: it runs 500 as written, which the verdict
    calls another job (s40 reviewer F5)."""
    from hpcds1mpi.decide.recommendation import script_program

    rec = recommend(program_bundle, "myjac", 1024, places(), program="./jacobi 512 40")
    assert rec.verdict.verdict == "confirm" and "'512' where it has '1024'" in " ".join(
        rec.verdict.reasons)
    program, note = script_program(rec, "./jacobi 512 40")
    script = emit_script(rec, "slurm", program, notes=[note] if note else [])
    launched = [line for line in script.splitlines() if "jacobi" in line and line[0] != "#"]
    assert len(launched) == 1 and launched[0].endswith(" ./jacobi 512 40"), launched
    assert "the script runs '1024'" not in script


def test_a_given_program_is_judged_once_and_never_without_a_pick(program_bundle):
    rec = recommend(program_bundle, "myjac", 1024, places(), program="./fall {size}")
    assert judge_given_program(rec, "./fall {size}") != ""
    said = [r for r in rec.verdict.reasons if r.startswith("the job's command is not")]
    assert len(said) == 1  # not twice (the service judges its answer again)
    kernel = recommend(program_bundle, "stencil", 128, places(), program="./fall {size}")
    assert not kernel.program_command and judge_given_program(kernel, "./fall 1") == ""


@pytest.mark.parametrize("line, verdict, time", [
    ("./jacobi 1024 40", BASE, "00:01:00"),  # the measured command: cut to its prediction
    ("./jacobi 1024 40 --iterations 1000", "confirm", "01:00:00"),  # another deck: kept
    ("./jacobi 512 40", "confirm", "01:00:00"),  # not the asked size (s40 reviewer F5)
    ("./fall 1024 40", "confirm", "01:00:00"),
    ("./jacobi 1024 40 ; ./fall 99999999", "confirm", "01:00:00"),  # s41 tester B1
    ("./jacobi 1024 40 && ./fall 9", "confirm", "01:00:00"),
    ("./jacobi 1024 40 2>&1 | tee log", BASE, "00:01:00")])  # output handling: no more
def test_advise_of_another_command_keeps_the_scripts_time_limit(program_bundle, line, verdict,
                                                                time):
    """s40 tester B5: `advise --rewrite` of `grow 8000 --iterations 1000` cut the 10 min limit
    to 1 min from the measured deck's prediction, verdict auto 0.83."""
    a = advise(SCRIPT.format(line=line), program_bundle, places(), workload="myjac", size=1024)
    measured = verdict is None
    verdict = verdict or recommend(program_bundle, "myjac", 1024, places()).verdict.verdict
    assert a.verdict["verdict"] == verdict
    assert f"#SBATCH --time={time}\n" in a.rewritten
    if not measured:
        assert any(r.startswith("the job's command is not the one myjac was measured with")
                   for r in a.verdict["reasons"])
        assert a.recommended.walltime_s == 3600
        assert "another command than the measured one" in a.recommended.walltime_basis


def test_the_service_and_the_api_answer_the_same_verdict(program_bundle, tmp_path):
    """s40 tester B5: `POST /v1/recommend` with another program answered auto, 0.83."""
    from hpcds1mpi.api_answers import Recommendation as Answer
    from hpcds1mpi.serve.schemas import RecommendRequest
    from hpcds1mpi.serve.service import Service

    service = Service(None, None, tmp_path)
    rec = recommend(program_bundle, "myjac", 1024, places())
    req = RecommendRequest(workload="myjac", size=1024, program="./fall {size}")
    data = service._respond(req, rec)
    assert data["verdict"]["verdict"] == "confirm"
    assert data["verdict"]["reasons"][-1].startswith("the job's command is not the one myjac")
    rec = recommend(program_bundle, "myjac", 1024, places())
    answer = Answer("myjac", 1024, "time", None, None, False, rec.verdict.verdict,
                    list(rec.verdict.reasons), [], [], [], {}, "modelled", raw=rec)
    script = answer.script("slurm", ["./fall", "{size}"])
    assert "# note: verdict confirm: the job's command" in script and "verdict confirm" in script


def test_the_apis_script_of_another_program_leaves_the_recommendation_as_it_was(
        program_bundle):
    """s40 reviewer F1: one `script(program=<fall>)` made the Recommendation's verdict
    `confirm` for good: later scripts of the measured command said "it runs fall"."""
    from hpcds1mpi.api_answers import Recommendation as Answer

    rec = recommend(program_bundle, "myjac", 1024, places())
    answer = Answer("myjac", 1024, "time", None, None, False, rec.verdict.verdict,
                    list(rec.verdict.reasons), [], [], [], {}, "modelled", raw=rec)
    assert "verdict confirm" in answer.script("slurm", "./fall {size}")
    base, reasons = rec.verdict.verdict, list(rec.verdict.reasons)
    for program in (None, MEASURED):
        script = answer.script("slurm", program)
        assert f"verdict {base}" in script and "the job's command is not" not in script
    assert (answer.verdict, answer.reasons) == (base, reasons)
    assert (rec.verdict.verdict, rec.verdict.reasons, CHECK in rec.verdict.checks) == (
        base, reasons, False)


@pytest.mark.parametrize("program, said", [
    ("./fall {size} 'x", "cannot be parsed"), ("'./fall {size}", "cannot be parsed"),
    ("   ", "the program command is empty"), ([" "], "the program command is empty")])
def test_a_program_that_cannot_be_split_or_is_blank_is_refused_in_one_line(
        program_bundle, tmp_path, program, said):
    """s41 tester B6: `--program "fall {size} 'x"` and `"   "` were taken for the measured
    command (rc 0, no command check); the service answered 200 where it refuses "" (422)."""
    from hpcds1mpi.errors import ConfigError
    from hpcds1mpi.serve.schemas import RecommendRequest
    from hpcds1mpi.serve.service import Service

    with pytest.raises(ConfigError, match=said) as refused:
        recommend(program_bundle, "myjac", 1024, places(), program=program)
    assert "\n" not in str(refused.value)
    if isinstance(program, str):  # the service's 422 (app.py: a ConfigError)
        rec = recommend(program_bundle, "myjac", 1024, places())
        req = RecommendRequest(workload="myjac", size=1024, program=program)
        with pytest.raises(ConfigError, match=said):
            Service(None, None, tmp_path)._respond(req, rec)


def test_a_command_too_long_to_compare_is_not_the_measured_one():
    """s41 tester B5: past 400 words `other_arguments` says nothing ("cannot compare"),
    which was read as "no difference": `grow {size} x x ...` (400 x) was the measured
    command."""
    from hpcds1mpi.decide.advise_launch import MAX_WORDS

    said = command_difference(["./jacobi", "8000", "40", *["x"] * MAX_WORDS], MEASURED)
    assert said == (f"it runs jacobi with a command line of over {MAX_WORDS} words, too long "
                    "to compare with the measured one")
    assert command_difference(["./jacobi", "8000", "40", *["x"] * 300], MEASURED).startswith(
        "it runs jacobi with other arguments (adds 'x x x")


@pytest.mark.parametrize("words, said", [
    ("./fall jacobi {size} 40", "it runs fall, not jacobi"),  # its argument names it
    ("./fall ./jacobi {size} 40", "it runs fall, not jacobi"),
    ("python3 plot.py jacobi {size} 40", "it runs plot.py, not jacobi"),
    ("exec ./fall jacobi {size} 40", "it runs fall, not jacobi"),
    ("mpiexec -n 2 ./fall ./jacobi {size} 40", "it runs fall, not jacobi"),
    # known wrappers, launchers and the shell's own words are stepped over
    ("A=1 exec -a x env B=2 timeout 60 ./jacobi {size} 40", ""),
    ("srun --mpi=pmi2 -n 2 numactl -C 0 ./jacobi {size} 40", ""),
    ("mpiexec -n 2 sh -c 'exec ./jacobi {size} 40'", ""),
])
def test_only_known_wrappers_come_before_the_program(words, said):
    """s41 tester B2: any word of the measured program's name made the words before it a
    "wrapper": `fall grow {size}` (fall given grow as an argument) was the measured `grow`."""
    import shlex

    assert command_difference(shlex.split(words), MEASURED) == said


@pytest.mark.parametrize("words, said", [
    ("./jacobi {size} 40 ; ./fall 99999999", "it runs more than jacobi ('; ./fall 99999999' "
                                            "after it), all in one run time"),
    ("./jacobi {size} 40 && ./fall 9", "it runs more than jacobi ('&& ./fall 9' after it), "
                                       "all in one run time"),
    ("./jacobi {size} 40 | ./fall 9", "it runs more than jacobi ('| ./fall 9' after it), all "
                                      "in one run time"),
    ("./jacobi {size} 40 | tee log ; sleep 600", "it runs more than jacobi ('; sleep 600' "
                                                 "after it), all in one run time"),
    ("./jacobi {size} 40 &", "it runs more than jacobi ('&' after it), all in one run time"),
    ("./jacobi {size} 40 2>&1 | tee log", ""),  # output handling and set-up: no more
    ("./jacobi {size} 40 ; echo done", ""),
    ("./jacobi {size} 40 ;", ""),
])
def test_a_list_or_pipeline_running_more_is_not_the_measured_command(words, said):
    """s41 tester B1: everything after `;`, `&&` or `|` was dropped, so `grow {size} ; fall
    99999999` was the measured `grow {size}` (advise --rewrite then cut the time limit)."""
    import shlex

    assert command_difference(shlex.split(words), MEASURED) == said
    listed = "./jacobi {size} 40 ; ./fall 99999999"  # unless the measured line was that list
    assert command_difference(shlex.split(listed), listed) == ""


@pytest.mark.parametrize("program, said", [
    ("./jacobi {size}>log 40", ""),  # s41 tester B4: the word and an output redirection
    ("./jacobi {size} 40>log", "it runs jacobi with other arguments (leaves out '40')"),
    # digits glued to `>` are its file descriptor: the program is not given 40
    ("./jacobi {size} 40 extra>log", "it runs jacobi with other arguments (adds 'extra')"),
    ("./jacobi {size} 40;./fall 9", "it runs more than jacobi ('; ./fall 9' after it), all "
                                    "in one run time"),
])
def test_a_program_line_splits_as_sh_splits_it(program, said):
    from hpcds1mpi.decide.unmeasured_command import given_words

    assert command_difference(given_words(program), MEASURED) == said


def test_the_service_compares_a_programs_words_and_opens_no_file(tmp_path, monkeypatch):
    """s41 tester B7: `/v1/recommend` stat'ed and resolved the links of the paths a request
    names (on the server, a relative one from the server's folder): its answer told a client
    which files exist there, against the README's "no endpoint opens a path named in a
    request"."""
    from hpcds1mpi.serve.schemas import RecommendRequest
    from hpcds1mpi.serve.service import Service
    from hpcds1mpi.surrogates.levels import MeasuredLevels
    from tests.fake_bundle import WIDE_SIZES, FakeBundle

    (tmp_path / "src").mkdir()
    (tmp_path / "other").mkdir()
    measured = tmp_path / "src" / "jacobi"
    measured.write_text("#!/bin/sh\n")
    shutil.copy(measured, tmp_path / "other" / "jacobi")  # another file of its name
    bundle = FakeBundle(workloads=("stencil", "myjac"), sizes=WIDE_SIZES)
    bundle._measured_levels = {"myjac": MeasuredLevels(
        "myjac", True, precisions=("fp64",), devices=("cpu",), threads=(1, 2),
        ranks_per_node=(1, 2, 4), nodes=(1, 2), command=f"{measured} {{size}} 40")}
    other = f"{tmp_path / 'other' / 'jacobi'} {{size}} 40"
    assert "another file" in judge_given_program(  # the CLI and the API look: another file
        recommend(bundle, "myjac", 1024, places()), other)

    def guarded(real):
        def look(path, *args, **kwargs):
            assert "jacobi" not in str(path), f"a file the request names was looked at: {path}"
            return real(path, *args, **kwargs)
        return look

    answers = []
    for program in (other, "/nonexistent/jacobi {size} 40", "./jacobi {size} 80"):
        rec = recommend(bundle, "myjac", 1024, places())
        req = RecommendRequest(workload="myjac", size=1024, program=program)
        with monkeypatch.context() as m:
            for name in ("isfile", "realpath", "exists", "samefile", "islink"):
                m.setattr(os.path, name, guarded(getattr(os.path, name)))
            m.setattr(os, "stat", guarded(os.stat))
            data = Service(None, None, tmp_path)._respond(req, rec)
        answers.append([r for r in data["verdict"]["reasons"] if "command is not" in r])
    assert answers[0] == answers[1] == []  # by its words, either is the measured program
    assert answers[2] and answers[2][0].count("compared by its words only: no file it names "
                                              "is looked at") == 1


@pytest.mark.parametrize("body", [
    "run_sim() { srun ./jacobi 96 40; }\nrun_sim\n",  # the function's closing brace
    "srun ./jacobi 96 40 &\nPID=$!\nwhile kill -0 $PID; do sleep 60; done\n",  # background
    "mpirun -np 2 ./jacobi 96 40 &\nwait\n",
])
def test_a_launch_in_a_one_line_function_or_the_background_runs_the_measured_command(body):
    """s43: `; }` closing a one-line function, and the `&` of a launch the script waits for,
    had been "more than jacobi" after it, so the limit was kept."""
    from hpcds1mpi.decide.unmeasured_command import judge_launch
    from hpcds1mpi.launch.script_reading import read_script

    script = read_script(f"#!/bin/bash\n#SBATCH -N 1\n#SBATCH --time=00:10:00\n{body}")
    assert judge_launch(script.launch, MEASURED, "relax", None) == ""
    more = read_script(f"#!/bin/bash\n#SBATCH -N 1\n{body.replace(' 40', ' 40 & ./fall 9')}")
    assert "it runs more than jacobi" in judge_launch(more.launch, MEASURED, "relax", None)


def test_advise_of_a_program_given_another_script_matches_no_workload():
    """s45 tester E3: ``pvbatch sph.py`` was advised by the runs of ``pvbatch wav.py {size}``
    at their confidence, with a rewrite; train calls the two lines two programs."""
    from hpcds1mpi.surrogates.levels import MeasuredLevels
    from tests.fake_bundle import WIDE_SIZES, FakeBundle

    bundle = FakeBundle(workloads=("stencil", "pvbatch"), sizes=WIDE_SIZES)
    bundle._measured_levels = {"pvbatch": MeasuredLevels(
        "pvbatch", True, precisions=("fp64",), devices=("cpu",), threads=(1, 2),
        ranks_per_node=(1, 2, 4), nodes=(1, 2), command="pvbatch wav.py {size}")}
    other = advise(SCRIPT.format(line="pvbatch sph.py 60"), bundle, places())
    assert other.workload is None and other.verdict["verdict"] == "escalate"
    assert other.rewritten is None and other.confidence is None
    assert other.verdict["reasons"][0].startswith(
        "the program 'pvbatch sph.py' matches no workload the model was trained on")
    assert any("another computation" in note for note in other.notes)
    assert advise(SCRIPT.format(line="pvbatch wav.py 60"), bundle, places()).workload == \
        "pvbatch"
