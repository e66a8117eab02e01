"""TabNet embedding: the numpy forward pass equals torch's, and needs no torch."""

from __future__ import annotations

import numpy as np
import pytest

from hpcds1mpi.surrogates.embedding import TabNetEmbedding


@pytest.fixture(scope="module")
def fitted():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 9)) * np.array([1, 10, 100, 1, 1, 1, 1, 1, 1e6])
    Y = np.column_stack([X[:, 0] ** 2 + X[:, 1] / 10, np.sin(X[:, 2] / 100)])
    emb = TabNetEmbedding(n_d=4, n_a=4, n_steps=3, max_epochs=4, batch_size=128,
                          virtual_batch_size=64, threads=1).fit(X, Y)
    return emb, rng.normal(size=(300, 9)) * np.array([1, 10, 100, 1, 1, 1, 1, 1, 1e6])


def test_numpy_embedding_equals_torch(fitted):
    emb, X = fitted
    got = emb.transform(X)
    want = emb.transform_torch(X)
    assert got.shape == (300, 4)
    scale = max(1.0, float(np.abs(want).max()))
    assert np.abs(got - want).max() <= 2e-5 * scale
    assert np.abs(want).max() > 0  # not a trivially zero embedding


def test_numpy_pass_catches_a_wrong_weight(fitted):
    emb, X = fitted
    broken = TabNetEmbedding.from_arrays(*emb.to_arrays())
    key = "step.0.indep.0.W"
    broken.weights_[key] = broken.weights_[key] * 1.1
    from hpcds1mpi.surrogates.tabnet_encoder import fold_batch_norms

    broken._folded = fold_batch_norms(broken.weights_)
    assert np.abs(broken.transform(X) - emb.transform_torch(X)).max() > 1e-3


def test_round_trip_through_arrays(fitted):
    emb, X = fitted
    again = TabNetEmbedding.from_arrays(*emb.to_arrays())
    assert np.array_equal(again.transform(X), emb.transform(X))


def test_wrong_width_is_refused(fitted):
    from hpcds1mpi.errors import ModelError

    emb, X = fitted
    with pytest.raises(ModelError, match="expects 9 features"):
        emb.transform(X[:, :5])


def test_compiled_embedding_equals_the_numpy_pass(fitted, monkeypatch):
    """Tables of JIT_MIN_ROWS rows or more take the compiled row-wise pass (numba): the same
    embedding as the numpy pass up to float32 rounding."""
    pytest.importorskip("numba")
    from hpcds1mpi.runtime import jit
    from hpcds1mpi.surrogates import embedding

    emb, X = fitted
    big = np.resize(X, (embedding.JIT_MIN_ROWS + 10, X.shape[1]))
    big[::3, 0] *= 50  # clipped inputs
    compiled = emb.transform(big)
    monkeypatch.setenv(jit.NO_JIT_ENV, "1")
    plain = emb.transform(big)
    scale = max(1.0, float(np.abs(plain).max()))
    assert np.abs(compiled - plain).max() <= 2e-5 * scale
    assert np.abs(plain).max() > 0
    # feature groups as a matrix (identity here) give the same embedding as the shortcut
    packed = list(emb._packed)
    packed[-2] = False
    monkeypatch.setattr(emb, "_packed", tuple(packed))
    monkeypatch.delenv(jit.NO_JIT_ENV)
    assert np.array_equal(emb.transform(big), compiled)
    # and it is really another pass: a wrong weight there shows
    packed = list(emb._packed)
    packed[4] = packed[4] * 1.1  # the first GLU layers
    monkeypatch.setattr(emb, "_packed", tuple(packed))
    assert np.abs(emb.transform(big) - plain).max() > 1e-3


def test_training_under_warnings_as_errors_is_not_failed_by_tabnet_s_import():
    """Was (s32 tester T3): PYTHONWARNINGS=error hpcds1mpi train died in a traceback:
    pytorch_tabnet imports scipy.sparse.base, which warns DeprecationWarning."""
    from tests.runtime.test_quiet_imports import under_warnings_as_errors

    proc = under_warnings_as_errors("""
        import numpy as np
        from hpcds1mpi.surrogates.embedding import TabNetEmbedding
        X = np.random.default_rng(0).normal(size=(64, 3))
        emb = TabNetEmbedding(n_d=2, n_a=2, n_steps=1, max_epochs=1, batch_size=32,
                              virtual_batch_size=16, threads=1).fit(X, X[:, 0])
        print(emb.transform(X).shape)
        """)
    assert proc.returncode == 0 and proc.stdout.split() == ["(64,", "2)"], proc.stderr[-2000:]


def test_a_rows_embedding_does_not_depend_on_the_rows_embedded_with_it(fitted):
    """s40 tester D13: a float32 product rounded a row differently for other row counts, and
    the trees split on the embedding, so myapp 1 x 2 read 91.7-188 ms predicted alone and
    91.7-170 ms in its 12-row recommend grid. Each row the same, bit for bit, in any table."""
    emb, X = fitted
    whole = emb.transform(X)
    for rows in (1, 2, 3, 4, 7, 12, 33, 129):
        for start in (0, 5):
            assert np.array_equal(emb.transform(X[start:start + rows]),
                                  whole[start:start + rows]), (rows, start)



def test_the_float64_weights_are_made_once_and_embed_as_the_cast_did(fitted, monkeypatch):
    """The products' float64 weights are copies made when the weights load (cast on every
    call they cost 10-20 %, s40 review), and the embedding is the same to the bit."""
    from hpcds1mpi.surrogates import tabnet_encoder

    emb, X = fitted
    folded = emb._folded
    matrices = [k for k in folded if k.endswith(".Wf") or k.startswith("att.")
                and k.endswith(".W") or k == "group"]
    assert matrices and all(folded[k + "64"].dtype == np.float64 and np.array_equal(
        folded[k + "64"], folded[k].astype(np.float64)) for k in matrices)
    now = emb.transform(X[:7])

    def cast_each_call(a, w, key):  # the product before: the weights cast on every call
        return (a.astype(np.float64) @ w[key].astype(np.float64)).astype(np.float32)

    monkeypatch.setattr(tabnet_encoder, "_product", cast_each_call)
    assert np.array_equal(emb.transform(X[:7]), now)
    monkeypatch.undo()  # the feature groups as a matrix (identity here): its copy too
    monkeypatch.setattr(emb, "config_", {**emb.config_, "identity_groups": False})
    assert np.array_equal(emb.transform(X[:7]), now)
