"""A bundle's answer read as System 1 reads it, for a caller outside System 1's own scoring
(``mobo``'s objective): the same runtime and energy ``recommend`` prints for a layout."""

from __future__ import annotations


def system1_reading(bundle, part, workload: str, size: int):
    """``reading(configs, prediction) -> prediction`` for :class:`BundleObjective`: runtime
    and energy as ``recommend`` reads them (System 1's measured-runs rules: a configuration
    measured at this size on this hardware is its runs' median, one between two measured
    sizes their interpolation, one beyond its own sizes its edge run grown; the model's
    answer elsewhere), so a layout reads the same number in both commands (s36 tester E8:
    mobo printed the model's 110 ms where recommend printed the measured 75.7 ms)."""
    import numpy as np

    from hpcds1mpi.decide.memory_limits import MemoryLimit
    from hpcds1mpi.decide.system1 import (OPTIONAL_COLUMNS, PRED_COLUMNS, Constraints,
                                          scores_from_prediction)

    limits = {part.name: MemoryLimit.nominal(part)}  # memory is memory_judge's, not read here

    def read(configs, pred):
        if any(c not in pred.columns for c in PRED_COLUMNS if c not in OPTIONAL_COLUMNS):
            return pred  # a stand-in without System 1's columns: recommend refuses it anyway
        frame = configs.assign(partition=part.name)
        cols = scores_from_prediction(bundle, workload, size, [part], Constraints(), limits,
                                      frame, pred).cols
        out = pred.copy()
        for col in ("runtime_s", "runtime_lo", "runtime_hi", "energy_j", "energy_lo",
                    "energy_hi"):
            out[col] = np.asarray(cols[col], dtype=float)
        if "avg_power_w" in out:
            with np.errstate(divide="ignore", invalid="ignore"):
                out["avg_power_w"] = out["energy_j"] / out["runtime_s"]
        return out

    return read
