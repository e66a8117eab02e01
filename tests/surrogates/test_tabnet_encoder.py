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
