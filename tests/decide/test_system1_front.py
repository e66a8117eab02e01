"""system1_front: the runtime–energy front and its knee (the front's own cases are in
test_system1.py, through the names system1 keeps)."""

from __future__ import annotations

import numpy as np

from hpcds1mpi.decide import system1, system1_front


def test_system1_keeps_both_names():
    assert system1.pareto_front_2d is system1_front.pareto_front_2d
    assert system1.knee is system1_front.knee


def test_the_knee_is_the_point_farthest_below_the_chord():
    x = np.array([1.0, 2.0, 10.0])
    y = np.array([10.0, 2.0, 1.0])
    assert system1_front.knee(x, y) == 1
    assert system1_front.knee(x[:2], y[:2]) in (0, 1)
    front = system1_front.pareto_front_2d(np.array([1.0, 2.0, 3.0]), np.array([3.0, 1.0, 2.0]))
    assert front.tolist() == [0, 1]
