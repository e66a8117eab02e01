"""``hpcds1mpi recommend``: where and how to run a job, as a table, JSON or a batch script."""

from __future__ import annotations

import click

from hpcds1mpi.config import FAILURE_STATUSES
from hpcds1mpi.errors import ClusterFileError, ConfigError
from hpcds1mpi.schemas.limits import MAX_COUNT, MAX_SIZE
from hpcds1mpi.schemas.numbers import SECONDS


def _places(cluster_file: str | None, wanted: tuple[str, ...]):
    """(cluster, partition) pairs allowed by ``--cluster`` and ``--partition``."""
    from hpcds1mpi import cluster as cluster_mod

    if cluster_file:
        clusters = list(cluster_mod.load_clusters(cluster_file).values())
    else:
        import os

        if "SLURM_JOB_ID" in os.environ:
            clusters = [cluster_mod.detect_slurm()]
        else:
            clusters = [cluster_mod.detect_local()]
    pairs = [(c, p) for c in clusters for p in c.partitions.values()]
    if not wanted:
        return pairs
    chosen = []
    for name in wanted:
        hits = [(c, p) for c, p in pairs if name in (p.name, f"{c.name}/{p.name}")]
        if not hits:
            known = ", ".join(f"{c.name}/{p.name}" for c, p in pairs)
            raise ClusterFileError(f"no partition {name!r}; known: {known}")
        chosen += [h for h in hits if h not in chosen]
    return chosen


@click.command(name="recommend")
@click.option("--workload", required=True, help="Kernel name or your program's telemetry label.")
@click.option("--size", required=True, type=int, help="Problem size (> 0).")
@click.option("--cluster", "cluster_file", type=click.Path(), default=None,
              help="Cluster TOML file (default: this Slurm allocation or this machine).")
@click.option("--partition", "partitions", multiple=True,
              help="Allowed partition (repeatable; NAME or CLUSTER/NAME). Default: all.")
@click.option("--objective", type=click.Choice(["time", "energy", "edp", "balanced"]),
              default="time", show_default=True)
@click.option("--max-nodes", type=int, default=None, help="Use at most this many nodes.")
@click.option("--deadline", type=SECONDS, default=None, help="Predicted upper runtime limit, s.")
@click.option("--energy-budget", type=SECONDS, default=None, help="Predicted upper energy limit, J.")
@click.option("--device", type=click.Choice(["cpu", "gpu"]), default=None,
              help="Only CPU or only GPU configurations.")
@click.option("--emit", type=click.Choice(["slurm", "pbs"]), default=None,
              help="Write a batch script (the calibration sweep when escalated).")
@click.option("-o", "--output", "script_path", type=click.Path(), default=None,
              help="Where --emit writes the script (default: print it).")
@click.option("--program", default=None,
              help='Your program\'s command line, e.g. "./app --n {size} --prec {precision}".')
@click.option("--job-name", default=None, help="Job name in the script.")
@click.option("--job-output", default=None, help="Job stdout path in the script (%j allowed).")
@click.option("--exclusive", is_flag=True, help="Ask for whole nodes.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@click.option("--model", "model_dir", type=click.Path(), default=None,
              help="Model bundle directory (default: the bundle shipped with the package).")
@click.option("--history", "history_path", type=click.Path(), default=None,
              help="Failure history file (default: ~/.cache/hpcds1mpi/failures.json).")
@click.option("--record-failure", default=None, metavar="PARTITION",
              help="Record that this job failed on PARTITION, then recommend again.")
@click.option("--status", "failure_status", default="failed", show_default=True,
              # a wrong result is no placement failure: another partition would not fix it
              type=click.Choice(sorted(FAILURE_STATUSES - {"wrong"})),
              help="Kind of failure for --record-failure.")
def command(workload, size, cluster_file, partitions, objective, max_nodes, deadline,
            energy_budget, device, emit, script_path, program, job_name, job_output, exclusive,
            as_json, model_dir, history_path, record_failure, failure_status):
    """Recommend nodes, ranks per node, threads, device, precision and partition for a job."""
    import json

    from hpcds1mpi.decide.failure_history import FailureHistory
    from hpcds1mpi.decide.model_bundle import DEFAULT_MODEL, load_model
    from hpcds1mpi.decide.recommend import recommend
    from hpcds1mpi.decide.recommendation import (emit_script, format_table, to_dict,
                                                 unmet_constraints)
    from hpcds1mpi.decide.system1 import Constraints

    if not 0 < size <= MAX_SIZE:
        raise ConfigError(f"--size must be a positive integer up to {MAX_SIZE}, got {size}")
    if max_nodes is not None and not 1 <= max_nodes <= MAX_COUNT:
        raise ConfigError(f"--max-nodes must be in 1..{MAX_COUNT}, got {max_nodes}")
    for name, value in (("--deadline", deadline), ("--energy-budget", energy_budget)):
        if value is not None and not value > 0:
            raise ConfigError(f"{name} must be positive, got {value}")
    if script_path and not emit:
        raise ConfigError("-o/--output is where --emit writes the batch script; add --emit "
                          "slurm or --emit pbs, or drop -o")
    if script_path:
        from hpcds1mpi.atomic import check_output_file

        check_output_file(script_path, "batch script")  # before the work, not after it
    places = _places(cluster_file, partitions)
    history = FailureHistory.load(history_path)
    if record_failure:
        hits = [p for c, p in places
                if record_failure in (p.name, f"{c.name if c else ''}/{p.name}")]
        if not hits:
            raise ConfigError(f"--record-failure {record_failure!r} is not an allowed partition")
        cname = next(c.name for c, p in places if p is hits[0]) if places else ""
        history.record(workload, size, hits[0].name, cname, failure_status)
    bundle = load_model(model_dir)
    rec = recommend(
        bundle, workload, size, places, objective=objective,
        constraints=Constraints(max_nodes=max_nodes, deadline_s=deadline,
                                energy_budget_j=energy_budget),
        history=history, model_dir=model_dir or DEFAULT_MODEL, device=device)
    unmet = unmet_constraints(rec)
    if unmet:  # nothing to run within the user's limits: say so, exit 2, write nothing
        raise ConfigError(unmet)
    script = None
    if emit:
        script = emit_script(rec, emit, program, job_name=job_name, output=job_output,
                             exclusive=exclusive)
        if script_path:
            from hpcds1mpi.atomic import write_text

            write_text(script_path, script, "batch script")  # whole or not at all
    if as_json:
        data = to_dict(rec)
        if script_path:
            data["script"] = script_path
        click.echo(json.dumps(data, indent=2))
    elif emit and not script_path:
        click.echo(script, nl=False)
    else:
        click.echo(format_table(rec))
        if script_path:
            kind = "calibration sweep" if rec.picked is None else f"{emit} script"
            click.echo(f"\nwrote {kind} to {script_path}")
