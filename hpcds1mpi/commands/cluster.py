"""``hpcds1mpi cluster``: show a cluster and count or list its valid configurations."""

from __future__ import annotations

import json

import click

from hpcds1mpi.schemas.paths import NonEmptyPath


@click.command(name="cluster")
@click.option("--cluster", "cluster_file", type=NonEmptyPath(), default=None,
              help="Cluster TOML file (default: the Slurm allocation, else this machine).")
@click.option("--partition", default=None,
              help="Only this partition (NAME or CLUSTER/NAME, as recommend takes it).")
@click.option("--kernel", default=None, help="Restrict to what this kernel supports.")
@click.option("--list", "list_configs", is_flag=True, help="List every valid configuration.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def command(cluster_file, partition, kernel, list_configs, as_json) -> None:
    """Show partitions and their valid (nodes, ranks/node, threads, device, precision) space."""
    from hpcds1mpi.places import allowed_places
    from hpcds1mpi.config import enumerate_configs
    from hpcds1mpi.kernels import offered

    if kernel is not None:
        from hpcds1mpi import kernels

        kernels.get(kernel)  # an unknown (or empty) name is one line listing the known ones
    # The places recommend chooses among (a file, else this Slurm allocation, else this
    # machine), narrowed as its --partition is: NAME or CLUSTER/NAME, an unknown name one line
    # listing the known ones.
    places = allowed_places(cluster_file or None, [partition] if partition is not None else ())
    doc = []
    for cluster, part in places:
        uses_threads, precisions, devices = offered(kernel, part)
        configs = list(enumerate_configs(part, precisions=precisions, devices=devices,
                                         uses_threads=uses_threads))
        # The node's hardware (what models are matched on) and, inside an allocation, what
        # it holds of each node (what the configurations are sized by).
        doc.append({"cluster": cluster.name, "partition": part.as_dict(),
                    "usable": {"cores_per_node": part.usable_cores_per_node,
                               "memory_gb": part.usable_memory_gb},
                    "configurations": len(configs), "notes": part.hardware_notes(),
                    "list": [c.as_dict() for c in configs] if list_configs else None})
    if as_json:
        click.echo(json.dumps(doc, indent=2))
        return
    for entry in doc:
        p = entry["partition"]
        usable = entry["usable"]
        share = ""
        if p["allocated_cores_per_node"] is not None:
            share = (f"; this allocation holds {usable['cores_per_node']} cores, "
                     f"{usable['memory_gb']} GB of each")
        click.echo(f"{entry['cluster']}/{p['name']}: {p['max_nodes']} nodes x "
                   f"{p['cores_per_node']} cores, {p['memory_gb']} GB, "
                   f"{p['gpus_per_node']} GPUs ({p['gpu_memory_gb']} GB){share} -> "
                   f"{entry['configurations']} valid configurations")
        for note in entry["notes"]:
            click.echo(f"  note: {note}")
        for c in entry["list"] or []:
            click.echo(f"  nodes={c['nodes']} ranks/node={c['ranks_per_node']} "
                       f"threads={c['threads']} {c['device']} {c['precision']}")
