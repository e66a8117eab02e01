"""What ``recommend`` and ``tune`` may offer for a workload, and what they leave out and why.

A registered kernel is offered what it declares (``kernels.support``); its option deck
(``stencil+sweeps.1500``) only those of them it was measured at (:func:`deck_offer`). A
user's program, or any workload that is no kernel, is offered only the knob levels the bundle
measured it with (:mod:`hpcds1mpi.surrogates.levels`): its precisions, devices and thread
counts, and ranks per node up to the measured maximum — beyond it only where the familiarity
guard finds the job at those ranks per node as close to the training data as a familiar job
(:func:`extend_ranks_per_node`; recommend's and tune's one decision, :func:`extend_where_familiar`
and :func:`tune_offer`). A program whose sweep found that its ranks cannot be one job
(it links no MPI library: its ranks would be copies, and the sweep refuses more than one) is
offered only the rank counts and nodes it was measured at, whatever the guard says
(:func:`only_measured_ranks`; s39 tester A2: RAxML's 2 ranks, never run, alone on the front).
Each level left out gets one line saying why.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import numpy as np

from hpcds1mpi.errors import ConfigError
from hpcds1mpi.surrogates.levels import bundle_levels, runtime_line
from hpcds1mpi.surrogates.measured_offer import Offer, measured_offer

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.cluster import Partition
    from hpcds1mpi.surrogates.levels import MeasuredLevels
    from hpcds1mpi.decide.guard import GuardCalibration, Reference


def offer_for(bundle, workload: str, partitions: Sequence["Partition"],
              device: str | None = None, nodes_offered: int | None = None) -> Offer:
    """The offer for ``workload`` on ``partitions`` (``device``: ``--device``, if given).

    ``nodes_offered``: the most nodes the caller could pick (recommend:
    :func:`most_nodes_offered`); a program's node counts above its measured most are then
    named among what was left out (s28 tester Y: nodes 3-4 of a 4-node partition vanished
    without a word), and a program none of whose measured layouts fits the partitions' cores
    is said to be offered only layouts never run (:mod:`.unfit_measured`). None (``tune``,
    which measures any node count): neither is judged.

    Raises:
        ConfigError: ``--device`` names a device the program was never measured on.
    """
    from hpcds1mpi.kernels import support

    levels = bundle_levels(bundle, workload) if bundle is not None else None
    if levels is None:
        uses_threads, precisions, devices = support(workload)
        offer = Offer(uses_threads, precisions, devices)
        if (levels := deck_levels(bundle, workload)) is not None:  # s47 tester N2
            offer = deck_offer(offer, levels, partitions)
    else:
        have = ["cpu"] + (["gpu"] if any(p.gpus_per_node for p in partitions) else [])
        cores = max(p.usable_cores_per_node for p in partitions)
        offer = measured_offer(levels, have, cores, nodes_offered=nodes_offered)
        only_measured_ranks(offer)
        from hpcds1mpi.decide.unfit_measured import unfit_line  # s43 G4

        # recommend's offer (tune's, nodes_offered None, measures what it offers)
        if nodes_offered is not None and (line := unfit_line(bundle, levels, cores, workload)):
            offer.left_out.append(line)
    if device is not None:
        if levels is not None and device not in levels.devices:
            measured = ", ".join(levels.devices) or "nothing"
            raise ConfigError(f"--device {device}: {workload} was never measured on {device} "
                              f"(measured on {measured}); sweep it there first, or drop "
                              "--device")
        offer.devices = [device]
    return offer


def deck_levels(bundle, workload: str) -> "MeasuredLevels | None":
    """The measured levels of a kernel's option deck (``stencil+sweeps.1500``) in ``bundle``;
    None for a plain kernel (it keeps its declared knobs), any other workload, or a deck the
    bundle never measured (the guard escalates it)."""
    from hpcds1mpi.kernels import declaring

    if bundle is None or declaring(workload) in (None, workload):
        return None
    levels = bundle_levels(bundle, workload, decks=True)
    return None if levels is None or levels.external else levels


def deck_offer(offer: Offer, levels: "MeasuredLevels",
               partitions: Sequence["Partition"]) -> Offer:
    """A kernel's ``offer`` narrowed to the levels its option deck was measured at: those of
    its kernel's declared precisions, devices and thread counts, and ranks per node up to the
    measured most, each level left out named (README: such a workload "is offered the levels
    it measured"). Its options change what a run computes, so the default deck's runs say
    nothing of the others: s47 tester N2, ``stencil+sweeps.1500`` measured at fp64 and 2 ranks
    was picked at fp32 and 1 rank for the 10-sweep deck's 68 ms; the job ran 1.39 s and failed
    fp32's tolerance. Its nodes keep a kernel's rule (its work model carries them so far:
    :mod:`~hpcds1mpi.decide.measured_nodes`), and ``levels`` stays off the offer: the rules of
    a program's levels (its command, launcher, runtime) are not a kernel's."""
    gpus = any(p.gpus_per_node for p in partitions)
    have = [d for d in ("cpu", "gpu") if (d == "cpu" or gpus) and d in (offer.devices or (d,))]
    cores = max(p.usable_cores_per_node for p in partitions)
    narrowed = measured_offer(levels, have, cores, precisions_known=offer.precisions)
    narrowed.uses_threads = offer.uses_threads and narrowed.uses_threads
    narrowed.levels = None
    return narrowed


def only_measured_ranks(offer: Offer) -> None:
    """Hold a program whose sweep recorded that its ranks cannot be one job
    (:func:`~hpcds1mpi.surrogates.program_launcher.one_rank_only`) to the ranks per node and
    nodes it was measured at, naming why in place of the lines of levels merely never measured;
    an offer without such a record is left as it is."""
    from hpcds1mpi.surrogates.program_launcher import one_rank_only

    levels = offer.levels
    why = one_rank_only(levels.launched_with) if levels is not None else ""
    if not why:
        return
    top = levels.max_ranks_per_node or 1
    most = max(levels.nodes) if levels.nodes else 1
    offer.max_ranks_per_node, offer.max_nodes = top, most
    offer.left_out = [line for line in offer.left_out
                      if not line.startswith(("ranks per node above", "nodes "))]
    ranks = top * most
    offer.left_out.append(
        f"more than {ranks} rank{'s' if ranks > 1 else ''} (ranks per node above {top}, nodes "
        f"above {most}): {why}; its sweep refuses more than one rank, so no such layout is "
        "offered (a build of it that links MPI, swept at more ranks, would be)")


def most_nodes_offered(partitions: Sequence["Partition"], max_nodes: int | None) -> int:
    """The most nodes ``recommend`` could pick on ``partitions`` under ``--max-nodes``."""
    most = max(p.max_nodes for p in partitions)
    return most if max_nodes is None else min(most, max_nodes)


def extend_ranks_per_node(offer: Offer, bundle, workload: str, size: int,
                          partitions: Sequence["Partition"], ref: "Reference",
                          calibration: "GuardCalibration") -> Offer:
    """Ranks per node beyond the measured maximum, where the guard accepts the extrapolation.

    The job is placed at each larger ranks-per-node count (one node, the measured threads,
    devices and precisions); a count is accepted when its learned distance to the training
    data (:func:`hpcds1mpi.decide.guard.rows_distance`, median over its rows) is within the
    guard's ``auto`` threshold, and so is every smaller count. The offer's line says which
    counts were accepted, or that none was and why.
    """
    from hpcds1mpi.decide import guard as guard_mod
    from hpcds1mpi.decide.system1 import model_table
    from hpcds1mpi.decide.system1_candidates import (Constraints, candidate_columns,
                                                     candidate_frame)
    from hpcds1mpi.surrogates.columns import takes_columns

    top = offer.max_ranks_per_node
    cores = max(p.usable_cores_per_node for p in partitions)
    if offer.levels is None or not top or top >= cores or offer.max_nodes is not None:
        return offer  # max_nodes: its ranks cannot be one job (only_measured_ranks)
    build = candidate_columns if takes_columns(bundle) else candidate_frame  # a stand-in
    frame = build(workload, size, partitions,
                            Constraints(max_nodes=1, devices=offer.devices,
                                        precisions=offer.precisions, threads=offer.threads),
                            uses_threads=offer.uses_threads)
    frame = frame[np.asarray(frame["ranks_per_node"] > top)]
    if not takes_columns(bundle):
        frame = frame.reset_index(drop=True)
    if len(frame) == 0:
        return offer
    # The guard reads hardware and the name as the bundle knows them (see model_table).
    dist = guard_mod.rows_distance(bundle, ref, model_table(bundle, frame, partitions),
                                   k=calibration.k)
    rpn = np.asarray(frame["ranks_per_node"])
    accepted, worst = top, None
    for r in np.unique(rpn):
        d = guard_mod.median(dist[rpn == r])
        if not np.isfinite(d) or d > calibration.auto_threshold:
            worst = (int(r), d)
            break
        accepted = int(r)
    what = "this program" if offer.levels.external else "this workload"
    line = next((i for i, t in enumerate(offer.left_out) if t.startswith("ranks per node above")),
                None)
    if accepted > top:
        span = f"{accepted}" if accepted == top + 1 else f"{top + 1}-{accepted}"
        text = (f"ranks per node {span}: beyond the measured maximum {top} for "
                f"{what}, {_GUARD_OFFERED} (distance within "
                f"{calibration.auto_threshold:.2f})")
        if accepted < cores:
            text += f"; above {accepted} left out"
    else:
        text = f"ranks per node above {top}: beyond the measured maximum for {what}"
        if worst is not None:
            text += (f" (the guard finds {worst[0]} unfamiliar: distance {worst[1]:.2f} > "
                     f"{calibration.auto_threshold:.2f})")
    if line is None:
        offer.left_out.append(text)
    else:
        offer.left_out[line] = text
    offer.max_ranks_per_node = accepted
    return offer


def extend_where_familiar(offer: Offer, bundle, workload: str, size: int,
                          partitions: Sequence["Partition"], ref: "Reference",
                          calibration: "GuardCalibration") -> Offer:
    """``offer`` extended by :func:`extend_ranks_per_node` for a program ``bundle`` measured,
    judged on those of ``partitions`` whose hardware it was trained on; as it is otherwise.
    recommend's and tune's one decision, so tune measures what recommend offers (s48 tester
    Q6: recommend's front held an unmeasured 2 ranks per node that tune refused to run)."""
    from hpcds1mpi.decide.trained_hardware import matching_partition

    if offer.levels is None or workload not in {str(w) for w in bundle.workloads}:
        return offer
    familiar = [p for p in partitions if matching_partition(bundle, p) is not None]
    if not familiar:
        return offer
    return extend_ranks_per_node(offer, bundle, workload, size, familiar, ref, calibration)


def tune_offer(bundle, workload: str, size: int, partition: "Partition", model_dir) -> Offer:
    """What ``tune`` may run of a program on ``partition`` (the model's view of it): the
    levels it measured, and ranks per node beyond them where the guard finds them familiar,
    as recommend offers them (:func:`extend_where_familiar`)."""
    from hpcds1mpi.decide import guard as guard_mod

    offer = offer_for(bundle, workload, [partition])
    ref = guard_mod.reference(bundle)
    return extend_where_familiar(offer, bundle, workload, size, [partition], ref,
                                 guard_mod.load_calibration(bundle, model_dir, ref))


#: How a line of levels offered beyond the measured ones says so (:func:`offer_heading`).
_GUARD_OFFERED = "offered because the guard finds them familiar"


def guard_offered(line: str) -> bool:
    """Whether a line of an offer's ``left_out`` says what it offers beyond the measured
    levels (tune says it, not as "left out")."""
    return _GUARD_OFFERED in line


def offer_heading(left_out: Sequence[str]) -> str:
    """The heading of recommend's list of ``left_out`` lines: "only what was measured" unless
    a line says that unmeasured ranks per node were offered (s39 tester A2: the heading
    contradicted the line below it); nor where nothing measured fits the node, and every
    layout offered is one never run (s43 tester G4)."""
    from hpcds1mpi.decide.unfit_measured import NOTHING_FITS

    if any(line.startswith(NOTHING_FITS) for line in left_out):
        return "Offered no layout it was measured ok at (none fits the node); left out:"
    if any(guard_offered(line) for line in left_out):
        return "Offered what was measured, and ranks per node the guard finds familiar; left out:"
    return "Offered only what was measured; left out:"


def check_offer(offer: Offer, workload: str) -> None:
    """Refuse an offer with nothing left in it (one line naming what was measured)."""
    if offer.devices is not None and not offer.devices:
        measured = ", ".join(offer.levels.devices) if offer.levels else "nothing"
        raise ConfigError(f"{workload} was measured only on {measured}, which no allowed "
                          "partition has; allow such a partition or sweep it here first")
    if offer.precisions is not None and not offer.precisions:
        raise ConfigError(f"{workload} has no measured precision; sweep it first")


def runtime_note(bundle, workload: str) -> dict | None:
    """Which runtime the model learned for a program: ``{"source": ..., "line": ...}`` —
    ``source`` as its telemetry recorded it (the ``launch`` attribute's ``runtime``, or
    ``unknown``), ``line`` the sentence for the user. None for a kernel or a workload the
    bundle never measured as a program."""
    levels = bundle_levels(bundle, workload) if bundle is not None else None
    line = runtime_line(levels)
    return None if line is None else {"source": levels.runtime, "line": line}


__all__ = ["check_offer", "deck_levels", "deck_offer", "extend_ranks_per_node",
           "extend_where_familiar", "guard_offered", "most_nodes_offered", "offer_for",
           "offer_heading", "only_measured_ranks", "runtime_note", "tune_offer"]
