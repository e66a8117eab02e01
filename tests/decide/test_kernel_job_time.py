"""A kernel job's time limit counts what its ``hpcds1mpi run`` does: the repeats, the inputs,
warm-up and reference check as its sweep's launches took them, and start-up (s47 tester N3)."""

from __future__ import annotations

from types import SimpleNamespace

import pandas as pd
import pytest

from hpcds1mpi.decide.kernel_job_time import (LEAST_OTHER_RUNS, KernelRuns, kernel_runs,
                                              run_repeats, script_kernel_runs)
from hpcds1mpi.decide.launch_time_limit import one_launch_limit
from hpcds1mpi.launch.script_reading import read_script
from tests.fake_bundle import FakeBundle, fake_places, isolate_user_files

DECK = "stencil+sweeps.1500"


@pytest.fixture(autouse=True)
def isolated_cache(tmp_path, monkeypatch):
    isolate_user_files(monkeypatch, tmp_path)


def deck_rows() -> pd.DataFrame:
    """The tester's sweep of the deck (1 repeat each: 2.86 s of 36.0 s, 7.50 s of 63.1 s), a
    tiny run whose launch is start-up (not counted), a failed one and another workload."""
    row = dict(workload=DECK, kind="kernel", status="ok")
    return pd.DataFrame([
        {**row, "runtime_s": 2.862, "measured_s": 2.862, "elapsed_s": 35.98},
        {**row, "runtime_s": 7.497, "measured_s": 7.497, "elapsed_s": 63.11},
        {**row, "runtime_s": 1e-4, "measured_s": 2e-4, "elapsed_s": 5.0},
        {**row, "status": "failed", "runtime_s": 0.2, "measured_s": 0.2, "elapsed_s": 600.0},
        {**row, "workload": "gemm", "runtime_s": 0.2, "measured_s": 0.2, "elapsed_s": 90.0}])


def test_the_repeats_are_the_scripts_or_the_run_commands_default():
    from hpcds1mpi.commands.run import command

    default = next(p.default for p in command.params if p.name == "repeats")
    assert run_repeats() == default == 3  # one home: the command's own default
    assert run_repeats(["--size", "128", "--repeats", "10"]) == 10
    assert run_repeats(["--repeats=5", "--repeats", "7"]) == 7  # the last given, as click
    assert run_repeats(["--repeats", "$N"]) == default


def test_the_rest_of_the_launch_is_what_the_sweep_launches_took():
    bundle = SimpleNamespace(training_frame=deck_rows)
    runs = kernel_runs(bundle, DECK)
    assert runs.measured and runs.repeats == 3
    assert runs.other_runs == pytest.approx((63.11 - 7.497) / 7.497)  # 7.42: its longest run
    # a 0.2-s run's 90-s launch is start-up, not runs: it had made 449 runs (s47 review RX10)
    assert kernel_runs(bundle, "gemm") == KernelRuns(3, LEAST_OTHER_RUNS, False)
    # no rows (a stand-in), or none long enough: a warm-up and the check
    assert kernel_runs(FakeBundle(), DECK) == KernelRuns(3, LEAST_OTHER_RUNS, False)
    tiny = SimpleNamespace(training_frame=lambda: deck_rows().iloc[2:3])
    assert not kernel_runs(tiny, DECK).measured


def test_a_kernel_jobs_limit_counts_its_run_not_one_run():
    """Was: 1.5 x 7.55 s -> 1 min, and the job (4 runs of 7.5 s, a 48 s reference check) was
    killed at its limit; advise --rewrite had cut its 10 min to that."""
    runs = kernel_runs(SimpleNamespace(training_frame=deck_rows), DECK)
    limit, basis = one_launch_limit(7.55, kernel=runs)
    assert limit == 180  # 1.5 x ((3 + 7.42) x 7.55 s + 30 s) = 163 s -> 3 min
    assert limit >= 1.5 * (4 * 7.5 + 48)
    assert basis == ("1.5 x ((3 repeats + 7.42 runs for its inputs, warm-up and reference "
                     "check, as its sweep's launches took them) x the predicted upper runtime "
                     "+ 30 s start-up), whole minutes, at least 1 min")
    assert one_launch_limit(7.55)[0] == 60  # a program's launch: one run, as before
    least = one_launch_limit(10.0, kernel=KernelRuns(3))  # 1.5 x (5 x 10 s + 30 s)
    assert least == (120, "1.5 x ((3 repeats + 2 runs, a warm-up and the reference check) x "
                          "the predicted upper runtime + 30 s start-up), whole minutes, at "
                          "least 1 min")


def test_advise_counts_the_scripts_own_repeats_and_only_for_hpcds1mpi_run():
    runs = KernelRuns(3, 11.6, True)
    script = read_script("#SBATCH -N 1\nsrun hpcds1mpi run stencil --size 128 "
                         "--option sweeps=1500 --repeats 10\n")
    assert script_kernel_runs(runs, script.launch) == KernelRuns(10, 11.6, True)
    other = read_script("#SBATCH -N 1\nsrun ./app 128\n")
    assert script_kernel_runs(runs, other.launch) is None
    assert script_kernel_runs(None, script.launch) is None


def test_recommends_kernel_script_states_the_counted_limit():
    from hpcds1mpi.decide.recommend import recommend
    from hpcds1mpi.decide.recommendation import emit_script

    rec = recommend(FakeBundle(), "gemm", 1024, fake_places("cpu"))
    assert rec.kernel_runs == KernelRuns(3)
    script = emit_script(rec, "slurm", None)
    assert "(3 repeats + 2 runs, a warm-up and the reference check) x the predicted upper " \
           "runtime + 30 s start-up" in script
    own = emit_script(rec, "slurm", "./mygemm {size}")  # a --program: one run, as before
    assert "1.5 x the predicted upper runtime, whole minutes" in own


def test_a_recommend_that_writes_no_script_reads_no_rows():
    """The other runs are read when a limit needs them: a plain recommend had imported pandas
    and pyarrow for them on a cold start (issue 19; tests/decide/test_cold_imports.py)."""
    read = []

    def rows():
        read.append(1)
        return deck_rows()

    runs = kernel_runs(SimpleNamespace(training_frame=rows), DECK)
    assert read == [] and runs.repeats == 3
    assert runs.seconds(1.0) == pytest.approx((3 + (63.11 - 7.497) / 7.497) * 1.0 + 30)
    assert runs.seconds(2.0) and read == [1]  # read once


def test_the_runs_are_read_by_the_bundles_one_reader_older_bundles_alike(tmp_path):
    """The rows are the bundle's training columns (``bundle_cache.training_columns``, its
    ``training_frame.npz``), no second reader of the parquet rows (s47 read-back); a bundle
    whose frame file predates the launch columns, or has none, reads them from its rows: the
    same runs, so the same limits."""
    from hpcds1mpi.surrogates.bundle import Bundle
    from hpcds1mpi.surrogates.bundle_files import (LAUNCH_COLUMNS, TRAINING_DATA,
                                                   TRAINING_FRAME, write_training_frame)

    def saved_runs():
        return kernel_runs(Bundle(None, {}, None, path=tmp_path), DECK).resolved()

    want = kernel_runs(SimpleNamespace(training_frame=deck_rows), DECK).resolved()
    assert want.measured and want.other_runs == pytest.approx((63.11 - 7.497) / 7.497)
    rows = deck_rows()
    write_training_frame(tmp_path, rows)
    (tmp_path / TRAINING_DATA).write_bytes(b"not parquet")  # the frame file alone is read
    assert saved_runs() == want
    rows.to_parquet(tmp_path / TRAINING_DATA)
    write_training_frame(tmp_path, rows.drop(columns=list(LAUNCH_COLUMNS)))  # an older bundle
    assert saved_runs() == want
    (tmp_path / TRAINING_FRAME).unlink()  # older still: no frame file
    assert saved_runs() == want
    (tmp_path / TRAINING_DATA).write_bytes(b"not parquet")  # unreadable: the least, as before
    assert saved_runs() == KernelRuns(3, LEAST_OTHER_RUNS, False)
