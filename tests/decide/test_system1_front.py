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


def test_a_two_point_front_takes_the_end_whose_gain_outweighs_its_loss():
    """s40 tester D5: myapp2 at 1500, 2 x 2 at 108 ms and 1.67 J against 1 x 1 at 110 ms and
    0.951 J: balanced took the fastest end (75 % more energy for 1.4 % speed) on every
    two-point front, the normalised sums tying."""
    x, y = np.array([0.10797, 0.10953]), np.array([1.665, 0.951])
    assert system1_front.knee(x, y) == 1
    assert system1_front.knee(np.array([0.05, 0.10953]), np.array([1.0, 0.951])) == 0
    assert system1_front.knee(x[:1], y[:1]) == 0


def test_a_front_with_no_point_below_its_chord_takes_the_smaller_product():
    """s40 review F2: D5's front with one more layout measured in between, above the chord,
    went back to the fastest end (108 ms for 75 % more energy than 110 ms)."""
    x, y = np.array([0.108, 0.1095, 0.110]), np.array([1.67, 1.6, 0.951])
    assert system1_front.knee(x, y) == 2
    # the fastest end where its gain outweighs the loss, the front concave alike
    assert system1_front.knee(np.array([0.05, 0.09, 0.1]), np.array([1.0, 0.99, 0.95])) == 0
