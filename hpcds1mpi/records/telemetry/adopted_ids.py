"""The machine ids a telemetry file's machine took over (``adopted_ids`` of the machines table).

``sweep --resume`` moves the runs of an id an earlier hpcds1mpi gave this machine to its id of
now (:meth:`~.layout.Store.relabel_machine`); the new row keeps the old ids, comma-separated,
so that a copy or shard of the file from before, merged or trained again, is known for the
same runs, not added a second time under the old id (s38 tester F7).
"""

from __future__ import annotations


def adopted(row: dict) -> list[str]:
    """The ids ``row``'s machine took over ([] for a row written before the column)."""
    return [m for m in str(row.get("adopted_ids") or "").split(",") if m]


def with_adopted(row: dict, old_row: dict) -> dict:
    """``row`` remembering ``old_row``'s id and the ids it had taken over itself."""
    ids = adopted(row) + [old_row["machine_id"]] + adopted(old_row)
    ids = [m for m in dict.fromkeys(ids) if m != row["machine_id"]]
    return {**row, "adopted_ids": ",".join(ids)}


def renamed_ids(*machine_tables: dict) -> dict[str, str]:
    """Old id -> the id that took it over, from every machines table given (chains
    followed: an id taken over twice maps to the last)."""
    renamed = {old: mid for table in machine_tables for mid, row in table.items()
               for old in adopted(row) if old != mid}
    for old in list(renamed):
        seen = {old}
        while renamed[old] in renamed and renamed[old] not in seen:
            seen.add(renamed[old])
            renamed[old] = renamed[renamed[old]]
    return renamed
