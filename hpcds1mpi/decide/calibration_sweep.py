"""The calibration sweep of an escalated job: which few configurations to measure, or why none.

When the guard escalates a job, ``recommend`` guesses no settings; :func:`calibration_steps`
picks the configurations the model is least sure about and those that span the node's shape
(on the fewest nodes that hold the job, within the job's time budget), and
:func:`no_calibration_note` is the one line said instead when none fits in memory.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from hpcds1mpi.decide import system1 as s1
from hpcds1mpi.decide.calibration_folders import is_current_folder
from hpcds1mpi.decide.recommendation import NO_CALIBRATION, Place, format_memory

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.cluster import Partition

#: Configurations a calibration sweep measures at least: as many as a model needs ok runs
#: (``records.training.MIN_OK_RUNS``), so that the runs of a partition the model was not
#: trained on (another machine, which ``learn`` refuses) can train a model of their own; a
#: node of more shape (its precisions, GPUs) takes more, within the time budget.
CALIBRATION_STEPS = 4


def _fits_memory(cols: dict) -> np.ndarray:
    """Rows whose memory need is within the limit (a ``fail`` reason can hide ``memory``)."""
    need, limit = cols["mem_need_mb"], cols.get("mem_limit_mb")
    if limit is None:
        return cols["reason"] != "memory"
    return ~(np.isfinite(need) & (need > limit))


def calibration_steps(scores: s1.Scores, partition: "Partition", n: int = CALIBRATION_STEPS,
                      precisions: tuple[str, ...] | None = None) -> list:
    """A few informative configurations to measure, spanning the node's shape.

    From the configurations on this partition that fit in memory, on the fewest nodes that
    hold the job (calibration must be cheap; one node where it fits; the next node counts too
    where the fewest hold fewer than ``n`` configurations), preferring those the model does
    not expect to fail, and layouts a node is used in (threads that divide its cores, ranks
    per node that divide its cores or its GPUs: :func:`_regular_layouts`): the one with the
    widest relative runtime interval in each (device, precision) group, then the
    rules-of-thumb configuration (all cores as ranks, one thread) as an anchor, then on a GPU
    partition one step on the fewest GPUs and one of one rank per GPU, then the widest
    remaining ones up to ``n``. More than ``n`` only for
    those groups and anchors, and only while the job stays within its time budget
    (:func:`~hpcds1mpi.decide.calibration_time.within_budget`; what it left out is the
    result's ``left_out`` line). Before, a 128-core node of 8 GPUs got 4 steps of one rank of
    57 or 63 threads, at one GPU: the model's intervals there are equally wide, so rounding
    noise chose (s34 tester S5). None when no configuration fits in memory at any node
    count: every step would run out of it. ``precisions``: the ones the program's command can
    run (:func:`~hpcds1mpi.launch.program.program_precisions`: fp64 alone without
    ``{precision}``; None: any). Before, the steps were chosen at fp32 and bf16 too and the
    script ran the command's fp64 alone: 4 steps listed, 2 run, nothing said (s33 tester D10).
    """
    cols = scores.cols
    here = (cols["partition"] == partition.name) & _fits_memory(cols)
    if precisions is not None:
        here &= np.isin(cols["precision"], list(precisions))
    likely = here & np.isin(cols["reason"], ["", "deadline", "energy"])
    if not likely.any():  # all predicted to fail: those whose runs leave it open (s40 B6)
        from hpcds1mpi.decide.own_failures import undecided

        likely = here & undecided(cols)
    pool = likely if likely.any() else here
    if not pool.any():
        return []
    regular = pool & _regular_layouts(cols, partition)
    pool = regular if regular.any() else pool
    on = pool & (cols["nodes"] <= _fewest_nodes_holding(cols["nodes"][pool], n))
    idx = np.flatnonzero(on)
    runtime = np.where(cols["runtime_s"][idx] > 0, cols["runtime_s"][idx], np.nan)
    width = np.nan_to_num((cols["runtime_hi"][idx] - cols["runtime_lo"][idx]) / runtime,
                          nan=0.0)
    # The fewest nodes first, then the widest interval (a step on more nodes only fills up).
    order = idx[np.lexsort((-width, cols["nodes"][idx]))]
    chosen: list[tuple[int, str, int]] = []  # (row, why, rank: 0 kept longest for time)
    choice = s1.Choice(scores, None, order, order, "time")

    def add(i: int, why: str, rank: int) -> None:
        if i not in [c[0] for c in chosen]:
            chosen.append((int(i), why, rank))

    seen: set = set()
    for i in order:
        key = (cols["device"][i], cols["precision"][i])
        if key not in seen:
            w = (cols["runtime_hi"][i] - cols["runtime_lo"][i]) / max(cols["runtime_s"][i], 1e-12)
            add(i, f"widest runtime interval for {key[0]} {key[1]} (±{50 * w:.0f} %)",
                0 if key[0] not in {d for d, _ in seen} else 1)
            seen.add(key)
    rule = idx[(cols["threads"][idx] == 1) & (cols["device"][idx] == "cpu")]
    if len(rule):  # on the fewest nodes, as the widest ones are
        add(rule[np.lexsort((-cols["ranks_per_node"][rule], cols["nodes"][rule]))[0]],
            "rules-of-thumb anchor: every core a rank, one thread", 0)
    for i, why in _gpu_anchors(cols, idx, partition, [c[0] for c in chosen]):
        add(i, why, 0)
    for i in order:
        if len(chosen) >= n:
            break
        add(i, "wide runtime interval", 2)
    # here, not at the top: it pulls in the script renderer, which an answer without a
    # calibration never needs (10 ms of a cold recommend's import: s31 speed benchmark)
    from hpcds1mpi.decide.calibration_time import PredictedStep, measuring_for, within_budget

    measuring = measuring_for(scores.workload)  # a program's step launches it 3-10 times
    steps = [PredictedStep(choice.config(i), why, float(cols["runtime_hi"][i]), measuring)
             for i, why, _ in chosen]
    return within_budget(steps, [rank for _, _, rank in chosen], n)


def _regular_layouts(cols: dict, partition: "Partition") -> np.ndarray:
    """Rows whose layout a node is used in: threads that divide the node's cores, and ranks
    per node that divide its cores (a GPU row's: its cores or its GPUs). A 128-core node's
    model, unsure alike everywhere, chose 57 and 63 threads, which no job runs and which
    tell the model nothing of the node's shape (s34 tester S5)."""
    cores = max(partition.usable_cores_per_node, 1)
    gpus = partition.gpus_per_node or 0
    ranks, threads = cols["ranks_per_node"], cols["threads"]
    fits_gpus = (cols["device"] == "gpu") & (gpus % np.maximum(ranks, 1) == 0) if gpus \
        else np.zeros(len(ranks), dtype=bool)
    return (cores % np.maximum(threads, 1) == 0) & ((cores % np.maximum(ranks, 1) == 0)
                                                     | fits_gpus)


def _gpu_anchors(cols: dict, idx: np.ndarray, partition: "Partition",
                 chosen: list[int]) -> list[tuple[int, str]]:
    """The GPU steps a model of a GPU node needs besides the widest: one on the fewest GPUs
    that hold the job and one of one rank per GPU (every GPU of the node), each with the
    threads nearest the node's cores per GPU; none a chosen step already is (s34 tester S5:
    every step ran on one GPU of 8)."""
    gpus = partition.gpus_per_node or 0
    gpu = idx[cols["device"][idx] == "gpu"]
    if not gpus or not len(gpu):
        return []
    share = max(partition.usable_cores_per_node // gpus, 1)
    total = cols["nodes"] * cols["ranks_per_node"]
    has = [i for i in chosen if cols["device"][i] == "gpu"]
    anchors = []
    fewest = gpu[total[gpu] == total[gpu].min()]
    if not any(total[i] == total[gpu].min() for i in has):
        anchors.append((fewest, f"fewest GPUs that hold the job ({total[gpu].min()})"))
    every = gpu[cols["ranks_per_node"][gpu] == gpus]
    if len(every) and not any(cols["ranks_per_node"][i] == gpus for i in has):
        every = every[cols["nodes"][every] == cols["nodes"][every].min()]
        anchors.append((every, f"every GPU a rank: {gpus} ranks per node, one per GPU"))
    out = []
    for rows, why in anchors:  # nearest the share, then more threads
        off = np.abs(np.log(cols["threads"][rows] / share))
        out.append((int(rows[np.lexsort((-cols["threads"][rows], np.round(off, 9)))[0]]), why))
    return out


def program_precision_note(program: str | None) -> str:
    """The note that a calibration of ``program``'s command measures fp64 alone ("" where it
    takes ``{precision}``, or is no program), said with the steps (s33 tester D10)."""
    from hpcds1mpi.launch.program import program_precisions

    allowed = program_precisions(program)
    if not program or allowed is None:
        return ""
    return (f"note: the calibration steps run at {', '.join(allowed)} alone: the command takes "
            "no {precision}, so other precisions would run the same computation; put "
            "{precision} where the program reads it to measure them")


def _fewest_nodes_holding(nodes: np.ndarray, n: int) -> int:
    """The fewest node count up to which ``nodes`` (one per configuration) hold ``n``
    configurations, or the largest there is: a 2-core node offers 3 layouts of one program,
    and 3 ok runs train no model."""
    counts = np.unique(nodes)
    held = np.cumsum([np.count_nonzero(nodes == c) for c in counts])
    return int(counts[min(int(np.searchsorted(held, n)), len(counts) - 1)])


def no_calibration_note(place: Place, scores: s1.Scores | None, size: int) -> str:
    """Why an escalated job on ``place`` gets no calibration sweep, and what to do, one line."""
    on = np.flatnonzero(scores.cols["partition"] == place.partition.name) \
        if scores is not None else np.zeros(0, dtype=int)
    if len(on) == 0:
        return (f"{NO_CALIBRATION}: no configuration of {place.label} could be scored for "
                "this job; allow another partition (--partition)")
    cols = scores.cols
    need, limit = cols["mem_need_mb"], cols["mem_limit_mb"]
    i = on[np.nanargmin(need[on] / np.maximum(limit[on], 1e-9))]  # the nearest miss
    per = "GPU" if cols["device"][i] == "gpu" else "node"
    closest = s1.Choice(scores, None, [i], [i], "time").config(int(i)).label()
    return (f"{NO_CALIBRATION}: size {size} does not fit in memory on {place.label} at any "
            f"node count (the closest, {closest}, needs ~{format_memory(need[i])} per {per}; usable "
            f"{format_memory(limit[i])}), so every step would run out of memory; lower --size, or allow "
            "a partition with more memory (--partition)")


#: The script's note where reading options were given for a job that was not escalated
#: (``recommend --emit`` and the service's ``emit`` write the same script).
READING_NOT_USED = ("the reading options (--time-regex ...) apply to a calibration sweep only; "
                    "this job was not escalated, its script runs the program as given")


def calibration_measurement(levels, given: dict | None = None) -> tuple[dict, list[str]]:
    """How a calibration sweep reads a program: its earlier sweep's reading options (the time
    regex, ``--workdir``, ``--fail-regex``, ...: ``MEASURE_KEYS``), so that the new runs mean
    what the model's runs mean (a run that did not converge is failed in both, or in neither).

    Args:
        levels: the program's :class:`~hpcds1mpi.surrogates.levels.MeasuredLevels` in the
            bundle (None: a workload the bundle never measured as a program).
        given: options the user gave (``{"time_regex": ..., "fail_regex": ...}``, None for
            one not given); they win over the bundle's record.

    Returns:
        (the options, ``{key: value}`` of the ones used; the notes, one line each: options the
        bundle does not record and the user did not give, and given ones that differ from the
        record).
    """
    from hpcds1mpi.surrogates.levels import MEASURE_KEYS, recorded_measurement

    given = {k: v for k, v in (given or {}).items() if v is not None}
    known, unknown = recorded_measurement(levels)
    notes = []
    differ = [k for k in MEASURE_KEYS if k in given and k in known and given[k] != known[k]]
    if differ:
        notes.append(f"{_flags(differ)} differ{'s' if len(differ) == 1 else ''} from how the "
                     "model's runs were measured; learn would mix the two: give the same, or "
                     "keep these runs in a separate model")
    missing = [k for k in unknown if k not in given]
    if missing:
        whose = ("the model never measured this program" if levels is None
                 else "the model's bundle does not record them")
        notes.append(f"the steps measure without {_flags(missing)} ({whose}); if its sweep used "
                     "any, pass the same to recommend, or the new runs measure something else")
    options = {k: v for k, v in {**known, **given}.items() if v}
    workdir = options.get("workdir")
    if workdir and not is_current_folder(workdir):  # a missing folder measures nothing
        import os.path

        # An absolute one is itself wherever the job is submitted from (s29 V1-2).
        where = "" if os.path.isabs(workdir) else ", from the folder you submit in"
        notes.append(f"each step runs in --workdir {workdir!r} (placeholders filled per "
                     f"step{where}): " + ("its --setup prepares them (a missing one is "
                     "created for it)" if options.get("setup") else "create those folders, "
                     "with the program's input, before you submit"))
    if levels is not None:  # the steps launch it as its sweep did (s29 V2-5); {}: not recorded
        from hpcds1mpi.launch.script_launcher import LAUNCHED_WITH

        launch, pooled = _steps_launch(levels.launched_with)
        options[LAUNCHED_WITH] = launch
        notes += [pooled] if pooled else []
    return options, notes


def _steps_launch(recorded: dict | None) -> tuple[dict, str]:
    """(the launch the steps repeat, {} where none is recorded; the note where the program's
    pooled sweeps ran under several launchers, "" otherwise): of several, the one of the most
    runs, marked :data:`~hpcds1mpi.launch.script_launcher.POOLED` (s31 F4: the several form
    went on as it was, which the script ignored, so the steps took the default launcher
    without a word; recommend's script chooses alike, ``decide.measured_run``)."""
    from hpcds1mpi.launch.script_launcher import POOLED, measured_cluster
    from hpcds1mpi.surrogates.program_launcher import SEVERAL, launch_for, launcher_said

    if not recorded or SEVERAL not in recorded:
        return recorded or {}, ""
    launch, _ = launch_for(recorded, "")  # no configuration of its own: the most runs
    listed = ", ".join(f"{launcher_said(e)} ({e['runs']} runs)" for e in recorded[SEVERAL])
    note = (f"the pooled sweeps launched the program with {len(recorded[SEVERAL])} launchers "
            f"({listed}); the steps launch with {launcher_said(launch)}, which ran the most "
            "runs, unless a cluster file names a launcher")
    if measured_cluster(None, "slurm", launch)[1] is None:
        note += ("; it is not found here, or is what the script writes anyway (set launcher / "
                 "mpiexec in a --cluster file to choose one)")
    return {**launch, POOLED: True}, note


def _flags(keys) -> str:
    return ", ".join("--" + k.replace("_", "-") for k in keys)
