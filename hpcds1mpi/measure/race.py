"""Race rounds: measure a problem's close configurations again until the best stands apart.

A sweep in rounds (``rounds = R``) measures every configuration of a problem R times in turn.
Most configurations are far from the best after a round or two; a few are within the noise of
it, and those decide which configuration is "best". With ``race_rounds = M`` the plan holds M
more rounds of every configuration, but a run of round ``r >= R`` is measured only while its
configuration is a *contender*: its median run time over the rounds so far is within
``race_within`` of the best median of the problem, and at least one other configuration is
too. A problem whose best is ``race_within`` ahead of every other configuration stops racing,
so the extra time goes where the order is still open.

The rule reads only the rounds before the one it decides, which the plan's order (round after
round, every configuration of a round in turn) has already recorded; a resumed sweep therefore
decides the same way. Runs raced out are not recorded: a runs table holds what was measured.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import median

from hpcds1mpi.config import FAILURE_STATUSES, OK


@dataclass(frozen=True)
class RaceCheck:
    """Where a race run stands in its problem: ``grid[c][r]`` is the run id of configuration
    ``c`` in round ``r`` (every round of the plan); ``own`` is this run's configuration,
    ``round`` its round."""

    grid: tuple
    own: int
    round: int


def race_checks(problem: list[list], first_race_round: int) -> dict:
    """``{run id: RaceCheck}`` for the race runs of one problem, ``problem[r][c]`` being the
    :class:`~hpcds1mpi.measure.plan.RunSpec` of configuration ``c`` in round ``r``."""
    grid = tuple(tuple(problem[r][c].run_id for r in range(len(problem)))
                 for c in range(len(problem[0])))
    return {problem[r][c].run_id: RaceCheck(grid, c, r)
            for r in range(first_race_round, len(problem)) for c in range(len(problem[r]))}


def round_medians(check: RaceCheck, row_of) -> list[float]:
    """Each configuration's median run time over the rounds before ``check.round`` (inf for
    one that failed in any of them or has no measured run); ``row_of(run_id)``: the recorded
    row or None."""
    medians = []
    for ids in check.grid:
        times, failed = [], False
        for run_id in ids[:check.round]:
            row = row_of(run_id)
            if row is None:
                continue
            failed |= row.get("status") in FAILURE_STATUSES
            value = row.get("runtime_s")
            if row.get("status") == OK and isinstance(value, (int, float)) \
                    and math.isfinite(value) and value > 0:
                times.append(float(value))
        medians.append(median(times) if times and not failed else math.inf)
    return medians


def is_contender(check: RaceCheck, row_of, within: float) -> bool:
    """Whether the race run ``check`` is measured (see the module's note)."""
    medians = round_medians(check, row_of)
    best = min(medians)
    if not math.isfinite(best):
        return False
    limit = best * (1.0 + within)
    close = sum(m <= limit for m in medians)
    return medians[check.own] <= limit and close >= 2
