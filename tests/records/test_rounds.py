"""records/rounds: a configuration measured in several rounds becomes one row."""

from __future__ import annotations

import pandas as pd
import pytest

from hpcds1mpi.records.rounds import collapse_rounds, first_rounds


def _row(rpn, seed, runtime, status="ok", noise=0.1, repeats=5):
    return {"machine_id": "m", "workload": "gemm", "size": 512, "partition": "p", "nodes": 1,
            "ranks_per_node": rpn, "threads": 1, "device": "cpu", "precision": "fp64",
            "seed": seed, "status": status, "runtime_s": runtime, "energy_j": 10 * runtime,
            "noise": noise, "repeats": repeats}


def test_rounds_become_the_median_with_their_spread_as_noise():
    frame = pd.DataFrame([_row(1, 0, 1.0), _row(2, 0, 2.0), _row(1, 1, 1.4), _row(2, 1, 2.1),
                          _row(1, 2, 1.2), _row(2, 2, 1.9)])
    out = collapse_rounds(frame)
    assert len(out) == 2 and list(out.columns) == list(frame.columns)
    one = out[out["ranks_per_node"] == 1].iloc[0]
    assert one["runtime_s"] == pytest.approx(1.2)
    assert one["energy_j"] == pytest.approx(12.0)
    assert one["noise"] == pytest.approx(0.4 / 1.2)  # between rounds, above the within 0.1
    assert one["repeats"] == 15
    assert out["runtime_s"].dtype == float and out["repeats"].dtype == frame["repeats"].dtype


def test_a_failure_in_any_round_is_kept_and_single_rows_pass_through():
    frame = pd.DataFrame([_row(1, 0, 1.0), _row(1, 1, float("nan"), status="crashed"),
                          _row(4, 0, 3.0)])
    out = collapse_rounds(frame)
    assert len(out) == 2
    assert out.loc[out["ranks_per_node"] == 1, "status"].item() == "crashed"
    assert out.loc[out["ranks_per_node"] == 4, "runtime_s"].item() == 3.0


def test_a_timed_out_round_beside_ok_rounds_folds_to_their_median_and_is_noted():
    """ok, ok, timeout: the configuration ran longer than the sweep's --timeout once, which is
    no failure: its row is the median of the ok rounds, its error names the timeout; a
    configuration that only timed out stays a timeout, and a real failure still wins."""
    limit = "no exit within the 2 s timeout; killed"
    frame = pd.DataFrame([_row(1, 0, 1.0), _row(1, 1, 1.4), _row(1, 2, 2.0, status="timeout"),
                          _row(2, 0, 2.0, status="timeout"), _row(2, 1, 2.0, status="timeout"),
                          _row(4, 0, 1.0), _row(4, 1, 2.0, status="timeout"),
                          _row(4, 2, float("nan"), status="oom")]).assign(error="")
    frame.loc[frame["status"] == "timeout", "error"] = limit
    frame.loc[frame["status"] == "oom", "error"] = "out of memory"
    out = collapse_rounds(frame).set_index("ranks_per_node")
    assert out.loc[1, "status"] == "ok" and out.loc[1, "runtime_s"] == pytest.approx(1.2)
    assert out.loc[1, "repeats"] == 10  # the timed-out round measured no runtime
    assert out.loc[1, "error"] == (f"1 of 3 rounds timed out ({limit}): the runtime is the "
                                   "median of the 2 ok rounds")
    assert out.loc[2, "status"] == "timeout" and out.loc[2, "error"] == limit
    assert out.loc[4, "status"] == "oom"


def test_an_interrupted_round_says_nothing_and_two_sweeps_stay_apart():
    frame = pd.DataFrame([_row(1, 0, 1.0), _row(1, 1, 1.4), _row(1, 2, float("nan"),
                                                                status="interrupted")])
    out = collapse_rounds(frame)
    assert out["status"].item() == "ok" and out["runtime_s"].item() == pytest.approx(1.2)
    assert out["repeats"].item() == 10  # the interrupted round measured nothing
    other = pd.DataFrame([_row(1, 0, 1.0), _row(1, 0, 3.0)]).assign(sweep_id=["a", "b"])
    assert len(collapse_rounds(other)) == 2  # one measurement per file: not folded


def test_a_sweep_without_rounds_is_unchanged():
    frame = pd.DataFrame([_row(1, 0, 1.0), _row(2, 0, 2.0)])
    out = collapse_rounds(frame)
    pd.testing.assert_frame_equal(out, frame)


def test_first_rounds_keeps_each_sweep_s_earliest_rounds():
    """Two sweeps with their own first seeds: --first-rounds 2 keeps seeds 5, 6 of one and
    100, 101 of the other (a race round, seed 7 or 102, is left out)."""
    runs = pd.DataFrame({"sweep_id": ["a"] * 3 + ["b"] * 3, "seed": [5, 6, 7, 100, 101, 102]})
    kept = first_rounds(runs, 2)
    assert kept["seed"].tolist() == [5, 6, 100, 101]
    assert first_rounds(runs, 3).equals(runs)


def test_measured_outcomes_leave_the_race_out_before_taking_medians():
    """On a committed sweep with race rounds: the first 3 rounds are cut before the medians
    (the raced configurations' medians differ from those over every round)."""
    from pathlib import Path

    from hpcds1mpi.records.rounds import measured_outcomes
    from hpcds1mpi.records.telemetry import read_runs

    path = Path(__file__).resolve().parents[2] / "data" / "reference_choice" / "race_a.h5"
    runs = read_runs(path)
    cut = measured_outcomes([path], 3)
    assert cut.equals(collapse_rounds(first_rounds(runs, 3)))
    every = measured_outcomes([path])
    assert every.equals(collapse_rounds(runs)) and len(every) == len(cut)
    assert not cut["runtime_s"].equals(every["runtime_s"])


def test_pooled_sweeps_of_one_machine_fold_into_the_median_of_all_their_rounds():
    """The same configuration measured by two sweeps (two seeds) becomes one row when pooled,
    its median over both sweeps' rounds; another machine's sweep stays apart."""
    from hpcds1mpi.records.rounds import pool_sweeps

    frame = pd.DataFrame([_row(1, 100, 1.0), _row(1, 101, 1.2), _row(1, 200, 3.0),
                          _row(1, 201, 1.4), _row(1, 0, 9.0)])
    frame = frame.assign(sweep_id=["a", "a", "b", "b", "c"],
                         machine_id=["m", "m", "m", "m", "other"])
    assert len(collapse_rounds(frame)) == 3  # not pooled: one row per sweep
    out = collapse_rounds(pool_sweeps(frame))
    assert len(out) == 2
    mine = out[out["machine_id"] == "m"].iloc[0]
    assert mine["runtime_s"] == pytest.approx(1.3) and mine["repeats"] == 20
    assert mine["noise"] == pytest.approx(2.0 / 1.3)  # the spread across both sweeps
    assert out.loc[out["machine_id"] == "other", "runtime_s"].item() == 9.0


def test_round_options_refuse_zero_and_say_what_they_did():
    import argparse

    from hpcds1mpi.records import rounds

    parser = argparse.ArgumentParser()
    rounds.add_arguments(parser)
    for bad in ("0", "-1", "two"):
        with pytest.raises(SystemExit) as exc:
            parser.parse_args(["--first-rounds", bad])
        assert exc.value.code == 2
    args = parser.parse_args(["--first-rounds", "3", "--pool-sweeps"])
    assert rounds.describe(args) == " (each sweep's first 3 rounds; sweeps of one machine pooled)"
    assert rounds.describe(parser.parse_args([])) == ""
    lone = argparse.ArgumentParser()
    rounds.add_arguments(lone, pool=False)
    with pytest.raises(SystemExit):
        lone.parse_args(["--pool-sweeps"])


def test_measured_outcomes_pool_two_committed_sweeps_of_the_same_plan():
    """mltrain measured twice (seeds 100 and 200): pooled, each configuration is one row whose
    runtime is the median of both sweeps' rounds."""
    from pathlib import Path

    from hpcds1mpi.records.rounds import measured_outcomes
    from hpcds1mpi.records.telemetry import read_runs

    data = Path(__file__).resolve().parents[2] / "data" / "reference_choice"
    paths = [data / "race_mltrain_a.h5", data / "race_mltrain_b.h5"]
    apart, pooled = measured_outcomes(paths), measured_outcomes(paths, pool=True)
    one = measured_outcomes(paths[:1])
    assert len(apart) == 2 * len(one) and len(pooled) == len(one)
    runs = pd.concat([read_runs(p) for p in paths], ignore_index=True)
    key = ["size", "ranks_per_node", "threads", "precision"]
    ok = pooled[pooled["status"] == "ok"].iloc[0]
    same = runs.set_index(key).loc[tuple(ok[k] for k in key)]
    assert set(same["sweep_id"]) == set(runs["sweep_id"])
    assert ok["runtime_s"] == pytest.approx(same["runtime_s"].median())


def test_a_missing_or_foreign_telemetry_file_is_one_line_and_status_2(tmp_path, capsys):
    from hpcds1mpi.records.rounds import measured_outcomes, read_or_exit

    foreign = tmp_path / "notes.h5"
    foreign.write_text("not hdf5")
    for path, said in ((tmp_path / "none.h5", "no such telemetry file"),
                       (foreign, "not an HDF5 file")):
        with pytest.raises(SystemExit) as exc:
            read_or_exit("eval", measured_outcomes, [path], None, True)
        err = capsys.readouterr().err
        assert exc.value.code == 2 and err.count("\n") == 1
        assert err.startswith(f"eval: {path}: {said}") and "hpcds1mpi sweep" in err
