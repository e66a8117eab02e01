"""Results files of the H1 / H2 analyses: the run's provenance and the JSON + Markdown pair."""

from __future__ import annotations

import json
import os
import platform
import sys
import time
from pathlib import Path


def run_info(module: str, argv: list[str] | None) -> dict:
    """The command that made a result, when and where (recorded in every results file)."""
    return {"command": " ".join([f".venv/bin/python -m hpcds1mpi.analysis.{module}",
                                 *(argv if argv is not None else sys.argv[1:])]),
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "host": platform.node(), "load_avg_1min": float(os.getloadavg()[0])}


def write_results(doc: dict, stem: Path, render, lines: str = "findings",
                  quiet: bool = False) -> dict:
    """Write ``stem``.json and ``stem``.md (``render(doc)``) and print ``doc[lines]`` (unless
    ``quiet``)."""
    stem.parent.mkdir(parents=True, exist_ok=True)
    stem.with_suffix(".json").write_text(json.dumps(doc, indent=2, default=str))
    stem.with_suffix(".md").write_text(render(doc))
    if quiet:
        return doc
    for line in doc[lines]:
        print(line)
    took = f" ({doc['seconds']:.0f} s)" if "seconds" in doc else ""
    print(f"wrote {stem}.json and .md{took}")
    return doc
