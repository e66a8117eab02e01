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
    """The kept factors of one GP: training inputs, hyperparameters, ``L``, ``W``, ``sum W^2``."""

    def __init__(self, X_train: np.ndarray, hyper: dict, L: np.ndarray, W: np.ndarray,
                 prior_var: np.ndarray):
        self.X_train = X_train
        self.hyper = hyper
        self.L = L
        self.W = W  # (n_candidates, n): row i is L^-1 k(X, candidate i)
        self.sumsq = np.einsum("ij,ij->i", W, W)
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
        gps = list(getattr(model, "models", [model]))[:n_objectives]
        if len(gps) < n_objectives or not all(_supported(gp) for gp in gps):
            return None
        means, sds = [], []
        for j, gp in enumerate(gps):
            mean, var = self._one(j, gp)
            means.append(mean[rows])
            sds.append(np.sqrt(np.maximum(var[rows], 0.0)))
        return np.stack(means, axis=1), np.stack(sds, axis=1)

    def _one(self, j: int, gp) -> tuple[np.ndarray, np.ndarray]:
        import torch
        from scipy.linalg import solve_triangular

        with torch.no_grad():
            X_train = gp.train_inputs[0].detach().cpu().numpy()
            hyper = {k: v.detach().cpu().numpy().copy() for k, v in gp.state_dict().items()
                     if not k.startswith(_NOT_HYPER)}
            state = self.states.get(j)
            n_old = 0 if state is None else len(state.X_train)
            same = (state is not None and n_old <= len(X_train)
                    and _same(state.hyper, hyper)
                    and np.array_equal(state.X_train, X_train[:n_old]))
            if not same:
                state = self._factorise(gp, X_train, hyper)
                self.states[j] = state
                self.full_solves += 1
            elif n_old < len(X_train):
                self._extend(gp, state, X_train)
            y = gp.train_targets.detach().cpu().numpy().reshape(-1)
            c = float(gp.mean_module.constant.detach().reshape(-1)[0])
            beta = solve_triangular(state.L, y - c, lower=True)
            mean = c + state.W @ beta
            var = state.prior_var - state.sumsq
            tf = gp.outcome_transform
            mu = float(tf.means.detach().reshape(-1)[0])
            sd = float(tf.stdvs.detach().reshape(-1)[0])
        return mean * sd + mu, var * sd * sd

    def _factorise(self, gp, X_train: np.ndarray, hyper: dict) -> _GPState:
        import torch
        from scipy.linalg import cholesky, solve_triangular

        Xt = torch.as_tensor(X_train, dtype=self.X.dtype)
        K = gp.covar_module(Xt).to_dense().cpu().numpy()
        K = K + float(gp.likelihood.noise.detach().reshape(-1)[0]) * np.eye(len(K))
        L = cholesky(K, lower=True)
        cross = gp.covar_module(Xt, self.X).to_dense().cpu().numpy()  # (n, k)
        W = solve_triangular(L, cross, lower=True).T.copy()
        prior = gp.covar_module(self.X, self.X, diag=True).cpu().numpy()
        return _GPState(X_train.copy(), hyper, L, W, prior)

    def _extend(self, gp, state: _GPState, X_train: np.ndarray) -> None:
        """Append the new training rows to ``L`` and ``W``, one at a time."""
        import torch
        from scipy.linalg import solve_triangular

        noise = float(gp.likelihood.noise.detach().reshape(-1)[0])
        for i in range(len(state.X_train), len(X_train)):
            x = torch.as_tensor(X_train[i:i + 1], dtype=self.X.dtype)
            old = torch.as_tensor(state.X_train, dtype=self.X.dtype)
            k_old = gp.covar_module(old, x).to_dense().cpu().numpy()[:, 0]  # (n,)
            k_self = float(gp.covar_module(x, x, diag=True).reshape(-1)[0]) + noise
            k_cand = gp.covar_module(x, self.X).to_dense().cpu().numpy()[0]  # (k,)
            l = solve_triangular(state.L, k_old, lower=True)
            d = np.sqrt(max(k_self - float(l @ l), 1e-300))
            n = len(state.L)
            L = np.zeros((n + 1, n + 1))
            L[:n, :n], L[n, :n], L[n, n] = state.L, l, d
            w = (k_cand - state.W @ l) / d
            state.L = L
            state.W = np.concatenate([state.W, w[:, None]], axis=1)
            state.sumsq = state.sumsq + w * w
            state.X_train = np.vstack([state.X_train, X_train[i:i + 1]])


def _same(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)


def _supported(gp) -> bool:
    """A single-output exact GP with a constant mean, homoskedastic Gaussian noise, no input
    transform and a standardising outcome transform: what :class:`~.loop.GPFitter` builds."""
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
