"""The kernels command lists every registered kernel with what it declares."""

from __future__ import annotations

import re

from hpcds1mpi import kernels
from tests.helpers import run_cli


def test_the_markdown_table_has_a_row_per_kernel_with_its_declarations():
    proc = run_cli(["kernels", "--markdown"])
    assert proc.returncode == 0, proc.stderr
    rows = {line.split("|")[1].strip().strip("`"): line for line in proc.stdout.splitlines()
            if line.startswith("| `")}
    assert set(rows) == set(kernels.names())
    for name, line in rows.items():
        k = kernels.get(name)
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)]  # "\|" is an escaped pipe
        assert all(p in line for p in k.precisions) and all(d in line for d in k.devices)
        assert len(cells) == 10  # 8 columns between the outer bars


def test_the_plain_listing_names_every_kernel():
    proc = run_cli(["kernels"])
    assert proc.returncode == 0, proc.stderr
    assert all(name in proc.stdout for name in kernels.names())
