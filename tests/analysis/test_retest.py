"""analysis/retest: a pick judged on a second measurement of the same problems."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from hpcds1mpi.analysis.retest import main, overall, problem_rows


def _runs(size_runtimes: dict) -> pd.DataFrame:
    rows = []
    for size, runtimes in size_runtimes.items():
        for rpn, rt in runtimes.items():
            rows.append({"workload": "gemm", "size": size, "partition": "p", "nodes": 1,
                         "ranks_per_node": rpn, "threads": 1, "device": "cpu",
                         "precision": "fp64", "status": "ok", "runtime_s": rt})
    return pd.DataFrame(rows)


def test_a_best_that_moves_is_scored_on_the_other_measurement():
    first = _runs({100: {1: 1.0, 2: 1.2, 4: 2.0}, 200: {1: 1.0, 2: 1.5}})
    second = _runs({100: {1: 1.5, 2: 1.2, 4: 2.0}, 200: {1: 1.1, 2: 1.6}})
    rows = {r["size"]: r for r in problem_rows(first, second)}
    moved = rows[100]
    assert moved["best_first"].startswith("1/") and moved["best_second"].startswith("2/")
    assert moved["first_on_second"] == pytest.approx(1.2 / 1.5)
    assert moved["second_on_first"] == pytest.approx(1.0 / 1.2)
    stayed = rows[200]
    assert stayed["first_on_second"] == stayed["second_on_first"] == 1.0
    total = overall(list(rows.values()))
    assert total["same_best"] == 0.5
    assert total["ceiling_within_5pct"] == 0.5
    assert total["ceiling"] == pytest.approx((0.8 * (1 / 1.2)) ** 0.25)


def test_failed_runs_and_configurations_measured_once_are_left_out():
    first = _runs({100: {1: 1.0, 2: 1.2, 4: 0.1}})
    first.loc[first["ranks_per_node"] == 4, "status"] = "failed"
    second = _runs({100: {1: 1.0, 2: 1.3, 4: 0.1}, 300: {1: 1.0, 2: 2.0}})
    (row,) = problem_rows(first, second)
    assert row["size"] == 100 and row["configs"] == 2


DATA = Path(__file__).resolve().parents[2] / "data" / "reference_choice"


def test_the_committed_retest_files_give_the_ceiling_the_readme_quotes(capsys):
    """The two measurements of the same four problems (plans/reference_choice_300_retest.toml)."""
    assert main([str(DATA / "remeasure_300.h5"), str(DATA / "retest_300_quiet.h5")]) == 0
    out = capsys.readouterr().out
    assert "**Retest ceiling** over 4 problems: geometric mean 63.0 %" in out


def test_a_missing_file_is_one_line_and_exit_2(tmp_path, capsys):
    assert main([str(tmp_path / "nope.h5"), str(DATA / "retest_300.h5")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("retest: ")


def test_files_without_a_shared_problem_are_one_line_and_exit_2(capsys):
    # fft and nbody in one, mltrain and gemm in the other
    assert main([str(DATA / "repeats_check_10.h5"), str(DATA / "retest_300.h5")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "share no problem" in err[0]


def test_another_machine_is_another_problem():
    first = _runs({100: {1: 1.0, 2: 1.2}}).assign(machine_id="intel")
    second = _runs({100: {1: 1.5, 2: 1.2}}).assign(machine_id="amd")
    assert problem_rows(first, second) == []
    (row,) = problem_rows(first, second.assign(machine_id="intel"))
    assert row["size"] == 100 and row["workload"] == "gemm"  # the key without the machine
    # Tables that do not say which machine (older exports) are compared as before.
    assert len(problem_rows(first.drop(columns="machine_id"), second)) == 1


def test_files_of_two_machines_are_refused_in_one_line(capsys):
    # mltrain measured on the Intel VM (remeasure_300) and on the AMD VM (rounds_mltrain)
    assert main([str(DATA / "remeasure_300.h5"), str(DATA / "rounds_mltrain.h5")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "on the same machine" in err[0]


def test_first_rounds_below_one_is_refused(capsys):
    here = Path(__file__).resolve().parents[2] / "data" / "reference_choice"
    with pytest.raises(SystemExit) as exc:  # argparse's usage error, before any file is read
        main([str(here / "retest_300.h5"), str(here / "retest_300_quiet.h5"),
              "--first-rounds", "0"])
    assert exc.value.code == 2
    assert "--first-rounds" in capsys.readouterr().err
