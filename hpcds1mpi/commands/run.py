"""``hpcds1mpi run``: one kernel, one configuration, under the current launch.

Launch it as ``mpiexec -n 4 hpcds1mpi run stencil --size 128`` or under ``srun``. The node count
and ranks per node are those of the launch; threads, device and precision come from the flags.
"""

from __future__ import annotations

import json

import click

# advise reads a script's --precision by this list: one home (s45 tester F10)
from hpcds1mpi.config import PRECISIONS
from hpcds1mpi.schemas.numbers import COUNT, SEED, SIZE
from hpcds1mpi.schemas.sweep_defaults import RUN_REPEATS
from hpcds1mpi.schemas.paths import NonEmptyPath


@click.command(name="run")
@click.argument("kernel")
@click.option("--size", type=SIZE, default=None, help="Problem size (default: the kernel's median default size).")
@click.option("--threads", type=COUNT, default=1, show_default=True, help="Threads per rank.")
@click.option("--device", type=click.Choice(["cpu", "gpu"]), default="cpu", show_default=True)
@click.option("--precision", type=click.Choice(PRECISIONS), default="fp64",
              show_default=True)
@click.option("--repeats", type=COUNT, default=RUN_REPEATS, show_default=True, help="Timed repeats after one warm-up.")
@click.option("--seed", type=SEED, default=0, show_default=True)
@click.option("--cluster", "cluster_file", type=NonEmptyPath(), default=None,
              help="Cluster TOML to check the configuration against (default: detect).")
@click.option("--partition", default=None, help="Partition in the cluster file.")
@click.option("--option", "options", multiple=True, metavar="KEY=VALUE",
              help="A kernel option, as a sweep plan's [[kernel]] extra gives it (stencil "
                   "sweeps=100); repeat for several.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of a table.")
def command(kernel, size, threads, device, precision, repeats, seed, cluster_file, partition,
            options, as_json) -> None:
    """Run KERNEL once on every launched rank and print the slowest rank's wall time."""
    from hpcds1mpi import kernels
    from hpcds1mpi.places import resolve_partition
    from hpcds1mpi.config import Configuration, check_fits
    from hpcds1mpi.errors import ConfigError
    from hpcds1mpi.records.kernel_options import given_options

    if repeats < 1:
        raise ConfigError("--repeats must be at least 1")
    k = kernels.get(kernel)
    extra = given_options(k, options)
    if size is None:
        sizes = k.default_sizes or (k.min_size(1),)
        size = sizes[len(sizes) // 2]
    part = resolve_partition(cluster_file, partition)

    from hpcds1mpi.launch.own_launcher import check_started_by
    from hpcds1mpi.measure import runner
    from hpcds1mpi.runtime.mpi import node_layout, world

    check_started_by()  # before MPI_Init: under another MPI's launcher it aborts with a stack
    comm = world()
    layout = node_layout(comm)
    ranks_per_node, local_rank, nodes = layout.ranks_per_node, layout.local_rank, layout.nodes
    if comm.Get_size() != nodes * ranks_per_node:
        raise ConfigError("ranks are spread unevenly over nodes; launch the same count per node")
    config = Configuration(nodes, ranks_per_node, threads, device, precision)
    # The launch is already made: only check what the flags add (threads, device, precision).
    check_fits(Configuration(1, ranks_per_node, threads, device, precision),
               _one_node(part))
    k.validate_size(size, comm.Get_size())  # bad input (exit 2), not a failed run
    out = runner.execute(comm, k, size, config, seed=seed, warmup=1, min_repeats=repeats,
                         max_repeats=repeats, local_rank=local_rank, extra=extra)
    if comm.Get_rank() != 0:
        return
    median = sorted(out.wall)[len(out.wall) // 2] if out.wall else float("nan")
    mpi_share = (sum(out.rank_mpi) / sum(out.rank_wall)) if out.rank_wall else float("nan")
    record = {
        "kernel": kernel, "size": size, "extra": extra, **config.as_dict(),
        "ranks": config.ranks,
        "status": out.status, "error": out.error, "wall_s": out.wall, "median_s": median,
        "rank0_mpi_fraction": mpi_share, "rel_error": out.rel_error,
        "blas_threads": out.blas_threads, "work": k.work(size, config.ranks).as_dict(),
    }
    if as_json:
        click.echo(json.dumps(record))
    else:
        given = "".join(f" {key}={value}" for key, value in extra.items())
        click.echo(f"{kernel} size={size}{given} {config.label()} ({config.ranks} ranks): "
                   f"{out.status}")
        if out.error:
            click.echo(f"  error: {out.error}")
        if out.wall:
            click.echo(f"  wall (slowest rank) median {median:.4f} s over {len(out.wall)} repeats; "
                       f"rank 0 in MPI {100 * mpi_share:.1f} %; rel. error {out.rel_error:.2e}")
    if out.status != "ok":  # what the kernel does not support is bad input: exit 2
        raise SystemExit(2 if out.status == "unsupported" else 1)


def _one_node(part):
    from dataclasses import replace

    return replace(part, max_nodes=max(part.max_nodes, 1))
