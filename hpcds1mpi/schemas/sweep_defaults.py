"""How a sweep measures each configuration unless told: the one home of the defaults that the
plan schema, the plans, the program sweep and ``sweep --help`` read (s38 tester B6: the help
gave none for a kernel sweep, and said ``--min-time`` measures at least that long where the
repeat cap won: ``min_time = 2`` measured gemm for 0.013 s in its 5 repeats).

A run repeats until it has both ``min_repeats`` repeats and ``min_time`` seconds measured, and
never past ``max_repeats``. A ``min_time`` given without a ``max_repeats`` is what the user
asked for, so it lifts the default cap to :data:`UNCAPPED` (1,000 repeats: every repeat is a
row of the telemetry's ``repeats`` table, and each rank's of ``rank_repeats``, so a kernel of
0.1 ms asked for 2 s must not store 20,000 of them; the per-configuration timeout still bounds
the run), said in one line (:func:`lifted_cap_note`); a ``max_repeats`` given keeps its cap. Plain constants: ``sweep --help`` imports this without pydantic.
"""

from __future__ import annotations

from typing import NamedTuple



class Measuring(NamedTuple):
    """The repeat settings of one kind of sweep."""

    min_time: float  # seconds of measured time a run reaches, within max_repeats
    min_repeats: int
    max_repeats: int
    warmup: int  # runs (launches) before the measured ones
    timeout: float  # seconds a configuration may take


#: A kernel sweep (``--kernel`` / ``--plan``): repeats are cheap, in one process.
KERNEL = Measuring(min_time=0.2, min_repeats=1, max_repeats=5, warmup=1, timeout=600.0)
#: A program sweep (``--command``): every repeat is a launch; a short program gets 3.
PROGRAM = Measuring(min_time=1.0, min_repeats=3, max_repeats=10, warmup=0, timeout=600.0)
#: The repeat cap a given ``min_time`` leaves where no ``max_repeats`` is given.
UNCAPPED = 1000
#: ``hpcds1mpi run``'s timed repeats (after its one warm-up) unless ``--repeats`` is given,
#: which a job script's time limit counts (``decide/kernel_job_time.py``).
RUN_REPEATS = 3


def lifts_cap(min_time: float | None, max_repeats: int | None) -> bool:
    """Whether a given ``min_time`` (None: not given) lifts the default cap: it asks for time
    to measure (more than 0 s) and no ``max_repeats`` was given."""
    return min_time is not None and min_time > 0 and max_repeats is None


def lifted_cap_note(min_time: float, default_cap: int, option: str = "max_repeats") -> str:
    """The line that says a given ``min_time`` lifted the default repeat cap."""
    return (f"min_time {min_time:g} s given without {option}: each run repeats until it has "
            f"measured {min_time:g} s (not stopping at the default {default_cap} repeats, but at "
            f"{UNCAPPED:,} at most, and within its timeout); give {option} to cap its repeats "
            "otherwise")


def help_text() -> dict[str, str]:
    """``sweep --help``'s words for the repeat options: the defaults above, and the rule
    between them as the runner applies it."""
    return {
        "min_time": f"Seconds of measured time each run repeats to, within --max-repeats "
                    f"(default {KERNEL.min_time:g} s; --command {PROGRAM.min_time:g} s of "
                    "launches); given alone, it lifts the default --max-repeats.",
        "min_repeats": f"At least this many repeats (default {KERNEL.min_repeats}; --command "
                       f"{PROGRAM.min_repeats} launches).",
        "max_repeats": f"At most this many repeats, even short of --min-time (default "
                       f"{KERNEL.max_repeats}; --command {PROGRAM.max_repeats} launches; "
                       f"{UNCAPPED:,} where only --min-time is given).",
        "warmup": f"Unmeasured runs before the repeats (default {KERNEL.warmup}; --command "
                  f"{PROGRAM.warmup} launches).",
        "timeout": f"Seconds a configuration may take (default {KERNEL.timeout:g}; --command "
                   f"{PROGRAM.timeout:g}).",
    }


__all__ = ["KERNEL", "Measuring", "PROGRAM", "UNCAPPED", "help_text", "lifted_cap_note",
           "lifts_cap"]
