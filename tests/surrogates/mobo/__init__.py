"""MOBO tests: a small partition, a problem on it, and an objective whose GPU runs fail."""

from hpcds1mpi.cluster import Partition
from hpcds1mpi.surrogates import mobo
from hpcds1mpi.surrogates.analytic_objective import AnalyticObjective


PART = Partition(name="small", cores_per_node=4, memory_gb=64, max_nodes=8, gpus_per_node=1,
                 gpu_memory_gb=16)


def make_problem(space="full", objective=None, workload="stencil", size=256):
    cands = mobo.build_candidates(PART, workload, size, space)
    problem = mobo.Problem(cands, objective or AnalyticObjective(PART), ["runtime_s", "energy_j"])
    problem.fix_reference_point()
    return problem


class FailingObjective:
    """Wraps an objective: GPU runs fail, and report a runtime/energy of 1e-9 that would look
    best if it were used (the fault a naive loop would fall for)."""

    source = "modelled"

    def __init__(self, inner):
        self.inner = inner

    def __call__(self, configs):
        out = self.inner(configs).copy()
        gpu = (configs["device"] == "gpu").to_numpy()
        out.loc[gpu, ["runtime_s", "energy_j", "avg_power_w"]] = 1e-9
        out.loc[gpu, "feasible"] = False
        out.loc[gpu, "status"] = "oom"
        return out
