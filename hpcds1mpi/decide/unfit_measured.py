"""A program none of whose measured ok layouts fits the node: nothing offered ran ok.

recommend offers a program only ranks per node x threads within a node's cores (System 1's
grid), and its ranks per node up to the measured most. mplrs, which needs 3 or more ranks, was
swept at 3 and 4 ranks on a 2-core node (oversubscribed, ok); recommend then offered 1 and 2
ranks, never run, picked 1 rank under the heading "Offered only what was measured", and the
emitted job aborted at once (MPI_ERR_RANK; s43 tester G4). A program may refuse a rank count
it was never run at, so such a pick is no answer: :func:`nothing_fits_line` says so, the offer
lists it among what was left out (:func:`~hpcds1mpi.decide.offer.offer_heading` then does not
call the offer measured), and recommend escalates with it: its calibration sweep measures the
layouts that fit; or a cluster file with nodes of more cores offers the measured ones. Where
the layouts within the cores ran and failed (mplrs swept at 1-4 ranks), the line names them,
and the measured ok ones that need more cores.
"""

from __future__ import annotations

#: How the line starts (``offer_heading`` reads it).
NOTHING_FITS = "nothing it was measured ok at fits"


def ok_layouts(bundle, workload: str) -> list[tuple[int, int]] | None:
    """The (ranks per node, threads) of ``workload``'s ``ok`` training runs, any partition;
    None where the bundle keeps no training rows to read."""
    from hpcds1mpi.config import OK
    from hpcds1mpi.decide import bundle_cache

    try:
        rows = bundle_cache.training_columns(bundle)
        names, status = rows["workload"], rows["status"]
        ranks, threads = rows["ranks_per_node"], rows["threads"]
    except (AttributeError, KeyError, TypeError):
        return None
    return sorted({(int(r), int(t)) for w, s, r, t in zip(names, status, ranks, threads)
                   if str(w) == str(workload) and str(s) == OK})


def nothing_fits_line(levels, cores: int, workload: str,
                      ok: list[tuple[int, int]] | None = None) -> str:
    """One line when a program (its measured ``levels``) has no layout it ran ok at (``ok``,
    :func:`ok_layouts`; None: every layout ``levels`` ran at) within ``cores`` (the cores per
    node a job may use), so nothing recommend could offer ran ok; "" otherwise (a kernel, no
    levels, no ok run, one that fits)."""
    if levels is None or not levels.external or not levels.ranks_per_node or cores < 1:
        return ""
    if ok is None:
        ok = [(r, t) for r in levels.ranks_per_node for t in (levels.threads or [1])]
    if not ok:
        return ""
    least = min(r * t for r, t in ok)
    if least <= cores:
        return ""
    ran = ", ".join(str(r) for r in sorted({r for r, _ in ok}))
    each = sorted({t for _, t in ok})
    each = f" x {'/'.join(map(str, each))} threads" if each != [1] else ""
    failed = sorted({r for r in levels.ranks_per_node if r * min(levels.threads or [1]) <= cores})
    head = (f"{NOTHING_FITS} the {cores} core{'s' * (cores != 1)} per node: {workload} ran ok "
            f"only at {ran} ranks per node{each}")
    bigger = f"recommend for nodes of at least {least} cores (--cluster)"
    if failed:
        return (f"{head}, and failed at {', '.join(map(str, failed))} (within the cores); "
                f"{bigger}, where its ok layouts fit")
    fit = ",".join(str(n) for n in sorted({1, cores}))
    return (f"{head}, so every layout within the cores was never run (a program may refuse "
            f"fewer ranks); measure it at a layout that fits (sweep --ranks-per-node {fit}), "
            f"or {bigger}")


__all__ = ["NOTHING_FITS", "nothing_fits_line", "ok_layouts"]
