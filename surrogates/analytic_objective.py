"""A *modelled* objective: a roofline / latency-bandwidth cost of the kernels' own work models.

The work of a run is not written down here: it is the kernel's analytic
:class:`~hpcds1mpi.kernels.base.WorkModel` (``kernels.get(workload).work(size, ranks)``), the
same model the sweep records in the telemetry (``work_flops`` ... ``mem_bytes_per_rank``) and
the features read. This module only turns that work into seconds and joules with nominal
machine rates. It is a test fixture and a labelled fallback for benchmarks without a bundle
(``source = "modelled"``); nothing it returns is measured.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from hpcds1mpi.errors import ModelError

from .objectives import finalise

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from hpcds1mpi.cluster import Partition

# Nominal per-core / per-GPU rates (fp64), and how precision scales them.
_CORE_FLOPS = 30e9
_NODE_MEM_BW = 200e9
_GPU_FLOPS = {"fp64": 7e12, "fp32": 14e12, "bf16": 100e12}
_CPU_FLOP_SCALE = {"fp64": 1.0, "fp32": 2.0, "bf16": 4.0}
#: Bytes of an element relative to fp64: the work models count bytes at 8 per element.
_ITEM_SCALE = {"fp64": 1.0, "fp32": 0.5, "bf16": 0.25}
_GPU_MEM_BW = 900e9
_PCIE_BW = 16e9
_NET_LATENCY = 2e-6
_NET_BW = 12.5e9
_SHM_LATENCY = 0.3e-6
_SHM_BW = 40e9
_LAUNCH_S = 0.05
#: Amdahl serial fraction of a rank's thread-parallel work (kernels declare no figure).
_SERIAL = 0.05


def _log2(x: float) -> float:
    return math.log2(max(x, 1.0))


class AnalyticObjective:
    """Modelled runtime and energy of each configuration from its kernel's work model.

    Per rank, with the kernel's work per rank at ``ranks = nodes x ranks_per_node`` (bytes
    scaled to the precision's element size): compute time = flops / (thread-parallel core rate,
    Amdahl) or the GPU's rate; memory time = bytes / (the node's bandwidth shared by its ranks,
    or the GPU's); runtime = max(compute, memory) + messages x latency + bytes sent / bandwidth
    (network across nodes, shared memory within one) + start-up growing with log2(ranks) + for
    GPU runs the host-to-device copy of the rank's working set. Energy = runtime x (nodes x
    (idle + the dynamic share of the cores in use) + GPUs in use x GPU power), with the
    partition's power figures.

    Infeasible: a precision or device the kernel does not declare, or a size/rank count its
    work model cannot decompose -> ``unsupported``; the working set does not fit the node's (or
    the GPU's) memory -> ``oom``.

    Args:
        partition: the partition (cores, memory, GPUs and power figures are read from it).
    """

    source = "modelled"

    def __init__(self, partition: "Partition") -> None:
        self.partition = partition
        self.power = partition.power_figures()

    @staticmethod
    def kernel(workload: str):
        """The registered kernel ``workload`` (ModelError for anything else)."""
        from hpcds1mpi import kernels
        from hpcds1mpi.errors import UnknownKernelError

        try:
            return kernels.get(str(workload))
        except UnknownKernelError:
            raise ModelError(f"the analytic objective has no workload {workload!r}: it models "
                             f"the registered kernels, {', '.join(kernels.names())}") from None

    def check_workload(self, workload: str) -> None:
        """Raise :class:`ModelError` for a workload that is not a registered kernel."""
        self.kernel(workload)

    def __call__(self, configs: "pd.DataFrame") -> "pd.DataFrame":
        import pandas as pd

        work: dict = {}  # (workload, size, ranks) -> WorkModel or None, once per call
        rows = [self._one(r, work) for r in configs.itertuples(index=False)]
        return finalise(pd.DataFrame(rows, index=configs.index))

    def _one(self, row: Any, cache: dict) -> dict:
        part, pw = self.partition, self.power
        kernel = self.kernel(row.workload)
        nodes, rpn, thr = int(row.nodes), int(row.ranks_per_node), int(row.threads)
        device, prec = str(row.device), str(row.precision)
        ranks = nodes * rpn
        if prec not in kernel.precisions or device not in kernel.devices:
            return {"feasible": False, "status": "unsupported"}
        key = (str(row.workload), int(row.size), ranks)
        if key not in cache:
            try:
                cache[key] = kernel.work(int(row.size), ranks)
            except Exception:  # noqa: BLE001 - a decomposition the kernel cannot do
                cache[key] = None
        w = cache[key]
        if w is None:
            return {"feasible": False, "status": "unsupported"}
        item = _ITEM_SCALE[prec]
        mem_per_rank = w.memory_bytes * item
        if mem_per_rank * rpn > 0.9 * part.memory_gb * 1e9:
            return {"feasible": False, "status": "oom"}
        if device == "gpu" and mem_per_rank > 0.9 * part.gpu_memory_gb * 1e9:
            return {"feasible": False, "status": "oom"}
        traffic = w.bytes_moved * item
        if device == "gpu":
            compute = w.flops / _GPU_FLOPS[prec]
            memory = traffic / _GPU_MEM_BW
            transfer = mem_per_rank / _PCIE_BW
        else:
            speedup = 1.0 / (_SERIAL + (1.0 - _SERIAL) / thr) if kernel.uses_threads else 1.0
            compute = w.flops / (_CORE_FLOPS * _CPU_FLOP_SCALE[prec] * speedup)
            memory = traffic / (_NODE_MEM_BW / rpn)
            transfer = 0.0
        sent = w.comm_bytes * item
        if nodes > 1:
            comm = w.messages * _NET_LATENCY * (1 + _log2(nodes)) + sent * rpn / _NET_BW
        else:
            comm = w.messages * _SHM_LATENCY + sent / _SHM_BW
        runtime = max(compute, memory) + comm + transfer + _LAUNCH_S * (1 + 0.2 * _log2(ranks))
        cores_used = min(rpn * thr, part.cores_per_node) if device == "cpu" else rpn
        node_w = pw["idle_watts_node"] + (pw["max_watts_node"] - pw["idle_watts_node"]) \
            * cores_used / part.cores_per_node
        gpu_w = pw["max_watts_gpu"] * rpn if device == "gpu" else 0.0
        idle_gpu_w = pw["idle_watts_gpu"] * (part.gpus_per_node - (rpn if device == "gpu" else 0))
        power = nodes * (node_w + gpu_w + idle_gpu_w)
        return {"runtime_s": runtime, "energy_j": runtime * power, "avg_power_w": power,
                "feasible": True, "status": "ok"}
