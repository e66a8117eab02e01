"""System 1's scores for configurations a caller names, equal to the ones a recommendation
gives the same configurations, whatever else the caller names with them.

Two of System 1's corrections read the other rows of the table scored: an unmeasured
candidate's interval is widened to its partition's measured ones
(:func:`~hpcds1mpi.decide.unmeasured_bounds.widen_unmeasured`) and its runtime floored by
perfect scaling from the least costly measured one
(:func:`~hpcds1mpi.decide.scaling_floor.floor_to_perfect_scaling`). A table of the named
configurations alone had other references than the recommendation's grid: stencil 256 on 2
nodes x 2 ranks fp64 read 65.4 ms (36.1-111 ms) in ``recommend`` and ``advise``, 65.4 ms
(51.0-78.1 ms) predicted alone, 68.97 ms (44.9-186 ms) predicted beside the measured 1-node
layout (s35 tester R9). So :func:`score_named` scores each unmeasured named configuration
beside the measured-level rows of the job's own candidate grid on the partition (what
``recommend`` scores with no constraint), and the measured ones on their own (the corrections
leave measured rows alone, and a named one off the grid must not become another row's
reference).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from hpcds1mpi.cluster import Partition


def score_named(bundle, workload: str, size: int, part: "Partition", frame: "pd.DataFrame",
                uses_threads: bool = True) -> dict:
    """System 1's columns for the rows of ``frame`` (a candidate table of ``part``, in
    ``system1_candidates``' column order), in its order: ``{column: (len(frame),) array}``,
    each row scored as the job's recommendation scores it."""
    import pandas as pd

    from hpcds1mpi.decide import system1 as s1
    from hpcds1mpi.decide.bundle_cache import measured_levels
    from hpcds1mpi.decide.scores import unmeasured_rows

    levels = measured_levels(bundle).get(str(workload))
    unmeasured = unmeasured_rows(_config_columns(frame), levels)
    if not unmeasured.any():  # no row that reads the others: as named
        return dict(s1.score(bundle, workload, size, [part], frame=frame,
                             uses_threads=uses_threads).cols)
    grid = s1.grid(bundle, workload, size, [part], s1.Constraints(), uses_threads)
    grid = grid if isinstance(grid, pd.DataFrame) else grid.to_frame()
    grid = grid[list(frame.columns)]
    references = grid[~unmeasured_rows(_config_columns(grid), levels)]
    beside = pd.concat([references, frame[unmeasured]], ignore_index=True)
    scored = {True: s1.score(bundle, workload, size, [part], frame=beside,
                                 uses_threads=uses_threads).cols}
    if not unmeasured.all():
        scored[False] = s1.score(bundle, workload, size, [part],
                                     frame=frame[~unmeasured].reset_index(drop=True),
                                     uses_threads=uses_threads).cols
    skip = {True: len(references), False: 0}  # where the named rows start
    positions = {flag: np.flatnonzero(unmeasured == flag) for flag in scored}
    out = {}
    for name in scored[True]:
        if any(name not in cols for cols in scored.values()):
            continue
        first = np.asarray(scored[True][name])
        column = np.empty(len(frame), dtype=first.dtype if first.dtype.kind != "U" else object)
        for flag, cols in scored.items():
            at = positions[flag]
            column[at] = np.asarray(cols[name])[skip[flag]:skip[flag] + len(at)]
        out[name] = column
    return out


def _config_columns(frame: "pd.DataFrame") -> dict:
    return {c: np.asarray(frame[c]) for c in ("nodes", "ranks_per_node", "threads", "device",
                                              "precision")}


__all__ = ["score_named"]
