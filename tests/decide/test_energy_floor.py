"""The least energy a job can take: its nodes' idle draw, GPUs included."""

from __future__ import annotations

import numpy as np

from hpcds1mpi.cluster import Partition
from hpcds1mpi.decide.energy_floor import floor_energy, idle_watts


def test_a_nodes_idle_draw_counts_its_gpus():
    """A GPU node's four idle GPUs were left out of the floor: 100 W, not 100 + 4 x 50 W."""
    gpu = Partition("g", cores_per_node=8, memory_gb=64.0, max_nodes=4, gpus_per_node=4,
                    gpu_memory_gb=80.0, idle_watts_node=100.0, max_watts_node=400.0,
                    idle_watts_gpu=50.0, max_watts_gpu=300.0)
    cpu = Partition("c", cores_per_node=8, memory_gb=64.0, max_nodes=4, idle_watts_node=100.0,
                    max_watts_node=400.0)
    assert idle_watts(gpu) == 300.0 and idle_watts(cpu) == 100.0
    cols = {"partition": np.array(["g", "c"]), "nodes": np.array([2, 2]),
            **{k: np.array([1.0, 1.0]) for k in ("runtime_s", "runtime_lo", "runtime_hi")},
            **{k: np.array([0.0, 0.0]) for k in ("energy_j", "energy_lo", "energy_hi")}}
    floor_energy(cols, [gpu, cpu])
    assert cols["energy_j"].tolist() == [600.0, 200.0]
