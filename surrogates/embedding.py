"""TabNet attention embeddings: trained with torch, evaluated without it.

TabNet (pytorch-tabnet) is trained on the targets (standardised log runtime, log energy, ...);
the embedding of a row is the attentive encoder's output, the sum over decision steps of
``ReLU(d_step)`` (the vector TabNet's final linear layer maps to its prediction), dimension
``n_d``.

Prediction must not import torch (``recommend`` answers cold in <= 1.5 s and System 1 scores
10,000 configurations in milliseconds), so :meth:`TabNetEmbedding.fit` exports the encoder's
weights to numpy arrays (:func:`export_encoder`) and :meth:`TabNetEmbedding.transform` runs the
eval-mode forward pass of :mod:`.tabnet_encoder` (numpy, or compiled for big tables).
"""

from __future__ import annotations

import numpy as np

from hpcds1mpi.errors import DataError, ModelError
from hpcds1mpi.runtime import jit

from .tabnet_encoder import encoder_forward, encoder_rows, fold_batch_norms, pack_encoder

#: From this many rows on, :meth:`TabNetEmbedding.transform` runs the compiled row-wise pass
#: (numba): ~20 ms of CPU for 10,000 job-table rows where the numpy pass takes 33 ms on one
#: BLAS thread (measured here); below it numpy, which needs no numba import.
JIT_MIN_ROWS = 2048


# --------------------------------------------------------------------------------------------
# export from torch


def _export_bn(bn, key: str, out: dict) -> None:
    """Fold eval-mode batch norm into scale and shift (same arithmetic as torch, float32)."""
    mean = bn.running_mean.detach().cpu().numpy().astype(np.float32)
    var = bn.running_var.detach().cpu().numpy().astype(np.float32)
    weight = bn.weight.detach().cpu().numpy().astype(np.float32)
    bias = bn.bias.detach().cpu().numpy().astype(np.float32)
    scale = weight / np.sqrt(var + np.float32(bn.eps))
    out[key + ".scale"] = scale.astype(np.float32)
    out[key + ".shift"] = (bias - mean * scale).astype(np.float32)


def _export_glu_block(block, key: str, out: dict) -> None:
    for i, layer in enumerate(block.glu_layers):
        out[f"{key}.{i}.W"] = layer.fc.weight.detach().cpu().numpy().T.astype(np.float32).copy()
        _export_bn(layer.bn.bn, f"{key}.{i}.bn", out)


def _export_feat(transformer, key: str, out: dict) -> None:
    import torch

    if not isinstance(transformer.shared, torch.nn.Identity):
        _export_glu_block(transformer.shared, f"{key}.shared", out)
    if not isinstance(transformer.specifics, torch.nn.Identity):
        _export_glu_block(transformer.specifics, f"{key}.indep", out)


def export_encoder(encoder) -> dict:
    """Numpy arrays of a ``pytorch_tabnet.tab_network.TabNetEncoder`` (eval mode)."""
    out: dict[str, np.ndarray] = {}
    _export_bn(encoder.initial_bn, "initial_bn", out)
    _export_feat(encoder.initial_splitter, "init", out)
    for step in range(encoder.n_steps):
        _export_feat(encoder.feat_transformers[step], f"step.{step}", out)
        att = encoder.att_transformers[step]
        out[f"att.{step}.W"] = att.fc.weight.detach().cpu().numpy().T.astype(np.float32).copy()
        _export_bn(att.bn.bn, f"att.{step}.bn", out)
    out["group"] = encoder.group_attention_matrix.detach().cpu().numpy().astype(np.float32)
    return out


# --------------------------------------------------------------------------------------------
# the estimator


class TabNetEmbedding:
    """TabNet trained on the targets; transforms rows to its attentive encoder's output.

    scikit-learn conventions: :meth:`fit` returns self; fitted state ends in ``_``.

    Args:
        n_d, n_a, n_steps, gamma, n_independent, n_shared: TabNet architecture.
        max_epochs: training epochs (no early stopping: no validation split is held back).
        batch_size, virtual_batch_size: TabNet batch and ghost-batch sizes.
        max_rows: rows TabNet is trained on at most (a random subset; the embedding is then
            computed for every row in numpy). Keeps 231,000-row job tables within minutes.
        lr: Adam learning rate.
        momentum: batch-norm momentum (higher than TabNet's 0.02 so running statistics settle
            within the few hundred updates small tables give).
        seed: torch and subset seed.
        threads: torch threads while training.
        max_steps: at most this many optimiser steps in all: epochs are cut to
            ``ceil(max_steps / batches per epoch)`` on big tables (pytorch-tabnet takes ~0.1 s
            per step on this machine; 60 epochs of 20,000 rows would take minutes).
    """

    def __init__(self, n_d: int = 8, n_a: int = 8, n_steps: int = 3, gamma: float = 1.3,
                 n_independent: int = 1, n_shared: int = 1, max_epochs: int = 60,
                 batch_size: int = 1024, virtual_batch_size: int = 128, max_rows: int = 20000,
                 lr: float = 2e-2, momentum: float = 0.1, seed: int = 0, threads: int = 2,
                 clip: float = 10.0, max_steps: int = 400):
        self.n_d, self.n_a, self.n_steps, self.gamma = n_d, n_a, n_steps, gamma
        self.n_independent, self.n_shared = n_independent, n_shared
        self.max_epochs, self.batch_size = max_epochs, batch_size
        self.virtual_batch_size, self.max_rows = virtual_batch_size, max_rows
        self.lr, self.momentum, self.seed, self.threads, self.clip = lr, momentum, seed, threads, clip
        self.max_steps = max_steps

    # -- training (torch) ----------------------------------------------------------------
    def fit(self, X: np.ndarray, Y: np.ndarray) -> "TabNetEmbedding":
        """Train TabNet on targets ``Y``.

        Args:
            X: (n, f) features.
            Y: (n,) or (n, k) targets (finite; standardised here).
        """
        import torch

        from hpcds1mpi.runtime.quiet_imports import import_warnings_ignored

        with import_warnings_ignored():  # scipy.sparse.base's DeprecationWarning: s32 tester T3
            from pytorch_tabnet.tab_model import TabNetRegressor

        X = np.asarray(X, dtype=np.float64)
        Y = np.asarray(Y, dtype=np.float64)
        if Y.ndim == 1:
            Y = Y[:, None]
        if len(X) < 2 or not np.isfinite(Y).all() or not np.isfinite(X).all():
            raise DataError("TabNet needs at least 2 rows of finite features and targets")
        rng = np.random.default_rng(self.seed)
        if len(X) > self.max_rows:
            idx = rng.choice(len(X), self.max_rows, replace=False)
            X, Y = X[idx], Y[idx]
        self.x_mean_ = X.mean(axis=0)
        scale = X.std(axis=0)
        self.x_scale_ = np.where(scale > 0, scale, 1.0)
        self.y_mean_ = Y.mean(axis=0)
        y_scale = Y.std(axis=0)
        self.y_scale_ = np.where(y_scale > 0, y_scale, 1.0)
        Xs = np.clip((X - self.x_mean_) / self.x_scale_, -self.clip, self.clip).astype(np.float32)
        Ys = ((Y - self.y_mean_) / self.y_scale_).astype(np.float32)

        import warnings

        from .parallel import fit_threads

        previous = torch.get_num_threads()
        torch.set_num_threads(fit_threads(len(Xs), self.threads))
        try:
            model = TabNetRegressor(
                n_d=self.n_d, n_a=self.n_a, n_steps=self.n_steps, gamma=self.gamma,
                n_independent=self.n_independent, n_shared=self.n_shared,
                momentum=self.momentum, seed=self.seed, verbose=0, device_name="cpu",
                optimizer_params={"lr": self.lr},
            )
            batch = int(min(self.batch_size, len(Xs)))
            vbatch = int(min(self.virtual_batch_size, batch))
            per_epoch = int(np.ceil(len(Xs) / batch))
            self.epochs_ = int(min(self.max_epochs, max(1, np.ceil(self.max_steps / per_epoch))))
            with warnings.catch_warnings():
                # "No early stopping": intended, there is no validation split.
                warnings.simplefilter("ignore", UserWarning)
                model.fit(Xs, Ys, max_epochs=self.epochs_, patience=0, batch_size=batch,
                          virtual_batch_size=vbatch, drop_last=False)
        finally:
            torch.set_num_threads(previous)
        model.network.eval()
        self.torch_model_ = model
        encoder = model.network.tabnet.encoder
        weights = export_encoder(encoder)
        weights["x_mean"] = self.x_mean_
        weights["x_scale"] = self.x_scale_
        self.weights_ = weights
        self._folded = fold_batch_norms(weights)
        group = weights["group"]
        self.config_ = {
            "n_d": self.n_d, "n_steps": self.n_steps, "gamma": float(self.gamma),
            "n_shared": self.n_shared, "n_independent": self.n_independent,
            "clip": float(self.clip),
            "identity_groups": bool(group.shape[0] == group.shape[1]
                                    and np.array_equal(group, np.eye(group.shape[0]))),
        }
        self.n_features_in_ = X.shape[1]
        self.embedding_dim_ = self.n_d
        return self

    def transform_torch(self, X: np.ndarray) -> np.ndarray:
        """The same embedding through torch (reference for the numpy pass; training only)."""
        import torch

        if not hasattr(self, "torch_model_"):
            raise ModelError("this embedding was loaded from a bundle; torch model not kept")
        Xs = np.clip((np.asarray(X, dtype=np.float64) - self.x_mean_) / self.x_scale_,
                     -self.clip, self.clip).astype(np.float32)
        net = self.torch_model_.network
        net.eval()
        with torch.no_grad():
            steps, _ = net.tabnet.encoder(net.embedder(torch.from_numpy(Xs)))
            return torch.stack(steps, dim=0).sum(dim=0).numpy()

    # -- prediction (numpy only) ---------------------------------------------------------
    def transform(self, X: np.ndarray) -> np.ndarray:
        """Embed rows without torch.

        Args:
            X: (n, f) features in training column order.

        Returns:
            (n, n_d) float64 embedding.
        """
        if not hasattr(self, "weights_"):
            raise ModelError("embedding is not fitted")
        X = np.asarray(X)
        if X.ndim != 2 or X.shape[1] != self.n_features_in_:
            raise ModelError(
                f"embedding expects {self.n_features_in_} features, got {X.shape[-1]}")
        compiled = jit.compiled(encoder_rows) if len(X) >= JIT_MIN_ROWS else None
        if compiled is None:
            return encoder_forward(X, self._folded, self.config_).astype(np.float64)
        if getattr(self, "_packed", None) is None:
            self._packed = pack_encoder(self._folded, self.config_)
        out = np.empty((len(X), int(self.config_["n_d"])), dtype=np.float32)
        compiled(np.ascontiguousarray(X, dtype=np.float64), out, 0, len(X), *self._packed)
        return out.astype(np.float64)

    # -- persistence ---------------------------------------------------------------------
    def to_arrays(self) -> tuple[dict, dict]:
        """(arrays for ``np.savez``, JSON-able config)."""
        meta = {"config": self.config_, "n_features_in": int(self.n_features_in_),
                "params": {k: getattr(self, k) for k in (
                    "n_d", "n_a", "n_steps", "gamma", "n_independent", "n_shared", "max_epochs",
                    "batch_size", "virtual_batch_size", "max_rows", "lr", "momentum", "seed",
                    "threads", "clip", "max_steps")},
                "epochs_run": int(getattr(self, "epochs_", self.max_epochs))}
        return dict(self.weights_), meta

    @classmethod
    def from_arrays(cls, arrays: dict, meta: dict) -> "TabNetEmbedding":
        obj = cls(**meta["params"])
        obj.weights_ = {k: np.asarray(v) for k, v in arrays.items()}
        obj.config_ = dict(meta["config"])
        obj.n_features_in_ = int(meta["n_features_in"])
        obj.embedding_dim_ = int(obj.config_["n_d"])
        obj._folded = fold_batch_norms(obj.weights_)
        obj.x_mean_ = obj.weights_["x_mean"]
        obj.x_scale_ = obj.weights_["x_scale"]
        return obj
