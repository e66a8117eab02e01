"""System 1's predictions for configurations a caller names, each checked first against the
partition and the workload: ``/v1/predict`` and the Python API's ``Model.predict`` both call
:func:`predict_configs`, so a configuration the partition cannot run (too many nodes or cores,
a GPU where there is none, a precision or device the workload lacks) is ``valid: False`` with
its reason in both, never scored as if it could run; one the workload was never measured at
(more nodes than any run, a level never run) lists why in ``extrapolated``, as a
recommendation's pick does; one measured at the size asked is its runs there, and
``measured_runs`` says how many (s31 tester Q1)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Sequence

from hpcds1mpi.errors import ConfigError

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.cluster import Partition
    from hpcds1mpi.config import Configuration

#: The scored values of a row (None where the partition cannot run the configuration).
SCORED = ("runtime_s", "runtime_lo", "runtime_hi", "energy_j", "energy_lo", "energy_hi",
          "fail_prob", "mem_need_mb")
_FRAME = ("workload", "size", "nodes", "ranks_per_node", "threads", "device", "precision",
          "partition", "cores_per_node", "memory_gb", "gpus_per_node")


def why_invalid(cfg: "Configuration", workload: str, part: "Partition", offer: tuple) -> str:
    """Why ``part`` cannot run ``cfg`` for ``workload`` (``""``: it can).

    Args:
        offer: :func:`hpcds1mpi.kernels.offered`'s (uses_threads, precisions, devices).
    """
    from hpcds1mpi.config import check_fits

    uses_threads, precisions, devices = offer
    try:
        check_fits(cfg, part)
    except ConfigError as exc:
        return str(exc).split(";")[0]
    if cfg.threads > 1 and not uses_threads:
        return f"{workload} does not use threads"
    if cfg.device not in devices or (precisions and cfg.precision not in precisions):
        return f"{workload} cannot run {cfg.device} {cfg.precision} on {part.name}"
    return ""


def predict_configs(bundle, workload: str, size: int, part: "Partition",
                    configs: Sequence["Configuration"]) -> list[dict]:
    """One row per configuration, in order: ``partition``, the configuration's fields,
    ``valid`` / ``feasible`` / ``reason``, the :data:`SCORED` values (None when not valid
    or not finite) and ``extrapolated`` (:func:`~hpcds1mpi.decide.scores.unmeasured_lines`:
    one line per knob beyond what the workload was measured at; [] when none or not valid)
    and ``measured_runs`` (how many ok runs of it at ``size`` its values are; 0: modelled).
    Only the valid ones are scored, each as the job's recommendation scores it
    (:func:`~hpcds1mpi.decide.named_scores.score_named`)."""
    import pandas as pd

    from hpcds1mpi.decide.bundle_cache import measured_levels
    from hpcds1mpi.decide.named_scores import score_named
    from hpcds1mpi.decide.scores import unmeasured_lines
    from hpcds1mpi.kernels import offered

    offer = offered(workload, part)
    rows, valid = [], []
    for cfg in configs:
        reason = why_invalid(cfg, workload, part, offer)
        rows.append({"partition": part.name, **cfg.as_dict(), "valid": not reason,
                     "feasible": False, "reason": reason, **dict.fromkeys(SCORED),
                     "extrapolated": [], "measured_runs": 0})
        if not reason:
            valid.append(len(rows) - 1)
    if not valid:
        return rows
    frame = pd.DataFrame([{"workload": workload, "size": size, **rows[i],
                           "cores_per_node": part.cores_per_node,
                           "memory_gb": float(part.memory_gb),
                           "gpus_per_node": part.gpus_per_node} for i in valid])
    # Each row as the job's recommendation scores it, whatever else is named (s35 tester R9).
    cols = score_named(bundle, workload, size, part, frame[list(_FRAME)],
                       uses_threads=offer[0])
    levels = measured_levels(bundle).get(workload)
    for j, i in enumerate(valid):
        rows[i]["extrapolated"] = unmeasured_lines(rows[i], levels)
        for name in SCORED:
            value = float(cols[name][j])
            rows[i][name] = value if math.isfinite(value) else None
        rows[i]["feasible"] = bool(cols["feasible"][j])
        rows[i]["measured_runs"] = int(cols["measured_runs"][j])
        rows[i]["reason"] = str(cols["reason"][j])
    return rows
