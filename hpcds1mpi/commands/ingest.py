"""``hpcds1mpi ingest``: Slurm sacct / PM100 / Adastra job logs -> one job table."""

from __future__ import annotations

import click


@click.command(name="ingest")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--out", "out", required=True, type=click.Path(dir_okay=False),
              help="Job table to write (.parquet, or .csv).")
@click.option("--kind", type=click.Choice(["auto", "sacct-p", "sacct-json", "pm100", "adastra"]),
              default="auto", show_default=True,
              help="Kind of every input file; auto detects it per file.")
def command(files: tuple[str, ...], out: str, kind: str) -> None:
    """Read Slurm `sacct -P` / `sacct --json` output and PM100 / Adastra parquet job tables
    into one job table with the runs-table column names (docs/ingest.md).

    Rows that cannot be read are counted and reported per reason, never dropped silently.
    """
    from hpcds1mpi.errors import OutputError
    from hpcds1mpi.records.ingest import ingest, write_job_table

    if not out.endswith((".parquet", ".csv")):  # before reading: a bad --out costs nothing
        raise OutputError(f"--out {out}: output must end in .parquet or .csv")
    table, reports, notes = ingest(list(files), kind)
    for report in reports:
        for line in report.lines():
            click.echo(line)
    for reason, n in notes.items():
        click.echo(f"note: {n} x {reason}")
    path = write_job_table(table, out)  # temp-and-rename; a missing parent is created
    counts = table["status"].value_counts().to_dict()
    summary = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
    click.echo(f"wrote {len(table)} jobs to {path} ({summary})")
