"""Row assembly: one runs-table row and its detail tables from what the ranks measured.

The columns are the telemetry contract (docs/telemetry.md, "Runs table"); rank 0 of a run's
communicator builds the row from the runner's ``Outcome`` and every rank's info dict
(:mod:`hpcds1mpi.measure.driver`).
"""

from __future__ import annotations

import math
import time

from hpcds1mpi.config import OK
from hpcds1mpi.measure import meters
from hpcds1mpi.measure.plan import RunSpec
from hpcds1mpi.records.kernel_options import options_text


def base_row(spec: RunSpec, machine_id: str, partition, sweep_id: str) -> dict:
    """The columns a run has before it runs: its key, configuration and partition.

    Its status is ``crashed`` until the run finishes: a launch that dies mid-run leaves exactly
    that in the journal.

    Args:
        spec: the run.
        machine_id: the fingerprint hash of the machine.
        partition: the :class:`~hpcds1mpi.cluster.Partition` it runs on.
        sweep_id: the hash of the plan.

    Returns:
        The row (a new dict).
    """
    c = spec.config
    return {
        "run_id": spec.run_id, "machine_id": machine_id, "workload": spec.workload,
        "size": spec.size, "nodes": c.nodes, "ranks_per_node": c.ranks_per_node,
        "ranks": c.ranks, "threads": c.threads, "device": c.device, "precision": c.precision,
        "seed": spec.seed, "sweep_id": sweep_id, "partition": partition.name,
        "cores_per_node": partition.cores_per_node, "memory_gb": partition.memory_gb,
        "gpus_per_node": partition.gpus_per_node, "kind": "kernel", "status": "crashed",
        # another deck is another workload (s40 B13), each option of its declared type (F3)
        "extra": options_text(spec.extra, spec.workload),
    }


def spread(walls: list[float]) -> dict:
    """Median / min / max / repeats / noise of per-repeat wall times.

    Args:
        walls: wall time of each timed repeat (s), the slowest rank's.

    Returns:
        ``runtime_s``, ``runtime_min_s``, ``runtime_max_s``, ``repeats``, ``measured_s`` (sum)
        and ``noise`` ((max - min) / median; NaN with one repeat); only ``repeats`` (0) when
        nothing was timed.
    """
    import numpy as np

    if not walls:
        return {"repeats": 0}
    arr = np.asarray(walls, dtype=float)
    median = float(np.median(arr))
    return {
        "runtime_s": median, "runtime_min_s": float(arr.min()), "runtime_max_s": float(arr.max()),
        "repeats": int(arr.size), "measured_s": float(arr.sum()),
        # One repeat has no spread of its own: unknown (NaN), never a measured 0.
        "noise": float((arr.max() - arr.min()) / median) if median > 0 and arr.size > 1
        else float("nan"),
    }


def work_columns(kernel, size: int, ranks: int) -> dict:
    """The kernel's work model at ``size`` on ``ranks`` ranks as telemetry columns.

    Returns:
        ``work_flops``, ``work_bytes``, ``comm_messages``, ``comm_bytes``,
        ``mem_bytes_per_rank``; empty (NaN in the table) when the kernel has no work model.
    """
    try:
        work = kernel.work(size, ranks)
    except Exception:  # noqa: BLE001 - a kernel without a work model leaves NaN
        return {}
    return work.columns()


def energy_columns(row: dict, infos: list[dict], model, nodes: int) -> dict:
    """Energy per run, average power and source (see docs/telemetry.md, "Energy").

    RAPL (plus NVML on GPU runs) when every node leader read it, else NVML plus modelled CPU
    power, else the partition's power model.

    Args:
        row: the row so far (``runtime_s``, ``repeats``, ``measured_s``, ``cpu_s``).
        infos: every rank's info dict.
        model: the partition's :class:`~hpcds1mpi.measure.meters.PowerModel`.
        nodes: nodes the run used.

    Returns:
        ``avg_power_w``, ``energy_j``, ``energy_source``, ``power_model``; empty when nothing
        was timed.
    """
    runtime = row.get("runtime_s")
    if runtime is None or not row.get("repeats"):
        return {}
    leaders = [i for i in infos if i["local_rank"] == 0]
    rapl = [i.get("rapl_j") for i in leaders]
    nvml = [i.get("nvml_j") for i in infos if i.get("gpu")]
    window = max(i["elapsed_s"] for i in infos)
    if rapl and all(v is not None for v in rapl):
        watts = sum(rapl) / window
        source = "rapl"
        if nvml and all(v is not None and not math.isnan(v) for v in nvml):
            watts += sum(nvml) / window
            source = "rapl+nvml"
    elif nvml and all(v is not None and not math.isnan(v) for v in nvml):
        cpu_watts = meters.modelled_power(model, nodes=nodes, window_s=row["measured_s"],
                                           cpu_s=row["cpu_s"])
        watts = sum(nvml) / window + cpu_watts
        source = "nvml+modelled"
    else:
        gpus = sum(1 for i in infos if i.get("gpu"))
        busy = row.get("gpu_busy_s")
        # Without a GPU sensor a GPU run is taken as busy for its whole run time (upper bound).
        gpu_busy_window = (busy * row["repeats"] if busy is not None and not math.isnan(busy)
                           else row["measured_s"] * gpus)
        watts = meters.modelled_power(model, nodes=nodes, window_s=row["measured_s"],
                                       cpu_s=row["cpu_s"], gpus=gpus, gpu_busy_s=gpu_busy_window)
        source = "modelled"
    return {"avg_power_w": watts, "energy_j": watts * runtime, "energy_source": source,
            "power_model": model.describe() if "modelled" in source else ""}


def finish_row(row: dict, outcome, infos: list[dict], model, kernel, spec: RunSpec,
               elapsed: float) -> tuple[dict, dict]:
    """The runs-table row and its detail tables from the runner's Outcome and per-rank infos.

    Args:
        row: the row from :func:`base_row` (with ``attempt``, ``started_at``).
        outcome: the runner's ``Outcome`` on rank 0, or None when the driver itself failed.
        infos: every rank's info dict, in rank order of the run's communicator.
        model: the partition's power model.
        kernel: the kernel (for its work model).
        spec: the run.
        elapsed: rank 0's wall time of the whole run, set-up and check included (s).

    Returns:
        ``(row, detail)``: the finished row and the ``repeats``, ``ranks`` and
        ``rank_repeats`` detail rows.
    """
    import numpy as np

    row = dict(row)
    driver_errors = [i["driver_error"] for i in infos if i.get("driver_error")]
    row["status"] = outcome.status if outcome is not None else "failed"
    row["error"] = outcome.error if outcome is not None else ""
    if driver_errors and row["status"] == OK:
        row["status"], row["error"] = "failed", driver_errors[0]
    row["finished_at"] = time.time()
    row["elapsed_s"] = elapsed
    row["hostnames"] = ",".join(sorted({i["hostname"] for i in infos}))
    row["binding"] = ";".join(f"r{i['rank']}:{i['binding']}" for i in infos)
    row["peak_rss_mb"] = max(i["rss_mb"] for i in infos)
    row["peak_rss_source"] = infos[0]["rss_source"]
    row["cpu_s"] = sum(i["cpu_s"] for i in infos)
    if outcome is not None:
        row["rel_error"] = outcome.rel_error
        row["blas_threads"] = outcome.blas_threads
        row["torch_threads"] = outcome.torch_threads
        row.update(spread(outcome.wall))
    fractions = [sum(i["rank_mpi"]) / sum(i["rank_wall"]) for i in infos
                 if i["rank_wall"] and sum(i["rank_wall"]) > 0]
    row["mpi_fraction"] = float(np.mean(fractions)) if fractions else float("nan")
    gpu_infos = [i for i in infos if i.get("gpu")]
    if gpu_infos:
        busy = [i.get("gpu_busy_s") for i in gpu_infos]
        runs_done = max(row.get("repeats", 0) + _warmup_of(infos), 1)
        if all(b is not None and not math.isnan(b) for b in busy):
            row["gpu_busy_s"] = sum(busy) / runs_done
        mems = [i.get("gpu_mem_mb") for i in gpu_infos]
        mems = [m for m in mems if m is not None and not math.isnan(m)]
        row["gpu_peak_mem_mb"] = max(mems) if mems else float("nan")
        row["gpu_source"] = gpu_infos[0].get("gpu_source", "none")
    row.update(work_columns(kernel, spec.size, spec.config.ranks))
    if row["status"] != "unsupported":  # nothing ran: no energy to attribute
        row.update(energy_columns(row, infos, model, spec.config.nodes))
    detail = {
        "repeats": [{"machine_id": row["machine_id"], "run_id": row["run_id"], "repeat": k,
                     "wall_s": w} for k, w in enumerate(outcome.wall if outcome else [])],
        "ranks": [{"machine_id": row["machine_id"], "run_id": row["run_id"], "rank": i["rank"],
                   "hostname": i["hostname"], "local_rank": i["local_rank"],
                   "binding": i["binding"], "cpu_s": i["cpu_s"], "peak_rss_mb": i["rss_mb"],
                   "wall_s_median": float(np.median(i["rank_wall"])) if i["rank_wall"] else None,
                   "mpi_s_median": float(np.median(i["rank_mpi"])) if i["rank_mpi"] else None,
                   "mpi_fraction": (sum(i["rank_mpi"]) / sum(i["rank_wall"])
                                    if i["rank_wall"] and sum(i["rank_wall"]) > 0 else None)}
                  for i in infos],
        "rank_repeats": [{"machine_id": row["machine_id"], "run_id": row["run_id"],
                          "rank": i["rank"], "repeat": k, "wall_s": w, "mpi_s": m}
                         for i in infos for k, (w, m) in enumerate(zip(i["rank_wall"],
                                                                        i["rank_mpi"]))],
    }
    return row, detail


def _warmup_of(infos: list[dict]) -> int:
    """Warm-up runs per rank (the GPU busy time covers them too)."""
    return int(infos[0].get("warmup", 0)) if infos else 0
