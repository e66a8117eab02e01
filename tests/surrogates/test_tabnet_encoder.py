"""The numpy TabNet encoder's pieces against pytorch-tabnet's (the whole pass is compared with
torch's in test_embedding.py, through the estimator)."""

from __future__ import annotations

import numpy as np

from hpcds1mpi.surrogates.tabnet_encoder import sparsemax


def test_sparsemax_matches_pytorch_tabnet():
    import torch
    from pytorch_tabnet.sparsemax import Sparsemax

    z = np.random.default_rng(1).normal(size=(50, 7)).astype(np.float32) * 3
    want = Sparsemax(dim=-1)(torch.from_numpy(z.copy())).numpy()
    got = sparsemax(z)
    assert np.allclose(got, want, atol=1e-6)
    assert np.allclose(got.sum(axis=1), 1.0, atol=1e-5) and (got >= 0).all()
    assert (got == 0).any()  # sparse, unlike softmax


def test_a_far_input_saturates_the_gate_without_a_warning():
    """An input far from the training rows overflowed exp in the GLU gate: numpy's
    RuntimeWarning reached recommend's stderr and the serve log (s26 tester n 5); the gate is
    0 there, as a sigmoid is."""
    import warnings

    from hpcds1mpi.surrogates.tabnet_encoder import _glu_layer

    w = {"k.Wf": np.eye(2, 4, dtype=np.float32) * 1e3, "k.bf": np.zeros(4, np.float32)}
    w["k.Wf"][0, 2] = -1e3  # the gate of the first output goes to -1e6: exp(+1e6) overflows
    w["k.Wf64"] = w["k.Wf"].astype(np.float64)  # as fold_batch_norms keeps it
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = _glu_layer(np.array([[1e3, 1.0]], np.float32), w, "k")
    assert out[0, 0] == 0.0 and np.isfinite(out).all()
