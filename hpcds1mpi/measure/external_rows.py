"""One external run's measured columns, from the launches :mod:`.external` measured: the
median runtime and spread of an ``ok`` run (a coarse timer's spread widened by its resolution:
:mod:`.coarse_timer`), the failing launch's wall time otherwise (none
where the launcher refused it: the program never ran), and the CPU time the power model counts."""

from __future__ import annotations

import math

from hpcds1mpi.config import OK, Configuration


def row_values(m: dict) -> dict:
    """The measured columns of one run from :func:`~hpcds1mpi.measure.external._measure`'s result."""
    import numpy as np

    from hpcds1mpi.measure.coarse_timer import tick_noise
    from hpcds1mpi.measure.rows import spread

    row = {"status": m["status"], "error": m["error"], "exit_code": m["exit_code"],
           "cpu_s": m["cpu_s"], "peak_rss_mb": m["rss_mb"], "peak_rss_source": m["rss_source"]}
    if m["walls"]:
        row.update(elapsed_s=float(np.median(m["walls"])), measured_s=float(sum(m["walls"])))
    if m["status"] == OK:
        row.update(spread(m["times"]))
        # Printed repeats agree by rounding: never a measured noise of 0 (s37 G1, s45 B3)
        if (noise := tick_noise(m["times"], m.get("time_texts") or [])) is not None:
            row["noise"] = noise
        row["measured_s"] = float(sum(m["walls"]))
        foms = [f for f in m["foms"] if not math.isnan(f)]
        if foms:
            row["fom"] = float(np.median(foms))
    elif m["walls"] and m["status"] != "unsupported":  # the failing launch's cost, not a runtime
        row.update(runtime_s=m["walls"][-1], repeats=len(m["walls"]), noise=float("nan"))
    # A launch the launcher refused never ran the program: no runtime, only its elapsed_s (s35
    # tester I: srun's refusal read "runtime_s 0.013" beside 0.029 s runs in telemetry show).
    return row


def cpu_for_power(m: dict, config: Configuration, wall: float) -> tuple[float, str]:
    """CPU seconds per launch for the power model, and a note for its description: the
    measured mean, or, where the ranks' CPU time was not measured (NaN: they ran under
    slurmstepd), every rank's threads counted busy for the whole launch."""
    cpu = m["cpu_s"] / max(1, len(m["walls"]))
    if not math.isnan(cpu):
        return cpu, ""
    return (config.ranks * config.threads * wall,
            "; the ranks' CPU time was not measured: ranks x threads counted busy")
