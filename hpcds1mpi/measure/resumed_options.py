"""A resumed kernel sweep's runs recorded before the runs table had its ``extra`` column.

A file swept with a plan's ``[[kernel]] extra`` by an hpcds1mpi older than the column holds
those runs with ``extra`` "" (read as the plain kernel), yet their run ids hash the options,
so ``--resume`` of the same plan finds them done. Left so, training would pool the two decks
as one workload (s41 tester D3): the plan's options are written into them, and said.
"""

from __future__ import annotations

import sys

from hpcds1mpi.records.kernel_options import options_text


def fill_recorded_options(writer, plan, machine_id: str, out: str) -> int:
    """Write the plan's kernel options into the ``extra`` of each of its runs recorded in
    ``writer``'s file without them (a run id is the options' hash: the same run), snapshot,
    and say so in one line. Returns how many runs were filled."""
    filled = 0
    for spec in plan.runs:
        text = options_text(spec.extra)
        row = writer.store.runs.get((machine_id, spec.run_id))
        if not text or row is None or row.get("extra") or row.get("kind", "kernel") != "kernel":
            continue
        row["extra"] = text
        filled += 1
    if filled:
        writer.snapshot()  # the file holds the options before any new run is measured
        sys.stderr.write(
            f"hpcds1mpi sweep: {filled} run(s) in {out} were measured with the plan's kernel "
            "options (extra) before the file recorded them; their options are written now, "
            "so they train as that workload, not as the plain kernel\n")
        sys.stderr.flush()
    return filled
