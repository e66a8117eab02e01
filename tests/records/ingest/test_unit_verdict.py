"""The one rule a file's column is judged in another unit by: most of enough judged jobs."""

from __future__ import annotations

import numpy as np
import pytest

from hpcds1mpi.records.ingest import run_times, time_limits
from hpcds1mpi.records.ingest.unit_verdict import MIN_JUDGED, another_unit


@pytest.mark.parametrize("judged, matched, verdict", [
    (MIN_JUDGED, MIN_JUDGED // 2 + 1, True),  # most of enough
    (MIN_JUDGED, MIN_JUDGED // 2, False),  # half: not most
    (MIN_JUDGED - 1, MIN_JUDGED - 1, False),  # too few to judge a unit on
    (1000, 501, True), (0, 0, False),
    (np.int64(MIN_JUDGED), np.int64(MIN_JUDGED), True),  # numpy's sums, as the checks give
])
def test_most_of_at_least_min_judged_jobs_is_another_unit(judged, matched, verdict):
    assert another_unit(judged, matched) is verdict


def test_run_times_and_time_limits_judge_by_the_one_rule():
    """Was (s46 read-back): each wrote the rule out, sharing only MIN_JUDGED (s47)."""
    assert run_times.another_unit is time_limits.another_unit is another_unit
    assert run_times.MIN_JUDGED == time_limits.MIN_JUDGED == MIN_JUDGED == 20
