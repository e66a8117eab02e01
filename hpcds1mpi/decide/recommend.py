"""``recommend``: where and how to run a job, or a calibration sweep when it is not familiar.

The question is checked and set up first (:func:`~.recommend_prepare.prepare`: partitions
where the job failed before are skipped, :mod:`hpcds1mpi.decide.failure_history`). The
placement: System 1 scores every configuration of every allowed partition
(:mod:`hpcds1mpi.decide.system1`), the guard decides whether the answer may be acted on
(:mod:`hpcds1mpi.decide.guard`), and each rejected partition gets its reason in one line. An
escalated job gets no guessed settings: a short calibration sweep over the configurations the
model is least sure about is chosen instead (:mod:`.calibration_sweep`).
The answer, a :class:`~.recommendation.Recommendation`, is shown as a table, JSON or a batch
script by :mod:`hpcds1mpi.decide.recommendation`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import numpy as np

from hpcds1mpi.decide import guard as guard_mod
from hpcds1mpi.decide import system1 as s1
from hpcds1mpi.decide.edited_inputs import judge_edited_inputs
from hpcds1mpi.decide.energy_floor import FLOOR_WATTS, floor_words, idle_watts
from hpcds1mpi.decide.failure_history import FailureHistory
from hpcds1mpi.decide.kernel_job_time import kernel_runs
from hpcds1mpi.decide.measured_here import failed_here_note
from hpcds1mpi.decide.own_failures import dropped_note
from hpcds1mpi.decide.picked_command import picked_command
from hpcds1mpi.decide.stale_command import stale_command
from hpcds1mpi.decide.calibration_sweep import calibration_steps, no_calibration_note
from hpcds1mpi.decide.recommend_prepare import Prepared, prepare, program_command
from hpcds1mpi.decide.recommendation import (
    Place, Recommendation, format_energy, format_memory, format_time)
from hpcds1mpi.decide.trained_hardware import (cpu_differs, gpu_not_compared,
                                               matching_partition, trained_partitions)
from hpcds1mpi.decide.unfit_measured import (doomed_calibration_note, failed_layouts,
                                             unfit_line)
from hpcds1mpi.decide.unmeasured_command import judge_given_program

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.cluster import Cluster, Partition

def _energy_label(bundle) -> str:
    source = getattr(bundle, "energy_source", None)
    if isinstance(source, str) and source and source != "none":
        return source if source == "modelled" else f"measured ({source})" \
            if "modelled" not in source else "partly modelled"
    try:
        from hpcds1mpi.decide import bundle_cache

        frame = bundle_cache.training_columns(bundle)
        if "energy_source" in frame.columns:
            sources = {s for s in frame["energy_source"].astype(str).tolist() if s}
            if sources and sources <= {"modelled"}:
                return "modelled"
            if "modelled" in sources:
                return "partly modelled"
            return "measured (" + ", ".join(sorted(sources)) + ")"
    except Exception:
        pass
    return "modelled"


def _rejection(place: Place, scores: s1.Scores) -> str:
    """Why nothing on this partition is feasible, in one line."""
    cols = scores.cols
    on = cols["partition"] == place.partition.name
    reasons = cols["reason"][on]
    if len(reasons) == 0:
        return "no configuration fits this partition"
    not_failing = on & (cols["reason"] != "fail")
    if (reasons == "fail").all():
        failed = "; ".join(n for n in (failed_here_note(cols, scores.size, place.partition.name),
                                       dropped_note(cols, scores.size, place.partition.name))
                           if n)
        return "every configuration is predicted to fail here" + (f" ({failed})" if failed else "")
    lim = scores.limits.get(place.partition.name)
    mem = not_failing & (cols["reason"] == "memory")
    if mem.any() and (cols["reason"][not_failing] == "memory").all():
        need = cols["mem_need_mb"][mem]
        gpu = cols["device"][mem] == "gpu"
        # The smallest need among the configurations that were ruled out for memory.
        i = int(np.argmin(need))
        if gpu[i]:
            src = "measured runs there fail above" if lim and lim.gpu_source == "measured" \
                else "usable per GPU:"
            return (f"needs ~{format_memory(need[i])} per GPU; {src} {format_memory(lim.gpu_mb if lim else 0)}"
                    + (f" (nominal {format_memory(lim.nominal_gpu_mb)})" if lim and lim.nominal_gpu_mb
                       else ""))
        src = "measured runs there fail above" if lim and lim.node_source == "measured" \
            else "usable per node:"
        return f"needs ~{format_memory(need[i])} per node; {src} {format_memory(lim.node_mb if lim else 0)}"
    if (cols["reason"][not_failing] == "deadline").any():
        fastest = float(np.min(cols["runtime_hi"][not_failing]))
        if not np.isfinite(fastest):  # each timed out in its sweep: no known end (s41 D6)
            return ("cannot meet the deadline: each layout left timed out in its sweep, so "
                    "its runtime has no known upper end; measure it with a longer --timeout")
        return f"cannot meet the deadline: fastest predicted upper bound {fastest:.3g} s"
    if (cols["reason"][not_failing] == "energy").any():
        cheapest = float(np.min(cols["energy_hi"][not_failing]))
        return f"over the energy budget: cheapest predicted upper bound {cheapest:.3g} J"
    return "no feasible configuration"


def recommend(bundle, workload: str, size: int,
              places: Sequence[tuple["Cluster | None", "Partition"]], *,
              objective: str = "time", constraints: s1.Constraints | None = None,
              history: FailureHistory | None = None, model_dir=None,
              device: str | None = None,
              program_precisions: tuple[str, ...] | None = None,
              program=None, command_known: bool = False) -> Recommendation:
    """Compare every allowed partition and pick one, or escalate.

    Args:
        bundle: the model bundle.
        workload, size: the problem.
        places: (cluster, partition) pairs the job may use.
        objective: ``time``, ``energy``, ``edp`` or ``balanced``.
        constraints: ``--max-nodes``, ``--deadline``, ``--energy-budget``.
        history: failure history (partitions where this job failed are skipped).
        model_dir: where the bundle lives (calibration files next to it).
        device: restrict to ``cpu`` or ``gpu``.
        program_precisions: the precisions the calibration sweep's command can run
            (:func:`~hpcds1mpi.launch.program.program_precisions`; None: any): its steps are
            chosen among them (s33 tester D10: 4 steps listed, 2 run).
        program: the command the job runs (``--program``; None: the measured one): where it
            is not a measured command the verdict is at most ``confirm``, said why
            (:func:`~hpcds1mpi.decide.unmeasured_command.judge_given_program`).
        command_known: the caller knows the program's command without giving it here to
            judge (advise: its script's launch line, judged there at the script's own
            layout): a workload the model never measured gets its calibration sweep, as
            with ``program`` (s41 review F5: advise had lost it).
    """
    prep = prepare(bundle, workload, size, places, objective=objective,
                   constraints=constraints, history=history, model_dir=model_dir,
                   device=device)
    scores = s1.score(bundle, workload, size, prep.parts, prep.constraints,
                      uses_threads=prep.uses_threads) if prep.usable else None
    judged, confidence = choose_places(prep, scores)
    # The guard judges the job where it would run (or the first familiar partition).
    verdict = guard_mod.judge(bundle, workload, size, judged.partition, prep.calibration,
                              prep.ref, confidence)
    rec = conclude(prep, verdict, program_precisions=program_precisions,
                   program_given=program is not None or command_known)
    judge_given_program(rec, program)  # another program or deck: not auto (s40 tester B3)
    if not command_known:  # an input edited since its runs (s48 O4); advise judges its line
        judge_edited_inputs(rec, bundle, program)
    return rec


def choose_places(prep: Prepared, scores: s1.Scores | None) -> tuple[Place, float | None]:
    """System 1's pick on each usable place and over all of them, from ``scores`` (None when
    no place is usable).

    Returns:
        the place the guard judges (where the job would run, or the first familiar one)
        and the pick's confidence (None without a pick).
    """
    prep.scores = scores
    usable, objective, conf_model = prep.usable, prep.objective, prep.conf_model
    for pl in usable:
        sub = scores.subset(pl.partition.name)
        pl.choice = s1.choose(sub, objective, conf_model)
        if pl.choice.index is None:
            pl.rejected = _rejection(pl, sub)
    candidates = [pl for pl in usable if pl.choice is not None and pl.choice.index is not None]
    picked = None
    if candidates:
        # One choice over every feasible candidate of every usable partition: the pick's
        # partition wins, and the front and alternatives span all partitions.
        # One usable partition: its choice is the joint one, not computed twice.
        joint = candidates[0].choice if len(usable) == 1 else \
            s1.choose(scores, objective, conf_model)
        where = str(scores.cols["partition"][joint.index])
        picked = next(pl for pl in usable if pl.partition.name == where)
        picked.choice = joint
    prep.candidates, prep.picked = candidates, picked
    prep.judged = picked or (usable[0] if usable else _calibration_place(prep))
    return prep.judged, (picked.choice.confidence if picked else None)


def _calibration_place(prep: Prepared) -> Place:
    """Where the guard judges a job no usable place can take, and so where its calibration
    sweep runs: the first place of hardware never measured, else the first that can run the
    asked devices (a place rejected for having no GPUs cannot hold a GPU sweep), else the
    first place."""
    gpu_only = prep.constraints.devices == ["gpu"]
    runs = [pl for pl in prep.all_places if not gpu_only or pl.partition.gpus_per_node >= 1]
    unmeasured = [pl for pl in runs if pl.verdict is not None]
    return (unmeasured or runs or prep.all_places)[0]


def _extrapolation(prep: Prepared, verdict) -> tuple[list[str], list[str]]:
    """What the pick has that its workload was never measured at, one line per knob (and a
    GPU the model could not compare with the one it measured); such a pick is at most
    ``confirm`` (said in ``verdict``, changed in place). And notes on what
    else about the pick is modelled beyond the data: its energy at the nodes' idle floor, a
    program's memory need at a size outside its measured sizes (it declares no memory model:
    above them grown as its peak grew, or held, :mod:`~hpcds1mpi.decide.memory_growth`),
    its memory not judged (:mod:`~hpcds1mpi.decide.memory_judged`).

    Returns:
        ``(extrapolated, notes)``.
    """
    from hpcds1mpi.decide import bundle_cache
    from hpcds1mpi.decide.memory_growth import memory_growth_note
    from hpcds1mpi.decide.memory_judged import memory_note
    from hpcds1mpi.decide.scores import unmeasured_lines

    if prep.picked is None or verdict.verdict == "escalate":
        return [], []
    ch, notes = prep.picked.choice, []
    row = ch.scores.row(ch.index)
    part = prep.picked.partition
    watts = row.get(FLOOR_WATTS, idle_watts(part) * row["nodes"])  # a stand-in's: idle alone
    if row["energy_j"] <= watts * row["runtime_s"] * (1 + 1e-12):  # floored
        notes.append(f"energy is the floor {floor_words(part, row)} = {watts:.3g} W x the "
                     "predicted runtime: the model predicted less")
    levels = bundle_cache.measured_levels(prep.bundle).get(prep.workload)
    lo_hi = (getattr(prep.bundle, "size_range", {}) or {}).get(prep.workload)
    if levels is not None and levels.external and lo_hi is not None \
            and not float(lo_hi[0]) <= prep.size <= float(lo_hi[1]):
        notes.append(memory_growth_note(prep.size, lo_hi, row))
    if said := memory_note(prep.bundle, prep.workload, row):  # not judged: said (s38 K4)
        notes.append(said)
    lines = unmeasured_lines(row, levels)
    gpu_line = gpu_not_compared(prep.bundle, prep.picked.partition) \
        if row["device"] == "gpu" else ""
    lines = ([gpu_line] if gpu_line else []) + lines  # a GPU the model cannot tell apart
    if not lines:
        return [], notes
    verdict.checks["measured_levels"] = "confirm"
    if verdict.verdict == "auto":
        verdict.verdict = "confirm"
    verdict.reasons.append(f"the pick is beyond what {prep.workload} was measured at, its "
                           f"predictions extrapolated: {'; '.join(lines)}")
    return lines, notes


def _failing_between_sizes(prep: Prepared) -> str:
    """One line when every layout on the judged partition is predicted to fail only from
    its own runs on both sides of the size (:func:`~.own_failures.undecided`), else ``""``."""
    from hpcds1mpi.decide.own_failures import undecided

    if prep.scores is None or prep.judged is None:
        return ""
    cols = prep.scores.cols
    here = np.asarray(cols["partition"]) == prep.judged.partition.name
    between = undecided(cols) & here
    if not between.any() or (np.asarray(cols["reason"])[here] != "fail").any():
        return ""
    from hpcds1mpi.decide.own_failures import sides_said

    count = int(between.sum())
    sides = sides_said(cols, np.flatnonzero(between), prep.size)
    return (f"every layout is predicted to fail at size {prep.size:g}, "
            f"{'all' if count == int(here.sum()) else count} of them only from their runs at "
            f"other sizes ({sides}): where they start to fail is not known, so a calibration "
            "measures them at this size")


def conclude(prep: Prepared, verdict, *, program_precisions: tuple[str, ...] | None = None,
             program_given: bool = False) -> Recommendation:
    """The recommendation, from the guard's ``verdict`` on ``prep.judged``; a calibration's
    steps only at ``program_precisions`` (None: any), and none for a workload that is no
    kernel and that the model never measured, unless ``program_given``: nothing knows its
    command (:func:`_nothing_to_calibrate`)."""
    bundle, workload, size, objective = prep.bundle, prep.workload, prep.size, prep.objective
    picked, judged, candidates, scores = prep.picked, prep.judged, prep.candidates, prep.scores
    constraints, clusters = prep.constraints, prep.clusters
    familiar_but_impossible = picked is None and verdict.verdict != "escalate"
    if familiar_but_impossible and (between := _failing_between_sizes(prep)):
        # The layouts' own runs were ok at one size and failed at another: measuring them
        # at this size says whether they run (s40 tester B6, B12).
        verdict.verdict = "escalate"
        verdict.reasons.append(between)
        familiar_but_impossible = False
    if familiar_but_impossible:
        # Known job, but every configuration fails, overflows memory or misses a constraint:
        # measuring more of the same would not help, so no calibration sweep either.
        verdict.verdict = "escalate"
        verdict.reasons.append("no allowed partition can run this job (see the lines below)")
    unfit = ""
    if ((picked is not None and verdict.verdict != "escalate") or familiar_but_impossible) and \
            (unfit := unfit_line(bundle, prep.offer.levels,
                                 judged.partition.usable_cores_per_node, workload)):
        verdict.verdict = "escalate"  # a layout no run had, the program may refuse (s43 G4)
        verdict.reasons.append(unfit)
    judged.verdict = verdict
    from hpcds1mpi.decide.measured_nodes import confirm_held_back  # s34 tester S1

    confirm_held_back(verdict, picked.choice if picked is not None else None)
    if picked is not None and picked.choice.neighbour_note:  # why System 1 is less sure
        verdict.reasons.append(picked.choice.neighbour_note)
    extrapolated, notes = _extrapolation(prep, verdict)
    if picked is not None and picked.choice.nodes_note:  # a faster layout it would not pick
        notes = [*notes, picked.choice.nodes_note]
    failed = failed_here_note(scores.cols, size, picked.partition.name) if picked else ""
    if failed:  # layouts the runs at this size rule out (s29 tester C5)
        notes = [*notes, failed]
    dropped = dropped_note(picked.choice.scores.cols, size, picked.partition.name,
                           picked.choice.index) \
        if picked else ""
    if dropped:  # faster layouts left out as predicted to fail, and why (s39 tester B3)
        notes = [*notes, dropped]
    if picked is not None and verdict.verdict != "escalate":
        best = picked.choice.pick
        for pl in candidates:
            if pl is picked:
                continue
            p = pl.choice.pick
            pl.rejected = (f"{'slower' if objective == 'time' else 'not chosen for ' + objective}"
                           f": best there {format_time(p['runtime_s'])}, {format_energy(p['energy_j'])}"
                           f" vs {format_time(best['runtime_s'])}, {format_energy(best['energy_j'])}"
                           f" on {picked.label}")
    command, said = picked_command(bundle, prep.offer.levels, program_command(
        bundle, prep.offer.levels), picked.choice.pick if picked else None, size)  # s30 O3
    refused = stale_command(bundle, prep.offer.levels, command)  # an older reader's (N6)
    notes = [*notes, *(n for n in (said, refused) if n)]
    rec = Recommendation(workload, size, objective, prep.all_places, picked, verdict,
                         _energy_label(bundle), clusters=clusters,
                         left_out=list(prep.offer.left_out), notes=list(prep.notes) + notes,
                         wall_per_runtime=getattr(prep.offer.levels, "wall_per_runtime", 1.0),
                         extrapolated=extrapolated,
                         program_command=command, command_refused=refused,
                         program_levels=prep.offer.levels,  # its --workdir, launcher (s29 A1, B4)
                         kernel_runs=None if prep.offer.levels is not None or picked is None
                         else kernel_runs(bundle, workload))  # its time limit counts (s47 N3)
    rec.picked = None if verdict.verdict == "escalate" else rec.picked
    if rec.picked is not None:  # measured faster, never offered: said, not silent (s39 B8)
        from hpcds1mpi.decide.oversubscribed import oversubscribed_line

        line = oversubscribed_line(bundle, workload, size, rec.picked.partition,
                                   float(rec.picked.choice.pick["runtime_s"]),
                                   prep.offer.threads)
        rec.left_out += [line] if line else []
    if rec.picked is not None or judged is not None:  # escalated too (s44 tester N2)
        from hpcds1mpi.decide.failed_layouts import every_run_failed_lines

        rec.left_out += every_run_failed_lines(
            bundle, workload, (rec.picked or judged).partition.name)
    if familiar_but_impossible and unfit:
        # Nothing runs here and measuring the same layouts again would fail too: the fix
        # said, not the generic "measure the job with sweep" (s44 tester N2).
        from hpcds1mpi.decide.recommendation import NO_CALIBRATION

        steps = calibration_steps(scores.subset(judged.partition.name), judged.partition,
                                  precisions=program_precisions) \
            if scores is not None and judged.partition.name in set(scores.cols["partition"]) \
            else []
        doomed = doomed_calibration_note(steps, failed_layouts(bundle, workload), workload)
        rec.notes.append(f"{NO_CALIBRATION}: {doomed or unfit}")
    if verdict.verdict == "escalate" and not familiar_but_impossible and not program_given \
            and (why := _nothing_to_calibrate(bundle, workload)):
        rec.notes.append(why)
    elif verdict.verdict == "escalate" and not familiar_but_impossible:
        target = judged.partition
        if scores is not None and target.name in set(scores.cols["partition"]):
            cal_scores = scores.subset(target.name)
        else:
            # Every node count the user allows: where one node cannot hold the job, the
            # calibration measures it on the fewest nodes that can.
            cal_scores = s1.score(bundle, workload, size, [target],
                                  s1.Constraints(max_nodes=constraints.max_nodes,
                                                 devices=constraints.devices,
                                                 precisions=constraints.precisions,
                                                 threads=constraints.threads,
                                                 max_ranks_per_node=constraints.max_ranks_per_node),
                                  uses_threads=prep.uses_threads)
        rec.calibration_steps = calibration_steps(cal_scores, target,
                                                  precisions=program_precisions)
        doomed = unfit_line(bundle, prep.offer.levels, target.usable_cores_per_node,
                            workload) and doomed_calibration_note(
            rec.calibration_steps, failed_layouts(bundle, workload), workload)
        if doomed:  # every step failed at every measured size: a known refusal (s43 K6)
            from hpcds1mpi.decide.recommendation import NO_CALIBRATION

            rec.calibration_steps = []
            rec.notes.append(f"{NO_CALIBRATION}: {doomed}")
        if rec.calibration_steps:
            rec.calibration_partition = target
            rec.calibration_cluster = clusters.get(judged.label)
            # Its runs are another machine (the partition is in the machine id) where the
            # model was not trained there: learn refuses them, train takes them.
            # Its CPU too: a trained partition's hardware on another CPU (or a generation its
            # record does not tell) is other hardware, whose runs learn refuses (s39 B6).
            trained = trained_partitions(bundle)
            rec.calibration_new_machine = (target.name not in trained or bool(
                cpu_differs(bundle, target))) if trained else None
            rec.calibration_trained_as = matching_partition(bundle, target) or ""  # s31 Q8
        elif not doomed:
            rec.notes.append(no_calibration_note(judged, cal_scores, size))
    return rec


def _nothing_to_calibrate(bundle, workload: str) -> str:
    """Why ``workload`` gets no calibration sweep where it is no kernel (nor a kernel deck)
    and the model holds no runs of it, else "": no command of it is known to measure. Its
    steps had been listed at fp32 and bf16 too, which a program's command without
    ``{precision}`` cannot run, beside a reason that never named the model's workloads
    (s41 tester A5)."""
    from hpcds1mpi.decide.recommendation import NO_CALIBRATION
    from hpcds1mpi.kernels import is_kernel
    from hpcds1mpi.records.kernel_options import kernel_of

    if workload in {str(w) for w in getattr(bundle, "workloads", [])} or is_kernel(
            kernel_of(workload) or workload):
        return ""
    return (f"{NO_CALIBRATION} for {workload!r}: it is not a built-in kernel and the model "
            "holds no runs of it, so no command of it is known; give your program's command "
            "with --program (\"./app --n {size}\"; the API's program=) to get a sweep "
            "of it, or measure it with hpcds1mpi sweep --command '...' --label "
            f"{workload}, then hpcds1mpi learn")
