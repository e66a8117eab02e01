"""A known machine measured under another partition name: one machine, not two.

A machine id (:func:`hpcds1mpi.measure.meters.machine_id`) hashes the hardware, the MPI
library and the partition's name, so one machine's runs under another name for its partition
(a cluster file's ``debug`` for the ``local`` a model was trained as) got another id, and
``learn`` refused them where ``tune`` and ``recommend`` take that partition for the trained
one (same hardware), s33 tester B6. Here a machine is a known one when its fingerprint, with
the known machine's partition name in place of its own, is the known id: its CPU, cores,
memory, GPUs and MPI library all equal. Runs of other hardware or another MPI are still
refused (:func:`hpcds1mpi.records.machines.refuse_foreign_machines`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd


def machines_of(paths: Iterable) -> dict[str, dict]:
    """The machines tables of telemetry files, one row per machine id."""
    from hpcds1mpi.records.telemetry import load

    rows: dict[str, dict] = {}
    for path in paths:
        rows.update({str(k): dict(v) for k, v in load(path).machines.items()})
    return rows


def renamed_machines(machines: dict[str, dict], known: set[str],
                     partitions: Iterable[str]) -> dict[str, tuple[str, str]]:
    """Machine id -> (known id, trained partition name), for each machine of ``machines``
    outside ``known`` whose fingerprint under one of the trained ``partitions``' names is a
    known id (empty when none is)."""
    from hpcds1mpi.measure.meters import machine_id

    known = set(known)
    found = {}
    for mid, row in machines.items():
        if mid not in known and (match := known_as(row, known, partitions)) is not None:
            found[mid] = match
    return found


def known_as(row: dict, known: set[str], partitions: Iterable[str]) -> tuple[str, str] | None:
    """(known id, partition name) where the machines-table ``row`` is a ``known`` machine:
    its own id, or its fingerprint under one of the trained ``partitions``' names; None when
    it is another machine. The one rule of "the model's machine": ``learn`` applies it to the
    runs it is given, ``tune`` to the machine it is about to run on (s37 tester K1: tune had
    judged an allocation's memory share "other hardware" where learn took its runs)."""
    from hpcds1mpi.measure.meters import machine_id

    known = set(known)
    own = machine_id(row)
    if own in known:
        return own, str(row.get("partition") or "")
    for name in sorted({str(p) for p in partitions}):
        as_trained = machine_id({**row, "partition": name})
        if as_trained in known:
            return as_trained, name
    return None


def unlearnable_machines(paths: Iterable, known: set[str], partitions: Iterable[str]
                         ) -> list[str]:
    """The machine ids of telemetry ``paths`` whose runs ``learn`` refuses for a bundle of
    ``known`` machines trained on ``partitions``: neither known nor one of them under another
    partition name (empty for a bundle of no machine, a job table's, which takes any)."""
    if not known:
        return []
    machines = machines_of(paths)
    renamed = renamed_machines(machines, known, partitions)
    return sorted(set(machines) - set(known) - set(renamed))


def learnt_as_known(frame: "pd.DataFrame", renamed: dict[str, tuple[str, str]]
                    ) -> tuple["pd.DataFrame", list[str]]:
    """``frame`` with the runs of each ``renamed`` machine under its known id and trained
    partition name (the name is a model feature: recommend predicts that partition as the
    trained one), and one note per machine saying so. ``frame`` itself is unchanged."""
    if not renamed or "machine_id" not in frame.columns:
        return frame, []
    frame = frame.copy()  # keeps .attrs (the MPI libraries a refusal names)
    ids = frame["machine_id"].astype(str)
    notes = []
    for mid, (known, trained) in sorted(renamed.items()):
        mask = ids == mid
        if not mask.any():
            continue
        old = sorted(set(frame.loc[mask, "partition"].dropna().astype(str)) - {""}) \
            if "partition" in frame.columns else []
        frame["machine_id"] = frame["machine_id"].astype(object).where(~mask, known)
        if "partition" in frame.columns:
            frame["partition"] = frame["partition"].astype(object).where(~mask, trained)
        notes.append(f"the {int(mask.sum())} run(s) of machine {mid} (partition "
                     f"{', '.join(old) or '?'}) are of the bundle's machine {known} under "
                     f"another partition name (same hardware and MPI library): learnt as "
                     f"partition {trained}'s")
    return frame, notes


def one_machine_under_names(frame: "pd.DataFrame", machines: dict[str, dict]
                            ) -> tuple["pd.DataFrame", list[str]]:
    """``frame`` with the machines of ``machines`` that differ only in their partition's name
    made one: each such group's runs under the id (and partition name) of its machine with
    the most runs, and one note per machine folded in. ``train`` had refused one machine's
    runs under two partition names that ``learn`` takes as one (s33's left item): a partition
    name does not change how fast the hardware runs."""
    from hpcds1mpi.measure.meters import machine_id

    if "machine_id" not in frame.columns or "partition" not in frame.columns:
        return frame, []
    counts = frame["machine_id"].astype(str).value_counts()
    groups: dict[str, list[str]] = {}
    for mid in sorted(counts.index, key=lambda m: (-counts[m], m)):  # most runs first
        if mid in machines:
            groups.setdefault(machine_id({**machines[mid], "partition": ""}), []).append(mid)
    notes: list[str] = []
    for ids in groups.values():
        if len(ids) < 2:
            continue
        kept = ids[0]
        name = str(machines[kept].get("partition") or "")
        frame, said = learnt_as_known(frame, renamed_machines(
            {mid: machines[mid] for mid in ids[1:]}, {kept}, [name]))
        notes += [line.replace("of the bundle's machine", "of machine").replace(
            "learnt as", "trained as") for line in said]
    return frame, notes
