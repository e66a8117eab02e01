"""How a reader's time grows with its input: linear, not quadratic (s32 tester S1-S4)."""

from __future__ import annotations

import time


def best_seconds(call, repeats: int = 3) -> float:
    """The fastest of ``repeats`` calls of ``call()``: a loaded machine's pauses do not count."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - start)
    return best


def assert_linear(seconds_at, small: int, factor: int = 4) -> None:
    """``seconds_at(factor * small)`` about ``factor`` times ``seconds_at(small)``: linear
    gives ~4x for 4x the input, quadratic ~16x; under 8x (plus 50 ms of noise) passes."""
    short, long = seconds_at(small), seconds_at(factor * small)
    assert long < 2 * factor * short + 0.05, (small, short, long)
