"""Where the analyses' results files go (s47 tester N8): ``--out-dir``, by default the current
folder, never the package's own ``analysis/results/``; a file already there is replaced only
with ``--force``, refused in one line before any work."""

from __future__ import annotations

import json

import pytest

from hpcds1mpi.analysis import h1_eval, h1_real_logs, h1_results, h2_real_logs, sampling_control

# Each script's arguments up to the results options, and the stem it writes. The inputs do not
# exist: a refusal comes before they are read.
SCRIPTS = [
    (h1_real_logs.main, ["missing.parquet", "--name", "m100"], "h1_real_logs_m100"),
    (h2_real_logs.main, ["marconi100", "missing.parquet"], "h2_real_logs_marconi100"),
    (h2_real_logs.main, ["eurora", "missing.csv", "--tag", "rf"], "h2_real_logs_eurora_rf"),
    (h1_eval.main, ["--telemetry", "missing.h5", "--name", "reference"], "h1_reference"),
    (sampling_control.main, ["--telemetry", "missing.h5", "--name", "dense"],
     "sampling_control_dense"),
]


@pytest.mark.parametrize("main, argv, stem", SCRIPTS)
@pytest.mark.parametrize("suffix", [".json", ".md"])
def test_a_results_file_in_the_current_folder_is_kept_without_force(main, argv, stem, suffix,
                                                                    tmp_path, monkeypatch,
                                                                    capsys):
    """The default folder is the current one (it was the package's analysis/results/, whose
    committed files a rerun replaced without a word); an existing file stays as it was."""
    monkeypatch.chdir(tmp_path)
    kept = tmp_path / f"{stem}{suffix}"
    kept.write_text("committed result\n")
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: {stem}{suffix} exists; pass --force to replace it, or choose "
                   "another --out-dir"]
    assert kept.read_text() == "committed result\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == [kept.name]


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
