"""The modelled objective: the kernels' own work models at nominal rates, infeasible where the
kernel cannot run a configuration."""

import math

import pandas as pd
import pytest

from hpcds1mpi import kernels
from hpcds1mpi.errors import ModelError
from hpcds1mpi.kernels.base import WorkModel
from hpcds1mpi.surrogates.analytic_objective import AnalyticObjective
from tests.surrogates.mobo import PART


def config(workload="gemm", size=512, nodes=1, ranks_per_node=2, threads=1, device="cpu",
           precision="fp64"):
    return pd.DataFrame([dict(workload=workload, size=size, nodes=nodes,
                              ranks_per_node=ranks_per_node, threads=threads, device=device,
                              precision=precision)])


def test_runtime_is_the_kernels_work_model_at_nominal_rates(monkeypatch):
    """The work comes from kernels.get(name).work(size, ranks), not from a table of its own:
    a changed work model changes the objective, by the documented formula."""
    seen = []

    def work(self, size, ranks):
        seen.append((size, ranks))
        return WorkModel(flops=6e10, bytes_moved=1e12, messages=10.0, comm_bytes=4e8,
                         memory_bytes=1e6)

    monkeypatch.setattr(type(kernels.get("gemm")), "work", work)
    out = AnalyticObjective(PART)(config(nodes=1, ranks_per_node=2))
    assert seen == [(512, 2)]
    compute, memory = 6e10 / 30e9, 1e12 / (200e9 / 2)  # memory-bound
    comm = 10 * 0.3e-6 + 4e8 / 40e9
    expected = max(compute, memory) + comm + 0.05 * (1 + 0.2 * math.log2(2))
    assert out.loc[0, "runtime_s"] == pytest.approx(expected)
    assert out.loc[0, "status"] == "ok" and out.loc[0, "energy_j"] > 0
    # fp32 halves the bytes the fp64-counted work model moves, doubles the core rate
    fp32 = AnalyticObjective(PART)(config(precision="fp32"))
    assert fp32.loc[0, "runtime_s"] == pytest.approx(
        max(compute / 2, memory / 2) + 10 * 0.3e-6 + 2e8 / 40e9 + 0.05 * 1.2)


def test_what_the_kernel_cannot_run_is_infeasible(monkeypatch):
    objective = AnalyticObjective(PART)
    # stencil declares no bf16, mltrain no GPU: unsupported, as the runner would report
    assert objective(config("stencil", 64, precision="bf16")).loc[0, "status"] == "unsupported"
    assert objective(config("mltrain", 512, device="gpu", ranks_per_node=1)).loc[0, "status"] \
        == "unsupported"
    out = objective(config("gemm", 10 ** 7))  # 10^7 x 10^7 matrices do not fit 64 GB
    assert out.loc[0, "status"] == "oom" and not out.loc[0, "feasible"]
    assert math.isnan(out.loc[0, "runtime_s"])

    def undecomposable(self, size, ranks):
        raise ValueError("size not divisible")

    monkeypatch.setattr(type(kernels.get("fft")), "work", undecomposable)
    assert objective(config("fft", 64)).loc[0, "status"] == "unsupported"


def test_a_workload_without_a_kernel_is_refused():
    with pytest.raises(ModelError, match="no workload 'my_app'"):
        AnalyticObjective(PART).check_workload("my_app")
    with pytest.raises(ModelError, match="workload"):
        AnalyticObjective(PART)(config("my_app"))
