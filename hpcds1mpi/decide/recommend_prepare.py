"""A ``recommend`` question checked and set up before System 1 scores it: :func:`prepare` ->
:class:`Prepared` (the first of :func:`~hpcds1mpi.decide.recommend.recommend`'s steps, shared
with ``recommend_batch.recommend_many``). A bundle trained on a job table is refused
(:func:`refuse_job_bundle`, for advise and mobo too), the offer is read and a program that
cannot use threads is offered one (:func:`_one_thread_if_unthreaded`), and each allowed place is
kept, or rejected with its one-line reason (failed here before, no GPUs, hardware never
measured). :func:`program_command`: the command line a program's sweep ran.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Sequence

from hpcds1mpi.decide import guard as guard_mod
from hpcds1mpi.decide import offer as offer_mod
from hpcds1mpi.decide import system1 as s1
from hpcds1mpi.decide.confidence import ConfidenceModel
from hpcds1mpi.decide.failure_history import FailureHistory, default_history_path
from hpcds1mpi.decide.recommendation import Place
from hpcds1mpi.decide.trained_hardware import gpu_not_compared, matching_partition
from hpcds1mpi.errors import ConfigError

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.cluster import Cluster, Partition


@dataclass
class Prepared:
    """One question checked and set up for System 1: what :func:`prepare` finds before the
    scoring, and what :func:`~.recommend.choose_places` and :func:`~.recommend.conclude` add
    after it (shared by :func:`~.recommend.recommend` and ``recommend_batch.recommend_many``,
    which scores many at once).

    Attributes:
        usable: the places System 1 scores (familiar hardware, no failure there before).
        notes: one line per usable place predicted under another (trained) partition's name.
        parts / constraints / uses_threads: what ``system1.score`` is asked.
        scores, picked, candidates, judged: set by :func:`~.recommend.choose_places`.
    """

    bundle: object
    workload: str
    size: int
    objective: str
    constraints: s1.Constraints
    offer: object
    ref: object
    calibration: object
    conf_model: ConfidenceModel
    all_places: list
    clusters: dict
    usable: list
    notes: list = field(default_factory=list)
    scores: s1.Scores | None = None
    picked: Place | None = None
    candidates: list = field(default_factory=list)
    judged: Place | None = None

    @property
    def parts(self) -> list:
        return [pl.partition for pl in self.usable]

    @property
    def uses_threads(self) -> bool:
        return self.offer.uses_threads


def refuse_job_bundle(bundle, command: str = "recommend") -> None:
    """Refuse, in one line, a bundle trained on a job table: it predicts logged jobs from
    their requests, and has no configurations for ``command`` to compare.

    Raises:
        ModelError: ``bundle`` was trained with ``train --jobs``.
    """
    from hpcds1mpi.errors import ModelError

    spec = (getattr(bundle, "manifest", None) or {}).get("feature_spec") or {}
    # What a job requested (time limit, memory, cores): features only a job table gives.
    if isinstance(spec, dict) and spec.get("request_columns"):
        raise ModelError(
            f"this bundle was trained on a job table (train --jobs): a job-log model of "
            f"runtime, memory and failure from what jobs requested, for Python use "
            f"(surrogates.bundle.load_bundle), not a layout model, so {command} cannot use it; "
            f"for layouts train on sweep telemetry (train --telemetry FILE.h5 --out DIR), for "
            f"a walltime from the job table use recommend --history TABLE")


def prepare(bundle, workload: str, size: int,
            places: Sequence[tuple["Cluster | None", "Partition"]], *,
            objective: str = "time", constraints: s1.Constraints | None = None,
            history: FailureHistory | None = None, model_dir=None,
            device: str | None = None, ref=None, calibration=None,
            conf_model: ConfidenceModel | None = None) -> Prepared:
    """:func:`~.recommend.recommend`'s checks and set-up before System 1 scores (its
    arguments; ``ref``, ``calibration`` and ``conf_model`` when the caller loaded them for many
    questions).

    Raises:
        ConfigError: the question's one line (objective, size, device, partitions, offer).
    """
    refuse_job_bundle(bundle)
    if objective not in s1.OBJECTIVES:
        raise ConfigError(f"--objective must be one of {', '.join(s1.OBJECTIVES)}")
    if not isinstance(size, int) or isinstance(size, bool) or size <= 0:
        raise ConfigError(f"--size must be a positive integer, got {size!r}")
    if not places:
        raise ConfigError("no partition to choose from; check --cluster / --partition")
    constraints = constraints or s1.Constraints()
    if device is not None:
        if device not in ("cpu", "gpu"):
            raise ConfigError(f"--device must be cpu or gpu, got {device!r}")
        if device == "gpu" and not any(p.gpus_per_node for _, p in places):
            names = ", ".join(p.name for _, p in places)
            raise ConfigError(f"GPU asked but no allowed partition ({names}) has GPUs; use "
                              "--device cpu or a GPU partition")
    # A kernel is offered what it declares; a program only the levels it was measured with.
    parts = [p for _, p in places]
    offer = offer_mod.offer_for(bundle, workload, parts, device, nodes_offered=offer_mod.
                                most_nodes_offered(parts, constraints.max_nodes))
    offer_mod.check_offer(offer, workload)
    _one_thread_if_unthreaded(offer, bundle)
    history = history or FailureHistory(default_history_path())
    ref = ref if ref is not None else guard_mod.reference(bundle)
    if calibration is None:
        calibration = guard_mod.load_calibration(bundle, model_dir, ref)
    offer = offer_mod.extend_where_familiar(offer, bundle, workload, size, parts, ref,
                                            calibration)
    # a program whose ranks cannot be one job: no more nodes than measured (s39 tester A2)
    max_nodes = min((n for n in (constraints.max_nodes, offer.max_nodes) if n), default=None)
    constraints = s1.Constraints(
        max_nodes, constraints.deadline_s, constraints.energy_budget_j,
        devices=offer.devices if offer.devices is not None else constraints.devices,
        precisions=offer.precisions if offer.precisions is not None
        else constraints.precisions,
        threads=offer.threads if offer.threads is not None else constraints.threads,
        max_ranks_per_node=offer.max_ranks_per_node if offer.max_ranks_per_node is not None
        else constraints.max_ranks_per_node)
    if conf_model is None:
        conf_model = ConfidenceModel.load(model_dir)
    all_places = [Place(c.name if c is not None else "", p) for c, p in places]
    clusters = {pl.label: c for pl, (c, _) in zip(all_places, places)}
    usable: list[Place] = []
    notes: list[str] = []
    for pl in all_places:
        if constraints.devices != ["cpu"]:
            notes += [f"partition {pl.label}: {n}" for n in pl.partition.hardware_notes()]
        failed = history.failed_on(workload, size, pl.partition.name, pl.cluster)
        if failed:
            pl.rejected = (f"this job failed here before ({failed.get('status', 'failed')} at size "
                           f"{failed.get('size')}, {failed.get('time', '')}); moving on")
            continue
        if constraints.devices == ["gpu"] and pl.partition.gpus_per_node < 1:
            pl.rejected = "no GPUs"
            continue
        trained = matching_partition(bundle, pl.partition)
        if trained is None:
            pl.verdict = guard_mod.judge(bundle, workload, size, pl.partition, calibration, ref)
            pl.rejected = "never measured hardware like this; run a calibration sweep there"
            continue
        if trained != pl.partition.name:  # System 1 predicts it so (system1.model_table)
            same = ("same cores, memory and GPUs per node; the GPU itself not compared"
                    if gpu_not_compared(bundle, pl.partition) else "same hardware")
            notes.append(f"partition {pl.label}: predicted as trained partition {trained} "
                         f"({same})")
        usable.append(pl)
    names = [pl.partition.name for pl in usable]
    if len(set(names)) != len(names):
        raise ConfigError("two allowed partitions share a name; pass --partition to choose")
    return Prepared(bundle, workload, size, objective, constraints, offer, ref, calibration,
                    conf_model, all_places, clusters, usable, notes)


def _one_thread_if_unthreaded(offer, bundle) -> None:
    """Offer a program only 1 thread per rank where more cannot change what it does (it links
    no OpenMP runtime nor threaded BLAS and its command gives it no ``{threads}``: the rule
    tune and the sweep's note use, :mod:`hpcds1mpi.launch.program_threads`); its runs at 2
    threads are the same computation, told apart by noise only (s28 tester U: ABINIT's 1 rank
    x 2 threads on the front). Nothing changes where the program is not found here."""
    from hpcds1mpi.launch.program_threads import one_thread_line, unthreaded_program

    if offer.levels is None or (offer.threads is not None and max(offer.threads, default=1) <= 1):
        return
    command = program_command(bundle, offer.levels) or None
    name = unthreaded_program(command)
    if name:
        offer.uses_threads, offer.threads = False, [1]
        offer.left_out.append(one_thread_line(name, command))


def program_command(bundle, levels) -> str:
    """The program's command line its sweep ran (``Recommendation.program_command``); "" for a
    kernel, a job-log label or a workload never measured."""
    if levels is None or not getattr(levels, "external", False):
        return ""
    if isinstance(levels.command, str):
        return levels.command
    from hpcds1mpi.surrogates.levels import program_commands  # an older bundle: its rows

    return program_commands(bundle).get(levels.workload, "")
