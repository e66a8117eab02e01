"""One launch's time limit from the model's upper runtime, and the words that say how it was
set: the one rule recommend's script comment and advise's walltime both state.

Before, the script said "time limit allows 6.32x the predicted time" for a 60 s limit that
allowed 484x it (the factor multiplies the *upper* runtime, then the margin and the floor
apply), while advise said the rule right for the same job (s40 tester D6). A kernel's launch
counts what its ``hpcds1mpi run`` does, not one run (s47 tester N3: :mod:`.kernel_job_time`).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from hpcds1mpi.launch import directives

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.decide.kernel_job_time import KernelRuns

#: ``one_launch_limit``'s ``kept_s`` when the caller has no limit of its own to keep.
_NONE_KEPT = object()
#: Why a configuration's upper runtime is unknown: it timed out in its sweep (s41 tester D6).
UNKNOWN_UPPER = ("the pick's runtime has no known upper end (it timed out in its sweep: it "
                 "ran longer than the --timeout, for how long is not measured)")


def one_launch_limit(runtime_hi_s: float, wall_per_runtime: float = 1.0, setup_s: float = 0.0,
                     setup_from: str = "", kept_s=_NONE_KEPT,
                     kernel: "KernelRuns | None" = None) -> tuple[int | None, str]:
    """(the time limit in s, how it was set in words) for one launch of a configuration;
    where its upper runtime is unknown (``inf``: it timed out), ``kept_s`` (a script's own
    limit, None: none) said as kept.

    Args:
        runtime_hi_s: the model's upper runtime of the configuration, s.
        wall_per_runtime: the measured launch wall per second of the program's own reported
            time (1 where the runtime is the launch's).
        setup_s: the sweep's ``--setup`` time the job runs first, s (0: none).
        setup_from: whose measurement ``setup_s`` is, for the words.
        kept_s: the limit kept where the upper runtime is unknown.
        kernel: what the launch's ``hpcds1mpi run`` spends besides one run (its repeats,
            inputs, warm-up, check, start-up: :mod:`.kernel_job_time`); None: a program's
            launch, one run (s47 tester N3: a kernel job was given 1.5 x one run).

    Raises:
        ConfigError: the upper runtime unknown and no ``kept_s``: the user gives the limit.
    """
    if not math.isfinite(runtime_hi_s):
        if kept_s is _NONE_KEPT:
            from hpcds1mpi.errors import ConfigError

            raise ConfigError(f"no time limit can be sized for the script: {UNKNOWN_UPPER}; "
                              "give the job's limit with --time-limit TIME, or sweep it with "
                              "a longer --timeout to measure it")
        return kept_s, f"kept from the script: {UNKNOWN_UPPER}"
    floor = directives.TIME_FLOOR_S
    floor_words = f"{floor // 60} min" if floor % 60 == 0 else f"{floor} s"
    if kernel is not None:
        return (directives.time_limit_s(kernel.seconds(runtime_hi_s)),
                f"{directives.TIME_MARGIN:g} x {kernel.words()}, whole minutes, at least "
                f"{floor_words}")
    limit = directives.time_limit_s(runtime_hi_s * wall_per_runtime + setup_s)
    basis = (f"{directives.TIME_MARGIN:g} x the predicted upper runtime"
             + (f" x {wall_per_runtime:.3g} (its launch wall per second of its own time)"
                if wall_per_runtime > 1 else "")
             + (f" plus {_seconds(setup_s)} for the --setup ({setup_from})"
                if setup_s > 0 else "")
             + f", whole minutes, at least {floor_words}")
    return limit, basis


def _seconds(s: float) -> str:
    """A setup's time in seconds, as the limit counts it (no import of the answer's own
    formatter: that module writes the script and imports this one)."""
    return f"{s:.0f} s" if s >= 1 else f"{s:.2g} s"


__all__ = ["one_launch_limit"]
