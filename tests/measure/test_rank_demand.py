"""A program that says it cannot run with the number of processes it was given."""

from __future__ import annotations

from pathlib import Path

import pytest

from hpcds1mpi.measure.rank_demand import rank_demand, refused_rank_count

#: Real program outputs (tests/data/program_outputs/README.md says how each was captured).
OUTPUTS = Path(__file__).parent.parent / "data" / "program_outputs"


def _result(stdout="", stderr="", code=0, ranks=2):
    return {"stdout": stdout, "stderr": stderr, "exit_code": code, "ranks": ranks,
            "timed_out": False}


def test_mplrs_at_2_ranks_exiting_0_is_failed_with_its_line():
    """Was (s43 tester G1): stored ok, then recommended at confidence 1.00."""
    result = _result((OUTPUTS / "mplrs-2-ranks.stdout").read_text(), ranks=2)
    assert refused_rank_count(result, "ok", "") == (
        "failed", "exit 0, but the program refused to run at 2 ranks: "
                  "mplrs requires at least 3 processes.")


def test_tree_puzzle_at_1_rank_has_its_halt_line_as_reason():
    result = _result((OUTPUTS / "tree-ppuzzle-1-rank.stdout").read_text(),
                     (OUTPUTS / "tree-ppuzzle-1-rank.stderr").read_text(), code=1, ranks=1)
    assert refused_rank_count(result, "failed", "exit code 1: something else") == (
        "failed", "exit code 1: the program refused to run at 1 rank: "
                  "Halt: TREE-PUZZLE needs at least 2 processes for a parallel run!!!")


@pytest.mark.parametrize("line, ranks", [
    ("mplrs requires at least 3 processes.", 2),
    ("Halt: TREE-PUZZLE needs at least 2 processes for a parallel run!!!", 1),
    ("The number of CPUs used in the MPI bootstrap analysis should be strictly greater than 1", 1),
    (">>> Need at least 4 processes for these tests <<<", 2),
    ("This program must be run with at least 4 processes", 2),
    ("This example requires 4 MPI tasks", 3),
    ("Error: number of processes must be a multiple of 4", 3),
    ("World size must be greater than 1 for ./a.out", 1),
    ("nprocs must be a power of 2", 3),
    ("Error: number of processes 3 is not a power of two", 3),
    ("too few processes", 1),
    ("invalid number of MPI ranks", 3),
    ("wrong number of processes !! aborting", 2),
    ("At least 2 MPI processes are required", 1),
    ("This application is meant to be run with 2 processes.", 1),
    ("Please run with 4 processes.", 3),
    ("Need an even number of processes", 3),
    ("Error: 3 processes given, but it requires at least 4 processes", 3),
])
def test_a_demand_for_another_process_count_is_read(line, ranks):
    assert rank_demand(f"starting\n{line}\n", "", ranks) == line


@pytest.mark.parametrize("line, ranks", [
    ("mplrs requires at least 3 processes.", 4),  # met by this run: not about it
    ("This example requires 4 MPI tasks", 4),
    ("Error: number of processes must be a multiple of 4", 8),
    ("Running on 4 processes", 4),  # counts printed, no demand
    ("Number of processes: 2", 2),
    ("MPI processes required: 2", 2),
    ("Loop time of 0.1 on 2 procs for 100 steps with 4000 atoms", 2),
    ("  1 by 1 by 2 MPI processor grid", 2),
    ("using 1 OpenMP thread(s) per MPI task", 2),
    ("CommWorldProcs=2", 2),
    ("WARNING: this should be run with at least 4 processes for good performance", 2),
    ("block size must be a multiple of 8", 3),
    ("not enough cpus are available to meet the request:", 2),  # Open MPI's, not the program's
])
def test_a_printed_count_or_advice_is_not_a_refusal(line, ranks):
    assert rank_demand(f"{line}\ndone\n", "", ranks) == ""


def test_mplrs_at_3_ranks_printing_its_process_count_stays_ok():
    result = _result((OUTPUTS / "mplrs-3-ranks.stdout").read_text(), ranks=3)
    assert refused_rank_count(result, "ok", "") == ("ok", "")


def test_a_demand_long_before_the_end_is_not_the_runs_refusal():
    stdout = "This code must be run with at least 8 processes\n" + "step\n" * 50 + "done\n"
    assert rank_demand(stdout, "", 2) == ""


def test_a_launcher_refusal_or_interruption_is_kept():
    result = _result("mplrs requires at least 3 processes.\n")
    for status in ("unsupported", "interrupted"):
        assert refused_rank_count(result, status, "srun ...") == (status, "srun ...")


@pytest.mark.parametrize("stdout, stderr", [
    ("elk-ground-state-srun.stdout", None), ("garli-fixed-seed-2ranks.stdout", None),
    ("petsc-options-left.stdout", None),
    ("openfoam-under-hydra.stdout", "openfoam-under-hydra.stderr"),
])
def test_real_outputs_that_refuse_nothing_are_left_alone(stdout, stderr):
    out = (OUTPUTS / stdout).read_text()
    err = (OUTPUTS / stderr).read_text() if stderr else ""
    for ranks in (1, 2, 4):
        assert rank_demand(out, err, ranks) == ""


def test_a_sweep_records_a_program_that_refused_its_rank_count_failed(tmp_path):
    """Was (s43 tester G1): exit 0 and its one line, stored ok."""
    from hpcds1mpi.records import telemetry
    from hpcds1mpi.cluster import Partition
    from hpcds1mpi.measure import external, external_plan

    program = tmp_path / "needs3.sh"
    program.write_text("#!/bin/sh\necho 'needs3 requires at least 3 processes.'\nexit 0\n")
    program.chmod(0o755)
    plan = external_plan.build_external_plan(f"{program} {{size}}", "needs3", sizes="1",
                                             min_repeats=1, max_repeats=1, min_time=0)
    summary = external.run_external(plan, str(tmp_path / "n.h5"), Partition("p", 2, 4.0),
                                    progress=False, say=lambda _: None, launcher="mpiexec")
    runs = telemetry.read_runs(tmp_path / "n.h5")
    assert summary["statuses"] == {"failed": 1}, runs[["status", "error"]]
    assert list(runs["error"]) == ["exit 0, but the program refused to run at 1 rank: "
                                   "needs3 requires at least 3 processes."]


@pytest.mark.parametrize("line, ranks", [
    # s43 tester K1: a rule the run's count meets, read in full
    ("nprocs must be even (got 4)", 4),
    ("nprocs must be even (got 2)", 2),
    ("number of ranks must be a power of two: 4 is fine", 4),
    ("check: number of processes must be equal to 4 -- passed", 4),
    ("number of processes must be between 1 and 64", 4),
    ("requires 2 or more processes", 4),
    ("requires 2 or more processes", 2),
    ("at least 2 processes are required", 4),
    ("requires 1 process per node", 2),  # per node / per GPU: not the run's count
    ("needs 1 process per GPU", 2),
    ("I/O needs at most 2 procs; using 2 of 4 for I/O", 4),
    ("the rule of this code: number of processes must be frobnicated", 3),  # unread: left alone
    # s43 tester K2: the program says it goes on
    ("The multigrid preconditioner requires exactly 4 MPI tasks per level; skipping it, "
     "using Jacobi.", 2),
    ("the result needs 2 processors to verify; verification skipped", 1),
    ("Run complete. Number of processes must be a power of 2 for the FFT path; using direct "
     "path.", 3),
    ("Summary: ran on 2 processes; the solver needs 4 processes per node ideally", 2),
    ("no errors, not enough MPI ranks were idle", 2),
    ("this step requires at least 2 processes to go fast", 1),
])
def test_a_rule_the_run_meets_or_goes_on_from_is_not_a_refusal_even_as_its_last_line(line, ranks):
    assert rank_demand(f"starting\n{line}\n", "", ranks) == ""


@pytest.mark.parametrize("line, ranks", [
    ("nprocs must be even (got 3)", 3),
    ("number of processes must be between 2 and 64", 1),
    ("requires 2 or more processes", 1),
    ("at least 2 processes are required", 1),
    ("This program must be run with at most 8 processes", 16),
    ("Need an odd number of processes", 4),
])
def test_a_rule_the_run_does_not_meet_is_a_refusal(line, ranks):
    assert rank_demand(f"starting\n{line}\n", "", ranks) == line


def test_a_demand_followed_by_more_work_is_not_where_the_run_quit():
    """s43 tester K2: "... verification skipped" then "PASSED" had failed a good run."""
    assert rank_demand("the result needs 2 processors to verify\nPASSED\n", "", 1) == ""
    assert rank_demand("mplrs requires at least 3 processes.\nstep 1\nstep 2\n", "", 2) == ""
    # the same refusal from each rank, then MPI's abort trailer: it quit there
    out = "needs at least 4 processes\nneeds at least 4 processes\nAborting.\n---\n"
    assert rank_demand(out, "", 2) == "needs at least 4 processes"
