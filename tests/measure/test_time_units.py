"""A time's unit and a time over the wall time (measure/time_units.py)."""

from __future__ import annotations

from hpcds1mpi.measure.time_units import over_wall_stop


def test_the_stop_names_the_kept_runs_like_the_launch_that_proved_a_sum():
    kept = [("a T2", 1, 2), ("a T2", 1, 2), ("a R2", 2, 1), ("a T1", 1, 1)]
    threads = over_wall_stop("P", "a size 4 T2", kept, 1, 2)
    assert threads.startswith("a size 4 T2: P, or leave out --time-regex to record the launch's "
                              "wall time; a reading of the regex, not a failure of the program")
    assert threads.endswith("the runs of several threads it read before (a T2) read the same "
                            "regex under their wall time, likely the same sum: sweep them again "
                            "into a new --out")
    assert "(a R2)" in over_wall_stop("P", "x", kept, 2, 1)
    assert "it read before (a T2, a R2, a T1)" in over_wall_stop("P", "x", kept)  # a unit
    assert over_wall_stop("P", "", []).endswith("and the sweep stops")
