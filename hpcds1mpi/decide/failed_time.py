"""How long a layout's own runs took to fail, measured, for ``advise``'s failing side.

System 1's runtime for a layout it predicts to fail is pulled toward the layouts that ran at that
size: GetDP's 1 rank, failed after 3.52 s at size 50, was given "predicted time until it fails
1.47 s (1.39 s–2.2 s)", the 2-rank layout's runtime there (s43 tester L2). The time a failing
layout takes is only known from its own failed runs: :func:`measured_failure_time` gives their
median at the question's size on the partition, and ``advise`` says that ("its runs failed after
3.52 s (measured: the launch's wall time, ...)": a failed run's ``runtime_s`` is the launch's,
never the ``--time-regex`` time the ok runs may have, and the runtime model never learns it:
``surrogates.targets.target_values``) or no time where none failed there.
"""

from __future__ import annotations

import numpy as np


def measured_failure_time(bundle, workload: str, size: int, partition: str,
                          config) -> float:
    """The median ``runtime_s`` of ``workload``'s failed runs (a failure's ``runtime_s``
    is its launch's wall time) of ``config`` at ``size`` on ``partition``; NaN where
    there are none or the bundle holds no training rows."""
    from hpcds1mpi.config import FAILED_TO_RUN
    from hpcds1mpi.decide.measured_here import CONFIG_COLUMNS
    from hpcds1mpi.decide.workload_rows import workload_rows

    rows = workload_rows(bundle, workload)
    if rows is None:
        return float("nan")
    try:
        on = (np.asarray(rows["size"], dtype=float) == float(size)) \
            & (rows["partition"].astype(str) == partition) \
            & np.isin(rows["status"].astype(str), sorted(FAILED_TO_RUN))
        for key, value in config.as_dict().items():
            if key in CONFIG_COLUMNS:
                on &= rows[key] == value
        times = np.asarray(rows["runtime_s"], dtype=float)[on]
    except KeyError:  # training rows without outcomes
        return float("nan")
    times = times[np.isfinite(times) & (times > 0)]
    return float(np.median(times)) if len(times) else float("nan")
