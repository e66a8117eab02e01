"""The failed runs a ``--resume`` keeps, said with how to measure them again (s43 tester I3).

A resume counts a ``failed``, ``oom`` or ``timeout`` row as done: it is a measurement of the
configuration; recommend and advise read a failure as failing there, a timeout as a lower
bound of the layout's time there (no failure). A run that failed for a
reason since put right (its input file was missing: Rheolef's ``file "sq150.geo" not found``)
then kept vetoing its size, and the resume said only "nothing new; 6 already done". The line
names those rows and the way to replace them: the same sweep at their sizes into a new file,
merged over the old one (``telemetry merge`` keeps the newer row of a configuration).
"""

from __future__ import annotations

#: The statuses a resume keeps as measured failures (never run again).
KEPT = ("failed", "oom", "timeout")
#: How many runs the line names before it counts the rest.
NAMED = 4


def say_kept_failures(say, store, plan, machine_id: str, done: set, out: str) -> None:
    """``say`` (None: nothing said) :func:`kept_failures_note`'s line, where there is one,
    after the line on the timeouts a raised --timeout measures again instead (s49,
    :func:`~hpcds1mpi.measure.resumed_runs.retried_note`)."""
    from hpcds1mpi.measure.resumed_runs import retried_note

    for note in (retried_note(store, plan, machine_id, out),
                 kept_failures_note(store, plan, machine_id, done, out)):
        if say is not None and note:
            say(note)


def kept_failures_note(store, plan, machine_id: str, done: set, out: str) -> str:
    """One line naming the runs of ``plan`` that ``done`` (the keys a resume skips) holds as
    failures in ``store``, and how to measure them again; "" where none is."""
    kept = [(spec, store.runs[(machine_id, spec.run_id)]["status"]) for spec in plan.runs
            if (machine_id, spec.run_id) in done
            and store.runs[(machine_id, spec.run_id)]["status"] in KEPT]
    if not kept:
        return ""
    named = [f"{spec.workload} size {int(spec.size)} {spec.config.label()} ({status})"
             for spec, status in kept[:NAMED]]
    more = f" and {len(kept) - NAMED} more" if len(kept) > NAMED else ""
    # integers exactly, as --sizes takes them (":g" made 1234567 "1.23457e+06": refused)
    sizes = ",".join(str(size) for size in sorted({int(spec.size) for spec, _ in kept}))
    are, read, cause = _read_as({status for _, status in kept})
    return (f"note: {len(kept)} of the runs already done in {out} are {are}, kept as "
            f"measured and not run again: {', '.join(named)}{more}; recommend and advise read "
            f"{read}. If their cause is put right ({cause}), "
            f"measure them again: this sweep with --sizes {sizes} into a new --out NEW.h5, "
            f"then `hpcds1mpi telemetry merge {out} NEW.h5 --out MERGED.h5` (the newer rows "
            "replace them)" + ("; a timeout is measured again in place by this --resume with "
                               "a larger --timeout" if "timeout" in {s for _, s in kept} else ""))


def _read_as(statuses: set[str]) -> tuple[str, str, str]:
    """(what the kept runs are, how recommend and advise read them, what puts them right) for
    their ``statuses``: a timeout is no failure but a lower bound of the layout's time there
    (s48 tester Q3: it had been called one read as failing)."""
    failed = statuses - {"timeout"}
    if "timeout" not in statuses:
        return "failures", "them as failing there", "a missing input, --setup"
    timeouts = ("a timeout as a lower bound of the layout's time there (it ran longer than the "
                "sweep's --timeout), not as a failure")
    if not failed:
        return "timeouts", timeouts, "a --timeout too short"
    return ("failures or timeouts", f"a failed or oom run as failing there and {timeouts}",
            "a missing input, --setup, a --timeout too short")
