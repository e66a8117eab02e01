"""The guard's one-line reasons for a check that was not passed: what differs and by how much.

:func:`~hpcds1mpi.decide.guard.judge` decides the level of each check; the words are here, so
that a reason names the property that differs with both values (s31 tester Q8), says which
side of the measured sizes a size is on, names the model's workloads for one it lacks, and says why the learned check of a model trained on
one size per workload takes only measured sizes (s31 tester Q2).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from hpcds1mpi.decide.quantity_text import format_ratio

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.cluster import Partition


def hardware_reason(bundle, partition: "Partition") -> str:
    """Why ``partition`` matches no trained partition, naming what differs from the closest."""
    from hpcds1mpi.decide.trained_hardware import hardware_differences, trained_partitions

    head = (f"partition {partition.name} ({partition.cores_per_node} cores, "
            f"{partition.gpus_per_node} GPUs, {partition.memory_gb:g} GB) is unlike any machine "
            "the model was trained on")
    closest = None
    for name, hw in trained_partitions(bundle).items():
        found = hardware_differences(hw, partition)
        # Fewest differences first; the same name wins a tie.
        rank = (len(found), name != partition.name)
        if found and (closest is None or rank < closest[0]):
            closest = (rank, name, found)
    if closest is None:
        return head
    _, name, found = closest
    return (f"{head}: {'; '.join(found)} (closest trained partition: {name})"
            f"{_memory_source(trained_partitions(bundle)[name], partition)}")


def _memory_source(hw: dict, partition: "Partition") -> str:
    """Where only the memory differs from the trained partition ``hw``, a clause
    naming the other reading of it: a sweep inside a Slurm allocation records the node's
    RealMemory, so a cluster file that says the machine's whole memory is unlike the runs just
    measured on it (s31 verifier V3: "measure ... here" right after a calibration there). The
    bundle keeps no record of where its memory came from, so both readings are said; "" for a
    partition read from a Slurm allocation itself, or where more than the memory differs."""
    from dataclasses import replace

    from hpcds1mpi.decide.trained_hardware import hardware_differences

    try:
        trained = float(hw.get("memory_gb", 0))
    except (TypeError, ValueError):
        return ""
    if partition.allocated_cores_per_node is not None or not trained > 0 or \
            hardware_differences(hw, replace(partition, memory_gb=trained)):
        return ""
    given = ("this machine's memory as its OS reports it" if partition.name == "local" else
             f"the cluster file's memory_gb = {partition.memory_gb:g}")
    return (f"; only the memory differs: if the model's runs were measured inside a Slurm "
            f"allocation, {trained:g} GB is what Slurm gave them (the node's RealMemory) and "
            f"{given} disagrees with it: give partition {partition.name} memory_gb = "
            f"{trained:g} in the cluster file (--cluster FILE), as Slurm says, rather than "
            "measure again; if they ran on other hardware, calibrate on this partition")


def size_reason(size, lo: float, hi: float, ratio: float, escalate: bool, edge: float) -> str:
    """Why ``size`` outside the measured ``lo``–``hi`` is extrapolated, below or beyond, by
    how much, whether it asks to confirm or escalates (s31 reviewer: confirm said "outside");
    ``edge`` the ratio past which it escalates."""
    side = "below" if size < lo else "beyond"  # "beyond" of a size too small misled (Q8)
    return (f"size {size} is {_how_far(size, lo, hi, ratio, edge)} {side} the measured range "
            f"{lo:g}–{hi:g}{'' if escalate else ' (extrapolation)'}")


def _how_far(size, lo: float, hi: float, ratio: float, edge: float) -> str:
    """``ratio`` as "1.5x" (:func:`~hpcds1mpi.decide.quantity_text.format_ratio`: "1.96x" and
    "2.04x" on either side of ``edge``, not both "2.0x"), or under 10 % out as a percentage of
    the nearest measured size: "1.0x beyond" read as not beyond at all (s40 tester D3: 200
    against 192)."""
    if ratio >= 1.1:
        return format_ratio(ratio, edge)
    edge = lo if size < lo else hi
    return f"{abs(float(size) / edge - 1) * 100:.2g} %"


def no_heldout_size(calibration) -> bool:
    """Whether the learned check's thresholds rest on no held-out size: every training
    problem was its workload's only size, so none could be held out (the thresholds are 0:
    only a measured problem is familiar)."""
    kept = getattr(calibration, "heldout_problem_distances", None) or []
    finite = [d for d in kept if isinstance(d, (int, float)) and math.isfinite(d)]
    return not finite and calibration.escalate_threshold == 0


def learned_reason(workload: str, size, distance: float, threshold: float, calibration,
                   escalate: bool, between: tuple | None = None) -> str:
    """Why the learned check did not pass ``workload`` at ``size`` (``between``: the two
    measured sizes it lies between, whose wandering raised the threshold)."""
    if escalate and no_heldout_size(calibration):
        return (f"only a size measured on this hardware is familiar to this model: it has one "
                f"size of each workload, so no held-out size calibrated its learned check "
                f"(measure {workload} at size {size} here, or at a second size, and learn it)")
    if between is not None:
        return (f"the model places size {size} unlike the sizes around it between the measured "
                f"{between[0]:g} and {between[1]:g} (distance {distance:.4g} > {threshold:.4g})")
    if escalate:
        return (f"the job is far from everything measured (distance {distance:.4g} > "
                f"{threshold:.4g})")
    return (f"the job is at the edge of what was measured (distance {distance:.4g} > "
            f"{threshold:.4g})")


#: How many of a model's workloads a reason names before "and N more".
SHOWN_WORKLOADS = 6


def name_reason(workload: str, known: list[str]) -> str:
    """Why ``workload`` is not one of the model's (``known``): with ``did you mean 'stencil'?``
    for a name one slip from a measured one, else the kernel decks it was measured as, else
    the model's workloads (s41 tester A5: a program swept as 'external' was asked for as
    'meep', and the answer never named 'external')."""
    import difflib

    # Case first: labels are matched exactly, so 'CP2K' is a slip from 'cp2k' (s28 tester T).
    same = [k for k in known if k.casefold() == workload.casefold()]
    close = same or difflib.get_close_matches(workload, known, n=1, cutoff=0.75)
    from hpcds1mpi.records.kernel_options import decks_note  # stencil+sweeps.100 (s40 B13)

    head = f"workload {workload!r} was never measured"
    if close:
        return f"{head} (did you mean {close[0]!r}?)"
    if (decks := decks_note(workload, known)) or not known:
        return head + decks
    names = sorted(known)
    shown = ", ".join(repr(name) for name in names[:SHOWN_WORKLOADS]) + (
        f" and {len(names) - SHOWN_WORKLOADS} more" if len(names) > SHOWN_WORKLOADS else "")
    return f"{head} (the model's workloads: {shown}; give --workload one of them)"


__all__ = ["hardware_reason", "learned_reason", "name_reason", "no_heldout_size", "size_reason"]
