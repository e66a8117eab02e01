"""squeue's pending reasons that never clear (s33 tester A4), as squeue prints them."""

from __future__ import annotations

import pytest

from hpcds1mpi.measure.pending_reasons import never_starts


@pytest.mark.parametrize("reason", ["PartitionTimeLimit", "MaxMemPerLimit", "PartitionConfig",
                                    "ReqNodeNotAvail, UnavailableNodes:m2",
                                    "QOSMaxWallDurationPerJobLimit", "AssocMaxNodesPerJobLimit"])
def test_a_reason_of_a_limit_never_clears(reason):
    assert never_starts(reason)


@pytest.mark.parametrize("reason", ["Priority", "Resources", "Dependency", "BeginTime",
                                    "QOSMaxJobsPerUserLimit", "None", ""])
def test_a_reason_that_clears_by_waiting_is_none(reason):
    assert never_starts(reason) == ""
