"""The one check of a recommended pick against the measured configurations of its size."""

from __future__ import annotations

KNOBS = ["ranks", "threads"]


def assert_pick_is_good(name: str, size: int, held, pick: dict) -> None:
    """``pick`` (recommend --json's) is on the better half of ``held``'s measured configurations,
    or no slower than the best by more than the two runs' own measured noise (repeats of a
    10-ms HPL differ by tens of percent on a shared 2-core machine: a difference inside that
    says nothing about the pick)."""
    runs = held.set_index(KNOBS)
    key = (pick["nodes"] * pick["ranks_per_node"], pick["threads"])
    measured, best_key = float(runs.loc[key, "runtime_s"]), runs["runtime_s"].idxmin()
    best = float(runs.loc[best_key, "runtime_s"])
    noise = max(float(runs.loc[key, "noise"]), float(runs.loc[best_key, "noise"]))
    print(f"{name} {size}: pick {pick['ranks_per_node']}x{pick['threads']} {measured:.4f} s, "
          f"best {best:.4f} s ({100 * best / measured:.0f} % of best), noise {noise:.0%}")
    assert measured <= runs["runtime_s"].median() or measured <= best * (1 + noise), \
        f"{name} {size}: the pick is slower than the median and than the best by more than noise"
