"""Whether a file's column is in another unit than its reader takes: the one rule for it.

A column saved in another unit is wrong in every row, a few wrong values are not: a file is
refused only when most of enough jobs judged show the other unit. Run times that are end -
start in minutes (:mod:`.run_times`) and limits that completed jobs mostly ran far past
(:mod:`.time_limits`) are judged so.
"""

from __future__ import annotations

#: Fewest jobs a file's unit is judged on: one number for its run times and its limits.
MIN_JUDGED = 20


def another_unit(judged: int, matched: int) -> bool:
    """Whether ``matched`` of the ``judged`` jobs (those a unit can be told on) are most of
    them, and those enough (:data:`MIN_JUDGED`): the column is in another unit."""
    return bool(judged >= MIN_JUDGED and 2 * matched > judged)
