"""What advise's verdict says of the layout it recommends: whether it is a gain over the asked
one, and reasons about that layout rather than another.

System 1 recommends the best layout it offers, which need not be better than the asked one when
that was never measured (its prediction is extrapolated): :func:`predicted_worse` compares the
two sides on the objective, and :func:`not_a_gain` then says so as the verdict's first reason and
holds the verdict at ``confirm``, so a layout predicted worse is never applied as a gain.
The layout shown keeps the script's device and precision, so it may not be System 1's overall
pick, which the guard's reasons were written for: :func:`reasons_for_shown` rewords them.

An asked layout System 1 predicts to fail (:func:`fails`) has no runtime to compare: its
"runtime" is the time its runs took to abort. It is never kept for being faster; the verdict says
that the script would fail, from what its runs did, and that the recommendation fixes it
(:func:`fixes_failure`; s39 tester A4: PhyML's 1 rank, failed at every measured size, was
"63 % faster" than the 2 ranks that ran, "keep the script").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from hpcds1mpi.decide.advise_answer import Advice, Side


def same_layout(advice: Advice) -> bool:
    """Whether the script already asks the recommended layout, on the same partition."""
    a, r = advice.asked, advice.recommended
    return a is not None and r is not None and (a.config, a.partition) == (r.config, r.partition)


def percent_change(pct: float, less: str, more: str, what: str) -> str:
    """A predicted change of ``pct`` % as "12 % less energy": one decimal below 1 %, so a small
    difference never reads "0 %" (s40 tester D8), and "the same energy" for none."""
    size = abs(pct)
    if size == 0:
        return f"the same {what}"
    digits = f"{size:.0f}" if size >= 1 else f"{size:.1f}" if size >= 0.05 else "< 0.1"
    return f"{digits} % {less if pct < 0 else more} {what}"


def difference(advice: Advice) -> str:
    """What the "=>" line says of the two sides: that the script already asks the recommended
    layout (only other lines change), else the predicted energy and runtime differences."""
    if same_layout(advice):
        return "the script already asks the recommended layout"
    return (f"{percent_change(-advice.energy_saving_pct, 'less', 'more', 'energy')}, "
            f"{percent_change(advice.runtime_change_pct, 'shorter', 'longer', 'runtime')} "
            "(predicted)")


def judge_gain(advice: Advice, bundle) -> None:
    """The verdict's first reason where the recommended layout is no plain gain: the asked one
    is predicted to fail and the recommended one fixes it (:func:`fixes_failure`), or it is
    predicted worse than the asked one (:func:`predicted_worse`, :func:`not_a_gain`)."""
    if fixes_failure(advice, bundle):
        return
    worse = predicted_worse(advice.asked, advice.recommended, advice.objective)
    if worse:
        not_a_gain(advice, worse)


def fails(side: Side | None) -> bool:
    """Whether System 1 predicts ``side`` to fail (or to run out of memory): its predicted
    runtime and energy are then those of a run until it aborts, no run to compare. A side that
    has no prediction (the scheduler refuses it, ...) holds its problem unpredicted."""
    return side is not None and side.predicted and bool(side.problem)


def only_asked_fails(advice: Advice) -> bool:
    """Whether the asked layout is predicted to fail and a recommended one is predicted to run:
    the recommendation then fixes a failure, no gain in runtime or energy to compare."""
    return fails(advice.asked) and advice.recommended is not None \
        and not fails(advice.recommended)


def fixes_failure(advice: Advice, bundle) -> bool:
    """Say, as the verdict's first reason, that the asked layout is predicted to fail (with
    what its measured runs did) and that the recommended one, predicted to run, fixes that;
    True where it said so, False where not :func:`only_asked_fails`."""
    if not only_asked_fails(advice):
        return False
    asked = advice.asked
    reason = (f"the asked layout is {asked.problem} ({_failure_evidence(advice, bundle)}), so "
              "it has no runtime to compare with, only the time its runs took to fail; the "
              "recommended layout is predicted to run: do not keep the script, --rewrite "
              "switches to the recommended layout")  # s43 tester L2: no runtime of it is shown
    advice.verdict["reasons"] = [reason, *(advice.verdict.get("reasons") or [])]
    return True


def _failure_evidence(advice: Advice, bundle) -> str:
    """What the asked layout's measured runs of the workload did (``it failed at every one of
    the 5 sizes measured, 4-24``), or System 1's failure probability where none was
    measured: from the runs System 1 read (:func:`~.measured_here.workload_runs`), on any
    partition."""
    import numpy as np

    from hpcds1mpi.decide.measured_here import workload_runs
    from hpcds1mpi.surrogates.size_neighbours import config_code

    asked = advice.asked.config
    code = config_code(asked.nodes, asked.ranks_per_node, asked.threads, asked.device,
                       asked.precision)
    sizes, good, failed = np.zeros(0), np.zeros(0, dtype=bool), np.zeros(0, dtype=bool)
    for codes, at, ok, bad in (workload_runs(bundle, str(advice.workload)) or {}).values():
        on = codes == code  # one partition's runs of the asked layout
        sizes, good, failed = (np.append(sizes, at[on]), np.append(good, ok[on]),
                               np.append(failed, bad[on]))
    ran = failed | good
    if not failed.any():
        return f"failure probability {100 * advice.asked.fail_prob:.0f} % (System 1's)" if \
            np.isfinite(advice.asked.fail_prob) else "System 1's prediction"
    bad, measured = np.unique(sizes[failed]), np.unique(sizes[ran])
    if len(bad) == len(measured) and not good.any():
        span = f"{bad.min():g}" if len(bad) == 1 else f"{bad.min():g}-{bad.max():g}"
        return (f"its runs failed at every one of the {len(bad)} size"
                f"{'s' if len(bad) > 1 else ''} measured, {span}")
    span = ", ".join(f"{b:g}" for b in bad[:4]) + (", ..." if len(bad) > 4 else "")
    return f"its runs failed at {len(bad)} of the {len(measured)} sizes measured ({span})"


def predicted_worse(asked: Side, recommended: Side, objective: str) -> str:
    """How the recommended layout is predicted worse than the asked one on ``objective`` (""
    when it is not, either side has no prediction, or the asked one is predicted to fail:
    :func:`fails`): ``time`` by runtime, ``energy`` by energy, ``edp`` by their product,
    ``balanced`` when it is worse in one and better in neither."""
    if not (asked.predicted and recommended.predicted) or fails(asked):
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
        how.append(percent_change(100 * (recommended.runtime_s / asked.runtime_s - 1),
                                  "shorter", "longer", "runtime"))
    if hungrier and asked.energy_j > 0:
        how.append(percent_change(100 * (recommended.energy_j / asked.energy_j - 1),
                                  "less", "more", "energy"))
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
