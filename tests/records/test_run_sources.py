"""One workload name, one program: a table mixing a kernel's runs with a program's under one
name is found and named (tester S, s27 #1)."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pandas as pd

from hpcds1mpi.records.run_sources import (KERNEL, SOME_PROGRAM, mixed_programs,
                                           recorded_programs)
from tests.surrogates.test_bundle import make_runs


def _kinds(frame: pd.DataFrame, kind: str, command: str = "") -> pd.DataFrame:
    return frame.assign(kind=kind, command=command)


def _runs(workload: str, size: int) -> pd.DataFrame:
    """``make_runs``' rows of one workload at one size."""
    frame = make_runs(workloads=(workload,))
    return frame[frame["size"] == size]


def test_a_kernel_and_a_program_under_one_name_are_named():
    kernel = _kinds(make_runs(workloads=("stencil",)), "kernel")
    program = _kinds(_runs("stencil", 64), "external",
                     "mpiexec -n 1 hpcds1mpi run gemm --size 64").assign(
        run_id=lambda f: "p-" + f["run_id"])
    message = mixed_programs(pd.concat([kernel, program]), "t.h5", "fix it")
    assert message is not None
    assert "'stencil' from the kernel stencil and from a --command program" in message
    assert "run gemm --size 64" in message and "fix it" in message and "--label" in message


def test_one_programs_command_lines_with_other_options_pass():
    """Two sweeps of one program, one with launcher options (or a flag: GROMACS's -ntomp)
    added, are one program's command lines (session 26's rule), not two programs (s27
    review: "-bind-to core" had been refused as a second program)."""
    first = _kinds(_runs("app", 64), "external", "mpiexec -n 1 ./a 64")
    second = first.assign(command="mpiexec -n 1 -bind-to core ./a 64",
                          run_id=lambda f: "b-" + f["run_id"])
    assert mixed_programs(pd.concat([first, second]), "training data", "fix") is None


def test_one_program_at_many_sizes_kernels_alone_and_job_rows_pass():
    rows = []
    for size in (32, 64):
        rows.append(_kinds(_runs("app", size), "external",
                           f"mpiexec ./a {size}"))
    assert mixed_programs(pd.concat(rows), "t", "fix") is None
    assert mixed_programs(_kinds(make_runs(), "kernel"), "t", "fix") is None
    jobs = make_runs().drop(columns=["run_id", "machine_id"])
    assert mixed_programs(jobs, "t", "fix") is None


def test_the_same_name_on_two_machines_is_two_tables():
    kernel = _kinds(make_runs(workloads=("stencil",), machine="a"), "kernel")
    program = _kinds(make_runs(workloads=("stencil",), machine="b"), "external", "./x")
    assert mixed_programs(pd.concat([kernel, program]), "t", "fix") is None


def test_recorded_programs_reads_plans_earlier_plans_and_runs():
    command_plan = {"command": "./app {size}", "label": "app", "sizes": "64"}
    kernel_plan = {"sweep": {}, "kernel": [{"name": "stencil"}]}
    store = SimpleNamespace(
        attrs={"plan": json.dumps(kernel_plan), "earlier_plans": json.dumps(
            [json.dumps(command_plan)])},
        runs={("m", "1"): {"workload": "merged", "kind": "external"},
              ("m", "2"): {"workload": "gemm", "kind": "kernel"}})
    found = recorded_programs(store)
    assert found["app"] == {"./app {size}"}
    assert found["stencil"] == {KERNEL} and found["gemm"] == {KERNEL}
    assert found["merged"] == {SOME_PROGRAM}
