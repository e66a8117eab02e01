"""A program's recorded command line that cannot be the one its runs ran.

A bundle keeps each program's command line as its training rows ran it, read when it was
trained (:mod:`hpcds1mpi.surrogates.program_command`). A bundle trained before that reader kept
an exec-wrapper prefix recorded ``./app`` for runs of ``env APP_N={size} ./app``: the size
went with the prefix, and ``recommend --emit`` wrote a script that ran the program without
it, which failed in the job with no word of why (s30 tester N6). The telemetry is right; only
the bundle's reading is old, so the fix is to train again.

Only a recorded line that carries no ``{size}`` (nor its sweep's ``--workdir`` / ``--setup``)
is checked, against the lines the bundle's own training rows give when read again now: a
kernel, or a program whose line carries its size, costs nothing.
"""

from __future__ import annotations

#: What fixes it, said in the note and the refusal.
FIX = ("train again from the telemetry (hpcds1mpi train --telemetry FILE --out DIR), or give "
       "the command with --program")


def stale_command(bundle, levels, line: str) -> str:
    """"" when ``line`` (``levels``' command, the one a script of the pick runs) may be the one
    its runs ran; else one line: what the runs ran instead, and :data:`FIX`.

    Args:
        bundle: the loaded bundle (its training rows are read only for a line without
            ``{size}``).
        levels: the program's :class:`~hpcds1mpi.surrogates.levels.MeasuredLevels` (None for
            a kernel or a workload never measured).
        line: the recorded command line the script would run.
    """
    if not line or levels is None or not getattr(levels, "external", False) or "{size}" in line:
        return ""
    swept = getattr(levels, "measured_with", None) or {}
    if any("{size}" in (swept.get(k) or "") for k in ("workdir", "setup")):
        return ""  # the size reaches the program through its folder or its input
    ran = _lines_ran(bundle, levels.workload)
    if not ran or line in ran or not any("{size}" in r for r in ran):
        return ""
    return (f"the model records {levels.workload}'s command as {line!r}, but its runs ran "
            f"{' or '.join(repr(r) for r in ran)} (the model was trained by an older "
            f"hpcds1mpi, which read the command without part of it); a script of {line!r} "
            f"would not give the program its size: {FIX}")


def _lines_ran(bundle, workload: str) -> tuple[str, ...]:
    """The command lines ``workload``'s training rows in ``bundle`` ran, read as a bundle is
    trained now; () when the rows cannot be read."""
    from hpcds1mpi.surrogates.program_command import commands_of

    try:
        rows = bundle.training_data()
        return commands_of(rows[rows["workload"].astype(str) == workload])
    except Exception:  # noqa: BLE001 - rows unreadable: nothing to compare with
        return ()
