"""The real scheduler logs of the shared data folder (../shared/data/joblogs) and slices of them."""

from __future__ import annotations

import functools
import gzip
from pathlib import Path

import pytest

#: The shared job logs, next to the repository (README there: provenance and licences).
JOBLOGS = (Path(__file__).parents[3] / ".." / "shared" / "data" / "joblogs").resolve()
CURIE = JOBLOGS / "CEA-Curie-2011-2.1-cln.swf.gz"
GAIA = JOBLOGS / "UniLu-Gaia-2014-1.swf.gz"
THETA = JOBLOGS / "ALCF-Theta-2022.swf.gz"
EAGLE = JOBLOGS / "NREL-Eagle-2019-sample.csv"
CSD3 = JOBLOGS / "Cambridge-CSD3-2023-07-sample.csv"
EURORA = JOBLOGS / "CINECA-Eurora-2014-predicted-power.csv"
MARCONI = JOBLOGS / "marconi100-2022-01-subset.parquet"

needs_joblogs = pytest.mark.skipif(not CURIE.is_file(),
                                   reason=f"real job logs not present at {JOBLOGS}")


@functools.lru_cache(maxsize=4)
def swf_lines(path: Path) -> tuple[list[str], list[str]]:
    """(header lines, job lines) of an SWF log, newline-terminated."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as fh:
        lines = fh.readlines()
    header = [ln for ln in lines if ln.startswith(";")]
    return header, [ln for ln in lines if not ln.startswith(";") and ln.strip()]


def swf_slice(path: Path, out: Path, jobs: int = 200, extra: tuple[str, ...] = ()) -> Path:
    """The header and the first ``jobs`` job lines of an SWF log, plus ``extra`` lines, as a
    plain file at ``out``."""
    header, body = swf_lines(path)
    out.write_text("".join(header + body[:jobs]) + "".join(extra))
    return out


def regular_swf(path: Path, jobs: int = 200, users: int = 5) -> Path:
    """A hand-made SWF log: one job every 1000 s, each done before the next; user u runs
    100 u + 0/10/20 s in turn, asking 3600 s (s38 tester C1's)."""
    lines = ["; UnixStartTime: 1400000000\n; MaxNodes: 10\n; MaxProcs: 40\n"]
    for i in range(jobs):
        u = i % users + 1
        run = 100 * u + 10 * ((i // users) % 3)
        lines.append(f"{i + 1} {i * 1000} 0 {run} 4 -1 -1 4 3600 -1 1 {u} 1 -1 1 1 -1 -1\n")
    path.write_text("".join(lines))
    return path

