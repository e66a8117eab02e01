"""TabNet's eval-mode attentive encoder without torch: a numpy pass and a compiled row-wise pass.

:func:`encoder_forward` re-implements the encoder of pytorch-tabnet on exported weights (see
:func:`~.embedding.export_encoder`): the initial batch norm, the feature transformers (shared
and step-specific GLU blocks, each ``fc -> batch norm -> GLU``, residual blocks scaled by
sqrt(0.5)), the attentive transformers (``fc -> batch norm -> x prior -> sparsemax``), the prior
update ``prior *= gamma - M`` and the feature masks. Ghost batch norm in eval mode is plain
batch norm with the running statistics. :func:`encoder_rows` is the same arithmetic one row at
a time, for numba (:func:`hpcds1mpi.runtime.jit.compiled`), on the arrays of
:func:`pack_encoder`.
"""

from __future__ import annotations

import numpy as np

_SQRT_HALF = np.float32(np.sqrt(0.5))
#: Suffix of a weight matrix's float64 copy, the one :func:`_product` multiplies by.
_F64 = "64"


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


def _product(a: np.ndarray, w: dict, key: str) -> np.ndarray:
    """``a @ w[key]`` (float32) the same for a row whatever rows are multiplied with it: summed
    in float64 (each float32 product exact) and rounded once. A float32 BLAS product rounds a
    row differently for other row counts, and the trees split on the embedding: myapp 1 x 2
    read 91.7-188 ms named alone and 91.7-170 ms in its 12-row grid (s40 tester D13). The
    weights' float64 copy ``w[key + "64"]`` is made once by :func:`fold_batch_norms` (cast
    on every call it cost 10-20 %, s40 review)."""
    return (a.astype(np.float64) @ w[key + _F64]).astype(np.float32)


def _bn(x: np.ndarray, w: dict, key: str) -> np.ndarray:
    return x * w[key + ".scale"] + w[key + ".shift"]


def _glu_layer(x: np.ndarray, w: dict, key: str) -> np.ndarray:
    # Batch norm is folded into the layer (W * scale, shift as bias) when the weights load.
    h = _product(x, w, key + ".Wf")
    h += w[key + ".bf"]
    half = h.shape[1] // 2
    gate = h[:, half:]
    # a * sigmoid(b) == a / (1 + exp(-b)), computed in place: this pass runs on every call.
    np.negative(gate, out=gate)
    with np.errstate(over="ignore"):  # exp -> inf gives sigmoid 0, as it should, not a warning
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
    (and float32 copies of the input standardisation), and the float64 copy of every matrix
    :func:`encoder_forward` multiplies by (``<matrix>64``: :func:`_product`)."""
    out = dict(w)
    if "x_mean" in w:
        out["x_mean32"] = np.asarray(w["x_mean"], dtype=np.float32)
        out["x_inv_scale32"] = (1.0 / np.asarray(w["x_scale"], dtype=np.float64)).astype(np.float32)
    for key in [k[:-2] for k in w if k.endswith(".W") and not k.startswith("att.")]:
        scale, shift = w[key + ".bn.scale"], w[key + ".bn.shift"]
        out[key + ".Wf"] = (w[key + ".W"] * scale[None, :]).astype(np.float32)
        out[key + ".bf"] = shift.astype(np.float32)
    for key in [k for k in out if k.endswith(".Wf") or k.startswith("att.") and k.endswith(".W")
                or k == "group"]:
        out[key + _F64] = np.asarray(out[key]).astype(np.float64)
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
        scores = _bn(_product(att, w, f"att.{step}.W"), w, f"att.{step}.bn") * prior
        mask = sparsemax(scores)
        prior = (gamma - mask) * prior
        feature_mask = mask if identity_groups else _product(mask, w, "group")
        out = _feat_transformer(feature_mask * x, w, f"step.{step}", n_shared, n_indep)
        total += np.maximum(out[:, :n_d], 0.0)
        att = out[:, n_d:]
    return total


# --------------------------------------------------------------------------------------------
# compiled row-wise pass


def pack_encoder(w: dict, config: dict) -> tuple:
    """The folded weights as the dense arrays :func:`encoder_rows` takes.

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


def encoder_rows(X, out, r0, r1, mean, inv_scale, bn_scale, bn_shift, W0, b0, Wr, br, attW,
                  att_scale, att_shift, group, clip, gamma, identity,
                  n_d):  # pragma: no cover - runs compiled
    """:func:`encoder_forward` of rows [r0, r1) of X into ``out`` (n, n_d), one row at a time
    with every intermediate in cache (the numpy pass's arithmetic, in float32; its products
    summed in float64 and rounded once, as :func:`_product`)."""
    f = X.shape[1]
    h2 = W0.shape[2]
    h = h2 // 2
    k = attW.shape[2]
    half = np.float32(np.sqrt(0.5))
    one = np.float32(1.0)
    x = np.empty(f, np.float32)
    xin = np.empty(f, np.float32)
    pre = np.empty(h2, np.float32)
    acc = np.empty(max(h2, attW.shape[2]), np.float64)  # products summed as _product sums
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
            acc[:h2] = 0.0
            nz = 0
            for j in range(f):  # the features sparsemax left in, gathered without branches
                active[nz] = j
                nz += xin[j] != 0.0
            for q in range(nz):
                j = active[q]
                xj = np.float64(xin[j])
                for i in range(h2):
                    acc[i] += xj * W0[t, j, i]
            for i in range(h2):
                pre[i] = np.float32(acc[i]) + b0[t, i]
            for i in range(h):
                cur[i] = pre[i] / (one + np.exp(-pre[h + i]))
            for layer in range(Wr.shape[1]):
                acc[:h2] = 0.0
                for j in range(h):
                    cj = np.float64(cur[j])
                    for i in range(h2):
                        acc[i] += cj * Wr[t, layer, j, i]
                for i in range(h2):
                    pre[i] = np.float32(acc[i]) + br[t, layer, i]
                for i in range(h):
                    cur[i] = (cur[i] + pre[i] / (one + np.exp(-pre[h + i]))) * half
            if t > 0:
                for j in range(n_d):
                    out[r, j] += max(cur[j], np.float32(0.0))
            if t == attW.shape[0]:
                break
            # attentive transformer of step t: scores, batch norm, prior, sparsemax
            acc[:k] = 0.0
            for j in range(h - n_d):
                aj = np.float64(cur[n_d + j])
                for i in range(k):
                    acc[i] += aj * attW[t, j, i]
            top = -np.inf
            for i in range(k):
                z[i] = (np.float32(acc[i]) * att_scale[t, i] + att_shift[t, i]) * prior[i]
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
                    mixed = np.float64(0.0)
                    for i in range(k):
                        mixed += np.float64(z[i]) * group[i, j]
                    xin[j] = np.float32(mixed) * x[j]
