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
and the measured ok ones that need more cores; where every step a calibration would measure is
such a layout, failed at every measured size, :func:`doomed_calibration_note` offers none (its
job would spend its hour on a known refusal: s43 tester K6) and ``--emit`` refuses.
"""

from __future__ import annotations

#: How the line starts (``offer_heading`` reads it).
NOTHING_FITS = "nothing it was measured ok at fits"


def ok_layouts(bundle, workload: str) -> list[tuple[int, int]] | None:
    """The (ranks per node, threads) of ``workload``'s ``ok`` training runs, any partition;
    None where the bundle keeps no training rows to read. Read once per bundle and workload:
    every recommend asks it (its offer and its verdict)."""
    from hpcds1mpi.decide import bundle_cache

    found = bundle_cache.memo(bundle, ("ok_layouts", workload),
                              lambda: _read_ok_layouts(bundle, workload))
    return None if found is None else list(found)


def _read_ok_layouts(bundle, workload: str) -> list[tuple[int, int]] | None:
    """:func:`ok_layouts`, from the workload's training rows (:mod:`.workload_rows`)."""
    from hpcds1mpi.config import OK
    from hpcds1mpi.decide.workload_rows import workload_rows

    rows = workload_rows(bundle, workload)
    try:
        status, ranks, threads = rows["status"], rows["ranks_per_node"], rows["threads"]
    except (KeyError, TypeError):  # no training rows (None), or none with outcomes
        return None
    return sorted({(int(r), int(t)) for s, r, t in zip(status, ranks, threads) if str(s) == OK})


def unfit_line(bundle, levels, cores: int, workload: str) -> str:
    """:func:`nothing_fits_line` of ``workload`` with the layouts its training runs in
    ``bundle`` ran ok at and failed at (recommend's offer, verdict and calibration)."""
    return nothing_fits_line(levels, cores, workload, ok_layouts(bundle, workload),
                             failed_layouts(bundle, workload))


def nothing_fits_line(levels, cores: int, workload: str,
                      ok: list[tuple[int, int]] | None = None,
                      failed: dict | None = None) -> str:
    """One line when a program (its measured ``levels``) has no layout it ran ok at (``ok``,
    :func:`ok_layouts`; None: every layout ``levels`` ran at) within ``cores`` (the cores per
    node a job may use), so nothing recommend could offer ran ok; "" otherwise (a kernel, no
    levels, no ok run, one that fits). ``failed``: :func:`failed_layouts`, the layouts it ran
    at and failed (None: every ranks per node of ``levels``, as levels written before s45
    named failed runs' too; now they name ok runs' only, s45 tester B4)."""
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
    if failed is None:
        failed = sorted({r for r in levels.ranks_per_node
                         if r * min(levels.threads or [1]) <= cores})
    else:
        failed = sorted({r for _, r, t in failed if r * t <= cores})
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


def failed_layouts(bundle, workload: str) -> dict[tuple[int, int, int], list[int]]:
    """(nodes, ranks per node, threads) -> the sizes ``workload``'s training runs failed at
    (any status but ok), for the layouts that never ran ok; {} where the bundle keeps no
    training rows to read."""
    from hpcds1mpi.config import OK
    from hpcds1mpi.decide.workload_rows import workload_rows

    rows = workload_rows(bundle, workload)
    try:
        columns = [rows[c] for c in ("status", "nodes", "ranks_per_node", "threads", "size")]
    except (KeyError, TypeError):  # no training rows (None), or none with outcomes
        return {}
    failed: dict[tuple[int, int, int], set] = {}
    ran_ok = set()
    for s, n, r, t, size in zip(*columns):
        key = (int(n), int(r), int(t))
        if str(s) == OK:
            ran_ok.add(key)
        else:
            failed.setdefault(key, set()).add(int(size))
    return {key: sorted(sizes) for key, sizes in failed.items() if key not in ran_ok}


def doomed_calibration_note(steps, failed: dict, workload: str) -> str:
    """Why no calibration sweep (the line after recommendation's ``NO_CALIBRATION: ``) where
    every one of ``steps`` measures a layout in ``failed`` (:func:`failed_layouts`), else "":
    the sweep would fail as every measured size did."""
    layouts = [(s.config.nodes, s.config.ranks_per_node, s.config.threads) for s in steps]
    if not layouts or any(layout not in failed for layout in layouts):
        return ""
    sizes = sorted({size for layout in layouts for size in failed[layout]})
    names = ", ".join(dict.fromkeys(s.config.label() for s in steps))
    return (f"the layouts that fit the node ({names}) failed at every "
            f"size {workload} was measured at ({', '.join(map(str, sizes))}), so measuring "
            "them again would fail the same way; the fix is nodes of more cores (--cluster)")


__all__ = ["NOTHING_FITS", "doomed_calibration_note", "failed_layouts", "nothing_fits_line",
           "ok_layouts", "unfit_line"]
