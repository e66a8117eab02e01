"""``hpcds1mpi tune``: System 2, real runs inside an allocation, from System 1's pick.

    # inside an allocation (salloc / sbatch): each configuration is launched with srun
    hpcds1mpi tune --kernel gemm --size 1024 --model bundle/ --out tune.h5
    # or launched itself: configurations run on sub-communicators of the launched ranks
    mpiexec -n 4 hpcds1mpi tune --kernel gemm --size 1024 --out tune.h5
    # your own program (external-program mode), from your current settings
    hpcds1mpi tune --program "./app --n {size}" --label app --size 100 --ranks-per-node 8 \\
        --out tune.h5
    # runtime-energy front by MOBO on real runs
    hpcds1mpi tune --kernel gemm --size 1024 --objective front --budget 10 --out tune.h5
    # from a login node: write a job script that runs the same tune, and sbatch it
    hpcds1mpi tune --kernel gemm --size 1024 --out tune.h5 --submit --max-nodes 2

Every run is written to the telemetry file (``--out``); ``hpcds1mpi learn --telemetry`` adds
them to the model. See docs/system2.md.
"""

from __future__ import annotations

import os
import sys

import click

from hpcds1mpi.schemas.numbers import COUNT, SECONDS, SEED, SIZE, BoundedFloat
from hpcds1mpi.schemas.paths import BUNDLE_IS_CODE, NonEmptyPath

#: A relative noise floor: 0 (none assumed) to 1.
NOISE = BoundedFloat(0.0, 1.0, "relative noise")

#: The sweep's options for launching and reading a user's program, taken as they are (same
#: meaning, help and checks): ``tune --program`` launches that program the same way.
PROGRAM_OPTIONS = ("--mpiexec", "--launcher-args", "--time-regex", "--fom-regex",
                   "--ranks-regex", "--fail-regex", "--output-file", "--workdir", "--setup")


def _sweep_options(func):
    """Add :data:`PROGRAM_OPTIONS` to ``func`` with the sweep's declarations and help text."""
    from hpcds1mpi.commands.sweep import command as sweep

    by_flag = {opt: p for p in sweep.params for opt in getattr(p, "opts", ())}
    for flag in reversed(PROGRAM_OPTIONS):
        param = by_flag[flag]
        func = click.option(*param.opts, param.name, default=None,
                            help=param.help.replace("--command", "--program"))(func)
    return func


def _check_before_running(out: str, *, timeout: float, min_time: float, max_repeats: int,
                          min_repeats: int | None = None, time_budget: float | None) -> None:
    """Refuse what would only fail after the whole budget ran: a non-positive ``--timeout``,
    a ``--out`` that cannot be written (a ``--program`` that cannot start: :func:`~hpcds1mpi.decide.tune_program.check_program`,
    once the folder it runs in is known).

    Raises:
        ConfigError: a bad number (exit 2).
        TelemetryError: ``--out`` is a directory, its folder is missing or read-only, or it is
            not a telemetry file (exit 2); LockError while another process writes it (exit 1).
    """
    import math
    from pathlib import Path

    from hpcds1mpi.errors import ConfigError, TelemetryError
    from hpcds1mpi.records.telemetry import TelemetryWriter

    if not (math.isfinite(timeout) and timeout > 0):
        raise ConfigError(f"--timeout must be a positive number of seconds, got {timeout:g}")
    if not (math.isfinite(min_time) and min_time >= 0):
        raise ConfigError(f"--min-time must be 0 or more seconds, got {min_time:g}")
    if max_repeats < 1:
        raise ConfigError(f"--max-repeats must be at least 1, got {max_repeats}")
    if min_repeats is not None and min_repeats > max_repeats:
        raise ConfigError(f"--min-repeats {min_repeats} is more than --max-repeats "
                          f"{max_repeats}; lower --min-repeats or raise --max-repeats")
    if time_budget is not None and not (math.isfinite(time_budget) and time_budget > 0):
        raise ConfigError(f"--time-budget must be a positive number of seconds, "
                          f"got {time_budget:g}")
    path = Path(out)
    if path.is_dir():
        raise TelemetryError(f"--out {out}: is a directory; give a telemetry file (.h5)")
    TelemetryWriter(path, resume=True).validate()  # missing folder, not telemetry, locked
    if not os.access(path.parent, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise TelemetryError(f"--out {out}: not writable; choose a folder you can write to")


@click.command(name="tune")
@click.option("--kernel", "kernel", default=None, help="Kernel to tune (see hpcds1mpi kernels).")
@click.option("--program", "--command", "program", default=None,  # --command: the sweep's
              help='Your MPI program instead of a kernel, e.g. "./app --n {size}".')
@click.option("--label", default=None, help="Workload name of --program (default: its file name, as a label holds it: "
              "'my app' is my_app).")
@click.option("--size", type=SIZE, required=True, help="Problem size.")
@click.option("--out", required=True, type=NonEmptyPath(), help="Telemetry file for every run (.h5).")
@click.option("--model", "model_dir", type=NonEmptyPath(), default=None,
              help="Model bundle: start from System 1's pick and rank by expected improvement. "
                   + BUNDLE_IS_CODE)
@click.option("--objective", type=click.Choice(["time", "energy", "front"]), default="time",
              show_default=True)
@click.option("--budget", type=COUNT, default=8, show_default=True,
              help="Most runs, the first included.")
@click.option("--time-budget", type=SECONDS, default=None, help="Stop starting runs after S seconds.")
@click.option("--noise-floor", type=NOISE, default=0.03, show_default=True,
              help="Relative noise assumed at least.")
@click.option("--nodes", type=COUNT, default=None, help="Start: nodes (your current settings).")
@click.option("--ranks-per-node", type=COUNT, default=None, help="Start: ranks per node.")
@click.option("--threads", type=COUNT, default=None, help="Start: threads per rank.")
@click.option("--device", type=click.Choice(["cpu", "gpu"]), default=None, help="Start: device.")
@click.option("--precision", type=click.Choice(["fp64", "fp32", "bf16"]), default=None,
              help="Start: precision.")
@click.option("--max-nodes", type=COUNT, default=None, help="Use at most this many nodes.")
@click.option("--launcher", type=click.Choice(["srun", "mpiexec"]), default=None,
              help="Launch each configuration with this (default: srun inside Slurm).")
@click.option("--mpi", "mpi_plugin", default=None,
              help="srun's --mpi plugin for each configuration: pmix, pmi2, none (default: the "
                   "cluster file's mpi, else the one --model's sweep ran the program with, else "
                   "pmi2).")
@click.option("--cluster", "cluster_file", type=NonEmptyPath(), default=None)
@click.option("--partition", default=None)
@click.option("--min-time", type=float, default=0.2, show_default=True,
              help="Measure each configuration at least this long (s).")
@click.option("--min-repeats", type=COUNT, default=None,
              help="Measure each configuration at least this many times (default: the "
              "sweep's, 1), e.g. 5 on a noisy node so that close configurations are told apart.")
@click.option("--max-repeats", type=COUNT, default=5, show_default=True)
@click.option("--timeout", type=float, default=600.0, show_default=True,
              help="Per-configuration timeout (s).")
@click.option("--seed", type=SEED, default=0, show_default=True, help="Seed of MOBO's design.")
@click.option("--submit", is_flag=True,
              help="Write a job script running this tune and sbatch it (from a login node).")
@click.option("--force", is_flag=True,
              help="With --submit: replace a job script of that name that hpcds1mpi did not "
              "write.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.option("--accept-edited-inputs", is_flag=True,
              help="Add to --out although an input --program names was edited since its runs.")
@_sweep_options
def command(kernel, program, label, size, out, model_dir, objective, budget, time_budget,
            noise_floor, nodes, ranks_per_node, threads, device, precision, max_nodes, launcher,
            mpi_plugin, cluster_file, partition, min_time, min_repeats, max_repeats, timeout, seed, submit,
            force, as_json, accept_edited_inputs, mpiexec_path, launcher_args, time_regex,
            fom_regex, ranks_regex, fail_regex, output_file, workdir, setup):
    """Tune a job by real runs inside its allocation (System 2)."""
    import json

    from hpcds1mpi.foreign_jobs import foreign_job
    from hpcds1mpi.places import resolve_partition
    from hpcds1mpi.decide import system2, tune_predictions, tune_space
    from hpcds1mpi.decide.tune_front import tune_front
    from hpcds1mpi.measure import trials
    from hpcds1mpi.errors import ConfigError, HpcdsError, LaunchError

    if (kernel is None) == (program is None):
        raise ConfigError("give exactly one of --kernel NAME or --program \"CMD\"")
    if size <= 0:
        raise ConfigError(f"--size must be a positive integer, got {size}")
    if budget < 1:
        raise ConfigError(f"--budget must be at least 1, got {budget}")
    if not 0 <= noise_floor < 1:
        raise ConfigError(f"--noise-floor must be in [0, 1), got {noise_floor}")
    if max_nodes is not None and max_nodes < 1:
        raise ConfigError(f"--max-nodes must be at least 1, got {max_nodes}")
    given = {"--mpiexec": mpiexec_path, "--launcher-args": launcher_args,
             "--time-regex": time_regex, "--fom-regex": fom_regex, "--ranks-regex": ranks_regex,
             "--fail-regex": fail_regex, "--output-file": output_file, "--workdir": workdir,
             "--setup": setup}
    from hpcds1mpi.commands.tune_launch_choice import check_mpi_option, program_launch

    check_mpi_option(mpi_plugin)
    choice, readings = program_launch(program, launcher=launcher, mpi=mpi_plugin,
                                      cluster_file=cluster_file, partition=partition,
                                      given=given)
    # the program is checked once the folder it runs in is known: the model's (s37 tester G4)
    _check_before_running(out, timeout=timeout, min_time=min_time, max_repeats=max_repeats,
                          min_repeats=min_repeats, time_budget=time_budget)
    from hpcds1mpi.output_paths import refuse_inside_bundle, refuse_inside_model

    refuse_inside_model(out, model_dir, what="telemetry")  # learn then refused it (M11)
    refuse_inside_bundle(out, what="telemetry")  # another bundle, as sweep (s48 review RX2)
    if kernel is not None:
        from hpcds1mpi import kernels as registry

        registry.refuse_option_deck(kernel)  # s41 tester D15
        registry.get(kernel)  # UnknownKernelError lists the known ones
        workload = kernel
    else:
        from hpcds1mpi.decide.tune_program import program_tokens
        from hpcds1mpi.measure.command_label import command_label

        if not program_tokens(program):
            raise ConfigError('--program is empty; give the command to tune, e.g. '
                              '--program "./app --n {size}"')
        workload, said = command_label(program, label, out, name_said=False)  # F7

    def log(line: str) -> None:
        click.echo(f"tune: {line}", err=True)

    part = resolve_partition(cluster_file, partition)
    bundle, other_model, model_part = None, "", part
    if model_dir is not None:  # a bad --model is a usage error (2), before any launcher (1)
        from hpcds1mpi.decide.model_bundle import load_model

        if os.path.isfile(model_dir):
            raise ConfigError(f"--model {model_dir}: is a file, not a model bundle folder; give "
                              "the folder `hpcds1mpi train --out` wrote")
        bundle = load_model(model_dir)
        # learn's rule of "the model's machine", not only the hardware (s37 tester K1)
        model_part = tune_predictions.model_partition(
            bundle, part, tune_predictions.this_machine(part, program))
        if model_part is None:
            click.echo(f"tune: {tune_predictions.other_machine_note(part)}", err=True)
            bundle, other_model = None, model_dir
    if program is not None:
        from hpcds1mpi.decide.tune_launch import model_launch
        from hpcds1mpi.decide.tune_program import check_program, model_label, model_place, \
            model_readings, trials_launcher

        if bundle is not None and label is None and \
                (known := model_label(bundle, program)) not in (None, workload):
            workload, said = command_label(program, label, out, known, model_dir, False)
        if bundle is not None:  # the folder, setup and launcher its sweep ran it with (G4, E5)
            workdir, setup = model_place(bundle, workload, program, workdir, setup, log)
            if (read := model_readings(bundle, workload, program, given, log)) != given:  # s46 H7
                from hpcds1mpi.commands.tune_launch_choice import program_readings

                readings = program_readings(read)
            choice = model_launch(choice, bundle, workload, program, launcher,
                                  {**given, "--mpi": mpi_plugin}, cluster_file, partition,
                                  submit, log)
        check_program(program, workdir, say=lambda line: click.echo(line, err=True))
        from hpcds1mpi.measure.external_resume import check_resumed

        # before any launch; its launcher too, as the sweep's --resume (s40 review G5)
        check_resumed(out, program, readings, workload, by="tune", setup=setup,
                      launched=trials_launcher(out, choice, part, submit))
        for line in said:  # a label kept from --out or --model, as sweep says it (F7)
            click.echo(f"tune: {line}", err=True)

    if submit:  # refused here, not in the job it would fail (s44 review R3)
        from hpcds1mpi.commands.tune_launch_choice import refuse_mpi_under_chosen_launcher

        # "srun": where neither --launcher nor the choice names one, the job's default
        refuse_mpi_under_chosen_launcher(mpi_plugin, launcher, choice, "srun")
        from hpcds1mpi.cluster import resolve_cluster
        from hpcds1mpi.commands.tune_submit import submit as sbatch, tune_args

        # The allocation: --max-nodes nodes, at most the partition's (the tune searches inside).
        job_id, script = sbatch(tune_args(sys.argv), min(max_nodes or 1, part.max_nodes),
                                part.cores_per_node, part, f"hpcds1mpi-tune-{workload}"[:60],
                                max(5, int((time_budget or budget * (timeout + 30)) / 60) + 5),
                                cluster=resolve_cluster(cluster_file, partition), force=force)
        click.echo(f"wrote {script}; submitted tune as Slurm job {job_id}")
        return

    in_process = trials.launched_under_mpi()
    if in_process and program is not None:
        raise ConfigError("--program is launched once per configuration: run tune itself "
                          "without mpiexec/srun, inside the allocation")
    if in_process:  # the ranks are the launched tune's (s44)
        from hpcds1mpi.launch.preflight import refuse_unused_plugin

        refuse_unused_plugin(mpi_plugin, "the launcher that started tune")
    if not in_process:  # a stop says what is kept; the trial's launch ends too (s33 tester C6)
        from hpcds1mpi.commands.tune_stop import stop_cleanly

        click.get_current_context().call_on_close(stop_cleanly(out))
    world = layout = None
    if in_process:
        from hpcds1mpi.launch.own_launcher import check_started_by
        from hpcds1mpi.runtime.mpi import node_layout, world as world_comm

        check_started_by()  # before MPI_Init: under another MPI's launcher it aborts
        layout = node_layout(world := world_comm())
        kind = "in-process"
    else:
        from hpcds1mpi.launch import launcher_discovery

        kind = (choice.launcher if choice is not None else None) or launcher or (
            "srun" if launcher_discovery.in_slurm() else None)
        if kind is None:  # inside a PBS/LSF/... job it is in one, whose nodes are unread (X4)
            job = foreign_job()
            raise LaunchError("tune runs configurations for real: " + (
                f"inside {job.named()} only this machine is known (a Slurm allocation's nodes "
                "are read, no other job's): pass --launcher mpiexec to tune on this machine" + (
                    "" if program else ", or launch tune with `mpiexec -n N hpcds1mpi tune "
                    "...` to tune on the launched ranks' nodes") if job else
                "run it inside an allocation (salloc/sbatch, or --submit), launch it with "
                "`mpiexec -n N hpcds1mpi tune ...`, or pass --launcher mpiexec"))
        if kind == "srun":
            import shutil

            if shutil.which("srun") is None:
                raise LaunchError("srun not found on PATH inside the allocation; pass "
                                  "--launcher mpiexec")
            if program is None and mpi_plugin is not None:  # a program's: its pre-flight
                from hpcds1mpi.commands.tune_launch_choice import check_kernel_plugin

                check_kernel_plugin(mpi_plugin)
        elif choice is None or choice.mpiexec is None:
            launcher_discovery.mpiexec_path()  # LaunchError when there is none
        from hpcds1mpi.commands.tune_launch_choice import refuse_mpi_under_chosen_launcher

        # s44: had been dropped
        refuse_mpi_under_chosen_launcher(mpi_plugin, launcher, choice, kind)
        if choice is not None:
            import dataclasses

            choice = dataclasses.replace(choice, launcher=kind)

    rank = world.Get_rank() if world is not None else 0
    settings = trials.RunSettings(workload, size, min_time=min_time, min_repeats=min_repeats,
                                  max_repeats=max_repeats, timeout=timeout, program=program)
    if in_process:
        runner = trials.InProcessRunner(settings, out, part, world)
        if rank != 0:
            runner.serve()
            return
    try:
        alloc_nodes, cores = tune_space.allocation(part, kind, layout)
        if layout is not None:
            cores = min(cores, min(layout.node_sizes))  # ranks, not cores, bound a sub-comm
        capped = tune_space.nodes_note(max_nodes, alloc_nodes, kind, part.max_nodes)
        if capped:  # said: --max-nodes is a most (s35 fixer L3)
            click.echo(f"tune: {capped}", err=True)
        alloc_nodes = min(alloc_nodes, max_nodes or alloc_nodes)
        if kind not in ("srun", "in-process") and (job := foreign_job()):  # s35 tester X4
            click.echo(f"tune: inside {job.named()} {kind} runs on this machine: {alloc_nodes} "
                       f"node(s) x {cores} cores are tuned, not the job's nodes", err=True)
        offer = None
        if bundle is not None and kernel is None:  # a program: only its measured levels
            from hpcds1mpi.decide.offer import guard_offered, runtime_note, tune_offer

            # recommend's offer: what it offers beyond the measured, tune measures (s48 Q6)
            offer = tune_offer(bundle, workload, size, model_part, model_dir)
            for line in offer.left_out:
                click.echo(f"tune: {'' if guard_offered(line) else 'left out '}{line}",
                           err=True)
            note = runtime_note(bundle, workload)
            if note is not None:  # what System 1's predictions (the start) are in
                click.echo(f"tune: model {note['line']}", err=True)
        space = tune_space.workload_space(part, kernel, max_nodes=alloc_nodes,
                                          cores_per_node=cores, offer=offer, program=program)
        # (its runs at 2 threads would differ from 1 by noise alone)
        space, one_thread = tune_space.one_thread_only(space, program)
        if layout is not None:
            # In-process runs need ranks, not cores: ranks per node up to what was launched.
            space = tune_space.Space([c for c in space.configs
                                   if c.ranks_per_node <= min(layout.node_sizes)])
        predictions = verdict = None
        start_from = "default"
        if bundle is not None:
            predictions = tune_predictions.model_predictions(
                bundle, space, model_part, workload, size,
                "energy" if objective == "energy" else "time")
            if predictions is None:
                click.echo(f"tune: the model never measured {workload!r}; searching without it "
                           "(measure, then `hpcds1mpi learn`)", err=True)
        user = dict(nodes=nodes, ranks_per_node=ranks_per_node, threads=threads,
                    device=device, precision=precision)
        if any(v is not None for v in user.values()):
            start = tune_space.start_config(space, user, nodes=alloc_nodes, cores=cores, offer=offer,
                                            partition=part, kernel=kernel, why=one_thread, launcher=kind)
            start_from = "your settings"
        elif predictions is not None and tune_predictions.system1_start(space, predictions) is not None:
            start = tune_predictions.system1_start(space, predictions)
            start_from = "System 1's pick"
            verdict = "; ".join(note for note in (  # a best prediction it declines: M9
                tune_predictions.declined_note(space, predictions),
                tune_predictions.verdict_note(bundle, workload, size, model_part, model_dir))
                if note)
        else:
            start = tune_space.default_config(space, cores)

        if kind != "in-process":
            evaluate = trials.LaunchRunner(settings, out, part, kind, cluster_file, partition,
                                           choice=choice, readings=readings, workdir=workdir,
                                           setup=setup, mpi=mpi_plugin,
                                           accept_edited_inputs=accept_edited_inputs)
            if program is not None and (note := evaluate.edited_inputs(space.configs)):
                log(note)  # refused or said before any launch, as sweep's --resume (s47 K7)
            if choice is not None:  # before any trial: as the sweep's, at the most ranks
                from hpcds1mpi.commands.tune_launch_choice import preflight_trials

                evaluate = preflight_trials(choice, program, size, start, space, part,
                                            workdir, log, evaluate)
        else:
            evaluate = runner

        log(f"{workload} size {size}, objective {objective}, {kind} runs, "
            f"{space.allowed_text(alloc_nodes, cores)}; "
            f"start from {start_from}: {start.label()}" + (
                "; fp64 only: the command takes no {precision}"
                if kernel is None and offer is None and tune_space.program_precisions(program)
                else "") + (f"; {one_thread}" if one_thread else "")
            + (f"; {verdict}" if verdict else ""))  # recommend's escalate said: s31 tester Q3
        if objective == "front":
            result = tune_front(space, start, evaluate, budget=budget, seed=seed, log=log)
        else:
            result = system2.tune(space, start, evaluate, objective=objective,
                                  predictions=predictions, budget=budget,
                                  time_budget_s=time_budget, noise_floor=noise_floor, log=log)
    except HpcdsError:
        if in_process:
            runner.close()
        raise
    if in_process:
        runner.close()
    data = {**result.as_dict(), "workload": workload, "size": size, "telemetry": out,
            "start_from": start_from, "mode": kind}
    if as_json:
        click.echo(json.dumps(data, indent=1))
        return
    from hpcds1mpi.decide.tune_report import report_lines

    if bundle is not None and os.path.exists(out):  # learn's rule, not only the hardware's
        from hpcds1mpi.measure.same_machine import unlearnable_machines  # (s33 tester B6)

        if unlearnable_machines([out], bundle.machine_ids, bundle.partitions):
            other_model = model_dir  # another CPU or MPI: learn refuses, train is the way
    lines, found = report_lines(result, out, objective, other_model,
                                model_dir=model_dir if bundle is not None else None)
    click.echo("\n".join(lines))
    if not found:
        raise SystemExit(1)
