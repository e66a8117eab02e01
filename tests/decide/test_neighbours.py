"""The guard's nearest-neighbour distance: the k smallest by argmin passes, against sorting."""

import numpy as np

from hpcds1mpi.decide.neighbours import knn_distance, pop_smallest


def test_pop_smallest_is_the_sorted_head_with_ties_and_nan():
    rng = np.random.default_rng(3)
    values = rng.integers(0, 5, size=(40, 30)).astype(float)  # many ties
    values[rng.random(values.shape) < 0.1] = np.nan
    want = np.sort(np.where(np.isnan(values), np.inf, values), axis=1)[:, :4]
    got = pop_smallest(values.copy(), 4)
    assert np.array_equal(got, want)


def test_knn_distance_matches_brute_force():
    rng = np.random.default_rng(4)
    query, ref = rng.normal(size=(27, 6)), rng.normal(size=(300, 6))
    brute = np.sqrt(((query[:, None, :] - ref[None, :, :]) ** 2).sum(axis=2))
    want = np.sort(brute, axis=1)[:, :3].mean(axis=1)
    got = knn_distance(query, ref, 3)
    assert np.allclose(got, want, rtol=1e-9, atol=1e-12)
    # The kept norms give the same bits as computing them.
    assert np.array_equal(knn_distance(query, ref, 3, np.sum(ref ** 2, axis=1)), got)


def test_knn_distance_edges():
    query = np.zeros((2, 3))
    assert np.all(np.isinf(knn_distance(query, np.empty((0, 3)), 3)))
    one = np.ones((1, 3))  # fewer reference rows than k: all of them
    assert np.allclose(knn_distance(query, one, 3), np.sqrt(3.0))
