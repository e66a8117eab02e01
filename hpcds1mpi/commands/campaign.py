"""``hpcds1mpi campaign``: a sweep plan as batch jobs, one per node count with an array task per
shard, and a merge after all of them; their status; resubmitting what is missing.

    hpcds1mpi campaign plan.toml --emit slurm --shards 4 --out camp   # write the jobs
    hpcds1mpi campaign plan.toml --emit slurm --shards 4 --out camp --submit
    hpcds1mpi campaign status camp       # done / queued / running / failed / interrupted / missing
    hpcds1mpi campaign resubmit camp     # sbatch --array=<missing> ..., then the merge again
"""

from __future__ import annotations

import click

from hpcds1mpi.schemas.numbers import COUNT
from hpcds1mpi.schemas.paths import NonEmptyPath

#: The campaign's own subcommands; any other first word is the PLAN of ``campaign PLAN``.
SUBCOMMANDS = ("status", "resubmit", "record")
HELP_WORDS = ("-h", "--help")
#: What a plan naming a program instead of a built-in kernel is told (README, "campaign").
PROGRAMS_NOT_YET = ("a campaign runs built-in kernels only, programs cannot be campaigned yet: "
                    "measure a program with `hpcds1mpi sweep --command ...` in each allocation, "
                    "then join the files with `hpcds1mpi telemetry merge`")


class _CampaignGroup(click.Group):
    """``campaign PLAN --emit ...`` writes a campaign; ``campaign status|resubmit DIR`` reads
    one. A first word that is not a subcommand is the plan (``emit`` runs)."""

    def parse_args(self, ctx, args):
        if args and args[0] not in SUBCOMMANDS and args[0] not in HELP_WORDS \
                and args[0] != "emit":
            args = ["emit", *args]
        return super().parse_args(ctx, args)


@click.group(name="campaign", cls=_CampaignGroup)
def command() -> None:
    """Split a sweep plan into batch jobs (per node count, array shards) and merge them.

    \b
    hpcds1mpi campaign PLAN --emit slurm|pbs [--out DIR] [--shards K] [--submit]
    hpcds1mpi campaign status DIR
    hpcds1mpi campaign resubmit DIR
    """


@command.command(name="emit")
@click.argument("plan_file", metavar="PLAN", type=NonEmptyPath(dir_okay=False))
@click.option("--emit", "scheduler", required=True, type=click.Choice(["slurm", "pbs"]),
              help="The scheduler to write the jobs for.")
@click.option("--out", default=None, type=NonEmptyPath(file_okay=False),
              help="Campaign folder to write (missing or empty; default campaign-PLAN).")
@click.option("--shards", type=COUNT, default=1, show_default=True,
              help="At most this many shards (array tasks) per node count.")
@click.option("--cluster", "cluster_file", type=NonEmptyPath(dir_okay=False), default=None,
              help="Cluster file (partitions, site settings); the jobs' sweeps use it too.")
@click.option("--partition", default=None, help="Partition to run on.")
@click.option("--time-limit", type=COUNT, default=None,
              help="Each part's time limit, minutes (default: the plan's rough estimate x 1.5).")
@click.option("--job-name", default="hpcds1mpi-campaign", show_default=True,
              help="Stem of the jobs' names (-n1, -n2, -merge are added).")
@click.option("--submit", is_flag=True, help="Submit the campaign after writing it.")
def emit(plan_file, scheduler, out, shards, cluster_file, partition, time_limit, job_name,
         submit) -> None:
    """Write the campaign of sweep plan PLAN (the TOML `sweep --plan` reads) into --out."""
    from pathlib import Path

    from hpcds1mpi.errors import ConfigError, UnknownKernelError
    from hpcds1mpi.measure.campaign_scripts import emit as write

    if shards < 1:
        raise ConfigError(f"--shards must be >= 1, got {shards}; give the most array tasks "
                          "per node count")
    out = out or f"campaign-{Path(plan_file).stem}"
    try:
        manifest = write(plan_file, scheduler, out, shards=shards, cluster_file=cluster_file,
                         partition_name=partition,
                         time_limit_s=time_limit * 60 if time_limit else None,
                         job_name=job_name)
    except UnknownKernelError as error:  # s31 tester P5: a user program named as a kernel
        raise UnknownKernelError(f"{error}; {PROGRAMS_NOT_YET}") from None
    parts = manifest["parts"]
    click.echo(f"campaign {out}: {manifest['configurations']} configurations in {len(parts)} "
               f"parts over node counts {', '.join(manifest['jobs'])}")
    for nodes, job in manifest["jobs"].items():
        shown = [p for p in parts if str(p["nodes"]) == nodes]
        click.echo(f"  {job['script']}: {nodes} node(s), array of {job['shards']} "
                   f"({', '.join(p['name'] + ' ' + str(len(p['runs'])) for p in shown)} "
                   "configurations)")
    click.echo(f"  {manifest['merge']}: merges the shards into {out}/{manifest['merged']} "
               "after all of them (afterany)")
    for note in manifest["notes"]:
        click.echo(f"note: {note}", err=True)
    if not submit:
        click.echo(f"submit: hpcds1mpi campaign resubmit {out}   (or: bash {out}/submit.sh)")
        return
    _echo_submission(out, _resubmit(out))


@command.command(name="status")
@click.argument("folder", metavar="DIR", type=NonEmptyPath())
def status(folder) -> None:
    """Show each part of campaign DIR: done, queued, running, failed, interrupted, missing."""
    from hpcds1mpi.measure.campaign_status import campaign_status, summary_lines

    manifest, parts = campaign_status(folder)
    for line in summary_lines(folder, manifest, parts):
        click.echo(line)


@command.command(name="resubmit")
@click.argument("folder", metavar="DIR", type=NonEmptyPath())
@click.option("--dry-run", is_flag=True, help="Say what would be submitted; submit nothing.")
def resubmit(folder, dry_run) -> None:
    """Submit the parts of campaign DIR that are missing, failed or interrupted, then the merge."""
    from hpcds1mpi.measure.campaign_submit import resubmit as submit_missing

    result = submit_missing(folder, dry_run=dry_run)
    for note in result["notes"]:
        click.echo(f"note: {note}", err=True)
    if dry_run:
        todo = result["parts"]
        click.echo("would submit: " + ("; ".join(
            f"n{n} indices {','.join(map(str, ix))}" for n, ix in sorted(todo.items()))
            or "nothing (every part is done, queued or running)"))
        return
    _echo_submission(folder, result)


@command.command(name="record", hidden=True)
@click.argument("folder", metavar="DIR", type=NonEmptyPath())
@click.option("--job", "job_id", required=True, help="The job id sbatch/qsub printed.")
@click.option("--nodes", type=COUNT, default=None,
              help="The node count whose whole array the job runs.")
@click.option("--merge", is_flag=True, help="The job is the campaign's merge.")
@click.option("--after", default="", help="The merge's dependencies, colon-separated ids.")
def record(folder, job_id, nodes, merge, after) -> None:
    """Record a job submit.sh submitted in campaign DIR's manifest (for `campaign status`)."""
    from hpcds1mpi.errors import ConfigError
    from hpcds1mpi.measure.campaign_submit import record as record_job

    if merge == (nodes is not None):
        raise ConfigError("give either --nodes N (a part's array) or --merge")
    record_job(folder, job_id, nodes=nodes,
               after=[i for i in after.split(":") if i] if merge else None)


def _resubmit(folder):
    from hpcds1mpi.measure.campaign_submit import resubmit as submit_missing

    return submit_missing(folder)


def _echo_submission(folder, result: dict) -> None:
    for nodes, ids in sorted(result["jobs"].items()):
        indices = ",".join(str(i) for i in sorted(result["parts"][nodes]))
        click.echo(f"submitted n{nodes} shards {indices} as job {', '.join(ids)}")
    if result["merge"]:
        after = result["jobs"] and ", after all of them" or ""
        click.echo(f"submitted the merge as job {result['merge']}{after}")
    if not result["jobs"] and not result["merge"]:
        if result["waiting_for"]:
            click.echo(f"nothing to submit: every part of {folder} is done, queued or running "
                       f"(jobs {', '.join(result['waiting_for'])})")
        else:
            click.echo(f"nothing to submit: every part of {folder} is done and merged")
