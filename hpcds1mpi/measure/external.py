"""External-program mode: sweep a user's own MPI program, launched once per repeat.

Each configuration is launched as ``<launcher tokens> <program>`` (:mod:`~hpcds1mpi.launch.
launchers`) with the program rule of :mod:`hpcds1mpi.launch.program`: the placeholders ``{size}
{nodes} {ranks_per_node} {ranks} {threads} {precision} {device}`` filled by replacement (other
braces stay literal) and the environment the launcher's batch script would export, so the
measured job is the one a recommended script submits (its plan: :mod:`.external_plan`).

**Before anything runs**: configurations on more nodes than the launcher reaches from here are
refused (:mod:`.reachable_nodes`); the program is checked (:mod:`hpcds1mpi.launch.preflight`:
found, executable), its MPI read (ELF, or its interpreter's mpi4py) and a launcher of another MPI
family refused with one naming a launcher that can; with more than one rank a 2-rank probe
proves the launcher starts one job; where the node count is not told, one rank per node is
launched to see that the ranks land on as many hosts (:func:`.reachable_nodes.check_nodes_landed`).

**Measured honestly**: like a kernel, each configuration is launched ``warmup`` times
unrecorded, then repeated until ``min_repeats`` launches and ``min_time`` seconds are reached
(at most ``max_repeats``; defaults 3, 1 s, 10: a short program gets at least 3 repeats), so
``noise`` = (max - min) / median comes from the repeats (NaN with one). ``runtime_s`` is the
median launch wall time, or with ``--time-regex`` the program's own reported time, while the
wall time stays in ``elapsed_s`` (median) and ``measured_s`` (sum); the telemetry's ``launch``
attribute says which (:mod:`hpcds1mpi.measure.readings`). ``--ranks-regex`` checks every
launch's own report of its rank count. Each exit is classified (:mod:`.program_launch`);
``--fail-regex`` makes a launch that exited 0 ``failed``, as does its saying that a file of its
command line is missing or already there (:mod:`.argument_files`); a repeat that collided on
what the first launch left in the folder runs again in a fresh one (:mod:`.repeat_folders`); an
``ok`` run whose program said it did not converge is noted once per configuration
(:mod:`.convergence`). ``--setup`` prepares each configuration's folder once, before its first
launch (:mod:`.setup_command`).
A ``device=gpu`` configuration on a partition without GPUs is recorded ``unsupported``
(not launched), as a kernel sweep records it. ``--resume`` refuses a file measured with
another ``--command``, other readings or another ``--setup`` (:func:`check_resumed`).

The program is started in its own session (process group). A launch that cannot start (the
program or the launcher missing or not executable) is an error of the sweep, never a
measurement: the program is checked before anything launches (exit 2), a launcher that fails to
start is a :class:`~hpcds1mpi.errors.LaunchError` (exit 1). SIGINT / SIGTERM of the sweep kill
the program's whole process group, record the run ``interrupted`` (``--resume`` runs it again)
and end the sweep with :class:`~hpcds1mpi.errors.SweepInterrupted` (exit 1); so does a launch
that failed because the sweep's Slurm allocation ended (:mod:`.allocation_state`). The ranks'
memory and CPU time are theirs, never the launcher's (:mod:`.ranks_usage`).
"""

from __future__ import annotations

import dataclasses
import math
import os
import shlex
import signal
import threading
import time
from pathlib import Path

from hpcds1mpi.config import OK, UNINFORMATIVE_STATUSES
from hpcds1mpi.errors import LaunchError, SweepInterrupted
from hpcds1mpi.launch.program_folder import SWEPT_IN
from hpcds1mpi.launch.program_path import PROGRAM_PATH, resolved
from hpcds1mpi.launch.program import placeholder_values
from hpcds1mpi.launch.srun_overcommit import OVERCOMMITTED
from hpcds1mpi.measure.driver import say_oversubscribed, settled
from hpcds1mpi.measure.argument_files import argument_problem, existing_arguments
from hpcds1mpi.measure.crash_cause import crash_cause
from hpcds1mpi.measure.external_plan import format_command
from hpcds1mpi.measure.external_rows import cpu_for_power, row_values
from hpcds1mpi.measure.fom_miss import fom_miss_problem
from hpcds1mpi.measure.input_stamps import INPUTS, check_inputs, input_stamps
from hpcds1mpi.measure.external_resume import check_resumed
from hpcds1mpi.measure.plan import RunSpec, SweepPlan
from hpcds1mpi.measure.program_startable import check_program  # importable from here too
from hpcds1mpi.measure.printable import clipped
from hpcds1mpi.measure.launcher_refusal import refusal_error
from hpcds1mpi.measure.program_launch import (classify, launch_once, launch_problem,
                                              refused_by_launcher)
from hpcds1mpi.measure.progress import Progress
from hpcds1mpi.measure.rank_copies import check_rank_copies
from hpcds1mpi.measure.rank_demand import refused_rank_count
from hpcds1mpi.measure.rank_peak import wrapped, wrapping
from hpcds1mpi.measure.rank_times import take_slowest
from hpcds1mpi.measure.reachable_nodes import check_nodes_landed, check_nodes_reachable
from hpcds1mpi.measure.repeat_folders import RepeatFolders, outlier_note
from hpcds1mpi.measure.resumed_machine import adopt_earlier_record
from hpcds1mpi.measure.setup_command import failed_in_setup, set_up
from hpcds1mpi.measure.stopped_sweep import Terminated, on_sigterm, stop_interrupted
from hpcds1mpi.measure.thread_use import busy_per_rank, thread_notes
from hpcds1mpi.measure.unwritten_output import unwritten_problem
from hpcds1mpi.measure.workdirs import made_folders, own_folders, shared_folder_note, workdir_of


class _OutWritten(Exception):
    """A launch wrote into the telemetry file (its message: how)."""


def _check_out(writer) -> None:
    """Raise :class:`_OutWritten` where something else wrote the writer's file since it
    last did (s33 tester B1)."""
    if how := writer.written_by_another():
        raise _OutWritten(how)


def _measure(tokens: list[str], env: dict, cwd: str | None, plan: SweepPlan, readings,
             spec: RunSpec, program: str = "", accounting=None, check=None,
             own_folder: bool = False) -> dict:
    """Warm-up launches, then repeats until ``min_repeats`` and ``min_time`` (at most
    ``max_repeats``); stops at the first launch that is not ``ok`` (its status is the run's).
    ``check``: called after each launch (it raises to stop the sweep). ``own_folder``: the
    configuration has a ``--workdir`` folder of its own.

    Raises:
        LaunchError: the launcher could not start the program, or ``--ranks-regex`` says a
            launch's ranks were not one job.
    """
    from hpcds1mpi.measure.convergence import convergence_warning

    values = placeholder_values(spec.config, spec.size)
    walls, times, foms, cpu, rss, rss_source = [], [], [], 0.0, float("nan"), ""
    texts = []  # the program's times as printed, warm-ups too: its timer's resolution (s37 G1)
    status, error, code, warning = OK, "", 0, ("", "")
    args = format_command(dict(spec.extra)["command"], spec)[1:]
    folders = RepeatFolders(cwd, readings.say, f"{spec.workload} size {spec.size} "
                            f"{spec.config.label()}", own_folder, args)  # s38 A2, A3; s48 Q2, RY2
    attempt = -1
    while (attempt := attempt + 1) < plan.warmup + plan.max_repeats:
        with folders.folder() as where, readings.output_lock(  # F3, s33 D6: one launch at a
                out_path := readings.output_path(where, values)):  # time per file
            mark, existed = readings.mark(out_path), existing_arguments(args, where)
            result = launch_once(tokens, env, plan.timeout, where, scan=lambda streams, mark=mark:
                                 readings.scan(streams, out_path, mark), program=program,
                                 ranks=spec.config.ranks, accounting=accounting,
                                 ranks_per_node=spec.config.ranks_per_node)  # s29 tester A4
        if check is not None:  # the program wrote the telemetry file (s33 tester B1)
            check()
        if refused := refusal_error(result, tokens):  # never the program's run (M3, s48 O2)
            raise LaunchError(refused)
        problem = launch_problem(result)
        if problem:
            raise LaunchError(f"the launcher could not start the program ({problem}); "
                              "nothing was recorded for this configuration: check "
                              "--command and --mpiexec")
        check_rank_copies(result, f"{spec.workload} size {spec.size} {spec.config.label()}")
        status, error = crash_cause(result, *classify(result, plan.timeout))  # s38 A4
        status, error = refused_rank_count(result, status, error)  # s43 tester G1
        code = result["exit_code"]
        found = result["found"]
        if status == OK and (said := argument_problem(result["stdout"], result["stderr"], args,
                                                      where, existed)):
            status, error = "failed", said  # s38 tester A7
        if status == OK:
            readings.check_ranks(found, spec.config.ranks,
                                 f"{spec.workload} size {spec.size} {spec.config.label()}",
                                 tokens, (result["stdout"], result["stderr"]))
            take_slowest(readings, found, spec.config.ranks,  # its slowest rank's (s48 O6, Q8)
                         (result["stdout"], result["stderr"]), probed=plan.max_ranks > 1)
            if why := (readings.fail_problem(found) or  # s43 G6: a file it never wrote
                       unwritten_problem(readings, found, out_path, mark, where) or
                       readings.time_problem(found, result["wall_s"], spec.config.ranks,
                                            spec.config.threads, folders.label) or
                       fom_miss_problem(readings, found, (result["stdout"],  # s44 M3
                                                          result["stderr"]))):
                status, error = "failed", why
        if folders.again(result, status, error):  # collided on earlier outputs: again
            attempt -= 1
            continue
        readings.stop_over_wall(found)  # the regex's reading, no failure of it (s46 H2)
        error = folders.reason(error)
        readings.note_once(found, status, error, result["wall_s"], texts,  # once a sweep (A4)
                           (folders.label, attempt >= plan.warmup),  # s43 tester G3
                           (spec.config.ranks, (result["stdout"], result["stderr"])))  # s46 G5
        if status == OK and readings.time is not None and found.get("time_text") is not None:
            texts.append(found["time_text"])
        if attempt < plan.warmup and status == OK:
            continue
        walls.append(result["wall_s"])
        cpu += result["cpu_s"]  # NaN once one launch's ranks were not measured
        if math.isnan(rss) or result["rss_mb"] > rss:
            rss, rss_source = result["rss_mb"], result["rss_source"]
        if status != OK:
            break
        if not warning[0]:  # said once per configuration, not per repeat
            warning = convergence_warning(result["stdout"], result["stderr"])
        times.append(found["time"] if readings.time is not None else result["wall_s"])
        foms.append(found["fom"])
        if len(times) >= plan.min_repeats and sum(walls) >= plan.min_time:
            break
    return {"status": status, "error": folders.kept(status, error), "exit_code": code,
            "walls": walls, "times": times, "time_texts": texts, "foms": foms, "cpu_s": cpu,
            "rss_mb": rss, "rss_source": rss_source, "warning": warning}


def run_external(plan: SweepPlan, out: str, partition, *, resume: bool = False,
                 fom_regex: str | None = None, launcher: str | None = None,
                 progress: bool = True, mpi: str = "pmi2", choice=None, readings=None,
                 workdir: str | None = None, say=None, setup: str | None = None,
                 accept_edited_inputs: bool | None = False) -> dict:
    """Launch every configuration of ``plan`` (repeated) and record it in ``out``.

    Runs already in ``out`` are skipped (failures said), except interrupted and setup-failed.

    Args:
        choice: a :class:`~hpcds1mpi.launch.preflight.LaunchChoice` (else from ``launcher`` /
            ``mpi``).
        readings: a :class:`~hpcds1mpi.measure.readings.Readings` (else ``fom_regex`` only).
        workdir: the folder each configuration runs in (placeholders filled); must exist.
        setup: a shell command run once per configuration before its first launch, in its
            folder (:mod:`~hpcds1mpi.measure.setup_command`); None: none.
        say: called with each line the pre-flight finds (the program's MPI, the probe).
        accept_edited_inputs: resume although an input was edited (:mod:`.input_stamps`);
            None where the caller has no such flag (its refusal names none).

    Raises:
        ConfigError: the program cannot be started, a workdir is missing (checked before
            anything launches).
        LaunchError: the launcher cannot start the program as one job (before anything runs),
            or could not start it (nothing recorded for that run).
        SweepInterrupted: SIGINT / SIGTERM; the program's process group is killed first and the
            run recorded ``interrupted``; every finished run is kept.
    """
    import hashlib
    import json
    import socket

    from hpcds1mpi.launch import preflight
    from hpcds1mpi.launch.rank_proof import (ONE_RANK_ONLY, one_rank_only, swept_program,
                                             unproven_ranks)
    from hpcds1mpi.launch.self_launching import check_self_launching, ranks_in_folder
    from hpcds1mpi.launch.rank_program import rank_program
    from hpcds1mpi.measure import meters
    from hpcds1mpi.measure.allocation_state import Allocation
    from hpcds1mpi.measure.convergence import convergence_note
    from hpcds1mpi.measure.kept_failures import say_kept_failures
    from hpcds1mpi.measure.slurm_accounting import StepAccounting
    from hpcds1mpi.measure.program_mpi import program_mpi_library, threading_note
    from hpcds1mpi.measure.readings import Readings
    from hpcds1mpi.measure.rows import base_row
    from hpcds1mpi.measure.program_writes_out import refuse_named_out, stop_overwritten
    from hpcds1mpi.records import telemetry
    from hpcds1mpi.records.telemetry.kept_rows import RESUME_FIX, refuse_broken_rows
    from hpcds1mpi.records.telemetry.other_programs import refuse_foreign

    readings = readings or Readings.of(fom_regex=fom_regex)
    readings.say = readings.say or say  # F3, s33 D6-D9: the readings' notes
    choice = choice or preflight.LaunchChoice(launcher, mpi)
    launch = choice.launcher_for(partition.usable_cores_per_node)  # the allocation's (P4)
    check_nodes_reachable(plan, launch)  # s29 tester A8: every run failed, after the probe
    with made_folders(workdir, plan.runs, bool(setup), say):  # gone if refused (s35 A5)
        for spec in plan.runs:
            readings.check_output_path(readings.output_path(
                workdir_of(workdir, spec), placeholder_values(spec.config, spec.size)))
        refuse_named_out(out, plan, workdir, readings)  # s33 tester B1: before anything runs
        if os.path.isfile(out):  # a program's own HDF5: said with what to do, before the probe
            refuse_foreign(Path(out))
        stamps = input_stamps(plan, workdir)  # before any launch (the probe) writes
        if resume:
            check_resumed(out, plan.source.get("command", ""), readings,
                          plan.source.get("label", "external"), setup=setup,
                          launched=choice.describe(launch))
            if (note := check_inputs(out, stamps, accept_edited_inputs)) and say:
                say(note)  # s47 tester K7
        first = plan.runs[0]
        first_env = {**os.environ, **launch.environment(first.config)}
        first_tokens = format_command(dict(first.extra)["command"], first)
        # The program the ranks run, past its exec-wrapper prefix, on the PATH the launcher and
        # its options (Open MPI's --prefix) give them: read once, for every check and the
        # fingerprint (s31 review M3: the fingerprint had read it without the launcher's options).
        ranks = rank_program(first_tokens, first_env, getattr(launch, "command", ""), launch.args)
        cwd = workdir_of(workdir, first)  # where the program is read too (s33 tester D3)
        check_program(first_tokens, first_env, cwd, setup=setup)
        check_self_launching(ranks[0] if ranks else first_tokens, first_env, cwd, max(
            spec.config.ranks_per_node for spec in plan.runs))  # s33 tester D4, D5
        for line in preflight.check(launch, choice, first_tokens, first_env, plan.max_ranks,
                                    ranks, cwd):
            if say:
                say(line)
        for line in check_nodes_landed(plan, launch,
                                       cwd_of=lambda spec: workdir_of(workdir, spec)):
            if say:  # the node count not told: where the ranks land, asked (s35 tester X2)
                say(line)
        # Its MPI, read once (ldd, or its interpreter asked about mpi4py): nothing proves its
        # ranks are one job but --ranks-regex, which needs no reading.
        program = None if readings.ranks is not None else swept_program(
            first_tokens, first_env, launch, ranks, cwd)
        # a note, or a refusal of ranks of a program without MPI (s33 tester D2)
        note = unproven_ranks(program, plan.max_ranks, False) if program is not None else ""
        if say and note:
            say(note)
        if say and (note := threading_note(dict(first.extra)["command"], first_env,
                                           {spec.config.threads for spec in plan.runs})):
            say(note)  # threads above 1 for a program that cannot use them
        if say:  # more ranks x threads than cores: said as for kernels (s27 tester Q, 8)
            say_oversubscribed(plan, list(range(len(plan.runs))), partition.usable_cores_per_node,
                               0, {}, *_oversubscribed_as(launch))
        if say and (note := shared_folder_note(workdir, plan.runs)):  # scratch files collide
            say(note)
        said, at_one = set(), {}  # at_one: cores busy per rank at 1 thread, times, per layout
        mpi_library = program_mpi_library(first_tokens, first_env, getattr(
            launch, "command", "srun"), launch.args, ranks_in_folder(ranks, cwd))
        # why its ranks cannot be one job, kept: recommend offers no more (s39 tester A2)
        alone = one_rank_only(program, False) if program is not None else ""
        fp = meters.fingerprint(partition, hostnames=[socket.gethostname()],
                                mpi_library=mpi_library, gpu_aware=False)
        if resume:  # before the writer touches the file
            meters.refuse_launcher_fingerprint(out, fp)
        attrs = {"plan": json.dumps(plan.source), INPUTS: json.dumps(stamps),
                 "launch": json.dumps({
            **choice.describe(launch), **readings.describe(), "workdir": workdir or "",
            "setup": setup or "", **({ONE_RANK_ONLY: alone} if alone else {}),
            # where the program ran: --workdir is relative to it, and without --workdir the
            # command's relative paths were read from it (s37 tester G3: a script run from
            # another folder lost them)
            SWEPT_IN: os.getcwd(),
            "repeats": [plan.min_repeats, plan.max_repeats], "min_time": plan.min_time,
            # the file on the ranks' PATH (Open MPI's prefix first), not this one's (s47 K8)
            "warmup": plan.warmup, PROGRAM_PATH: resolved(
                first_tokens, ranks[1] if ranks else first_env)})}
        writer = telemetry.TelemetryWriter(out, resume=resume, attrs=attrs,
                                           snapshot_every_s=plan.snapshot_every)
        writer.open()
    previous = signal.getsignal(signal.SIGTERM)
    in_main = threading.current_thread() is threading.main_thread()
    if in_main:
        signal.signal(signal.SIGTERM, on_sigterm)
    try:
        if resume and (note := adopt_earlier_record(writer, fp, out)) and say:
            say(note)
        writer.machine(fp)
        machine_id = fp["machine_id"]
        sweep_id = hashlib.sha1(json.dumps(plan.source, sort_keys=True).encode()).hexdigest()[:12]
        done_keys = {k for k, r in writer.store.runs.items() if settled(r, plan)  # its program
                     and not failed_in_setup(r) and not refused_by_launcher(r)}  # never ran
        todo = [s for s in plan.runs if (machine_id, s.run_id) not in done_keys]
        say_kept_failures(say if resume else None, writer.store, plan, machine_id, done_keys, out)
        # a row merge and train refuse is no run done (s37 tester P7): refused, not kept
        refuse_broken_rows(writer.store, out, RESUME_FIX,
                           {(machine_id, spec.run_id) for spec in todo})
        model = meters.power_model(partition)
        # Asked once: a stale SLURM_JOB_ID is ignored, never blamed for the program's failure.
        allocation = Allocation.at_start(say=say)
        accounting = StepAccounting.here(allocation.job_id, say=say) if allocation else None
        if accounting is not None:  # one call: the preflight's steps (srun true, the probe)
            accounting.mark()  # may share the first launch's second; they are no launch's
        wrap = wrapping(launch.name, allocation is not None,
                        max((s.config.nodes for s in todo), default=1), say)
        bar = Progress(len(todo), enabled=progress)
        counts: dict[str, int] = {}
        sweep_start = time.perf_counter()
        measured, setup_failed = 0.0, 0
        own = own_folders(workdir, plan.runs)  # the plan's, once: not each launch's to work out
        for done, spec in enumerate(todo):
            row = base_row(spec, machine_id, partition, sweep_id)
            program = dict(spec.extra)["command"]
            tokens = launch.tokens(spec.config) + format_command(program, spec)
            # launched so: under srun, or any launcher in an allocation (an mpirun's daemons
            # start through srun), each rank under its peak's wrapper (recorded without)
            launched = wrapped(launch.name if wrap else "", launch.tokens(spec.config),
                               format_command(program, spec), wrap and allocation is not None)
            notes = launch.run_notes(spec.config)
            for note in notes:
                if say and note not in said:
                    say(note)
                    said.add(note)
            row.update(kind="external", command=shlex.join(tokens), hostnames=socket.gethostname(),
                       binding=launch.binding(spec.config) + (
                           "; " + "; ".join(notes) if notes else ""))
            row["attempt"] = writer.start(row)
            row["started_at"] = time.time()
            if spec.config.device == "gpu" and partition.gpus_per_node < 1:
                row.update(status="unsupported", finished_at=time.time(),
                           error=f"partition {partition.name!r} has no GPUs, so a gpu run "
                                 "cannot be measured; not launched (sweep --devices cpu "
                                 "here, or gpu on a GPU partition)")
                writer.record(row, {})
                counts["unsupported"] = counts.get("unsupported", 0) + 1
                bar.update(done + 1, f"({spec.workload} {spec.size} {spec.config.label()})")
                continue
            env = dict(os.environ)
            env.update(launch.environment(spec.config))
            try:
                failed, row["setup_s"] = set_up(setup, spec, env, workdir_of(workdir, spec),
                                                plan.timeout)
                m = failed or _measure(launched, env, workdir_of(workdir, spec), plan, readings,
                                       spec, format_command(program, spec)[0], accounting,
                                       check=lambda: _check_out(writer), own_folder=own)
                _check_out(writer)  # its --setup, or a launch's check
            except _OutWritten as exc:
                stop_overwritten(writer, row, spec, out, str(exc))
            except (KeyboardInterrupt, Terminated) as exc:
                why = "SIGINT (Ctrl-C)" if isinstance(exc, KeyboardInterrupt) else "SIGTERM"
                stop_interrupted(writer, row, spec, out, f"the sweep was stopped by {why}",
                                  "its program was killed", f"sweep stopped by {why}")
            ended = allocation.end() if m["status"] != OK and allocation is not None else ""
            if ended:  # not the program's failure: the allocation seen running at its start ended
                stop_interrupted(writer, row, spec, out, ended, f"its launch failed with it "
                                  f"({clipped(m['error'], 120)})", ended,
                                  "sweep again with --resume inside a new allocation")
            row.update(row_values(m), finished_at=time.time())
            wall = row.get("elapsed_s", 0.0)
            if row["status"] not in UNINFORMATIVE_STATUSES and wall > 0:  # it drew power
                cpu_s, busy_note = cpu_for_power(m, spec.config, wall)
                watts = meters.modelled_power(model, nodes=spec.config.nodes, window_s=wall,
                                               cpu_s=cpu_s)
                run_s = row.get("runtime_s", wall)
                row.update(avg_power_w=watts, energy_j=watts * run_s, energy_source="modelled",
                           power_model=model.describe() + busy_note)
            writer.record(row, {"repeats": [
                {"machine_id": machine_id, "run_id": spec.run_id, "repeat": i, "wall_s": t}
                for i, t in enumerate(m["times"] if row["status"] == OK else m["walls"])]})
            counts[row["status"]] = counts.get(row["status"], 0) + 1
            setup_failed += failed is not None
            measured += row.get("measured_s", 0.0)
            if say and row["status"] != OK and row["error"] not in said:  # each reason once
                said.add(row["error"])  # (a misspelled input: "failed 6" had said no why)
                say(f"{spec.workload} size {spec.size} {spec.config.label()}: "
                    f"{row['status']}: {row['error']}")
            twin = (spec.workload, spec.size, dataclasses.replace(spec.config, threads=1))
            if row["status"] == OK and spec.config.threads == 1:  # its 2+ threads' yardstick
                at_one[twin] = (busy_per_rank(m["cpu_s"], sum(m["walls"]), spec.config.ranks),
                                m["times"])  # and its times: a level slower in each (s48 O5)
            if say and row["status"] == OK:  # each once a sweep (s41 tester A3, s47 L4)
                for note in thread_notes(m, spec.config, f"{spec.workload} size {spec.size} "
                                         f"{spec.config.label()}", said,
                                         at_one.get(twin, (math.nan, ())),
                                         partition.usable_cores_per_node, program):
                    say(note)
            if say and row["status"] == OK and m["warning"][0]:  # no column: said, not stored
                say(convergence_note(f"{spec.workload} size {spec.size} "
                                     f"{spec.config.label()}", *m["warning"]))
            if say and row["status"] == OK and (note := outlier_note(  # s42 tester E2; the
                    f"{spec.workload} size {spec.size} {spec.config.label()}",  # times
                    m["times"])):  # recorded: a cold first launch's wall is no outlier (s44)
                say(note)
            bar.update(done + 1, f"({spec.workload} {spec.size} {spec.config.label()})")
        return {"configs": len(todo), "statuses": counts,
                "sweep_s": time.perf_counter() - sweep_start, "measured_s": measured,
                "skipped": len(plan.runs) - len(todo), "setup_failed": setup_failed}
    except (KeyboardInterrupt, Terminated) as exc:  # between two launches
        why = "SIGINT (Ctrl-C)" if isinstance(exc, KeyboardInterrupt) else "SIGTERM"
        raise SweepInterrupted(f"sweep stopped by {why}; every finished run is kept in {out}; "
                               "rerun with --resume") from None
    finally:
        if in_main:
            signal.signal(signal.SIGTERM, previous)
        writer.close()


def _oversubscribed_as(launch) -> list[str]:
    """How ranks overfilling a node run: srun overcommits, Intel MPI's mpiexec pins them (s35
    tester I3c: "unbound" was said), others leave them unbound (the default words)."""
    pinned = getattr(launch, "oversubscribed_as", lambda: None)()
    return [OVERCOMMITTED] if launch.name == "srun" else [pinned] if pinned else []

