"""Whether the number --time-regex read can be a launch's runtime (measure/time_value.py)."""

from __future__ import annotations

import pytest

from hpcds1mpi.measure.time_value import value_problem

REGEX = "--time-regex 'total : (\\S+)'"


def test_a_kept_time_of_several_threads_or_ranks_is_remembered_for_a_later_stop():
    kept = []
    assert value_problem("1.60", {}, 2.07, REGEX, (1, 2, "elk size 2 N1xR1xT2"), kept) == ""
    assert value_problem("1.60", {}, 2.07, REGEX, (1, 1, "elk size 2 N1xR1xT1"), kept) == ""
    assert kept == [("elk size 2 N1xR1xT2", 1, 2)]  # a 1 x 1 launch sums nothing
    found = {}
    assert "is 1.12x the launch's own wall time 6.42 s: a CPU time summed over the 2 threads" \
        in value_problem("7.19", found, 6.42, REGEX, (1, 2, "elk size 4 N1xR1xT2"), kept)
    assert found["over_wall"].startswith("elk size 4 N1xR1xT2: exit 0, but the program's own")
    assert "the runs of several threads it read before (elk size 2 N1xR1xT2)" in \
        found["over_wall"]


def test_a_zero_is_a_reading_under_one_tick_kept_ok_with_its_time_bounded():
    """s47 tester K1: MPB's whole-second "0 seconds" was a failed run, and recommend left the
    fastest layout out as "every run failed"."""
    for text, wall, kept in (("0", 1.43, 0.5), ("0", 0.4, 0.2), ("00:00:00", 3.0, 0.5)):
        found = {}
        assert value_problem(text, found, wall, REGEX, (1, 1, ""), []) == ""
        assert found == {"time": pytest.approx(kept), "below_tick": True}
    # a "0.00" claims a 0.01-s timer: an exit-0 zero there is rather a run that did nothing
    # ("ERROR: cannot open input" then "time: 0.00", s47 review RX1): failed, as before K1
    for text in ("0.00", "0,0", "0.0"):
        found = {}
        assert "is not a positive finite number" in value_problem(text, found, 1.0, REGEX,
                                                                  (1, 1, ""), [])
        assert "below_tick" not in found


def test_a_time_that_is_no_number_of_seconds_stays_a_failed_launch():
    assert "followed by 'ms'" in value_problem("40", {"time_unit": "ms"}, 1.0, REGEX,
                                               (1, 1, ""), [])
