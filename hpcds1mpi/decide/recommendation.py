"""A recommendation and how it is shown: a table, JSON, or the batch script that runs it.

:func:`hpcds1mpi.decide.recommend.recommend` fills a :class:`Recommendation` (one
:class:`Place` per partition considered, the pick, the guard's verdict, the calibration sweep
when escalated); this module turns it into what ``hpcds1mpi recommend`` prints or writes. The
batch script itself is rendered by :mod:`hpcds1mpi.launch.scripts`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from hpcds1mpi.decide.quantity_text import (  # noqa: F401  (re-exported: callers import them here)
    format_energy, format_memory, format_time)
from hpcds1mpi.decide.recommendation_rows import clean as _clean
from hpcds1mpi.decide.recommendation_rows import json_row as _json_row
from hpcds1mpi.decide.recommendation_rows import row as _row
from hpcds1mpi.decide.run_scatter import run_scatter
from hpcds1mpi.errors import ConfigError

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.cluster import Cluster, Partition
    from hpcds1mpi.decide.guard import Verdict
    from hpcds1mpi.decide.kernel_job_time import KernelRuns
    from hpcds1mpi.decide.system1 import Choice
    from hpcds1mpi.surrogates.levels import MeasuredLevels

#: Alternatives shown after the pick (table and JSON).
TOP_ALTERNATIVES = 5


@dataclass
class Place:
    """One partition considered: its pick (if any) or why it was rejected."""

    cluster: str
    partition: Partition
    choice: Choice | None = None
    verdict: Verdict | None = None
    rejected: str = ""

    @property
    def label(self) -> str:
        return f"{self.cluster}/{self.partition.name}" if self.cluster else self.partition.name


@dataclass
class Recommendation:
    """What ``recommend`` answers for one job.

    Attributes:
        workload, size, objective: the question.
        places: every partition considered, in the order given.
        picked: the place the job should run on; None when escalated or nothing fits.
        verdict: the guard's verdict where the job would run.
        energy_label: where the energy predictions come from (``modelled``, ``measured (...)``).
        calibration_steps: the configurations to measure when escalated
            (:class:`~hpcds1mpi.launch.calibration_script.CalibrationStep`).
        calibration_partition / calibration_cluster: where that sweep runs.
        clusters: place label -> its cluster (accounts, modules for the script).
        left_out: knob levels not offered and why, one line each (a program is offered only
            what it was measured with: ``decide/offer.py``).
        wall_per_runtime: measured launch wall time per predicted second, for a program whose
            model learned its own reported time (``surrogates/levels.py``); a job's time
            limit allows for it. 1 for kernels and programs timed by their launch.
        notes: how the answer was reached, one line each (a partition predicted under the
            name of the trained partition with its hardware: ``decide/recommend_prepare.py``).
        extrapolated: the pick's knob levels its workload was never measured at, one line
            each (more nodes than measured, a thread count never run, ...); such a pick is at
            most ``confirm``. Empty when the pick is within the measured levels.
        program_command: a program's command line as its sweep ran it (``{size}`` kept:
            ``surrogates/levels.MeasuredLevels.command``), what a script runs without
            ``--program``; "" for a kernel, a job-log label or a workload never measured.
        program_levels: a program's levels in the bundle (its ``--workdir`` and launcher,
            which its script repeats: ``decide/measured_run.py``); None for a kernel.
        command_refused: why ``program_command`` cannot be what its runs ran, which refuses
            a script of it without ``--program`` (``decide/stale_command.py``); "": none.
        kernel_runs: what a kernel script's run spends (``decide/kernel_job_time.py``).
    """

    workload: str
    size: int
    objective: str
    places: list[Place]
    picked: Place | None
    verdict: Verdict
    energy_label: str = "modelled"
    calibration_steps: list = field(default_factory=list)
    calibration_partition: Partition | None = None
    calibration_cluster: Cluster | None = None
    #: whether the calibration runs are of a machine the model was not trained on (None: the
    #: bundle names no partitions, so not known)
    calibration_new_machine: bool | None = None
    #: the trained partition of the calibration partition's hardware ("" when none): a new
    #: name on trained hardware is said as that, not as an untrained machine (s31 tester Q8)
    calibration_trained_as: str = ""
    clusters: dict = field(default_factory=dict)
    left_out: list = field(default_factory=list)
    wall_per_runtime: float = 1.0
    notes: list = field(default_factory=list)
    extrapolated: list = field(default_factory=list)
    program_command: str = ""
    program_levels: MeasuredLevels | None = None
    command_refused: str = ""
    kernel_runs: KernelRuns | None = None


#: The first words of the note :func:`hpcds1mpi.decide.recommend.conclude` adds when an escalated job gets no
#: calibration sweep (:func:`no_calibration`).
NO_CALIBRATION = "no calibration sweep"


def no_calibration(rec: Recommendation) -> str | None:
    """The one line saying why an escalated job got no calibration sweep (and what to do), or
    None when it got one or was not escalated."""
    if rec.picked is not None or rec.calibration_steps:
        return None
    return next((note for note in rec.notes if note.startswith(NO_CALIBRATION)), None)


# --------------------------------------------------------------------------------------------
# Output



def _config_text(cfg) -> str:
    return (f"{cfg.nodes} node{'s' if cfg.nodes > 1 else ''} x {cfg.ranks_per_node} "
            f"rank{'s' if cfg.ranks_per_node > 1 else ''} x "
            f"{cfg.threads} thread{'s' if cfg.threads > 1 else ''}, {cfg.device}, {cfg.precision}")


def to_dict(rec: Recommendation) -> dict:
    """The recommendation as plain JSON-able data (what ``--json`` prints)."""
    out = {
        "workload": rec.workload, "size": rec.size, "objective": rec.objective,
        "verdict": rec.verdict.as_dict(), "energy": rec.energy_label,
        "pick": None, "alternatives": [], "front": [], "partitions": [],
    }
    for pl in rec.places:
        reason = pl.rejected or ("" if pl is rec.picked else  # every rejection says why
                                 f"not picked: the verdict is {rec.verdict.verdict}")
        entry = {"partition": pl.partition.name, "cluster": pl.cluster,
                 "status": "picked" if pl is rec.picked else "rejected", "reason": reason}
        if pl.choice is not None and pl.choice.index is not None:
            entry["best"] = _json_row(pl.choice, pl.choice.index)
        out["partitions"].append(entry)
    if rec.picked is not None:
        ch = rec.picked.choice
        out["pick"] = {"partition": rec.picked.partition.name, "cluster": rec.picked.cluster,
                       **_row(ch, ch.index), "confidence": ch.confidence,
                       "confidence_calibrated": ch.calibrated, "spread": ch.spread,
                       "margin": ch.margin, "extrapolated": list(rec.extrapolated)}
        scatter = run_scatter(ch, format_time)
        if scatter is not None:  # only where it widens the model's interval
            out["pick"]["single_run"] = scatter
        out["alternatives"] = [_json_row(ch, i) for i in ch.ranking[1:1 + TOP_ALTERNATIVES]]
        out["front"] = [_json_row(ch, i, pick=bool(i == ch.index)) for i in ch.front]
    if rec.calibration_steps:
        out["calibration"] = [{"config": s.config.as_dict(), "label": s.config.label(),
                               "reason": s.reason} for s in rec.calibration_steps]
    out["left_out"] = list(rec.left_out)
    if rec.left_out:  # the console shows the table's heading (s43: it had hard-coded one)
        from hpcds1mpi.decide.offer import offer_heading

        out["left_out_heading"] = offer_heading(rec.left_out).rstrip(":")
    if rec.notes:  # only where there are: every other answer stays as it was
        out["notes"] = list(rec.notes)
    return _clean(out)


#: Rejections that only the user's constraints caused (``decide/recommend._rejection``).
CONSTRAINT_REJECTIONS = {"cannot meet the deadline": "--deadline",
                         "over the energy budget": "--energy-budget"}


def escalation_places(rec: Recommendation) -> list[str]:
    """Each turned-down partition's line (``label: why``) of an escalated ``rec``: where the
    table prints them below the verdict's "see the lines below", an answer without the table
    (``advise``, ``/v1/predict``, ``Model.predict``) adds them to the reasons (s31 tester
    Q8); [] when ``rec`` is not escalated."""
    if rec.verdict.verdict != "escalate":
        return []
    return [f"{pl.label}: {pl.rejected}" for pl in rec.places if pl.rejected]


def unmet_constraints(rec: Recommendation) -> str | None:
    """Why nothing can be recommended because of ``--deadline`` / ``--energy-budget``, as one
    line naming each partition's reason and what to relax; None when something fits, or when
    no partition was turned down by those constraints."""
    if any(pl.choice is not None and pl.choice.index is not None for pl in rec.places):
        return None
    options = sorted({opt for pl in rec.places for text, opt in CONSTRAINT_REJECTIONS.items()
                      if pl.rejected.startswith(text)})
    if not options:
        return None
    why = "; ".join(f"{pl.label}: {pl.rejected}" for pl in rec.places if pl.rejected)
    return (f"no configuration meets {' and '.join(options)} ({why}); relax "
            f"{' or '.join(options)}")


def _measured_here(r: dict) -> str:
    """" measured (N runs at this size)" where the pick's values are its runs (s31 QA)."""
    n = r["measured_runs"]
    return f" measured ({n} run{'s' if n != 1 else ''} at this size)" if n > 0 else ""


def format_table(rec: Recommendation) -> str:
    """A readable report: the pick, intervals, confidence, verdict, alternatives, the front,
    and one line per rejected partition."""
    lines = [f"hpcds1mpi recommend: {rec.workload}, size {rec.size}, objective {rec.objective}"]
    v = rec.verdict
    energy_note = f"energy {rec.energy_label}"
    if rec.picked is not None:
        ch = rec.picked.choice
        r = _row(ch, ch.index)
        lines += [
            f"✓ {rec.picked.label}: {_config_text(ch.config())}",
            f"  predicted runtime {format_time(r['runtime_s'])} ({format_time(r['runtime_lo'])}–"
            f"{format_time(r['runtime_hi'])}){_measured_here(r)}   "
            f"energy {format_energy(r['energy_j'])} "
            f"({format_energy(r['energy_lo'])}–{format_energy(r['energy_hi'])}, {rec.energy_label})",
            f"  confidence {ch.confidence:.2f} ({'calibrated' if ch.calibrated else 'uncalibrated'})"
            f"   verdict {v.verdict}",
        ]
        scatter = run_scatter(ch, format_time)
        if scatter is not None:  # the same line as the JSON's and the console's
            lines.insert(-1, f"  {scatter['line']}")
    else:
        lines.append(f"! verdict {v.verdict}: no settings guessed")
    for reason in v.reasons:
        lines.append(f"  - {reason}")
    lines += [f"  note: {note}" for note in rec.notes]
    for pl in rec.places:
        if pl is not rec.picked and pl.rejected:
            lines.append(f"✗ {pl.label}: {pl.rejected}")
    if rec.picked is not None:
        ch = rec.picked.choice
        many = len(set(ch.scores.cols["partition"])) > 1
        width = max([len(str(p)) for p in set(ch.scores.cols["partition"])] + [9]) if many else 0

        def table_line(mark: str, r: dict) -> str:
            part = f"{r['partition']:<{width}} " if many else ""
            return (f"  {mark:2}{part}{r['nodes']:>5} {r['ranks_per_node']:>5} {r['threads']:>4} "
                    f"{r['device']:>4} {r['precision']:>5} {format_time(r['runtime_s']):>10} "
                    f"{format_energy(r['energy_j']):>10}"
                    f"{'  unmeasured' if r['unmeasured'] else ''}")  # s31 tester Q5

        header = (f"  {'':2}{'partition':<{width}} " if many else f"  {'':2}") + (
            f"{'nodes':>5} {'ranks':>5} {'thr':>4} {'dev':>4} {'prec':>5} "
            f"{'runtime':>10} {'energy':>10}")
        shown = [_row(ch, i) for i in ch.ranking[:1 + TOP_ALTERNATIVES]]
        legend = "; unmeasured = a level never measured, extrapolated" if any(
            r["unmeasured"] for r in shown) else ""
        lines += ["", f"Top alternatives ({energy_note}{legend}):", header]
        for k, r in enumerate(shown):
            lines.append(table_line("*" if k == 0 else "", r))
        points = f"{len(ch.front)} point{'s' if len(ch.front) != 1 else ''}"
        off = [] if ch.index in ch.front else [ch.index]  # kept ahead of a never-measured one
        last = ", listed last: it is off the front, for the reason given above" if off else ""
        lines += ["", f"Runtime–energy front ({points}, * = pick{last}):", header]
        for i in [*ch.front, *off]:
            lines.append(table_line("*" if i == ch.index else "", _row(ch, i)))
    if rec.left_out:
        from hpcds1mpi.decide.offer import offer_heading

        lines += ["", offer_heading(rec.left_out)]
        lines += [f"  - {line}" for line in rec.left_out]
    if rec.calibration_steps:
        then = {True: "hpcds1mpi train on them: learn refuses runs of hardware the model was "
                      "not trained on (another partition or CPU)",
                False: "hpcds1mpi learn"}.get(rec.calibration_new_machine,
                                              "hpcds1mpi learn, or train on a partition the "
                                              "model was not trained on")
        part, twin = rec.calibration_partition, rec.calibration_trained_as
        if rec.calibration_new_machine and part is not None and twin and twin != part.name:
            then = (f"hpcds1mpi train on them: learn takes only the trained partition names, "
                    f"and {part.name} has {twin}'s hardware under another name")
        from hpcds1mpi.config import MIN_OK_RUNS

        # train refuses fewer (s39 tester B6: 3 layouts is all a 2-core node has)
        if rec.calibration_new_machine and len(rec.calibration_steps) < MIN_OK_RUNS:
            then += (f"; train needs at least {MIN_OK_RUNS} ok runs and these are "
                     f"{len(rec.calibration_steps)}: measure them at a second size too, into "
                     "the same file")
        from hpcds1mpi.kernels import declaring

        how = "measure these"
        if (kernel := declaring(rec.workload)) and kernel != rec.workload:  # s41 tester D1
            how += (f" with sweep --plan FILE, its [[kernel]] name = \"{kernel}\" with the "
                    f"options of {rec.workload} in extra")
        lines += ["", f"Calibration sweep ({how}, then {then}):"]
        for s in rec.calibration_steps:
            lines.append(f"  {s.config.label():<28} {s.reason}")
    return "\n".join(lines)


def script_program(rec: Recommendation, program):
    """(the command a script of ``rec`` runs, a note or None): ``program`` when given, its
    values of the measured command's placeholders the pick's, or another program said
    (:func:`~hpcds1mpi.decide.given_program.given_program`, s36 tester Q1, Q2); for a
    program swept with ``sweep --command``, the command its sweep ran, said in the note; None
    for a kernel (its ``hpcds1mpi run`` line) or where nothing was recorded
    (:func:`emit_script` then refuses what it cannot run)."""
    if program is not None and rec.picked is not None and rec.program_command:
        from hpcds1mpi.decide.given_program import given_program

        program, said = given_program(program, rec.program_command,
                                      rec.picked.choice.config(), rec.size)
        return program, said or None
    if program is not None or not rec.program_command:
        return program, None
    if rec.command_refused:  # a script of it would fail in the job (s30 tester N6)
        raise ConfigError(f"no job script: {rec.command_refused}")
    from hpcds1mpi.kernels import is_kernel

    if is_kernel(rec.workload):
        return None, None
    return rec.program_command, (
        f"the script runs {rec.program_command!r}, the command {rec.workload}'s sweep "
        "measured (recorded in the model); give --program to run another")


def emit_script(rec: Recommendation, scheduler: str, program: str | None, *,
                job_name: str | None = None, output: str | None = None,
                exclusive: bool = False, telemetry: str = "calibration.h5",
                time_limit_s: float | None = None,
                time_limit_from: str = "proposed from the user's job history",
                measure: dict | None = None, notes: tuple | list = (),
                default_queue: bool = False) -> str:
    """The batch script for the pick, or the calibration sweep when escalated.

    ``measure``: how the calibration sweep reads a program (its earlier sweep's options,
    :func:`~hpcds1mpi.decide.calibration_sweep.calibration_measurement`). ``notes``: comment
    lines for the script. ``default_queue``: no partition directive (:func:`default_queue_note`).

    ``time_limit_s``: the job's time limit (a walltime proposed from the user's history,
    :mod:`hpcds1mpi.decide.walltime`, or the user's own), rounded up to a minute; None: from
    the predicted upper runtime; NO_TIME_LIMIT: none. ``time_limit_from`` says where it came
    from, in the script's comment (for none, the whole line). The sweep keeps its own limits."""
    import functools

    from hpcds1mpi.decide.calibration_folders import step_folders
    from hpcds1mpi.decide.calibration_time import calibration_time_limit
    from hpcds1mpi.decide.job_names import default_job_name
    from hpcds1mpi.launch import calibration_script, directives, scripts

    name = job_name or default_job_name(rec.workload)  # the name --history looks for too
    if rec.picked is None:
        if why := no_calibration(rec):  # the specific line (memory, ...) before the generic one
            raise ConfigError(why)
        if not rec.calibration_steps or rec.calibration_partition is None:
            raise ConfigError("nothing to run: no allowed partition can run this job (recommend "
                              "without --emit says why); relax the constraints you gave, allow "
                              "another partition, or measure the job with hpcds1mpi sweep")
        if scheduler != "slurm":
            raise ConfigError(
                f"no {scheduler} script: this job escalated (no settings guessed) and its "
                "calibration sweep is written for Slurm only (srun steps); drop --emit to list "
                "the configurations to measure, measure them with hpcds1mpi sweep in a "
                f"{scheduler} job, then hpcds1mpi "
                f"{'train' if rec.calibration_new_machine else 'learn'}")
        limit, how = calibration_time_limit(rec.calibration_steps, rec.verdict.checks) \
            if time_limit_s is None else _given_limit(time_limit_s, time_limit_from)
        return calibration_script.render_calibration(  # its limit sized and said: s31 tester Q9
            rec.calibration_steps, rec.calibration_partition, rec.workload, rec.size,
            cluster=rec.calibration_cluster, program=program, telemetry=telemetry,
            job_name=directives.job_name_with(name, calibration_script.CALIBRATION_SUFFIX),
            output=output,
            reason="; ".join(rec.verdict.reasons)[:300] or "escalated", measure=measure,
            time_limit=limit, notes=[*notes, how], default_queue=default_queue,
            new_machine=rec.calibration_new_machine,
            folders=functools.partial(step_folders, size=rec.size, measure=measure))
    ch = rec.picked.choice
    r = _row(ch, ch.index)
    runs = rec.kernel_runs if program is None else None  # a --program: one run (s47 N3)
    if program is None:
        from hpcds1mpi.kernels import is_kernel
        from hpcds1mpi.records.kernel_options import kernel_of, no_run_line, run_options

        kernel, options = rec.workload, []
        if kernel_of(rec.workload) and run_options(rec.workload) is not None:  # its deck (B13)
            kernel, options = kernel_of(rec.workload), run_options(rec.workload)
        if not is_kernel(kernel):  # `hpcds1mpi run` of no kernel fails in the job
            if why := no_run_line(rec.workload):  # options the script cannot pass (B13)
                raise ConfigError(why)
            raise ConfigError(
                f"no job script for {rec.workload!r}: it is not a built-in kernel and the model "
                "recorded no command of it; give your program's command with --program "
                "\"./app --n {size}\"")
        program = f"hpcds1mpi run {kernel} --size {rec.size} {' '.join([*options, ''])}" \
                  "--threads {threads} --device {device} --precision {precision}"
    from hpcds1mpi.decide.measured_run import measured_run

    run = measured_run(rec, scheduler, program)  # its sweep's folder and launcher (s29 A1, B4)
    program = run.program or program  # a bare name as the file the sweep ran (s41 tester D7)
    if time_limit_s is None:  # plus the sweep's --setup, which the job runs first (s30 O1)
        from hpcds1mpi.decide.launch_time_limit import one_launch_limit

        limit, basis = one_launch_limit(r["runtime_hi"], rec.wall_per_runtime, run.setup_s,
                                        run.setup_from, kernel=runs)  # as advise (s40 D6)
        whence = f"; time limit {directives.format_time_limit(limit, scheduler)}: {basis}"
    else:
        limit, whence = _given_limit(time_limit_s, time_limit_from)
        whence = f"; {whence}"
    cfg = ch.config()
    # Host memory per node: a GPU row's need is per GPU (one rank per GPU), a CPU row's per node.
    need = r["mem_need_mb"] * (cfg.ranks_per_node if cfg.device == "gpu" else 1)
    job = directives.BatchJob(
        config=cfg, partition=rec.picked.partition, program=program,
        memory_mb=need if math.isfinite(need) and need > 0 else None,
        time_limit_s=limit,
        cluster=run.cluster, job_name=name, output=output,
        exclusive=exclusive, size=rec.size,
        summary=(f"recommended by hpcds1mpi: {_config_text(ch.config())}; predicted "
                 f"{format_time(r['runtime_s'])} ({format_time(r['runtime_lo'])}–"
                 f"{format_time(r['runtime_hi'])}); confidence {ch.confidence:.2f}; verdict "
                 f"{rec.verdict.verdict}{whence}"))
    from hpcds1mpi.launch.program import size_not_given_note

    swept = getattr(rec.program_levels, "measured_with", None) or {}  # the script repeats them
    size_note = size_not_given_note(program, rec.size, rec.program_command,
                                    carried_by=(swept.get("setup"), swept.get("workdir")))
    # why it is not auto, as the calibration script says why it escalated (s40 tester B11)
    why = [f"verdict {rec.verdict.verdict}: {reason}" for reason in rec.verdict.reasons]
    notes = [*why, *notes, *run.notes, *([size_note] if size_note else [])]
    return scripts.render(job, scheduler, default_queue=default_queue,
                          notes=list(dict.fromkeys(notes)), folder=run.folder, hint=run.hint,
                          setup=run.setup, inputs=run.inputs)


def _given_limit(seconds: float, whence: str) -> tuple[int, str]:
    """(the script's limit, what its comment says of it) for a given limit; ``whence`` is
    the whole line where it is :data:`~hpcds1mpi.launch.directives.NO_TIME_LIMIT` (J1)."""
    from hpcds1mpi.launch import directives

    if seconds == directives.NO_TIME_LIMIT:
        return directives.NO_TIME_LIMIT, whence
    return directives.given_time_limit_s(seconds), f"time limit {whence}"


def default_queue_note(rec: Recommendation, scheduler: str) -> str:
    """The one line said when a script's place is this machine (no cluster file, no
    allocation: :func:`hpcds1mpi.places.is_this_machine`): its partition name is made up, so
    the script names none and the scheduler's default partition takes the job."""
    from hpcds1mpi.places import default_queue_note as note

    return note(rec.picked.partition if rec.picked is not None else rec.calibration_partition,
                scheduler)
