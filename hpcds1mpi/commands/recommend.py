"""``hpcds1mpi recommend``: where and how to run a job, as a table, JSON or a batch script."""

from __future__ import annotations

import click

from hpcds1mpi.commands.recommend_reading import calibration_reading, reading_options
from hpcds1mpi.config import FAILURE_STATUSES
from hpcds1mpi.errors import ConfigError
from hpcds1mpi.schemas.limits import MAX_COUNT, MAX_SIZE
from hpcds1mpi.schemas.numbers import COUNT, JOULES, SECONDS, SIZE, BoundedFloat
from hpcds1mpi.schemas.paths import BUNDLE_IS_CODE, NonEmptyPath


#: Share of jobs a proposed walltime covers: a quantile the runtime model can calibrate.
COVERAGE = BoundedFloat(0.5, 0.999, "share of jobs to cover")


def _time_limit_s(text: str | None) -> float | None:
    """``--time-limit`` (minutes, or a Slurm ``--time``) in seconds, rounded up to a minute as
    Slurm does (:func:`_rounded_note`); None for no limit as sbatch reads one (-1, 00:00:00)."""
    from hpcds1mpi.launch.script_options import parse_slurm_time
    from hpcds1mpi.launch.time_forms import slurm_asks_no_limit

    if text is None or slurm_asks_no_limit(text.strip()):
        return None

    seconds = parse_slurm_time(text)
    if seconds is None:
        raise ConfigError(f"--time-limit {text.strip()[:40]!r} is not a time; give minutes "
                          "(90) or a Slurm time (1:30:00, 2-00:00:00)")
    from hpcds1mpi.schemas.limits import MAX_SECONDS

    if seconds > MAX_SECONDS:  # the bound of every time the command line takes
        raise ConfigError(f"--time-limit {text.strip()[:40]!r} is over a year; give the "
                          "partition's real limit, or UNLIMITED")
    return float(seconds)


def _rounded_note(text: str | None, seconds: float | None, scheduler: str = "slurm"
                  ) -> str | None:
    """The line saying a ``--time-limit`` with a seconds field became whole minutes
    (``00:00:30`` is 60 s to Slurm, and to the proposal), so that "= the request" is not read
    as a slip; None when nothing was rounded. A PBS script's walltime is written in whole
    minutes too (never shorter than asked), said as this tool's rule, not Slurm's (s33 P4)."""
    if seconds is None:
        return None
    text = text.strip()
    # A seconds field: min:sec, h:m:s or d-h:m:s (d-h and d-h:m have none).
    fields = text.split("-")[-1].split(":")
    has_seconds = len(fields) == 3 or (len(fields) == 2 and "-" not in text)
    if not has_seconds or int(fields[-1]) % 60 == 0:
        return None
    rule = ("Slurm rounds a time limit up to whole minutes" if scheduler == "slurm" else
            "the PBS script asks for whole minutes, rounded up")
    return f"walltime: your --time-limit {text} is {seconds:.0f} s: {rule}"


def _head(file, size: int = 200) -> bytes:
    """The first bytes of a file (b"" when it cannot be read: the reader says why)."""
    try:
        with open(file, "rb") as fh:
            return fh.read(size)
    except OSError:
        return b""


def _read_history(path: str):
    """The history job table at ``path`` (:func:`~hpcds1mpi.records.ingest.job_logs.
    read_job_table`), a failure history handed to the old option name refused with a hint."""
    from pathlib import Path

    from hpcds1mpi.decide.walltime import dropped_jobs_said
    from hpcds1mpi.errors import IngestError
    from hpcds1mpi.records.ingest.job_logs import read_job_table

    if Path(path).suffix == ".json" and b'"failures"' in _head(path):
        raise IngestError(f"--history {path}: this is a failure history; --history takes a "
                          "job table now, the failure history is --failure-history")
    notes: list[str] = []
    table = read_job_table(path, what="--history", notes=notes)
    # jobs of the history not used, and why: said before any answer
    for line in dropped_jobs_said(notes):
        click.echo(f"history: {line.strip()}", err=True)
    return table


def _propose(table, rec, user: str, job_name: str, time_limit_s, coverage: float,
             names_partition: bool):
    """The walltime proposal for the job as recommended, described as the history describes
    its jobs: the partition by the name the scheduler records (the script's ``--partition``,
    not the cluster file's label; none where the script names none, ``names_partition``
    False: the default partition takes it), its nodes and CPUs (the layout submitted)."""
    from hpcds1mpi.decide.walltime import propose_walltime

    nodes = procs = partition = account = None
    if rec.picked is not None:
        cfg = rec.picked.choice.config()
        nodes, procs = cfg.nodes, cfg.nodes * cfg.ranks_per_node * cfg.threads
        part = rec.picked.partition
        # This machine's label ('local') is no partition any history records.
        partition = (part.slurm_partition or part.name) if names_partition else None
        site = rec.clusters.get(rec.picked.label)
        account = getattr(site, "account", None) or None
    return propose_walltime(table, user, workload=job_name, account=account,
                            partition=partition, nodes=nodes, procs=procs,
                            time_limit_s=time_limit_s, submit_time=None, quantile=coverage)


@click.command(name="recommend")
@click.option("--workload", required=True, help="Kernel name or your program's telemetry label.")
@click.option("--size", required=True, type=SIZE, help="Problem size (> 0).")
@click.option("--cluster", "cluster_file", type=NonEmptyPath(), default=None,
              help="Cluster TOML file (default: this Slurm allocation or this machine).")
@click.option("--partition", "partitions", multiple=True,
              help="Allowed partition (repeatable; NAME or CLUSTER/NAME). Default: all.")
@click.option("--objective", type=click.Choice(["time", "energy", "edp", "balanced"]),
              default="time", show_default=True)
@click.option("--max-nodes", type=COUNT, default=None, help="Use at most this many nodes.")
@click.option("--deadline", type=SECONDS, default=None, help="Predicted upper runtime limit, s.")
@click.option("--energy-budget", type=JOULES, default=None, metavar="JOULES",
              help="Predicted upper energy limit, J.")
@click.option("--device", type=click.Choice(["cpu", "gpu"]), default=None,
              help="Only CPU or only GPU configurations.")
@click.option("--emit", type=click.Choice(["slurm", "pbs"]), default=None,
              help="Write a batch script (when escalated, the calibration sweep: Slurm only).")
@click.option("-o", "--output", "script_path", default=None,
              type=NonEmptyPath(fix="give the file for the batch script, or - to print it"),
              help="Where --emit writes the script (default or -: print it; with -, the report "
                   "goes to stderr, with --json the JSON alone, its \"said\" the note lines).")
@click.option("--force", is_flag=True,
              help="Let -o replace an existing file that is not a script hpcds1mpi wrote.")
@click.option("--program", "--command", "program", default=None,  # --command: the sweep's
              help='Your program\'s command line, e.g. "./app --n {size} --prec {precision}".')
@click.option("--job-name", default=None,
              help="Job name in the script, and the name its jobs have in --history (default: "
                   "hpcds1mpi-WORKLOAD, the name the script gives).")
@click.option("--job-output", default=None,
              help="Job stdout path in the script (Slurm: %j / %x allowed; PBS: a plain path).")
@click.option("--exclusive", is_flag=True, help="Ask for whole nodes.")
@click.option("--json", "as_json", is_flag=True,
              help="Print JSON instead of a table (with --emit: its \"script\" is the script's "
                   "text, as /v1/recommend answers, or with -o FILE that path).")
@click.option("--model", "model_dir", type=NonEmptyPath(), default=None,
              help="Model bundle directory (default: the bundle shipped with the package). "
                   + BUNDLE_IS_CODE)
@click.option("--failure-history", "history_path", type=NonEmptyPath(), default=None,
              help="Failure history file (default: ~/.cache/hpcds1mpi/failures.json).")
@click.option("--history", "job_table", type=NonEmptyPath(), default=None, metavar="JOBTABLE",
              help="Past jobs (a table from hpcds1mpi ingest, or a job log): propose --time "
                   "from them.")
@click.option("--user", default=None,
              help="Whose job it is, for --history (default: $USER).")
@click.option("--time-limit", default=None, metavar="TIME",
              help="Your own time limit (minutes, or a Slurm time: 1:30:00, 2-00:00:00): "
                   "caps the proposal, or, with --emit, is the script's.")
@click.option("--walltime-coverage", type=COVERAGE, default=None,
              help="Share of jobs like it the proposed --time should cover  [default: 0.95].")
@click.option("--record-failure", default=None, metavar="PARTITION",
              help="Record that this job failed on PARTITION, then recommend again.")
@click.option("--forget-failures", default=None, metavar="PARTITION",
              help="Remove this workload's recorded failures on PARTITION (a record made by "
                   "mistake), then recommend again.")
@click.option("--status", "failure_status", default="failed", show_default=True,
              # a wrong result is no placement failure: another partition would not fix it
              type=click.Choice(sorted(FAILURE_STATUSES - {"wrong"})),
              help="Kind of failure for --record-failure.")
@reading_options
def command(workload, size, cluster_file, partitions, objective, max_nodes, deadline,
            energy_budget, device, emit, script_path, force, program, job_name, job_output, exclusive,
            as_json, model_dir, history_path, job_table, user, time_limit, walltime_coverage,
            record_failure, forget_failures, failure_status, time_regex, fom_regex,
            ranks_regex, output_file, workdir, fail_regex, setup):
    """Recommend nodes, ranks per node, threads, device, precision and partition for a job."""
    from hpcds1mpi.places import allowed_places
    from hpcds1mpi.decide.failure_history import FailureHistory
    from hpcds1mpi.decide.model_bundle import DEFAULT_MODEL, load_model
    from hpcds1mpi.decide.recommend import recommend
    from hpcds1mpi.decide.recommendation import (
        default_queue_note, emit_script, no_calibration, unmet_constraints)
    from hpcds1mpi.decide.system1 import Constraints

    if not workload.strip():
        raise ConfigError("--workload is empty; give a kernel name (hpcds1mpi kernels) or your "
                          "program's telemetry label")
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
    # -o -: the script alone on stdout (piped to sbatch), the report on stderr: with --json,
    # the JSON alone there, the note lines in it (s46 tester J6: not parseable after them).
    script_to_stdout = script_path == "-"
    if script_to_stdout:
        script_path = None
    kept: list[str] | None = [] if as_json and script_to_stdout else None  # for the JSON
    if force and not script_path:
        raise ConfigError("--force only applies to -o FILE; add -o or drop --force")
    for name, value in (("--job-name", job_name), ("--job-output", job_output)):
        if value is not None and not value.strip():  # was: a default name, silently
            raise ConfigError(f"{name} is empty; give a value, or drop {name}")
    if script_path:
        from hpcds1mpi.atomic import check_output_file
        from hpcds1mpi.launch.scripts import check_replace_script

        from hpcds1mpi.output_paths import refuse_inputs  # F11

        check_output_file(script_path, "batch script")  # before the work, not after it
        refuse_inputs(script_path, option="-o", what="batch script", files=[  # F11 (s33 C2)
            ("--cluster file", cluster_file), ("--history table", job_table),  # F11
            ("--failure-history file", history_path)],  # F11
            folders=[("--model bundle", model_dir or DEFAULT_MODEL)])  # F11
        # A script written here before may be replaced, unless it was edited since.
        check_replace_script(script_path, force=force, option="-o")
    reading = {"time_regex": time_regex, "fom_regex": fom_regex, "ranks_regex": ranks_regex,
               "output_file": output_file, "workdir": workdir, "fail_regex": fail_regex,
               "setup": setup}
    if not emit and any(v is not None for v in reading.values()):
        raise ConfigError("the reading options (--time-regex, --workdir, ...) say how the "
                          "calibration sweep --emit writes reads your program; add --emit "
                          "slurm --program ..., or drop them")
    walltime_only = [name for name, value in (("--user", user),  # a script takes a limit too
                                              ("--time-limit", None if emit else time_limit),
                                              ("--walltime-coverage", walltime_coverage))
                     if value is not None]
    if walltime_only and not job_table:
        one = len(walltime_only) == 1
        raise ConfigError(f"{', '.join(walltime_only)} only appl{'ies' if one else 'y'} to the "
                          f"walltime proposal; add --history JOBTABLE, or drop "
                          f"{'it' if one else 'them'}")
    table, limit_s = None, _time_limit_s(time_limit)
    if job_table:  # read before the recommendation: a bad table costs nothing and writes nothing
        import os

        user = user or os.environ.get("USER") or ""
        if not user:
            raise ConfigError("--history needs whose jobs to look at: give --user (no $USER)")
        table = _read_history(job_table)
    places = allowed_places(cluster_file, partitions)
    history = FailureHistory.load(history_path)
    if record_failure and forget_failures:
        raise ConfigError("--record-failure and --forget-failures are two requests; give one")
    for option, name in (("--record-failure", record_failure),
                         ("--forget-failures", forget_failures)):
        if not name:
            continue
        hits = [(c, p) for c, p in places if name in (p.name, f"{c.name if c else ''}/{p.name}")]
        if not hits:
            raise ConfigError(f"{option} {name!r} is not an allowed partition")
        cname = hits[0][0].name if hits[0][0] is not None else ""
        if history.path is not None:  # even a bundle that is no longer whole (s47 M10)
            from hpcds1mpi.output_paths import refuse_inputs

            refuse_inputs(history.path, option="--failure-history", what="failure history",
                          folders=[("--model bundle", model_dir or DEFAULT_MODEL)])
        if option == "--record-failure":
            history.record(workload, size, hits[0][1].name, cname, failure_status)
            said = (f"recorded {workload} size {size} as {failure_status} on {name} in "
                    f"{history.path}; undo with --forget-failures {name}")
        else:
            gone = history.forget(workload, hits[0][1].name, cname)
            said = (f"forgot {gone} recorded failure{'s' if gone != 1 else ''} of {workload} "
                    f"on {name}" + (f" in {history.path}" if history.path else ""))
        click.echo(f"note: {said}", err=True)
    bundle = load_model(model_dir)
    from hpcds1mpi.decide.calibration_sweep import program_precision_note
    from hpcds1mpi.launch.program import program_precisions

    rec = recommend(  # a calibration steps at the precisions --program takes (s33 tester D10)
        bundle, workload, size, places, objective=objective,
        constraints=Constraints(max_nodes=max_nodes, deadline_s=deadline,
                                energy_budget_j=energy_budget),
        history=history, model_dir=model_dir or DEFAULT_MODEL, device=device,
        program_precisions=program_precisions(program), program=program)
    if emit and not cluster_file:  # a new job, sized by this allocation: said (J5)
        import os

        from hpcds1mpi.cluster import allocation_limits_note

        rec.notes += [said for said in dict.fromkeys(allocation_limits_note(
            p, os.environ.get("SLURM_JOB_ID", "").strip()) for _, p in places) if said]
    # said with the listing (table and --json) and in the script alike
    precision_note = rec.calibration_steps and program_precision_note(
        program).removeprefix("note: ")
    rec.notes += [precision_note] if precision_note else []
    unmet = unmet_constraints(rec)
    if unmet:  # nothing to run within the user's limits: say so, exit 2, write nothing
        raise ConfigError(unmet)
    if emit and (why := no_calibration(rec)):  # escalated, and no step could fit in memory
        raise ConfigError(why)
    from hpcds1mpi.decide.job_names import default_job_name, default_job_name_note

    # The name the script gives the job is the name its earlier runs have in the history.
    name_note = "" if job_name else default_job_name_note(rec.workload)  # s39 tester D1
    job_name = job_name or default_job_name(rec.workload)
    proposal = None
    if table is not None:
        from hpcds1mpi.places import is_this_machine

        proposal = _propose(table, rec, user, job_name, limit_s,
                            walltime_coverage or 0.95,
                            names_partition=not is_this_machine(cluster_file))
    uses_proposal = proposal is not None and proposal.time_s is not None \
        and rec.picked is not None
    # No proposal (no history of this user): the user's own --time-limit is the script's.
    script_time = proposal.time_s if uses_proposal else limit_s
    script = None
    if emit:
        from hpcds1mpi.launch import directives

        no_limit = script_time is None and time_limit is not None  # UNLIMITED, 0, -1 (J1)
        script_time = directives.NO_TIME_LIMIT if no_limit else script_time
        from hpcds1mpi.launch.program import program_note

        if note := program_note(program):
            _say(f"note: {note}", kept)
        from hpcds1mpi.decide.recommendation import script_program

        program, recorded = script_program(rec, program)
        measure, notes = calibration_reading(bundle, workload, program, reading,
                                             escalated=rec.picked is None)
        notes = [*notes, *(note for note in (recorded, name_note) if note)]
        notes += [directives.no_time_limit_note(time_limit.strip(), emit)] if no_limit else []
        from hpcds1mpi.decide.given_program import program_arguments_note

        if rec.picked is not None and (other := program_arguments_note(
                program, rec.program_command, script_time is not None)):
            notes = [*notes, other]  # the prediction is the measured command's (s32 U3)
        if rec.picked is not None:  # its sweep's folder and launcher, said here too (s29 A1, B4)
            from hpcds1mpi.decide.measured_run import measured_run

            notes = [*notes, *measured_run(rec, emit, program, bundle).notes]  # s48 Q1
        from hpcds1mpi.places import is_this_machine

        # This machine's partition name is made up: sbatch/qsub would refuse it.
        default_queue = is_this_machine(cluster_file)
        if default_queue:
            notes = [*notes, default_queue_note(rec, emit)]
        script = emit_script(rec, emit, program, job_name=job_name, output=job_output,
                             exclusive=exclusive,
                             time_limit_s=script_time,
                             time_limit_from=(
                                 "proposed from the user's job history" if uses_proposal else
                                 f"no time limit (--time-limit {time_limit.strip()})"
                                 if no_limit else "given by --time-limit"),
                             measure=measure, default_queue=default_queue,
                             notes=[*notes, *([precision_note] if precision_note else [])])
        from hpcds1mpi.launch.job_output import missing_output_folder

        notes += [said] if (said := missing_output_folder(job_output, emit)) else []
        for line in notes:  # said once the script exists: a refusal stays its one line
            _say(line if line.startswith("warning: ") else f"note: {line}", kept)
        if script_path:
            from hpcds1mpi.atomic import write_text

            write_text(script_path, script, "batch script")  # whole or not at all
        if rec.picked is None:  # the calibration sweep keeps its own limit: said as it is
            script_time = directives.script_time_limit_s(script)
        elif no_limit:
            script_time = None
        elif script_time is not None:  # whole minutes, as the script asks it (s40 D10)
            script_time = directives.given_time_limit_s(script_time)
    from hpcds1mpi.decide.offer import runtime_note

    note = runtime_note(bundle, workload)  # which runtime a program's model learned; None: kernel
    _report(rec, note, proposal, as_json=as_json, emit=emit, script=script,
            script_path=script_path, script_to_stdout=script_to_stdout,
            uses_proposal=uses_proposal, script_time=script_time,
            rounded=_rounded_note(time_limit, limit_s, emit or "slurm"), said=kept or ())


def _say(line: str, kept: list | None) -> None:
    """``line`` on stderr, or kept in ``kept`` for the JSON alone there (None: said)."""
    if kept is None:
        click.echo(line, err=True)
    else:
        kept.append(line)


def _report(rec, note, proposal, *, as_json, emit, script, script_path, script_to_stdout,
            uses_proposal, script_time, rounded=None, said=()) -> None:
    """Print the answer: the table or JSON (on stderr when the script goes to stdout), or the
    script alone when --emit prints it without -o."""
    import functools
    import json

    from hpcds1mpi.decide.recommendation import format_table, to_dict
    from hpcds1mpi.measure.printable import printable

    say = functools.partial(click.echo, err=script_to_stdout)
    if as_json:
        data = to_dict(rec)
        data["runtime"] = note
        if proposal is not None:
            data["walltime"] = {**proposal.to_dict(), "in_script": bool(emit and uses_proposal),
                                "script_time_s": script_time if emit else None}
        if said:
            data["said"] = list(said)
        if script_path:
            data["script"] = script_path
        elif emit and not script_to_stdout:  # the text, as /v1/recommend answers it
            data["script"] = script
        say(json.dumps(data, indent=2))
    elif emit and not script_path and not script_to_stdout:
        click.echo(script, nl=False)
    else:
        say(format_table(rec))
        if note is not None:
            say(note["line"])
        if proposal is not None:
            say("")
            say("\n".join(proposal.lines(scheduler=emit or "slurm")))
            if rounded:
                say(rounded)
            if emit and rec.picked is None:  # escalated: the sweep's steps, not this job
                own = f" ({script_time:.0f} s)" if script_time else ""
                say(f"walltime: the calibration sweep keeps its own time limit{own}, for all "
                    "its steps; the walltime above is for the job once calibrated")
            elif emit and uses_proposal:
                say(f"walltime: the {emit} script's time limit is this proposal")
            elif emit and script_time:
                say(f"walltime: the {emit} script's time limit is your --time-limit "
                    f"({script_time:.0f} s)")
        if script_path:
            kind = "calibration sweep" if rec.picked is None else f"{emit} script"
            # a name with a newline or terminal escape shown escaped, as other commands do
            say(f"\nwrote {kind} to {printable(script_path)}")
    if script_to_stdout:
        click.echo(script, nl=False)
