"""A job whose input was edited after its program's runs read it
(:mod:`hpcds1mpi.decide.edited_inputs`): recommend and advise say so in one line, the verdict
is at most ``confirm``, recommend calls no layout "measured" at this size and advise keeps the
script's time limit (s48 tester O4: BAGEL's h16.json edited, still "measured (1 run at this
size)", 4.81 s, where the edited input ran in 1.37 s)."""

from __future__ import annotations

import os

import pytest

from hpcds1mpi.decide.advise import advise
from hpcds1mpi.decide.recommend import recommend
from hpcds1mpi.decide.recommendation import emit_script, format_table
from hpcds1mpi.measure.input_stamps import file_stamp_now
from hpcds1mpi.surrogates.measured_inputs import KEY
from tests.helpers import run_cli

MEASURED = "./jacobi in{size}.txt 40"
SCRIPT = """#!/bin/bash
#SBATCH --partition=cpu
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=4
#SBATCH --time=01:00:00
cd {folder}
srun ./jacobi {deck} 40 > out.log
"""
EDITED = "in1024.txt was edited at "


def places():
    from tests.fake_bundle import fake_places

    return fake_places("cpu")


@pytest.fixture
def swept(tmp_path):
    """(the analytic stand-in knowing ``myjac``, swept in ``tmp_path`` from in1024.txt, whose
    stamp its manifest keeps; that file's path)."""
    from hpcds1mpi.surrogates.levels import MeasuredLevels
    from tests.fake_bundle import WIDE_SIZES, FakeBundle

    (tmp_path / "jacobi").write_text("#!/bin/sh\n")
    (tmp_path / "jacobi").chmod(0o755)
    deck = tmp_path / "in1024.txt"
    deck.write_text("iterations 40\n")
    os.utime(deck, (1_000_000, 1_000_000))
    bundle = FakeBundle(workloads=("stencil", "myjac"), sizes=WIDE_SIZES)
    bundle._measured_levels = {"myjac": MeasuredLevels(
        "myjac", True, precisions=("fp64",), devices=("cpu",), threads=(1, 2),
        ranks_per_node=(1, 2, 4), nodes=(1, 2), command=MEASURED, swept_in=str(tmp_path))}
    bundle.manifest = {KEY: {"myjac": {"files": {str(deck): [file_stamp_now(str(deck))]},
                                       "until": 1_000_100.0}}}
    return bundle, deck


def _edit(deck, text: str = "iterations 4000\n", when: float = 2_000_000) -> None:
    deck.write_text(text)
    os.utime(deck, (when, when))


def _said(reasons) -> list[str]:
    return [r for r in reasons if r.startswith(EDITED)]


def test_recommend_of_an_edited_input_says_so_and_calls_nothing_measured(swept):
    bundle, deck = swept
    before = recommend(bundle, "myjac", 1024, places())
    assert not _said(before.verdict.reasons) and "measured (1 run at this size)" in \
        format_table(before)  # the fixture's pick ran at this size
    _edit(deck)
    rec = recommend(bundle, "myjac", 1024, places())
    said = _said(rec.verdict.reasons)
    assert len(said) == 1 and rec.verdict.verdict == "confirm"
    assert "(16 bytes, measured 14)" in said[0] and "the prediction is of that input" in said[0]
    assert rec.verdict.checks["command"] == "confirm"
    table = format_table(rec)
    assert "measured (" not in table and said[0] in table
    assert not rec.picked.choice.scores.cols["measured_runs"].any()
    assert before.picked.choice.scores.cols["measured_runs"].any()  # its copy, not changed
    assert f"# note: verdict confirm: {said[0]}" in emit_script(rec, "slurm", MEASURED)
    # the same size, another content: said too
    _edit(deck, "iterations 80\n", 2_000_001)
    assert "(the same size, another content)" in _said(
        recommend(bundle, "myjac", 1024, places()).verdict.reasons)[0]


@pytest.mark.parametrize("change", ["touched", "during the runs", "gone", "no stamps",
                                    "another size"])
def test_an_input_as_measured_or_never_stamped_says_nothing(swept, change):
    """The same content newer (touch, a copy back), a file the program rewrote during its
    runs, a file gone (the job's own check says so), a bundle trained before the stamps and
    a file of another size never stamped: nothing said, the runs still "measured"."""
    bundle, deck = swept
    size = 1024
    if change == "touched":
        os.utime(deck, (2_000_000, 2_000_000))
    elif change == "during the runs":
        _edit(deck, when=1_000_050)
    elif change == "gone":
        deck.unlink()
    elif change == "no stamps":
        _edit(deck)
        bundle.manifest = {}
    else:
        _edit(deck)
        size = 4096
    rec = recommend(bundle, "myjac", size, places())
    assert not _said(rec.verdict.reasons)
    assert rec.picked.choice.scores.cols["measured_runs"].any()


def test_a_given_program_is_judged_by_the_input_it_names(swept):
    bundle, deck = swept
    _edit(deck)
    other = deck.parent / "other.txt"
    other.write_text("iterations 40\n")
    assert not _said(recommend(bundle, "myjac", 1024, places(),
                               program="./jacobi other.txt 40").verdict.reasons)
    rec = recommend(bundle, "myjac", 1024, places(), program=["./jacobi", "in1024.txt", "40"])
    assert len(_said(rec.verdict.reasons)) == 1


def test_advise_of_a_script_reading_an_edited_input_keeps_its_time_limit(swept, tmp_path):
    bundle, deck = swept
    script = SCRIPT.format(folder=tmp_path, deck="in1024.txt")
    kept = advise(script, bundle, places(), workload="myjac", size=1024,
                  job_folder=str(tmp_path / "elsewhere"))
    assert not _said(kept.verdict["reasons"]) and kept.recommended.walltime_s < 3600
    _edit(deck)
    a = advise(script, bundle, places(), workload="myjac", size=1024,
               job_folder=str(tmp_path / "elsewhere"))  # the script's cd finds it
    said = _said(a.verdict["reasons"])
    assert len(said) == 1 and a.verdict["verdict"] == "confirm"
    assert a.recommended.walltime_s == 3600 and "#SBATCH --time=01:00:00\n" in a.rewritten
    assert a.recommended.walltime_basis == "kept from the script: its input is not the one " \
                                           "measured"
    # another deck, or a web request's text (no folder: no file read), says nothing of it
    for text, folder in ((SCRIPT.format(folder=tmp_path, deck="other.txt"), str(tmp_path)),
                         (script, None)):
        a = advise(text, bundle, places(), workload="myjac", size=1024, job_folder=folder)
        assert not _said(a.verdict["reasons"])


def test_a_sweeps_edited_input_is_said_by_the_model_trained_on_it(tmp_path):
    """The whole way: a sweep stamps in2.txt, train keeps the stamp, the input is edited, and
    recommend (text and script) and advise say so; the untouched in3.txt says nothing."""
    app = tmp_path / "app.sh"
    app.write_text('#!/bin/sh\nread n < "$1"\necho "time: 0.0$n s"\n')
    app.chmod(0o755)
    for size in (1, 2, 3, 4):
        (tmp_path / f"in{size}.txt").write_text(f"{size}\n")
    env = {"HPCDS1MPI_CACHE": str(tmp_path / "cache"),
           "HPCDS1MPI_HISTORY": str(tmp_path / "cache" / "failures.json")}
    res = run_cli(["sweep", "--command", "./app.sh in{size}.txt", "--label", "app",
                   "--sizes", "1,2,3,4", "--ranks-per-node", "1", "--threads", "1",
                   "--time-regex", r"time: ([0-9.]+) s", "--min-repeats", "1",
                   "--max-repeats", "1", "--min-time", "0", "--out", "t.h5",
                   "--no-progress"], timeout=180, cwd=tmp_path, env=env)
    assert res.returncode == 0, res.stderr
    res = run_cli(["train", "--telemetry", "t.h5", "--out", "model", "--members", "1",
                   "--member-trees", "5"], timeout=300, cwd=tmp_path, env=env)
    assert res.returncode == 0, res.stderr
    (tmp_path / "in2.txt").write_text("9\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    asked = ["recommend", "--model", str(tmp_path / "model"), "--workload", "app"]
    res = run_cli([*asked, "--size", "2", "--emit", "slurm", "-o", "job.sbatch"],
                  timeout=120, cwd=elsewhere, env=env)
    assert res.returncode == 0, res.stderr
    assert "in2.txt was edited at " in res.stdout and "measured (" not in res.stdout
    assert "# note: verdict confirm: in2.txt was edited at " in \
        (elsewhere / "job.sbatch").read_text()
    res = run_cli([*asked, "--size", "3"], timeout=120, cwd=elsewhere, env=env)
    assert res.returncode == 0 and "was edited" not in res.stdout, res.stdout
    assert "measured (1 run at this size)" in res.stdout
    (elsewhere / "job.sh").write_text(f"#!/bin/bash\n#SBATCH --ntasks=1\n#SBATCH --time=30\n"
                                      f"cd {tmp_path}\nsrun ./app.sh in2.txt\n")
    res = run_cli(["advise", "job.sh", "--model", str(tmp_path / "model")], timeout=120,
                  cwd=elsewhere, env=env)
    assert res.returncode == 0, res.stderr
    assert "in2.txt was edited at " in res.stdout and "verdict confirm" in res.stdout
