"""What advise's verdict says of the layout it recommends: whether it is a gain over the asked
one, and reasons about that layout rather than another.

System 1 recommends the best layout it offers, which need not be better than the asked one when
that was never measured (its prediction is extrapolated): :func:`predicted_worse` compares the
two sides on the objective, and :func:`not_a_gain` then says so as the verdict's first reason and
holds the verdict at ``confirm``, so a layout predicted worse is never applied as a gain.
The layout shown keeps the script's device and precision, so it may not be System 1's overall
pick, which the guard's reasons were written for: :func:`reasons_for_shown` rewords them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.decide.advise import Advice, Side


def predicted_worse(asked: Side, recommended: Side, objective: str) -> str:
    """How the recommended layout is predicted worse than the asked one on ``objective`` (""
    when it is not, or either side has no prediction): ``time`` by runtime, ``energy`` by
    energy, ``edp`` by their product, ``balanced`` when it is worse in one and better in
    neither."""
    if not (asked.predicted and recommended.predicted):
        return ""
    slower = recommended.runtime_s > asked.runtime_s
    hungrier = recommended.energy_j > asked.energy_j
    worse = {"time": slower, "energy": hungrier,
             "edp": recommended.runtime_s * recommended.energy_j
             > asked.runtime_s * asked.energy_j,
             "balanced": (slower or hungrier) and recommended.runtime_s >= asked.runtime_s
             and recommended.energy_j >= asked.energy_j}.get(objective, False)
    if not worse:
        return ""
    how = []
    if slower:
        how.append(f"{100 * (recommended.runtime_s / asked.runtime_s - 1):.0f} % longer runtime")
    if hungrier and asked.energy_j > 0:
        how.append(f"{100 * (recommended.energy_j / asked.energy_j - 1):.0f} % more energy")
    return ", ".join(how) or f"a worse {objective}"


def not_a_gain(advice: Advice, how: str) -> None:
    """Say, as the verdict's first reason, that the recommended layout is predicted worse than
    the asked one (``how``), and why it is offered anyway; the verdict is then at most
    ``confirm``: a layout predicted worse is never applied without the user's word."""
    asked, shown = advice.asked, advice.recommended
    # A predicted layout is never called measured (s35 tester R6).
    measured = not (shown is not None and shown.unmeasured)
    if asked.unmeasured:
        why = ("the asked layout is unmeasured, so its prediction is extrapolated ("
               f"{'; '.join(asked.unmeasured)}), and the recommendation is only the best "
               "measured layout" if measured else "the asked layout is unmeasured, so its "
               f"prediction is extrapolated ({'; '.join(asked.unmeasured)}), and so is the "
               f"recommended one's ({'; '.join(shown.unmeasured)})")
    else:
        why = ("the recommendation is the best of the layouts System 1 offers, and the asked "
               "one is not among them")
    keep = ("keep the script if you trust the extrapolation" if asked.unmeasured else
            "keep the script") + "; --rewrite would switch to the " + (
        "measured layout" if asked.unmeasured and measured else "recommended layout")
    far = asked_beyond_reach(advice)
    if far:  # 4096 nodes from runs on one is no prediction to keep (s34 tester S1)
        keep = f"{far}; --rewrite would switch to the recommended layout"
    reason = (f"the recommended layout is predicted worse than the asked one on "
              f"{advice.objective} ({how}): {why}; {keep}, not to a predicted gain")
    verdict = advice.verdict
    if verdict.get("verdict") == "auto":
        verdict["verdict"] = "confirm"
    verdict["reasons"] = [reason, *(verdict.get("reasons") or [])]


def asked_beyond_reach(advice: Advice) -> str:
    """Why the asked layout's node count is no prediction to keep a script for: more than
    System 1 ever picks from the workload's measured nodes
    (:func:`~hpcds1mpi.decide.measured_nodes.reach`); ``""`` where it is within."""
    import numpy as np

    from hpcds1mpi.decide.measured_nodes import NODES_MEASURED, reach

    rec = advice.recommendation
    if rec is None or rec.picked is None or advice.asked is None:
        return ""
    cols = rec.picked.choice.scores.cols
    if NODES_MEASURED not in cols or not len(cols["nodes"]):
        return ""
    most, nodes = int(reach(cols, np.arange(1))[0]), int(advice.asked.config.nodes)
    if most <= 0 or nodes <= most:
        return ""
    measured = int(cols[NODES_MEASURED][0])
    return (f"do not keep the script: its {nodes} nodes are beyond the {most} System 1 "
            f"would pick from {advice.workload}'s runs on at most {measured} "
            f"node{'s' if measured > 1 else ''}, an extrapolation no run supports; measure at "
            "more nodes first")


#: How the reasons about System 1's overall pick begin (:mod:`hpcds1mpi.decide.guard`,
#: :mod:`hpcds1mpi.decide.recommend`).
_PICK_EXTRAPOLATED = "the pick is beyond what "
_PICK_CONFIDENCE = "System 1 confidence "


def reasons_for_shown(advice: Advice, overall: str) -> None:
    """Make the verdict's reasons describe the recommended layout when it is not System 1's
    overall pick (``overall``, as :meth:`Side.text` writes it): the pick's extrapolation lines
    give way to the shown layout's own, and the confidence is said to be the overall pick's
    (the shown layout has none of its own). The verdict is never lowered."""
    verdict, shown = advice.verdict, advice.recommended
    reasons = []
    for reason in verdict.get("reasons") or []:
        if reason.startswith(_PICK_EXTRAPOLATED):
            continue
        if reason.startswith(_PICK_CONFIDENCE):
            reason = (f"{reason}, for its overall pick ({overall}); the recommended layout "
                      "keeps the script's device and precision and has no confidence of its own")
        reasons.append(reason)
    checks = verdict.setdefault("checks", {})
    if shown.unmeasured:
        reasons.append(f"the recommended layout is beyond what {advice.workload} was measured "
                       f"at, its predictions extrapolated: {'; '.join(shown.unmeasured)}")
        checks["measured_levels"] = "confirm"
        if verdict.get("verdict") == "auto":
            verdict["verdict"] = "confirm"
    elif "measured_levels" in checks:
        checks["measured_levels"] = "pass"
    if verdict.get("verdict") != "auto" and not reasons:
        reasons.append(f"the recommended layout keeps the script's device and precision, not "
                       f"System 1's overall pick ({overall}), so it has no confidence of its own")
    verdict["reasons"] = reasons
