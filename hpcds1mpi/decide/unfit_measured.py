"""A program none of whose measured layouts fits the node: nothing offered was ever run.

recommend offers a program only ranks per node x threads within a node's cores (System 1's
grid), and its ranks per node up to the measured most. mplrs, which needs 3 or more ranks, was
swept at 3 and 4 ranks on a 2-core node (oversubscribed, ok); recommend then offered 1 and 2
ranks, never run, picked 1 rank under the heading "Offered only what was measured", and the
emitted job aborted at once (MPI_ERR_RANK; s43 tester G4). A program may refuse a rank count
it was never run at, so such a pick is no answer: :func:`nothing_fits_line` says so, the offer
lists it among what was left out (:func:`~hpcds1mpi.decide.offer.offer_heading` then drops
"only what was measured"), and recommend escalates with it: its calibration sweep measures
the layouts that fit; or a cluster file with nodes of more cores offers the measured ones.
"""

from __future__ import annotations

#: Where the offer's left-out line says this (``offer_heading`` reads it).
NOTHING_FITS = "nothing it was measured at fits"


def nothing_fits_line(levels, cores: int, workload: str) -> str:
    """One line when every layout ``levels`` (a program's measured levels) ran at has more
    ranks x threads than ``cores`` (the cores per node a job may use), so every layout
    recommend could offer was never run; "" otherwise (a kernel, no levels, one that fits)."""
    if levels is None or not levels.external or not levels.ranks_per_node or cores < 1:
        return ""
    ranks, threads = sorted(levels.ranks_per_node), sorted(levels.threads or [1])
    least = ranks[0] * threads[0]
    if least <= cores:
        return ""
    ran = ", ".join(str(r) for r in ranks)
    each = f" x {threads[0]} threads" if threads[0] > 1 else ""
    return (f"{NOTHING_FITS} the {cores} core{'s' * (cores != 1)} per node: {workload} ran only "
            f"at {ran} ranks per node{each}, so every layout within the cores was never run "
            "(a program may refuse fewer ranks); measure it at a layout that fits "
            f"(sweep --ranks-per-node {','.join(str(n) for n in sorted({1, cores}))}), or recommend for nodes of at least {least} "
            "cores (--cluster)")


__all__ = ["NOTHING_FITS", "nothing_fits_line"]
