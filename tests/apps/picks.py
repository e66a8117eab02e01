"""The one check of a recommended pick against the measured configurations of its size."""

from __future__ import annotations

KNOBS = ["ranks", "threads"]


def combine(frames):
    """One row per configuration from rounds of one size measured at different times.

    ``runtime_s``: the median of the rounds' runtimes; ``noise``: the median of the rounds'
    own noise (their repeats' spread; not the spread across rounds, which would widen the
    check's noise allowance). On a shared machine the load changes over seconds, so
    back-to-back repeats of one configuration can share a slow spell that the others missed;
    rounds spread every configuration over the same stretch of time.
    """
    import pandas as pd

    runs = pd.concat(frames, ignore_index=True)
    assert (runs["status"] == "ok").all(), runs[runs["status"] != "ok"][["error"]]
    grouped = runs.groupby(KNOBS)
    out = grouped["runtime_s"].median().to_frame()
    out["noise"] = grouped["noise"].median()
    out["rounds"] = grouped.size()
    return out.reset_index()


def assert_pick_is_good(name: str, size: int, held, pick: dict) -> None:
    """``pick`` (recommend --json's) is on the better half of ``held``'s measured configurations,
    or no slower than the best by more than the two runs' own measured noise (repeats of a
    10-ms HPL differ by tens of percent on a shared 2-core machine: a difference inside that
    says nothing about the pick). "Better half" allows half that noise over the median: a pick
    equal to the median to the printed digit failed CI by 0.0 %."""
    runs = held.set_index(KNOBS)
    key = (pick["nodes"] * pick["ranks_per_node"], pick["threads"])
    measured, best_key = float(runs.loc[key, "runtime_s"]), runs["runtime_s"].idxmin()
    best = float(runs.loc[best_key, "runtime_s"])
    median = float(runs["runtime_s"].median())
    noise = max(float(runs.loc[key, "noise"]), float(runs.loc[best_key, "noise"]))
    # The margin: how much slower the pick could have measured and still passed (negative:
    # failed by that much), so that repeated runs show how close the check came.
    median_allowed = median * (1 + noise / 2)
    margin = max(median_allowed, best * (1 + noise)) / measured - 1
    print(f"{name} {size}: pick {pick['ranks_per_node']}x{pick['threads']} {measured:.4f} s, "
          f"best {best:.4f} s ({100 * best / measured:.0f} % of best), median "
          f"{median:.4f} s, noise {noise:.0%}; margin {margin:+.0%}; measured: " + ", ".join(
              f"{r}x{t} {v:.4f} s" for (r, t), v in runs["runtime_s"].items()))
    assert measured <= median_allowed or measured <= best * (1 + noise), \
        f"{name} {size}: the pick is slower than the median and than the best by more than noise"
