"""A resumed sweep's file holding this machine's runs under an id an earlier hpcds1mpi gave.

:func:`~hpcds1mpi.measure.meters.earlier_record` finds them (an MPI library's text that
changed; a generic CPU name recorded before its signature, on this host and system); they
are moved to this machine's id, not measured again under a second one. A generic name's
record of another host or system may be another CPU generation: kept apart, and said (s38
tester K2).
"""

from __future__ import annotations

import sys

from hpcds1mpi.cpu_signature import generic_cpu_name, untold_generation
from hpcds1mpi.measure.meters import earlier_record, machine_id


def untold_elsewhere(machines: dict, fp: dict) -> str | None:
    """The id of a record in ``machines`` of this machine's hardware class and CPU name but
    no CPU signature (:func:`~hpcds1mpi.cpu_signature.untold_generation`) measured on
    another host or system (:func:`~hpcds1mpi.measure.meters.earlier_record` did not take
    it for this machine's): it may be another CPU generation, so its runs are kept under
    their id and this machine's are measured under its own. None when there is none."""
    if not generic_cpu_name(fp["cpu_model"]) or not fp.get("cpu_signature"):
        return None
    for machine, row in machines.items():
        if machine != fp["machine_id"] and untold_generation(row) and \
                machine_id({**fp, "cpu_signature": ""}) == machine_id(row):
            return machine
    return None


def adopt_earlier_record(writer, fp: dict, out: str) -> str:
    """On ``--resume``: move the runs :func:`earlier_record` finds in ``writer``'s file to
    this machine's id and row (kept, not measured again under a second id), and say so in one
    line; or say that the runs of :func:`untold_elsewhere` stay another machine's. ""
    when neither."""
    earlier = earlier_record(writer.store.machines, fp)
    if earlier is None:
        other = untold_elsewhere(writer.store.machines, fp)
        if other is None:
            return ""
        row = writer.store.machines[other]
        return (f"the runs in {out} of machine {other[:12]} (CPU {row.get('cpu_model')!r}, "
                f"hosts {row.get('hostnames') or '?'}, {row.get('platform') or '?'}; here "
                f"{fp.get('platform') or '?'}) were recorded without the CPU's "
                f"signature, so the file does not say which CPU generation they ran on: they "
                f"are kept under their id as other hardware, and this machine's runs are "
                f"measured under its own ({fp['machine_id'][:12]})")
    row = writer.store.machines[earlier]
    base = writer.store.machines.get(fp["machine_id"], row)  # a merged file's own row wins
    writer.relabel_machine(earlier, {**base, "mpi_library": fp["mpi_library"],
                                     "cpu_signature": fp.get("cpu_signature", ""),
                                     "machine_id": fp["machine_id"]})
    if untold_generation(row) and fp.get("cpu_signature"):
        return (f"the runs in {out} of this host (machine {earlier[:12]}, CPU "
                f"{row.get('cpu_model')!r}) were recorded without the CPU's signature, which "
                f"now tells CPU generations of that name apart; they are kept, as machine "
                f"{fp['machine_id'][:12]} ({fp.get('cpu_signature')})")
    return (f"the runs in {out} of this machine carried id {earlier[:12]}, from the MPI "
            f"library text {row.get('mpi_library')!r} an earlier hpcds1mpi recorded; they "
            f"are kept, as machine {fp['machine_id'][:12]} ({fp['mpi_library']!r})")


def say_earlier_record(writer, fp: dict, out: str, resume: bool) -> None:
    """:func:`adopt_earlier_record` for a kernel sweep (with ``resume``), its line on
    stderr."""
    note = adopt_earlier_record(writer, fp, out) if resume else ""
    if note:
        sys.stderr.write(f"hpcds1mpi sweep: note: {note}\n")
        sys.stderr.flush()
