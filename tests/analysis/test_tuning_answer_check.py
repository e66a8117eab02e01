"""analysis/tuning_answer_check.py: System 2's answer against its kept run on another sweep."""

from __future__ import annotations

import json

import pytest

from hpcds1mpi.analysis import tuning_answer_check as check


def _entry(workload, size, answer, kept):
    return {"workload": workload, "size": size,
            "s1_s2": {"answer": answer, "kept": kept},
            "s2_default": {"answer": answer, "kept": answer}}


def test_only_answers_that_are_not_the_kept_run_are_judged_on_the_other_sweep():
    report = {"per_problem": [
        # answer B, kept A: on the other sweep B is the best and A 20 % slower.
        _entry("io", 64, "B", "A"),
        # kept C, answer D: on the other sweep D is 50 % slower than C.
        _entry("io", 128, "D", "C"),
        _entry("io", 256, "E", "E"),  # the answer is the kept run: not judged
        _entry("io", 512, "F", "G"),  # the kept run was not measured there
    ]}
    other = {("io", 64): {"A": 1.2, "B": 1.0, "X": 1.1},
             ("io", 128): {"C": 1.0, "D": 1.5},
             ("io", 256): {"E": 1.0},
             ("io", 512): {"F": 1.0}}
    got = check.judge(report, other)["s1_s2"]
    assert got["notes"] == 2 and got["answer_faster"] == 1
    assert got["answer_within_5pct"] == 1 and got["kept_within_5pct"] == 1
    assert got["geomean_answer_over_kept"] == pytest.approx(((1 / 1.2) * 1.5) ** 0.5)
    assert [r[:2] for r in got["rows"]] == [("io", 64), ("io", 128)]
    assert check.judge(report, other)["s2_default"]["notes"] == 0


def test_a_file_that_is_not_a_tuning_report_is_one_line_and_exit_2(tmp_path, capsys):
    bad = tmp_path / "r.json"
    bad.write_text(json.dumps({"something": 1}))
    assert check.main([str(bad), str(tmp_path / "other.h5")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a benchmarks/tuning.py report" in err
    good = tmp_path / "g.json"
    good.write_text(json.dumps({"per_problem": [], "telemetry": []}))
    with pytest.raises(SystemExit) as exc:  # the other sweep is missing
        check.main([str(good), str(tmp_path / "missing.h5")])
    assert exc.value.code == 2
