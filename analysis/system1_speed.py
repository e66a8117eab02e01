"""How long System 1 takes on a whole candidate grid, with and without the model's predict.

System 1's own work (grid, frame, feasibility, choice) is timed by scoring against a stand-in
whose ``predict`` returns an answer computed once beforehand (:class:`PrecomputedAnswer`);
the same call against the real bundle gives the total. Used by the System 1 evaluation, the
recommend speed benchmark and System 1's speed test.
"""

from __future__ import annotations

import time

from hpcds1mpi.decide import system1 as s1
from hpcds1mpi.decide.memory_limits import learn_memory_limits


class PrecomputedAnswer:
    """A bundle stand-in that answers every ``predict`` with one precomputed frame."""

    def __init__(self, bundle, answer):
        self._bundle = bundle
        self._answer = answer

    def predict(self, frame):
        return self._answer

    def training_frame(self):
        return self._bundle.training_frame()


def scoring_times(bundle, workload: str, size: int, partition, *, repeats: int = 7,
                  objective: str = "time") -> dict:
    """Seconds per call of System 1 on every candidate of ``partition``.

    Each timing is taken ``repeats`` times after one untimed warm-up call (the first call
    fills the work-model caches); the memory limits are learned once beforehand.

    Args:
        bundle: the model bundle.
        workload, size: the problem.
        partition: the one partition whose whole grid is scored.
        repeats: timed calls of each kind.
        objective: the objective ``choose`` picks by.

    Returns:
        ``candidates`` (the grid's size) and three lists of ``repeats`` seconds:
        ``score_choose`` (score + choose with the bundle's predict), ``predict`` (the bundle's
        predict alone) and ``system1_only`` (score + choose on the precomputed answer).
    """
    frame = s1.candidate_frame(workload, size, [partition])
    limits = learn_memory_limits(bundle, [partition])
    stand_in = PrecomputedAnswer(bundle, bundle.predict(frame))

    def timed(fn) -> list[float]:
        fn()
        out = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            fn()
            out.append(time.perf_counter() - t0)
        return out

    def choose_with(model):
        return s1.choose(s1.score(model, workload, size, [partition], limits=limits), objective)

    return {"candidates": int(len(frame)),
            "score_choose": timed(lambda: choose_with(bundle)),
            "predict": timed(lambda: bundle.predict(frame)),
            "system1_only": timed(lambda: choose_with(stand_in))}
