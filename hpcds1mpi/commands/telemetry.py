"""``hpcds1mpi telemetry show|export|merge``: look at, export and merge telemetry files."""

from __future__ import annotations

import click


@click.group(name="telemetry")
def command() -> None:
    """Show, export or merge telemetry files."""


@command.command(name="show")
@click.argument("path")
@click.option("--rows", type=int, default=20, show_default=True, help="Runs to list (0: none).")
def show(path, rows) -> None:
    """Summarise PATH: schema, machines, runs per workload and status."""
    from hpcds1mpi.records import telemetry

    runs = telemetry.read_runs(path)
    machines = telemetry.read_machines(path)
    click.echo(f"{path}: schema_version {telemetry.SCHEMA_VERSION}, {len(runs)} runs, "
               f"{len(machines)} machine(s)")
    for m in machines.itertuples():
        click.echo(f"  machine {m.machine_id}: {m.cpu_model}, {m.physical_cores} cores, "
                   f"{m.memory_gb} GB, GPU {m.gpu_model or 'none'} x{m.gpu_count}, "
                   f"{m.mpi_library}; hosts {m.hostnames}")
    if len(runs):
        table = runs.groupby(["workload", "status"]).size().unstack(fill_value=0)
        click.echo(table.to_string())
        if rows:
            cols = ["workload", "size", "nodes", "ranks_per_node", "threads", "device",
                    "precision", "status", "runtime_s", "noise", "energy_j", "energy_source"]
            click.echo(runs[cols].head(rows).to_string(index=False))


@command.command(name="export")
@click.argument("path")
@click.option("--out", required=True, help="Output file: .csv, .parquet or .json (lines).")
@click.option("--table", type=click.Choice(["runs", "machines", "repeats", "ranks",
                                            "rank_repeats"]), default="runs", show_default=True)
def export(path, out, table) -> None:
    """Write one table of PATH to CSV, Parquet or JSON lines."""
    from hpcds1mpi.records import telemetry
    from hpcds1mpi.errors import TelemetryError

    if table == "runs":
        frame = telemetry.read_runs(path)
    elif table == "machines":
        frame = telemetry.read_machines(path)
    else:
        frame = telemetry.read_detail(path, table)
    if out.endswith(".csv"):
        frame.to_csv(out, index=False)
    elif out.endswith(".parquet"):
        frame.to_parquet(out, index=False)
    elif out.endswith(".json") or out.endswith(".jsonl"):
        frame.to_json(out, orient="records", lines=True)
    else:
        raise TelemetryError(f"--out {out}: use a .csv, .parquet or .json file name")
    click.echo(f"wrote {len(frame)} rows of {table} to {out}")


@command.command(name="merge")
@click.argument("sources", nargs=-1, required=True)
@click.option("--out", required=True, help="Merged telemetry file (created or extended).")
def merge(sources, out) -> None:
    """Merge telemetry shards (job-array tasks, several machines) into OUT, idempotently."""
    from hpcds1mpi.records import telemetry

    counts = telemetry.merge(list(sources), out)
    click.echo(f"{out}: {counts['rows']} runs ({counts['added']} added, {counts['replaced']} "
               f"replaced, {counts['kept']} already there)")
