"""System 2: tune a job for real inside its allocation, starting from System 1's pick.

System 1 (:mod:`hpcds1mpi.decide.system1`) predicts; System 2 measures. Starting from a configuration
(System 1's pick, the user's current settings, or the rules-of-thumb default), it runs
configurations for real through the sweep machinery and

* keeps a configuration that beats the best so far by more than the measured noise (the
  search moves to it),
* reverts to the best and excludes a configuration that is slower (a regression), fails, runs
  out of memory or times out,
* stops when the expected improvement of every remaining candidate is below the measured noise
  (with a model; a level the model never measured — a precision, device, thread count... —
  is first tried with its configuration of the highest expected gain, as its prediction there
  is a guess: s31 tester Q3; only one that could beat the best run, at most ceil(budget / 4)
  of them: s31 reviewer), when no untried neighbour of the best is left (without a model), or when
  the budget (runs or seconds) is spent; a model that rules out every configuration does not
  guide the search (a neighbour walk, said), and one run ok where the model predicted a
  failure sets its failure predictions aside (s39 tester B4); a program's configurations on
  node counts it never ran on wait until those on measured ones are run or ruled out (said:
  ``tune_nodes.py``, s39 tester B5),
* answers with the successful run of the lowest value it measured (runtime, or energy): a
  faster run within the noise does not move the search, but a tuner that measured it must
  not recommend the slower one (``TuneResult.note`` says when the answer is not the run the
  search kept). On the pooled replay (``benchmarks/tuning.py``) answering with the run the
  search kept left 11 of 72 problems more than 5 % off although a run within 5 % had been
  measured.

With a model, candidates are ranked by expected improvement: the bundle's prediction is
rescaled by what the runs so far measured (the median ratio measured / predicted, in log space)
and its spread over ensemble members is taken as a log-normal error; the expected relative
improvement over the best measured value is ``E[max(0, best - Y)] / best``. Without a model the
search walks neighbours (one knob changed: nodes, ranks per node or threads x2 / /2, another
precision, another device).

``--objective front`` hands the search to MOBO on real runs
(:func:`hpcds1mpi.decide.tune_front.tune_front`).

The algorithm (:func:`tune`) is independent of how a run is made: it calls ``evaluate(config)``
and reads a runs-table row. The runners that make real runs are in
:mod:`hpcds1mpi.measure.trials` (in-process on the launched world, or launched per
configuration with srun / mpiexec); both write every run to the telemetry file.
``benchmarks/tuning.py`` replays the same algorithm on measured telemetry.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from hpcds1mpi.config import Configuration
from hpcds1mpi.decide.tune_predictions import (Predictions, best_predicted, could_beat,
                                               expected_improvement,
                                               failure_disproved_note, guess_to_try,
                                               levels_left, model_shift, most_guesses,
                                               none_feasible_note, ruled_out_said,
                                               untried_guesses)
from hpcds1mpi.decide.tune_nodes import NodeRule
from hpcds1mpi.decide.tune_space import Space, config_key
from hpcds1mpi.errors import ConfigError
from hpcds1mpi.measure.printable import clipped

#: Relative noise assumed at least (a run measured once has no spread of its own).
NOISE_FLOOR = 0.03
#: Default most runs a tuning session makes (the start included).
DEFAULT_BUDGET = 8
#: Prior log-error of the model's runtime prediction for a new problem: the shipped bundle's
#: held-out-size runtime MAPE is 22-24 % (analysis/results/h1_reference.md). The ensemble's
#: own spread underestimates it (members agree while being wrong together), so the expected
#: improvement uses both; measured/predicted ratios replace the prior as runs come in.
MODEL_ERROR_PRIOR = 0.25
#: Weight of the prior, in pseudo-runs, against the spread of measured/predicted ratios.
MODEL_ERROR_PRIOR_RUNS = 2
#: Runs made before the expected-improvement stop may end the search: the start plus two
#: runs of the best alternatives (one run cannot tell a pick from its runner-up). On the
#: reference telemetry (benchmarks/results/tuning.md, 72 problems) 2 left 6 problems more than
#: 5 % off the best, 3 left 1, at one more run per session (3.0 vs 2.0 made on average).
DEFAULT_MIN_RUNS = 3
OBJECTIVES = ("time", "energy", "front")


# --------------------------------------------------------------------------------------------
# The search


@dataclass
class Trial:
    """One real run the tuner made and what it decided."""

    config: Configuration
    status: str
    value: float
    runtime_s: float
    energy_j: float
    noise: float
    decision: str  # start / kept / reverted / excluded
    reason: str = ""
    expected_gain: float = float("nan")
    run_id: str = ""
    measured_s: float = 0.0
    #: Set when the telemetry file already held this run: the line saying so (not run again,
    #: not counted against the budget).
    stored: str = ""
    energy_source: str = ""
    #: The sweep's notes on this run (it exited 0 but said it did not converge: s30 tester
    #: N3; :func:`hpcds1mpi.measure.trials.run_notes`), said after its line.
    notes: tuple = ()

    def as_dict(self) -> dict:
        out = {**self.config.as_dict(), "label": self.config.label(), "status": self.status,
               "value": self.value, "runtime_s": self.runtime_s, "energy_j": self.energy_j,
               "noise": self.noise, "decision": self.decision, "reason": self.reason,
               "expected_gain": self.expected_gain, "run_id": self.run_id,
               "stored": self.stored, "notes": list(self.notes)}
        return {k: (None if isinstance(v, float) and not math.isfinite(v) else v)
                for k, v in out.items()}


@dataclass
class TuneResult:
    objective: str
    start: Configuration
    best: Configuration | None
    best_value: float
    trials: list[Trial]
    stop_reason: str
    noise: float
    front: list[dict] = field(default_factory=list)
    #: Set when the answer is not the run the search kept (a lower run it set aside).
    note: str = ""
    #: ``noise`` said as what it is: "measured noise 2.1 %" or "noise floor 3.0 %, ...".
    noise_said: str = ""
    #: Where the answer's energy came from (the row's ``energy_source``: "modelled" when no
    #: meter was read, "rapl", ...; empty when unknown).
    energy_source: str = ""

    @property
    def runs(self) -> int:
        """Runs made by this session (not those the telemetry file already held)."""
        return sum(1 for t in self.trials if not t.stored)

    @property
    def reused(self) -> int:
        """Configurations answered from runs the telemetry file already held."""
        return len(self.trials) - self.runs

    def as_dict(self) -> dict:
        return {"objective": self.objective, "start": self.start.as_dict(),
                "best": self.best.as_dict() if self.best else None,
                "best_value": self.best_value if math.isfinite(self.best_value) else None,
                "runs": self.runs, "reused": self.reused, "noise": self.noise, "stop_reason": self.stop_reason,
                "trials": [t.as_dict() for t in self.trials], "front": self.front,
                "note": self.note, "noise_said": self.noise_said,
                "energy_source": self.energy_source}


def run_notes(row: dict) -> tuple[str, ...]:
    """The sweep's notes on a run (an exit 0 that said it did not converge: s30 tester N3), as
    both tunes keep them on its :class:`Trial` and say them after its line (s31: the front's
    tune said none)."""
    return tuple(str(n) for n in row.get("notes") or ())


def run_noise(row: dict) -> float:
    """A run's relative noise: (median - fastest repeat) / median.

    The sweep's ``noise`` column is (max - min) / median, which one slow repeat (a page fault,
    a neighbour's burst) inflates without bound; the fastest repeat against the median measures
    how much the typical repeat can move, and is what a real difference must exceed.
    """
    try:
        median, fastest = float(row.get("runtime_s")), float(row.get("runtime_min_s"))
        if median > 0 and math.isfinite(fastest) and int(row.get("repeats") or 0) > 1:
            return min(max((median - fastest) / median, 0.0), 0.5)
    except (TypeError, ValueError):
        pass
    return 0.0


def objective_value(row: dict, objective: str) -> float:
    key = "energy_j" if objective == "energy" else "runtime_s"
    try:
        value = float(row.get(key, float("nan")))
    except (TypeError, ValueError):
        return float("nan")
    return value if value > 0 else float("nan")


#: The most characters of a failed trial's reason said on its line (the whole is in ``--out``).
REASON_CHARS = 200


def failure_reason(error) -> str:
    """A failed trial's reason (its row's ``error``) for its one line: whole up to
    :data:`REASON_CHARS`, else cut at a word and marked so by
    :func:`~hpcds1mpi.measure.printable.clipped` (s37 tester G4: "File
    '../../md.tpr' does not ex" was cut mid-word, unsaid)."""
    return clipped(" ".join(str(error or "").split()), REASON_CHARS)


def tune(space: Space, start: Configuration, evaluate: Callable[[Configuration], dict], *,
         objective: str = "time", predictions: Predictions | None = None,
         budget: int = DEFAULT_BUDGET, time_budget_s: float | None = None,
         noise_floor: float = NOISE_FLOOR, log: Callable[[str], None] | None = None,
         min_runs: int = DEFAULT_MIN_RUNS) -> TuneResult:
    """Improve ``start`` by real runs (greedy, noise-aware; see the module docstring).

    Args:
        space: the configurations allowed.
        start: the first configuration run (System 1's pick or the user's settings).
        evaluate: runs one configuration, returns its runs-table row (``status``,
            ``runtime_s``, ``energy_j``, ``noise``, ``run_id``).
        objective: ``time`` or ``energy``.
        predictions: a model's predictions aligned with ``space`` (None: neighbour walk).
        budget: the most runs, the start included.
        time_budget_s: stop starting new runs after this many seconds.
        noise_floor: relative noise assumed at least.
        log: called with one line per decision.
        min_runs: runs made before the expected-improvement stop applies (budget permitting).

    Returns:
        The trials, the best configuration and why the search stopped.
    """
    if objective not in ("time", "energy"):
        raise ConfigError(f"objective must be time or energy here, got {objective!r}")
    if budget < 1:
        raise ConfigError(f"--budget must be at least 1, got {budget}")
    if start not in space:
        raise ConfigError(f"the start configuration {start.label()} does not fit the allocation")
    say = log or (lambda line: None)
    began = time.monotonic()
    trials: list[Trial] = []
    tried: set[int] = set()
    best: Trial | None = None
    noises: list[float] = []
    ratios: list[float] = []  # log(measured / predicted) of ok runs
    ratio_nodes: list[int] = []  # the node count of each ratio's run
    guessed: list[str] = []  # never-measured levels tried before stopping (s31 tester Q3)
    # What the model rules out; its failure verdicts are set aside once one is run ok, and a
    # model that rules out everything does not guide the search (s39 tester B4).
    feasible = None if predictions is None else np.asarray(predictions.feasible, bool).copy()
    fail_prob = None if predictions is None else np.clip(predictions.fail_prob, 0, 1)
    guide = predictions if feasible is not None and feasible.any() else None
    if predictions is not None and guide is None:
        say(none_feasible_note(predictions))
    # measured node counts first, as recommend picks (s39 tester B5)
    nodes = NodeRule(space, getattr(predictions, "beyond_nodes", None), start, say)

    def noise() -> float:
        return max(noise_floor, float(np.median(noises)) if noises else 0.0)

    def noise_said() -> str:
        """The noise a result must beat, said as what it is: measured, or the floor."""
        measured = float(np.median(noises)) if noises else float("nan")
        if noises and measured >= noise_floor:
            return f"measured noise {100 * measured:.1f} %"
        return f"noise floor {100 * noise_floor:.1f} %, " + (
            f"above the {100 * measured:.1f} % runs measured" if noises
            else "no run measured its noise")

    def model_error() -> float:
        """Log-error of the rescaled model: the ratios' spread, shrunk towards the prior."""
        dev = np.asarray(ratios) - (np.median(ratios) if ratios else 0.0)
        return math.sqrt((MODEL_ERROR_PRIOR ** 2 * MODEL_ERROR_PRIOR_RUNS + float(np.sum(dev ** 2)))
                         / (MODEL_ERROR_PRIOR_RUNS + len(ratios)))

    def model_view() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(n,)`` each: the untried runnable candidates, the log prediction rescaled by the
        runs so far, and its standard deviation (ensemble spread, model error, transfer)."""
        untried = np.array([i not in tried for i in range(len(space.configs))])
        ok = untried & feasible & np.isfinite(predictions.value) & (predictions.value > 0)
        shift, transfer = model_shift(space, ratios, ratio_nodes)
        mu = np.log(np.where(ok, predictions.value, 1.0)) + shift
        sigma = np.sqrt(np.asarray(predictions.spread, float) ** 2 + model_error() ** 2
                        + transfer ** 2)
        return ok, mu, sigma

    def run(config: Configuration, gain: float) -> Trial:
        nonlocal best
        position = space.index(config)  # its row in every per-candidate array
        tried.add(position)
        row = evaluate(config)
        status = str(row.get("status", "failed"))
        value = objective_value(row, objective) if status == "ok" else float("nan")
        trial = Trial(config, status, value, float(row.get("runtime_s") or float("nan")),
                      float(row.get("energy_j") or float("nan")),
                      run_noise(row), "", expected_gain=gain,
                      run_id=str(row.get("run_id", "")),
                      measured_s=float(row.get("measured_s") or 0.0),
                      stored=str(row.get("stored") or ""),
                      energy_source=str(row.get("energy_source") or ""),
                      notes=run_notes(row))
        if status == "ok" and math.isfinite(value):
            if math.isfinite(trial.noise) and trial.noise > 0:
                noises.append(trial.noise)
            if predictions is not None:
                p = predictions.value[position]
                if math.isfinite(p) and p > 0:
                    ratios.append(math.log(value / p))
                    ratio_nodes.append(config.nodes)
                failing = predictions.failing
                if guide is not None and failing is not None and \
                        failing[position] and not feasible[position]:
                    say(failure_disproved_note(config, float(fail_prob[position])))
                    feasible[failing] = True
                    fail_prob[:] = 0.0
        if best is None:
            if status == "ok" and math.isfinite(value):
                trial.decision, trial.reason = ("start" if not trials else "kept",
                                                "first successful run")
                best = trial
            else:
                trial.decision = "excluded"
                trial.reason = f"{status}: {failure_reason(row.get('error'))}"
        elif status != "ok" or not math.isfinite(value):
            trial.decision = "excluded"
            trial.reason = f"{status}: {failure_reason(row.get('error'))}"
        elif value < best.value * (1.0 - noise()):
            trial.decision = "kept"
            trial.reason = f"{100 * (1 - value / best.value):.1f} % better than {best.config.label()}"
            best = trial
        else:
            trial.decision = "reverted"
            # Said as faster / slower: a bare "-39.0 % vs" read as worse (s34).
            change = value / best.value - 1
            worse, better = ("higher", "lower") if objective == "energy" else ("slower", "faster")
            trial.reason = (f"{100 * abs(change):.1f} % {worse if change >= 0 else better} than "
                            f"{best.config.label()}{'' if change >= 0 else ', within the noise'}"
                            f"; {noise_said()}")
        trials.append(trial)
        made = sum(1 for t in trials if not t.stored)
        say(f"{'stored' if trial.stored else f'run {made}'}: {config.label()} {status} "
            f"{fmt_value(value, objective)}"
            f"{' modelled' if objective == 'energy' and 'modelled' in trial.energy_source else ''}"
            f" -> {trial.decision} ({trial.reason})"
            + (f"; {trial.stored}" if trial.stored else ""))
        for note in trial.notes:
            say(note)
        return trial

    run(start, float("nan"))
    stop = ""
    while True:
        if sum(1 for t in trials if not t.stored) >= budget:
            stop = f"budget of {budget} runs spent"
            break
        if time_budget_s is not None and time.monotonic() - began >= time_budget_s:
            stop = f"time budget of {time_budget_s:g} s spent"
            break
        if guide is not None:
            ok, mu, sigma = model_view()
            ok = nodes.candidates(ok)
            if not ok.any():
                stop = "every configuration the model considers feasible was measured"
                break
            if best is None:
                # Nothing has worked yet: the predicted best untried configuration (on a
                # measured node count first, as recommend picks: s39 tester B5).
                run(space.configs[best_predicted(predictions, ok)], float("nan"))
                continue
            gains = expected_improvement(best.value, mu, sigma)
            gains = np.where(ok, gains * (1.0 - fail_prob), -1.0)
            pick = int(np.argmax(gains))
            if gains[pick] < noise() and len(trials) >= min_runs:
                # A guess about a level never measured is no reason to stop: try it first, if
                # it could beat the best run, at most ceil(budget / 4) of them (s31 reviewer).
                guess = None if len(guessed) >= most_guesses(budget) else guess_to_try(
                    predictions, ok, gains, could_beat(best.value, mu, sigma), tried)
                if guess is not None:
                    levels = [lv for lv in predictions.unmeasured[guess]
                              if lv in levels_left(predictions, tried)]
                    say(f"trying {space.configs[guess].label()}: the model never measured "
                        f"{', '.join(levels)}, so its prediction there is a guess")
                    guessed.append(f"{', '.join(levels)} ({space.configs[guess].label()})")
                    run(space.configs[guess], float(gains[guess]))
                    continue
                stop = (f"expected improvement {100 * gains[pick]:.1f} % of the best "
                        f"candidate ({space.configs[pick].label()}) is below the "
                        f"{noise_said()}")
                break
            run(space.configs[pick], float(gains[pick]))
        else:
            centre = best.config if best is not None else start
            options = [c for c in space.neighbours(centre) if space.index(c) not in tried]
            if best is None and not options:
                options = [c for c in space.configs if space.index(c) not in tried]
            options = nodes.order(options)
            if not options:
                stop = f"local optimum: every neighbour of {centre.label()} was measured"
                break
            run(options[0], float("nan"))
    if guessed:
        stop += f"; tried first what the model never measured: {'; '.join(guessed)}"
    runnable = np.ones(len(space.configs), bool) if guide is None else feasible
    stop += nodes.untried_said(runnable, tried)
    if guide is not None:  # on every stop, not the exhaustive one alone (s48)
        stop += ruled_out_said(space, predictions, feasible, tried)
    if guide is not None and predictions.unmeasured is not None:
        beats = None if best is None else could_beat(best.value, *model_view()[1:])
        held = nodes.held_back()
        stop += untried_guesses(
            predictions, tried, feasible & (predictions.value > 0)
            & (True if held is None else ~held), beats,
            f"at most {most_guesses(budget)} of a budget of {budget} runs try them; a larger "
            "--budget tries more" if len(guessed) >= most_guesses(budget)
            else "a larger --budget tries them")
    say(f"stopped: {stop}")
    answer, note = _answer(trials, best, noise())
    return TuneResult(objective, start, answer.config if answer else None,
                      answer.value if answer else float("nan"), trials, stop, noise(),
                      note=note, noise_said=noise_said(),
                      energy_source=energy_source_of(trials, answer))


def _answer(trials: list[Trial], kept: Trial | None, noise: float) -> tuple[Trial | None, str]:
    """The successful run of the lowest value (runtime, or energy for ``objective="energy"``;
    the earlier of equals) and, when it is not the run the search kept, a line saying so."""
    ok = [t for t in trials if t.status == "ok" and math.isfinite(t.value)]
    if not ok or kept is None:
        return kept, ""
    lowest = min(ok, key=lambda t: t.value)
    if lowest is kept or lowest.value >= kept.value:
        return kept, ""
    lead = 1 - lowest.value / kept.value
    # Each run was judged against the noise measured when it ran; that median can fall later,
    # so the lead is only called "within the noise" when it is within the final one.
    why = (f"within the noise {100 * noise:.1f} %" if lead <= noise else
           "which the search kept: it was set aside as within the noise measured when it ran")
    return lowest, (f"answer {lowest.config.label()}: {100 * lead:.1f} % lower than "
                    f"{kept.config.label()}, {why}; repeat both to be sure")


def energy_source_of(trials: list[Trial], answer: Trial | None) -> str:
    """The answer's energy source, or "modelled" when any measured energy was modelled (the
    front compares every run's)."""
    if answer is not None and answer.energy_source:
        return answer.energy_source
    return next((t.energy_source for t in trials if "modelled" in t.energy_source), "")


def fmt_value(value: float, objective: str) -> str:
    if not math.isfinite(value):
        return "-"
    return f"{value:.4g} {'J' if objective == 'energy' else 's'}"
