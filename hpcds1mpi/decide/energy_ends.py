"""A candidate's energy ends follow its runtime ends when a rule of System 1 raises them:
energy is power x time, so the time raised raises the energy in proportion.

Two rules raise a runtime past the model's and may leave its upper end unknown (``inf``): the
timeout bound (:func:`~hpcds1mpi.decide.timed_out.raise_to_timeouts`) and the perfect-scaling
floor (:func:`~hpcds1mpi.decide.scaling_floor.floor_to_perfect_scaling`). :func:`follow_runtime`
is what both do to the energy:

* each energy end times its runtime end's factor;
* an end whose runtime is now unknown times the median's factor: no energy is infinite, and
  the model's upper end stays as far above its median as the model put it (s47 tester L6);
* then an end that would pass the median, or sit on it, is put as far from it, relatively,
  as the runtime's end is from the runtime's median: ``energy_j x runtime_lo / runtime_s``
  (``_hi`` alike, where that end is known). A never-measured layout raised from a timed-out
  one had kept the model's upper end (a 17th of its raised median, floored to the median:
  192 J-192 J), and its lower end, raised by its runtime's larger factor, could pass the
  median (s47 review RX3). An end on its side of the median keeps its value: a rule that
  only raises runtimes never lowers an energy's lower end below the model's (s48 review
  RX1: a timeout-bounded row's 95 J had become 50 J, nothing raised).
"""

from __future__ import annotations

import numpy as np

#: Each runtime column with its energy column.
ENDS = (("runtime_s", "energy_j"), ("runtime_lo", "energy_lo"), ("runtime_hi", "energy_hi"))


def follow_runtime(cols: dict, rows: np.ndarray, before: dict) -> None:
    """In place: the energy ends of candidates ``rows`` once a rule has moved their runtime
    ends from ``before`` (each runtime column of :data:`ENDS` -> ``(len(rows),)`` its old
    values) to ``cols``' (module docstring). The energy columns are replaced by copies: a kept
    table's arrays are shared.

    Args:
        cols: System 1's candidate columns, runtimes already moved.
        rows: ``(k,)`` the indices of the candidates moved.
        before: their runtimes before the move.
    """
    with np.errstate(invalid="ignore", divide="ignore"):  # an old end 0, NaN or inf
        factors = {r: np.asarray(cols[r], dtype=float)[rows] / before[r] for r, _ in ENDS}
    by_median = np.where(np.isfinite(factors["runtime_s"]), factors["runtime_s"], 1.0)
    energies = {}
    for runtime, energy in ENDS:
        factor = np.where(np.isinf(np.asarray(cols[runtime], dtype=float)[rows]), by_median,
                          factors[runtime])
        energies[energy] = np.array(cols[energy], dtype=float)
        energies[energy][rows] *= np.where(np.isfinite(factor), factor, 1.0)
    point, lo, hi = (np.asarray(cols[r], dtype=float)[rows] for r, _ in ENDS)
    median = energies["energy_j"][rows]
    with np.errstate(invalid="ignore", divide="ignore"):
        for energy, bound, wrong_side in (("energy_lo", median * (lo / point), np.greater_equal),
                                          ("energy_hi", median * (hi / point), np.less_equal)):
            end = energies[energy][rows]  # a bound not known (NaN, inf) leaves it
            moved = wrong_side(end, median) & np.isfinite(bound)
            energies[energy][rows] = np.where(moved, bound, end)
    cols.update(energies)
