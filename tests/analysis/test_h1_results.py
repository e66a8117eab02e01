"""Where the analyses' results files go (s47 tester N8): ``--out-dir``, by default the current
folder, never the package's own ``analysis/results/``; a file already there is replaced only
with ``--force``, refused in one line before any work; the scripts whose files are named one
by one (``--json``, ``--markdown``, ``--out``) alike."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hpcds1mpi.analysis import (choice_noise, eval_system1, h1_eval, h1_real_logs, h1_results,
                                h2_real_logs, retest, sampling_control, system1_speed,
                                tuning_answer_check)

#: A real telemetry file (eval_system1 reads its telemetry before it claims its outputs).
TELEMETRY = str(Path(__file__).resolve().parents[2] / "data" / "reference_choice"
                / "remeasure_300.h5")

# Each script's arguments, the results file it would write (in the current folder: where the
# --out-dir scripts write by default) and the option its refusal names. The inputs do not
# exist (bar eval_system1's telemetry, read first): a refusal comes before they are read.
OUT_DIR = [
    (h1_real_logs.main, ["missing.parquet", "--name", "m100"], "h1_real_logs_m100"),
    (h2_real_logs.main, ["marconi100", "missing.parquet"], "h2_real_logs_marconi100"),
    (h2_real_logs.main, ["eurora", "missing.csv", "--tag", "rf"], "h2_real_logs_eurora_rf"),
    (h1_eval.main, ["--telemetry", "missing.h5", "--name", "reference"], "h1_reference"),
    (sampling_control.main, ["--telemetry", "missing.h5", "--name", "dense"],
     "sampling_control_dense"),
]
NAMED = [
    (choice_noise.main, ["missing.h5", "--json", "c.json"], "c.json", "--json / --markdown path"),
    (choice_noise.main, ["missing.h5", "--markdown", "c.md"], "c.md", "--json / --markdown path"),
    (retest.main, ["a.h5", "b.h5", "--markdown", "r.md"], "r.md", "--json / --markdown path"),
    (tuning_answer_check.main, ["missing.json", "b.h5", "--out", "t"], "t.md", "--out"),
    (system1_speed.main, ["--before", "a", "--after", "b", "--out", "s"], "s.json", "--out"),
    (eval_system1.main, ["--model", "m", "--telemetry", TELEMETRY, "--out", "e.json"], "e.md",
     "--out"),
]
CASES = [(main, argv, stem + suffix, "--out-dir") for main, argv, stem in OUT_DIR
         for suffix in (".json", ".md")] + NAMED


@pytest.mark.parametrize("main, argv, name, option", CASES)
def test_a_results_file_already_there_is_kept_without_force(main, argv, name, option, tmp_path,
                                                           monkeypatch, capsys):
    """The --out-dir default is the current folder (it was the package's analysis/results/,
    whose committed files a rerun replaced without a word); the named files were written over
    too. An existing file now stays as it was, and nothing else is written."""
    monkeypatch.chdir(tmp_path)
    kept = tmp_path / name
    kept.write_text("an earlier result\n")
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: {name} exists; pass --force to replace it, or choose another "
                   f"{option}"]
    assert kept.read_text() == "an earlier result\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]


def test_claim_results_lets_force_and_new_folders_through(tmp_path):
    stem = tmp_path / "h1_x"
    (tmp_path / "h1_x.json").write_text("{}")
    assert h1_results.claim_results(stem, force=True) == stem
    new = tmp_path / "new" / "deeper" / "h1_x"
    assert h1_results.claim_results(new, force=False) == new
    assert not (tmp_path / "new").exists()  # checked, not created: nothing is made on a refusal


def test_claim_results_refuses_a_file_where_the_folder_should_be(tmp_path, capsys):
    (tmp_path / "out").write_text("a file\n")
    with pytest.raises(SystemExit) as exc:
        h1_results.claim_results(tmp_path / "out" / "h1_x", force=True)
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "is a file, not a folder" in err[0]


def test_write_results_writes_both_files_under_the_names_it_prints(tmp_path, capsys):
    doc = {"findings": ["one"], "seconds": 1.0}
    h1_results.write_results(doc, tmp_path / "sub" / "h1_a.b", lambda d: "# md\n")
    assert json.loads((tmp_path / "sub" / "h1_a.b.json").read_text())["findings"] == ["one"]
    assert (tmp_path / "sub" / "h1_a.b.md").read_text() == "# md\n"
    assert capsys.readouterr().out.splitlines()[-1] == \
        f"wrote {tmp_path / 'sub' / 'h1_a.b'}.json and .md (1 s)"
