"""``hpcds1mpi ingest``: scheduler job logs (Slurm sacct, SWF, PM100 / Adastra, NREL Eagle,
CINECA Eurora) -> one job table."""

from __future__ import annotations

import click

from hpcds1mpi.measure.printable import printable
from hpcds1mpi.schemas.paths import NonEmptyPath

#: ``--kind`` values: ``auto`` and ``records.ingest.KINDS`` (written out so that loading the
#: command imports no reader; a test keeps the two equal).
KIND_CHOICES = ("auto", "sacct-p", "sacct-json", "sacct-csv", "pm100", "adastra", "swf",
                "eagle", "eurora", "job-table")


@click.command(name="ingest")
@click.argument("files", nargs=-1, required=True, type=NonEmptyPath(dir_okay=False))
@click.option("-o", "--out", "out", required=True, type=NonEmptyPath(dir_okay=False),
              help="Job table to write (.parquet, or .csv).")
@click.option("--force", is_flag=True,
              help="Replace an existing --out that is not among the FILES (a job table, or "
                   "a file ingest did not write); without it, list a job table as an input "
                   "to add to it.")
@click.option("--kind", type=click.Choice(KIND_CHOICES), default="auto", show_default=True,
              help="Kind of every input file; auto detects it per file.")
@click.option("--procs-are", "procs_are", type=click.Choice(["auto", "processors", "nodes"]),
              default="auto", show_default=True,
              help="What an SWF log's processor fields count; auto reads them as nodes when "
                   "the header's MaxProcs equals MaxNodes (ALCF Theta).")
def command(files: tuple[str, ...], out: str, force: bool, kind: str, procs_are: str) -> None:
    """Read Slurm `sacct -P` / `sacct --json` / sacct CSV exports, Standard Workload Format
    logs (plain or .gz), PM100 / Adastra parquet tables and the NREL Eagle / CINECA Eurora CSV
    into one job table with the runs-table column names. A job table ingest wrote is read as
    an input too: `ingest jobs.parquet new.txt --out jobs.parquet` adds new jobs to it (a job
    seen again is kept once); a job table at --out that is not among the inputs is replaced
    only with --force.

    Lines that cannot be read are counted and reported per reason, never dropped silently.
    """
    import time

    from hpcds1mpi.atomic import check_output_file, check_replace
    from hpcds1mpi.errors import OutputError
    from hpcds1mpi.records.ingest import ingest, write_job_table
    from hpcds1mpi.records.ingest.job_logs import (is_job_table, make_table_folder,
                                                   refuse_no_jobs)

    if not out.endswith((".parquet", ".csv")):  # before reading: a bad --out costs nothing
        raise OutputError(f"--out {out}: output must end in .parquet or .csv")
    from hpcds1mpi.cli import refuse_non_utf8
    from hpcds1mpi.errors import IngestError

    # The table records each log's name (UTF-8 text) and pyarrow writes UTF-8 names only.
    refuse_non_utf8(files, "log", "the job table records it as UTF-8 text", IngestError)
    if out.endswith(".parquet"):
        refuse_non_utf8(out, "--out", "pyarrow writes UTF-8 names only (a .csv table can "
                        "take it)", OutputError)
    from pathlib import Path

    from hpcds1mpi.output_paths import refuse_inside_bundle

    refuse_inside_bundle(out, what="job table")  # learn and train then refused it (M11)
    target = Path(out)
    from hpcds1mpi.writers import hold_lock

    # the lock lies in it: none was taken in a new folder (s47 left)
    _unmade_unless_written(target, make_table_folder(target))
    check_output_file(target, "job table")  # a read-only folder said so, not "cannot create
    # the lock"; checked and replaced under the lock, held to the end: two ingests into one
    # table had both said "wrote" and one's jobs were gone (s47 tester M6)
    hold_lock(target, "job table", "--out")
    among_inputs = None  # the input that is --out: its jobs are read, then written back
    for f in files if target.exists() else ():  # the log would be replaced by its own table
        # A job table ingest wrote may be replaced by the merged table (read whole first,
        # written by temp-and-rename); a log may not.
        if Path(f).exists() and target.samefile(f):
            if not is_job_table(target):
                raise OutputError(f"--out {out} is the input log {f}; write the table to "
                                  "another file")
            among_inputs = f
    if among_inputs is None and not force and target.is_file() and is_job_table(target):
        # "ingest new.log --out jobs.parquet" had replaced a history of 2000 jobs by 998
        raise OutputError(f"{out} already holds {_jobs_held(target)}; to add the new jobs to "
                          f"it, list it as an input ({_example(out, files)}), or pass --force "
                          "to replace it")
    check_replace(target, ours=is_job_table, force=force, what="job table", option="--out")
    began = time.perf_counter()
    table, reports, notes = ingest(list(files), kind, procs_are)
    refuse_no_jobs(table, files, reports, notes)  # never an empty table with exit 0
    # Written before a word is printed: a reader that left (`| head -1`) or a full stdout
    # had ended ingest before it wrote the table (s32 tester T6, T7).
    path = write_job_table(table, out)  # temp-and-rename
    for report in reports:
        for line in report.lines():
            click.echo(line)
    for reason, n in notes.items():
        click.echo(f"note: {n} x {reason}")
    counts = table["status"].fillna("unknown").value_counts().to_dict()
    parts = [", ".join(f"{k} {v}" for k, v in sorted(counts.items()))]
    if among_inputs is not None:  # what "adds new jobs to it" added
        held = reports[files.index(among_inputs)].jobs
        parts.append(f"{max(len(table) - held, 0)} new, {held} it held already")
    summary = "; ".join(p for p in parts if p)  # never an empty "()" (s32 verifier V2)
    click.echo(f"wrote {len(table)} jobs to {printable(path)}"
               f"{f' ({summary})' if summary else ''} in {time.perf_counter() - began:.1f} s")


def _unmade_unless_written(target, made) -> None:
    """Remove the folders ``made`` for ``target`` again when the command ends without writing
    it (a log refused, no job left): a refused ingest leaves nothing behind. Registered before
    the lock, so run after it is let go (click's last-in first-out); a folder another writer
    uses meanwhile is not empty, and stays."""
    import contextlib
    import os

    def remove():
        # lexists, not Path.exists: a name too long for the file system raised from the
        # clean-up over the command's own refusal and left the folder (s48 left by fixer C)
        if not os.path.lexists(target):
            with contextlib.suppress(OSError):
                for folder in made:  # innermost first; stops at the first one not empty
                    os.rmdir(folder)

    if made:
        click.get_current_context().call_on_close(remove)


def _jobs_held(table) -> str:
    """``"2000 jobs (from log.swf)"``: what a job table at ``table`` holds, read from its
    source column only; ``"a job table"`` when that cannot be read."""
    import pandas as pd

    try:
        if table.suffix == ".parquet":
            sources = pd.read_parquet(table, columns=["source_file"])["source_file"]
        else:
            sources = pd.read_csv(table, usecols=["source_file"], dtype=str)["source_file"]
    except Exception:  # noqa: BLE001 - only the refusal's wording depends on it
        return "a job table"
    names = sources.dropna().astype(str).unique().tolist()
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    return f"{len(sources)} jobs" + (f" (from {shown})" if names else "")


def _example(out: str, files) -> str:
    """The command that adds ``files`` to the job table ``out``, quoted for a shell."""
    import shlex

    logs = list(files) if len(files) <= 3 else [*files[:2], "..."]
    return shlex.join(["hpcds1mpi", "ingest", out, *logs, "--out", out])
