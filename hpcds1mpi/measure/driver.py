"""The in-process sweep driver: every rank of a communicator runs the same plan.

It runs under ``mpiexec -n P hpcds1mpi sweep ...`` (or srun); the command layer passes the
world communicator in. Every rank parses the same plan; the node layout comes from
:func:`hpcds1mpi.runtime.mpi.node_layout`; each (nodes, ranks-per-node) choice gets a
sub-communicator of the first ranks of the first nodes, and ranks outside it sleep in a polled
``Ibarrier`` (so they do not steal cores by busy-waiting). Rank 0 is in every sub-communicator
and is the only writer of the telemetry file (:mod:`hpcds1mpi.records.telemetry`).

A run that exceeds ``timeout`` cannot be interrupted inside an MPI call, so rank 0's watchdog
journals it as ``timeout`` and aborts the job (:mod:`hpcds1mpi.measure.watchdog`); the
supervisor (:mod:`hpcds1mpi.measure.supervise`) relaunches with ``--resume`` until the plan is
done.
"""

from __future__ import annotations

import json
import os
import sys
import time

from hpcds1mpi.errors import ConfigError
from hpcds1mpi.measure.plan import RunSpec, SweepPlan
from hpcds1mpi.measure.progress import Progress
from hpcds1mpi.measure.resumed_machine import say_earlier_record
from hpcds1mpi.measure.resumed_runs import retried_note, settled  # settled: importable here too
from hpcds1mpi.measure.rows import base_row, finish_row
from hpcds1mpi.measure.supervise import COMPLETE_ATTR, SUPERVISED_ENV, SWEEP_ERROR_EXIT
from hpcds1mpi.measure.sweep_abort import abort_sweep, sigterm_interrupts, sweep_storage_error
from hpcds1mpi.measure.watchdog import GuardedKernel, Watchdog
from hpcds1mpi.runtime.mpi import NodeLayout, node_layout, sleepy_barrier


def check_layout(plan: SweepPlan, layout: NodeLayout, size: int) -> None:
    """Check that the launch holds every (nodes, ranks per node) choice of the plan.

    Args:
        plan: the sweep plan.
        layout: this rank's :class:`~hpcds1mpi.runtime.mpi.NodeLayout` in the communicator.
        size: ranks in the communicator.

    Raises:
        ConfigError: the plan needs more ranks or nodes; the message says how many to launch.
    """
    for nodes, rpn in plan.layouts():
        if nodes > layout.nodes or rpn > layout.ranks_available(nodes):
            need = max(r.config.ranks for r in plan.runs)
            need_nodes = max(n for n, _ in plan.layouts())
            need_rpn = max(r for _, r in plan.layouts())
            if need_nodes > 1:
                raise ConfigError(
                    f"the plan needs {need_nodes} nodes x {need_rpn} ranks per node but "
                    f"{size} ranks on {layout.nodes} node(s) were launched; launch "
                    f"{need_nodes * need_rpn} ranks over {need_nodes} nodes")
            raise ConfigError(f"the plan needs {need} ranks on one node but {size} were "
                              f"launched; launch with mpiexec -n {need}")


def run_inprocess(comm, plan: SweepPlan, out: str, partition, *, resume: bool = False,
                  progress: bool = True) -> dict:
    """Run ``plan`` on the ranks of ``comm`` and record every run in ``out``; collective.

    Runs already recorded in ``out`` (with ``resume``) are skipped, crashed ones retried when
    the plan says so. A bug or an interrupt on any rank aborts ``comm``, so no rank is left
    waiting in a collective.

    Args:
        comm: the communicator to sweep on (the world communicator from
            :func:`hpcds1mpi.runtime.mpi.world`); its rank 0 writes the telemetry.
        plan: the sweep plan (:func:`hpcds1mpi.measure.plan.build_plan`), the same on every rank.
        out: the telemetry file (.h5).
        partition: the :class:`~hpcds1mpi.cluster.Partition` swept on.
        resume: continue an existing ``out`` (else it must not exist).
        progress: draw the progress line on rank 0's stderr.

    Returns:
        On rank 0 a summary: ``configs``, ``statuses`` (count per status), ``sweep_s``,
        ``measured_s``, ``journal_s``, ``snapshot_s``, ``snapshots``, ``journal_writes``,
        ``skipped``; an empty dict on the other ranks.

    Raises:
        ConfigError: (every rank) the launch is too small for the plan.
        TelemetryError: (rank 0; SystemExit(2) on the others) ``out`` cannot be written;
            LockError when another process writes it.
    """
    from hpcds1mpi.measure import meters
    from hpcds1mpi.measure.resumed_options import fill_recorded_options
    from hpcds1mpi.records import telemetry
    from hpcds1mpi.records.telemetry.kept_rows import RESUME_FIX, refuse_broken_rows
    from hpcds1mpi.runtime import binding
    from hpcds1mpi.runtime.mpi import gpu_aware, library_version

    rank = comm.Get_rank()
    layout = node_layout(comm)
    check_layout(plan, layout, comm.Get_size())
    own = binding.initial_cpus()
    # Under srun each task starts on its own CPUs only: a node's CPUs are its ranks' together.
    launched = comm.allgather((layout.hostname, own))
    hostnames = [host for host, _ in launched]
    starts = [cpus for _, cpus in launched]
    cpus = binding.node_cpus(starts, layout.node_keys, layout.node_keys[rank])
    fewest = min(len(binding.node_cpus(starts, layout.node_keys, key))
                 for key in set(layout.node_keys))
    writer = None
    failure = None
    if rank == 0:
        try:
            if resume:
                refuse_program_names(plan, out)  # before the writer records this plan
            writer = telemetry.TelemetryWriter(
                out, resume=resume, snapshot_every_s=plan.snapshot_every,
                attrs={"plan": json.dumps(plan.source, default=str),
                       "last_launch_ranks": comm.Get_size(), COMPLETE_ATTR: 0})
            writer.open()
            fp = meters.fingerprint(partition, hostnames=hostnames,
                                    mpi_library=library_version(),
                                    gpu_aware=gpu_aware() if partition.gpus_per_node else False)
            say_earlier_record(writer, fp, out, resume)
            writer.machine(fp)
            machine_id = fp["machine_id"]
            sweep_id = plan.sweep_id
            todo = _runs_to_do(plan, writer.store, machine_id)
            if note := retried_note(writer.store, plan, machine_id, out):  # s49
                sys.stderr.write(f"hpcds1mpi sweep: {note}\n")
            fill_recorded_options(writer, plan, machine_id, out)  # s41 tester D3
            # a row merge and train refuse is no run done (s37 tester P7): refused, not kept
            refuse_broken_rows(writer.store, out, RESUME_FIX,
                               {(machine_id, plan.runs[i].run_id) for i in todo})
            _say_changed_settings(writer, plan, len(plan.runs) - len(todo), out)
            _say_crashed(_crashed_skipped(writer.store, plan, machine_id, todo), out)
        except BaseException as exc:  # noqa: BLE001 - told to every rank, then re-raised on 0
            # Nothing raised from here on may skip the bcast below: the other ranks wait in it
            # (an error worded from a too-long name had raised again, s32 tester T1).
            failure = sweep_storage_error(exc, out)
            _close_after_failure(writer)
    failed = comm.bcast(None if failure is None else getattr(failure, "exit_code", 1), root=0)
    if failed is not None and failed != 2 and os.environ.get(SUPERVISED_ENV) == "1":
        failed = SWEEP_ERROR_EXIT
    if failed is not None:
        if rank == 0:
            if failed != 2 and os.environ.get(SUPERVISED_ENV) == "1":
                failure.exit_code = SWEEP_ERROR_EXIT  # the supervisor: not the run, stop
            raise failure
        raise SystemExit(failed)  # rank 0 prints the one-line error (or the traceback of a bug)
    machine_id, sweep_id, todo = comm.bcast(
        (machine_id, sweep_id, todo) if rank == 0 else None, root=0)
    if rank == 0:
        say_oversubscribed(plan, todo, fewest, max(layout.node_sizes))

    with sigterm_interrupts():  # scancel / a walltime: said and exit 1, as Ctrl-C is
        try:
            return _sweep_loop(comm, plan, out, partition, layout, (cpus, own), writer,
                               machine_id, sweep_id, todo, progress)
        except BaseException as exc:
            # A bug, a full disk or an interrupt on one rank would leave the others waiting
            # forever: say it in one line (a traceback only for a bug) and end the whole job.
            abort_sweep(comm, exc, out)
            raise


def _close_after_failure(writer) -> None:
    """Close (else release) a writer opened before the sweep's set-up failed; a full disk
    fails the close again, and nothing may raise before the failure is told to every rank."""
    if writer is None or writer.store is None:
        return
    try:
        writer.close()
    except BaseException:  # noqa: BLE001 - see above
        try:
            writer.release()
        except BaseException:  # noqa: BLE001 - see above
            pass


def refuse_program_names(plan: SweepPlan, out: str) -> None:
    """Refuse to resume ``out`` with a kernel whose name the file holds a ``--command``
    program's runs under (``sweep --command ... --label stencil``): a model would learn the
    kernel and the program as one workload (:mod:`hpcds1mpi.records.run_sources`).

    Raises:
        ConfigError: naming the kernel, what the file holds under its name and the fix.
    """
    from hpcds1mpi.errors import HpcdsError
    from hpcds1mpi.records import telemetry
    from hpcds1mpi.records.run_sources import KERNEL, recorded_programs, shown

    if not os.path.isfile(out):
        return
    try:
        recorded = recorded_programs(telemetry.read_snapshot(out))
    except (HpcdsError, OSError):
        return  # the writer says what is wrong with the file
    for name in dict.fromkeys(spec.workload for spec in plan.runs):
        programs = sorted(recorded.get(name, set()) - {KERNEL})
        if programs:
            raise ConfigError(f"--resume {out}: the file holds runs labelled {name!r} from "
                              f"{shown(programs[0])}; the kernel {name}'s runs would be learnt "
                              "as that program's: sweep the kernel into another --out")


def _say_changed_settings(writer, plan: SweepPlan, kept: int, out: str) -> None:
    """One line when a resumed plan measures differently from the file's: the runs recorded
    under the old settings are kept, not measured again (their run ids leave settings out)."""
    from hpcds1mpi.measure.plan import measurement_changes

    changes = measurement_changes(getattr(writer, "replaced_plan", None), plan)
    if changes and kept:
        sys.stderr.write(
            f"hpcds1mpi sweep: the plan's measurement settings differ from those recorded in "
            f"{out} ({', '.join(changes)}); the {kept} run(s) already recorded are kept as "
            f"measured (to measure them again, sweep into another --out)\n")
        sys.stderr.flush()


def _crashed_skipped(store, plan: SweepPlan, machine_id: str, todo: list[int]) -> list[str]:
    """The plan's runs recorded ``crashed`` that this sweep skips: not done (s33 tester C10)."""
    skipped = set(range(len(plan.runs))) - set(todo)
    return [f"{spec.workload} size {spec.size} {spec.config.label()}"
            for i, spec in enumerate(plan.runs) if i in skipped
            and (store.runs.get((machine_id, spec.run_id)) or {}).get("status") == "crashed"]


def _say_crashed(crashed: list[str], out: str) -> None:
    """One line naming the crashed runs a sweep skips, and how to run them again (a crashed
    run under --launch had been counted "already done")."""
    if crashed:
        sys.stderr.write(f"hpcds1mpi sweep: {len(crashed)} configuration(s) in {out} crashed "
                         f"and are not run again: {', '.join(crashed)}; add --retry-crashed "
                         "to --resume to run them again\n")
        sys.stderr.flush()


def say_oversubscribed(plan: SweepPlan, todo: list[int], cpus: int, launched: int,
                        env=None, run_as: str = "they run unbound and oversubscribed") -> None:
    """One line when runs put more ranks x threads on a node than the launch gave it (``cpus``:
    the fewest of any node, :func:`hpcds1mpi.runtime.binding.node_cpus`; ``launched``: ranks
    launched per node): ``run_as`` says how they run, their times measure the contention. Under
    srun the step may hold fewer CPUs than the allocation: the line says how to launch it
    wider."""
    over = [plan.runs[i].config for i in todo
            if plan.runs[i].config.ranks_per_node * plan.runs[i].config.threads > cpus]
    if not over:
        return
    worst = max(over, key=lambda c: c.ranks_per_node * c.threads)
    need = worst.ranks_per_node * worst.threads
    env = os.environ if env is None else env
    how = ""
    if env.get("SLURM_STEP_ID") is not None:
        # The srun step's masks, not the node's CPUs: say how to launch a step that holds them.
        per_task = -(-need // max(launched, 1))
        how = (f"; this srun step gives a node {cpus} cpu(s): to measure them bound, launch "
               f"`srun --cpus-per-task={per_task}` (or --cpu-bind=none) in an allocation "
               f"holding {need} cpu(s) per node")
    sys.stderr.write(
        f"hpcds1mpi sweep: {len(over)} of {len(todo)} configuration(s) put more ranks x "
        f"threads on a node than its {cpus} cpu(s) (up to {worst.ranks_per_node} x "
        f"{worst.threads}); {run_as}, their times include the "
        f"contention{how} (--valid-only, or valid_only = true in a plan, skips them)\n")
    sys.stderr.flush()


def _runs_to_do(plan: SweepPlan, store, machine_id: str) -> list[int]:
    """Indices of the plan's runs not yet :func:`settled` in ``store`` (missing, ``interrupted``,
    ``ok`` without a runtime, or timed out below the plan's ``timeout``) or crashed and to be
    retried (``retry_crashed``, up to ``max_attempts``)."""
    todo = []
    for index, spec in enumerate(plan.runs):
        key = (machine_id, spec.run_id)
        old = store.runs.get(key)
        if not settled(old, plan):
            todo.append(index)
        elif (old["status"] == "crashed" and plan.retry_crashed
              and store.attempts.get(key, 1) < plan.max_attempts):
            todo.append(index)
    return todo


def _sweep_loop(comm, plan, out, partition, layout, cpus, writer, machine_id, sweep_id, todo,
                progress) -> dict:
    """Run the plan's runs ``todo`` one after the other; rank 0 records each."""
    from hpcds1mpi import kernels as registry
    from hpcds1mpi.measure import meters
    from hpcds1mpi.runtime.mpi import get_mpi

    MPI = get_mpi()
    rank = comm.Get_rank()
    subcomms = {}
    for nodes, rpn in plan.layouts():
        member = layout.node_index < nodes and layout.local_rank < rpn
        sub = comm.Split(0 if member else MPI.UNDEFINED, rank)
        subcomms[(nodes, rpn)] = (sub, sub.Dup()) if member else None

    model = meters.power_model(partition)
    watchdog = Watchdog(writer, comm) if rank == 0 else None
    bar = Progress(len(todo), enabled=progress and rank == 0)
    counts: dict[str, int] = {}
    sweep_start = time.perf_counter()
    measured_total = 0.0
    raced_out = 0
    for done, index in enumerate(todo):
        spec = plan.runs[index]
        if spec.run_id in plan.races and not _still_racing(comm, plan, spec, writer, machine_id):
            raced_out += 1
            if rank == 0:
                bar.update(done + 1, f"({spec.workload} {spec.size} raced out)")
            continue
        sub = subcomms[(spec.config.nodes, spec.config.ranks_per_node)]
        kernel = registry.get(spec.workload)
        row = None
        if rank == 0:
            row = base_row(spec, machine_id, partition, sweep_id)
            row["attempt"] = writer.start(row)
            row["started_at"] = time.time()
            watchdog.arm(row, plan.timeout)
        if sub is not None:
            sub, errcomm = sub
            guarded = GuardedKernel(kernel, errcomm, out, spec.run_id, comm,
                                    agree_s=min(2.0, plan.timeout / 4))
            start = time.perf_counter()
            outcome, info = _measure_on_rank(sub, spec, plan, layout, cpus, guarded, rank, watchdog)
            elapsed = time.perf_counter() - start
            infos = sub.gather(info, root=0)
            if rank == 0:
                if watchdog.disarm():
                    row, detail = finish_row(row, outcome, infos, model, kernel, spec, elapsed)
                    writer.record(row, detail)
                    counts[row["status"]] = counts.get(row["status"], 0) + 1
                    measured_total += row.get("measured_s") or 0.0
                else:  # the watchdog already recorded a timeout and is aborting
                    time.sleep(3600)
        sleepy_barrier(comm)
        if rank == 0:
            bar.update(done + 1, f"({spec.workload} {spec.size} {spec.config.label()})")
    total = time.perf_counter() - sweep_start
    summary = {}
    if rank == 0:
        crashed = _crashed_skipped(writer.store, plan, machine_id, todo)  # not done either
        writer.store.attrs[COMPLETE_ATTR] = 1  # the supervisor's "this launch is done"
        writer.close()
        summary = {"configs": len(todo) - raced_out, "raced_out": raced_out,
                   "statuses": counts, "sweep_s": total, "measured_s": measured_total,
                   "journal_s": writer.journal_seconds, "snapshot_s": writer.snapshot_seconds,
                   "snapshots": writer.snapshots, "journal_writes": writer.journal_writes,
                   "skipped": len(plan.runs) - len(todo) - len(crashed), "crashed": crashed}
    for pair in subcomms.values():
        if pair is not None:
            for derived in pair:
                derived.Free()
    return summary


def _still_racing(comm, plan: SweepPlan, spec: RunSpec, writer, machine_id: str) -> bool:
    """Whether a race run is measured (:mod:`hpcds1mpi.measure.race`): rank 0 reads its
    records and tells every rank; collective."""
    go = None
    if comm.Get_rank() == 0:
        from hpcds1mpi.measure.race import is_contender

        go = is_contender(plan.races[spec.run_id],
                          lambda run_id: writer.store.runs.get((machine_id, run_id)),
                          plan.race_within)
    return comm.bcast(go, root=0)


def _measure_on_rank(sub, spec: RunSpec, plan: SweepPlan, layout: NodeLayout,
                     cpus: tuple[list[int], list[int]], kernel, rank: int, watchdog):
    """Run one configuration on this rank (a member of ``sub``).

    Binds the rank to its cores, reads the meters around the runner, records what it saw.

    Args:
        sub: the run's communicator (this rank is a member).
        spec: the run.
        plan: the plan (repeats, warm-up, check).
        layout: this rank's place in the sweep's communicator.
        cpus: ``(node CPUs, own CPUs)``: the CPUs of this rank's node
            (:func:`hpcds1mpi.runtime.binding.node_cpus`) it binds within, and those it was
            launched with, restored after the run.
        kernel: the (guarded) kernel.
        rank: this rank in the sweep's communicator.
        watchdog: rank 0's watchdog, told as each measured repeat begins; None elsewhere.

    Returns:
        ``(outcome, info)``: the runner's ``Outcome`` (None when the driver failed) and this
        rank's info dict for :func:`hpcds1mpi.measure.rows.finish_row`.
    """
    from hpcds1mpi.measure import meters, runner
    from hpcds1mpi.runtime import binding
    from hpcds1mpi.runtime.arrays import FAKE_GPU_SOURCE, fake_gpu_enabled

    config = spec.config
    info = {"rank": rank, "hostname": layout.hostname, "local_rank": layout.local_rank,
            "binding": "", "cpu_s": 0.0, "rss_mb": float("nan"), "rss_source": "",
            "rank_wall": [], "rank_mpi": [], "elapsed_s": 0.0, "warmup": plan.warmup,
            "gpu": config.device == "gpu"}
    outcome = None
    start = time.perf_counter()
    rapl = meters.RaplMeter() if layout.local_rank == 0 else None
    nvml = None
    cpus, own = cpus
    try:
        info["binding"] = binding.bind(layout.local_rank, config.ranks_per_node, config.threads,
                                       cpus, own)
        reset = meters.reset_peak_rss()
        if rapl is not None and rapl.available:
            rapl.start()
        fake = config.device == "gpu" and fake_gpu_enabled()  # GPU code on the CPU
        if config.device == "gpu" and not fake:
            nvml = meters.NvmlMeter(layout.local_rank)
            if nvml.available:
                nvml.start()
        outcome = runner.execute(
            sub, kernel, spec.size, config, seed=spec.seed, warmup=plan.warmup,
            min_time=plan.min_time, min_repeats=plan.min_repeats, max_repeats=plan.max_repeats,
            check=plan.check, local_rank=layout.local_rank, extra=dict(spec.extra),
            corrupt=spec.corrupt, on_repeat=watchdog and watchdog.measuring)
        info["rss_mb"], info["rss_source"] = meters.peak_rss_mb(reset)
        if rapl is not None and rapl.available:
            info["rapl_j"] = rapl.stop()
        if nvml is not None and nvml.available:
            nvml.stop()
            info.update(nvml_j=nvml.energy_j, gpu_busy_s=nvml.busy_s,
                        gpu_mem_mb=nvml.peak_mem_mb, gpu_source="nvml")
        elif fake:  # no GPU ran: marked, so no model takes it for a GPU measurement
            info.update(gpu_mem_mb=float("nan"), gpu_source=FAKE_GPU_SOURCE)
        elif config.device == "gpu":
            info.update(gpu_mem_mb=meters.torch_gpu_peak_mb(), gpu_source="none")
        info["cpu_s"] = outcome.rank_cpu
        info["rank_wall"] = list(outcome.rank_wall)
        info["rank_mpi"] = list(outcome.rank_mpi)
    except Exception as exc:  # noqa: BLE001 - the driver's own failure is this run's status
        info["driver_error"] = f"{type(exc).__name__}: {exc}"
    finally:
        binding.unbind(own)
    info["elapsed_s"] = time.perf_counter() - start
    return outcome, info
