"""TabNet attention embeddings: trained with torch, evaluated in numpy.

TabNet (pytorch-tabnet) is trained on the targets (standardised log runtime, log energy, ...);
the embedding of a row is the attentive encoder's output, the sum over decision steps of
``ReLU(d_step)`` (the vector TabNet's final linear layer maps to its prediction), dimension
``n_d``.

Prediction must not import torch (``recommend`` answers cold in <= 1.5 s and System 1 scores
10,000 configurations in milliseconds), so :meth:`TabNetEmbedding.fit` exports the encoder's
weights to numpy arrays and :func:`encoder_forward` re-implements its eval-mode forward pass:
the initial batch norm, the feature transformers (shared and step-specific GLU blocks, each
``fc -> batch norm -> GLU``, residual blocks scaled by sqrt(0.5)), the attentive transformers
(``fc -> batch norm -> x prior -> sparsemax``), the prior update ``prior *= gamma - M`` and the
feature masks. Ghost batch norm in eval mode is plain batch norm with the running statistics.
"""

from __future__ import annotations

import numpy as np

from hpcds1mpi.runtime import jit
from hpcds1mpi.errors import DataError, ModelError

_SQRT_HALF = np.float32(np.sqrt(0.5))


# --------------------------------------------------------------------------------------------
# numpy forward pass


def sparsemax(z: np.ndarray) -> np.ndarray:
    """Sparsemax along the last axis (Martins & Astudillo 2016), as pytorch-tabnet computes it.

    Args:
        z: (n, k) scores.

    Returns:
        (n, k) non-negative weights summing to 1 per row.
    """
    z = z - z.max(axis=1, keepdims=True)
    srt = -np.sort(-z, axis=1)
    cumsum = np.cumsum(srt, axis=1) - 1.0
    rhos = np.arange(1, z.shape[1] + 1, dtype=z.dtype)
    support = rhos * srt > cumsum
    k = support.sum(axis=1, keepdims=True)
    tau = np.take_along_axis(cumsum, k - 1, axis=1) / k.astype(z.dtype)
    return np.maximum(z - tau, 0.0)


def _bn(x: np.ndarray, w: dict, key: str) -> np.ndarray:
    return x * w[key + ".scale"] + w[key + ".shift"]


def _glu_layer(x: np.ndarray, w: dict, key: str) -> np.ndarray:
    # Batch norm is folded into the layer (W * scale, shift as bias) when the weights load.
    h = x @ w[key + ".Wf"]
    h += w[key + ".bf"]
    half = h.shape[1] // 2
    gate = h[:, half:]
    # a * sigmoid(b) == a / (1 + exp(-b)), computed in place: this pass runs on every call.
    np.negative(gate, out=gate)
    np.exp(gate, out=gate)
    gate += 1.0
    return np.divide(h[:, :half], gate)


def _glu_block(x: np.ndarray, w: dict, key: str, n_glu: int, first: bool) -> np.ndarray:
    start = 0
    if first:
        x = _glu_layer(x, w, f"{key}.0")
        start = 1
    for i in range(start, n_glu):
        x = x + _glu_layer(x, w, f"{key}.{i}")
        x *= _SQRT_HALF
    return x


def _feat_transformer(x: np.ndarray, w: dict, key: str, n_shared: int, n_indep: int
                      ) -> np.ndarray:
    if n_shared > 0:
        x = _glu_block(x, w, f"{key}.shared", n_shared, first=True)
    if n_indep > 0:
        x = _glu_block(x, w, f"{key}.indep", n_indep, first=n_shared == 0)
    return x


def fold_batch_norms(w: dict) -> dict:
    """Add ``<layer>.Wf`` / ``<layer>.bf``: each GLU layer's batch norm folded into its weights
    (and float32 copies of the input standardisation)."""
    out = dict(w)
    if "x_mean" in w:
        out["x_mean32"] = np.asarray(w["x_mean"], dtype=np.float32)
        out["x_inv_scale32"] = (1.0 / np.asarray(w["x_scale"], dtype=np.float64)).astype(np.float32)
    for key in [k[:-2] for k in w if k.endswith(".W") and not k.startswith("att.")]:
        scale, shift = w[key + ".bn.scale"], w[key + ".bn.shift"]
        out[key + ".Wf"] = (w[key + ".W"] * scale[None, :]).astype(np.float32)
        out[key + ".bf"] = shift.astype(np.float32)
    return out


def encoder_forward(X: np.ndarray, w: dict, config: dict) -> np.ndarray:
    """Eval-mode TabNet encoder in numpy.

    Args:
        X: (n, f) raw features (standardised here with the recorded mean and scale).
        w: exported weights (:meth:`TabNetEmbedding.weights_`) after :func:`fold_batch_norms`.
        config: ``n_d``, ``n_steps``, ``gamma``, ``n_shared``, ``n_independent``.

    Returns:
        (n, n_d) float32 embedding: sum over steps of ReLU(step output).
    """
    n_d, n_steps, gamma = config["n_d"], config["n_steps"], np.float32(config["gamma"])
    n_shared, n_indep = config["n_shared"], config["n_independent"]
    # Standardise, clip, initial batch norm: in place on one float32 copy (a hot path).
    x = np.array(X, dtype=np.float32)
    x -= w["x_mean32"]
    x *= w["x_inv_scale32"]
    np.clip(x, -config["clip"], config["clip"], out=x)
    x *= w["initial_bn.scale"]
    x += w["initial_bn.shift"]
    prior = np.ones((x.shape[0], w["group"].shape[0]), dtype=np.float32)
    att = _feat_transformer(x, w, "init", n_shared, n_indep)[:, n_d:]
    total = np.zeros((x.shape[0], n_d), dtype=np.float32)
    identity_groups = config.get("identity_groups", True)
    for step in range(n_steps):
        scores = _bn(att @ w[f"att.{step}.W"], w, f"att.{step}.bn") * prior
        mask = sparsemax(scores)
        prior = (gamma - mask) * prior
        feature_mask = mask if identity_groups else mask @ w["group"]
        out = _feat_transformer(feature_mask * x, w, f"step.{step}", n_shared, n_indep)
        total += np.maximum(out[:, :n_d], 0.0)
        att = out[:, n_d:]
    return total


#: From this many rows on, :meth:`TabNetEmbedding.transform` runs the compiled row-wise pass
#: (numba): ~20 ms of CPU for 10,000 job-table rows where the numpy pass takes 33 ms on one
#: BLAS thread (measured here); below it numpy, which needs no numba import.
JIT_MIN_ROWS = 2048


def pack_encoder(w: dict, config: dict) -> tuple:
    """The folded weights as the dense arrays :func:`_encoder_rows` takes.

    Every feature transformer (the initial splitter, then one per step) is the same stack of
    GLU layers: the first maps the f (masked) inputs, each further one is residual on the
    previous output. Its layers' weights are stacked as ``W0`` (T, f, 2h) and ``Wr``
    (T, L-1, h, 2h), where h = n_d + n_a and L = n_shared + n_independent.
    """
    n_steps = config["n_steps"]
    names = [f"shared.{i}" for i in range(config["n_shared"])] + \
        [f"indep.{i}" for i in range(config["n_independent"])]
    transformers = ["init"] + [f"step.{s}" for s in range(n_steps)]
    W0 = np.stack([w[f"{t}.{names[0]}.Wf"] for t in transformers])
    b0 = np.stack([w[f"{t}.{names[0]}.bf"] for t in transformers])
    h = W0.shape[2] // 2
    rest = names[1:]
    Wr = np.stack([np.stack([w[f"{t}.{n}.Wf"] for n in rest]) if rest else
                   np.zeros((0, h, 2 * h), np.float32) for t in transformers])
    br = np.stack([np.stack([w[f"{t}.{n}.bf"] for n in rest]) if rest else
                   np.zeros((0, 2 * h), np.float32) for t in transformers])
    attW = np.stack([w[f"att.{s}.W"] for s in range(n_steps)])
    att_scale = np.stack([w[f"att.{s}.bn.scale"] for s in range(n_steps)])
    att_shift = np.stack([w[f"att.{s}.bn.shift"] for s in range(n_steps)])
    f32 = [np.ascontiguousarray(a, dtype=np.float32) for a in (
        w["x_mean32"], w["x_inv_scale32"], w["initial_bn.scale"], w["initial_bn.shift"],
        W0, b0, Wr, br, attW, att_scale, att_shift, w["group"])]
    return (*f32, np.float32(config["clip"]), np.float32(config["gamma"]),
            bool(config.get("identity_groups", True)), int(config["n_d"]))


def _encoder_rows(X, out, r0, r1, mean, inv_scale, bn_scale, bn_shift, W0, b0, Wr, br, attW,
                  att_scale, att_shift, group, clip, gamma, identity,
                  n_d):  # pragma: no cover - runs compiled
    """:func:`encoder_forward` of rows [r0, r1) of X into ``out`` (n, n_d), one row at a time
    with every intermediate in cache (the numpy pass's arithmetic, in float32)."""
    f = X.shape[1]
    h2 = W0.shape[2]
    h = h2 // 2
    k = attW.shape[2]
    half = np.float32(np.sqrt(0.5))
    one = np.float32(1.0)
    x = np.empty(f, np.float32)
    xin = np.empty(f, np.float32)
    pre = np.empty(h2, np.float32)
    cur = np.empty(h, np.float32)
    prior = np.empty(k, np.float32)
    z = np.empty(k, np.float32)
    active = np.empty(f, np.int64)
    for r in range(r0, r1):
        for j in range(f):
            v = (np.float32(X[r, j]) - mean[j]) * inv_scale[j]
            v = min(max(v, -clip), clip)
            x[j] = v * bn_scale[j] + bn_shift[j]
            xin[j] = x[j]
        prior[:] = one
        for j in range(n_d):
            out[r, j] = 0.0
        # transformer t = 0 is the initial splitter, t = s + 1 the transformer of step s
        for t in range(W0.shape[0]):
            # GLU stack: first layer on the (masked) inputs, then residual layers
            pre[:] = b0[t]
            nz = 0
            for j in range(f):  # the features sparsemax left in, gathered without branches
                active[nz] = j
                nz += xin[j] != 0.0
            for q in range(nz):
                j = active[q]
                xj = xin[j]
                for i in range(h2):
                    pre[i] += xj * W0[t, j, i]
            for i in range(h):
                cur[i] = pre[i] / (one + np.exp(-pre[h + i]))
            for layer in range(Wr.shape[1]):
                pre[:] = br[t, layer]
                for j in range(h):
                    cj = cur[j]
                    for i in range(h2):
                        pre[i] += cj * Wr[t, layer, j, i]
                for i in range(h):
                    cur[i] = (cur[i] + pre[i] / (one + np.exp(-pre[h + i]))) * half
            if t > 0:
                for j in range(n_d):
                    out[r, j] += max(cur[j], np.float32(0.0))
            if t == attW.shape[0]:
                break
            # attentive transformer of step t: scores, batch norm, prior, sparsemax
            for i in range(k):
                z[i] = 0.0
            for j in range(h - n_d):
                aj = cur[n_d + j]
                for i in range(k):
                    z[i] += aj * attW[t, j, i]
            top = -np.inf
            for i in range(k):
                z[i] = (z[i] * att_scale[t, i] + att_shift[t, i]) * prior[i]
                top = max(top, z[i])
            # sparsemax threshold (Michelot's projection onto the simplex: the exact tau of
            # the sort-based rule, in a few O(k) passes): drop scores <= tau until none drop
            tau = np.float32(0.0)
            for i in range(k):
                z[i] -= top
                tau += z[i]
            count = k
            tau = (tau - one) / np.float32(count)
            while True:
                total = np.float32(0.0)
                kept = 0
                for i in range(k):  # branch-free: which scores stay is data, not control
                    above = z[i] > tau
                    total += z[i] * above
                    kept += above
                if kept == count:
                    break
                count = kept
                tau = (total - one) / np.float32(count)
            for i in range(k):
                m = max(z[i] - tau, np.float32(0.0))
                prior[i] = (gamma - m) * prior[i]
                z[i] = m
            for j in range(f):
                if identity:
                    xin[j] = z[j] * x[j]
                else:
                    acc = np.float32(0.0)
                    for i in range(k):
                        acc += z[i] * group[i, j]
                    xin[j] = acc * x[j]


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

        from .models import fit_threads

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
        compiled = jit.compiled(_encoder_rows) if len(X) >= JIT_MIN_ROWS else None
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
