"""Results files of the analyses: where they go, the run's provenance and the JSON + Markdown
pair.

Every analysis script that writes a results pair takes ``--out-dir`` (default: the current
folder, as any HPC tool writes where it is run) and ``--force``: a results file already there
(an earlier run's, a committed one's in a checkout) is replaced only with ``--force``, checked
before any work is done (s47 tester N8: the default was the package's own
``analysis/results/``, whatever the current folder, and a rerun replaced the committed results
without a word). The scripts whose results files are named one by one (``--json``,
``--markdown``, ``--out``) check them the same way (:func:`claim_files`; :func:`check_files`
raises instead: ``runtime_eval.py --json``, ``pareto_plot.plot_fronts``).
"""

from __future__ import annotations

import argparse
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


def add_output_options(parser: argparse.ArgumentParser) -> None:
    """``--out-dir`` and ``--force``, alike in every analysis script that writes results."""
    parser.add_argument("--out-dir", default=".",
                        help="folder for the results files (default: the current folder)")
    parser.add_argument("--force", action="store_true",
                        help="replace results files of the same name already in --out-dir")


def results_files(stem: Path) -> tuple[Path, Path]:
    """The JSON and Markdown files of results ``stem`` (a name's own dots kept: ``--name a.b``
    is ``h1_a.b.json``, as the "wrote" line says)."""
    return stem.parent / f"{stem.name}.json", stem.parent / f"{stem.name}.md"


def claim_results(stem: Path, force: bool) -> Path:
    """``stem`` if its results files may be written, else one line on stderr and exit 2.

    Called before the work (hours on a real log), so that a refusal costs nothing.
    """
    claim_files(results_files(stem), force, "--out-dir")
    return stem


def claim_files(paths, force: bool, option: str) -> None:
    """Return if every file of ``paths`` may be written (an existing one only with ``force``),
    else print one line naming ``option`` on stderr and exit 2; before any work is done."""
    from hpcds1mpi.errors import HpcdsError

    try:
        check_files(paths, force, option)
    except HpcdsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(exc.exit_code) from None


def check_files(paths, force: bool, option: str, what: str = "results") -> None:
    """:func:`claim_files`' rule for code that raises instead of exiting (a plotting function,
    a script with its own error handling).

    Raises:
        OutputError: (exit 2) in one line naming ``option``: a file of ``paths`` exists and
            not ``force``, or it cannot be written there.
    """
    from hpcds1mpi.atomic import check_output_file, check_output_folder
    from hpcds1mpi.errors import OutputError

    for path in map(Path, paths):
        check_output_folder(path.parent, what)
        if path.parent.is_dir():
            check_output_file(path, what)
        if path.exists() and not force:
            raise OutputError(f"{path} exists; pass --force to replace it, or choose "
                              f"another {option}")


def write_results(doc: dict, stem: Path, render, lines: str = "findings",
                  quiet: bool = False) -> dict:
    """Write ``stem``.json and ``stem``.md (``render(doc)``) and print ``doc[lines]`` (unless
    ``quiet``). Each file is whole or untouched (temp-and-rename)."""
    from hpcds1mpi.atomic import write_text

    stem.parent.mkdir(parents=True, exist_ok=True)
    json_file, md_file = results_files(stem)
    write_text(json_file, json.dumps(doc, indent=2, default=str), "results")
    write_text(md_file, render(doc), "results")
    if quiet:
        return doc
    for line in doc[lines]:
        print(line)
    took = f" ({doc['seconds']:.0f} s)" if "seconds" in doc else ""
    print(f"wrote {stem}.json and .md{took}")
    return doc
