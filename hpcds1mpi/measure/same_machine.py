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


def untold_machines(machines: dict[str, dict], known: set[str], partitions: dict
                    ) -> dict[str, tuple[str, str]]:
    """Machine id -> (known id, whose record lacks the signature: "bundle" or "runs"), for
    each machine of ``machines`` outside ``known`` that is a known one but for the CPU
    generation, which one side does not say: a generic CPU name
    (:func:`~hpcds1mpi.cpu_signature.untold_generation`) recorded before the CPU's signature
    was, by the bundle (the row with no signature is a known id) or by the runs (the row with
    a trained partition's signature is). Either is taken as other hardware (s38 tester K2);
    the refusal says why (:func:`hpcds1mpi.records.machines.refuse_foreign_machines`)."""
    from hpcds1mpi.cpu_signature import generic_cpu_name, untold_generation
    from hpcds1mpi.measure.meters import machine_id

    known = set(known)
    found = {}
    for mid, row in machines.items():
        if mid in known or not generic_cpu_name(row.get("cpu_model")):
            continue
        if not untold_generation(row):
            match = known_as({**row, "cpu_signature": ""}, known, partitions)
            if match is not None:
                found[mid] = (match[0], "bundle")
            continue
        for name, hw in sorted((partitions or {}).items()):
            signature = str((hw or {}).get("cpu_signature") or "")
            as_trained = machine_id({**row, "cpu_signature": signature, "partition": name})
            if signature and as_trained in known:
                found[mid] = (as_trained, "runs")
                break
    return found


def untold_twins(machines: dict[str, dict]) -> list[str]:
    """One line per machine of ``machines`` recorded with a generic CPU name and no signature
    (:func:`~hpcds1mpi.cpu_signature.untold_generation`) beside one of the same name and
    hardware with a signature: kept apart, as the file cannot say whether they are one CPU
    generation (s38 tester K2: ``telemetry merge`` of a file of an older hpcds1mpi)."""
    from hpcds1mpi.cpu_signature import generic_cpu_name, untold_generation
    from hpcds1mpi.measure.meters import machine_id

    lines = []
    for signed, row in sorted(machines.items()):
        if not (row.get("cpu_signature") and generic_cpu_name(row.get("cpu_model"))):
            continue
        untold = machine_id({**row, "cpu_signature": ""})
        if untold in machines and untold_generation(machines[untold]):
            lines.append(f"machine {untold} (CPU {row.get('cpu_model')!r}) was recorded "
                         f"without the CPU's signature, so it is kept apart from machine "
                         f"{signed} of that name and hardware ({row['cpu_signature']}): "
                         f"the file does not say whether they are one CPU generation; resume "
                         f"its sweep on its machine (sweep --resume) to give its runs that "
                         f"machine's id")
    return lines


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
