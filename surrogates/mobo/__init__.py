"""Multi-objective Bayesian optimisation over a finite configuration space, with baselines.

Methods (all minimise; all share one evaluation budget and one fixed reference point):

- ``mobo``: one SingleTaskGP per objective (a ModelListGP) on min-max normalised inputs and
  standardised log outcomes; qLogExpectedHypervolumeImprovement with a SobolQMCNormalSampler
  of 128 samples, q = 1 (the paper's settings). BoTorch maximises, so the MC objective maps a
  sample of log-runtime / log-energy to ``-exp(sample)``: the acquisition works on negated raw
  values and the hypervolume improvement it scores is the raw-space hypervolume we report.
- ``sobo-runtime`` / ``sobo-energy`` (alias ``sobo-power``): qLogExpectedImprovement on one
  objective, same model class, sampler and candidate-set optimisation.
- ``random``: the paper's random search, "5 seeds, budget split evenly": five independent
  uniform streams (seeds derived from the run's seed), each drawing budget/5 distinct
  candidates (the remainder goes to the first streams); their union, duplicates across streams
  included, spends exactly the budget.
- ``exact``: every candidate evaluated; its front is the yardstick.

Integers and categoricals are handled by never leaving the candidate set: the acquisition is
evaluated on every not-yet-evaluated enumerated candidate and the best is taken (exact discrete
maximisation; no continuous optimum is rounded). The paper's optimize_acqf settings (5
restarts, 32 raw samples) are kept in :class:`Profile` and recorded in outputs; only
``raw_samples`` is used: when no candidate can improve (see below), only that many, the closest
to improving, are scored.

Inputs are encoded as log2(nodes), log2(ranks per node), log2(threads) (integers on their
natural multiplicative scale), device as a 0/1 flag and precision one-hot, each column
min-max scaled over the candidate set so the GP sees [0, 1]^d.

A failed evaluation (``feasible`` False) is recorded with NaN objectives, is never on a front,
never enters a hypervolume, is not offered again, and is left out of the GP training data.

Two model-fitting policies are measured side by side (:data:`STRAIGHTFORWARD`,
:data:`OPTIMISED`): refit both GPs from scratch with ``fit_gpytorch_mll`` every iteration, or
warm-start the hyperparameters from the previous iteration, refit with a few L-BFGS steps every
k iterations once the training set grew by a fifth (conditioning on every new point in
between), reuse the box decomposition while the observed front is unchanged, keep the candidate
tensors and the sampler across iterations, and score the acquisition only on candidates that
can still improve under one of the sampler's fixed base samples (:func:`improvement_outlook`;
when none can, every Monte Carlo improvement is exactly zero and only the ``raw_samples``
closest to improving are scored: scoring thousands of them cost seconds per iteration once a
50-point front was found) and that no other candidate beats in every sample
(:func:`~.pruning.samplewise_dominated`). MOBO's qLogEHVI is then computed for q = 1 without
BoTorch's no-op batch steps, from draws built on the posteriors the pruning follows
(:mod:`.acquisition`; the same values).
"""

from .candidates import NODE_COUNTS, SPACES, build_candidates, encode, node_counts
from .loop import initial_design
from .methods import METHODS, RANDOM_STREAMS, random_design, run
from .problem import CandidateTable, Problem, RunResult, default_n_init, hv_trace
from .pruning import improvement_outlook, weakly_dominated
from .settings import (OPTIMISED, PAPER_PROFILE, STRAIGHTFORWARD, FitPolicy, Profile,
                       profile_dict)

__all__ = [
    "METHODS", "SPACES", "NODE_COUNTS", "RANDOM_STREAMS", "Profile", "PAPER_PROFILE",
    "FitPolicy", "STRAIGHTFORWARD", "OPTIMISED", "profile_dict", "build_candidates",
    "node_counts", "encode", "Problem", "CandidateTable", "RunResult", "default_n_init", "hv_trace", "run",
    "random_design", "initial_design", "improvement_outlook", "weakly_dominated",
]
