"""One launch's time limit from the model's upper runtime, and the words that say how it was
set: the one rule recommend's script comment and advise's walltime both state.

Before, the script said "time limit allows 6.32x the predicted time" for a 60 s limit that
allowed 484x it (the factor multiplies the *upper* runtime, then the margin and the floor
apply), while advise said the rule right for the same job (s40 tester D6).
"""

from __future__ import annotations

from hpcds1mpi.launch import directives


def one_launch_limit(runtime_hi_s: float, wall_per_runtime: float = 1.0, setup_s: float = 0.0,
                     setup_from: str = "") -> tuple[int, str]:
    """(the time limit in s, how it was set in words) for one launch of a configuration.

    Args:
        runtime_hi_s: the model's upper runtime of the configuration, s.
        wall_per_runtime: the measured launch wall per second of the program's own reported
            time (1 where the runtime is the launch's).
        setup_s: the sweep's ``--setup`` time the job runs first, s (0: none).
        setup_from: whose measurement ``setup_s`` is, for the words.
    """
    limit = directives.time_limit_s(runtime_hi_s * wall_per_runtime + setup_s)
    floor = directives.TIME_FLOOR_S
    floor_words = f"{floor // 60} min" if floor % 60 == 0 else f"{floor} s"
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
