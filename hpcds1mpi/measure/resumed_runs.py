"""Which recorded runs a ``--resume`` counts as done (:func:`settled`), and the timed-out runs
one with a raised ``--timeout`` measures again (s49).

A run ``interrupted``, or ``ok`` without a finite positive runtime (damaged, not a
measurement), is measured again, the new row replacing it. A ``timeout`` row is kept as done
(:mod:`.kept_failures`: a lower bound of the layout's time there). But a user who resumes with
a larger ``--timeout``, the first sweep's limit having been too short, means those runs to be
measured under the new limit: the resume had said "nothing new" and kept them. Only a
``--timeout`` asked for (the flag, a plan file's) does so: a resume given none carries the
sweep on (after its walltime, say), it does not run every earlier timeout for up to the default
600 s (s49 review F4). A run cut at a
limit below this sweep's is measured again, its new row replacing the old one (a resume and
the store key runs by machine and run id, which leave the limit out); one cut at this limit or
a larger one stays kept.

The limit is read from the row's error, as the sweep words it: a program's launch "no exit
within the 2 s timeout", a kernel configuration's watchdog "no result within the 1.5 s
timeout" (the same words :mod:`hpcds1mpi.decide.timed_out` reads its bound from). A row whose
error names no limit (a file from before those words) is kept, as before: nothing says it was
cut shorter.
"""

from __future__ import annotations

import math
import re

from hpcds1mpi.config import TIMEOUT

#: The limit as the sweep words a timeout: ``within the 2 s timeout`` (what resume and
#: :mod:`hpcds1mpi.decide.timed_out` read it by).
TIMEOUT_LIMIT = re.compile(r"within the ([0-9.]+(?:e[+-]?[0-9]+)?) s timeout")


def settled(row: dict | None, plan=None) -> bool:
    """Whether a recorded run counts as done on ``--resume``: not ``interrupted``, an ``ok``
    run with a finite positive runtime, and a ``timeout`` not :func:`cut_shorter` than
    ``plan``'s --timeout (None: any timeout is done)."""
    if row is None or row["status"] == "interrupted":
        return False
    if row["status"] != "ok":
        return plan is None or not cut_shorter(row, plan)
    try:
        runtime = float(row.get("runtime_s"))
    except (TypeError, ValueError):
        return False
    return math.isfinite(runtime) and runtime > 0


def recorded_limit(row: dict) -> float | None:
    """The limit (s) a ``timeout`` ``row`` was cut at, from its error; None where it names
    none (another status, or an older file's wording)."""
    if row.get("status") != TIMEOUT:
        return None
    match = TIMEOUT_LIMIT.search(str(row.get("error") or ""))
    return float(match.group(1)) if match else None


def cut_shorter(row: dict | None, plan) -> bool:
    """Whether ``row`` timed out at a limit below ``plan``'s ``timeout``: measured again.

    The limit is compared as the error words it (``:g``, 6 digits): a resume under the same
    --timeout reads back the very same number, never a raised one (the supervisor resumes
    after each timeout with the same limit: a run rounded below it would run for ever)."""
    if row is None or not getattr(plan, "timeout_given", False) or \
            (limit := recorded_limit(row)) is None:
        return False  # a resume given no --timeout carries on (s49 review F4)
    return float(f"{plan.timeout:g}") > limit


def retried_note(store, plan, machine_id: str, out: str) -> str:
    """One line saying how many of ``plan``'s runs recorded in ``store`` timed out below its
    ``timeout`` and are measured again, and why; "" where none is."""
    rows = [store.runs.get((machine_id, spec.run_id)) for spec in plan.runs]
    limits = sorted({recorded_limit(row) for row in rows if cut_shorter(row, plan)})
    if not limits:
        return ""
    count = sum(cut_shorter(row, plan) for row in rows)
    cut = ", ".join(f"{limit:g}" for limit in limits)
    return (f"{count} timed-out run(s) in {out} are measured again: they were cut at {cut} s, "
            f"below this --timeout {plan.timeout:g} s (a run cut at that or more stays kept; "
            "the new row replaces the old)")
