"""System 2's runtime-energy front: MOBO (:mod:`hpcds1mpi.surrogates.mobo`) with real runs as
the objective (:class:`~hpcds1mpi.surrogates.objectives.RealRunObjective`).

Every configuration is run at most once, a run the telemetry file already held is not run again
nor counted against the budget, and every run is in telemetry (the runners of
:mod:`hpcds1mpi.measure.trials`).
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from hpcds1mpi.config import Configuration
from hpcds1mpi.decide.system2 import (DEFAULT_BUDGET, NOISE_FLOOR, Trial, TuneResult,
                                      energy_source_of, fmt_value, objective_value, run_noise,
                                      run_notes)
from hpcds1mpi.decide.tune_space import Space, config_key
from hpcds1mpi.errors import ConfigError


class _BudgetSpent(BaseException):
    """Ends MOBO's loop once the session's runs reach the budget (a BaseException: the
    real-run objective records an Exception as a crashed run and carries on)."""


def tune_front(space: Space, start: Configuration, evaluate: Callable[[Configuration], dict], *,
               budget: int = DEFAULT_BUDGET, seed: int = 0,
               log: Callable[[str], None] | None = None) -> TuneResult:
    """Find the runtime-energy front by MOBO with real runs as the objective.

    The start configuration is measured first; the hypervolume reference point is twice its
    (runtime, energy), so anything at least twice as bad in both does not count. Every
    configuration is run at most once (the objective caches), and every run is in telemetry.
    """
    import pandas as pd

    from hpcds1mpi.surrogates import mobo
    from hpcds1mpi.surrogates.objectives import RealRunObjective

    say = log or (lambda line: None)
    cache: dict[tuple, dict] = {}
    order: list[tuple] = []
    budget = min(budget, len(space.configs))

    def made() -> int:
        return sum(1 for key in order if not cache[key].get("stored"))

    def run_one(row: dict) -> dict:
        config = Configuration(int(row["nodes"]), int(row["ranks_per_node"]),
                               int(row["threads"]), str(row["device"]), str(row["precision"]))
        key = config_key(config)
        if key not in cache:
            if made() >= budget:
                raise _BudgetSpent
            cache[key] = dict(evaluate(config))
            order.append(key)
            r = cache[key]
            say(f"{'stored' if r.get('stored') else f'run {made()}'}: {config.label()} "
                f"{r.get('status')} {fmt_value(objective_value(r, 'time'), 'time')} "
                f"{fmt_value(objective_value(r, 'energy'), 'energy')}"
                + (" modelled" if "modelled" in str(r.get("energy_source") or "") else "")
                + (f"; {r['stored']}" if r.get("stored") else ""))
            for note in run_notes(r):  # as the single-objective tune says them (s31)
                say(note)
        return cache[key]

    first = run_one(start.as_dict())
    if first.get("status") != "ok":
        raise ConfigError(f"the start configuration {start.label()} failed "
                          f"({first.get('status')}); start from another one (--ranks-per-node "
                          "etc.)")
    candidates = pd.DataFrame([c.as_dict() for c in space.configs])
    candidates["workload"] = "tuned"
    candidates["size"] = 1
    objective = RealRunObjective(run_one)
    problem = mobo.Problem(candidates, objective, ["runtime_s", "energy_j"])
    problem.ref_point = 2.0 * np.array([objective_value(first, "time"),
                                        objective_value(first, "energy")])
    # MOBO may pick the start again (cached, no run) or a stored run (not counted): it gets
    # every candidate as its budget and is stopped when this session's runs reach ``budget``
    # (a budget of ``budget - 1`` left a run unspent whenever it re-picked the start).
    if made() < budget and len(space.configs) > 1:
        picks = len(space.configs)
        try:
            mobo.run(problem, "mobo", picks, seed=seed,
                     n_init=min(mobo.default_n_init(problem), picks))
        except _BudgetSpent:
            pass
    trials = []
    for key in order:
        r = cache[key]
        cfg = Configuration(*key)
        trials.append(Trial(cfg, str(r.get("status")), objective_value(r, "time"),
                            objective_value(r, "time"), objective_value(r, "energy"),
                            run_noise(r), "measured",
                            run_id=str(r.get("run_id", "")), stored=str(r.get("stored") or ""),
                            energy_source=str(r.get("energy_source") or ""),
                            notes=run_notes(r)))
    ok = [t for t in trials if t.status == "ok" and math.isfinite(t.energy_j)]
    from hpcds1mpi.surrogates.pareto import pareto_mask

    front = []
    if ok:
        Y = np.array([[t.runtime_s, t.energy_j] for t in ok])
        mask = pareto_mask(Y)
        front = [{**t.config.as_dict(), "label": t.config.label(), "runtime_s": t.runtime_s,
                  "energy_j": t.energy_j} for t, m in zip(ok, mask) if m]
        for t, m in zip(ok, mask):
            t.decision = "front" if m else "dominated"
    fastest = min(ok, key=lambda t: t.runtime_s) if ok else None
    if made() >= budget:
        stop = f"budget of {budget} runs spent"
    elif len(order) >= len(space.configs):
        stop = f"every one of the {len(space.configs)} allowed configurations was measured"
    else:
        stop = "MOBO ended before the budget was spent"
    say(f"stopped: {stop}; front of {len(front)} measured "
        f"configuration{'s' if len(front) != 1 else ''}")
    return TuneResult("front", start, fastest.config if fastest else None,
                      fastest.runtime_s if fastest else float("nan"), trials, stop,
                      NOISE_FLOOR, front, energy_source=energy_source_of(trials, None))
