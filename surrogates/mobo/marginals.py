"""Each objective GP's posterior mean and standard deviation at every candidate, kept across
BO iterations and extended by one Cholesky row per new training point.

:func:`~.pruning.improvement_outlook` needs, every iteration, the marginal posterior of every
remaining candidate under each objective GP. Asked of GPyTorch, that is a fresh
``O(k n^2)`` solve per GP per iteration (``k`` candidates, ``n`` training points): about half
of a 300-evaluation run on 2,688 candidates. Between hyperparameter refits the loop only
conditions the GPs on one more point (:class:`~.loop.GPFitter`), and then the exact posterior
follows from the previous one by a rank-one step: with ``L`` the Cholesky factor of
``K(X, X) + noise I`` and ``W = L^-1 K(X, candidates)``, a new point adds one row to ``L`` and
one row to ``W`` (``O(k n)``), and

    mean = c + W^T L^-1 (y - c),    variance = k(x, x) - sum(W^2)

in the GP's standardised units, un-standardised by its outcome transform. The kernel values
come from the GP's own kernel module, so the numbers are GPyTorch's up to rounding (about
1e-12 relative, tested); a new hyperparameter set, a training set that is not the previous one
plus new rows, or a model this does not recognise is computed from scratch (or, for the
last, left to GPyTorch: :meth:`Marginals.of` returns None).
"""

from __future__ import annotations

import numpy as np

#: Outcome statistics recomputed on every data set: not hyperparameters.
_NOT_HYPER = ("outcome_transform",)


class _GPState:
    """The kept factors of one GP: training inputs, hyperparameters, ``L``, ``W``, ``sum W^2``
    (torch tensors: the linear algebra stays on torch's threads, which the loop sets; numpy's
    and SciPy's BLAS spun both cores of a busy machine for a 150 x 150 Cholesky)."""

    def __init__(self, X_train, hyper: dict, L, W, prior_var):
        self.X_train = X_train
        self.hyper = hyper
        self.L = L
        self.W = W  # (n_candidates, n): row i is L^-1 k(X, candidate i)
        self.sumsq = (W * W).sum(dim=1)
        self.prior_var = prior_var


class Marginals:
    """Posterior marginals of the objective GPs at a fixed candidate set (see module doc).

    Args:
        X: ``(k, d)`` every candidate (a torch tensor, the loop's ``X_all``).
    """

    def __init__(self, X) -> None:
        self.X = X
        self.states: dict[int, _GPState] = {}
        self.full_solves = 0  # how often a GP was factorised from scratch (tests, diagnosis)

    def of(self, model, n_objectives: int, rows: np.ndarray):
        """``(mean (len(rows), m), sd (len(rows), m))`` of outputs ``0..m-1`` at candidates
        ``rows``, or None when the model is not one this can follow (GPyTorch answers then).
        """
        import torch

        gps = list(getattr(model, "models", [model]))[:n_objectives]
        if len(gps) < n_objectives or not all(_supported(gp) for gp in gps):
            return None
        means, sds = [], []
        with torch.no_grad():
            for j, gp in enumerate(gps):
                mean, var = self._one(j, gp)
                means.append(mean.cpu().numpy()[rows])
                sds.append(np.sqrt(np.maximum(var.cpu().numpy()[rows], 0.0)))
        return np.stack(means, axis=1), np.stack(sds, axis=1)

    def _one(self, j: int, gp):
        import torch

        X_train = gp.train_inputs[0].detach()
        hyper = {k: v.detach().clone() for k, v in gp.state_dict().items()
                 if not k.startswith(_NOT_HYPER)}
        state = self.states.get(j)
        n_old = 0 if state is None else len(state.X_train)
        same = (state is not None and n_old <= len(X_train)
                and _same(state.hyper, hyper)
                and torch.equal(state.X_train, X_train[:n_old]))
        if not same:
            state = self._factorise(gp, X_train, hyper)
            self.states[j] = state
            self.full_solves += 1
        elif n_old < len(X_train):
            self._extend(gp, state, X_train)
        y = gp.train_targets.detach().reshape(-1, 1)
        c = gp.mean_module.constant.detach().reshape(-1)[0]
        beta = torch.linalg.solve_triangular(state.L, y - c, upper=False)
        mean = c + (state.W @ beta)[:, 0]
        var = state.prior_var - state.sumsq
        tf = gp.outcome_transform
        mu = tf.means.detach().reshape(-1)[0]
        sd = tf.stdvs.detach().reshape(-1)[0]
        return mean * sd + mu, var * sd * sd

    def _factorise(self, gp, X_train, hyper: dict) -> _GPState:
        import torch

        K = gp.covar_module(X_train).to_dense()
        K = K + _noise(gp) * torch.eye(len(K), dtype=K.dtype)
        L = torch.linalg.cholesky(K)
        cross = gp.covar_module(X_train, self.X).to_dense()  # (n, k)
        W = torch.linalg.solve_triangular(L, cross, upper=False).T.contiguous()
        prior = gp.covar_module(self.X, self.X, diag=True)
        return _GPState(X_train.clone(), hyper, L, W, prior)

    def _extend(self, gp, state: _GPState, X_train) -> None:
        """Append the new training rows to ``L`` and ``W``, one at a time."""
        import torch

        noise = _noise(gp)
        for i in range(len(state.X_train), len(X_train)):
            x = X_train[i:i + 1]
            k_old = gp.covar_module(state.X_train, x).to_dense()  # (n, 1)
            k_self = gp.covar_module(x, x, diag=True).reshape(-1)[0] + noise
            k_cand = gp.covar_module(x, self.X).to_dense()[0]  # (k,)
            l = torch.linalg.solve_triangular(state.L, k_old, upper=False)[:, 0]
            d = torch.sqrt(torch.clamp(k_self - l @ l, min=1e-300))
            n = len(state.L)
            L = torch.zeros((n + 1, n + 1), dtype=state.L.dtype)
            L[:n, :n], L[n, :n], L[n, n] = state.L, l, d
            w = (k_cand - state.W @ l) / d
            state.L = L
            state.W = torch.cat([state.W, w[:, None]], dim=1)
            state.sumsq = state.sumsq + w * w
            state.X_train = torch.cat([state.X_train, x], dim=0)


def _noise(gp):
    return gp.likelihood.noise.detach().reshape(-1)[0]


def _same(a: dict, b: dict) -> bool:
    import torch

    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def _supported(gp) -> bool:
    """A single-output exact GP with a constant mean, homoskedastic Gaussian noise, no input
    transform and a standardising outcome transform: what :class:`~.loop.GPFitter` builds."""
    from hpcds1mpi.runtime.quiet_imports import import_warnings_ignored

    with import_warnings_ignored():  # torch.jit.script's DeprecationWarning: s32 tester T3
        from botorch.models import SingleTaskGP
        from botorch.models.transforms.outcome import Standardize
        from gpytorch.likelihoods import GaussianLikelihood
        from gpytorch.means import ConstantMean

    return (isinstance(gp, SingleTaskGP) and getattr(gp, "num_outputs", 1) == 1
            and isinstance(getattr(gp, "outcome_transform", None), Standardize)
            and getattr(gp, "input_transform", None) is None
            and isinstance(gp.mean_module, ConstantMean)
            and isinstance(gp.likelihood, GaussianLikelihood)
            and len(gp.train_inputs) == 1 and gp.train_inputs[0].ndim == 2)
