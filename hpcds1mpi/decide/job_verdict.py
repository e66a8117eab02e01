"""The verdict on a job as ``recommend`` gives it, for the answers that score configurations a
caller names (``/v1/predict``, ``Model.predict``).

The guard's checks alone (:func:`~hpcds1mpi.decide.guard.judge`) are not ``recommend``'s
verdict: ``recommend`` also asks System 1's confidence in its pick, escalates a job no
configuration can run (every run of it failed), and confirms a pick beyond the measured levels.
A predict answer that gave the guard's ``auto`` for a program whose every run failed, while
``recommend`` escalated it (s31 tester Q6), told a caller to act on a job that cannot run; so
the verdict here is ``recommend``'s on the same place (objective ``time``, no constraints).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.cluster import Cluster, Partition
    from hpcds1mpi.decide.guard import Verdict


def recommend_verdict(bundle, workload: str, size: int,
                      place: tuple["Cluster | None", "Partition"], guard_verdict: "Verdict", *,
                      model_dir=None, history=None, memo=None) -> "Verdict":
    """The verdict ``recommend`` gives ``workload`` at ``size`` on ``place`` alone.

    Args:
        guard_verdict: the guard's verdict on the job (:func:`~hpcds1mpi.decide.predict_job.
            predict_job`'s), answered where ``recommend`` refuses the question (a program
            whose measured levels fit nothing here): its one line is added as a reason, and
            the verdict is then at least ``confirm``.
        model_dir / history / memo: as :func:`~hpcds1mpi.decide.recommend_batch.
            recommend_many` takes them (a service passes its own).
    """
    from hpcds1mpi.decide.recommend_batch import Ask, recommend_many
    from hpcds1mpi.decide.system1 import Constraints
    from hpcds1mpi.errors import ConfigError

    got = recommend_many(bundle, [Ask(workload, int(size), [place], "time", Constraints())],
                         history=history, model_dir=model_dir, memo=memo)[0]
    if isinstance(got, ConfigError):
        from dataclasses import replace

        verdict = replace(guard_verdict, reasons=[*guard_verdict.reasons, str(got)],
                          checks=dict(guard_verdict.checks))
        if verdict.verdict == "auto":
            verdict.verdict = "confirm"
        return verdict
    if isinstance(got, BaseException):
        raise got
    from dataclasses import replace

    from hpcds1mpi.decide.recommendation import escalation_places

    return replace(got.verdict, reasons=[*got.verdict.reasons, *escalation_places(got)],
                   checks=dict(got.verdict.checks))


__all__ = ["recommend_verdict"]
