"""``advise``: what a user's own batch script asks for, against what hpcds1mpi recommends.

The answer's data (:class:`~hpcds1mpi.decide.advise_answer.Advice`, its two
:class:`~hpcds1mpi.decide.advise_answer.Side` layouts) is :mod:`hpcds1mpi.decide.advise_answer`.
The script is read by :mod:`hpcds1mpi.launch.script_reading`. Its program is matched against
the workloads the model was trained on (the telemetry labels, and the programs swept with
``sweep --command``, whose command lines the bundle keeps:
:mod:`hpcds1mpi.decide.script_workload`), or named with ``--workload``; its problem size comes
from ``--size``, the program's ``--size`` argument, or the place of ``{size}`` in that
program's measured command line. Then both
layouts get System 1's predictions (runtime, energy, the walltime to ask for), through
:func:`hpcds1mpi.decide.recommend.recommend` and :func:`hpcds1mpi.decide.system1.score`.

The recommended time limit covers one launch: a script that launches more than once (several
launch lines, or one in a loop) or runs a program after it (:mod:`.work_after_launch`) keeps
its own ``--time``, said in a note. Given the folder the job starts in (the CLI), a launcher
of another MPI family than the program's is a warning; a launch line that runs other
arguments than the measured command gets a note (:mod:`hpcds1mpi.decide.advise_launch`).

The device and precision stay the script's: they are inside the user's program (its
``--device`` / ``--precision``, ``HPCDS1MPI_DEVICE`` / ``_PRECISION``; else the GPUs the job asks
for tell the device), which a rewrite does not touch; a CPU program's GPU request is dropped.
GPUs are read as Slurm reads them, on the directives and the ``srun`` step, which Slurm refuses
when it asks for GPUs its job does not hold (:mod:`hpcds1mpi.launch.script_gpus`). Ranks that
share GPUs (more per node than GPUs, or ``CUDA_VISIBLE_DEVICES`` set by hand) are valid but get
no prediction: the model predicts one GPU per rank. A program the model does not know gets the
guard's verdict and no prediction at all, as ``recommend`` does for an unfamiliar job.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Sequence

from hpcds1mpi.config import Configuration
from hpcds1mpi.decide import guard as guard_mod
from hpcds1mpi.decide.recommend import recommend
from hpcds1mpi.decide.recommend_prepare import refuse_job_bundle
from hpcds1mpi.decide.advise_answer import Advice, Side
from hpcds1mpi.decide.advise_gain import judge_gain, reasons_for_shown
from hpcds1mpi.decide.advise_launch import launch_notes
from hpcds1mpi.decide.advise_memory import memory_refusal, memory_warnings, rewritten_memory_mib
from hpcds1mpi.decide.advise_other_launch import confirm_other_launches
from hpcds1mpi.decide.advise_side import predict_side
from hpcds1mpi.decide.advise_refusal import rewrite_refusal
from hpcds1mpi.decide.asked_problem import asked_problem, beyond_this_machine
from hpcds1mpi.decide.kernel_job_time import script_kernel_runs
from hpcds1mpi.decide.launch_time_limit import one_launch_limit
from hpcds1mpi.decide.recommendation import escalation_places, format_time, no_calibration
from hpcds1mpi.decide.measured_run import setup_time
from hpcds1mpi.decide.size_source import script_size
from hpcds1mpi.decide.edited_inputs import judge_launch_inputs
from hpcds1mpi.decide.unmeasured_command import confirm_unmeasured, judge_launch
from hpcds1mpi.decide.work_after_launch import AFTER_BASIS, work_after_note
from hpcds1mpi.decide.script_workload import (choose_launch, no_size, recorded_commands,
                                              running_launches)
from hpcds1mpi.decide.folder_size import swept_workdir
from hpcds1mpi.errors import ConfigError
from hpcds1mpi.launch.job_script import JobScript
from hpcds1mpi.launch.pbs_request import free_place_note
from hpcds1mpi.launch.pbs_rewrite import pbs_notes
from hpcds1mpi.launch.script_reading import read_script
from hpcds1mpi.launch.script_unlaunched import no_launch
from hpcds1mpi.launch.script_gpus import visible_note
from hpcds1mpi.launch.srun_cpus import srun_c_note, unknown_release_note
from hpcds1mpi.launch.script_repeats import repeats_note
from hpcds1mpi.launch.launch_line_checks import launch_family
from hpcds1mpi.launch.script_binding import binding_note
from hpcds1mpi.launch.script_knobs import device_of, precision_of
from hpcds1mpi.launch.program import placeholder_values
from hpcds1mpi.launch.script_request import resolve_launch
from hpcds1mpi.launch.script_rewrite import Layout, ranks_note, rewrite, threads_note
from hpcds1mpi.launch.partition_limits import (advise_warnings, checked_partition,
                                               default_queue_limits, fit_partition, read_on,
                                               rewrite_refusal as over_limits)
from hpcds1mpi.launch.sbatch_partition import (VARIABLE, judged_note, missing_from_cluster,
                                               take_variable)
from hpcds1mpi.places import default_queue_note
from hpcds1mpi.schemas.limits import MAX_SIZE

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.cluster import Cluster, Partition
    from hpcds1mpi.decide.recommendation import Recommendation


# ---- predictions ----------------------------------------------------------------------------


def _recommended(rec: "Recommendation", asked: Configuration, notes: list[str]
                 ) -> tuple[int | None, float | None]:
    """The row of the best pick that keeps the script's device and precision, picked among
    those by ``recommend``'s own rules (its node reach, then a measured layout before an
    unmeasured one whose interval is not wholly better: s35 tester R6, where 2 nodes fp64,
    never measured, was shown over the measured 1 node), and System 1's confidence when that
    row is its overall pick."""
    import numpy as np

    from hpcds1mpi.decide.measured_nodes import measured_first, pick_beyond_reach_line
    from hpcds1mpi.decide.unmeasured_bounds import measured_before_unmeasured

    ch = rec.picked.choice
    cols = ch.scores.cols
    kept = np.asarray([i for i in ch.ranking if cols["precision"][i] == asked.precision
                       and cols["device"][i] == asked.device], dtype=np.int64)
    if not len(kept):
        notes.append(f"no feasible layout keeps the script's {asked.device} {asked.precision}")
        return None, None
    first, after = measured_first(cols, kept)  # kept in the ranking's order
    first, beyond_note = measured_before_unmeasured(cols, first, ch.objective)
    row = int(first[0]) if len(first) else int(after[0])
    if row != ch.index:
        notes.append(f"System 1's overall pick runs {cols['device'][ch.index]} "
                     f"{cols['precision'][ch.index]} (predicted "
                     f"{format_time(float(cols['runtime_s'][ch.index]))}); the script's "
                     f"program runs {asked.device} {asked.precision}, which is kept")
        notes += [n for n in (beyond_note, pick_beyond_reach_line(cols, rec.workload, row))
                  if n]
    return row, (ch.confidence if row == ch.index else None)


# ---- advise ---------------------------------------------------------------------------------


def _places_for(script: JobScript, places, queue: str | None = None, source: str = ""):
    if not script.partition:
        return places
    hits = [(c, p) for c, p in places if script.partition in (p.name, p.slurm_partition)]
    if not hits:
        known = ", ".join(f"{c.name}/{p.name}" if c is not None else p.name for c, p in places)
        if queue:  # the partition SBATCH_PARTITION gives it, not the script's own line
            raise missing_from_cluster(queue, known, source)
        line = script.directives.get("partition") or script.directives.get("q")
        raise ConfigError(f"the script asks for partition {script.partition!r} (line "
                          f"{line.line if line else '?'}), which the cluster description does "
                          f"not have ({known}); pass --cluster FILE that describes it")
    return hits


def advise(text: str, bundle, places: Sequence[tuple["Cluster | None", "Partition"]], *,
           workload: str | None = None, size: int | None = None, objective: str = "time",
           model_dir=None, history=None, name: str = "<text>",
           job_folder: str | None = None, default_queue: bool = False,
           sbatch_partition: str | None = None, queue_source: str = VARIABLE) -> Advice:
    """Compare a batch script's layout with hpcds1mpi's recommendation.

    Args:
        text: the script's text (never a path: a web request sends text).
        bundle: the model bundle.
        places: the (cluster, partition) pairs allowed; narrowed to the script's partition.
        workload / size: override what is read from the script.
        objective: ``time``, ``energy``, ``edp`` or ``balanced``.
        model_dir: the bundle's directory (calibration files).
        history: failure history for ``recommend``.
        name: what to call the script in the answer.
        job_folder: the folder the job is submitted from, where its launcher and program
            files are read for the MPI check (the CLI: the current folder); None: no file is
            read (a web request's text).
        default_queue: ``places`` are this machine (:func:`~hpcds1mpi.places.is_this_machine`),
            so Slurm's default partition takes a script naming none: its limits and its nodes'
            memory are the ones checked (not this machine's), and a note says so.
        sbatch_partition: ``SBATCH_PARTITION`` where the job is submitted (the CLI: its
            environment), which sbatch reads over the script's ``#SBATCH -p``: the job is
            judged on that partition, Slurm's on this machine, and a note says so.
        queue_source: where ``sbatch_partition`` comes from: ``SBATCH_PARTITION``, or
            ``--partition`` (the CLI's, for ``sbatch -p``, which overrides both).

    Raises:
        ConfigError: not a batch script, a partition the cluster lacks, a known program whose
            size is nowhere to be found.
    """
    refuse_job_bundle(bundle, "advise")
    script = read_script(text, name=name)
    # sbatch's input variable overrides the script's line (s48 review RX4)
    queue_said = take_variable(script, sbatch_partition, default_queue, queue_source)
    env_queue = sbatch_partition if queue_said else None
    labels = [str(w) for w in getattr(bundle, "workloads", [])]
    commands = recorded_commands(bundle)
    found, launch = choose_launch(script, labels, commands)
    label = workload or found
    command = commands.line_for(label or "", launch)  # the recorded line the launch runs
    script.command = command  # where it shows the program's own threads
    if launch is not None:
        resolve_launch(script, launch)
    source = "--workload" if workload else (
        f"the program on line {launch.line}" if found else "no match")
    size_source = "--size"
    if size is None and launch is not None:  # an export's line (s30 N8), a cd (s44 M4)
        size, size_source = script_size(script, launch, command, swept_workdir(bundle, label))
    warnings, launch_said = launch_notes(script, launch, command, job_folder)
    warnings += script.warnings  # read with its layout: a thread option against OMP_NUM_THREADS
    places = _places_for(script, places, env_queue, queue_source)
    device, device_said = device_of(script, launch)
    device = device or script.device  # the program's own, else what the GPUs asked imply
    gpus_at = f"line {script.lines.get('gpus', ['?'])[0]}"
    if device == "gpu" and not any(p.gpus_per_node for _, p in places):
        raise ConfigError(f"the script runs on GPUs ({device_said or gpus_at}) but no allowed "
                          f"partition ({', '.join(p.name for _, p in places)}) has any; pass "
                          "--cluster FILE with its GPU partition")
    cluster, partition = places[0]
    warnings += advise_warnings(script, partition, default_queue, env_queue)  # above its limits
    # a script naming no partition is checked on the one sbatch gives it, alone, said (s48)
    slurm_default = default_queue_limits(script, default_queue, env_queue, queue_source)
    checked = checked_partition(partition, slurm_default)
    if queue_said:
        script.note(judged_note(queue_said, default_queue, slurm_default is not None))
    elif default_queue and not script.partition:
        script.note(default_queue_note(partition, script.scheduler, queue=slurm_default.name
                                       if slurm_default is not None else None, users=True))
    if not script.partition and len(places) > 1:
        script.note(f"the script names no partition; {partition.name} (the first) is taken "
                    "as the default for the asked layout")
    # the asked layout is read and judged on the partition that takes it (s48 tester Q5)
    cores = fit_partition(partition, slurm_default).cores_per_node
    nodes, per_node, threads = script.layout(cores)
    fit = fit_partition(partition, slurm_default, nodes)
    if shared_hosts := free_place_note(script, cores):
        script.note(shared_hosts)
    precision, said = precision_of(script, launch)
    notes = list(script.notes) + launch_said
    if not said:
        notes.append("the script does not say the precision; fp64 assumed")
    if device == "cpu" and script.gpus_per_node:
        notes.append(f"{device_said}: the program runs on the CPU, so both layouts are predicted "
                     f"on the CPU; the {script.gpus_per_node} "
                     f"GPU{'s' if script.gpus_per_node != 1 else ''} per node the job "
                     f"asks for ({gpus_at}) go unused")
    asked_cfg = Configuration(nodes, per_node, threads, device, precision)
    where = f"{cluster.name}/{partition.name}" if cluster is not None else partition.name
    asked = Side(asked_cfg, where, script.time_s,
                 lines=sorted({n for v in script.lines.values() for n in v}),
                 time_lines=sorted(script.lines.get("time", [])))
    asked.problem = asked_problem(script, launch, asked_cfg, fit, device_said, job_folder,
                                  this_machine=default_queue and fit is partition)
    if not asked.problem and (wider := beyond_this_machine(asked_cfg, partition, fit)):
        notes.append(wider)
    if not asked.problem and (shared := unknown_release_note(script, launch, threads)):
        notes.append(shared)  # a step whose threads share a core on some releases only
    pinned = visible_note(script, device)  # GPUs picked by hand: said once
    if pinned and pinned.split(" by hand")[0] not in asked.problem:
        notes.append(pinned)
    if label is None:
        from hpcds1mpi.decide.script_workload import launched_program, other_computation

        program = launched_program(launch) if launch else None  # s29 tester B1: not ''
        if program and (other := other_computation(launch, commands)):  # s45 tester E3
            program = f"{program} {' '.join(other[2][0])}"  # the input that tells it apart
        what = (f"the program {program!r} matches no workload the model was trained on"
                if program else f"{no_launch(script)}, so its workload is not known"
                if launch is None else f"line {launch.line}: the program {launch.launcher} "
                "starts could not be read")
        verdict = guard_mod.Verdict("escalate", [f"{what}; the model has {', '.join(labels)}: "
            "pass --workload (and --size) if it is one of them"], {"name": "escalate"})
        return Advice(name, script.scheduler, None, source, size, size_source, asked, None,
                      verdict.as_dict(), objective, notes=notes, warnings=warnings)
    if size is None:
        raise ConfigError(no_size(label, launch, command, bundle, script))
    if not 1 <= int(size) <= MAX_SIZE:  # --size is bounded by the CLI; the script's is not
        shown = f"{str(size)[:20]}{'...' if len(str(size)) > 20 else ''}"
        raise ConfigError(f"problem size {shown} ({size_source}) is outside 1..{MAX_SIZE}; "
                          "pass --size")
    rec = recommend(bundle, label, int(size), places, objective=objective, history=history,
                    model_dir=model_dir, device=device, command_known=launch is not None)
    verdict = rec.verdict.as_dict()  # recommend's "see the lines below" are its places' own
    verdict["reasons"] += escalation_places(rec)
    unmeasured = judge_launch(launch, command, label, job_folder,  # s40 tester B5, B10
                              placeholder_values(asked_cfg, int(size)))  # at its own values
    if unmeasured:  # another program or deck: not auto, and its time limit is not cut
        confirm_unmeasured(verdict, unmeasured)
    if edited := judge_launch_inputs(bundle, label, script, launch, job_folder):  # s48 O4
        confirm_unmeasured(verdict, edited)  # an input edited since: as another deck
    confirm_other_launches(verdict, script, job_folder)  # a line not read stops it: not auto
    advice = Advice(name, script.scheduler, label, source, int(size), size_source, asked, None,
                    verdict, objective, energy_label=rec.energy_label,
                    notes=notes, warnings=warnings, recommendation=rec)
    if rec.verdict.verdict == "escalate":  # the guard's verdict, and no guessed numbers
        # the label too, as recommend's JSON and script give each step (s29 tester C8: the
        # list was printed as dict reprs, recommend's as "N1xR2xT1-cpu-fp64")
        advice.calibration = [{"config": s.config.as_dict(), "label": s.config.label(),
                               "reason": s.reason} for s in rec.calibration_steps]
        advice.notes += [why] if (why := no_calibration(rec)) else []  # said, not silent
        return advice
    if not asked.problem:  # read from the grid, as the recommended side is (s33)
        predict_side(bundle, label, int(size), partition, asked_cfg, asked,
                     rec.picked.choice.scores.cols if rec.picked is not None else None)
    if rec.picked is None:
        return advice
    row, advice.confidence = _recommended(rec, asked_cfg, notes)
    if row is None:
        return advice
    ch = rec.picked.choice
    cfg = ch.config(row)
    picked_part = rec.picked.partition
    setup_s, setup_from = setup_time(rec.program_levels, cfg)  # as recommend's script (s31)
    one_launch, basis = one_launch_limit(float(ch.scores.cols["runtime_hi"][row]),
                                         rec.wall_per_runtime, setup_s, setup_from, script.time_s,
                                         script_kernel_runs(rec.kernel_runs, launch))  # s47 N3
    repeats = repeats_note(script, one_launch, running_launches(script))  # s42, s44 N4
    after = None if repeats or unmeasured else work_after_note(script, launch)
    keep_time = bool(repeats or unmeasured or edited or after)  # the script's own limit kept
    basis = "kept from the script: " + ("it launches more than once, see the note" if repeats
        else AFTER_BASIS if after else "it runs another command than the measured one"
        if unmeasured else "its input is not the one measured") if keep_time else basis
    notes += [n for n in (repeats, after) if n]
    advice.recommended = predict_side(bundle, label, int(size), picked_part, cfg, Side(
        cfg, rec.picked.label, script.time_s if keep_time else one_launch, walltime_basis=basis),
        ch.scores.cols)
    if row != ch.index:  # the verdict's reasons then speak of the layout shown
        reasons_for_shown(advice, Side(ch.config(ch.index), "").text())
    judge_gain(advice, bundle)  # a failing script is never kept for its time (s39 A4)
    queue = picked_part.slurm_partition or picked_part.name
    layout = Layout(cfg.nodes, cfg.ranks_per_node, cfg.threads,
                    cfg.ranks_per_node if cfg.device == "gpu" else 0,
                    None if keep_time else one_launch,
                    # the queue where it differs from the script's, or where the script names
                    # none and the pick is not the default partition it was read on
                    queue if (queue != script.partition if script.partition
                              else picked_part.name != partition.name) else None,
                    picked_part.cores_per_node)
    memory_part = checked if slurm_default is not None else picked_part
    layout = replace(layout, memory_mib=rewritten_memory_mib(  # as recommend asks (s40 D12)
        script, advice.recommended.mem_need_mib, memory_part, cfg.nodes, cfg.ranks_per_node,
        cfg.threads))
    advice.warnings += memory_warnings(script, advice.asked.mem_need_mib, checked,
                                       advice.asked.text(), asked_cfg.ranks_per_node,
                                       slurm_said=slurm_default is not None)
    family = launch_family(script, script.launch, job_folder)  # Open MPI's binds ranks
    advice.rewritten, advice.changes = rewrite(script, layout, family)
    refused = rewrite_refusal(script, asked_cfg, cfg) or over_limits(
        script, layout, read_on(partition, default_queue, env_queue)) or \
        memory_refusal(script, advice.recommended, memory_part)
    if refused:  # the note is read whether or not --rewrite was asked (s29 V1-4)
        advice.rewritten, advice.rewrite_refused = None, refused
        notes.append(refused.replace("--rewrite refused:", "--rewrite would be refused:", 1))
    notes += [n for n in (threads_note(script, layout), ranks_note(script, layout, Layout(
        nodes, per_node, threads)), visible_note(script, cfg.device, cfg.ranks_per_node),
        binding_note(script, layout, family), srun_c_note(script, layout.threads)
        if advice.rewritten is not None else None, *pbs_notes(script, layout)) if n]
    return advice
