"""Data-parallel training steps of a small MLP in torch, gradients averaged with ``Allreduce``.

The global batch (``size`` samples) is split over the ranks with ``block_range``. Every rank
holds the whole model (same initial parameters, built from the seed), runs forward, loss and
backward on its shard, and the gradients — which live as views in one contiguous flat buffer,
like DDP's ``gradient_as_bucket_view`` — are summed with one in-place ``Allreduce`` on that
buffer (a numpy view of the CPU tensor; staged through host memory for CUDA unless the MPI is
GPU-aware). Each rank's loss is the sum of its samples' losses divided by the *global* batch
size, so the summed gradient is exactly the full-batch gradient whatever the split, and
data-parallel SGD equals serial full-batch gradient descent: that is the fp64 reference.

Model: ``x (IN) -> Linear -> tanh -> Linear -> tanh -> Linear -> (OUT)``, mean-squared-error
loss against a fixed smooth teacher function of ``x``. Precisions: fp64, fp32 (parameters and
math in that dtype) and bf16 (fp32 parameters, ``torch.autocast(dtype=bfloat16)``).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any

import numpy as np

from hpcds1mpi.kernels import register
from hpcds1mpi.kernels.base import Kernel, KernelContext, WorkModel, block_range

IN_FEATURES, HIDDEN, OUT_FEATURES = 64, 128, 16
STEPS = 4
LEARNING_RATE = 0.05
TILE_ROWS = 256
_STREAM_X, _STREAM_TEACHER, _STREAM_INIT = 21, 22, 23


def sample_rows(seed: int, stream: int, n_cols: int, start: int, stop: int) -> np.ndarray:
    """Samples ``[start, stop)`` of a global standard-normal data set, fp64, shape
    (stop - start, n_cols). Tiles of :data:`TILE_ROWS` samples are seeded independently, so a
    rank builds exactly its shard whatever the rank count."""
    out = np.empty((stop - start, n_cols), dtype=np.float64)
    if stop <= start:
        return out
    for tile in range(start // TILE_ROWS, -(-stop // TILE_ROWS)):
        t0 = tile * TILE_ROWS
        rows = np.random.default_rng([seed, stream, tile]).standard_normal((TILE_ROWS, n_cols))
        lo, hi = max(start, t0), min(stop, t0 + TILE_ROWS)
        out[lo - start:hi - start] = rows[lo - t0:hi - t0]
    return out


def teacher(seed: int, x: np.ndarray) -> np.ndarray:
    """Targets: ``sin(x @ T)`` with a fixed random ``T`` of shape (IN, OUT); fp64."""
    t = np.random.default_rng([seed, _STREAM_TEACHER]).standard_normal(
        (IN_FEATURES, OUT_FEATURES)) / np.sqrt(IN_FEATURES)
    return np.sin(x @ t)


def layer_shapes() -> list[tuple[int, ...]]:
    """Shapes of the parameters in order: W1, b1, W2, b2, W3, b3 (W as (out, in))."""
    return [(HIDDEN, IN_FEATURES), (HIDDEN,), (HIDDEN, HIDDEN), (HIDDEN,),
            (OUT_FEATURES, HIDDEN), (OUT_FEATURES,)]


def initial_parameters(seed: int) -> np.ndarray:
    """All parameters, flattened in :func:`layer_shapes` order; fp64, shape (n_params,).
    Weights are uniform(+-1/sqrt(fan_in)) like torch's default, biases zero."""
    rng = np.random.default_rng([seed, _STREAM_INIT])
    parts = []
    for shape in layer_shapes():
        if len(shape) == 2:
            bound = 1.0 / np.sqrt(shape[1])
            parts.append(rng.uniform(-bound, bound, size=shape).ravel())
        else:
            parts.append(np.zeros(shape))
    return np.concatenate(parts)


def n_parameters() -> int:
    return int(sum(np.prod(s) for s in layer_shapes()))


def _torch_cuda_reason() -> str | None:
    """Why GPU runs are impossible here (None when torch sees a CUDA/ROCm device).

    A CPU-only torch build is recognised from ``torch/version.py`` without importing torch
    (listing kernels stays fast); otherwise torch is imported and asked.
    """
    import importlib.util
    import re
    import sys
    from pathlib import Path

    spec = importlib.util.find_spec("torch")
    if spec is None:
        return "torch is not installed"
    if "torch" not in sys.modules and spec.submodule_search_locations:
        version_file = Path(list(spec.submodule_search_locations)[0]) / "version.py"
        try:
            text = version_file.read_text()
        except OSError:
            text = ""
        no_device = [re.search(rf"^{name}\b[^=\n]*=\s*None\s*$", text, re.M)
                     for name in ("cuda", "hip")]
        if all(no_device):
            return "torch is a CPU-only build (torch.version.cuda and .hip are None)"
    import torch

    if not torch.cuda.is_available():
        return "torch sees no CUDA device (torch.cuda.is_available() is False)"
    return None


class _Devices:
    """``devices`` that offers ``gpu`` only where torch sees CUDA (checked on first access;
    imports torch then, not at module import)."""

    _value: tuple[str, ...] | None = None

    def __get__(self, obj, objtype=None) -> tuple[str, ...]:
        if _Devices._value is None:
            _Devices._value = ("cpu",) if _torch_cuda_reason() else ("cpu", "gpu")
        return _Devices._value


@dataclass
class _TrainState:
    batch: int
    rows: tuple[int, int]
    x_host: Any  # (m, IN) CPU tensor in the parameter dtype
    y_host: Any  # (m, OUT) CPU tensor in the parameter dtype
    init_host: Any  # (n_params,) CPU tensor, the initial parameters
    device: Any  # torch.device
    param_dtype: Any
    autocast: bool


def _mpi_sum_inplace(ctx: KernelContext, flat) -> None:
    """Sum a flat tensor over ranks in place (device tensors staged through host unless the
    MPI is GPU-aware)."""
    from hpcds1mpi.runtime.mpi import get_mpi

    MPI = get_mpi()
    if flat.device.type == "cpu":
        ctx.comm.Allreduce(MPI.IN_PLACE, flat.numpy(), op=MPI.SUM)
    elif ctx.gpu_aware:
        import torch

        torch.cuda.synchronize(flat.device)
        ctx.comm.Allreduce(MPI.IN_PLACE, flat, op=MPI.SUM)
    else:
        host = flat.cpu()
        ctx.comm.Allreduce(MPI.IN_PLACE, host.numpy(), op=MPI.SUM)
        flat.copy_(host)


def train(x, y, init, *, steps: int, batch: int, autocast: bool, allreduce=None) -> tuple:
    """``steps`` SGD steps of the MLP from ``init``; the same code serves the ranks and the
    serial reference (``allreduce=None``).

    Args:
        x: (m, IN) tensor, this rank's samples. y: (m, OUT) targets.
        init: (n_params,) initial parameters in the parameter dtype, on x's device.
        batch: the global batch size (the loss is divided by it).
        autocast: run forward/backward under bf16 autocast.
        allreduce: callable summing a flat gradient tensor over ranks in place.

    Returns:
        (final parameters as one (n_params,) tensor, last step's global loss as a 0-d tensor)
    """
    import torch
    import torch.nn.functional as F

    shapes = layer_shapes()
    params, grad_views, offset = [], [], 0
    flat_grad = torch.zeros(init.numel() + 1, dtype=init.dtype, device=init.device)
    for shape in shapes:
        count = int(np.prod(shape))
        params.append(init[offset:offset + count].clone().view(shape).requires_grad_(True))
        grad_views.append(flat_grad[offset:offset + count].view(shape))
        offset += count
    loss_slot = flat_grad[offset:]  # the local loss travels in the same Allreduce
    amp = (torch.autocast(device_type=x.device.type, dtype=torch.bfloat16) if autocast
           else contextlib.nullcontext())
    loss_value = torch.zeros((), dtype=init.dtype, device=init.device)
    for _ in range(steps):
        flat_grad.zero_()
        for p, view in zip(params, grad_views):
            p.grad = view  # gradients accumulate straight into the flat buffer
        with amp:
            h = torch.tanh(F.linear(x, params[0], params[1]))
            h = torch.tanh(F.linear(h, params[2], params[3]))
            out = F.linear(h, params[4], params[5])
        loss = 0.5 * ((out.to(y.dtype) - y) ** 2).sum() / batch
        loss.backward()
        for p, view in zip(params, grad_views):
            if p.grad.data_ptr() != view.data_ptr():  # autograd replaced the buffer: copy back
                view.copy_(p.grad)
        loss_slot.copy_(loss.detach().reshape(1))
        if allreduce is not None:
            allreduce(flat_grad)
        with torch.no_grad():
            for p, view in zip(params, grad_views):
                p.add_(view, alpha=-LEARNING_RATE)
        loss_value = loss_slot[0].clone()
    final = torch.cat([p.detach().reshape(-1) for p in params])
    return final, loss_value


@register
class MLTrain(Kernel):
    name = "mltrain"
    options = {}  # reads no plan extra: any key there is refused
    description = f"{STEPS} SGD steps of a {IN_FEATURES}-{HIDDEN}-{HIDDEN}-{OUT_FEATURES} MLP, MSE"
    decomposition = "data parallel: global batch split in row blocks, model replicated"
    communication = "one in-place Allreduce of the flat gradient buffer per step"
    size_meaning = "global batch size (samples)"
    threads_via = "torch.set_num_threads"
    precisions = ("fp64", "fp32", "bf16")
    devices = _Devices()
    uses_threads = True
    uses_torch = True
    default_sizes = (512, 1024, 2048, 4096, 8192, 12288, 16384, 24576, 32768)
    test_size = 67  # small and odd for the MPI correctness harness
    # Compared on the parameter *change* over the steps (not the parameters, which barely move):
    # fp32 sums in a different order, bf16 rounds every matmul operand to 8 mantissa bits.
    tolerance = {"fp64": 1e-9, "fp32": 1e-4, "bf16": 8e-2}

    def min_size(self, ranks: int) -> int:
        return ranks

    def unsupported_reason(self, device: str, precision: str) -> str | None:
        """Why this kernel cannot run on ``device`` here (None if it can)."""
        return _torch_cuda_reason() if device == "gpu" else None

    def setup(self, ctx: KernelContext, size: int) -> _TrainState:
        import torch

        from hpcds1mpi.errors import UnsupportedError

        if ctx.device == "gpu":
            reason = _torch_cuda_reason()
            if reason:
                raise UnsupportedError(f"mltrain on GPU needs torch CUDA: {reason}")
            device = torch.device("cuda", ctx.local_rank % torch.cuda.device_count())
        else:
            device = torch.device("cpu")
        torch.set_num_threads(ctx.threads)
        batch = int(size)
        ranks, rank = ctx.comm.Get_size(), ctx.comm.Get_rank()
        start, stop = block_range(batch, ranks, rank)
        x = sample_rows(ctx.seed, _STREAM_X, IN_FEATURES, start, stop)
        param_dtype = torch.float64 if ctx.precision == "fp64" else torch.float32
        return _TrainState(
            batch=batch, rows=(start, stop),
            x_host=torch.from_numpy(x).to(param_dtype),
            y_host=torch.from_numpy(teacher(ctx.seed, x)).to(param_dtype),
            init_host=torch.from_numpy(initial_parameters(ctx.seed)).to(param_dtype),
            device=device, param_dtype=param_dtype, autocast=ctx.precision == "bf16",
        )

    def run(self, ctx: KernelContext, state: _TrainState) -> dict:
        import torch

        cuda = state.device.type == "cuda"
        # H2D copies of the shard and the initial model (timed on GPU, a real job pays them).
        x = state.x_host.to(state.device) if cuda else state.x_host
        y = state.y_host.to(state.device) if cuda else state.y_host
        init = state.init_host.to(state.device) if cuda else state.init_host
        final, loss = train(x, y, init, steps=STEPS, batch=state.batch, autocast=state.autocast,
                            allreduce=lambda flat: _mpi_sum_inplace(ctx, flat))
        if cuda:
            torch.cuda.synchronize(state.device)
        return {"params": final, "loss": loss}

    def check(self, ctx: KernelContext, state: _TrainState, result: dict) -> float:
        """Relative error of the parameter change against serial fp64 full-batch training.

        Rank 0 trains the reference on the whole global batch and broadcasts its parameter
        change; every rank judges its own returned parameters; the worst rank's error is
        returned on all ranks.
        """
        import torch

        from hpcds1mpi.runtime.arrays import to_host
        from hpcds1mpi.runtime.mpi import get_mpi

        MPI = get_mpi()
        init = initial_parameters(ctx.seed)
        want = np.empty_like(init)
        if ctx.comm.Get_rank() == 0:
            x = sample_rows(ctx.seed, _STREAM_X, IN_FEATURES, 0, state.batch)
            ref, _ = train(torch.from_numpy(x), torch.from_numpy(teacher(ctx.seed, x)),
                           torch.from_numpy(init), steps=STEPS, batch=state.batch,
                           autocast=False)
            want[...] = ref.numpy() - init
        ctx.comm.Bcast(want, root=0)
        got = np.asarray(to_host(result["params"]), dtype=np.float64) - init
        denom = float(np.linalg.norm(want))
        local = float(np.linalg.norm(got - want)) / denom if denom else float(
            np.linalg.norm(got - want))
        if not np.isfinite(local):
            local = float("inf")
        worst = np.empty(1)
        ctx.comm.Allreduce(np.array([local]), worst, op=MPI.MAX)
        return float(worst[0])

    def work(self, size: int, ranks: int) -> WorkModel:
        """Per rank (largest shard), all steps; bytes counted at 4 per element (fp32)."""
        m = -(-int(size) // ranks)
        n_params = n_parameters()
        macs_per_sample = IN_FEATURES * HIDDEN + HIDDEN * HIDDEN + HIDDEN * OUT_FEATURES
        item = 4
        # forward 2 flops per MAC, backward twice the forward; plus the SGD update.
        flops = STEPS * (6.0 * macs_per_sample * m + 2.0 * n_params)
        activations = m * (IN_FEATURES + 2 * HIDDEN + OUT_FEATURES)
        return WorkModel(
            flops=flops,
            # per step: read weights three times (fwd, bwd-data, bwd-weight), write grads, update
            # params (read p, g; write p); activations written forward and read backward twice.
            bytes_moved=float(STEPS * item * (6 * n_params + 3 * activations)),
            messages=float(STEPS if ranks > 1 else 0),
            comm_bytes=float(STEPS * item * (n_params + 1) * 2 * (ranks - 1) / ranks),
            memory_bytes=float(item * (3 * n_params + 2 * activations + m * OUT_FEATURES)),
        )
