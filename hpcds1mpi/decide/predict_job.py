"""The model's view of configurations a caller names, with the guard's verdict on the job:
what ``/v1/predict`` and the Python API's ``Model.predict`` both answer (one function,
:func:`predict_job`).

:func:`~hpcds1mpi.decide.predict_configs.predict_configs` checks and scores each configuration
and lists the knobs it was never measured at. A job the model never saw is extrapolated in
every configuration, whatever its knobs: a workload never measured, a size outside the measured
sizes, hardware never trained on (:func:`job_beyond_measured`, from the guard's checks), and on
a GPU partition whose GPU the model cannot compare with the one it measured, every GPU row
(:func:`~hpcds1mpi.decide.trained_hardware.gpu_not_compared`). Those lines come first in each
scored row's ``extrapolated``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Sequence

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.cluster import Partition
    from hpcds1mpi.config import Configuration


def job_beyond_measured(bundle, workload: str, size: int, part: "Partition",
                        verdict) -> list[str]:
    """What every configuration of the job is extrapolated in, one line each, by the guard's
    checks of the job (``verdict.checks``): a workload never measured, a size outside the
    measured ones, hardware never trained on. A row's own knobs are said by
    ``unmeasured_lines``; an empty list there reads as "not extrapolated", false for a
    workload nobody measured."""
    checks = verdict.checks
    lines = []
    if checks.get("hardware", "pass") != "pass":
        lines.append(f"partition {part.name} ({part.cores_per_node} cores, "
                     f"{part.gpus_per_node} GPUs, {part.memory_gb:g} GB) never trained on")
    if checks.get("name", "pass") != "pass":
        lines.append(f"workload {workload!r} never measured")
    lo_hi = (getattr(bundle, "size_range", None) or {}).get(workload)
    if checks.get("size_range", "pass") != "pass" and lo_hi is not None:
        lines.append(f"size {size} outside the measured sizes "
                     f"{float(lo_hi[0]):g}–{float(lo_hi[1]):g}")
    return lines


def row_extrapolation(bundle, workload: str, size: int, part: "Partition", verdict
                      ) -> Callable[[dict], list[str]]:
    """The function that says why one row of the job on ``part`` is extrapolated, one line
    each: the job's own lines (:func:`job_beyond_measured`), a GPU not compared with the
    trained one (GPU rows), then the row's knobs never measured
    (:func:`~hpcds1mpi.decide.scores.unmeasured_lines`); [] when the job and every level
    were measured. ``predict_job`` and the API's ``recommend`` rows both say it through
    this (the API's pick read () while ``predict`` said it was extrapolated: s37 tester P3).

    Args:
        verdict: the guard's verdict on the job on ``part`` (its ``checks``).
    """
    from hpcds1mpi.decide.bundle_cache import measured_levels
    from hpcds1mpi.decide.scores import unmeasured_lines
    from hpcds1mpi.decide.trained_hardware import gpu_not_compared

    beyond = job_beyond_measured(bundle, workload, size, part, verdict)
    gpu_line = gpu_not_compared(bundle, part)
    levels = measured_levels(bundle).get(workload)

    def lines(row: dict) -> list[str]:
        extra = [gpu_line] if gpu_line and row["device"] == "gpu" else []
        return beyond + extra + unmeasured_lines(row, levels)

    return lines


def predict_job(bundle, workload: str, size: int, part: "Partition",
                configs: Sequence["Configuration"], calibration, reference
                ) -> tuple[object, list[dict]]:
    """The guard's verdict on the job and one row per configuration, in order.

    Rows are :func:`~hpcds1mpi.decide.predict_configs.predict_configs`'s; every valid (scored)
    row's ``extrapolated`` starts with the job's own lines (:func:`job_beyond_measured`), and
    a GPU row on a partition whose GPU was not compared with the trained one says so next.

    Args:
        calibration / reference: the guard's (``guard.load_calibration``,
            ``guard.reference``), loaded once by a caller that answers many questions.

    Returns:
        ``(verdict, rows)``: a :class:`~hpcds1mpi.decide.guard.Verdict` and the rows.
    """
    from hpcds1mpi.decide import guard
    from hpcds1mpi.decide.predict_configs import predict_configs

    rows = predict_configs(bundle, workload, size, part, configs)
    verdict = guard.judge(bundle, workload, size, part, calibration, reference)
    lines = row_extrapolation(bundle, workload, size, part, verdict)
    for row in rows:
        if row["valid"]:  # not scored: nothing extrapolated
            row["extrapolated"] = lines(row)
    return verdict, rows
