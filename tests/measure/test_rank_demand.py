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
