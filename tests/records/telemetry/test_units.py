"""The unit of every telemetry column: one list, written on each column, shown in the docs."""

from __future__ import annotations

import re
from pathlib import Path

from hpcds1mpi.records.telemetry.layout import RUN_COLUMNS, TABLES
from hpcds1mpi.records.telemetry.units import (DIMENSIONLESS, UNITS, column_units,
                                               shown_units)

DOCS = Path(__file__).parents[3] / "docs" / "telemetry.md"


def _documented_run_units() -> dict[str, str]:
    """column -> unit cell of docs/telemetry.md's runs tables (a cell listing several columns
    gives each its own unit where it lists as many, else its one unit to all)."""
    text = DOCS.read_text().split("### `runs`", 1)[1].split("### `machines`", 1)[0]
    units = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 3 or not cells[0].startswith("`"):
            continue
        names = re.findall(r"`([a-z_0-9]+)`", cells[0])
        given = [u.strip() for u in cells[1].split(",")]
        for name, unit in zip(names, given if len(given) == len(names) else given * len(names)):
            units[name] = unit
    return units


def test_the_docs_runs_tables_show_every_column_with_its_written_unit():
    """s37 left: the datasets had no units attribute, only the docs had them. The one list
    and the docs' tables agree column by column, and every column is documented."""
    documented = _documented_run_units()
    assert set(documented) == {name for name, _ in RUN_COLUMNS}
    for name, kind in RUN_COLUMNS:
        assert documented[name] == shown_units(column_units("runs", name, kind)), name


def test_every_unit_names_a_column_of_its_table_with_a_number():
    for table, units in UNITS.items():
        kinds = dict(TABLES[table])
        assert set(units) <= set(kinds), table
        assert all(kinds[c] != "str" for c in units), table
    assert column_units("runs", "nodes", "int") == DIMENSIONLESS
    assert column_units("runs", "workload", "str") == ""
