"""``hpcds1mpi kernels``: the registered kernels and their knobs."""

from __future__ import annotations

import click


@click.command(name="kernels")
@click.option("--markdown", is_flag=True, help="Print a Markdown table (as in the README).")
def command(markdown: bool) -> None:
    """List the MPI kernels: what each computes, its decomposition, communication and knobs."""
    from hpcds1mpi import kernels

    rows = []
    for name in kernels.names():
        k = kernels.get(name)
        rows.append((
            name, k.description, k.decomposition, k.communication,
            "/".join(k.precisions), "/".join(k.devices),
            k.threads_via if k.uses_threads else "no (declared)", k.size_meaning,
            k.unavailable or "",
        ))
    if markdown:
        click.echo("| kernel | computes | decomposition | communication | precisions | devices "
                   "| threads | size |")
        click.echo("| --- | --- | --- | --- | --- | --- | --- | --- |")
        for r in rows:
            # A "|" inside a cell (io's "gather|shards") would start a new column.
            click.echo("| " + " | ".join(f"`{r[0]}`" if i == 0 else str(v).replace("|", "\\|")
                                          for i, v in enumerate(r[:8])) + " |")
        return
    for r in rows:
        click.echo(f"{r[0]:<10} {r[1]}")
        click.echo(f"{'':<10} decomposition: {r[2]}; communication: {r[3]}")
        click.echo(f"{'':<10} precisions {r[4]}, devices {r[5]}, threads: {r[6]}, size = {r[7]}")
        if r[8]:
            click.echo(f"{'':<10} unavailable here: {r[8]}")
