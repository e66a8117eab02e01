"""A job's local times in the hour the autumn clock change repeats, read the one way that fits.

``sacct -P`` writes local times without their UTC offset: 02:30 on the night the clock goes
back is two instants an hour apart. Read as the first pass alone, a job that started at 02:30
CEST and ended at 02:10 CET ended "before it started", and one that ended at 02:20 CET ran
"30 minutes" with an Elapsed of 90 (s35 tester T1). A job line knows more than its times: its
Elapsed is End - Start, and it was submitted before it started. :func:`choose_times` takes,
of the readings of Submit, Start and End, those that agree with both; where none does the line
is dropped, counted under :data:`NO_READING_FITS`.
"""

from __future__ import annotations

import itertools

#: Why a line is dropped when no reading of its repeated-hour times fits its Elapsed.
NO_READING_FITS = ("a local time in the hour the autumn clock change repeats, and no reading "
                   "of Start and End fits Elapsed (sacct -P writes local times without their "
                   "offset): export with sacct --json, or with SLURM_TIME_FORMAT=%s")
#: Said of each line whose repeated-hour times were read by their Elapsed.
CHOSEN_BY_ELAPSED = ("local time in the hour the autumn clock change repeats: read the way "
                     "that makes End - Start equal Elapsed (and Submit before Start)")
#: Said of each line whose repeated-hour times nothing in the line tells apart.
FIRST_PASS = ("local time in the hour a daylight-saving change repeats, nothing in the job "
              "line telling which pass: read as the first (summer time)")
#: Said of a Submit that both passes leave before Start.
NEAREST_SUBMIT = ("Submit in the hour the autumn clock change repeats, both passes before "
                  "Start: read as the one nearer Start (the shorter wait)")
#: Seconds End - Start may differ from Elapsed (sacct rounds neither; a fraction may).
SLACK_S = 1.0


def choose_times(submits: tuple, starts: tuple, ends: tuple, elapsed_s: float | None,
                 notes) -> tuple | None:
    """The (submit, start, end) of a job line, each None where unset.

    Args:
        submits, starts, ends: every reading of each time, earliest first (two for a local
            time the clock change repeats, one otherwise, none where unset).
        elapsed_s: the line's Elapsed (None: not given).
        notes: the file's notes, counted (added to where a reading was chosen).

    Returns:
        The readings that fit (End - Start = Elapsed where both are known, Submit <= Start,
        Start <= End), or None where a repeated-hour reading was asked for and none fits.
        Times with one reading each are returned as they are, fitting or not (the caller
        judges them, as it always has).
    """
    options = [t or (None,) for t in (submits, starts, ends)]
    if all(len(t) == 1 for t in options):
        return tuple(t[0] for t in options)
    fitting = [(s, b, e) for s, b, e in itertools.product(*options) if _fits(s, b, e, elapsed_s)]
    if not fitting:
        return None
    # Start and End: the pair that fits; Submit: of the readings left, the one nearest Start.
    pairs = list(dict.fromkeys((b, e) for _, b, e in fitting))
    start, end = pairs[0]
    submit = max(s for s, b, e in fitting if (b, e) == (start, end)) \
        if any(s is not None for s, b, e in fitting if (b, e) == (start, end)) else None
    told = len(starts) > 1 or len(ends) > 1
    if told:
        notes[CHOSEN_BY_ELAPSED if elapsed_s is not None and len(pairs) == 1
              else FIRST_PASS] += 1
    if len(submits) > 1 and len({s for s, b, e in fitting if (b, e) == (start, end)}) > 1:
        notes[NEAREST_SUBMIT] += 1
    elif len(submits) > 1 and not told:
        notes[CHOSEN_BY_ELAPSED] += 1
    return submit, start, end


def _fits(submit, start, end, elapsed_s: float | None) -> bool:
    if submit is not None and start is not None and submit > start:
        return False
    if start is None or end is None:
        return True
    if end < start:
        return False
    return elapsed_s is None or abs((end - start).total_seconds() - elapsed_s) <= SLACK_S
