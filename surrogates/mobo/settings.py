"""The acquisition settings and the GP-fitting policies of the BO loop, as recorded in outputs."""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Profile:
    """Acquisition settings. Defaults are the paper's.

    Attributes:
        mc_samples: Sobol QMC samples of the posterior.
        q: points per iteration (only 1 is supported).
        num_restarts / raw_samples: the paper's optimize_acqf settings; the discrete optimiser
            evaluates every remaining candidate that can improve, and the ``raw_samples``
            closest to improving when none can (``num_restarts`` is recorded only).
        iterations: the paper's iteration count (the default budget).
        batch_size: candidates scored per acquisition call (memory bound).
    """

    mc_samples: int = 128
    q: int = 1
    num_restarts: int = 5
    raw_samples: int = 32
    iterations: int = 300
    batch_size: int = 2048


PAPER_PROFILE = Profile()


@dataclass(frozen=True)
class FitPolicy:
    """How GP hyperparameters are (re)fitted during the loop.

    Attributes:
        name: label used in outputs.
        warm_start: start each iteration's GPs from the previous hyperparameters.
        refit_every: fit hyperparameters every k-th iteration (1 = every iteration); in between
            the GPs are conditioned on the new data with the previous hyperparameters.
        refit_steps: L-BFGS iterations per refit (None: ``fit_gpytorch_mll`` to convergence).
        refit_growth: refit only once the training set grew by this fraction of its size at
            the last refit (and at a multiple of ``refit_every`` iterations since it); 0: every
            ``refit_every`` iterations.
        reuse: reuse the box decomposition while the observed front is unchanged, and keep
            the candidate tensors and the QMC sampler (its base samples) across iterations.
        prune: score the acquisition only on candidates that can still improve (see
            :func:`improvement_outlook`); the others have zero improvement under every one of the
            sampler's fixed base samples, so leaving them out does not change the choice.
        dominance: with ``prune``, also leave out candidates another scored candidate beats in
            every one of the sampler's samples (:func:`~.pruning.samplewise_dominated`): they
            cannot be the maximum either.
        direct_samples: with ``prune``, MOBO's acquisition takes its samples from the
            marginals the pruning follows (:func:`~.acquisition.log_ehvi_from_marginals`)
            instead of a fresh GPyTorch posterior of the scored candidates.
    """

    name: str
    warm_start: bool
    refit_every: int
    refit_steps: int | None
    reuse: bool
    refit_growth: float = 0.0
    prune: bool = False
    dominance: bool = False
    direct_samples: bool = False


STRAIGHTFORWARD = FitPolicy("straightforward", warm_start=False, refit_every=1, refit_steps=None, reuse=False)
OPTIMISED = FitPolicy("optimised", warm_start=True, refit_every=10, refit_steps=20, reuse=True,
                      refit_growth=0.2, prune=True, dominance=True, direct_samples=True)


def profile_dict(profile: Profile = PAPER_PROFILE, policy: FitPolicy = OPTIMISED) -> dict:
    """Settings to record next to results."""
    return {"profile": asdict(profile), "policy": asdict(policy),
            "acquisition_optimiser": "exhaustive over the remaining enumerated candidates that can "
            "improve (the raw_samples closest to improving when none can), less those another "
            "candidate beats in every QMC sample"}
