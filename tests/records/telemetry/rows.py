"""Rows for the telemetry tests."""

from __future__ import annotations

import time

CONTRACT = ["run_id", "machine_id", "workload", "size", "nodes", "ranks_per_node", "ranks",
            "threads", "device", "precision", "status", "error", "runtime_s", "runtime_min_s",
            "runtime_max_s", "repeats", "noise", "mpi_fraction", "cpu_s", "peak_rss_mb",
            "gpu_busy_s", "gpu_peak_mem_mb", "energy_j", "avg_power_w", "energy_source",
            "rel_error", "work_flops", "work_bytes", "comm_messages", "comm_bytes",
            "mem_bytes_per_rank", "partition", "cores_per_node", "memory_gb", "gpus_per_node"]



def run_row(i: int, machine: str = "m1", status: str = "ok", **kw) -> dict:
    """A finished run ``r{i:03d}`` of machine ``machine`` (more columns in ``kw``)."""
    row = {"run_id": f"r{i:03d}", "machine_id": machine, "workload": "stencil", "size": 64 + i,
           "nodes": 1, "ranks_per_node": 2, "ranks": 2, "threads": 1, "device": "cpu",
           "precision": "fp64", "status": status, "error": "", "runtime_s": 0.5 + i,
           "repeats": 3, "energy_source": "modelled", "finished_at": time.time()}
    row.update(kw)
    return row

