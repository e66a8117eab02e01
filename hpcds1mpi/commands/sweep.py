"""``hpcds1mpi sweep``: measure kernels (in-process, under mpiexec/srun) or your own MPI program
(``--command``, launched once per repeat of each configuration) over configurations into HDF5
telemetry.

    mpiexec -n 4 hpcds1mpi sweep --plan plans/reference.toml --out t.h5
    mpiexec -n 4 hpcds1mpi sweep --kernel stencil,gemm --ranks-per-node 1,2,4 --threads 1,2 \\
        --precisions fp64,fp32 --out t.h5
    hpcds1mpi sweep --launch 4 --plan plan.toml --out t.h5      # relaunches after a timeout/crash
    hpcds1mpi sweep --command "./app --n {size}" --label app --sizes 100,200 --ranks-per-node 1,2 \\
        --out app.h5
    hpcds1mpi sweep --command hpcc --workdir 'hpcc/{size}-{ranks}' --output-file hpccoutf.txt \\
        --mpiexec /usr/bin/mpirun.openmpi --time-regex 'HPL_time=([0-9.eE+-]+)' \\
        --ranks-regex 'CommWorldProcs=(\\d+)' --sizes 200,400 --ranks-per-node 1,2 --out hpcc.h5
    hpcds1mpi sweep --command "simpleFoam -parallel" --workdir 'case-{ranks}' --sizes 1 \\
        --setup './decompose.sh {ranks}' \\
        --ranks-per-node 2,4 --out foam.h5
    hpcds1mpi sweep --plan plans/reference.toml --list          # count and rough time, no run
"""

from __future__ import annotations

import sys

import click

from hpcds1mpi.measure.printable import printable
from hpcds1mpi.schemas.numbers import COUNT
from hpcds1mpi.schemas.paths import NonEmptyPath
from hpcds1mpi.schemas.sweep_defaults import help_text

#: The repeat options' help, from the defaults the plans use (s38 tester B6).
REPEAT_HELP = help_text()


#: The supervisor's own options: they choose how it launches the sweep, never passed on.
SUPERVISOR_OPTIONS = ("--launch", "--launcher", "--mpi", "--launcher-args")


def _strip_launch(argv: list[str]) -> list[str]:
    """The sweep's own arguments without the supervisor's (``--launch N``, ``--launcher X``,
    ``--mpi X``, ``--launcher-args X``, and their ``=`` forms)."""
    args = list(argv)
    if "sweep" in args:
        args = args[args.index("sweep") + 1:]
    out, skip = [], False
    for arg in args:
        if skip:
            skip = False
            continue
        if arg in SUPERVISOR_OPTIONS:
            skip = True
            continue
        if arg.split("=", 1)[0] in SUPERVISOR_OPTIONS and "=" in arg:
            continue
        out.append(arg)
    return out


@click.command(name="sweep")
@click.option("--plan", "plan_file", type=NonEmptyPath(), default=None, help="Sweep plan (TOML).")
@click.option("--out", default=None, help="Telemetry file to write (.h5).")
@click.option("--kernel", multiple=True, help="Kernel name(s), comma-separated (instead of --plan).")
@click.option("--sizes", default=None,
              help="Sizes: 64,128 or 64..1024 (64 doubled until it reaches 1024); default: "
                   "each kernel's own sizes (--command needs them).")
@click.option("--nodes", default=None, help="Node counts, e.g. 1,2 (default 1).")
@click.option("--ranks-per-node", default=None,
              help="Ranks per node, e.g. 1,2,4 (default 1 up to the partition's cores; "
                   "--command 1).")
@click.option("--threads", default=None,
              help="Threads per rank, e.g. 1,2 (default 1 up to the partition's cores; "
                   "--command 1).")
@click.option("--devices", default=None,
              help="cpu,gpu or 'available' (the default; --command cpu).")
@click.option("--precisions", default=None,
              help="fp64,fp32,bf16 or 'declared' (the kernel's, the default; --command fp64).")
@click.option("--min-time", type=float, default=None, help=REPEAT_HELP["min_time"])
@click.option("--min-repeats", type=int, default=None, help=REPEAT_HELP["min_repeats"])
@click.option("--max-repeats", type=int, default=None, help=REPEAT_HELP["max_repeats"])
@click.option("--warmup", type=int, default=None, help=REPEAT_HELP["warmup"])
@click.option("--timeout", type=float, default=None, help=REPEAT_HELP["timeout"])
@click.option("--seed", type=int, default=None,
              help="Seed of the runs' inputs; round k uses seed + k (default 0).")
@click.option("--rounds", type=int, default=None,
              help="Measure each problem's configurations this many times in turn.")
@click.option("--race-rounds", type=int, default=None,
              help="Up to this many more rounds of only the configurations still within "
                   "--race-within of their problem's best median (kernel sweeps).")
@click.option("--race-within", type=float, default=None,
              help="Contender margin for --race-rounds (default 0.05: within 5 %).")
@click.option("--valid-only", is_flag=True, default=None,
              help="Keep only configurations that fit the partition and the kernel.")
@click.option("--resume", is_flag=True, help="Continue an existing telemetry file.")
@click.option("--accept-edited-inputs", is_flag=True,
              help="--resume a program's file although an input its command names was edited.")
@click.option("--retry-crashed", is_flag=True, default=None,
              help="Retry configurations recorded as crashed (once more by default).")
@click.option("--kernel-module", multiple=True, help="Extra kernels: a module or .py path.")
@click.option("--cluster", "cluster_file", type=NonEmptyPath(), default=None)
@click.option("--partition", default=None)
@click.option("--list", "list_only", is_flag=True, help="Print the configurations and a rough time (kernels: a program has no work model).")
@click.option("--launch", type=COUNT, default=None,
              help="Supervise: run mpiexec/srun with N ranks, resuming until the plan is done.")
@click.option("--command", "--program", "program", default=None,  # --program: tune's name
              help="Your MPI program; placeholders {size} {nodes} {ranks} {ranks_per_node} "
                   "{threads} {precision} {device}.")
@click.option("--label", default=None,
              help="Workload name for --command (default: its program's file name, as a label "
                   "holds it: 'my app' is my_app).")
@click.option("--fom-regex", default=None, help="Regex whose first group is a figure of merit.")
@click.option("--time-regex", default=None,
              help="Regex whose first group is the program's own time (s): it becomes "
                   "runtime_s; the launch's wall time stays in elapsed_s.")
@click.option("--ranks-regex", default=None,
              help="Regex whose first group is the rank count the program reports; a launch "
                   "that disagrees stops the sweep (its ranks are not one job).")
@click.option("--fail-regex", default=None,
              help="Regex that makes a launch which exited 0 failed, the matched line its "
                   "reason (e.g. 'SCF run NOT converged').")
@click.option("--output-file", default=None,
              help="A file the program writes (e.g. hpccoutf.txt), read by the regexes too.")
@click.option("--workdir", default=None,
              help="Folder each configuration of --command runs in (placeholders allowed).")
@click.option("--setup", default=None,
              help="Shell command run once per configuration before its first launch, in its "
                   "folder, placeholders filled (e.g. 'decomposePar -force').")
@click.option("--launcher", type=click.Choice(["srun", "mpiexec"]), default=None,
              help="What starts the ranks for --launch / --command (default: srun inside a "
                   "Slurm allocation with srun on PATH, else mpiexec).")
@click.option("--mpiexec", "mpiexec_path", default=None,
              help="The mpiexec/mpirun that starts --command (default: the cluster file's "
                   "mpiexec, else the one beside this Python, else PATH's).")
@click.option("--launcher-args", default=None,
              help="Extra launcher options for --command / --launch, shell-quoted (e.g. "
                   "\"--bind-to core\"); default: the cluster file's launcher_args.")
@click.option("--mpi", "mpi_plugin", default=None,
              help="srun's --mpi plugin for --launch / --command (default: the cluster file's "
                   "mpi, else pmi2).")
@click.option("--snapshot-every", type=float, default=None,
              help="Rewrite the HDF5 snapshot at most every S seconds (journal in between).")
@click.option("--no-progress", is_flag=True,
              help="Hide the progress bar (what the pre-flight finds is still said).")
def command(plan_file, out, kernel, sizes, nodes, ranks_per_node, threads, devices, precisions,
            min_time, min_repeats, max_repeats, warmup, timeout, seed, rounds, race_rounds,
            race_within, valid_only, resume, accept_edited_inputs,
            retry_crashed, kernel_module, cluster_file, partition, list_only, launch, program,
            label, fom_regex, time_regex, ranks_regex, fail_regex, output_file, workdir, setup,
            launcher, mpiexec_path, launcher_args, mpi_plugin, snapshot_every,
            no_progress) -> None:
    """Measure kernels or your own MPI program over configurations into HDF5 telemetry."""
    params = dict(locals())
    from hpcds1mpi.errors import HpcdsError
    from hpcds1mpi.runtime.mpi import launch_rank

    try:
        _main(**params)
    except HpcdsError as exc:
        if launch_rank() != 0:
            raise SystemExit(exc.exit_code)  # rank 0 prints the one line
        raise


def _main(plan_file, out, kernel, sizes, nodes, ranks_per_node, threads, devices, precisions,
          min_time, min_repeats, max_repeats, warmup, timeout, seed, rounds, race_rounds,
          race_within, valid_only, resume, accept_edited_inputs,
          retry_crashed, kernel_module, cluster_file, partition, list_only, launch, program,
          label, fom_regex, time_regex, ranks_regex, fail_regex, output_file, workdir, setup,
          launcher, mpiexec_path, launcher_args, mpi_plugin, snapshot_every,
          no_progress) -> None:
    from hpcds1mpi import kernels as registry
    from hpcds1mpi.places import resolve_partition
    from hpcds1mpi.errors import ConfigError
    from hpcds1mpi.measure import plan as plans

    _refuse_options_of_the_other_mode(
        external=program is not None, launch=launch is not None,
        given={"--min-time": min_time, "--min-repeats": min_repeats,
               "--max-repeats": max_repeats, "--warmup": warmup,
               "--retry-crashed": retry_crashed, "--kernel-module": kernel_module or None,
               "--rounds": rounds, "--race-rounds": race_rounds, "--race-within": race_within,
               "--label": label, "--fom-regex": fom_regex, "--time-regex": time_regex,
               "--ranks-regex": ranks_regex, "--fail-regex": fail_regex,
               "--output-file": output_file,
               "--workdir": workdir, "--setup": setup, "--mpiexec": mpiexec_path,
               "--launcher-args": launcher_args, "--launcher": launcher, "--mpi": mpi_plugin})
    if resume and out and not list_only:  # a damaged campaign shard: resubmit's line (s46)
        from hpcds1mpi.measure.campaign_damaged import check_resumable

        check_resumable(out)
    if out and not list_only:  # before any launch: learn and train then refused it (M11)
        from hpcds1mpi.output_paths import refuse_inside_bundle

        refuse_inside_bundle(out, what="telemetry")
    if launch is not None:
        from hpcds1mpi.commands.sweep_launch import launch_sweep

        raise SystemExit(launch_sweep(launch, _strip_launch(sys.argv), out, launcher=launcher,
                                      mpi_plugin=mpi_plugin, launcher_args=launcher_args,
                                      cluster_file=cluster_file, partition=partition))
    if not out and not list_only:
        raise ConfigError("--out is required (the telemetry file to write)")
    if out and not list_only:
        from hpcds1mpi.atomic import check_output_file

        check_output_file(out, "telemetry")  # before any launch: a file as folder, none at all
    for module in kernel_module:
        registry.load_plugin(module)
    part = resolve_partition(cluster_file, partition)

    if program is not None:
        from hpcds1mpi.launch.program import program_note
        from hpcds1mpi.measure import external
        from hpcds1mpi.measure.external_plan import (build_external_plan,
                                                     check_sizes_reach_program)

        if note := program_note(program, "--command"):
            click.echo(f"note: {note}", err=True)
        if part.name == "local" and not cluster_file:  # s36 tester E3: a CPU mask's cores
            for note in part.node_notes:
                click.echo(f"note: {note}", err=True)
        if plan_file or kernel:
            raise ConfigError("--command sweeps your program; do not combine it with --plan/--kernel")
        if sizes is None:
            raise ConfigError("--command needs --sizes")
        from hpcds1mpi.launch.preflight import LaunchChoice, refuse_unused_plugin
        from hpcds1mpi.measure.readings import Readings
        from hpcds1mpi.measure.setup_command import check_setup

        label, label_said = _program_label(program, label, out if resume else None)
        say = _saying_first(label_said)
        plan = build_external_plan(
            program, label, sizes=sizes, nodes=nodes,
            ranks_per_node=ranks_per_node, threads=threads, devices=devices,
            precisions=precisions, partition=part, valid_only=bool(valid_only),
            timeout=timeout, seed=seed, snapshot_every=snapshot_every,
            min_repeats=min_repeats, max_repeats=max_repeats, min_time=min_time,
            warmup=warmup)
        plan.timeout_given = timeout is not None
        readings = Readings.of(time_regex=time_regex, fom_regex=fom_regex,
                               ranks_regex=ranks_regex, output_file=output_file,
                               fail_regex=fail_regex)
        if workdir is not None:
            from hpcds1mpi.launch.program import no_control

            no_control(workdir, "--workdir")
        setup = check_setup(setup)
        check_sizes_reach_program(plan, workdir, setup)  # before --list: nothing would differ
        from hpcds1mpi.launch.script_placeholders import split_command

        choice = LaunchChoice.of(launcher=launcher, mpi=mpi_plugin, mpiexec=mpiexec_path,
                                 launcher_args=launcher_args, cluster_file=cluster_file,
                                 partition=partition, program=split_command(program) or None)
        if choice.said:
            click.echo(f"note: {choice.said}", err=True)
        if plan.cap_note:  # --min-time alone lifted the cap (s38 tester B6)
            click.echo(f"note: {plan.cap_note}", err=True)
        if list_only:
            say()
            _print_list(plan, None, program=True)
            return
        # after --list: a dry run typed on a login node is not where the sweep will run (R2)
        refuse_unused_plugin(mpi_plugin, choice.started_by(launcher))  # s44
        summary = external.run_external(
            plan, out, part, resume=resume, choice=choice, readings=readings, workdir=workdir,
            setup=setup, accept_edited_inputs=accept_edited_inputs,
            progress=not no_progress,  # hides the bar only: what the pre-flight found and
            # what the launcher adds (--oversubscribe, --allow-run-as-root) is always said
            say=say)
        from hpcds1mpi.measure.fom_note import fom_summary

        if note := fom_summary(readings.fom, readings.fom_launches):  # s43 tester G3
            say(note)
        say()
        click.echo(_summary_line(summary, out), err=True)
        _refuse_all_failed(summary, out)
        return

    if plan_file and kernel:
        raise ConfigError("give either --plan or --kernel, not both")
    if not plan_file and not kernel:
        raise ConfigError("nothing to sweep: give --plan FILE, --kernel NAME or --command PROGRAM")
    doc = plans.plan_doc(
        plan_file, list(kernel),
        ranges=dict(sizes=sizes, nodes=nodes, ranks_per_node=ranks_per_node, threads=threads,
                    devices=devices, precisions=precisions),
        settings=dict(min_time=min_time, min_repeats=min_repeats, max_repeats=max_repeats,
                      warmup=warmup, timeout=timeout, seed=seed, valid_only=valid_only,
                      retry_crashed=retry_crashed, snapshot_every=snapshot_every,
                      rounds=rounds, race_rounds=race_rounds, race_within=race_within))
    plan = plans.build_plan(doc, part)
    plan.timeout_given = "timeout" in (doc.get("sweep") or {})  # the flag's or the file's
    if list_only:
        _print_list(plan, plans.estimate_seconds(plan))
        for note in (plan.left_out, plan.cap_note):  # s37 tester K5, s38 tester B6
            if note:
                click.echo(f"note: {note}", err=True)
        return
    from hpcds1mpi.launch.own_launcher import check_started_by
    from hpcds1mpi.measure.driver import run_inprocess
    from hpcds1mpi.runtime.mpi import world

    check_started_by()  # before MPI_Init: under another MPI's launcher it aborts with a stack
    comm = world()
    for note in (plan.left_out, plan.cap_note) if comm.Get_rank() == 0 else ():
        if note:  # once, not per rank (s37 tester K5, s38 tester B6)
            click.echo(f"hpcds1mpi sweep: note: {note}", err=True)
    summary = run_inprocess(comm, plan, out, part, resume=resume, progress=not no_progress)
    if summary:
        click.echo(_summary_line(summary, out), err=True)


def _program_label(program: str, label: str | None, resumed: str | None
                   ) -> tuple[str, list[str]]:
    """The workload label of ``--command`` and the lines saying it, by tune's rule
    (:func:`~hpcds1mpi.measure.command_label.command_label`: the label the ``--resume`` -d
    file ran this command under kept; s41 tester A1: every program had been ``external``,
    silently). The line is said with the sweep's first word, so that a refusal stays one."""
    from hpcds1mpi.measure.command_label import command_label

    return command_label(program, label, resumed)


def _saying_first(pending: list[str]):
    """A ``say`` that says the ``pending`` lines before its first line (and on its own call
    with no line)."""
    def say(line: str | None = None) -> None:
        for held in [*pending, *([line] if line else [])]:
            click.echo(f"hpcds1mpi sweep: {held}", err=True)
        pending.clear()
    return say


#: Options that only the kernel sweep reads (an external program's failure is a
#: measurement, never retried; it is no kernel module; its sweep has no rounds).
KERNEL_ONLY = ("--retry-crashed", "--kernel-module", "--rounds", "--race-rounds",
               "--race-within")
#: Options that only the external sweep (``--command``) reads.
EXTERNAL_ONLY = ("--label", "--fom-regex", "--time-regex", "--ranks-regex", "--fail-regex",
                 "--output-file", "--workdir", "--setup", "--mpiexec", "--launcher-args")


def _refuse_options_of_the_other_mode(*, external: bool, launch: bool, given: dict) -> None:
    """Every option applies to the sweep mode it is given in, or is refused (exit 2).

    Raises:
        ConfigError: an option of the kernel sweep with ``--command``, one of the external
            sweep without it, ``--launch`` with ``--command``, or ``--launcher`` / ``--mpi``
            where no launcher is started by hpcds1mpi (an in-process sweep runs under yours).
    """
    from hpcds1mpi.errors import ConfigError

    set_ = [name for name, value in given.items() if value is not None and value is not False]
    if external:
        if launch:
            raise ConfigError("--launch relaunches a kernel sweep under mpiexec/srun; --command "
                              "already launches your program once per configuration: drop "
                              "--launch")
        wrong = [n for n in set_ if n in KERNEL_ONLY]
        if wrong:
            raise ConfigError(f"{', '.join(wrong)} applies to kernel sweeps only; --command "
                              "launches your program once per configuration, repeated by "
                              "--min-repeats/--max-repeats, and records its exit (failed/oom/"
                              f"timeout are measurements, never retried): drop "
                              f"{'them' if len(wrong) > 1 else 'it'}")
        return
    # --launch starts the ranks with the launcher options, as --command does (s42)
    wrong = [n for n in set_ if n in EXTERNAL_ONLY and n != "--launcher-args"]
    if wrong:
        raise ConfigError(f"{', '.join(wrong)} applies to --command sweeps only: drop "
                          f"{'them' if len(wrong) > 1 else 'it'} or give --command")
    if "--launcher-args" in set_ and not launch:  # s43 review R16: --launch N takes it too
        raise ConfigError("--launcher-args applies to --command or --launch N sweeps: drop it, "
                          "or give --launch N (the kernels) or --command")
    for name in ("--launcher", "--mpi"):
        if name in set_ and not launch:
            raise ConfigError(f"{name} picks how --launch or --command starts ranks; an "
                              "in-process sweep runs under the mpiexec/srun you started it "
                              "with: drop it")


def _refuse_all_failed(summary: dict, out: str) -> None:
    """Exit 1 when the program failed in every configuration this sweep ran: the rows are kept
    (failures are measurements), but a script running the sweep must not carry on as if it
    measured something (a misspelled input file had exited 0 with "failed 6")."""
    from hpcds1mpi.config import FAILURE_STATUSES
    from hpcds1mpi.errors import RuntimeFailure

    statuses = summary.get("statuses", {})
    failed = sum(n for k, n in statuses.items() if k in FAILURE_STATUSES)
    if failed and failed == statuses.get("timeout", 0) == sum(statuses.values()):
        # the command may be right: it ran past the limit everywhere (s27 tester Q, 6)
        raise RuntimeFailure(f"every configuration this sweep ran timed out ({failed}; in "
                             f"{out}): raise --timeout (the same sweep with --resume and a "
                             "larger --timeout measures them again there), or sweep smaller "
                             "--sizes into a new --out")
    if failed and failed == sum(statuses.values()):
        raise RuntimeFailure(f"every configuration this sweep ran failed ({failed}; the reasons "
                             f"are above, and in {out}): fix what they name (the command, "
                             "its input or --setup), then sweep into a new --out")


def _summary_line(summary: dict, out: str) -> str:
    statuses = ", ".join(f"{k} {v}" for k, v in sorted(summary.get("statuses", {}).items()))
    raced = (f"; {summary['raced_out']} race runs not needed: their problem's best was "
             "settled" if summary.get("raced_out") else "")
    from hpcds1mpi.measure.setup_command import setup_failed_words

    n = summary["configs"]
    return (f"hpcds1mpi sweep: {n} configuration{'s' if n != 1 else ''} into {printable(out)} "
            f"({statuses or 'nothing new'}{setup_failed_words(summary)}; "
            f"{summary.get('skipped', 0)} already done{raced}) in "
            f"{summary['sweep_s']:.1f} s, of which measured {summary['measured_s']:.1f} s")


def _print_list(plan, estimate: float | None, program: bool = False) -> None:
    """The plan's configurations, the ranks to start it under (a kernel sweep) and a rough
    time where a work model gives one (kernels); a program sweep launches each run itself."""
    from collections import Counter

    per_kernel = Counter(r.workload for r in plan.runs)
    for name, count in per_kernel.items():
        sizes = sorted({r.size for r in plan.runs if r.workload == name})
        click.echo(f"{name}: {count} configurations, {len(sizes)} sizes "
                   f"({sizes[0]}..{sizes[-1]})")
    if program:  # was "launch with at least 4 ranks": four copies of the sweep (s27 Q, 7)
        click.echo(f"total: {len(plan.runs)} configurations, each launched by the sweep itself "
                   f"(up to {plan.max_ranks} rank{'s' if plan.max_ranks != 1 else ''}; start "
                   "the sweep alone, not under mpiexec/srun); no rough time: a program has no "
                   f"work model (at least {plan.min_repeats} launches each)")
    else:
        click.echo(f"total: {len(plan.runs)} configurations; launch with at least "
                   f"{plan.max_ranks} rank{'s' if plan.max_ranks != 1 else ''}")
    if plan.races:
        click.echo(f"of which {len(plan.races)} race runs, measured only while their "
                   f"configuration is within {plan.race_within:.0%} of its problem's best median "
                   "(the estimate counts them all)")
    if estimate is not None:
        from hpcds1mpi.measure.plan import format_duration

        click.echo(f"rough estimate: {format_duration(estimate)} (from min_time and the kernels' "
                   "work models at a pessimistic 1 GFLOP/s, 5 GB/s per rank; not a measurement: "
                   "compute-bound kernels run far faster)")
