"""BoTorch's qLogEHVI for one candidate per batch (q = 1) without the steps that do nothing there.

For q = 1, :meth:`qLogExpectedHypervolumeImprovement._compute_log_qehvi` computes each sample's
log area in every cell of the box decomposition (one fused C++ call), then reduces it through
the inclusion-exclusion bookkeeping of larger batches: a log-sum-exp over one subset, a
``logplusexp`` with ``-inf``, a ``logdiffexp`` with ``-inf``; only then the log-sum-exp over
cells and the log-mean-exp over samples. Each of the three is the identity on a finite value
(``x + log(1)``, ``x + log1p(0)``, ``x + log1mexp(-inf)``, all exactly ``x``), but each walks
the whole ``samples x candidates x cells`` tensor: in a 300-evaluation run on 2,688 candidates
they were two thirds of the acquisition's arithmetic. :class:`QOneLogEHVI` skips them and
returns the same numbers (tested to be equal to BoTorch's); in every other case (q > 1,
constraints, batched cell bounds, no fused kernel) it is BoTorch's own method.
"""

from __future__ import annotations


def q_one_log_ehvi(**kwargs):
    """A :class:`QOneLogEHVI` built with qLogExpectedHypervolumeImprovement's arguments."""
    return _class()(**kwargs)


_CLASS = None


def _class():
    """The subclass, defined on first use (BoTorch is imported lazily)."""
    global _CLASS
    if _CLASS is not None:
        return _CLASS
    from hpcds1mpi.runtime.quiet_imports import import_warnings_ignored

    with import_warnings_ignored():  # torch.jit.script's DeprecationWarning: s32 tester T3
        from botorch.acquisition.multi_objective import logei
        from botorch.utils.safe_math import logmeanexp, logsumexp

    class QOneLogEHVI(logei.qLogExpectedHypervolumeImprovement):
        """qLogExpectedHypervolumeImprovement with the q = 1 shortcut of the module doc."""

        def _compute_log_qehvi(self, samples, X=None):
            fused = getattr(logei, "_C", None) is not None and getattr(logei, "_FusedLogAreas", None)
            if (not fused or self.constraints is not None or not self.fat
                    or samples.device.type != "cpu" or self.cell_lower_bounds.ndim != 2):
                return super()._compute_log_qehvi(samples, X=X)
            obj = self.objective(samples, X=X)  # mc_samples x batch x q x m
            if obj.shape[-2] != 1:
                return super()._compute_log_qehvi(samples, X=X)
            # the one subset of size 1: mc_samples x batch x (q_choose_1 = 1) x (i = 1) x m
            subsets = obj.unsqueeze(-2)
            log_areas = logei._FusedLogAreas.apply(subsets, self.cell_lower_bounds,
                                                   self.cell_upper_bounds, self.tau_relu,
                                                   self.tau_max)  # ... x cells x 1
            return logmeanexp(logsumexp(log_areas[..., 0], dim=-1), dim=0)

    _CLASS = QOneLogEHVI
    return _CLASS


def log_ehvi_from_marginals(acq, mean, sd, z, batch_size: int):
    """The acquisition's values at q = 1 candidates from their posterior marginals.

    For one candidate and independent GPs, the sampler's draw of output ``j`` is
    ``mean_j + sd_j * z_j`` with ``z`` its fixed base samples (what
    :func:`~.pruning.improvement_outlook` relies on too): the samples are built here from the
    marginals the loop already follows (:class:`~.marginals.Marginals`) and handed to the
    acquisition's own ``_compute_log_qehvi``, instead of asking GPyTorch for a fresh posterior
    of the same candidates each iteration (a fifth of a 300-evaluation run). The values are
    BoTorch's up to the marginals' rounding (about 1e-12 relative).

    Args:
        acq: a qLogExpectedHypervolumeImprovement without constraints (objectives only).
        mean, sd: ``(k, m)`` posterior mean and standard deviation of the modelled outputs.
        z: ``(S, m)`` the sampler's base samples.
        batch_size: candidates per call (memory bound).

    Returns:
        ``(k,)`` tensor of acquisition values.
    """
    import torch

    mean = torch.as_tensor(mean, dtype=torch.double)
    sd = torch.as_tensor(sd, dtype=torch.double)
    z = torch.as_tensor(z, dtype=torch.double)[:, None, None, :]  # (S, 1, 1, m)
    values = []
    with torch.no_grad():
        for start in range(0, len(mean), batch_size):
            mu = mean[None, start:start + batch_size, None, :]  # (1, b, q = 1, m)
            samples = mu + sd[None, start:start + batch_size, None, :] * z
            values.append(acq._compute_log_qehvi(samples))
    return torch.cat(values)
