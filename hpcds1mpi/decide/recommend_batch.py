"""``recommend`` for many questions at once: one System 1 predict and one guard pass.

:func:`~hpcds1mpi.decide.recommend.recommend` answers one question in four steps
(:func:`~hpcds1mpi.decide.recommend_prepare.prepare`, System 1's scoring,
:func:`~hpcds1mpi.decide.recommend.choose_places`, the guard's verdict, then
:func:`~hpcds1mpi.decide.recommend.conclude`). Two of them are mostly a fixed cost per call
(``Bundle.predict`` walks every ensemble member, ``design`` builds every feature block,
whatever the rows): :func:`recommend_many` runs the other steps per question, as
``recommend`` does, and those two once for all (:func:`~hpcds1mpi.decide.system1_batch.score_many`,
:func:`~hpcds1mpi.decide.guard_batch.judge_many`). The bundle's reference, guard calibration
and confidence model are loaded once for the batch. Each answer equals ``recommend``'s (the
tests hold the JSON of each equal).

A question that ``recommend`` would refuse gets its exception in its place in the answers;
the others are answered.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

from hpcds1mpi.decide import guard as guard_mod
from hpcds1mpi.decide import recommend as rec_mod
from hpcds1mpi.decide import recommend_prepare
from hpcds1mpi.decide import system1 as s1
from hpcds1mpi.decide import system1_batch as sb
from hpcds1mpi.decide.confidence import ConfidenceModel
from hpcds1mpi.decide.failure_history import FailureHistory, default_history_path
from hpcds1mpi.decide.guard_batch import judge_many

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.cluster import Cluster, Partition


@dataclass
class Ask:
    """One question, as :func:`~hpcds1mpi.decide.recommend.recommend` takes it."""

    workload: str
    size: int
    places: Sequence[tuple["Cluster | None", "Partition"]]
    objective: str = "time"
    constraints: s1.Constraints | None = None
    device: str | None = None
    #: the command the job runs (``--program``; None: the measured one): a calibration's
    #: steps at the precisions it takes, and one of a workload the model lacks only with it
    program: str | None = None


def recommend_many(bundle, asks: Sequence[Ask], *, history: FailureHistory | None = None,
                   model_dir=None, memo=None) -> list:
    """Answer every question, scoring and judging them together.

    Args:
        bundle: the model bundle.
        asks: the questions.
        history, model_dir: as :func:`~hpcds1mpi.decide.recommend.recommend` (shared).
        memo: a :class:`~hpcds1mpi.decide.batch_memo.RecommendMemo` keeping the questions'
            scores and guard distances across calls (a service's); None: nothing kept.

    Returns:
        one entry per question, in order: its
        :class:`~hpcds1mpi.decide.recommendation.Recommendation`, or the exception
        ``recommend`` would have raised for it (never raised here).
    """
    out: list = [None] * len(asks)
    if not asks:
        return out
    history = history or FailureHistory(default_history_path())  # read once for all
    ref = guard_mod.reference(bundle)
    calibration = guard_mod.load_calibration(bundle, model_dir, ref)
    conf_model = ConfidenceModel.load(model_dir)
    memo = memo.bind(bundle, ref) if memo is not None else None
    preps: dict[int, recommend_prepare.Prepared] = {}
    for i, a in enumerate(asks):
        try:
            # The calibration and confidence model are only read (shared by the batch).
            preps[i] = recommend_prepare.prepare(
                bundle, a.workload, a.size, a.places, objective=a.objective,
                constraints=a.constraints, history=history, model_dir=model_dir,
                device=a.device, ref=ref, calibration=calibration, conf_model=conf_model)
        except Exception as exc:  # noqa: BLE001 - the question's own error, kept in place
            out[i] = exc
    scored = [i for i, p in preps.items() if p.usable]
    answers = sb.score_many(bundle, [sb.Question(preps[i].workload, preps[i].size,
                                                 preps[i].parts, preps[i].constraints,
                                                 uses_threads=preps[i].uses_threads)
                                     for i in scored],
                            memo=memo.scores if memo is not None else None)
    scores = dict(zip(scored, answers))
    jobs: dict[int, tuple] = {}
    for i, prep in preps.items():
        try:
            got = scores.get(i)
            if isinstance(got, BaseException):
                raise got
            judged, confidence = rec_mod.choose_places(prep, got)
            jobs[i] = (prep.workload, prep.size, judged.partition, confidence)
        except Exception as exc:  # noqa: BLE001
            out[i] = exc
    order = list(jobs)
    verdicts = judge_many(bundle, [jobs[i] for i in order], calibration, ref,
                          memo=memo.distances if memo is not None else None)
    from hpcds1mpi.launch.program import program_precisions

    finish_each(out, order, verdicts, lambda i, verdict: rec_mod.conclude(
        preps[i], verdict, program_precisions=program_precisions(asks[i].program),
        program_given=asks[i].program is not None))
    return out


def finish_each(out: list, order, results, finish) -> None:
    """``out[i] = finish(i, result)`` for each ``i`` of ``order`` and its result; a result that
    is an exception, or a ``finish`` that raises, leaves that exception in ``out[i]`` alone."""
    for i, got in zip(order, results):
        try:
            if isinstance(got, BaseException):
                raise got
            out[i] = finish(i, got)
        except Exception as exc:  # noqa: BLE001 - this question's error, nobody else's
            out[i] = exc
