"""Hypervolume, Pareto filtering, Spread and exact fronts against hand-computed values."""

import numpy as np
import pytest

from hpcds1mpi.surrogates.pareto import (
    exact_front,
    hypervolume,
    pareto_front,
    pareto_mask,
    reference_point,
    spread,
)

# A staircase, minimisation, reference (5, 5):
#   (1,4) (2,2) (4,1)  plus dominated (3,3) and (4,4).
# Area by hand: x in [1,2): height 5-4=1 -> 1; [2,4): 5-2=3 -> 6; [4,5): 5-1=4 -> 4. Total 11.
STAIRS = np.array([[1.0, 4.0], [2.0, 2.0], [4.0, 1.0], [3.0, 3.0], [4.0, 4.0]])
REF = np.array([5.0, 5.0])


def test_pareto_mask_drops_dominated_and_nonfinite():
    Y = np.vstack([STAIRS, [[0.5, np.nan]], [[2.0, 2.0]]])
    mask = pareto_mask(Y)
    assert mask.tolist() == [True, True, True, False, False, False, True]
    assert pareto_front(Y).tolist() == [[1.0, 4.0], [2.0, 2.0], [4.0, 1.0]]


def test_pareto_mask_general_m_matches_2d_path():
    rng = np.random.default_rng(0)
    Y = rng.random((60, 2))
    mask2 = pareto_mask(Y)
    Y3 = np.hstack([Y, np.zeros((60, 1))])  # a constant third objective changes nothing
    assert (pareto_mask(Y3) == mask2).all()


def test_hypervolume_of_staircase_by_hand():
    assert hypervolume(STAIRS, REF) == pytest.approx(11.0)
    # Dominated points add nothing; a point outside the reference box adds nothing.
    assert hypervolume(np.vstack([STAIRS, [[6.0, 0.5]]]), REF) == pytest.approx(11.0)
    # One point: a rectangle.
    assert hypervolume([[2.0, 3.0]], REF) == pytest.approx(6.0)
    assert hypervolume(np.empty((0, 2)), REF) == 0.0


def test_hypervolume_3d_matches_box():
    # Two points in 3-D, ref (2,2,2): unit cube from (1,1,1) + box (0,1.5,1.5) volume 2*.5*.5
    # overlap of the second with the first: [1,2]x[1.5,2]x[1.5,2] = .25. Total 1 + .5 - .25.
    Y = np.array([[1.0, 1.0, 1.0], [0.0, 1.5, 1.5]])
    assert hypervolume(Y, [2.0, 2.0, 2.0]) == pytest.approx(1.25)


def test_hypervolume_depends_on_the_reference_point():
    assert hypervolume(STAIRS, [6.0, 6.0]) > hypervolume(STAIRS, REF)


def test_reference_point_is_nadir_plus_margin():
    ref = reference_point(STAIRS, margin=0.1)
    assert ref.tolist() == pytest.approx([4.0 + 0.3, 4.0 + 0.3])
    with pytest.raises(ValueError):
        reference_point(np.full((3, 2), np.nan))


def test_spread_even_front_near_zero_clustered_front_larger():
    ref_front = np.column_stack([np.linspace(0, 1, 11), np.linspace(1, 0, 11)])
    even = ref_front[::2]  # evenly spaced, touches both extremes
    assert spread(even, ref_front) == pytest.approx(0.0, abs=1e-12)
    clustered = np.array([[0.0, 1.0], [0.05, 0.95], [0.1, 0.9], [1.0, 0.0]])
    assert spread(clustered, ref_front) > 0.3
    # Missing an extreme costs: d_l > 0.
    one_end = ref_front[:6:1]
    assert spread(one_end, ref_front) > spread(even, ref_front)


def test_spread_hand_computed():
    # Reference extremes (0,1) and (1,0); front (0,1), (0.25,0.75), (1,0): ranges are 1 so no
    # scaling. d_f = d_l = 0, gaps g1 = .25*sqrt2, g2 = .75*sqrt2, mean .5*sqrt2.
    # Delta = (|g1-m| + |g2-m|) / (2m) = (.25+.25)/1 = 0.5.
    ref_front = np.array([[0.0, 1.0], [0.5, 0.5], [1.0, 0.0]])
    front = np.array([[0.0, 1.0], [0.25, 0.75], [1.0, 0.0]])
    assert spread(front, ref_front) == pytest.approx(0.5)


def test_exact_front_by_enumeration_on_a_small_space():
    # Space: x in {1,2,3,4}; runtime = 12/x, energy = 3*x + (x == 3) * 10 (a bad point), and
    # x == 4 failed. Values: x=1 (12,3), x=2 (6,6), x=3 (4,19) dominated? no: 4 < 6 runtime.
    # x=3 is on the front (fastest feasible); x=4 would dominate in runtime but is infeasible.
    xs = np.array([1, 2, 3, 4])
    Y = np.column_stack([12.0 / xs, 3.0 * xs + (xs == 3) * 10])
    feasible = xs != 4
    idx, front = exact_front(Y, feasible)
    assert idx.tolist() == [2, 1, 0]
    assert front.tolist() == [[4.0, 19.0], [6.0, 6.0], [12.0, 3.0]]
    # Without the failure flag x=4 (3, 12) would be on it: the flag matters.
    idx_all, _ = exact_front(Y)
    assert 3 in idx_all.tolist()


def test_a_3d_hypervolume_under_warnings_as_errors():
    """s32 tester T3: BoTorch's import warns that torch.jit.script is deprecated."""
    from tests.runtime.test_quiet_imports import under_warnings_as_errors

    proc = under_warnings_as_errors("""
        import numpy as np
        from hpcds1mpi.surrogates.pareto import hypervolume
        print(hypervolume(np.array([[1.0, 1.0, 1.0]]), np.array([2.0, 2.0, 2.0])))
        """)
    assert proc.returncode == 0 and proc.stdout.strip() == "1.0", proc.stderr[-2000:]
